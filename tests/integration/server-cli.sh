#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The adb-style shape: a foreground server on a private socket, client
# commands (vms, view, errors with distinct exit codes), a VM started after
# the server is found within a scan period and disappears when it exits,
# kill-server, and a client that starts a background server by itself.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 13
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports"
t_wait 10 test -s "$T_TMP/ports"
late_port=$(t_free_port)
# Exactly these ports (other tests' VMs may listen nearby).
range="$(t_simvm_ports "$T_TMP/ports"),$late_port"

t_start_server --scan=local --scan-ports "$range" && t_ok "server listens on its socket" \
    || t_fail "server listens on its socket" "$(tail -5 "$T_TMP/server.err")"
mode=$(stat -c %a "$T_TMP/ddmon.sock" 2>/dev/null)
[ "$mode" = 600 ] && t_ok "control socket is private (0600)" || t_fail "control socket is private (0600)" "mode $mode"

# vms_are N: the server lists exactly N DDM-aware VMs now.
vms_are() {
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null || return 1
    [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"ddm": true')" = "$1" ]
}
t_wait 10 vms_are 2 \
    && t_ok "vms lists both simulated VMs" || t_fail "vms lists both simulated VMs" "$(cat "$T_TMP/vms.json")"

t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1
head -1 "$T_TMP/vms.txt" | grep -qi "pid" && t_ok "vms prints a table with a header" \
    || t_fail "vms prints a table with a header" "$(cat "$T_TMP/vms.txt")"

# A VM started later is found within one scan period (default 2 s).
"$SIMVM" --vms 1 --base-port "$late_port" --port-file "$T_TMP/ports2" >"$T_TMP/simvm2.out" 2>&1 &
late=$!; T_PIDS+=("$late")
t_wait 15 vms_are 3 \
    && t_ok "a VM started later appears" || t_fail "a VM started later appears" "$(cat "$T_TMP/vms.json")"
kill "$late"; wait "$late" 2>/dev/null
t_wait 8 vms_are 2 \
    && t_ok "a VM that exits disappears" || t_fail "a VM that exits disappears" "$(cat "$T_TMP/vms.json")"

t_ddmon --no-autostart view no-such-view >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 3 ] && t_ok "unknown view: exit 3" || t_fail "unknown view: exit 3" "rc=$rc $(cat "$T_TMP/err")"
t_ddmon --no-autostart gc 999999 >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 3 ] && t_ok "unknown VM: exit 3" || t_fail "unknown VM: exit 3" "rc=$rc $(cat "$T_TMP/err")"

t_ddmon --no-autostart kill-server >/dev/null 2>&1
t_wait 5 t_dead "$DDMON_PID" && t_ok "kill-server stops the server" \
    || t_fail "kill-server stops the server"
t_ddmon --no-autostart vms >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 4 ] && t_ok "no server, no autostart: exit 4" || t_fail "no server, no autostart: exit 4" "rc=$rc $(cat "$T_TMP/err")"

# A client command starts a background server by itself, like adb.
t_ddmon --scan=local --scan-ports "$range" vms >"$T_TMP/auto.out" 2>"$T_TMP/auto.err"; rc=$?
# Its first answer already has discovery's results: both VMs ready, named.
grep -q "server not running; starting it now" "$T_TMP/auto.err" && [ $rc -eq 0 ] \
    && [ "$(grep -c ' ready ' "$T_TMP/auto.out")" = 2 ] \
    && t_ok "a client starts the server when none runs; its first 'vms' lists both VMs ready" \
    || t_fail "a client starts the server when none runs; its first 'vms' lists both VMs ready" "rc=$rc" \
        "$(cat "$T_TMP/auto.err" "$T_TMP/auto.out")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && t_ok "kill-server of the autostarted server" || t_fail "kill-server of the autostarted server" "rc=$rc"

# `help` without a server loads the plugins to list their commands, and
# nothing else: no debugger port (here the selected-VM port is taken).
busy=$(t_free_port)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(1); time.sleep(30)' "$busy" &
T_PIDS+=("$!")
t_wait 5 bash -c "(exec 3<>/dev/tcp/127.0.0.1/$busy) 2>/dev/null"
t_ddmon --no-autostart --selected-port "$busy" help >"$T_TMP/help.out" 2>"$T_TMP/help.err"; rc=$?
[ $rc -eq 0 ] && grep -q "heap-bitmap\|gc" "$T_TMP/help.out" && ! grep -q "relay" "$T_TMP/help.err" \
    && t_ok "help without a server lists plugin commands and opens no debugger port" \
    || t_fail "help without a server lists plugin commands and opens no debugger port" "rc=$rc" "$(cat "$T_TMP/help.err")"
exit 0
