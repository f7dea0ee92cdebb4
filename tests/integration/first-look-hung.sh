#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One hung VM holds up one look, not every look after it. A good VM
# (ddmon-simvm) and a VM that greets (HELO, FEAT: READY) and then answers
# nothing (tests/tools/evilvm "greet silent"). A one-shot look (`ddmon
# vms`, `ddmon view NAME` of a view nobody watched) waits for the VMs'
# answers, at most 1.2 s (DDM_FIRST_LOOK_MS); a VM that left the requests
# a look found in flight unanswered that long is late, and no later look
# waits for it (ddm_registry_look_vm_settled). Checks, once the hung VM is
# late:
#  1. `ddmon vms`, three times, each well under 1.2 s (under 600 ms: a
#     loaded machine's client start-up is far less than the 600 ms left);
#  2. first looks at three views of the good VM nobody watched (vminfo,
#     threads, heap.summary: each wakes its plugin's poll, and each waited
#     the whole 1.2 s for the hung VM before), each under 600 ms;
#  3. those answers hold the good VM's data (its thread table: the look
#     still waited for the good VM's answer), and the hung VM is still
#     listed, ready.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo threads heap || t_skip_all "a standard plugin was configured out"
EVILVM="$DDM_TOP_BUILDDIR/tests/tools/evilvm"
FAST_MS=600
t_plan 9

t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/good.ports" --seed 15
t_wait 10 test -s "$T_TMP/good.ports" || t_fail "the good VM starts" "$(cat "$T_TMP/simvm.err")"
good_port=$(awk '{print $2}' "$T_TMP/good.ports")
GOOD="127.0.0.1:$good_port"
"$EVILVM" --port-file "$T_TMP/hung.port" --app hung --pid 4242 greet silent 120000 \
    >"$T_TMP/hung.out" 2>"$T_TMP/hung.err" &
T_PIDS+=("$!")
t_wait 5 test -s "$T_TMP/hung.port" || t_fail "the hung VM starts" "$(cat "$T_TMP/hung.err")"
hung_port=$(awk '{print $2}' "$T_TMP/hung.port")
HUNG="127.0.0.1:$hung_port"
t_start_server --scan=local --scan-ports "$good_port,$hung_port" --selected-port 0 \
    --debug-port-base "$(t_free_port)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_is ready t_vm_field "$GOOD" state
t_wait 15 t_is ready t_vm_field "$HUNG" state
# The hung VM went silent once greeted: a look at the VM list asks it for
# THST (its count is the oldest), which it never answers; that look waits
# for it (at most 1.2 s). Past 1.2 s it is late.
t_ddmon --no-autostart vms >/dev/null 2>&1
sleep 1.3

# ms CMD...: run the client, print how long it took (ms); its output is
# left in $T_TMP/out, its status in $T_TMP/rc.
ms() {
    local t0 t1 rc=0
    t0=$(date +%s%N)
    timeout 20 "$DDMON" --socket "$T_TMP/ddmon.sock" --no-autostart "$@" >"$T_TMP/out" 2>&1 || rc=$?
    t1=$(date +%s%N)
    echo "$rc" >"$T_TMP/rc"
    echo $(((t1 - t0) / 1000000))
}
fast() { # fast DESC CMD...: CMD succeeds within FAST_MS
    local desc=$1 took
    shift
    took=$(ms "$@")
    if [ "$(cat "$T_TMP/rc")" = 0 ] && [ "$took" -lt "$FAST_MS" ]; then
        t_ok "$desc: $took ms"
    else
        t_fail "$desc within $FAST_MS ms" "took $took ms, status $(cat "$T_TMP/rc")" \
            "$(head -c 400 "$T_TMP/out")"
    fi
}

for i in 1 2 3; do
    fast "ddmon vms ($i) with a hung VM" vms
done
grep -F "$HUNG" "$T_TMP/out" | grep -qw ready \
    && t_ok "the hung VM is still listed, ready" \
    || t_fail "the hung VM is still listed, ready" "$(cat "$T_TMP/out")"
fast "first look at the good VM's vminfo" view vminfo --vm "$GOOD" --json
fast "first look at the good VM's heap.summary" view heap.summary --vm "$GOOD" --json
fast "first look at the good VM's threads" view threads --vm "$GOOD" --json
# The threads look still waited for the good VM: its table is in the answer.
n=$(python3 -c '
import json, sys
def rows(d):
    if isinstance(d, dict):
        if d.get("name") == "threads":
            r = d.get("rows")
            if isinstance(r, (list, dict)): return len(r)
        for x in d.values():
            n = rows(x)
            if n: return n
    elif isinstance(d, list):
        for x in d:
            n = rows(x)
            if n: return n
    return 0
print(rows(json.load(open(sys.argv[1]))))' "$T_TMP/out" 2>/dev/null)
if [ "${n:-0}" -gt 0 ]; then
    t_ok "the threads look holds the good VM's table ($n threads)"
else
    t_fail "the threads look holds the good VM's table" "$(head -c 600 "$T_TMP/out")"
fi
# The hung VM is still connected, ready, on its first connection (late is
# no reason to close it): evilvm printed its greeting's line for one
# connection, and none of a second.
if t_is ready t_vm_field "$HUNG" state && grep -qx 'conn 1 step 1 greet ok' "$T_TMP/hung.out" \
    && [ "$(grep -c '^conn ' "$T_TMP/hung.out")" = "$(grep -c '^conn 1 ' "$T_TMP/hung.out")" ]; then
    t_ok "the hung VM stays connected, ready, on its first connection"
else
    t_fail "the hung VM stays connected, ready, on its first connection" \
        "state $(t_vm_field "$HUNG" state)" "$(cat "$T_TMP/hung.out")" "$(tail -5 "$T_TMP/server.err")"
fi
