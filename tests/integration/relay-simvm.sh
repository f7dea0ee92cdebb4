#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The debugger relay against DDM VMs played by ddmon-simvm (three simvm
# processes, one VM each, so each has its own options and ground truth):
#  - busy: ART, threads churning and a GC every 300 ms (ddmon's heap plugin
#    makes it send HPIF/HPSG chunks while its heap views are watched),
#    answers DBGD (--dbgd=ack);
#  - waiter: ART, --wait-for-debugger, ignores DBGD (no reply, as real ART);
#  - dalvik: Dalvik, answers DBGD with an empty reply (success without data).
# Checked: Version/IDSizes through the VM's relay port; the VM's DDM traffic
# never reaches the debugger while the debugger's own DDM requests get their
# replies; WAIT is shown, and the VM goes on at the debugger's first packet;
# when a debugger leaves, an acknowledged DBGD (a DBGD chunk or an empty
# reply) keeps the VM connection (same connection, same port) and an ignored
# one (no reply) reopens it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 19

# start_sim NAME ARGS...: one simvm with its own port, port file, state file and logs.
start_sim() {
    local name=$1 port; shift
    port=$(t_free_port) || return 1
    "$SIMVM" --vms 1 --base-port "$port" --port-file "$T_TMP/$name.ports" --state-file "$T_TMP/$name.state" \
        --app "com.example.$name" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    T_PIDS+=("$!")
    t_wait 10 test -s "$T_TMP/$name.ports" && t_wait 10 test -s "$T_TMP/$name.state"
}
sim_port() { awk '{print $2; exit}' "$T_TMP/$1.ports"; }
# sim_state NAME PYEXPR: a value from the VM's ground truth (v = the VM's object).
sim_state() {
    python3 - "$T_TMP/$1.state" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vms"][0]
print(eval(sys.argv[2]))
PY
}
sim_is() { [ "$(sim_state "$1" "$2")" = "$3" ]; }
# vminfo FIELD KEY: a field of the vminfo view of VM KEY.
vminfo() {
    t_ddmon --no-autostart view vminfo --vm "$2" --json >"$T_TMP/vminfo.json" 2>/dev/null || return 1
    python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" fields "$T_TMP/vminfo.json" vminfo "$2" |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin).get(sys.argv[1])))' "$1"
}
vminfo_is() { [ "$(vminfo "$1" "$2")" = "$3" ]; }
vms_row() {
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null &&
        python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" rows "$T_TMP/vms.json" vms | grep "\"$1\""
}
log_has() { grep -q -- "$1" "$T_TMP/server.err"; }

start_sim busy --thread-activity 100 --gc-every 300 --dbgd=ack &&
    start_sim waiter --wait-for-debugger &&
    start_sim dalvik --mode dalvik ||
    { t_fail "three simvm VMs started" "$(cat "$T_TMP"/*.err)"; exit 0; }
busy="127.0.0.1:$(sim_port busy)" waiter="127.0.0.1:$(sim_port waiter)" dalvik="127.0.0.1:$(sim_port dalvik)"
dbase=$(t_free_ports 8) && sel=$(t_free_port) || { t_fail "free ports"; exit 0; }
# --tcp-probe=helo: these TCP VMs are known to be Android VMs, and the
# default VirtualMachine.Version probe is itself a debugger packet that ends
# a WAIT (as it would on real ART).
t_start_server --scan=local --scan-ports "$(sim_port busy),$(sim_port waiter),$(sim_port dalvik)" \
    --tcp-probe=helo --debug-port-base "$dbase" --selected-port "$sel" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
if t_wait 15 t_debug_port "$busy" && t_wait 5 t_debug_port "$waiter" && t_wait 5 t_debug_port "$dalvik"; then
    pb=$(t_debug_port "$busy") pw=$(t_debug_port "$waiter") pd=$(t_debug_port "$dalvik")
    t_ok "the three DDM VMs get debugger ports ($pb $pw $pd)"
else
    t_fail "the three DDM VMs get debugger ports" "$(cat "$T_TMP/dp.json")" "$(tail -5 "$T_TMP/server.err")"
    exit 0
fi

