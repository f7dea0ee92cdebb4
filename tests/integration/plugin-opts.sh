#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --plugin-opt through the real ddmon binary and the build tree's standard
# plugins: a misspelled key or plugin name gets a warning naming what is
# loaded or read, a real key does not, --list-plugins shows the keys each
# plugin reads; and ddmon(1) documents every option key the plugins read
# (PLUGIN OPTIONS) and every command they register (PLUGIN COMMANDS), so
# the man page cannot fall behind the plugins. The unit tests
# (tests/unit/pluginhost/test-registry.c) cover the rules; this checks the wiring.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 12
unset DDMON_PLUGIN_PATH
MAN="$DDM_TOP_SRCDIR/doc/ddmon.1"

[ -f "$PLUGINDIR/threads.so" ] || t_skip_all "the threads plugin is not built"
command -v python3 >/dev/null || t_skip_all "python3 not found"

# run NAME ARGS...: ddmon ARGS (build-tree plugins only) with stdout, stderr
# and status kept under NAME.
run() {
    local name=$1; shift
    timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-autostart \
        "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    echo $? >"$T_TMP/$name.rc"
}
has() {
    if grep -qF -- "$3" "$T_TMP/$1.$2"; then return 0; fi
    echo "# '$3' not in $1.$2:"; t_diag "$T_TMP/$1.$2"; return 1
}
lacks() {
    if ! grep -qF -- "$3" "$T_TMP/$1.$2"; then return 0; fi
    echo "# '$3' unexpectedly in $1.$2:"; t_diag "$T_TMP/$1.$2"; return 1
}

run typo --plugin-opt threads.intervall=5 --plugin-opt thread.interval=5 \
    --plugin-opt threads.interval=500 --list-plugins
t_check "a misspelled key is a warning listing the keys the plugin reads" \
    has typo err "--plugin-opt threads.intervall: plugin threads has no option 'intervall' (it reads: hz, interval, linger)"
t_check "an unknown plugin name is a warning listing the loaded plugins" \
    has typo err "--plugin-opt: no plugin named 'thread' is loaded (loaded: "
t_check "a key the plugin reads is no warning" lacks typo err "threads.interval:"
t_check "--list-plugins shows the keys a plugin reads" has typo out "options: hz, interval"

# --disable-plugin and --plugin-dir naming nothing: warned the same way.
run typo2 --plugin-dir "$T_TMP/nonexistent" --disable-plugin nosuch --disable-plugin threads --list-plugins
t_check "--disable-plugin of no plugin's name is a warning" \
    has typo2 err "--disable-plugin nosuch: no plugin of that name on the search path ("
t_check "... a real one is not" lacks typo2 err "--disable-plugin threads:"
t_check "a --plugin-dir that does not exist is a warning" \
    has typo2 err "--plugin-dir $T_TMP/nonexistent skipped: "

# A client that starts the server in the background shows its startup
# warnings (they would otherwise reach only the server's log).
timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --scan=none --selected-port=0 --plugin-opt threads.intervall=5 vms \
    >"$T_TMP/auto.out" 2>"$T_TMP/auto.err"
t_check "an autostarted server's warning reaches the client" \
    has auto err "* ddmon server warning: --plugin-opt threads.intervall: plugin threads has no option 'intervall'"
timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" vms >"$T_TMP/again.out" 2>"$T_TMP/again.err"
t_check "... once: a client of the running server does not repeat it" lacks again err "warning"
timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" kill-server >/dev/null 2>&1

# Every key a standard plugin read and every command it registered, from
# the binary itself, against the man page's sections.
run list --json --list-plugins
run help help
check_man() {
    python3 - "$T_TMP/list.out" "$T_TMP/help.out" "$MAN" "$1" <<'EOF'
import json, re, sys
plugins = list(json.load(open(sys.argv[1]))["plugins"].values())  # keyed by name
man = open(sys.argv[3]).read()
def section(name):
    m = re.search(r"^\.SH " + name + r"\n(.*?)^\.SH ", man, re.S | re.M)
    return m.group(1) if m else ""
missing = []
if sys.argv[4] == "options":
    text = section("PLUGIN OPTIONS")
    for p in plugins:
        if p.get("status") != "loaded":
            continue
        for key in p.get("options") or []:
            opt = "%s.%s=" % (p["name"], key)
            if ".BI " + opt not in text:
                missing.append(opt)
    if not any(p.get("options") for p in plugins):
        missing.append("(no plugin reported any option)")
else:
    text = section("PLUGIN COMMANDS").replace("\\-", "-")
    cmds = re.findall(r"^  (\S+) .*\[(\w+)\]$", open(sys.argv[2]).read(), re.M)
    for cmd, plugin in cmds:
        if not re.search(r'^\.BI? "?' + re.escape(cmd) + r'[ "]', text, re.M):
            missing.append("%s (%s)" % (cmd, plugin))
    if not cmds:
        missing.append("(ddmon help listed no plugin command)")
for m in missing:
    print("# not documented in ddmon.1: " + m)
sys.exit(1 if missing else 0)
EOF
}
t_check "ddmon(1) PLUGIN OPTIONS documents every option the plugins read" check_man options
t_check "ddmon(1) PLUGIN COMMANDS documents every plugin command" check_man commands
t_check "the lists came from a successful run" test "$(cat "$T_TMP/list.rc")$(cat "$T_TMP/help.rc")" = 00

exit 0
