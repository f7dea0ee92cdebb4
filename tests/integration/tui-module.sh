#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The terminal UI is a module (ddmon-tui.so, tui/module.h) that only
# `ddmon watch` on a terminal loads (cli/tui_module.c): the ddmon binary
# links neither ncursesw nor tinfo and holds none of the UI's code; a server
# maps none of them (/proc/PID/maps), nor does `ddmon watch` on a pipe or
# with --plain; `ddmon watch` on a terminal (tmux) draws the UI with the
# build tree's module mapped; a ddmon outside its build tree with no module
# installed shows the plain live view with one line saying why (under its
# headline, wrapped to the terminal's width, and on stderr), and does not
# crash. `make install-exec` installs the module (not install-data) at the
# path that line names: its rules are read with `make -n` and the module
# and binary installed by libtool under DESTDIR, so nothing is rebuilt
# under the other tests; as root with unshare, the installed binary,
# with the installed tree mounted at its configured place in a private
# mount namespace, maps the installed module and draws the UI. A build
# --without-ncurses has no module and its binary no ncurses either.
# tests/integration/tui-tmux.sh drives the UI itself.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
NM=${NM:-nm}
MODULE="$DDM_TOP_BUILDDIR/tui/.libs/ddmon-tui.so"
maps_has() { grep -q -- "$2" "/proc/$1/maps"; }
# no_curses PID: the process maps neither ncurses, tinfo nor the module.
no_curses() { ! grep -qE 'libncurses|libtinfo|ddmon-tui' "/proc/$1/maps"; }
no_needed_curses() { ! readelf -d "$1" | grep NEEDED | grep -qE 'libncurses|libtinfo'; }

if ! grep -q '^#define HAVE_NCURSES 1' "$DDM_TOP_BUILDDIR/build-config.h"; then
    t_plan 2
    no_needed_curses "$DDMON" && t_ok "a --without-ncurses ddmon links no ncurses" \
        || t_fail "a --without-ncurses ddmon links no ncurses" "$(readelf -d "$DDMON" | grep NEEDED)"
    [ ! -e "$MODULE" ] && t_ok "and has no terminal UI module" || t_fail "and has no terminal UI module" "$MODULE"
    exit 0
fi
if [ ! -f "$MODULE" ]; then
    # Building ddmon builds the module (cli/local.mk): a missing one is a bug.
    t_plan 1
    t_fail "the terminal UI module of this ncurses build exists" "no $MODULE (make tui/ddmon-tui.la)"
    exit 1
