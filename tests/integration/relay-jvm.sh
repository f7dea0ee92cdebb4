#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The debugger relay against a real OpenJDK VM: a raw-JDWP debugger through
# the VM's own port and the selected-VM port; ids that collide with ddmon's;
# a DDM request from the debugger; a 10 MiB packet both ways; pipelining; a
# JDI program; Dispose and reconnect, and none sent on the behalf of a
# debugger that sent its own; the JVM closing after a debugger's Dispose
# logged as the session's end, naming the VM; a debugger killed while the VM is
# suspended (the VM must go on); a second debugger refused; garbage and a
# half packet from a debugger; the VM dying under a debugger.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_plan 19
t_javac || t_skip_all "javac failed"

vm_port=$(t_free_port); base=$(t_free_ports 4); sel=$(t_free_port)
t_start_jvm "$vm_port" n Sleeper
t_wait_jvm "$vm_port"
key="127.0.0.1:$vm_port"
t_start_server --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port "$sel" --select "$key" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key") && t_ok "the JVM gets a debugger port ($port)" \
    || { t_fail "the JVM gets a debugger port" "$(cat "$T_TMP/dp.json" 2>/dev/null)" "$(tail -5 "$T_TMP/server.err")"; exit 0; }

# The debugger's own Dispose, relayed in place (one whole packet a read:
# core/relay/relay_debugger.c), is noticed: ddmon sends none on its behalf
# when it leaves. The debugger writes the Dispose and closes at once, so
# ddmon sees it leave before the JVM's answer and close (when the JVM's
# side closes first there is nothing to send, and nothing to check). The
# line is rate-limited per VM, so this comes first; a debugger that then
# leaves without Dispose makes ddmon say it sends one (so the first check
# can fail: it does with sent_dispose left unset).
behalf="left without VirtualMachine.Dispose; sending it on its behalf"
dispose_and_close() ( # PORT: handshake, then a Dispose (id 1) and close, not waiting for its reply
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'JDWP-Handshake' >&3
    head -c 14 <&3 | grep -q '^JDWP-Handshake$' || exit 1
    printf '\000\000\000\013\000\000\000\001\000\001\006' >&3
    exec 3>&-
)
dispose_and_close "$port"
rc=$?
# Seen leaving as "left" (its end of file) or, when ddmon had relayed the
# JVM's reply into the closed socket first, as "closed: Connection reset
# by peer" (its kernel answers that data with a reset; seen in CI).
t_wait 10 grep -qE "relay: debugger .* on port $port (left|closed: )" "$T_TMP/server.err"
left=$? # (the check below means something only once ddmon saw it leave)
sleep 0.5
[ $rc = 0 ] && [ $left = 0 ] && ! grep -q "$behalf" "$T_TMP/server.err" &&
    t_ok "a debugger's own Dispose (then gone at once): none sent on its behalf" ||
    t_fail "a debugger's own Dispose (then gone at once): none sent on its behalf" "rc $rc, left $left" \
        "$(grep -i -e dispose -e left "$T_TMP/server.err" | tail -3)"
"$JDWPC" "127.0.0.1:$port" version >/dev/null 2>&1 # (held while the JVM reconnects)
t_wait 10 grep -q "$behalf" "$T_TMP/server.err" && t_ok "a debugger gone without Dispose: one sent on its behalf" ||
    t_fail "a debugger gone without Dispose: one sent on its behalf" "$(tail -5 "$T_TMP/server.err")"

out=$("$JDWPC" "127.0.0.1:$port" version idsizes id=0x40000000 version id=0x40000001 idsizes 2>&1)
echo "$out" | grep -q "^version 1073741824 " && t_ok "a debugger using ddmon's own ids gets its replies" \
    || t_fail "a debugger using ddmon's own ids gets its replies" "$out"
out=$("$JDWPC" "127.0.0.1:$port" ddm HELO version 2>&1)  # the port holds us while the VM reconnects
echo "$out" | grep -q "^ddm [0-9]* error 99" && t_ok "a DDM request from the debugger is relayed and answered" \
    || t_fail "a DDM request from the debugger is relayed and answered" "$out"
