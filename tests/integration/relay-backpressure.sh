#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Backpressure through the debugger relay, both ways, as on a direct
# connection: a debugger that stops reading while a real JVM pours out
# events makes ddmon stop reading from the VM (instead of queueing without
# end), and every event still arrives once it reads again; a VM that stops
# reading while a debugger sends 16 MiB makes ddmon stop reading from the
# debugger, and every byte still arrives, in order, once the VM reads again.
# ddmon answers its clients all the while.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
t_plan 8
export G_MESSAGES_DEBUG=ddmon # the relay logs its pauses at debug level

# --- VM -> debugger: a JVM event storm; the debugger reads nothing until
# ddmon has paused reading from the VM (a file it waits for: a JVM on a
# loaded machine may take far longer than any fixed stall to send the
# 2 MiB that make ddmon pause, seen with a 3 s one), and the clients'
# check runs while it is paused.
if command -v java >/dev/null && command -v javac >/dev/null && t_javac; then
    vm_port=$(t_free_port); base=$(t_free_ports 4)
    t_start_jvm "$vm_port" n Storm
    t_wait 20 grep -q "storm ready" "$T_TMP/jvm-$vm_port.out" && t_wait_jvm "$vm_port"
    key="127.0.0.1:$vm_port"
    t_start_server --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port 0 \
        || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
    port=""
    t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key")
    "$JDWPC" "127.0.0.1:$port" stall "$T_TMP/read" storm 1 >"$T_TMP/storm.out" 2>&1 &
    jd=$!
    t_wait 30 grep -q "pausing reading from VM $key" "$T_TMP/server.err" \
        && t_ok "a debugger that stops reading: ddmon stops reading from the VM" \
        || t_fail "a debugger that stops reading: ddmon stops reading from the VM" "$(grep relay "$T_TMP/server.err" | tail -5)"
    t_ddmon --no-autostart vms --json >"$T_TMP/vms1.json" 2>&1 && grep -q "$key" "$T_TMP/vms1.json" \
        && t_ok "ddmon answers its clients while the VM is paused" \
        || t_fail "ddmon answers its clients while the VM is paused" "$(head -c 300 "$T_TMP/vms1.json")"
    touch "$T_TMP/read"
    wait $jd
    grep -q "^storm 1 [1-9]" "$T_TMP/storm.out" && grep -q "resuming reading from VM $key" "$T_TMP/server.err" \
        && t_ok "once it reads again the events flow ($(cut -d' ' -f3 "$T_TMP/storm.out") events/s) and the VM is read again" \
        || t_fail "once it reads again the events flow and the VM is read again" "$(cat "$T_TMP/storm.out")" \
            "$(grep relay "$T_TMP/server.err" | tail -5)"
    out=$("$JDWPC" "127.0.0.1:$port" version 2>&1)
    echo "$out" | grep -q "^version" && t_ok "the next debugger reaches the JVM" || t_fail "the next debugger reaches the JVM" "$out"
    kill "$DDMON_PID"; t_wait 15 t_dead "$DDMON_PID"
else
    for i in 1 2 3 4; do T_N=$((T_N + 1)); echo "ok $T_N # SKIP no OpenJDK (java, javac)"; done
fi

# --- debugger -> VM: a VM that stops reading while the debugger blasts 16 MiB.
vm_port=$(t_free_port); base=$(t_free_ports 4)
python3 "$DDM_TOP_SRCDIR/tests/integration/fake_jvm.py" "$vm_port" "$T_TMP/go" "$T_TMP/fake.json" 64 \
    >"$T_TMP/fake.out" 2>&1 &
T_PIDS+=("$!")
t_wait 10 grep -q listening "$T_TMP/fake.out"
rm -f "$T_TMP/ddmon.sock"
key="127.0.0.1:$vm_port"
t_start_server --connect "$key" --scan=none --debug-port-base "$base" --selected-port 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
port=""
t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key")
"$JDWPC" "127.0.0.1:$port" blast 64 262144 >"$T_TMP/blast.out" 2>&1 &
jd=$!
t_wait 10 grep -q "VM $key reads slowly; pausing reading from debugger" "$T_TMP/server.err" \
    && t_ok "a VM that stops reading: ddmon stops reading from the debugger" \
    || t_fail "a VM that stops reading: ddmon stops reading from the debugger" "$(grep relay "$T_TMP/server.err" | tail -5)" "$(cat "$T_TMP/fake.out")"
t_ddmon --no-autostart vms --json >"$T_TMP/vms2.json" 2>&1 && grep -q "$key" "$T_TMP/vms2.json" \
    && t_ok "ddmon answers its clients while the debugger is paused" \
    || t_fail "ddmon answers its clients while the debugger is paused" "$(head -c 300 "$T_TMP/vms2.json")"
touch "$T_TMP/go"
t_wait 30 test -s "$T_TMP/fake.json"
wait $jd
python3 - "$T_TMP/fake.json" <<'PY' >"$T_TMP/fake.chk" 2>&1 && t_ok "all 64 packets (16 MiB) reach the VM intact and in order once it reads" \
    || t_fail "all 64 packets (16 MiB) reach the VM intact and in order once it reads" "$(cat "$T_TMP/fake.chk" "$T_TMP/blast.out" "$T_TMP/fake.out")"
import json, sys
r = json.load(open(sys.argv[1]))
print(r)
assert r == {"received": 64, "bad": 0, "ordered": True, "bytes": 64 * (262144 + 11)}, r
PY
grep -q "reading from debugger .* again" "$T_TMP/server.err" \
    && t_ok "... and ddmon read from the debugger again" \
    || t_fail "... and ddmon read from the debugger again" "$(grep relay "$T_TMP/server.err" | tail -5)"
