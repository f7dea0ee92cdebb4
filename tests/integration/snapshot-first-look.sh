#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A snapshot of a warm server whose views nobody watches has the data of
# a poll the snapshot caused, not stale or empty views (issue 16): the
# plugins poll a view only while it is watched, and the snapshot's watch
# wakes their poll ticks at once (ABI 1.5, timer_wake_on_watch); the
# server says "settled" only after those polls' requests are answered.
# Checked against the simulator's ground truth (--state-file: what each VM
# last sent):
#  1. with nothing watching, no VM was asked for HPIF or NHGT, and none
#     has its thread events on (no THEN(1): the simulator's
#     "thread_events"); THSTs went only for the VM list's thread count
#     (READY's, and those of the `ddmon vms` looks that wait for the VMs);
#  2. the first snapshot's threads (ids, tids, CPU times, and the names
#     only THEN's THCR burst gives), heap summary and native heap summary
#     of every VM are what that VM sent;
#  3. a second snapshot a while later again shows what the VMs sent last,
#     and that is newer than what they sent for the first one (the main
#     thread's CPU time grew), so it was polled again, not reused.
# Correctness only: how long it takes is bench/snapshot.sh's business.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads heap nativeheap \
    || t_skip_all "the threads, heap and nativeheap plugins were not built"
t_plan 7
NVMS=4
state="$T_TMP/state.json"

base=$(t_free_ports $NVMS) || t_skip_all "no free ports"
# Static threads (no births or deaths), so a poll's thread list is the model's.
t_start_simvm --vms $NVMS --base-port "$base" --port-file "$T_TMP/ports" --seed 23 \
    --state-file "$state" --thread-activity 0
port_lines() { wc -l <"$T_TMP/ports"; }
t_wait 10 t_is $NVMS port_lines && t_ok "simvm started $NVMS VMs" \
    || t_fail "simvm started $NVMS VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")

t_start_server --scan=local --scan-ports "$range" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = $NVMS ]; }
t_wait 30 ready && t_ok "the server knows the $NVMS simulated VMs" \
    || t_fail "the server knows the $NVMS simulated VMs" "$(cat "$T_TMP/vms.json")"
sleep 1 # warm: the VMs' first requests are answered, nothing watches

