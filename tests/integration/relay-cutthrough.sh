#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cut-through in the debugger relay: a debugger's long command goes to the
# VM as its bytes arrive, never held whole. With a read budget of 1 MiB for
# all peers together (--max-buffers), three 4 MiB commands still reach the VM
# intact and in order (buffered whole, each would be refused over the
# budget); a debugger that leaves in the middle of one makes ddmon close the
# VM connection, which carries a cut packet, instead of sending it anything
# more (jdwpc's "cut"); ddmon answers its clients throughout. Against a real
# JVM, a 4 MiB string goes in (a command) and comes back (a reply) through
# the same 1 MiB budget, each way cut-through, the reply socket to socket
# (splice); and so it does when the debugger reads the reply only 2 s later
# (what its socket does not take waits in the pipe, the rest queues behind).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
t_plan 11
export G_MESSAGES_DEBUG=ddmon # the relay logs cut-through and pauses at debug level
size=4194304

# start_fake NAME EXPECT [go]: a fake plain JVM (fake_jvm.py) that reads at once
# with "go", or stalls on the first long command; sets vm_port, key, FAKE_PID.
start_fake() {
    vm_port=$(t_free_port)
    [ "${3:-}" = go ] && touch "$T_TMP/go.$1"
    python3 "$DDM_TOP_SRCDIR/tests/integration/fake_jvm.py" "$vm_port" "$T_TMP/go.$1" \
        "$T_TMP/fake.$1.json" "$2" >"$T_TMP/fake.$1.out" 2>&1 &
    FAKE_PID=$!
    T_PIDS+=("$FAKE_PID")
    t_wait 10 grep -q listening "$T_TMP/fake.$1.out"
    key="127.0.0.1:$vm_port"
}
start_relay() {
    rm -f "$T_TMP/ddmon.sock"
    base=$(t_free_ports 4)
    t_start_server --connect "$key" --scan=none --debug-port-base "$base" --selected-port 0 \
        --max-buffers 1048576 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
    port=""
    t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key")
}

# --- three 4 MiB commands through a 1 MiB budget
start_fake whole 3 go
start_relay
"$JDWPC" "127.0.0.1:$port" blast 3 $size >"$T_TMP/blast.out" 2>&1
t_wait 60 test -s "$T_TMP/fake.whole.json"
python3 - "$T_TMP/fake.whole.json" $size <<'PY' >"$T_TMP/fake.chk" 2>&1 \
    && t_ok "three 4 MiB commands reach the VM intact and in order through a 1 MiB read budget" \
    || t_fail "three 4 MiB commands reach the VM intact and in order through a 1 MiB read budget" \
        "$(cat "$T_TMP/fake.chk" "$T_TMP/blast.out" "$T_TMP/fake.whole.out")" "$(grep relay "$T_TMP/server.err" | tail -5)"
import json, sys
r, size = json.load(open(sys.argv[1])), int(sys.argv[2])
print(r)
assert r == {"received": 3, "bad": 0, "ordered": True, "bytes": 3 * (size + 11)}, r
PY
n=$(grep -c "cut-through" "$T_TMP/server.err")
[ "$n" = 3 ] && ! grep -q "refused" "$T_TMP/server.err" \
    && t_ok "each went cut-through (3 log lines), none was refused" \
    || t_fail "each went cut-through (3 log lines), none was refused" "cut-through lines: $n" \
        "$(grep -E "relay|refused" "$T_TMP/server.err" | tail -5)"
t_ddmon --no-autostart vms --json >"$T_TMP/vms1.json" 2>&1 && grep -q "$key" "$T_TMP/vms1.json" \
    && t_ok "the VM is still listed after them" \
    || t_fail "the VM is still listed after them" "$(head -c 300 "$T_TMP/vms1.json")"
kill "$DDMON_PID"; t_wait 15 t_dead "$DDMON_PID"
kill "$FAKE_PID" 2>/dev/null

# --- a debugger that leaves after 1 MiB of a 32 MiB command
start_fake cut 1 go
start_relay
out=$("$JDWPC" "127.0.0.1:$port" cut 1048576 33554432 2>&1)
[ "$out" = "cut 1048576 33554432 sent" ] && t_wait 15 grep -q "cut-through" "$T_TMP/server.err" \
    && t_ok "a debugger sends 1 MiB of a 32 MiB command and leaves; the command went cut-through" \
    || t_fail "a debugger sends 1 MiB of a 32 MiB command and leaves; the command went cut-through" "$out" \
        "$(grep relay "$T_TMP/server.err" | tail -5)"