fi
command -v tmux >/dev/null || t_skip_all "no tmux"
infocmp xterm-256color >/dev/null 2>&1 || t_skip_all "no terminfo for xterm-256color"
t_plan 23
TM_SOCK="$T_TMP/tmux.sock"
tm() { tmux -S "$TM_SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; t_cleanup' EXIT
screen_of() { tm capture-pane -p -t "$1"; }
screen_has() { screen_of "$1" | grep -q -- "$2"; }
# pane_pid SESSION: the pid of the command the pane runs (exec'd by its shell)
pane_pid() { tm display-message -p -t "$1" '#{pane_pid}'; }
# ui SESSION COMMAND...: run COMMAND in a new tmux session of UI_COLS x
# UI_ROWS (100x30 unless set), execed (so the pane's pid is the command's),
# stderr to $T_TMP/SESSION.err
ui() {
    local s=$1
    shift
    local q
    q=$(printf '%q ' "$@")
    tm new-session -d -s "$s" -x "${UI_COLS:-100}" -y "${UI_ROWS:-30}" "exec $q 2>'$T_TMP/$s.err'"
}
TUI_HEAD="?:help q:quit"    # the UI's first line (tui/draw.c)
PLAIN_HEAD="Ctrl-C to quit" # the plain live view's first line on a terminal (cli/watch.c)

# 1. The binary: no ncurses, no tinfo, none of the UI's code.
no_needed_curses "$DDMON" && t_ok "the ddmon binary links neither ncursesw nor tinfo (readelf -d)" \
    || t_fail "the ddmon binary links neither ncursesw nor tinfo" "$(readelf -d "$DDMON" | grep NEEDED)"
# tui_draw is the drawing's entry (tui/draw.h): in the module, not in ddmon.
if $NM "$MODULE" | grep -q ' [Tt] tui_draw$' && ! $NM "$DDMON" | grep -qE ' [TtDdBb] (tui_|ddm_tui_)'; then
    t_ok "the UI's code (tui_draw, ddm_tui_run...) is in the module, not in ddmon"
else
    t_fail "the UI's code is in the module, not in ddmon" "$($NM "$DDMON" | grep -E ' (tui_|ddm_tui_)' | head -3)"
fi
readelf -d "$MODULE" | grep NEEDED | grep -q 'libncursesw' \
    && t_ok "the module links ncursesw" || t_fail "the module links ncursesw" "$(readelf -d "$MODULE" | grep NEEDED)"
exports=$($NM -D --defined-only "$MODULE" | awk '{print $NF}' | grep -v '^_' | paste -sd' ')
undef_ddm=$($NM -D --undefined-only "$MODULE" | awk '{print $NF}' | grep '^ddm_' | paste -sd' ')
[ "$exports" = "ddm_tui_module" ] && [ -z "$undef_ddm" ] \
    && t_ok "the module exports ddm_tui_module alone and calls nothing of the ddmon core" \
    || t_fail "the module exports ddm_tui_module alone and calls nothing of the ddmon core" \
        "exports: $exports" "undefined ddm_: $undef_ddm"

# 2. A server maps none of it.
t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/ports" --seed 7
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm" "$(cat "$T_TMP/simvm.err")"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base "$(t_free_port)" && t_ok "a server started" \
    || t_fail "a server started" "$(cat "$T_TMP/server.err")"
t_wait 10 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q ' ready '"
if no_curses "$DDMON_PID"; then
    t_ok "the server maps neither ncursesw, tinfo nor the UI module"
else
    t_fail "the server maps neither ncursesw, tinfo nor the UI module" \
        "$(grep -E 'ncurses|tinfo|ddmon-tui' "/proc/$DDMON_PID/maps" | head -3)"
fi
dd_args=(--socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-autostart)

# 3. `ddmon watch` on a pipe: the plain view, nothing of the UI.
"$DDMON" "${dd_args[@]}" watch >"$T_TMP/pipe.out" 2>"$T_TMP/pipe.err" &
pipe_pid=$!
T_PIDS+=("$pipe_pid")
if t_wait 10 grep -q ' ready ' "$T_TMP/pipe.out" && no_curses "$pipe_pid"; then
    t_ok "ddmon watch on a pipe shows the VMs and maps nothing of the UI"
else
    t_fail "ddmon watch on a pipe shows the VMs and maps nothing of the UI" "$(head -3 "$T_TMP/pipe.out")" \
        "$(grep -E 'ncurses|tinfo|ddmon-tui' "/proc/$pipe_pid/maps" | head -3)"
fi
kill -INT "$pipe_pid" 2>/dev/null

# 4. --plain on a terminal: the plain view, nothing of the UI.
ui plain env TERM=xterm-256color "$DDMON" "${dd_args[@]}" --plain watch
if t_wait 10 screen_has plain "$PLAIN_HEAD" && no_curses "$(pane_pid plain)"; then
    t_ok "ddmon --plain watch on a terminal maps nothing of the UI"
else
    t_fail "ddmon --plain watch on a terminal maps nothing of the UI" "$(screen_of plain)" "$(cat "$T_TMP/plain.err")"
fi
tm kill-session -t plain

# 5. On a terminal: the UI, with the build tree's module and ncurses mapped.
ui tui env TERM=xterm-256color "$DDMON" "${dd_args[@]}" watch
tui_pid=$(pane_pid tui)
if t_wait 15 screen_has tui "$TUI_HEAD" && t_wait 10 screen_has tui "1 VM"; then
    t_ok "ddmon watch on a terminal draws the UI"
else
    t_fail "ddmon watch on a terminal draws the UI" "$(screen_of tui)" "$(cat "$T_TMP/tui.err")"
fi
want_mod=$(realpath "$MODULE")
maps_has "$tui_pid" "$want_mod" && maps_has "$tui_pid" libncursesw \
    && t_ok "it maps the build tree's module ($want_mod) and ncursesw" \
    || t_fail "it maps the build tree's module and ncursesw" "$(grep -E 'ncurses|ddmon-tui' "/proc/$tui_pid/maps" | head -3)"
[ ! -s "$T_TMP/tui.err" ] && t_ok "and says nothing on stderr" || t_fail "and says nothing on stderr" "$(cat "$T_TMP/tui.err")"
tm send-keys -t tui q
t_wait 10 t_dead "$tui_pid" && t_ok "q quits it" || t_fail "q quits it" "$(screen_of tui)"

# 6. Outside its build tree with no module installed: one line, then the
# plain view with that line under its headline, whole (wrapped) in an
# 80x12 terminal: stderr is hidden behind the alternate screen until the
# end, so the reason must be on the screen.
mkdir -p "$T_TMP/elsewhere"
cp "$DDMON" "$T_TMP/elsewhere/ddmon"
UI_COLS=80 UI_ROWS=12 ui nomod env TERM=xterm-256color "$T_TMP/elsewhere/ddmon" "${dd_args[@]}" watch
nomod_pid=$(pane_pid nomod)
t_wait 15 screen_has nomod " ready "
said=$(sed -n '1s/^ddmon: //p' "$T_TMP/nomod.err")
looked=$(sed -n '1s/^ddmon: .*cannot load \(\/[^:]*ddmon-tui\.so\): .*/\1/p' "$T_TMP/nomod.err")
reason=${said##*ddmon-tui.so: } # what went wrong, after the path
# lines 2-4 of the screen as one line (the note breaks at spaces)
under_head=$(screen_of nomod | sed -n 2,4p | sed 's/ *$//' | paste -sd' ')
if [ -e "$looked" ]; then
    t_ok "a copy outside the build tree without the module: the plain view # SKIP $looked is installed on this machine"
    t_ok "after one line naming the module # SKIP as above"
    t_ok "and maps no ncurses # SKIP as above"
else
    screen_has nomod "$PLAIN_HEAD" && screen_has nomod " ready " && ! screen_has nomod "$TUI_HEAD" \
        && [ -n "$said" ] && [ -n "$reason" ] && [ "$reason" != "$said" ] \
        && [[ "$under_head" == *"$said"* ]] && screen_of nomod | awk 'length > 80 {exit 1}' \
        && t_ok "a copy outside the build tree without the module: the plain view, saying why ($reason) under its headline in 80 columns" \
        || t_fail "a copy outside the build tree without the module: the plain view, saying why under its headline in 80 columns" \
            "$(screen_of nomod)" "$(cat "$T_TMP/nomod.err")"
    [ -n "$looked" ] && [ "$(wc -l <"$T_TMP/nomod.err")" -eq 1 ] \
        && t_ok "after one line naming the module it looked for ($looked)" \
        || t_fail "after one line naming the module it looked for" "$(cat "$T_TMP/nomod.err")"
    no_curses "$nomod_pid" && t_ok "and maps no ncurses" \
        || t_fail "and maps no ncurses" "$(grep -E 'ncurses|tinfo|ddmon-tui' "/proc/$nomod_pid/maps" | head -3)"
fi
tm send-keys -t nomod C-c
t_wait 10 t_dead "$nomod_pid" && t_ok "Ctrl-C ends it" || t_fail "Ctrl-C ends it" "$(screen_of nomod)"

# 7. make install-exec puts the module where the installed binary looks for
# it (with the binary: a packager splitting install-exec from install-data
# gets both).
dest=$T_TMP/dest
t_install_module "$dest" tui/ddmon-tui.la "$looked"
inst_ddmon=$T_INST_DDMON
# The plugins too: architecture-dependent like the binary, so install-exec
# (not install-data) puts them in the directory ddmon loads them from.
plug_la=$(cd "$DDM_TOP_BUILDDIR" && ls plugins/*/*.la 2>/dev/null | head -1) # any configured in
plug_dir=$([ -n "$plug_la" ] && t_install_dir "$plug_la")
case $plug_dir in */ddmon/plugins-[0-9]*) plug_ok=1 ;; *) plug_ok=0 ;; esac
[ "$plug_ok" = 1 ] && ! grep -qF "$plug_la" "$T_TMP/install-data.n" \
    && t_ok "make install-exec installs the plugins (into $plug_dir), install-data not" \
    || t_fail "make install-exec installs the plugins, install-data not" \
        "plugins ($plug_la): '$plug_dir'" "$(grep -cF "$plug_la" "$T_TMP/install-data.n") install-data lines"

# 8. The installed binary loads the installed module (root: a private mount
# namespace shows DESTDIR's lib dir at its configured place).
libdir=$(dirname "$(dirname "$looked")")
if ! t_installed_runnable "$libdir"; then
    t_ok "the installed binary draws the UI # SKIP needs root, unshare -m and $libdir"
    t_ok "with the installed module # SKIP as above"
else
    # unshare execs bash, which execs ddmon: the pane's pid is ddmon's
    ui inst unshare -m bash -c 'mount --bind "$1" "$2" && shift 2 && exec env TERM=xterm-256color "$@"' _ \
        "$dest$libdir" "$libdir" "$dest$inst_ddmon" "${dd_args[@]}" watch
    inst_pid=$(pane_pid inst)
    t_wait 15 screen_has inst "$TUI_HEAD" && t_wait 10 screen_has inst "1 VM" \
        && t_ok "the installed binary draws the UI" \
        || t_fail "the installed binary draws the UI" "$(screen_of inst)" "$(cat "$T_TMP/inst.err")"
    grep -q " $looked\$" "/proc/$inst_pid/maps" \
        && t_ok "with the installed module ($looked)" \
        || t_fail "with the installed module" "$(grep -E 'ddmon-tui' "/proc/$inst_pid/maps" | head -3)"
    tm send-keys -t inst q
    t_wait 10 t_dead "$inst_pid"
fi
# The server again, after all the watching: still nothing of the UI.
no_curses "$DDMON_PID" && t_ok "the server still maps nothing of the UI" \
    || t_fail "the server still maps nothing of the UI" "$(grep -E 'ncurses|tinfo|ddmon-tui' "/proc/$DDMON_PID/maps" | head -3)"
exit 0
