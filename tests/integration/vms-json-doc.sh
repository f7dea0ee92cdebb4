#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon --json vms` in one request (issue 16): the real server answers
# {"op":"vms","jq":true} with {"ok":true,"doc":D}, and the CLI prints D
# byte for byte. Checked against the server's other answers, read with
# python3's json (not the server's writer): D's rows are the "vms" view's
# rows (the old request, {"op":"vms"}) under their snake_case keys, and
# each DDM VM's row has the figures of its "headline" view
# ({"op":"view","name":"headline"}), numbers, after the row's own members;
# a bad "jq" is a usage error. One VM's name has a 0x1f (from the wire:
# json-glib 1.6 writes it raw, which strict parsers refuse): every answer
# and the CLI's --json prints escape it, and so does the web API.
# Last, two VMs whose wire pids do not fit in 31 bits (4294967295 and
# 2147483648: the vms rows keep 32-bit values, 5b92e6d) are listed exactly,
# by a second server over evilvms.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 9

base=$(t_free_ports 4) || t_skip_all "no free ports"
t_have_plugins threads || t_skip_all "the threads plugin was not built"
t_start_simvm --vms 4 --base-port "$base" --port-file "$T_TMP/ports" --seed 7 --thread-activity 0 \
    --app "$(printf 'ctl\037name')"
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
http=()
if grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h"; then
    export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
    http=(--http=127.0.0.1:0)
fi
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port=0 "${http[@]}" \
    && t_ok "server started" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# ask REQUEST...: each request's answer line, one per line, on one connection.
ask() {
    python3 - "$T_TMP/ddmon.sock" "$@" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rb")
for req in sys.argv[2:]:
    s.sendall(req.encode() + b"\n")
    sys.stdout.buffer.write(f.readline())
PY
}

