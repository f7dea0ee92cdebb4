#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The server's signals, which reach its loop through one self-pipe
# (server/server.c): SIGINT, SIGHUP and SIGTERM each stop a foreground server
# with exit status 0, the reason in its log and its socket and lock removed;
# SIGUSR2 logs the heap figures and the server goes on answering; a burst of
# SIGUSR2 does not hide a SIGTERM that follows it.
#
# The server runs as a bash background job, which starts with SIGINT ignored;
# the server installs its own handler over that, so SIGINT reaches it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 14

# Scan a port range where nothing listens, so no VM shows up.
base=$(t_free_ports 2) || t_skip_all "no free ports"
scan=(--scan=local --scan-ports "$base-$((base + 1))")

# start NAME: a foreground server on $T_TMP/NAME/ddmon.sock; sets srv and sock.
start() {
    mkdir -m 700 "$T_TMP/$1"
    sock="$T_TMP/$1/ddmon.sock"
    "$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-adb-start "${scan[@]}" \
        server --foreground >/dev/null 2>"$T_TMP/$1.err" &
    srv=$!; T_PIDS+=("$srv")
    t_wait 10 test -S "$sock"
}

for s in INT HUP TERM; do
    if ! start "$s"; then
        t_fail "SIG$s: server starts" "$(cat "$T_TMP/$s.err")"
        t_fail "SIG$s: logged"; t_fail "SIG$s: socket and lock removed"
        continue
    fi
    kill -"$s" "$srv"
    # wait returns the job's status; give up (SIGKILL) after 20 s.
    ( sleep 20; kill -KILL "$srv" 2>/dev/null ) & guard=$!
    wait "$srv"; rc=$?
    kill "$guard" 2>/dev/null; wait "$guard" 2>/dev/null
    [ $rc -eq 0 ] && t_ok "SIG$s stops the server with status 0" \
        || t_fail "SIG$s stops the server with status 0" "rc=$rc" "$(cat "$T_TMP/$s.err")"
    t_has "$T_TMP/$s.err" "stopping (SIG$s)" && t_ok "SIG$s: the server logs why it stops" \
        || t_fail "SIG$s: the server logs why it stops" "$(cat "$T_TMP/$s.err")"
    [ ! -e "$sock" ] && [ ! -e "$sock.lock" ] && t_ok "SIG$s: socket and lock removed" \
        || t_fail "SIG$s: socket and lock removed" "$(ls -la "$T_TMP/$s")"
done

# SIGUSR2: one heap line per signal, and the server keeps serving.
start USR2 || t_fail "SIGUSR2: server starts" "$(cat "$T_TMP/USR2.err")"
kill -USR2 "$srv"
t_wait 10 grep -q "memory: heap in use [0-9]* bytes" "$T_TMP/USR2.err" \
    && t_ok "SIGUSR2 logs the heap figures" || t_fail "SIGUSR2 logs the heap figures" "$(cat "$T_TMP/USR2.err")"
kill -USR2 "$srv"
t_wait 10 t_is 2 grep -c "memory: heap in use" "$T_TMP/USR2.err" \
    && t_ok "a second SIGUSR2 logs them again" \
    || t_fail "a second SIGUSR2 logs them again" "$(cat "$T_TMP/USR2.err")"
"$DDMON" --socket "$sock" --no-autostart vms >"$T_TMP/vms.out" 2>"$T_TMP/vms.err"; rc=$?
[ $rc -eq 0 ] && ! t_dead "$srv" && t_ok "after SIGUSR2 the server still answers vms" \
    || t_fail "after SIGUSR2 the server still answers vms" "rc=$rc $(cat "$T_TMP/vms.err")"

# A burst of SIGUSR2 then SIGTERM: the stop is not lost among them.
for _ in $(seq 2000); do kill -USR2 "$srv" 2>/dev/null; done
kill -TERM "$srv"
( sleep 20; kill -KILL "$srv" 2>/dev/null ) & guard=$!
wait "$srv"; rc=$?
kill "$guard" 2>/dev/null; wait "$guard" 2>/dev/null
[ $rc -eq 0 ] && t_has "$T_TMP/USR2.err" "stopping (SIGTERM)" \
    && t_ok "SIGTERM after 2000 SIGUSR2 stops the server" \
    || t_fail "SIGTERM after 2000 SIGUSR2 stops the server" "rc=$rc" "$(tail -5 "$T_TMP/USR2.err")"
[ ! -e "$sock" ] && [ ! -e "$sock.lock" ] && t_ok "after the burst: socket and lock removed" \
    || t_fail "after the burst: socket and lock removed" "$(ls -la "$T_TMP/USR2")"
