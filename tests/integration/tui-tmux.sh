#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The terminal UI of `ddmon` driven as a person would, in tmux: keys with
# send-keys, the screen read with capture-pane (-e for colours). Against
# ddmon-simvm: a VM appears in the list; Enter opens it on its threads tab
# with the simulator's thread names; s shows the server's selected-VM port;
# a row whose state column changed is highlighted; Right opens another
# tab; the heap summary, the heap map (colour blocks, legend names,
# an address scale), the native heap and vminfo tabs; ? shows the help in
# a plain-ASCII box; a debugger on the VM's relay port marks the list (and
# `ddmon vms`); the native column fills; q quits and leaves the terminal as
# it was; after each resize keys still work (and q quits with 0), a resize
# redraws for the new width, DEBUGGER stays at 80x24 where the sort keys
# number the columns shown; the server restarting
# underneath is said and recovered from; VMs coming and going (--churn);
# a missing or unknown TERM gives the plain view; h dumps the open VM's heap
# into the UI's directory (the simulator's sha256), t traces it into
# APP-PID.trace; Enter on a thread leaves no "running..." under its stack;
# End in another spelling and Alt+x do not quit the list. Screens are written to
# $DDM_TUI_CAPTURE_DIR when set (at 100x30). Skipped without tmux or a
# build without ncurses.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v tmux >/dev/null || t_skip_all "no tmux"
grep -q "define HAVE_NCURSES 1" "$DDM_TOP_BUILDDIR/build-config.h" || t_skip_all "built without ncurses"
infocmp xterm-256color >/dev/null 2>&1 || t_skip_all "no terminfo for xterm-256color"
t_plan 29
sock="$T_TMP/ddmon.sock"
TM_SOCK="$T_TMP/tmux.sock"
tm() { tmux -S "$TM_SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; t_cleanup' EXIT
screen() { tm capture-pane -p -t ui; }
screen_has() { screen | grep -q -- "$1"; }
# cap NAME [NOTE]: keep the screen as $DDM_TUI_CAPTURE_DIR/NAME.txt
cap() {
    [ -n "${DDM_TUI_CAPTURE_DIR:-}" ] || return 0
    mkdir -p "$DDM_TUI_CAPTURE_DIR"
    { screen; [ -z "${2:-}" ] || printf '[note] %s\n' "$2"; } >"$DDM_TUI_CAPTURE_DIR/$1.txt"
}
# The open tab's title (line 4: "Heap map  (v3, live, updated now)").
tab_title() { screen | sed -n 4p | sed 's/  (.*//'; }
# goto_tab TITLE: Right until the tab titled TITLE is open (tabs wrap).
goto_tab() {
    local i prev
    for i in $(seq 1 40); do
        [ "$(tab_title)" = "$1" ] && return 0
        prev=$(tab_title)
        tm send-keys -t ui Right
        # the next tab's title, once its view came (an empty line 4 meanwhile:
        # "waiting for the view...")
        t_wait 10 sh -c "t=\$(tmux -S '$TM_SOCK' capture-pane -p -t ui | sed -n 4p | sed 's/  (.*//');
            [ -n \"\$t\" ] && [ \"\$t\" != '$prev' ]"
    done
    [ "$(tab_title)" = "$1" ]
}
# The first field (a pid) of the row under the cursor (reverse video) of
# session $1.
cursor_row() { tm capture-pane -p -e -t "$1" | grep -E $'\e\\[(0;)?7m' | head -1 | sed 's/\x1b\[[0-9;]*m//g' | awk '{print $1}'; }
# keys_work SESSION: after a resize, Down (or Up on the last row) moves the
# cursor of the VM list: the UI still takes keys. (A KEY_RESIZE that
# getch() returned for ever once ate every key after a resize.)
keys_work() {
    local before key
    before=$(cursor_row "$1")
    [ -n "$before" ] || return 1
    key=Down
    [ "$before" = "$(tm capture-pane -p -t "$1" | awk 'NR > 2 && $1 ~ /^[0-9]+$/ {p = $1} END {print p}')" ] && key=Up
    tm send-keys -t "$1" "$key"
    t_wait 5 cursor_moved "$1" "$before"
}
cursor_moved() { local r; r=$(cursor_row "$1"); [ -n "$r" ] && [ "$r" != "$2" ]; }

t_start_simvm --vms 2 --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/state.json" \
    --thread-activity 500 --gc-every 1000 --seed 5 # pids no other test's simvm (seed 1) has
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm" "$(cat "$T_TMP/simvm.err")"
ports=$(t_simvm_ports "$T_TMP/ports")
cbase=$(t_free_ports 40) || t_fail "40 free ports for the churning VMs"
# the churning VMs (started last) come and go on ports the server scans from the start
selport=$(t_free_port) # the selected-VM port: not 8700, which the UI once wrote whatever the server's
server_args=(--scan=local --scan-ports "$ports,$cbase-$((cbase + 39))" --selected-port "$selport"
    --debug-port-base "$(t_free_port)")
t_start_server "${server_args[@]}" || t_fail "server" "$(cat "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" = 2 ]; }
t_wait 15 ready || t_fail "two VMs ready" "$(cat "$T_TMP/vms.txt")"

mkdir -p "$T_TMP/tuicwd"
tm new-session -d -s ui -x 100 -y 30 -c "$T_TMP/tuicwd" \
    "env TERM=xterm-256color '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/tui.err'; echo EXITED:\$?; sleep 60"
first_app=$(sort -n "$T_TMP/ports" | head -1 | awk '{print $3}') # the list is sorted by pid
first_pid=$(sort -n "$T_TMP/ports" | head -1 | awk '{print $1}')
if t_wait 15 screen_has "$first_app" && screen_has "2 VMs" && screen_has "THREADS"; then
    t_ok "the VM list shows the simulated VMs"
    cap 1-vm-list
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
# s: the open VM becomes the debugger target; the header gives the server's
# selected-VM port (its `select` answer)
tm send-keys -t ui s
selected_shown() { screen | sed -n 2p | grep -qF "(selected: port $selport)"; }
if t_wait 10 selected_shown && screen_has "debugger port $selport reaches it now" && ! screen_has "8700"; then
    t_ok "s selects the VM: the header shows the server's selected-VM port ($selport)"
else
    t_fail "s selects the VM: the header shows the server's selected-VM port ($selport)" "$(screen)"
fi
# Enter on a thread: its stack in a popup, and the status line no longer
# says "stack of thread N: running..." (it once did for 10 s): the popup
# and the status are drawn in one pass, so the screen that shows the one
# shows the other
tm send-keys -t ui Enter
if t_wait 15 screen_has "(q closes)" && ! screen | tail -1 | grep -q "running\.\.\."; then
    t_ok "Enter on a thread shows its stack, and the status no longer says running"
else
    t_fail "Enter on a thread shows its stack, and the status no longer says running" "$(screen)"
fi
tm send-keys -t ui q
t_wait 5 sh -c "! tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -qF '(q closes)'"
# A row highlighted because its state changed: the screen read every 0.1 s;
# a row with the highlight colour (black on yellow) whose state column
# differs from what the same thread (by id) showed on a screen read less
# than 3 s before (one state to another: not a new thread, not "-"). (Any highlighted thread name passed before, however it
# came to be highlighted.)
state_change_hot() {
    python3 - "$TM_SOCK" <<'PY'
import re, subprocess, sys, time
esc = re.compile(r"\x1b\[[0-9;]*m")
history = []  # (time, {id: state})
deadline = time.time() + 20
while time.time() < deadline:
    raw = subprocess.run(["tmux", "-S", sys.argv[1], "capture-pane", "-p", "-e", "-t", "ui"],
                         capture_output=True, text=True).stdout.splitlines()
    now = time.time()
    lines = [esc.sub("", l) for l in raw]
    head = next((i for i, l in enumerate(lines) if re.match(r"id +tid +name +state ", l)), None)
    if head is not None:
        a, b = lines[head].index("state"), lines[head].index("daemon")
        states, hot = {}, {}
        for raw_l, l in zip(raw[head + 1:], lines[head + 1:]):
            f = l.split()
            if not f or not f[0].isdigit():
                break
            states[f[0]] = l[a:b].strip()
            if "\x1b[43m" in raw_l:
                hot[f[0]] = l.strip()
        for tid, row in hot.items():
            for t, old in history:
                if now - t < 3 and old.get(tid, "-") not in ("-", states[tid]) and states[tid] != "-":
                    print("thread %s: %s -> %s: %s" % (tid, old[tid], states[tid], row))
                    sys.exit(0)
        history = [(t, s) for t, s in history if now - t < 3] + [(now, states)]
    time.sleep(0.1)
sys.exit(1)
PY
}
if hot=$(state_change_hot); then
    t_ok "a thread whose state changed on screen is highlighted"
    cap 2-threads "highlighted (black on yellow), $hot"
else
    t_fail "a thread whose state changed on screen is highlighted" "$(tm capture-pane -p -e -t ui | cat -v | head -30)"
fi

# another tab's title, and the UI still runs
tm send-keys -t ui Right
other_tab() { local t; t=$(tab_title); [ -n "$t" ] && [ "$t" != "Threads" ] && ! screen_has "EXITED" && screen_has "Left/Right:tabs"; }
if t_wait 10 other_tab; then
    t_ok "Right moves to another tab ($(tab_title))"
else
    t_fail "Right moves to another tab" "$(screen)"
fi

if goto_tab "Heap summary" && t_wait 15 sh -c "tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -qE '^ +1 .*MiB'"; then
    t_ok "the heap summary tab shows heap 1"
    cap 3-heap-summary
else
    t_fail "the heap summary tab shows heap 1" "$(screen)"
fi
# heap.map (the heap plugin, drawn as blocks): legend names as the PNG's,
# an address scale, cells in the kinds' colours (256-colour: 48;5;N)
map_drawn() {
    screen | grep -q "^legend: " && screen | grep -q "free" && screen | grep -q "data object\|class object\|byte array" &&
        screen | grep -qE "^0x[0-9a-f]{8,} \|" && tm capture-pane -p -e -t ui | grep -q $'\e\\[[0-9;]*48;5;'
}
if goto_tab "Heap map" && t_wait 20 map_drawn; then
    t_ok "the heap map tab draws colour blocks with a legend and addresses"
    cap 4-heap-map
else
    t_fail "the heap map tab draws colour blocks with a legend and addresses" "$(screen)"
fi
if goto_tab "Native heap summary" && t_wait 15 screen_has "total_memory\|allocated"; then
    t_ok "the native heap tab shows NHGT's figures"
    cap 5-native-heap
else
    t_fail "the native heap tab shows NHGT's figures" "$(screen)"
fi
goto_tab "VM information" && t_wait 10 screen_has "$first_pid" && cap 6-vminfo

tm send-keys -t ui '?'
if t_wait 5 screen_has "ddmon: keys" && screen_has "heap dump"; then
    t_ok "? shows the help"
    cap 7-help
else
    t_fail "? shows the help" "$(screen)"
fi
# the box is plain ASCII: no line-drawing letters ("lqqk") where a
# terminal does not map them
if screen | grep -q -- "+---" && ! screen | grep -qE "lqq|qqk|mqq|qqj"; then
    t_ok "the help box border is plain ASCII"
else
    t_fail "the help box border is plain ASCII" "$(screen)"
fi
tm send-keys -t ui x
t_wait 5 sh -c "! tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -q 'ddmon: keys'" \
    && t_ok "any key closes the help" || t_fail "any key closes the help" "$(screen)"

# h: a heap dump of the open VM into the UI's directory, said in the status line
tm send-keys -t ui h
dump="$T_TMP/tuicwd/$first_app-$first_pid.hprof"
truth_sha() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["pid"]==int(sys.argv[2])][0]; print((v["hprof"]["last"] or {}).get("sha256"))' "$T_TMP/state.json" "$first_pid"; }
if t_wait 20 screen_has "$first_app-$first_pid.hprof" && ! screen_has "wrote heap dump" && [ -f "$dump" ] && t_wait 5 t_is "$(sha256sum "$dump" | awk '{print $1}')" truth_sha; then
    t_ok "h dumps the VM's heap into the current directory (the simulator's sha256)"
    cap 8-hprof
else
    t_fail "h dumps the VM's heap into the current directory (the simulator's sha256)" "$(screen)" "$(ls -la "$T_TMP/tuicwd")"
fi
# t: a sampling trace of the open VM into APP-PID.trace in the UI's
# directory (it once always failed: "say --tracing or --sampling"), said
# while it runs and named when done
tm send-keys -t ui t
trace="$T_TMP/tuicwd/$first_app-$first_pid.trace"
if t_wait 10 screen_has "sampling into $first_app-$first_pid.trace" &&
    t_wait 60 screen_has "written to .*$first_app-$first_pid.trace" && [ -s "$trace" ] &&
    head -1 "$trace" | grep -q '^\*version'; then
    t_ok "t traces the VM (sampling) into APP-PID.trace in the current directory"
    cap 8-trace
else
    t_fail "t traces the VM (sampling) into APP-PID.trace in the current directory" "$(screen)" \
        "$(ls -la "$T_TMP/tuicwd")"
fi

tm send-keys -t ui q
t_wait 5 screen_has "DEBUGGER"
# keys as escape sequences: End as ESC [ 4 ~ (tmux's own spelling, not the
# xterm-256color the UI reads) moves to the last row, Alt+x is ignored;
# both once quit as a lone ESC. Home after them: the UI still runs.
last_pid=$(sort -n "$T_TMP/ports" | tail -1 | awk '{print $1}')
tm send-keys -t ui End
at_row() { [ "$(cursor_row ui)" = "$1" ]; }
if t_wait 5 at_row "$last_pid" && tm send-keys -t ui M-x && tm send-keys -t ui Home &&
    t_wait 5 at_row "$first_pid" && ! screen_has "EXITED"; then
    t_ok "End (ESC [ 4 ~) moves to the last VM, Alt+x is ignored: neither quits"
else
    t_fail "End (ESC [ 4 ~) moves to the last VM, Alt+x is ignored: neither quits" "$(screen)"
fi
# the native column: the nativeheap plugin's headline, once it had figures
native_filled() { screen | grep "^$first_pid " | grep -qE " [0-9.]+ (B|KiB|MiB|GiB)\$"; }
if t_wait 15 native_filled; then
    t_ok "the native column fills"
    cap 8-vm-list-native
else
    t_fail "the native column fills" "$(screen)"
fi
# a debugger on the VM's relay port: "PORT*" in the list, debugger in `ddmon vms`
first_port=$(sort -n "$T_TMP/ports" | head -1 | awk '{print $2}')
key="127.0.0.1:$first_port"
rport=$(t_vm_field "$key" debug_port)
# (it stays until the check below is done, not for a fixed time a loaded
# machine's UI refresh could outlast)
timeout 60 "$JDWPC" "127.0.0.1:$rport" version waitfile "$T_TMP/jdwpc.leave" >"$T_TMP/jdwpc.out" 2>&1 &
jpid=$!
T_PIDS+=("$jpid")
# by the relay port, which only this test's server gives out
starred() { screen | grep -q " $rport\* "; }
if [ -n "$rport" ] && t_wait 10 starred && [ "$(t_vm_field "$key" debugger)" = True ] &&
    t_ddmon --no-autostart vms | grep -q "DEBUGGER"; then
    t_ok "a debugger on the relay port shows in the list (${rport}*) and in ddmon vms"
    cap 9-vm-list-debugger "jdwpc attached to 127.0.0.1:$rport"
else
    t_fail "a debugger on the relay port shows in the list and in ddmon vms" "$(screen)" "$(cat "$T_TMP/dp.json")" \
        "$(cat "$T_TMP/jdwpc.out")"
fi
touch "$T_TMP/jdwpc.leave"
wait "$jpid" 2>/dev/null
if t_wait 10 sh -c "! tmux -S '$TM_SOCK' capture-pane -p -t ui | grep -q ' $rport\* '" &&
    [ "$(t_vm_field "$key" debugger)" = False ]; then
    t_ok "the mark goes when the debugger leaves"
else
    t_fail "the mark goes when the debugger leaves" "$(screen)" "$(cat "$T_TMP/dp.json")"
fi
# one line taller (the size the freeze was first seen at), then keys
tm resize-window -t ui -y 31
sleep 1 # the UI has taken the new size (SIGWINCH) before the key comes
if t_wait 5 sh -c "[ \$(tmux -S '$TM_SOCK' capture-pane -p -t ui | wc -l) = 31 ]" && t_wait 5 screen_has "DEBUGGER" &&
    keys_work ui; then
    t_ok "after a resize (100x31) the UI still takes keys"
else
    t_fail "after a resize (100x31) the UI still takes keys" "$(screen)"
fi
tm send-keys -t ui q
if t_wait 10 screen_has "EXITED:0"; then t_ok "q quits with status 0"; else t_fail "q quits with status 0" "$(screen)" "$(cat "$T_TMP/tui.err")"; fi
# The alternate screen is gone: only the shell's line is left.
if ! screen | grep -qE "THREADS|ddmon 0|DEBUGGER" && tm capture-pane -p -e -t ui | grep -q "EXITED:0"; then
    t_ok "the terminal is left clean"
else
    t_fail "the terminal is left clean" "$(screen)"
fi
screen() { tm capture-pane -p -t ui2; }
# back to the list, then a narrow terminal: low-value columns go, the rest
# stays; after each resize the keys still work
tm new-session -d -s ui2 -x 120 -y 30 \
    "env TERM=xterm-256color '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/tui2.err'; echo EXITED:\$?; sleep 60"
t_wait 10 screen_has "DEBUGGER"
# two resizes at once, no key between
tm resize-window -t ui2 -x 80 -y 24
tm resize-window -t ui2 -x 140 -y 30
# at 80 columns the debugger column stays (APP and HEAP shrink instead)
# (the VM column is the first to go: the redraw for 80 columns has none)
vm_column() { screen | grep "^PID" | grep -qE " VM[v^]? "; }
narrow() { screen | grep "PID" | grep "THREADS" | grep -q "DEBUGGER" && ! vm_column &&
    [ "$(screen | wc -l)" -le 24 ]; }
wide() { screen | grep "PID" | grep -q "NATIVE" && vm_column; }
resized=""
tm resize-window -t ui2 -x 80 -y 24
if t_wait 5 narrow && keys_work ui2; then
    tm resize-window -t ui2 -x 140 -y 30
    if t_wait 5 wide && keys_work ui2; then resized=ok; fi
fi
if [ -n "$resized" ]; then t_ok "a resize redraws for the new width (80x24, then 140x30) and keys still work"
else t_fail "a resize redraws for the new width (80x24, then 140x30) and keys still work" "$(screen)"; fi
# the sort keys number the columns shown: at 80 columns DEBUGGER's key is
# its place on screen (not the 6th of all), and the header marks it
tm resize-window -t ui2 -x 80 -y 24
sorted_by() { screen | grep "^PID" | grep -q " $1^"; }
dkey() { screen | grep "^PID" | head -1 | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^DEBUGGER/) print i}'; }
if t_wait 5 narrow && k=$(dkey) && [ -n "$k" ] && [ "$k" -lt 6 ] && tm send-keys -t ui2 "$k" &&
    t_wait 5 sorted_by DEBUGGER && tm send-keys -t ui2 1 &&
    t_wait 5 sh -c "tmux -S '$TM_SOCK' capture-pane -p -t ui2 | grep -q '^PID^'"; then
    t_ok "at 80x24 the sort keys number the columns shown ($k: DEBUGGER)"