out=$("$JDWPC" "127.0.0.1:$port" idsizes bigstring 10485760 2>&1)
echo "$out" | grep -q "bigstring .* 10485760 ok" && t_ok "a 10 MiB packet goes through both ways intact" \
    || t_fail "a 10 MiB packet goes through both ways intact" "$out"
out=$("$JDWPC" "127.0.0.1:$port" pipeline 5000 2>&1)
echo "$out" | grep -q "^pipeline 5000" && t_ok "5000 pipelined commands, replies in order" \
    || t_fail "5000 pipelined commands, replies in order" "$out"
out=$("$JDWPC" "127.0.0.1:$sel" version 2>&1)
echo "$out" | grep -q "^version" && t_ok "the selected-VM port reaches the JVM" || t_fail "the selected-VM port reaches the JVM" "$out"

# A debugger on the selected-VM port sends Dispose and stays connected: the
# JVM's agent answers it and closes ddmon's connection (the one that
# carried it) before the debugger closes its side. That is the end of the
# session, not the VM going away: no "went away" line; and the debugger's
# leave line names the VM it was attached to, as on the VM's own port,
# not "(none)".
went_before=$(grep -c "went away" "$T_TMP/server.err")
left_re="relay: debugger [^ ]* of VM [^ ]* on port $sel left"
left_before=$(grep -c "$left_re" "$T_TMP/server.err") # (the debugger above left too)
rm -f "$T_TMP/go"
"$JDWPC" "127.0.0.1:$sel" version dispose waitfile "$T_TMP/go" >"$T_TMP/disp.out" 2>&1 &
dbg=$!
t_wait 10 eval '[ "$(grep -c "$left_re" "$T_TMP/server.err")" -gt "$left_before" ]'
line=$(grep "$left_re" "$T_TMP/server.err" | sed -n "$((left_before + 1))p")
echo "$line" | grep -qF "of VM $key on port $sel left" && t_ok "the leave line on the selected-VM port names the VM: $line" \
    || t_fail "the leave line on the selected-VM port names the VM" "${line:-no leave line}" "$(cat "$T_TMP/disp.out")"
[ -n "$line" ] && [ "$(grep -c "went away" "$T_TMP/server.err")" = "$went_before" ] &&
    t_ok "the JVM closing after the debugger's Dispose is not logged as the VM going away" ||
    t_fail "the JVM closing after the debugger's Dispose is not logged as the VM going away" \
        "$(grep -e "went away" -e "$left_re" "$T_TMP/server.err" | tail -3)"
touch "$T_TMP/go"
wait $dbg
out=$(java -cp "$T_TMP/java" JdiStress 127.0.0.1 "$port" 1000 2>&1)
echo "$out" | grep -q "^jdi ok" && t_ok "a JDI program (thousands of requests, breakpoint events) works" \
    || t_fail "a JDI program (thousands of requests, breakpoint events) works" "$out"

# One write of 744 Versions with a DDM request across byte 4096 and a Dispose
# last: the relay parses them in place, so its id remapping and order are
# checked across a read boundary. ddmon answers the vendor command itself for
# a plain JVM (NOT_IMPLEMENTED, 99) at once: that reply may come before the
# Versions' ones; theirs and the Dispose's must come in order.
t_wait 5 bash -c "'$JDWPC' 127.0.0.1:$port version >/dev/null 2>&1"
out=$("$JDWPC" "127.0.0.1:$port" mixed 744 2>&1)
echo "$out" | grep -q "^mixed 744 ddm 99 dispose 0$" &&
    t_ok "pipelined Versions, a vendor command across 4096 bytes and a Dispose: every reply, with its id, in order" ||
    t_fail "pipelined Versions, a vendor command across 4096 bytes and a Dispose: every reply, with its id, in order" "$out"

