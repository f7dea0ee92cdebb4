#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot --hprof --out-dir=DIR` against ddmon-simvm with two DDM
# VMs whose dumps are 3000000 bytes: the hprof plugin's command runs once
# per ready DDM VM, and the snapshot waits for each dump to end. Each VM's
# file is in DIR with the size and sha256 simvm says it sent (its
# --state-file), no .part is left, and the JSON "hprof" member (keyed by
# VM) says the same; the text output says where each dump went. In process
# and through a server. Also: --hprof without --out-dir is a usage error;
# a dump the VM fails (--hprof-fault fail) makes the exit status non-zero
# and the message names the VM; no plugin providing "hprof" is a warning,
# "hprof": null, and the snapshot is taken all the same.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins hprof || t_skip_all "the hprof plugin was configured out"
t_plan 14
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
SIZE=3000000

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --hprof-size "$SIZE" --thread-activity 0 --seed 5 \
    --base-port "$base" --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json"
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
ports=$(t_simvm_ports "$T_TMP/ports")
scan=(--scan=local --scan-ports "$ports")

# check_dumps SNAPSHOT DIR DUMPS: every VM of simvm's state file dumped its
# heap DUMPS times so far, the last by HPDS; its file in DIR has the size
# and sha256 simvm sent, no .part is in DIR, and the snapshot's "hprof"
# member has one entry per VM saying the same. Prints what is wrong.
check_dumps() {
    sleep 0.5 # simvm rewrites its state file a moment after a change
    python3 - "$1" "$2" "$3" "$T_TMP/truth.json" "$SIZE" <<'PY'
import hashlib, json, os, sys
doc = json.load(open(sys.argv[1]))
out_dir, dumps, truth, size = sys.argv[2], int(sys.argv[3]), json.load(open(sys.argv[4])), int(sys.argv[5])
def rows(v):
    return v["rows"]  # objects keyed by column (doc/json.md)
key_of = {r["pid"]: r["key"] for r in rows(doc["global"]["vms"])}
bad = []
hprof = doc.get("hprof")
if not isinstance(hprof, dict):
    bad.append(f"hprof member is {hprof!r}, not an object")
    hprof = {}
vms = [v for v in truth["vms"] if v.get("ddm")]
if len(hprof) != len(vms):
    bad.append(f"{len(hprof)} hprof entries for {len(vms)} DDM VMs")
for v in vms:
    h, key = v["hprof"], key_of.get(v["pid"])
    last = h.get("last") or {}
    if h.get("dumps") != dumps or last.get("via") != "hpds" or last.get("bytes") != size:
        bad.append(f"pid {v['pid']}: simvm says {h}, want {dumps} dumps, the last by hpds, {size} bytes")
        continue
    e = hprof.get(key)
    if e is None:
        bad.append(f"pid {v['pid']} ({key}): no hprof entry")
        continue
    want = {"ok": True, "via": "stream", "bytes": size, "sha256": last["sha256"], "pid": v["pid"]}
    got = {k: e.get(k) for k in want}
    if got != want:
        bad.append(f"{key}: entry {got}, want {want}")
    path = e.get("path") or ""
    if os.path.dirname(path) != os.path.abspath(out_dir) or not os.path.isfile(path):
        bad.append(f"{key}: path {path!r} is no file in {out_dir}")
        continue
    data = open(path, "rb").read()
    if len(data) != size or hashlib.sha256(data).hexdigest() != last["sha256"]:
        bad.append(f"{key}: {path} has {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}; "
                   f"simvm sent {size}, {last['sha256']}")
    if not isinstance(e.get("seconds"), (int, float)):
        bad.append(f"{key}: seconds {e.get('seconds')!r}")
parts = [f for f in os.listdir(out_dir) if f.endswith(".part")]
if parts:
    bad.append(f".part files left: {parts}")
if doc.get("settled") is not True:
    bad.append("not settled")
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
}