else
    t_fail "at 80x24 the sort keys number the columns shown (DEBUGGER)" "$(screen)"
fi
tm resize-window -t ui2 -x 140 -y 30
t_wait 5 wide

# The server restarting underneath: the UI says so, and when one listens
# on the socket again it watches again (no blocking connect, no lost watch).
# The old server must be gone first: a new one refuses to start while the
# old one still holds the lock, and the old socket would fool t_start_server.
kill "$DDMON_PID"
t_wait 30 t_dead "$DDMON_PID"
wait "$DDMON_PID" 2>/dev/null
if t_wait 10 screen_has "server not reachable" && screen_has "reconnecting\|retrying"; then
    t_ok "the server going away is said"
else
    t_fail "the server going away is said" "$(screen)"
fi
t_start_server "${server_args[@]}" || t_fail "server restarts" "$(cat "$T_TMP/server.err")"
has_first() { screen | grep -q "^$first_pid "; }
if t_wait 30 screen_has "reconnected" && t_wait 30 has_first && ! screen_has "not reachable" &&
    t_wait 10 screen_has "2 VMs"; then
    t_ok "a new server on the socket: the UI reconnects and lists the VMs again"
else
    t_fail "a new server on the socket: the UI reconnects and lists the VMs again" "$(screen)" "$(cat "$T_TMP/tui2.err")"
