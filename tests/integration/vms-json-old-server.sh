#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon --json vms` against a server older than {"op":"vms","jq":true}
# (21f4626): a fake control socket (python) answers as such a server did,
# the VM list's view for "vms" (no "doc": "jq" unknown to it) and the
# headline views for "view headline". The CLI falls back to its two
# requests and prints the document from them (read with python's json:
# the row's own members, then its headline figures under jq keys); an
# older server's error is the CLI's error (its code as the exit status).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 3

# fake MODE: serve $T_TMP/ddmon.sock, one request a line, each logged to
# $T_TMP/requests. MODE old: an older server's answers; error: every
# "vms" is refused with code 2.
fake() {
    python3 - "$T_TMP/ddmon.sock" "$T_TMP/requests" "$1" <<'PY' &
import json, os, socket, sys
path, log, mode = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
view = {"name": "vms", "vm": None, "owner": "ddmon", "kind": "table", "title": "Virtual machines",
        "columns": [{"name": "Key", "type": "str"}, {"name": "PID", "type": "int"},
                    {"name": "App", "type": "str"}],
        "rows": [["127.0.0.1:9", 42, "com.old"], ["127.0.0.1:10", 43, "com.other"]]}
heads = [{"name": "headline", "vm": "127.0.0.1:9", "owner": "ddmon", "kind": "record",
          "title": "Headline figures",
          "fields": [{"key": "threads.count", "label": "Threads", "type": "int", "value": 7},
                     {"key": "heap.used %", "label": "Heap used", "type": "double", "value": 12.5}]}]
while True:
    c, _ = srv.accept()
    for line in c.makefile("rb"):
        req = json.loads(line)
        with open(log, "a") as f:
            f.write(json.dumps(req, sort_keys=True) + "\n")
        op = req.get("op")
        if op == "vms" and mode == "error":
            ans = {"ok": False, "error": "unknown member 'jq'", "code": 2}
        elif op == "vms":
            ans = {"ok": True, "view": view}
        elif op == "view":
            ans = {"ok": True, "views": heads}
        elif op == "version":
            ans = {"ok": True, "version": "0.0", "abi": "1.0", "pid": os.getpid()}
        else:
            ans = {"ok": False, "error": "unknown op", "code": 2}
        c.sendall(json.dumps(ans).encode() + b"\n")
    c.close()
PY
    FAKE_PID=$!
    T_PIDS+=("$FAKE_PID")
    t_wait 5 test -S "$T_TMP/ddmon.sock"
}

fake old
t_ddmon --no-autostart --json vms >"$T_TMP/out.json" 2>"$T_TMP/err"
rc=$?
python3 - "$T_TMP/out.json" "$T_TMP/requests" $rc >"$T_TMP/check" 2>&1 <<'PY' \
    && t_ok "an older server: the two requests, and the document from them" \
    || t_fail "an older server: the two requests, and the document from them" "$(cat "$T_TMP/check" "$T_TMP/err")"
import json, sys
out, reqs, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
assert rc == 0, rc
asked = [json.loads(l) for l in open(reqs)]
asked = [r for r in asked if r.get("op") != "version"]
assert asked == [{"op": "vms", "jq": True}, {"op": "view", "name": "headline"}], asked
doc = json.load(open(out))
assert doc["schema"] == 1 and doc["name"] == "vms", doc
assert list(doc["columns"]) == ["key", "pid", "app"], doc["columns"]
r0, r1 = doc["rows"]
assert list(r0) == ["key", "pid", "app", "threads_count", "heap_used_percent"], r0
assert r0["pid"] == 42 and r0["app"] == "com.old" and r0["threads_count"] == 7 and r0["heap_used_percent"] == 12.5, r0
assert r1 == {"key": "127.0.0.1:10", "pid": 43, "app": "com.other"}, r1
PY

kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null
rm -f "$T_TMP/ddmon.sock" "$T_TMP/requests"
fake error
t_ddmon --no-autostart --json vms >"$T_TMP/out.json" 2>"$T_TMP/err"
rc=$?
[ $rc = 2 ] && t_ok "an older server's error: exit status 2" || t_fail "an older server's error: exit status 2" "rc=$rc $(cat "$T_TMP/err")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["code"] == 2 and "jq" in d["error"], d
' "$T_TMP/out.json" >"$T_TMP/check" 2>&1 \
    && t_ok "an older server's error: printed as --json failures are" \
    || t_fail "an older server's error: printed as --json failures are" "$(cat "$T_TMP/check" "$T_TMP/out.json")"
exit 0