# 1. --hprof without --out-dir: a usage error, no dump.
t_ddmon "${scan[@]}" snapshot --in-process --hprof --wait 0 >"$T_TMP/usage.out" 2>"$T_TMP/usage.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--hprof needs --out-dir" "$T_TMP/usage.err" && [ ! -s "$T_TMP/usage.out" ] \
    && t_ok "--hprof without --out-dir is a usage error" \
    || t_fail "--hprof without --out-dir is a usage error" "rc=$rc" "$(cat "$T_TMP/usage.err")"
t_ddmon "${scan[@]}" snapshot --in-process --hprof --wait 0 --json >"$T_TMP/usage.json" 2>/dev/null
rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["ok"] is False and d["code"] == 2 and "--out-dir" in d["error"]))' \
    "$T_TMP/usage.json" 2>/dev/null && [ $rc -eq 2 ] \
    && t_ok "--hprof without --out-dir, --json: one usage failure object" \
    || t_fail "--hprof without --out-dir, --json: one usage failure object" "rc=$rc" "$(cat "$T_TMP/usage.json")"

# 2. In process.
t_ddmon "${scan[@]}" snapshot --in-process --hprof --out-dir "$T_TMP/local" --wait 500 --json \
    >"$T_TMP/local.json" 2>"$T_TMP/local.err"
rc=$?
[ $rc -eq 0 ] && t_ok "in process, snapshot --hprof exits 0" \
    || t_fail "in process, snapshot --hprof exits 0" "rc=$rc" "$(tail -5 "$T_TMP/local.err")"
check_dumps "$T_TMP/local.json" "$T_TMP/local" 1 >"$T_TMP/check.out" 2>&1 \
    && t_ok "in process: each VM's dump in --out-dir with simvm's size and sha256, no .part, and so says \"hprof\"" \
    || t_fail "in process: each VM's dump in --out-dir with simvm's size and sha256, no .part, and so says \"hprof\"" \
        "$(head -c 800 "$T_TMP/check.out")"
grep -q "WARNING\|CRITICAL" "$T_TMP/local.err" && t_fail "in process: no warning" "$(grep -E 'WARNING|CRITICAL' "$T_TMP/local.err")" \
    || t_ok "in process: no warning"

# Text: a line per VM saying where its dump went.
t_ddmon "${scan[@]}" snapshot --in-process --hprof --out-dir "$T_TMP/text" --wait 500 \
    >"$T_TMP/text.out" 2>"$T_TMP/text.err"
rc=$?
n=$(grep -cE "^  127\.0\.0\.1:[0-9]+: written to $T_TMP/text/[^ ]+\.hprof \($SIZE bytes" "$T_TMP/text.out")
[ $rc -eq 0 ] && grep -qx "Heap dumps (--hprof)" "$T_TMP/text.out" && [ "$n" -eq 2 ] \
    && t_ok "text: a 'written to' line per VM" \
    || t_fail "text: a 'written to' line per VM" "rc=$rc lines=$n" "$(tail -4 "$T_TMP/text.out")"

# 3. No plugin provides "hprof": a warning, "hprof": null, the snapshot anyway.
t_ddmon "${scan[@]}" --disable-plugin hprof snapshot --in-process --hprof --out-dir "$T_TMP/none" \
    --wait 500 --json >"$T_TMP/none.json" 2>"$T_TMP/none.err"
rc=$?
vms=$(python3 "$q" rows "$T_TMP/none.json" vms | grep -c .)
[ $rc -eq 0 ] && [ "$vms" -eq 2 ] \
    && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["hprof"] is not None)' "$T_TMP/none.json" \
    && grep -q "no plugin provides a 'hprof' command" "$T_TMP/none.err" \
    && t_ok "without an 'hprof' command: a warning, \"hprof\": null, the snapshot all the same" \
    || t_fail "without an 'hprof' command: a warning, \"hprof\": null, the snapshot all the same" \
        "rc=$rc vms=$vms" "$(tail -3 "$T_TMP/none.err")"