# Every VM named and its threads counted, then the same answers twice in a
# row (nothing changes between the requests once the VMs are idle).
named() { t_ddmon --no-autostart --json vms | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = [r for r in d["rows"] if r["state"] == "ready" and r["app"] and "threads_count" in r]
sys.exit(0 if len(rows) == 4 else 1)'; }
t_wait 20 named
same=0
for _ in 1 2 3 4 5; do
    ask '{"op":"vms","jq":true}' '{"op":"vms"}' '{"op":"view","name":"headline"}' >"$T_TMP/answers"
    t_ddmon --no-autostart --json vms >"$T_TMP/cli.json"
    ask '{"op":"vms","jq":true}' >"$T_TMP/again"
    if [ "$(head -1 "$T_TMP/answers")" = "$(cat "$T_TMP/again")" ]; then same=1; break; fi
    sleep 0.5
done
[ $same = 1 ] && t_ok "the VMs are named and idle" || t_fail "the VMs are named and idle" "$(head -c 300 "$T_TMP/answers")"

python3 - "$T_TMP/answers" "$T_TMP/cli.json" >"$T_TMP/check" 2>&1 <<'PY' \
    && t_ok "the CLI prints the answer's doc byte for byte" \
    || t_fail "the CLI prints the answer's doc byte for byte" "$(cat "$T_TMP/check")"
import sys
line = open(sys.argv[1], "rb").readline()
head = b'{"ok":true,"doc":'
assert line.startswith(head) and line.endswith(b"}\n"), line[:80]
cli = open(sys.argv[2], "rb").read()
assert cli == line[len(head):-2] + b"\n", (cli[:120], line[:120])
PY

python3 - "$T_TMP/answers" >"$T_TMP/check2" 2>&1 <<'PY' \
    && t_ok "doc: the vms view's rows and columns, each VM's headline figures after its own members" \
    || t_fail "doc: the vms view's rows and columns, each VM's headline figures after its own members" "$(cat "$T_TMP/check2")"
import json, re, sys
doc_line, vms_line, heads_line = open(sys.argv[1]).read().splitlines()
doc = json.loads(doc_line)["doc"]
view = json.loads(vms_line)["view"]
heads = json.loads(heads_line)["views"]
key = lambda name: re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
cols = [key(c["name"]) for c in view["columns"]]
assert doc["schema"] == 1 and doc["name"] == "vms" and doc["kind"] == "table", doc.get("name")
assert list(doc["columns"]) == cols, (list(doc["columns"]), cols)
figures = {h["vm"]: {f["key"]: f["value"] for f in h["fields"]} for h in heads
           if h["owner"] == "ddmon" and h["vm"] is not None}
assert len(figures) == 4, figures
assert len(doc["rows"]) == len(view["rows"]) == 4, (len(doc["rows"]), len(view["rows"]))
for row, cells in zip(doc["rows"], view["rows"]):
    names = list(row)
    assert names[:len(cols)] == cols, names
    assert [row[c] for c in cols] == cells, (row, cells)
    want = {k: v for k, v in figures.get(row["key"], {}).items() if k not in cols}
    assert {k: row[k] for k in names[len(cols):]} == want, (row, want)
    assert isinstance(row["threads_count"], int), row
assert [r["app"] for r in doc["rows"]].count("ctl\x1fname") == 1, [r["app"] for r in doc["rows"]]
PY

# The other --json prints (json-glib's generator in the CLI) of that name.
t_ddmon --no-autostart --json view vms >"$T_TMP/view.json"
python3 - "$T_TMP/view.json" "$T_TMP/answers" >"$T_TMP/check3" 2>&1 <<'PY' \
    && t_ok "a name with 0x1f: escaped in every answer and --json print (python reads them)" \
    || t_fail "a name with 0x1f: escaped in every answer and --json print (python reads them)" "$(cat "$T_TMP/check3")"
import json, sys
view = open(sys.argv[1], "rb").read()
assert b"\x1f" not in view and b"\\u001f" in view, view[:300]
json.loads(view)
for line in open(sys.argv[2], "rb"):
    assert b"\x1f" not in line, line[:300]
    json.loads(line)
PY

if [ ${#http[@]} = 0 ]; then
    t_ok "# SKIP ddmon was built --without-http"
else
    url=$(t_web_url "$T_TMP/server.err")
    python3 - "${url%%\?*}" "${url#*token=}" >"$T_TMP/check4" 2>&1 <<'PY' \
        && t_ok "a name with 0x1f: escaped in the web API's GET /api/vms (python reads it)" \
        || t_fail "a name with 0x1f: escaped in the web API's GET /api/vms (python reads it)" "$(cat "$T_TMP/check4")"
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "api/vms")
req.add_header("Authorization", "Bearer " + sys.argv[2])
body = urllib.request.urlopen(req, timeout=10).read()
assert b"\x1f" not in body and b"\\u001f" in body, body[:300]
vms = json.loads(body)["vms"]
assert [v["app"] for v in vms.values()].count("ctl\x1fname") == 1, vms
PY
fi

ask '{"op":"vms","jq":"yes"}' >"$T_TMP/bad"
grep -q '"ok":false' "$T_TMP/bad" && grep -q 'jq' "$T_TMP/bad" \
    && t_ok 'a "jq" that is no boolean is refused' || t_fail 'a "jq" that is no boolean is refused' "$(cat "$T_TMP/bad")"

EVILVM="$DDM_TOP_BUILDDIR/tests/tools/evilvm"
"$EVILVM" --port-file "$T_TMP/wide1" --pid 4294967295 --app wide1 greet hold >"$T_TMP/wide1.out" 2>"$T_TMP/wide1.err" &
T_PIDS+=($!)
"$EVILVM" --port-file "$T_TMP/wide2" --pid 2147483648 --app wide2 greet hold >"$T_TMP/wide2.out" 2>"$T_TMP/wide2.err" &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/wide1" && t_wait 10 test -s "$T_TMP/wide2"
"$DDMON" --socket "$T_TMP/wide.sock" --plugin-dir "$PLUGINDIR" --no-adb-start server --foreground --scan=local \
    --scan-ports "$(t_simvm_ports <(cat "$T_TMP/wide1" "$T_TMP/wide2"))" --selected-port=0 \
    >"$T_TMP/wide-server.out" 2>"$T_TMP/wide-server.err" &
T_PIDS+=($!)
wide() { "$DDMON" --socket "$T_TMP/wide.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart --json vms \
    >"$T_TMP/wide.json" 2>/dev/null && python3 -c '
import json, sys
pids = {r["app"]: r["pid"] for r in json.load(open(sys.argv[1]))["rows"] if r.get("app")}
sys.exit(0 if pids == {"wide1": 4294967295, "wide2": 2147483648} else 1)' "$T_TMP/wide.json"; }
t_wait 20 wide && t_ok "pids 4294967295 and 2147483648 listed exactly" \
    || t_fail "pids 4294967295 and 2147483648 listed exactly" "$(cat "$T_TMP/wide.json" "$T_TMP/wide-server.err")"
exit 0
