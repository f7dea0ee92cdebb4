#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke test of ddmon-simvm with its own tiny client (simvm-probe, C, no
# python): three ART VMs and one plain JVM on kernel-chosen ports; each
# answers the handshake and HELO with the pid and name of the port file
# (the first one's not ASCII);
# FEAT, a GC with heap segments, a second connection dropped while one is
# served, a hostile length survived, EXIT removes the VM, the ground truth
# records what was sent.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
PROBE="$DDM_TOP_BUILDDIR/tools/simvm/simvm-probe"
t_plan 12

# The first VM's name is not ASCII (ddmon-simvm runs in the C locale: GLib
# once refused it), and HELO must carry it (UTF-16 on the wire).
t_start_simvm --vms 3 --jvm-vms 1 --base-port 0 --port-file "$T_TMP/ports" \
    --state-file "$T_TMP/state.json" --seed 5 --app "$(printf 'com.ex\xc3\xa4mple.\xe2\x82\xac')"
four_vms() { [ "$(wc -l <"$T_TMP/ports")" = 4 ]; } 2>/dev/null
if t_wait 10 four_vms; then
    t_ok "simvm writes a port file with four VMs"
else
    t_fail "simvm writes a port file with four VMs" "$(cat "$T_TMP/simvm.err")"
fi

i=0
while read -r pid port app mode; do
    [ "$mode" = jvm ] && { jvm_port=$port; continue; }
    i=$((i + 1))
    [ $i = 1 ] && { first_port=$port; first_pid=$pid; }
    [ $i = 2 ] && second_port=$port
    if "$PROBE" -p "$port" --expect-pid "$pid" --expect-app "$app" >"$T_TMP/probe$i.out" 2>&1; then
        t_ok "VM $i answers HELO with pid $pid and app $app"
    else
        t_fail "VM $i answers HELO with pid $pid and app $app" "$(cat "$T_TMP/probe$i.out")"
    fi
done <"$T_TMP/ports"

"$PROBE" -p "$jvm_port" >"$T_TMP/jvm.out" 2>&1
grep -q '^helo-error=99$' "$T_TMP/jvm.out" && t_ok "the plain JVM answers HELO with error 99" \
    || t_fail "the plain JVM answers HELO with error 99" "$(cat "$T_TMP/jvm.out")"

"$PROBE" -p "$first_port" --feat --gc 2000 >"$T_TMP/gc.out" 2>&1
grep -q '^features=[1-9]' "$T_TMP/gc.out" && t_ok "FEAT lists features" \
    || t_fail "FEAT lists features" "$(cat "$T_TMP/gc.out")"
if grep -q '^event.HPIF=1$' "$T_TMP/gc.out" && grep -q '^event.HPST=1$' "$T_TMP/gc.out" &&
    grep -q '^event.HPSG=[1-9]' "$T_TMP/gc.out" && grep -q '^event.HPEN=1$' "$T_TMP/gc.out"; then
    t_ok "HPGC sends HPIF, HPST, HPSG pieces and HPEN"
else
    t_fail "HPGC sends HPIF, HPST, HPSG pieces and HPEN" "$(cat "$T_TMP/gc.out")"
fi
if t_wait 5 grep -q '"segments_sent" : {' "$T_TMP/state.json"; then
    t_ok "the state file records the segments sent"
else
    t_fail "the state file records the segments sent" "$(head -c 2000 "$T_TMP/state.json")"
fi

# While one client holds the VM, a second one is accepted and dropped (ART).
exec 3<>"/dev/tcp/127.0.0.1/$second_port"
sleep 0.2
if "$PROBE" -p "$second_port" -t 2000 >"$T_TMP/second.out" 2>&1; then
    t_fail "a second connection is dropped while one is served" "$(cat "$T_TMP/second.out")"
else
    t_ok "a second connection is dropped while one is served"
fi
exec 3>&-

# A client that sends a hostile length is dropped; the VM keeps serving.
exec 3<>"/dev/tcp/127.0.0.1/$second_port"
printf 'JDWP-Handshake\377\377\377\377\000\000\000\001\000\307\001' >&3
sleep 0.3
exec 3>&-
sleep 0.2
"$PROBE" -p "$second_port" >"$T_TMP/after.out" 2>&1 && t_ok "a hostile length is survived" \
    || t_fail "a hostile length is survived" "$(cat "$T_TMP/after.out" "$T_TMP/simvm.err")"

# EXIT: the connection drops and the VM leaves the port file.
"$PROBE" -p "$first_port" --exit 1 >"$T_TMP/exit.out" 2>&1
if grep -q '^exit=closed$' "$T_TMP/exit.out" && t_wait 5 sh -c "! grep -q '^$first_pid ' '$T_TMP/ports'"; then
    t_ok "EXIT halts the VM and it leaves the port file"
else
    t_fail "EXIT halts the VM and it leaves the port file" "$(cat "$T_TMP/exit.out" "$T_TMP/ports")"
fi
kill -0 "$SIMVM_PID" 2>/dev/null && t_ok "simvm still runs" || t_fail "simvm still runs" "$(cat "$T_TMP/simvm.err")"
exit 0
