#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Relay ports: an explicit target with a fixed debugger port holds a
# debugger that arrives before the VM is up (a harness that starts the
# debugger first, then the VM with suspend=y) and attaches it once ddmon
# reaches the VM; a VM of the same app that comes back (new pid, other JDWP
# port) gets its old debugger port again; nothing selected on the selected
# port: the connection is closed and the log says why. While the target's VM
# is down (retrying) its row in the VM list shows the fixed port, which
# listens meanwhile.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_plan 7
t_javac || t_skip_all "javac failed"

vm_port=$(t_free_port); dport=$(t_free_port); base=$(t_free_ports 4); sel=$(t_free_port)
p1=$(t_free_port); p2=$(t_free_port); p3=$(t_free_port)
t_start_server --scan=local --scan-ports "$p1,$p2,$p3" --connect "127.0.0.1:$vm_port=$dport" \
    --debug-port-base "$base" --selected-port "$sel" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# The VM not up yet: the target is retried, and listed with its fixed port.
retrying_on_dport() {
    [ "$(t_vm_field "127.0.0.1:$vm_port" state)" = retrying ] &&
        [ "$(t_vm_field "127.0.0.1:$vm_port" debug_port)" = "$dport" ]
}
t_wait 15 retrying_on_dport && t_ok "a target being retried is listed with its fixed debugger port $dport" \
    || t_fail "a target being retried is listed with its fixed debugger port $dport" "$(cat "$T_TMP/dp.json" 2>/dev/null)"

# The debugger first, then the VM (suspend=y: its VMStart must reach the debugger).
"$JDWPC" "127.0.0.1:$dport" version >"$T_TMP/early.out" 2>&1 &
dbg=$!
sleep 1.5
t_start_jvm "$vm_port" y Sleeper 2
t_wait 15 t_dead $dbg
wait $dbg; rc=$?
[ $rc = 0 ] && grep -q "^version" "$T_TMP/early.out" && t_ok "a debugger that came before the VM is held, then attached" \
    || t_fail "a debugger that came before the VM is held, then attached" "rc=$rc" "$(cat "$T_TMP/early.out")" "$(grep relay "$T_TMP/server.err" | tail -5)"
grep -q "^event 64 100" "$T_TMP/early.out" && t_ok "... and got the VM's VMStart event" \
    || t_fail "... and got the VM's VMStart event" "$(cat "$T_TMP/early.out")"

# Same app back on another port: the same debugger port.
t_start_simvm --vms 1 --app com.example.sticky --base-port "$p1" --port-file "$T_TMP/ports1"
first_sim=$SIMVM_PID
t_wait 10 test -s "$T_TMP/ports1"
k1="127.0.0.1:$(awk '{print $2}' "$T_TMP/ports1")"
t_wait 15 t_debug_port "$k1" && port1=$(t_debug_port "$k1")
kill "$first_sim"; wait "$first_sim" 2>/dev/null
t_wait 10 bash -c "! '$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q '$k1 '"
"$SIMVM" --vms 1 --app com.example.sticky --base-port "$p2" --port-file "$T_TMP/ports2" --seed 9 >/dev/null 2>&1 &
second_sim=$!
T_PIDS+=($second_sim)
t_wait 10 test -s "$T_TMP/ports2"
k2="127.0.0.1:$(awk '{print $2}' "$T_TMP/ports2")"
t_wait 15 t_debug_port "$k2" && port2=$(t_debug_port "$k2")
[ -n "${port1:-}" ] && [ "${port1:-}" = "${port2:-}" ] && [ "$k1" != "$k2" ] \
    && t_ok "the same app on another port gets its debugger port back ($port1)" \
    || t_fail "the same app on another port gets its debugger port back" "$k1 -> ${port1:-none}, $k2 -> ${port2:-none}"

# Same app back again, but starting as "<pre-initialized>" (as Android apps
# do) and named later: it moves back to its port once named.
kill "$second_sim"; wait "$second_sim" 2>/dev/null
t_wait 10 bash -c "! '$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q '$k2 '"
"$SIMVM" --vms 1 --app com.example.sticky --rename-after 1500 --base-port "$p3" --port-file "$T_TMP/ports3" \
    --seed 11 >/dev/null 2>&1 &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/ports3"
k3="127.0.0.1:$(awk '{print $2}' "$T_TMP/ports3")"
back() { [ "$(t_debug_port "$k3")" = "${port1:-x}" ]; }
t_wait 15 back && t_ok "a renamed (<pre-initialized> at start) app moves back to its port ($port1)" \
    || t_fail "a renamed (<pre-initialized> at start) app moves back to its port" "$k3 -> $(t_debug_port "$k3")" \
        "$(grep relay "$T_TMP/server.err" | tail -3)"

# Nothing selected: accepted, closed, and the log says why.
out=$("$JDWPC" "127.0.0.1:$sel" version 2>&1); rc=$?
[ $rc != 0 ] && t_ok "the selected-VM port with nothing selected closes the debugger" \
    || t_fail "the selected-VM port with nothing selected closes the debugger" "$out"
grep -q "no VM is selected" "$T_TMP/server.err" && t_ok "... and the log says why" \
    || t_fail "... and the log says why" "$(grep relay "$T_TMP/server.err" | tail -3)"
exit 0
