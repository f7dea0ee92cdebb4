#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the server maps that it need not (issue 16, doc/memory.md): under a
# UTF-8 locale the server loads LC_CTYPE (the charset) and no other locale
# category, each of which would be one more mapped file, while the
# client's commands still take the whole locale; and a server with a VM
# connected over TCP by a numeric address holds it like any other (the
# connect no longer goes through GIO's address classes).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 3
unset DDMON_PLUGIN_PATH
loc=$(locale -a 2>/dev/null | grep -iE '^c\.utf-?8$' | head -1)
[ -n "$loc" ] || loc=$(locale -a 2>/dev/null | grep -iE '\.utf-?8$' | head -1)
[ -n "$loc" ] || t_skip_all "no UTF-8 locale installed"
export LANG=$loc
unset LC_ALL LC_CTYPE LC_NUMERIC LC_TIME LC_COLLATE LC_MONETARY LC_MESSAGES

t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/ports" --tick 1000 --thread-activity 0
t_wait 20 test -s "$T_TMP/ports"
port=$(awk '{ print $2; exit }' "$T_TMP/ports")
t_start_server --scan=local --scan-ports="$port" --scan-interval=1000 --selected-port=0 \
    --debug-port-base=0
maps() { cat "/proc/$DDMON_PID/maps" 2>/dev/null; }
# A category maps as .../LC_CTYPE, or as .../LC_MESSAGES/SYS_LC_MESSAGES.
lc_re='/LC_[A-Z_]+(/|$)'
desc="the server ($LANG) maps LC_CTYPE and no other locale category"
if [ ! -e "/usr/lib/locale/$loc/LC_CTYPE" ]; then
    # The locale comes from locale-archive: one mapping, no file a category.
    t_ok "$desc # SKIP $loc has no files of its own in /usr/lib/locale"
elif maps | grep -qE '/LC_CTYPE$' && ! maps | grep -E "$lc_re" | grep -vqE '/LC_CTYPE$'; then
    t_ok "$desc"
else
    t_fail "$desc" "$(maps | grep -E 'locale|LC_')"
fi

if t_wait 20 t_is "ready" t_vm_field "127.0.0.1:$port" state; then
    t_ok "a VM at a numeric address (127.0.0.1:$port) connects"
else
    t_fail "a VM at a numeric address (127.0.0.1:$port) connects" "$(t_ddmon vms 2>&1)"
fi

# A client command of the same binary still takes the whole locale: it maps
# LC_NUMERIC (and the other categories) while it runs; `watch --json`
# keeps it running long enough to look.
# The binary itself, not t_ddmon (a shell function: its $! would be a
# subshell's, which maps every category of bash's own locale).
"$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --json watch >"$T_TMP/watch.out" 2>&1 &
wpid=$!
T_PIDS+=("$wpid")
t_wait 10 grep -q . "$T_TMP/watch.out"
desc="a client command still loads the whole locale"
if [ "$(readlink "/proc/$wpid/exe")" != "$(readlink -f "$DDMON")" ]; then
    t_fail "$desc" "pid $wpid is $(readlink "/proc/$wpid/exe" 2>&1), not $DDMON"
elif [ ! -e "/usr/lib/locale/$loc/LC_NUMERIC" ]; then
    t_ok "$desc # SKIP $loc has no files of its own in /usr/lib/locale"
elif grep -qE '/LC_NUMERIC$' "/proc/$wpid/maps" 2>/dev/null; then
    t_ok "$desc"
else
    t_fail "$desc" "$(grep -E 'LC_' "/proc/$wpid/maps" 2>&1)"
fi
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

t_stop "$DDMON_PID"
exit 0