# check MODE SNAPSHOT [PREVIOUS]: MODE "unpolled": no VM in the ground truth
# was sent THST, HPIF or NHGT; MODE "polled": every VM's threads, heap.summary
# and nativeheap.summary in SNAPSHOT are what the VM last sent, and (with
# PREVIOUS, an earlier ground truth) its main thread's CPU time grew since.
check() {
    python3 - "$1" "$state" "${2:-}" "${3:-}" <<'EOF'
import json, sys
mode, state_path, snap_path, prev_path = sys.argv[1:5]
truth = {vm["port"]: vm for vm in json.load(open(state_path))["vms"]}
def sent(vm):
    heap = vm["heaps"][0]["hpif_sent"] if vm["heaps"] else None
    return vm["thst_sent"], heap, vm["native"]["nhgt_sent"]
if mode == "unpolled":
    asked = ["%d: %s, thread events %s" % (p, [x is not None for x in sent(vm)[1:]], vm["thread_events"])
             for p, vm in truth.items()
             if any(x is not None for x in sent(vm)[1:]) or vm["thread_events"] is not False]
    sys.exit("sent while nobody watched (HPIF, NHGT; THEN(1)): " + "; ".join(asked)
             if asked else 0)
snap = json.load(open(snap_path))
prev = {vm["port"]: vm for vm in json.load(open(prev_path))["vms"]} if prev_path else {}
bad = []
for key, vm in snap["vms"].items():
    port = int(key.rsplit(":", 1)[1])
    t = truth.get(port)
    if t is None:
        continue  # not a simulated VM
    views = vm["views"]
    thst, hpif, nhgt = sent(t)
    if not thst or not hpif or not nhgt:
        bad.append("%d: the VM was not polled (THST, HPIF, NHGT sent: %s)" % (port, [x is not None for x in (thst, hpif, nhgt)]))
        continue
    rows = views["threads"]["rows"]
    got = sorted((r["id"], r["tid"], r["utime"], r["stime"]) for r in rows)
    want = sorted((s["id"], s["tid"], s["utime"] * 10, s["stime"] * 10) for s in thst)  # jiffies -> ms
    if got != want:
        bad.append("%d: threads %s, the VM sent %s" % (port, got[:3], want[:3]))
    names = {s["id"]: s["name"] for s in t["threads"]}
    got_names = sorted((r["id"], r["name"]) for r in rows)
    if got_names != sorted((i, names.get(i)) for i, _, _, _ in got):
        bad.append("%d: thread names %s, the VM has %s" % (port, got_names[:3], sorted(names.items())[:3]))
    heap = [r for r in views["heap.summary"]["rows"] if r["heap"] == 1]
    if not heap or (heap[0]["size"], heap[0]["allocated"], heap[0]["objects"]) != \
            (hpif["size"], hpif["allocated_bytes"], hpif["allocated_objects"]):
        bad.append("%d: heap.summary %s, the VM sent %s" % (port, heap, hpif))
    f = views["nativeheap.summary"].get("fields", {})
    if (f.get("total_memory"), f.get("records")) != (nhgt["total_memory"], nhgt["records"]):
        bad.append("%d: nativeheap.summary %s, the VM sent %s" % (port, f, nhgt))
    if prev:
        before = {s["id"]: s for s in (prev[port]["thst_sent"] or [])}
        now = {s["id"]: s for s in thst}
        if 1 not in before or not now[1]["utime"] + now[1]["stime"] > before[1]["utime"] + before[1]["stime"]:
            bad.append("%d: the main thread's CPU time did not grow since the last snapshot (%s, then %s)"
                       % (port, before.get(1), now.get(1)))
seen = sum(1 for k in snap["vms"] if int(k.rsplit(":", 1)[1]) in truth)
if seen != len(truth):
    bad.append("the snapshot has %d of the %d VMs" % (seen, len(truth)))
sys.exit("; ".join(bad) if bad else 0)
EOF
}

# check_to FILE ARGS...: check ARGS, its message in FILE (t_wait hides output)
check_to() { local f=$1; shift; check "$@" >"$f" 2>&1; }

check_to "$T_TMP/check0" unpolled && t_ok "with nothing watching, no VM was asked for HPIF or NHGT, nor THEN(1)" \
    || t_fail "with nothing watching, no VM was asked for HPIF or NHGT, nor THEN(1)" "$(tail -1 "$T_TMP/check0")"

t_ddmon --no-autostart snapshot --wait 20000 --json >"$T_TMP/snap1.json" 2>"$T_TMP/snap1.err" \
    && t_ok "the first snapshot ran" || t_fail "the first snapshot ran" "$(tail -3 "$T_TMP/snap1.err")"
# The ground truth is rewritten within 50 ms of a change.
t_wait 5 check_to "$T_TMP/check1" polled "$T_TMP/snap1.json" \
    && t_ok "the first snapshot has every VM's threads, heap and native heap as the VM sent them" \
    || t_fail "the first snapshot has every VM's threads, heap and native heap as the VM sent them" \
        "$(tail -1 "$T_TMP/check1")"
cp "$state" "$T_TMP/state1.json"

sleep 1.5 # the model's CPU times grow; nothing watches meanwhile
t_ddmon --no-autostart snapshot --wait 20000 --json >"$T_TMP/snap2.json" 2>"$T_TMP/snap2.err" \
    && t_ok "the second snapshot ran" || t_fail "the second snapshot ran" "$(tail -3 "$T_TMP/snap2.err")"
t_wait 5 check_to "$T_TMP/check2" polled "$T_TMP/snap2.json" "$T_TMP/state1.json" \
    && t_ok "a second snapshot has what the VMs sent since the first, not the first's data" \
    || t_fail "a second snapshot has what the VMs sent since the first, not the first's data" \
        "$(tail -1 "$T_TMP/check2")"
t_stop "$DDMON_PID"
exit 0