# Dispose: the agent closes; ddmon reconnects at once and the port stays.
"$JDWPC" "127.0.0.1:$port" version dispose >/dev/null 2>&1
t_wait 5 bash -c "'$JDWPC' 127.0.0.1:$port version >/dev/null 2>&1" && t_ok "after Dispose the next debugger gets in quickly on the same port" \
    || t_fail "after Dispose the next debugger gets in quickly on the same port" "$(tail -5 "$T_TMP/server.err")"

# A debugger killed while the VM is suspended: the VM must run on.
"$JDWPC" "127.0.0.1:$port" suspend sleep 30000 >"$T_TMP/susp.out" 2>&1 &
dbg=$!
t_wait 10 grep -q "^suspend .* ok" "$T_TMP/susp.out"
sleep 1
before=$(grep -c tick "$T_TMP/jvm-$vm_port.out"); sleep 1
still=$(grep -c tick "$T_TMP/jvm-$vm_port.out")
kill -9 $dbg; wait $dbg 2>/dev/null
# (relay-jdb.sh checks the one-second bound; here the machine may be loaded)
ticking() { [ "$(grep -c tick "$T_TMP/jvm-$vm_port.out")" -gt "$still" ]; }
t_wait 5 ticking
after=$(grep -c tick "$T_TMP/jvm-$vm_port.out")
if grep -q "^suspend .* ok" "$T_TMP/susp.out" && [ "$still" -eq "$before" ] && [ "$after" -gt "$still" ]; then
    t_ok "killing a debugger of a suspended VM resumes it (ticks $before, $still while suspended, $after after)"
else
    t_fail "killing a debugger of a suspended VM resumes it" "ticks $before $still $after" "$(cat "$T_TMP/susp.out")" "$(tail -5 "$T_TMP/server.err")"
fi
t_wait 5 t_debug_port "$key" && t_ok "the VM is listed again after the debugger was killed" || t_fail "the VM is listed again after the debugger was killed"

# Second debugger refused while one is attached.
t_wait 5 bash -c "'$JDWPC' 127.0.0.1:$port version >/dev/null 2>&1"
attached_before=$(grep -c "attached to VM" "$T_TMP/server.err")
"$JDWPC" "127.0.0.1:$port" version sleep 6000 >/dev/null 2>&1 &
first=$!
more_attached() { [ "$(grep -c "attached to VM" "$T_TMP/server.err")" -gt "$attached_before" ]; }
t_wait 20 more_attached || echo "# the first debugger did not attach within 20 s: $(grep relay "$T_TMP/server.err" | tail -3)"
out=$("$JDWPC" "127.0.0.1:$port" version 2>&1); rc=$?
[ $rc -ne 0 ] && t_ok "a second debugger on the same VM is refused" || t_fail "a second debugger on the same VM is refused" "$out"
grep -q "second debugger" "$T_TMP/server.err" && t_ok "the refusal is logged" || t_fail "the refusal is logged" "$(tail -3 "$T_TMP/server.err")"
kill $first 2>/dev/null; wait $first 2>/dev/null

# Garbage and half packets from a debugger: that debugger is closed, ddmon goes on.
t_wait 5 bash -c "'$JDWPC' 127.0.0.1:$port version >/dev/null 2>&1"
"$JDWPC" "127.0.0.1:$port" garbage sleep 500 >/dev/null 2>&1
"$JDWPC" "127.0.0.1:$port" half >/dev/null 2>&1
t_wait 5 bash -c "'$JDWPC' 127.0.0.1:$port version >/dev/null 2>&1" && t_ok "after garbage and a half packet the next debugger works" \
    || t_fail "after garbage and a half packet the next debugger works" "$(tail -5 "$T_TMP/server.err")"

# The VM dies under a debugger: the debugger is disconnected, ddmon keeps running.
"$JDWPC" "127.0.0.1:$port" version events 1 20000 >"$T_TMP/dbg.out" 2>&1 &
dbg=$!
sleep 1
kill -9 "$JVM_PID"; wait "$JVM_PID" 2>/dev/null
t_wait 5 t_dead $dbg && t_ok "the VM's death closes its debugger's connection" || { kill $dbg; t_fail "the VM's death closes its debugger's connection"; }
exit 0
