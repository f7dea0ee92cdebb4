#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The terminal UI's t on a VM that cannot sample (ddmon-simvm --mode
# dalvik: no SPSS): the sampling trace is refused, and the UI starts a
# method trace (--tracing) of the same VM into the same APP-PID.trace by
# itself, says so, and names the file when it is written; the UI then
# exits cleanly (under the sanitizers: no report on its stderr). Skipped
# without tmux or a build without ncurses.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v tmux >/dev/null || t_skip_all "no tmux"
grep -q "define HAVE_NCURSES 1" "$DDM_TOP_BUILDDIR/build-config.h" || t_skip_all "built without ncurses"
infocmp xterm-256color >/dev/null 2>&1 || t_skip_all "no terminfo for xterm-256color"
t_have_plugins profile || t_skip_all "the profile plugin was not built"
t_plan 4
sock="$T_TMP/ddmon.sock"
TM_SOCK="$T_TMP/tmux.sock"
tm() { tmux -S "$TM_SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; t_cleanup' EXIT
screen() { tm capture-pane -p -t ui; }
screen_has() { screen | grep -q -- "$1"; }

t_start_simvm --mode dalvik --vms 1 --base-port 0 --port-file "$T_TMP/ports" --seed 11
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm" "$(cat "$T_TMP/simvm.err")"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --debug-port-base "$(t_free_port)" \
    || t_fail "server" "$(cat "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && grep -q ' ready ' "$T_TMP/vms.txt"; }
t_wait 15 ready && t_ok "the Dalvik VM is ready" || t_fail "the Dalvik VM is ready" "$(cat "$T_TMP/vms.txt")"

app=$(awk 'NR == 1 {print $3}' "$T_TMP/ports")
pid=$(awk 'NR == 1 {print $1}' "$T_TMP/ports")
mkdir -p "$T_TMP/tuicwd"
tm new-session -d -s ui -x 100 -y 30 -c "$T_TMP/tuicwd" \
    "env TERM=xterm-256color '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/tui.err'; echo EXITED:\$?; sleep 60"
t_wait 15 screen_has "$app" || t_fail "the UI lists the VM" "$(screen)"
tm send-keys -t ui Enter
t_wait 15 screen_has "pid $pid" || t_fail "Enter opens the VM" "$(screen)"

tm send-keys -t ui t
trace="$T_TMP/tuicwd/$app-$pid.trace"
if t_wait 20 screen_has "tracing into $app-$pid.trace"; then
    t_ok "t on a VM that cannot sample falls back to a method trace, and says so"
else
    t_fail "t on a VM that cannot sample falls back to a method trace, and says so" "$(screen)" \
        "$(cat "$T_TMP/tui.err")"
fi
if t_wait 60 screen_has "written to .*$app-$pid.trace" && [ -s "$trace" ] &&
    head -1 "$trace" | grep -q '^\*version'; then
    t_ok "the method trace is written to APP-PID.trace in the UI's directory"
else
    t_fail "the method trace is written to APP-PID.trace in the UI's directory" "$(screen)" \
        "$(ls -la "$T_TMP/tuicwd")" "$(cat "$T_TMP/tui.err")"
fi
tm send-keys -t ui q
tm send-keys -t ui q
t_wait 10 screen_has "EXITED:" || true
if ! grep -qE "AddressSanitizer|runtime error|LeakSanitizer" "$T_TMP/tui.err" && screen_has "EXITED:0"; then
    t_ok "the UI exits cleanly, with no sanitizer report"
else
    t_fail "the UI exits cleanly, with no sanitizer report" "$(screen)" "$(head -40 "$T_TMP/tui.err")"
fi
exit 0
