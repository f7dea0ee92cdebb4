#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot --gc` against ddmon-simvm started with --gc-every 0: the
# simulated VMs collect garbage only when asked (HPGC), and heap segments
# (HPSG) are sent only at a GC. So a plain snapshot has no heap segment
# rows, and `snapshot --gc` (vminfo's `gc` command run for every ready DDM
# VM) has them for both heaps of every DDM VM, equal to what simvm says it
# sent (its --state-file). In process and through a server; the plain JVM
# is not asked; with no plugin providing `gc` a warning, and the snapshot is
# still taken.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo heap || t_skip_all "the vminfo or heap plugin was configured out"
t_plan 14
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
cmp="$DDM_TOP_SRCDIR/tests/integration/compare_truth.py"

base=$(t_free_ports 3) || t_skip_all "no free ports"
t_start_simvm --vms 2 --jvm-vms 1 --two-heaps --gc-every 0 --thread-activity 0 --seed 11 \
    --base-port "$base" --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json"
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
ports=$(t_simvm_ports "$T_TMP/ports")
scan=(--scan=local --scan-ports "$ports")

# heap.segments rows in snapshot $1.
seg_rows() { python3 "$q" rows "$1" heap.segments | grep -c .; }

# Every DDM VM of simvm's port file has segment rows for heaps 1 and 2 in
# snapshot $1, and the plain JVM was not asked for a GC; "gc" lists each
# DDM VM once, answered ok. Prints what is wrong.
check_gc() {
    python3 - "$1" "$T_TMP/ports" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
def rows(v):
    return v["rows"]  # objects keyed by column (doc/json.md)
key_of = {r["pid"]: r["key"] for r in rows(doc["global"]["vms"])}
bad = []
gc = doc.get("gc")
if not isinstance(gc, list):
    bad.append(f"gc member is {gc!r}, not a list")
    gc = []
asked = [g["vm"] for g in gc]
for line in open(sys.argv[2]):
    pid, port, app, mode = (line.split() + [""] * 4)[:4]
    key = key_of.get(int(pid))
    if mode == "jvm":
        if key in asked:
            bad.append(f"plain JVM {key} was asked for a GC")
        continue
    seg = doc["vms"].get(key, {}).get("views", {}).get("heap.segments")
    heaps = {r["heap"] for r in rows(seg)} if seg else set()
    if heaps != {1, 2}:
        bad.append(f"pid {pid} ({key}): segment rows for heaps {sorted(heaps)}, want [1, 2]")
    mine = [g for g in gc if g["vm"] == key]
    if len(mine) != 1 or not mine[0]["ok"]:
        bad.append(f"pid {pid} ({key}): gc entries {mine}")
if doc.get("settled") is not True:
    bad.append("not settled")
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
}

# compare_truth.py compares the VMs simvm lists as connected; an in-process
# snapshot's connections end with it, but what was sent stays recorded.
truth_now() {
    sleep 0.5 # simvm rewrites its state file a moment after a change
    python3 - "$T_TMP/truth.json" "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for v in t["vms"]:
    if v.get("ddm"):
        v["connected"] = True
json.dump(t, open(sys.argv[2], "w"))
PY
}

# compare_truth.py passes and compared the segments of both heaps of both
# DDM VMs (one "free runs/bytes" check per heap). Prints what is wrong.
compare() { # compare TRUTH SNAPSHOT OUT
    python3 "$cmp" "$1" "$2" >"$3" 2>&1
    local rc=$? n
    n=$(grep -c '^ok .*free runs/bytes' "$3")
    [ $rc -eq 0 ] && [ "$n" -eq 4 ] && return 0
    echo "compare_truth.py exit $rc, $n heaps' segments compared (want 4): $(grep -v '^ok' "$3" | head -5 | paste -sd';')"
    return 1
}

# 1. In process, no GC: no heap segments anywhere (and simvm sent none).
t_ddmon "${scan[@]}" snapshot --in-process --wait 1000 --json >"$T_TMP/plain.json" 2>"$T_TMP/plain.err"
rc=$?
n=$(seg_rows "$T_TMP/plain.json")
[ $rc -eq 0 ] && [ "$n" -eq 0 ] && t_ok "in process, a snapshot without --gc has no heap segment rows" \
    || t_fail "in process, a snapshot without --gc has no heap segment rows" "rc=$rc rows=$n" "$(tail -3 "$T_TMP/plain.err")"
python3 -c 'import json,sys; sys.exit(any(h.get("segments_sent") for v in json.load(open(sys.argv[1]))["vms"] for h in v["heaps"]))' \
    "$T_TMP/truth.json" && t_ok "simvm ran no GC by itself" || t_fail "simvm ran no GC by itself"

