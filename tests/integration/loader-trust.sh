#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The plugin loader's trust rules as a user sees them through the real
# ddmon binary: a plugin directory writable by others is skipped with a
# warning naming it and the fix, and --list-plugins, --plugins and
# --check-plugin all say why; a refused file early in the path does not hide
# a good file of the same name later (a warning names both); once fixed
# (chmod go-w) the plugin loads. The unit tests (tests/unit/pluginhost/test-loader.c)
# cover every mode and owner; this checks the CLI wiring.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 13
unset DDMON_PLUGIN_PATH

good_src="$DDM_TEST_PLUGIN_DIR/good.so"
[ -f "$good_src" ] || t_skip_all "test plugin $good_src not built"

# run NAME ARGS...: ddmon ARGS with stdout, stderr and status kept under NAME.
run() {
    local name=$1; shift
    timeout 30 "$DDMON" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    echo $? >"$T_TMP/$name.rc"
}
# has NAME STREAM TEXT: the run's stdout/stderr contains TEXT (fixed string).
has() {
    if grep -qF -- "$3" "$T_TMP/$1.$2"; then return 0; fi
    echo "# '$3' not in $1.$2:"; t_diag "$T_TMP/$1.$2"; return 1
}
rc_is() { [ "$(cat "$T_TMP/$1.rc")" = "$2" ] || { echo "# $1 exited $(cat "$T_TMP/$1.rc"), expected $2"; t_diag "$T_TMP/$1.err"; return 1; }; }
rc_not() { [ "$(cat "$T_TMP/$1.rc")" != "$2" ] || { echo "# $1 exited $2"; return 1; }; }

open="$T_TMP/open"
mkdir -p "$open" && install -m 644 "$good_src" "$open/good.so" && chmod 0777 "$open"
why="plugin directory $open is writable by others (mode 0777); chmod go-w $open"

run list --plugin-dir "$open" --list-plugins
t_check "--list-plugins succeeds with an unsafe optional directory" rc_is list 0
t_check "--list-plugins shows good.so refused with the reason" \
    has list out "why: $why"
t_check "the skipped directory is a warning on stderr" has list err "$why; skipping it"
t_check "--list-plugins prints the search path (ddmon(1))" has list out "search path: $open"

run required --plugin-dir "$open" --plugins good --list-plugins
t_check "--plugins good found only in the unsafe directory fails" rc_not required 0
t_check "... saying why" has required err "required plugin good: $why"

run check --check-plugin "$open/good.so"
t_check "--check-plugin refuses a file in an unsafe directory" rc_not check 0
t_check "... with the reason in its report" has check out "result:   REFUSED: $why"

run json --json --plugin-dir "$open" --list-plugins
t_check "--json --list-plugins carries the reason" has json out "\"reason\":\"$why\""

# A refused copy first, a good one later: the good one loads.
bad="$T_TMP/bad" ok="$T_TMP/ok"
mkdir -p "$bad" "$ok"
install -m 646 "$good_src" "$bad/good.so"  # writable by others, whatever the group
install -m 644 "$good_src" "$ok/good.so"
run shadow --plugin-dir "$bad" --plugin-dir "$ok" --plugins good --list-plugins
t_check "a refused file does not hide a later good one" rc_is shadow 0
t_check "... the warning names both files" \
    has shadow err "plugin good: loaded $ok/good.so instead of $bad/good.so, which was refused"
t_check "... and the list says what loaded instead" \
    has shadow out "why: $bad/good.so is writable by group or others (mode 0646); fix with chmod go-w ($ok/good.so loaded instead)"

chmod go-w "$open"
run fixed --plugin-dir "$open" --plugins good --check-plugin "$open/good.so"
t_check "after chmod go-w the plugin loads" has fixed out "result:   OK"
exit 0
