#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# jdb and a JDI program (tests/java/JdiThreads.java) against a VM played by
# ddmon-simvm: directly on the VM's port, then through ddmon on the VM's
# relay port and on the selected-VM port. The simulated VM's JDWP object
# model (threads, groups, classes, stacks of suspended threads) must give
# the same jdb output (threads, suspend, where all, classes, version,
# resume, quit) and the same JDI output every way.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v jdb >/dev/null && command -v javac >/dev/null && command -v java >/dev/null || t_skip_all "no jdb/javac"
t_plan 8
t_javac || t_skip_all "javac failed"

# session PORT: the scripted jdb session, prompts and carriage returns dropped.
session() {
    { sleep 2; echo "threads"; sleep 1; echo "suspend"; sleep 1; echo "where all"; sleep 1.5
      echo "classes"; sleep 1; echo "version"; sleep 1; echo "resume"; sleep 1; echo "quit"; } |
        timeout 40 jdb -attach "127.0.0.1:$1" 2>&1 | tr '\r' '\n' | sed -E 's/^(> )+//; /^>? *$/d'
}
# jdi PORT: JdiThreads' output.
jdi() { timeout 40 java -cp "$T_TMP/java" JdiThreads 127.0.0.1 "$1" 2>&1; }
# same NAME FILE: FILE equals the direct run's output for NAME.
same() { diff -u "$T_TMP/direct.$1" "$2" >"$T_TMP/diff" 2>&1; }

port=$(t_free_port) || { t_fail "a free port"; exit 0; }
t_start_simvm --vms 1 --base-port "$port" --thread-activity 0 --app com.example.jdbsim \
    --port-file "$T_TMP/sim.ports"
t_wait 10 test -s "$T_TMP/sim.ports" || { t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"; exit 0; }
vm="127.0.0.1:$port"

# --- directly ---------------------------------------------------------------
session "$port" >"$T_TMP/direct.jdb"
jdi "$port" >"$T_TMP/direct.jdi"
if grep -q "^Group main:" "$T_TMP/direct.jdb" && grep -q "(java.lang.Thread)[0-9]* *main " "$T_TMP/direct.jdb" &&
    grep -q "^All threads suspended" "$T_TMP/direct.jdb" &&
    grep -q "\[1\] android.os.MessageQueue.nativePollOnce (native method)" "$T_TMP/direct.jdb" &&
    grep -q "\[2\] android.os.MessageQueue.next (MessageQueue.java:335)" "$T_TMP/direct.jdb" &&
    grep -q "^com.example.jdbsim.MainActivity$" "$T_TMP/direct.jdb" &&
    grep -q "^All threads resumed" "$T_TMP/direct.jdb" && ! grep -qi "exception" "$T_TMP/direct.jdb"; then
    t_ok "jdb directly: threads, suspend, where all, classes, version, resume, quit"
else
    t_fail "jdb directly: threads, suspend, where all, classes, version, resume, quit" "$(cat "$T_TMP/direct.jdb")"
fi
if grep -q "^jdi ok 14$" "$T_TMP/direct.jdi" && grep -q "^thread main group=main status=running$" "$T_TMP/direct.jdi" &&
    grep -q "^frames main 8 suspended=true$" "$T_TMP/direct.jdi"; then
    t_ok "JdiThreads directly: 14 threads, groups, statuses, frame counts"
else
    t_fail "JdiThreads directly: 14 threads, groups, statuses, frame counts" "$(cat "$T_TMP/direct.jdi")"
fi

# --- through ddmon ----------------------------------------------------------
base=$(t_free_ports 4) && sel=$(t_free_port) || { t_fail "free ports"; exit 0; }
# --tcp-probe=helo: the VM is known to be an Android VM (see relay-simvm.sh)
t_start_server --scan=local --scan-ports "$port" --tcp-probe=helo --debug-port-base "$base" \
    --selected-port "$sel" --select "$vm" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
# relay PORT: wait until ddmon lists the VM with its relay port again (a
# debugger leaving makes it reopen the VM connection), print the port.
relay() { t_wait 15 t_debug_port "$vm" && sleep 0.5 && t_debug_port "$vm"; }

rp=$(relay) || { t_fail "ddmon lists the VM with a relay port" "$(tail -5 "$T_TMP/server.err")"; exit 0; }
session "$rp" >"$T_TMP/relay.jdb"
same jdb "$T_TMP/relay.jdb" && t_ok "jdb through the VM's relay port ($rp) = direct" ||
    t_fail "jdb through the VM's relay port ($rp) = direct" "$(cat "$T_TMP/diff")" "$(tail -5 "$T_TMP/server.err")"
rp=$(relay)
jdi "${rp:-1}" >"$T_TMP/relay.jdi"
same jdi "$T_TMP/relay.jdi" && t_ok "JdiThreads through the VM's relay port = direct" ||
    t_fail "JdiThreads through the VM's relay port = direct" "$(cat "$T_TMP/diff")" "$(tail -5 "$T_TMP/server.err")"

relay >/dev/null
session "$sel" >"$T_TMP/selected.jdb"
same jdb "$T_TMP/selected.jdb" && t_ok "jdb through the selected-VM port ($sel) = direct" ||
    t_fail "jdb through the selected-VM port ($sel) = direct" "$(cat "$T_TMP/diff")" "$(tail -5 "$T_TMP/server.err")"
relay >/dev/null
jdi "$sel" >"$T_TMP/selected.jdi"
same jdi "$T_TMP/selected.jdi" && t_ok "JdiThreads through the selected-VM port = direct" ||
    t_fail "JdiThreads through the selected-VM port = direct" "$(cat "$T_TMP/diff")" "$(tail -5 "$T_TMP/server.err")"

# --- afterwards -------------------------------------------------------------
relay >/dev/null && t_ok "ddmon still lists the VM after four debuggers" ||
    t_fail "ddmon still lists the VM after four debuggers" "$(tail -5 "$T_TMP/server.err")"
! t_dead "$SIMVM_PID" && ! t_dead "$DDMON_PID" && t_ok "simvm and ddmon still run" ||
    t_fail "simvm and ddmon still run" "$(tail -5 "$T_TMP/simvm.err")" "$(tail -5 "$T_TMP/server.err")"
exit 0
