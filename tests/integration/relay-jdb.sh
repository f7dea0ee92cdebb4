#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A scripted jdb session (stop at a line, run, print a local, step, clear,
# cont, quit) against a VM started with suspend=y gives the same output
# through ddmon (the selected-VM port, then the VM's own relay port) as
# directly. The VM's VMStart event, sent before any debugger is attached,
# must reach jdb through ddmon.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v jdb >/dev/null && command -v javac >/dev/null || t_skip_all "no jdb/javac"
t_plan 6
t_javac || t_skip_all "javac failed"

session() { # session PORT: run the jdb script, print the lines that matter
    { sleep 2; echo "stop at Sleeper:17"; sleep 1; echo "run"; sleep 2; echo "print local"; sleep 1
      echo "step"; sleep 1; echo "clear Sleeper:17"; sleep 1; echo "cont"; sleep 1; echo "quit"; } |
        timeout 40 jdb -attach "127.0.0.1:$1" 2>&1 |
        tr '\r' '\n' | grep -oE "(Breakpoint hit|local = |Step completed|Removed|Set deferred breakpoint|VM Started).*" |
        sed -E 's/bci=[0-9]+//; s/ +$//; s/^VM Started.*/VM Started/'
}

# Directly.
p1=$(t_free_port)
t_start_jvm "$p1" y Sleeper 3
t_wait_jvm "$p1"
session "$p1" >"$T_TMP/direct.txt"
grep -q "local = 0" "$T_TMP/direct.txt" || { t_fail "direct jdb session works" "$(cat "$T_TMP/direct.txt")"; exit 0; }

# Through ddmon, selected-VM port.
p2=$(t_free_port); base=$(t_free_ports 4); sel=$(t_free_port)
t_start_jvm "$p2" y Sleeper 3
t_wait_jvm "$p2"
t_start_server --scan=local --scan-ports "$p2" --debug-port-base "$base" --selected-port "$sel" --select "127.0.0.1:$p2"
t_wait 15 t_debug_port "127.0.0.1:$p2" || t_fail "ddmon lists the suspended VM" "$(tail -5 "$T_TMP/server.err")"
session "$sel" >"$T_TMP/selected.txt"
diff -u "$T_TMP/direct.txt" "$T_TMP/selected.txt" >"$T_TMP/d1" && t_ok "jdb through the selected-VM port = direct" \
    || t_fail "jdb through the selected-VM port = direct" "$(cat "$T_TMP/d1")"
grep -q "VM Started" "$T_TMP/selected.txt" && t_ok "VMStart sent before any debugger reached jdb" \
    || t_fail "VMStart sent before any debugger reached jdb" "$(cat "$T_TMP/selected.txt")"

# Through the VM's own port (a fresh suspended VM).
p3=$(t_free_port)
t_start_jvm "$p3" y Sleeper 3
t_wait_jvm "$p3"
kill "$DDMON_PID"; wait "$DDMON_PID" 2>/dev/null; rm -f "$T_TMP/ddmon.sock"
t_start_server --scan=local --scan-ports "$p3" --debug-port-base "$base" --selected-port "$sel"
t_wait 15 t_debug_port "127.0.0.1:$p3" && port=$(t_debug_port "127.0.0.1:$p3")
session "${port:-1}" >"$T_TMP/own.txt"
diff -u "$T_TMP/direct.txt" "$T_TMP/own.txt" >"$T_TMP/d2" && t_ok "jdb through the VM's relay port = direct" \
    || t_fail "jdb through the VM's relay port = direct" "$(cat "$T_TMP/d2")"
# The first VM finished its three rounds after quit: the program really ran on.
t_wait 10 grep -q "tick 4" "$T_TMP/jvm-$p2.out" && t_ok "the VM ran to its end after jdb quit" \
    || t_fail "the VM ran to its end after jdb quit" "$(cat "$T_TMP/jvm-$p2.out")"
# jdb killed with SIGKILL while the VM is stopped at a breakpoint: the program
# must go on within a second, and ddmon must list the VM again.
p4=$(t_free_port)
t_start_jvm "$p4" n Sleeper
t_wait_jvm "$p4"
kill "$DDMON_PID"; wait "$DDMON_PID" 2>/dev/null; rm -f "$T_TMP/ddmon.sock"
t_start_server --scan=local --scan-ports "$p4" --debug-port-base "$base" --selected-port "$sel"
t_wait 15 t_debug_port "127.0.0.1:$p4" && port=$(t_debug_port "127.0.0.1:$p4")
mkfifo "$T_TMP/jdb.in"
timeout 60 jdb -attach "127.0.0.1:${port:-1}" <"$T_TMP/jdb.in" >"$T_TMP/jdb-kill.out" 2>&1 &
jdb_pid=$!
exec 7>"$T_TMP/jdb.in"
sleep 2; echo "stop at Sleeper:17" >&7
t_wait 15 grep -q "Breakpoint hit" "$T_TMP/jdb-kill.out"
hit=$?
sleep 1
ticks_stopped=$(grep -c tick "$T_TMP/jvm-$p4.out")
pkill -9 -P "$jdb_pid" 2>/dev/null; kill -9 "$jdb_pid" 2>/dev/null
{ wait "$jdb_pid"; } 2>/dev/null
exec 7>&-
goes_on() { [ "$(grep -c tick "$T_TMP/jvm-$p4.out")" -gt "$ticks_stopped" ]; }
if [ $hit = 0 ] && t_wait 1 goes_on; then
    t_ok "jdb killed at a breakpoint: the program goes on within a second"
else
    t_fail "jdb killed at a breakpoint: the program goes on within a second" "hit=$hit ticks=$ticks_stopped" \
        "$(tail -5 "$T_TMP/jdb-kill.out")" "$(grep relay "$T_TMP/server.err" | tail -4)"
fi
t_wait 5 t_debug_port "127.0.0.1:$p4" && t_ok "... and ddmon lists the VM again" \
    || t_fail "... and ddmon lists the VM again" "$(tail -3 "$T_TMP/server.err")"
exit 0