fi

# VMs coming and going: two more that churn on the scanned ports
"$SIMVM" --vms 2 --seed 7 --base-port "$cbase" --port-file "$T_TMP/churn.ports" --churn 1500 --thread-activity 0 \
    >"$T_TMP/churn.out" 2>&1 &
T_PIDS+=("$!")
pids_shown() { screen | awk 'NR > 2 && $1 ~ /^[0-9]+$/ {print $1}' | sort | paste -sd,; }
more_vms() { [ "$(pids_shown | tr ',' '\n' | grep -c .)" -ge 3 ]; }
t_wait 30 more_vms
before=$(pids_shown)
changed() { local now; now=$(pids_shown); [ -n "$now" ] && [ "$now" != "$before" ] && has_first; }
if [ -n "$before" ] && t_wait 30 changed && t_wait 10 screen_has "DEBUGGER"; then
    t_ok "VMs coming and going (--churn): the list follows ($before -> $(pids_shown))"
else
    t_fail "VMs coming and going (--churn): the list follows" "before: $before" "$(screen)" "$(cat "$T_TMP/churn.ports")"
fi

# after all the resizes, the server's restart and the churn: q still quits cleanly
tm send-keys -t ui2 q
if t_wait 10 screen_has "EXITED:0"; then t_ok "q quits the resized UI with status 0"
else t_fail "q quits the resized UI with status 0" "$(screen)" "$(cat "$T_TMP/tui2.err")"; fi

