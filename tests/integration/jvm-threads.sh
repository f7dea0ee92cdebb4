#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real OpenJDK program as a new user would see it (issue 12, plain JVMs):
# ddmon vms shows its pid and main class (from /proc, no JVM help); the jvm
# plugin's threads view lists the names the program gives its threads,
# over standard JDWP only; polling never suspends anything (the program
# keeps ticking); jvm-stack refuses without --suspend, shows the frames
# with it and the thread runs on after; jdb through the relay works while
# the view is watched (a `ddmon watch --json` receives its thread rows
# before and after, none while jdb is attached), and ddmon asks the VM
# nothing while jdb is attached. No thread count is shown before a poll
# answered (never a false "threads: 0"); then threads_count is in --json.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_have_plugins jvm || t_skip_all "the jvm plugin was not built"
t_plan 13
t_javac || t_skip_all "javac failed"
vm_port=$(t_free_port); base=$(t_free_ports 2)
t_start_jvm "$vm_port" n Sleeper
t_wait_jvm "$vm_port"
key="127.0.0.1:$vm_port"
# -v: the debug lines (a JDWP request the core refused) reach server.err.
t_start_server -v --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
D() { t_ddmon --no-autostart "$@"; }
ticks() { grep -c tick "$T_TMP/jvm-$vm_port.out"; }

t_wait 15 t_is plain t_vm_field "$key" state
pid=$(t_vm_field "$key" pid); app=$(t_vm_field "$key" app)
[ "$pid" = "$JVM_PID" ] && [ "$app" = Sleeper ] && t_ok "ddmon vms shows the JVM's pid $pid and main class" \
    || t_fail "ddmon vms shows the JVM's pid and main class" "pid '$pid' (want $JVM_PID) app '$app'" "$(cat "$T_TMP/dp.json")"

# Nobody has looked at its threads yet: no count at all, not a false 0.
count=$(t_vm_field "$key" threads_count); info=$(t_vm_field "$key" info)
[ -z "$count" ] && ! echo "$info" | grep -q "threads:" && t_ok "no thread count before a poll answered" \
    || t_fail "no thread count before a poll answered" "threads_count '$count' info '$info'"

out=$(D select "$key" 2>&1)
echo "$out" | grep -q "(pid $JVM_PID, Sleeper)" && t_ok "ddmon select names pid and main class" \
    || t_fail "ddmon select names pid and main class" "$out"

have_workers() { D view threads --vm "$JVM_PID" >"$T_TMP/threads.txt" 2>&1 && grep -q worker-2 "$T_TMP/threads.txt"; }
t_wait 10 have_workers
if grep -q worker-0 "$T_TMP/threads.txt" && grep -q worker-1 "$T_TMP/threads.txt" && grep -q "main" "$T_TMP/threads.txt"; then
    t_ok "view threads --vm PID lists the program's thread names"
else
    t_fail "view threads --vm PID lists the program's thread names" "$(cat "$T_TMP/threads.txt")" "$(tail -5 "$T_TMP/server.err")"
fi

# The count polled: the text headline and the typed figure for scripts.
count=$(t_vm_field "$key" threads_count); info=$(t_vm_field "$key" info)
[ -n "$count" ] && [ "$count" -ge 4 ] && echo "$info" | grep -q "threads: $count" \
    && t_ok "vms --json has threads_count $count (info '$info')" \
    || t_fail "vms --json has threads_count" "threads_count '$count' info '$info'" "$(cat "$T_TMP/dp.json")"

# Polling (the view was looked at: it polls for 30 s) never suspends anything.
t1=$(ticks); sleep 2; t2=$(ticks)
D view threads --vm "$JVM_PID" --json >"$T_TMP/threads.json" 2>&1
if [ "$t2" -gt "$((t1 + 4))" ] && ! grep -q suspended "$T_TMP/threads.json"; then
    t_ok "polling suspends nothing (ticks $t1 -> $t2, no thread suspended)"
else
    t_fail "polling suspends nothing" "ticks $t1 -> $t2" "$(grep suspended "$T_TMP/threads.json")"
fi