# 2. In process with --gc.
t_ddmon "${scan[@]}" snapshot --in-process --gc --wait 1000 --json >"$T_TMP/gc.json" 2>"$T_TMP/gc.err"
rc=$?
[ $rc -eq 0 ] && t_ok "in process, snapshot --gc exits 0" || t_fail "in process, snapshot --gc exits 0" "rc=$rc" "$(tail -5 "$T_TMP/gc.err")"
check_gc "$T_TMP/gc.json" >"$T_TMP/check.out" 2>&1 && t_ok "in process, --gc: segment rows for both heaps of each DDM VM, the JVM not asked" \
    || t_fail "in process, --gc: segment rows for both heaps of each DDM VM, the JVM not asked" "$(head -c 600 "$T_TMP/check.out" | paste -sd';')"
truth_now "$T_TMP/truth-local.json"
why=$(compare "$T_TMP/truth-local.json" "$T_TMP/gc.json" "$T_TMP/cmp-local.out") \
    && t_ok "in process, --gc: views match simvm's ground truth ($(grep -c '^ok' "$T_TMP/cmp-local.out") checks)" \
    || t_fail "in process, --gc: views match simvm's ground truth" "$why"
grep -q "WARNING" "$T_TMP/gc.err" && t_fail "in process, --gc: no warning" "$(grep WARNING "$T_TMP/gc.err")" \
    || t_ok "in process, --gc: no warning"

# 3. No plugin provides "gc": a warning, the snapshot all the same.
t_ddmon "${scan[@]}" --disable-plugin vminfo snapshot --in-process --gc --wait 500 --json \
    >"$T_TMP/nogc.json" 2>"$T_TMP/nogc.err"
rc=$?
vms=$(python3 "$q" rows "$T_TMP/nogc.json" vms | grep -c .)
[ $rc -eq 0 ] && [ "$vms" -eq 3 ] && t_ok "without a 'gc' command the snapshot is still taken" \
    || t_fail "without a 'gc' command the snapshot is still taken" "rc=$rc vms=$vms" "$(tail -3 "$T_TMP/nogc.err")"
grep -q "no plugin provides a 'gc' command" "$T_TMP/nogc.err" \
    && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["gc"] is not None)' "$T_TMP/nogc.json" \
    && t_ok "without a 'gc' command: a warning, and \"gc\": null" \
    || t_fail "without a 'gc' command: a warning, and \"gc\": null" "$(cat "$T_TMP/nogc.err")"

# 4. Through a server: its own connections to the VMs, so again no segments
# until a GC.
t_start_server "${scan[@]}" --selected-port 0 --debug-port-base "$(t_free_port)" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 2 ]; }
t_wait 15 ready && t_ok "the server has both DDM VMs ready" || t_fail "the server has both DDM VMs ready" "$(cat "$T_TMP/vms.json")"
t_ddmon snapshot --wait 500 --json >"$T_TMP/srv-plain.json" 2>"$T_TMP/srv-plain.err"
rc=$?
n=$(seg_rows "$T_TMP/srv-plain.json")
[ $rc -eq 0 ] && [ "$n" -eq 0 ] && t_ok "through the server, a snapshot without --gc has no heap segment rows" \
    || t_fail "through the server, a snapshot without --gc has no heap segment rows" "rc=$rc rows=$n"
t_ddmon snapshot --gc --wait 500 --json >"$T_TMP/srv-gc.json" 2>"$T_TMP/srv-gc.err"
rc=$?
[ $rc -eq 0 ] && t_ok "through the server, snapshot --gc exits 0" \
    || t_fail "through the server, snapshot --gc exits 0" "rc=$rc" "$(tail -5 "$T_TMP/srv-gc.err")"
check_gc "$T_TMP/srv-gc.json" >"$T_TMP/check.out" 2>&1 && t_ok "through the server, --gc: segment rows for both heaps of each DDM VM, the JVM not asked" \
    || t_fail "through the server, --gc: segment rows for both heaps of each DDM VM, the JVM not asked" "$(head -c 600 "$T_TMP/check.out" | paste -sd';')"
truth_now "$T_TMP/truth-server.json"
why=$(compare "$T_TMP/truth-server.json" "$T_TMP/srv-gc.json" "$T_TMP/cmp-server.out") \
    && t_ok "through the server, --gc: views match simvm's ground truth ($(grep -c '^ok' "$T_TMP/cmp-server.out") checks)" \
    || t_fail "through the server, --gc: views match simvm's ground truth" "$why"
# The server asked for the GCs: its log says nothing failed, and it runs on.
kill -0 "$DDMON_PID" && ! grep -qE " (critical|error) [a-z0-9-]+: |CRITICAL|runtime error" "$T_TMP/server.err" && t_ok "the server runs on, no criticals" \
    || t_fail "the server runs on, no criticals" "$(tail -5 "$T_TMP/server.err")"
exit 0
