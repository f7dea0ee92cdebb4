#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon --check-plugin` runs none of the plugin's code (ddmon(1)): the
# test plugin ctor-marker creates a file from its ELF constructor and
# another from its init, and neither may appear, whether the file passes
# or is refused (a copy under another name: the descriptor's name does not
# match), while the report still gives name, version and ABI read from the
# file. --list-plugins loads plugins, and says so by running both.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 15
unset DDMON_PLUGIN_PATH

src="$DDM_TEST_PLUGIN_DIR/ctor-marker.so"
[ -f "$src" ] || t_skip_all "test plugin $src not built"

export DDM_TEST_CTOR_MARKER="$T_TMP/ctor-ran" DDM_TEST_INIT_MARKER="$T_TMP/init-ran"
dir="$T_TMP/p"
mkdir -p "$dir" && install -m 644 "$src" "$dir/ctor-marker.so" && install -m 644 "$src" "$dir/renamed.so"
chmod 0755 "$dir"

run() {
    local name=$1; shift
    rm -f "$DDM_TEST_CTOR_MARKER" "$DDM_TEST_INIT_MARKER"
    timeout 30 "$DDMON" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    echo $? >"$T_TMP/$name.rc"
}
has() {
    if grep -qF -- "$3" "$T_TMP/$1.$2"; then return 0; fi
    echo "# '$3' not in $1.$2:"; t_diag "$T_TMP/$1.$2"; return 1
}
rc_is() { [ "$(cat "$T_TMP/$1.rc")" = "$2" ] || { echo "# $1 exited $(cat "$T_TMP/$1.rc"), expected $2"; t_diag "$T_TMP/$1.err"; return 1; }; }
no_marker() { [ ! -e "$1" ] || { echo "# $1 exists: plugin code ran"; return 1; }; }

run good --check-plugin "$dir/ctor-marker.so"
t_check "--check-plugin accepts ctor-marker.so" rc_is good 0
t_check "... reports its name, version and ABI from the file" \
    eval 'has good out "name:     ctor-marker" && has good out "version:  2.5" && has good out "ABI:      1."'
t_check "... and says it is OK" has good out "result:   OK"
t_check "... without running its constructor" no_marker "$DDM_TEST_CTOR_MARKER"
t_check "... or its init" no_marker "$DDM_TEST_INIT_MARKER"

run goodjson --json --check-plugin "$dir/ctor-marker.so"
t_check "--json gives name, version and ABI as members, not only in the report" \
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("name") == "ctor-marker" and d.get("version") == "2.5" and str(d.get("abi", "")).startswith("1.") and d.get("ok") is True
sys.exit(0 if ok else "# got: %r" % d)' "$T_TMP/goodjson.out"

run refused --check-plugin "$dir/renamed.so"
t_check "--check-plugin refuses it under another name" rc_is refused 1
t_check "... saying why" has refused out "result:   REFUSED: descriptor name 'ctor-marker' does not match the file name renamed.so"
t_check "... without running its constructor" no_marker "$DDM_TEST_CTOR_MARKER"

# --list-plugins loads what it lists (ddmon(1)): both run there.
rm -f "$dir/renamed.so"
run list --plugin-dir "$dir" --list-plugins
t_check "--list-plugins loads it: its constructor ran" test -e "$DDM_TEST_CTOR_MARKER"
t_check "... and its init" test -e "$DDM_TEST_INIT_MARKER"

# A plugin directory whose name is not ASCII, in the C locale (no LANG: a
# service, cron, a container): a path is bytes, not text in the locale's
# charset (GLib once refused it: "Invalid byte sequence in conversion input").
udir="$T_TMP/$(printf 'pl\303\266')"
mkdir -p "$udir" && install -m 644 "$src" "$udir/ctor-marker.so" && chmod 0755 "$udir"
rm -f "$DDM_TEST_CTOR_MARKER" "$DDM_TEST_INIT_MARKER"
env -i PATH="$PATH" DDM_TEST_CTOR_MARKER="$DDM_TEST_CTOR_MARKER" DDM_TEST_INIT_MARKER="$DDM_TEST_INIT_MARKER" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}" timeout 30 "$DDMON" --plugin-dir "$udir" --list-plugins \
    >"$T_TMP/clocale.out" 2>"$T_TMP/clocale.err"
echo $? >"$T_TMP/clocale.rc"
t_check "C locale: --plugin-dir with a non-ASCII name is taken" rc_is clocale 0
t_check "... and its plugin loaded from there" test -e "$DDM_TEST_INIT_MARKER"
# the same for a program (--adb, never made absolute) and a name (--select,
# --vm: UTF-8 checked, bytes that are not refused as such)
env -i PATH="$PATH" ASAN_OPTIONS="${ASAN_OPTIONS:-}" timeout 30 "$DDMON" --plugin-dir "$udir" \
    --adb "$udir/adb" --select "$(printf 'com.ex\303\244mple')" --list-plugins \
    >"$T_TMP/cnames.out" 2>"$T_TMP/cnames.err"
echo $? >"$T_TMP/cnames.rc"
env -i PATH="$PATH" ASAN_OPTIONS="${ASAN_OPTIONS:-}" timeout 30 "$DDMON" --socket "$T_TMP/none.sock" \
    --no-autostart view threads --vm "$(printf 'a\377')" >"$T_TMP/cbad.out" 2>"$T_TMP/cbad.err"
echo $? >"$T_TMP/cbad.rc"
t_check "C locale: --adb and --select with non-ASCII values are taken" rc_is cnames 0
t_check "... and a --vm that is not UTF-8 is refused as such" has cbad err "--vm: not UTF-8"
exit 0
