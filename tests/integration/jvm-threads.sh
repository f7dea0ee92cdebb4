#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real OpenJDK program as a new user would see it (issue 12, plain JVMs):
# ddmon vms shows its pid and main class (from /proc, no JVM help); the jvm
# plugin's threads view lists the names the program gives its threads,
# over standard JDWP only; polling never suspends anything (the program
# keeps ticking); jvm-stack refuses without --suspend, shows the frames
# with it and the thread runs on after; jdb through the relay works while
# the view is watched, and ddmon asks the VM nothing while jdb is attached.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_have_plugins jvm || t_skip_all "the jvm plugin was not built"
t_plan 10
t_javac || t_skip_all "javac failed"
vm_port=$(t_free_port); base=$(t_free_ports 2)
t_start_jvm "$vm_port" n Sleeper
t_wait_jvm "$vm_port"
key="127.0.0.1:$vm_port"
t_start_server --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
D() { t_ddmon --no-autostart "$@"; }
ticks() { grep -c tick "$T_TMP/jvm-$vm_port.out"; }

t_wait 15 bash -c "[ \"\$(t_vm_field '$key' state 2>/dev/null)\" = plain ]" 2>/dev/null
pid=$(t_vm_field "$key" pid); app=$(t_vm_field "$key" app)
[ "$pid" = "$JVM_PID" ] && [ "$app" = Sleeper ] && t_ok "ddmon vms shows the JVM's pid $pid and main class" \
    || t_fail "ddmon vms shows the JVM's pid and main class" "pid '$pid' (want $JVM_PID) app '$app'" "$(cat "$T_TMP/dp.json")"

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

# jdb through the relay while the view is watched.
port=$(t_debug_port "$key")
D watch threads --vm "$JVM_PID" --json >"$T_TMP/watch.json" 2>&1 &
watcher=$!
T_PIDS+=("$watcher")
sleep 1
if command -v jdb >/dev/null; then
    printf 'threads\nquit\n' | (sleep 4; cat) | timeout 40 jdb -attach "127.0.0.1:$port" >"$T_TMP/jdb.txt" 2>&1
    grep -q "worker-1" "$T_TMP/jdb.txt" && t_ok "jdb through the relay works while ddmon polls" \
        || t_fail "jdb through the relay works while ddmon polls" "$(cat "$T_TMP/jdb.txt")" "$(tail -5 "$T_TMP/server.err")"
else
    t_ok "# SKIP no jdb"
fi
# The plugin stops at the attach; the core would refuse it anyway (-EBUSY).
grep -q "a debugger is attached: JDWP polling stops" "$T_TMP/server.err" \
    && ! grep -q "not sent: error -16" "$T_TMP/server.err" \
    && t_ok "ddmon's polling stops while the debugger is attached" \
    || t_fail "ddmon's polling stops while the debugger is attached" "$(grep -i "debugger\|jvm" "$T_TMP/server.err" | tail -5)"
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
# After jdb left (Dispose), ddmon reconnects and polls again; the program ran on.
t_wait 15 have_workers && t_ok "after jdb left the threads view fills again" \
    || t_fail "after jdb left the threads view fills again" "$(cat "$T_TMP/threads.txt")" "$(tail -5 "$T_TMP/server.err")"
exit 0