out=$(D jvm-stack "$JVM_PID" worker-0 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q -- "--suspend" && t_ok "jvm-stack without --suspend refuses and says why" \
    || t_fail "jvm-stack without --suspend refuses and says why" "rc=$rc" "$out"

out=$(D jvm-stack "$JVM_PID" worker-0 --suspend 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "lambda\$main\$0" && echo "$out" | grep -q "Sleeper.java"; then
    t_ok "jvm-stack --suspend shows the thread's frames"
else
    t_fail "jvm-stack --suspend shows the thread's frames" "rc=$rc" "$out" "$(tail -5 "$T_TMP/server.err")"
fi
sleep 1.5
D view threads --vm "$JVM_PID" >"$T_TMP/after.txt" 2>&1
t3=$(ticks); sleep 1; t4=$(ticks)
if grep worker-0 "$T_TMP/after.txt" | grep -vq suspended && [ "$t4" -gt "$t3" ]; then
    t_ok "the thread runs again after jvm-stack (not suspended, ticks $t3 -> $t4)"
else
    t_fail "the thread runs again after jvm-stack" "$(cat "$T_TMP/after.txt")" "ticks $t3 $t4"
fi

# jdb through the relay while the view is watched: `ddmon watch --json`
# watches every view (`--vm` belongs to view and views only); its stream's
# events of this VM's threads view that list worker-1 are counted. The
# stream itself says when jdb was attached: the VM list's row of this VM
# with "debugger": true begins it; the first later event where it is not
# (or this VM's threads view is removed: its session closes at Dispose)
# ends it. Events reach the watcher in the order the server made them, so
# counting between the two needs no timing (a count taken at a time
# raced jdb's own end and the reconnect's fresh rows).
port=$(t_debug_port "$key")
D watch --json >"$T_TMP/watch.json" 2>"$T_TMP/watch.err" &
watcher=$!
T_PIDS+=("$watcher")
# thread_events [attached]: the events listing worker-1; with "attached":
# "BEGAN COUNT ENDED", BEGAN/ENDED 1 when the stream showed the attach/its end,
# COUNT those events in between.
thread_events() {
    python3 - "$T_TMP/watch.json" "$key" "${1:-all}" <<'PY'
import json, sys
path, key, mode = sys.argv[1:4]
n = inside = began = ended = 0
for line in open(path):
    try:
        ev = json.loads(line)
    except ValueError:
        continue  # a line still being written
    view = ev.get("view") or {}
    rows = view.get("rows") or []
    if ev.get("name") == "vms" and ev.get("event") != "removed":
        dbg = any(isinstance(r, dict) and r.get("key") == key and r.get("debugger") is True for r in rows)
        if dbg and not began:
            began = inside = 1
        elif not dbg and inside:
            inside, ended = 0, 1
        continue
    if ev.get("vm") != key or ev.get("name") != "threads":
        continue
    if ev.get("event") == "removed" and inside:
        inside, ended = 0, 1
    if any(r.get("name") == "worker-1" for r in rows if isinstance(r, dict)):
        if mode == "all" or inside:
            n += 1
print(n if mode == "all" else "%d %d %d" % (began, n, ended))
PY
}
events_over() { [ "$(thread_events)" -gt "$1" ]; }
attached() { grep -q "a debugger is attached: JDWP polling stops" "$T_TMP/server.err"; }
stream_attached() { [ "$(thread_events attached | cut -d' ' -f1)" = 1 ]; }
stream_ended() { [ "$(thread_events attached | cut -d' ' -f3)" = 1 ]; }
if t_wait 10 events_over 1; then
    t_ok "watch --json receives the JVM's thread rows ($(thread_events) events)"
else
    t_fail "watch --json receives the JVM's thread rows" "$(tail -c 600 "$T_TMP/watch.json")" "$(cat "$T_TMP/watch.err")"
fi
jdb_ok=skip; held=""; span=""
if command -v jdb >/dev/null; then
    # jdb reads its commands from a FIFO the test holds open: it stays
    # attached until the test sends quit, however long it took to start.
    mkfifo "$T_TMP/jdb.in"
    timeout 60 jdb -attach "127.0.0.1:$port" <"$T_TMP/jdb.in" >"$T_TMP/jdb.txt" 2>&1 &
    jdb=$!
    T_PIDS+=("$jdb")
    exec 7>"$T_TMP/jdb.in"
    if t_wait 20 attached && t_wait 10 stream_attached; then
        printf 'threads\n' >&7
        # Three polling periods with jdb attached: the span in which a
        # poll would show (what is counted is bounded by the stream's
        # markers, not by this sleep).
        sleep 3
        kill -0 "$watcher" 2>/dev/null || held="the watcher died: $(cat "$T_TMP/watch.err")"
    fi
    printf 'quit\n' >&7
    exec 7>&-
    wait "$jdb"
    grep -q "worker-1" "$T_TMP/jdb.txt" && jdb_ok=yes || jdb_ok=no
    t_wait 10 stream_ended
    span=$(thread_events attached)
    after_jdb=$(thread_events)
fi
case $jdb_ok in
    yes) t_ok "jdb through the relay works while ddmon polls" ;;
    no) t_fail "jdb through the relay works while ddmon polls" "$(cat "$T_TMP/jdb.txt")" "$(tail -5 "$T_TMP/server.err")" ;;
    *) t_ok "# SKIP no jdb" ;;
esac
# The plugin stops at the attach (the core would refuse it anyway: -EBUSY,
# a debug line "not sent: error -16"; the server runs with -v): the watcher,
# alive, got no thread rows between the attach and its end.
if [ "$jdb_ok" = skip ]; then
    t_ok "# SKIP no jdb"
elif attached && [ "$span" = "1 0 1" ] && kill -0 "$watcher" 2>/dev/null \
        && ! grep -q "not sent: error -16" "$T_TMP/server.err"; then
    t_ok "ddmon's polling stops while the debugger is attached (no thread events between the attach and its end)"
else
    t_fail "ddmon's polling stops while the debugger is attached" "began/count/ended '$span'" "${held:-the watcher is alive}" \
        "$(grep -i "debugger\|jvm\|not sent" "$T_TMP/server.err" | tail -5)"
fi
# After jdb left (Dispose), ddmon reconnects and polls again; the program ran on.
t_wait 15 have_workers && { [ "$jdb_ok" = skip ] || t_wait 10 events_over "$after_jdb"; } \
    && t_ok "after jdb left the threads view fills again (and the watcher gets its rows)" \
    || t_fail "after jdb left the threads view fills again" "$(cat "$T_TMP/threads.txt")" \
        "thread events $(thread_events) (after jdb: ${after_jdb:-})" "$(tail -5 "$T_TMP/server.err")"
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
exit 0
