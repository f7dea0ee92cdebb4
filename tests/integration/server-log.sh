#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The server's log through the real ddmon binary: a background server's log
# file (ddmon.log next to ddmon.sock) and a foreground server's stderr hold
# one readable line per event, "TIME LEVEL COMPONENT [VM]: MESSAGE" (the VM
# field on lines about one VM: its session, or anything logged while its
# socket is handled), not glib's
# "(ddmon:PID): DOMAIN-WARNING **: ..."; debug lines only with
# G_MESSAGES_DEBUG. The formatter itself: tests/unit/server/test-log.c.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 8
unset DDMON_PLUGIN_PATH
LOG="$T_TMP/ddmon.log"
LINE_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} (error|critical|warning|message|info|debug) [a-z0-9-]+( \[[^] ]+\])?: '

# Every line of FILE in the format (and at least one line).
all_lines_ok() {
    [ -s "$1" ] && ! grep -qvE "$LINE_RE" "$1" && return 0
    echo "# lines of $1 not in the format:"; grep -vE "$LINE_RE" "$1" | t_diag; return 1
}

# A background server with a misspelled --plugin-opt: a warning in its log.
timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --scan=none --selected-port=0 --plugin-opt nosuch.key=1 start-server \
    >"$T_TMP/start.out" 2>"$T_TMP/start.err"
if t_wait 10 grep -q "no plugin named 'nosuch'" "$LOG" &&
    grep -E "${LINE_RE}--plugin-opt: no plugin named 'nosuch'" "$LOG" | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+ warning [a-z-]+: '; then
    t_ok "a background server's warning is one readable line in its log"
else
    t_fail "a background server's warning is one readable line in its log" "$(cat "$LOG" 2>&1)"
fi
! grep -qF '**:' "$LOG" && t_ok "... and no glib '**:' line" || t_fail "... and no glib '**:' line" "$(cat "$LOG")"
grep -qE ' message core: ddmon .* server \(pid [0-9]+\) listening on ' "$LOG" &&
    t_ok "the server's own messages are 'message core: ...'" ||
    t_fail "the server's own messages are 'message core: ...'" "$(cat "$LOG")"
grep -qF "* ddmon server warning: --plugin-opt: no plugin named 'nosuch'" "$T_TMP/start.err" &&
    t_ok "the starting client still shows the server's startup warning" ||
    t_fail "the starting client still shows the server's startup warning" "$(cat "$T_TMP/start.err")"
timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" kill-server >/dev/null 2>&1
t_wait 10 grep -q "server stopping" "$LOG"
t_check "every line of the log is in the format, none of them debug" \
    eval 'all_lines_ok "$LOG" && ! grep -q " debug " "$LOG"'

# A foreground server writes the same lines to its stderr; G_MESSAGES_DEBUG
# still enables debug lines.
G_MESSAGES_DEBUG=all t_start_server --scan=none --selected-port=0 ||
    t_fail "a foreground server started" "$(cat "$T_TMP/server.err")"
t_stop "$DDMON_PID"
t_check "a foreground server's stderr is in the same format" all_lines_ok "$T_TMP/server.err"
t_check "... with debug lines under G_MESSAGES_DEBUG=all" grep -qE ' debug [a-z-]+: ' "$T_TMP/server.err"

# A VM's lines carry its key as a field: a simulated VM that goes away.
t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/ports" --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
simvm_pid=${T_PIDS[-1]}
port=$(awk 'NR==1{print $2}' "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$port" --selected-port=0 --debug-port-base 0 ||
    t_fail "a foreground server started" "$(cat "$T_TMP/server.err")"
t_wait 15 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q ' ready '"
t_stop "$simvm_pid"
t_check "a line about a VM names it in the VM field ([127.0.0.1:$port])" \
    t_wait 10 grep -qE " message core \[127\.0\.0\.1:$port\]: .*session closed" "$T_TMP/server.err"
t_stop "$DDMON_PID"

exit 0