# --- busy: JDWP through the relay, DDM kept away from the debugger -------------
out=$("$JDWPC" "127.0.0.1:$pb" version idsizes 2>&1)
echo "$out" | grep -q "^version 1 Android Runtime" && echo "$out" | grep -q "^idsizes 2 8 8 8 8 8$" &&
    t_ok "VirtualMachine.Version and IDSizes through the relay port" ||
    t_fail "VirtualMachine.Version and IDSizes through the relay port" "$out" "$(tail -3 "$T_TMP/server.err")"
t_wait 10 log_has "VM $busy acknowledged DBGD" &&
    t_ok "a DDM VM answering DBGD: the server logs 'acknowledged DBGD'" ||
    t_fail "a DDM VM answering DBGD: the server logs 'acknowledged DBGD'" "$(tail -5 "$T_TMP/server.err")"
! log_has "VM $busy did not acknowledge" && sim_is busy "v['connections']" 1 && sim_is busy "v['connected']" True &&
    t_ok "after an acknowledged DBGD the VM connection is kept (simvm saw 1 connection)" ||
    t_fail "after an acknowledged DBGD the VM connection is kept" "connections $(sim_state busy "v['connections']")" \
        "$(tail -5 "$T_TMP/server.err")"

# Look at its heap segments (a one-shot view keeps them watched for 30 s), so
# the heap plugin switches them on and the VM sends some at every GC.
t_ddmon --no-autostart view heap.segments --vm "$busy" >/dev/null 2>&1
# (segments_sent is null until the VM's first segments: generation 0)
gen0=$(sim_state busy "(v['heaps'][0]['segments_sent'] or {}).get('generation', 0)")
out=$("$JDWPC" "127.0.0.1:$pb" version noevents 1500 ddm FEAT noevents 1000 ddm REAQ noevents 1500 idsizes 2>&1)
rc=$?
gen1=$(sim_state busy "(v['heaps'][0]['segments_sent'] or {}).get('generation', 0)")
[ $rc -eq 0 ] && [ "$gen1" -gt "$gen0" ] &&
    t_ok "the VM's DDM traffic (heap segments $gen0 -> $gen1, thread events) never reaches the debugger" ||
    t_fail "the VM's DDM traffic never reaches the debugger" "rc $rc, segment generations $gen0 -> $gen1" "$out"
echo "$out" | grep -q "^ddm [0-9]* FEAT$" && echo "$out" | grep -q "^ddm [0-9]* REAQ$" &&
    t_ok "a debugger's own DDM requests get their replies (FEAT, REAQ)" ||
    t_fail "a debugger's own DDM requests get their replies (FEAT, REAQ)" "$out"
t_wait 10 sim_is busy "v['connections']" 1 && [ "$(t_debug_port "$busy")" = "$pb" ] &&
    sim_is busy "v['connected']" True && vms_row "$busy" | grep -q '"state": "ready"' &&
    t_ok "after two debugger sessions: same VM connection, same port, still ready" ||
    t_fail "after two debugger sessions: same VM connection, same port, still ready" \
        "connections $(sim_state busy "v['connections']")" "$(vms_row "$busy")"
out=$("$JDWPC" "127.0.0.1:$pb" id=0x40000000 version 2>&1)
echo "$out" | grep -q "^version 1073741824 " && t_ok "a debugger id equal to ddmon's own ids is answered" ||
    t_fail "a debugger id equal to ddmon's own ids is answered" "$out"

# --- waiter: WAIT, then going on at the debugger's first packet --------------
t_wait 10 vminfo_is waiting "$waiter" true && vms_row "$waiter" | grep -q "wait: waiting for debugger" &&
    t_ok "a VM waiting for a debugger shows it (vminfo waiting, headline 'wait')" ||
    t_fail "a VM waiting for a debugger shows it" "$(vminfo waiting "$waiter")" "$(vms_row "$waiter")"
# The debugger sends nothing until the test creates waiter.go (after the
# "still waits" check) and leaves only once waiter.done exists (after the
# "no longer shows" check): no check races a timer, however loaded the machine.
"$JDWPC" "127.0.0.1:$pw" waitfile "$T_TMP/waiter.go" version waitfile "$T_TMP/waiter.done" \
    >"$T_TMP/waiter.dbg" 2>&1 &