# No terminal description: the plain view, no escape garbage, no TUI
plain_ok() { # plain_ok SESSION
    local s; s=$(tm capture-pane -p -t "$1")
    grep -q "Ctrl-C to quit" <<<"$s" && grep -qE "^ *$first_pid " <<<"$s" && ! grep -q "?:help" <<<"$s" &&
        ! grep -qE $'\e|\\[[0-9;?]+[A-Za-z]|\\[[HJK]|lqqk' <<<"$s"
}
for t in "missing:a missing TERM:env -u TERM" "unknown:an unknown TERM:env TERM=ddmon-no-such-terminal"; do
    name=${t%%:*} what=${t#*:} what=${what%%:*}
    tm new-session -d -s "t$name" -x 100 -y 30 \
        "${t##*:} '$DDMON' --socket '$sock' --plugin-dir '$PLUGINDIR' --no-autostart 2>'$T_TMP/t$name.err'; echo EXITED:\$?; sleep 60"
    if t_wait 10 plain_ok "t$name"; then
        t_ok "$what falls back to the plain view"
    else
        t_fail "$what falls back to the plain view" "$(tm capture-pane -p -t "t$name")" "$(cat "$T_TMP/t$name.err")"
    fi
    tm send-keys -t "t$name" C-c
done

exit 0
