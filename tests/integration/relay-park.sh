#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Parked debugger ports (core/relay/relay_ports.c; issue 16 made a parked
# port's key and timer live in the parked table, not in every endpoint):
# a VM that had a debugger and goes away keeps its port open (parked); a
# new VM of the same app (another key) takes that port over while it is
# parked, and a debugger on it reaches the new VM; a VM that does not come
# back frees its port after the park time (10 s), and the port is closed.
# Under the sanitizers, every path that hands the key over is checked for
# use after free.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 6

# start_sim NAME PORT: one simvm VM of app com.example.park on PORT.
start_sim() {
    "$SIMVM" --vms 1 --base-port "$2" --port-file "$T_TMP/$1.ports" --app com.example.park --dbgd=ack \
        >"$T_TMP/$1.out" 2>"$T_TMP/$1.err" &
    eval "sim_$1=$!"
    T_PIDS+=("$!")
    t_wait 10 test -s "$T_TMP/$1.ports"
}
log_has() { grep -q -- "$1" "$T_TMP/server.err"; }
log_count() { grep -c -- "$1" "$T_TMP/server.err"; }
# count_above N COMMAND...: COMMAND prints a number above N.
count_above() { local n=$1; shift; [ "$("$@" 2>/dev/null)" -gt "$n" ] 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

p1=$(t_free_port) && p2=$(t_free_port) && dbase=$(t_free_ports 8) && sel=$(t_free_port) ||
    { t_fail "free ports"; exit 0; }
start_sim one "$p1" || { t_fail "simvm started" "$(cat "$T_TMP/one.err")"; exit 0; }
t_start_server --scan=local --scan-ports "$p1,$p2" --tcp-probe=helo --debug-port-base "$dbase" \
    --selected-port "$sel" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
one="127.0.0.1:$p1" two="127.0.0.1:$p2"
t_wait 15 t_debug_port "$one" || { t_fail "the VM gets a debugger port" "$(tail -5 "$T_TMP/server.err")"; exit 0; }
port=$(t_debug_port "$one")

# A debugger session (DBGD acknowledged: the connection stays, marked as
# having had a debugger), then the VM dies: its port is parked.
out=$("$JDWPC" "127.0.0.1:$port" version 2>&1)
echo "$out" | grep -q "^version" && t_ok "a debugger reaches the VM on port $port" ||
    t_fail "a debugger reaches the VM on port $port" "$out"
t_wait 10 log_has "VM $one acknowledged DBGD"
# The port is open before the VM dies too: only once the server has seen
# the VM's connection close (its log line; the relay parks or closes the
# port in that same turn of its loop) does an open port say "parked".
closed_before=$(log_count "$one: session closed")
kill -9 "$sim_one"; wait "$sim_one" 2>/dev/null
if ! t_wait 10 count_above "$closed_before" log_count "$one: session closed"; then
    t_fail "the VM went away after a debugger: its port stays open (parked)" \
        "the server did not log the VM's session closing" "$(tail -5 "$T_TMP/server.err")"
elif port_open "$port"; then
    t_ok "the VM went away after a debugger: its port stays open (parked)"
else
    t_fail "the VM went away after a debugger: its port stays open (parked)" "$(tail -5 "$T_TMP/server.err")"
fi

# The same app comes back as another VM (another key): it takes the parked port over.
start_sim two "$p2" || { t_fail "second simvm started" "$(cat "$T_TMP/two.err")"; exit 0; }
t_wait 15 t_debug_port "$two" && [ "$(t_debug_port "$two")" = "$port" ] &&
    t_wait 5 log_has "VM $two takes over debugger port $port, parked for $one" &&
    t_ok "a new VM of the same app takes the parked port over" ||
    t_fail "a new VM of the same app takes the parked port over" "port $(t_debug_port "$two")" \
        "$(grep relay "$T_TMP/server.err" | tail -5)"
out=$("$JDWPC" "127.0.0.1:$port" version 2>&1)
echo "$out" | grep -q "^version" && t_ok "... and a debugger on it reaches the new VM" ||
    t_fail "... and a debugger on it reaches the new VM" "$out"

# That VM goes away too and does not come back: the port closes after the park time.
t_wait 10 log_has "VM $two acknowledged DBGD"
kill -9 "$sim_two"; wait "$sim_two" 2>/dev/null
t_wait 20 log_has "VM $two did not come back; freeing its debugger port $port" &&
    t_ok "a VM that does not come back frees its parked port" ||
    t_fail "a VM that does not come back frees its parked port" "$(grep relay "$T_TMP/server.err" | tail -5)"
! port_open "$port" && t_ok "... which is closed" || t_fail "... which is closed"