dbg=$!
t_wait 10 log_has "debugger .* attached to VM $waiter" && sleep 0.5 && sim_is waiter "v['waiting']" True &&
    t_ok "attached, no packet yet: the VM still waits" ||
    t_fail "attached, no packet yet: the VM still waits" "$(sim_state waiter "v['waiting']")"
touch "$T_TMP/waiter.go"
t_wait 10 grep -q "^version" "$T_TMP/waiter.dbg" && t_wait 5 sim_is waiter "v['waiting']" False &&
    sim_is waiter "v['debugger_active']" True &&
    t_ok "the VM goes on as soon as the debugger's first packet arrives" ||
    t_fail "the VM goes on as soon as the debugger's first packet arrives" "$(cat "$T_TMP/waiter.dbg")" \
        "$(sim_state waiter "v['waiting']")"
t_wait 10 vminfo_is waiting "$waiter" false && ! vms_row "$waiter" | grep -q "waiting for debugger" &&
    t_ok "ddmon no longer shows the VM waiting while the debugger is attached" ||
    t_fail "ddmon no longer shows the VM waiting while the debugger is attached" "$(vminfo waiting "$waiter")" \
        "$(vms_row "$waiter")"
touch "$T_TMP/waiter.done"
t_wait 10 t_dead $dbg || kill $dbg 2>/dev/null
wait $dbg 2>/dev/null

# --- ignored DBGD: ART (no reply) ---------------------------------------------
t_wait 10 log_has "VM $waiter did not acknowledge DBGD" &&
    t_ok "ART ignoring DBGD (no reply): the server logs 'did not acknowledge DBGD'" ||
    t_fail "ART ignoring DBGD (no reply): the server logs 'did not acknowledge DBGD'" "$(tail -5 "$T_TMP/server.err")"
t_wait 10 sim_is waiter "v['connections']" 2 && t_wait 10 sim_is waiter "v['connected']" True &&
    t_wait 10 t_debug_port "$waiter" && [ "$(t_debug_port "$waiter")" = "$pw" ] &&
    t_ok "the VM connection is reopened and the VM comes back on the same port" ||
    t_fail "the VM connection is reopened and the VM comes back on the same port" \
        "connections $(sim_state waiter "v['connections']")" "$(cat "$T_TMP/dp.json")" "$(tail -5 "$T_TMP/server.err")"
out=$("$JDWPC" "127.0.0.1:$pw" version 2>&1)
echo "$out" | grep -q "^version" && t_ok "the next debugger reaches the reopened VM" ||
    t_fail "the next debugger reaches the reopened VM" "$out"

out=$("$JDWPC" "127.0.0.1:$pd" version ddm FEAT 2>&1)
echo "$out" | grep -q "^version 1 Android DalvikVM" && echo "$out" | grep -q "^ddm 2 FEAT$" &&
    t_ok "a Dalvik VM through the relay (Version, FEAT)" || t_fail "a Dalvik VM through the relay (Version, FEAT)" "$out"
# --- DBGD answered with an empty reply (Dalvik): acknowledged ----------------
t_wait 10 log_has "VM $dalvik acknowledged DBGD (empty reply)" &&
    t_ok "Dalvik answering DBGD with an empty reply: the server logs 'acknowledged DBGD (empty reply)'" ||
    t_fail "Dalvik answering DBGD with an empty reply: the server logs 'acknowledged DBGD (empty reply)'" \
        "$(tail -5 "$T_TMP/server.err")"
sleep 1 # a reopening would show by now
! log_has "VM $dalvik did not acknowledge" && sim_is dalvik "v['connections']" 1 &&
    sim_is dalvik "v['connected']" True && [ "$(t_debug_port "$dalvik")" = "$pd" ] &&
    t_ok "after an empty DBGD reply the Dalvik VM keeps its connection and its port" ||
    t_fail "after an empty DBGD reply the Dalvik VM keeps its connection and its port" \
        "connections $(sim_state dalvik "v['connections']")" "$(tail -5 "$T_TMP/server.err")"

# The acknowledged VM was never reopened during all this.
sim_is busy "v['connections']" 1 && kill -0 "$DDMON_PID" &&
    t_ok "the DBGD-acknowledging VM kept its one connection throughout; the server runs" ||
    t_fail "the DBGD-acknowledging VM kept its one connection throughout; the server runs" \
        "connections $(sim_state busy "v['connections']")"
exit 0