# 4. Through a server, on connections of the snapshot's own.
t_start_server "${scan[@]}" --selected-port 0 --debug-port-base "$(t_free_port)" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 2 ]; }
t_wait 15 ready && t_ok "the server has both DDM VMs ready" || t_fail "the server has both DDM VMs ready" "$(cat "$T_TMP/vms.json")"
t_ddmon snapshot --hprof --out-dir "$T_TMP/srv" --wait 500 --json >"$T_TMP/srv.json" 2>"$T_TMP/srv.err"
rc=$?
[ $rc -eq 0 ] && t_ok "through the server, snapshot --hprof exits 0" \
    || t_fail "through the server, snapshot --hprof exits 0" "rc=$rc" "$(tail -5 "$T_TMP/srv.err")"
check_dumps "$T_TMP/srv.json" "$T_TMP/srv" 3 >"$T_TMP/check.out" 2>&1 \
    && t_ok "through the server: each VM's dump in --out-dir with simvm's size and sha256, no .part, and so says \"hprof\"" \
    || t_fail "through the server: each VM's dump in --out-dir with simvm's size and sha256, no .part, and so says \"hprof\"" \
        "$(head -c 800 "$T_TMP/check.out")"
kill -0 "$DDMON_PID" && ! grep -qE " (critical|error) [a-z0-9-]+: |CRITICAL|runtime error" "$T_TMP/server.err" \
    && t_ok "the server runs on, no criticals" || t_fail "the server runs on, no criticals" "$(tail -5 "$T_TMP/server.err")"

# 5. A VM that fails its dump: exit status 1, the message names it.
fbase=$(t_free_ports 1) || t_skip_all "no free ports"
"$SIMVM" --vms 1 --hprof-size "$SIZE" --hprof-fault fail --thread-activity 0 --base-port "$fbase" \
    --port-file "$T_TMP/fports" >"$T_TMP/fsimvm.out" 2>"$T_TMP/fsimvm.err" &
T_PIDS+=("$!")
t_wait 10 test -s "$T_TMP/fports" || t_fail "the failing simvm started" "$(cat "$T_TMP/fsimvm.err")"
fport=$(t_simvm_ports "$T_TMP/fports")
t_ddmon --scan=local --scan-ports "$fport" snapshot --in-process --hprof --out-dir "$T_TMP/fail" \
    --wait 500 --json >"$T_TMP/fail.json" 2>"$T_TMP/fail.err"
rc=$?
[ $rc -eq 1 ] && grep -q "snapshot --hprof: 1 of 1 heap dumps failed: 127.0.0.1:$fport failed: " "$T_TMP/fail.err" \
    && t_ok "a failed dump: exit status 1, and the message names the VM" \
    || t_fail "a failed dump: exit status 1, and the message names the VM" "rc=$rc" "$(tail -3 "$T_TMP/fail.err")"
python3 - "$T_TMP/fail.json" "127.0.0.1:$fport" >"$T_TMP/check.out" 2>&1 <<'PY' \
    && t_ok "a failed dump: one snapshot object, \"ok\": false, its \"hprof\" entry has the error" \
    || t_fail "a failed dump: one snapshot object, \"ok\": false, its \"hprof\" entry has the error" "$(cat "$T_TMP/check.out")"
import json, sys
d = json.load(open(sys.argv[1]))
e = (d.get("hprof") or {}).get(sys.argv[2]) or {}
assert d.get("ok") is False and d.get("code") == 1 and "vms" in d, {k: d.get(k) for k in ("ok", "code", "error")}
assert e.get("ok") is False and e.get("error"), e
PY
parts=$(find "$T_TMP/fail" -name '*.part' 2>/dev/null | wc -l)
[ "$parts" -eq 0 ] && t_ok "a failed dump leaves no .part" || t_fail "a failed dump leaves no .part" "$(ls "$T_TMP/fail")"
exit 0