t_wait 15 grep -q "cut short" "$T_TMP/server.err" \
    && t_ok "ddmon closes the VM connection that carries the cut packet" \
    || t_fail "ddmon closes the VM connection that carries the cut packet" \
        "$(grep -E "relay|$key" "$T_TMP/server.err" | tail -8)"
t_ddmon --no-autostart vms --json >"$T_TMP/vms2.json" 2>&1 && grep -q '"schema"' "$T_TMP/vms2.json" \
    && t_ok "ddmon answers its clients after it" \
    || t_fail "ddmon answers its clients after it" "$(head -c 300 "$T_TMP/vms2.json")"

# --- a real JVM: a 4 MiB command and a 4 MiB reply through a 1 MiB budget
if command -v java >/dev/null && command -v javac >/dev/null && t_javac; then
    kill "$DDMON_PID"; t_wait 15 t_dead "$DDMON_PID"
    vm_port=$(t_free_port)
    t_start_jvm "$vm_port" n Sleeper
    t_wait_jvm "$vm_port"
    key="127.0.0.1:$vm_port"
    rm -f "$T_TMP/ddmon.sock"
    base=$(t_free_ports 4)
    t_start_server --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port 0 \
        --max-buffers 1048576 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
    port=""
    t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key")
    out=$("$JDWPC" "127.0.0.1:$port" bigstring $size 2>&1)
    echo "$out" | grep -q "^bigstring [0-9]* $size ok" \
        && t_ok "a 4 MiB string to a JVM and back, intact, through a 1 MiB read budget" \
        || t_fail "a 4 MiB string to a JVM and back, intact, through a 1 MiB read budget" "$out" \
            "$(grep -E "relay|refused" "$T_TMP/server.err" | tail -5)"
    grep -q "reply of $((size + 4 + 11)) bytes from VM to debugger .* cut-through" "$T_TMP/server.err" \
        && t_ok "the reply went cut-through" \
        || t_fail "the reply went cut-through" "$(grep -E "cut-through|relay" "$T_TMP/server.err" | tail -5)"
    # The reply's body is 4 MiB + 4 bytes past its 11-byte head. What came in
    # the read that brought the head is read, and so is what arrives while
    # the debugger's socket is full (it queues behind the pipe): on a loaded
    # machine more of it. At least a quarter going by the pipe shows the
    # splice path carries it (about 97% on CI's machine and here).
    spliced() { grep -o "complete, [0-9]* bytes of it spliced" "$T_TMP/server.err" | awk '{print $2}' | tail -1; }
    quarter_spliced() { local n; n=$(spliced); [ -n "$n" ] && [ "$n" -le $((size + 4)) ] && [ "$n" -ge $(((size + 4) / 4)) ]; }
    quarter_spliced \
        && t_ok "the reply's body went socket to socket: $(spliced) of its $((size + 4)) bytes spliced" \
        || t_fail "the reply's body went socket to socket" "spliced: $(spliced)" "$(grep -E "spliced|splice" "$T_TMP/server.err" | tail -3)"
    out=$("$JDWPC" "127.0.0.1:$port" stall 2000 bigstring $size 2>&1)
    echo "$out" | grep -q "^bigstring [0-9]* $size ok" \
        && t_ok "a debugger that reads the 4 MiB reply 2 s late gets it intact" \
        || t_fail "a debugger that reads the 4 MiB reply 2 s late gets it intact" "$out" \
            "$(grep -E "relay|refused" "$T_TMP/server.err" | tail -5)"
    # (what the debugger's socket did not take waited in the pipe, and the
    # reply's next bytes were read and queued behind it, as before splice)
    # The debugger left without a Dispose: ddmon sent one for it, the JVM
    # closed its connection and ddmon connects again, so for a moment the
    # VM is not listed (seen once under make -j2): wait for it.
    n=$(spliced)
    vm_listed() { t_ddmon --no-autostart vms --json >"$T_TMP/vms3.json" 2>&1 && grep -q "$key" "$T_TMP/vms3.json"; }
    [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -le $((size + 4)) ] && t_wait 10 vm_listed \
        && t_ok "the late-read reply went by the pipe at least in part ($n bytes spliced); ddmon answers its clients" \
        || t_fail "the late-read reply went by the pipe at least in part; ddmon answers its clients" \
            "spliced: $n" "$(grep -E "relay" "$T_TMP/server.err" | tail -5)" "$(head -c 300 "$T_TMP/vms3.json")"
else
    for i in 1 2 3 4 5; do T_N=$((T_N + 1)); echo "ok $T_N # SKIP no OpenJDK (java, javac)"; done
fi
