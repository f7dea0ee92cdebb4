#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The terminal UI of `ddmon` driven as a person would, in tmux: keys with
# send-keys, the screen read with capture-pane (-e for colours). Against
# ddmon-simvm: a VM appears in the list; Enter opens it on its threads tab
# with the simulator's thread names; a thread that changes state is
# highlighted; ? shows the help; a resize redraws for the new width; q
# quits and leaves the terminal as it was. Skipped without tmux or a build without ncurses.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v tmux >/dev/null || t_skip_all "no tmux"
grep -q "define HAVE_NCURSES 1" "$DDM_TOP_BUILDDIR/build-config.h" || t_skip_all "built without ncurses"
infocmp xterm-256color >/dev/null 2>&1 || t_skip_all "no terminfo for xterm-256color"
t_plan 9
sock="$T_TMP/ddmon.sock"
TM_SOCK="$T_TMP/tmux.sock"
tm() { tmux -S "$TM_SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; t_cleanup' EXIT
screen() { tm capture-pane -p -t ui; }
screen_has() { screen | grep -q -- "$1"; }
# A row of the screen with the highlight colour (black on yellow) and one of
# the names given (a thread name).
hot_row() { tm capture-pane -p -e -t ui | grep $'\e\\[43m' | grep -qE "$1"; }

t_start_simvm --vms 2 --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/state.json" \
    --thread-activity 500
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm" "$(cat "$T_TMP/simvm.err")"
ports=$(t_simvm_ports "$T_TMP/ports")
server_args=(--scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base "$(t_free_port)")
t_start_server "${server_args[@]}" || t_fail "server" "$(cat "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" = 2 ]; }
t_wait 15 ready || t_fail "two VMs ready" "$(cat "$T_TMP/vms.txt")"

tm new-session -d -s ui -x 120 -y 30 \
    "env TERM=xterm-256color '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/tui.err'; echo EXITED:\$?; sleep 60"
first_app=$(sort -n "$T_TMP/ports" | head -1 | awk '{print $3}') # the list is sorted by pid
first_pid=$(sort -n "$T_TMP/ports" | head -1 | awk '{print $1}')
if t_wait 15 screen_has "$first_app" && screen_has "2 VMs" && screen_has "THREADS"; then
    t_ok "the VM list shows the simulated VMs"
else
    t_fail "the VM list shows the simulated VMs" "$(screen)"
fi

tm send-keys -t ui Enter
names=$(python3 - "$T_TMP/state.json" "$first_pid" <<'PY'
import json, sys
for vm in json.load(open(sys.argv[1]))["vms"]:
    if vm["pid"] == int(sys.argv[2]):
        print("\n".join(t["name"] for t in vm["threads"] if t["id"] < 10))
PY
)
three_names() { local n ok=0; while IFS= read -r n; do screen | grep -qF -- "$n" && ok=$((ok + 1)); done <<<"$names"; [ $ok -ge 3 ]; }
if t_wait 15 screen_has "pid $first_pid" && t_wait 15 three_names && screen_has " threads "; then
    t_ok "Enter opens the VM on its threads tab, with the simulator's thread names"
else
    t_fail "Enter opens the VM on its threads tab, with the simulator's thread names" "$(screen)" "names: $names"
fi
all_names=$(python3 - "$T_TMP/state.json" "$first_pid" <<'PY'
import json, re, sys
for vm in json.load(open(sys.argv[1]))["vms"]:
    if vm["pid"] == int(sys.argv[2]):
        print("|".join(re.escape(t["name"]) for t in vm["threads"]))
PY
)
if t_wait 20 hot_row "$all_names"; then
    t_ok "a thread that changed state is highlighted"
else
    t_fail "a thread that changed state is highlighted" "$(tm capture-pane -p -e -t ui | cat -v | head -30)"
fi

tm send-keys -t ui Right
if t_wait 10 sh -c "! tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -q 'Threads  (v'"; then
    t_ok "Right moves to another tab"
else
    t_fail "Right moves to another tab" "$(screen)"
fi

tm send-keys -t ui '?'
if t_wait 5 screen_has "ddmon: keys" && screen_has "heap dump"; then
    t_ok "? shows the help"
else
    t_fail "? shows the help" "$(screen)"
fi
tm send-keys -t ui x
t_wait 5 sh -c "! tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -q 'ddmon: keys'" \
    && t_ok "any key closes the help" || t_fail "any key closes the help" "$(screen)"

tm send-keys -t ui q
t_wait 5 screen_has "DEBUGGER"
tm send-keys -t ui q
if t_wait 10 screen_has "EXITED:0"; then t_ok "q quits with status 0"; else t_fail "q quits with status 0" "$(screen)" "$(cat "$T_TMP/tui.err")"; fi
# The alternate screen is gone: only the shell's line is left.
if ! screen | grep -qE "THREADS|ddmon 0|DEBUGGER" && tm capture-pane -p -e -t ui | grep -q "EXITED:0"; then
    t_ok "the terminal is left clean"
else
    t_fail "the terminal is left clean" "$(screen)"
fi
screen() { tm capture-pane -p -t ui2; }
# back to the list, then a narrow terminal: low-value columns go, the rest stays
tm new-session -d -s ui2 -x 120 -y 30 \
    "env TERM=xterm-256color '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/tui2.err'; sleep 60"
t_wait 10 screen_has "DEBUGGER"
tm resize-window -t ui2 -x 80 -y 24
narrow() { screen | grep "PID" | grep -q "THREADS" && ! screen | grep -q "DEVICE" && [ "$(screen | wc -l)" -le 24 ]; }
tm resize-window -t ui2 -x 140 -y 30
wide() { screen | grep "PID" | grep -q "DEVICE"; }
tm resize-window -t ui2 -x 80 -y 24
if t_wait 5 narrow; then
    tm resize-window -t ui2 -x 140 -y 30
    if t_wait 5 wide; then t_ok "a resize redraws for the new width (80x24, then 140x30)"
    else t_fail "a resize redraws for the new width (80x24, then 140x30)" "$(screen)"; fi
else
    t_fail "a resize redraws for the new width (80x24, then 140x30)" "$(screen)"
fi

exit 0
