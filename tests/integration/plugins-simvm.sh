#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The real ddmon with the real plugins against ddmon-simvm: thread tables,
# heap summaries and segment statistics (two heaps) of a GC while the views
# are watched, native heap segments and NHGT must match what simvm reports
# it sent (its --state-file); the
# heap bitmap command writes a valid PNG of the expected size; disabling a
# plugin or its chunk types removes its views and stops its requests; a VM
# whose heap views nobody watches sends no heap segments, one that is
# watched does, until heap.grace_ms after the watch ends.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo threads heap nativeheap || t_skip_all "a standard plugin was configured out"
t_plan 12
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
cmp="$DDM_TOP_SRCDIR/tests/integration/compare_truth.py"

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --two-heaps --base-port "$base" --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --gc-every 0 --thread-activity 0 --zlib
t_wait 10 test -s "$T_TMP/ports"
ports=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base "$(t_free_port)" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 2 ]; }
t_wait 15 ready && t_ok "both simulated VMs are ready" || t_fail "both simulated VMs are ready" "$(cat "$T_TMP/vms.json")"

# Watch (threads are polled, heap summaries and segments switched on, native
# heaps fetched only while someone watches), as a user opens the views
# before asking for a GC. Heap collection is on once each VM's heap summary
# has rows (HPIF "now" goes out with HPSG "every GC", before any later GC).
# (the client itself in the background, not a subshell, so that kill ends it)
"$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart \
    watch --json >"$T_TMP/watch.out" 2>&1 &
w=$!; T_PIDS+=("$w")
summaries() {
    t_ddmon --no-autostart view heap.summary --json >"$T_TMP/summ.json" 2>/dev/null &&
        [ "$(python3 "$q" rows "$T_TMP/summ.json" heap.summary | grep -c '"heap": 1')" = 2 ]
}
t_wait 15 summaries
# A GC on each VM makes it send HPIF and the segments of both heaps; NHGT on request.
ok=1
for pid in $(awk '{print $1}' "$T_TMP/ports"); do
    t_ddmon --no-autostart gc "$pid" >>"$T_TMP/cmds.out" 2>&1 || ok=0
    t_ddmon --no-autostart native-heap "$pid" >>"$T_TMP/cmds.out" 2>&1 || ok=0
done
[ $ok = 1 ] && t_ok "gc and native-heap commands succeed" || t_fail "gc and native-heap commands succeed" "$(cat "$T_TMP/cmds.out")"

# Watch for a while longer, stop, let it settle.
sleep 3; kill $w; wait $w 2>/dev/null
# Polling stops once nobody watches; wait until the last THST reply has been
# sent (simvm's record of what it sent stops changing) before comparing.
thst_of() { python3 -c 'import json,sys; print(json.dumps([v.get("thst_sent") for v in json.load(open(sys.argv[1]))["vms"]]))' "$T_TMP/truth.json"; }
settled() { a=$(thst_of); sleep 1.2; [ "$a" = "$(thst_of)" ]; }
t_wait 15 settled
grep -q '"name":"threads"\|"name": "threads"' "$T_TMP/watch.out" && t_ok "watch --json streams view changes" \
    || t_fail "watch --json streams view changes" "$(head -c 300 "$T_TMP/watch.out")"

# The views first, then the ground truth: simvm lists its last few THST
# replies, and the thread view must equal one of them.
for v in vminfo threads heap.summary heap.segments heap.fragmentation nativeheap.segments nativeheap.summary; do
    t_ddmon --no-autostart view "$v" --json >"$T_TMP/view-$v.json" 2>>"$T_TMP/views.err"
done
sleep 0.5  # simvm rewrites its state file a moment after a change
cp "$T_TMP/truth.json" "$T_TMP/truth-now.json"
# Both heaps of both VMs had their summaries and segments compared, and
# both VMs their native heap summary (compare_truth.py skips what was not sent).
compared() {
    [ "$(grep -c '^ok .*summary size/allocated' "$T_TMP/cmp.out")" = 4 ] &&
        [ "$(grep -c '^ok .*free runs/bytes' "$T_TMP/cmp.out")" = 4 ] &&
        [ "$(grep -c '^ok .*native total memory' "$T_TMP/cmp.out")" = 2 ]
}
python3 "$cmp" "$T_TMP/truth-now.json" "$T_TMP"/view-*.json >"$T_TMP/cmp.out" 2>&1 && compared \
    && t_ok "views match simvm's ground truth ($(grep -c '^ok' "$T_TMP/cmp.out") checks, heap segments of 2x2 heaps)" \
    || t_fail "views match simvm's ground truth (heap summaries, segments and native heaps of both VMs)" "$(grep -v '^ok' "$T_TMP/cmp.out" | head -20)" \
        "$(grep -c 'free runs/bytes' "$T_TMP/cmp.out") heaps' segments compared (want 4)"

# A one-shot view of a view nobody watches now: the answer waits for fresh data.
t_ddmon --no-autostart view threads --json >"$T_TMP/oneshot.json" 2>&1
n_states=$(python3 "$q" rows "$T_TMP/oneshot.json" threads | grep -vc '"state": null')
[ "$n_states" -gt 0 ] && t_ok "a one-shot 'view threads' shows thread states ($n_states rows)" \
    || t_fail "a one-shot 'view threads' shows thread states" "$(head -c 400 "$T_TMP/oneshot.json")"

# Heap bitmap PNG (--raw: the bare bitmap): valid, 512 pixels wide, one pixel per 8-byte unit.
pid=$(awk 'NR==1{print $1}' "$T_TMP/ports")
t_ddmon --no-autostart heap-bitmap "$pid" "$T_TMP/heap.png" --raw >"$T_TMP/png.out" 2>&1
python3 - "$T_TMP/heap.png" "$T_TMP/truth.json" "$pid" >"$T_TMP/png.chk" 2>&1 <<'PY'
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, chunks = 8, []
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); t = data[pos + 4:pos + 8]; body = data[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(t + body) & 0xffffffff == crc, "bad CRC"
    chunks.append((t, body)); pos += 12 + n
w, h = struct.unpack(">II", chunks[0][1][:8])
raw = zlib.decompress(b"".join(b for t, b in chunks if t == b"IDAT"))
truth = json.load(open(sys.argv[2]))
vm = [v for v in truth["vms"] if v["pid"] == int(sys.argv[3])][0]
units = vm["heaps"][0]["segments_sent"]["total_bytes"] // 8
want_h = (units + 511) // 512
print("png", w, h, "units", units, "want height", want_h, "idat", len(raw))
assert w == 512 and h == want_h, "unexpected size"
PY
[ $? = 0 ] && t_ok "heap-bitmap writes a valid PNG of the expected size ($(head -1 "$T_TMP/png.chk"))" \
    || t_fail "heap-bitmap writes a valid PNG of the expected size" "$(cat "$T_TMP/png.out" "$T_TMP/png.chk")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1

# Disabled plugin: no heap views, no heap requests.
G_MESSAGES_DEBUG=ddmon-simvm "$SIMVM" --vms 1 --base-port "$(t_free_port)" --port-file "$T_TMP/ports2" >"$T_TMP/sim2.log" 2>&1 &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/ports2"
t_ddmon --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports2")" --selected-port 0 --disable-plugin=heap \
    snapshot --in-process --wait 2500 --json >"$T_TMP/snap2.json" 2>/dev/null
python3 "$q" names "$T_TMP/snap2.json" >"$T_TMP/names2"
! grep -q " heap\." "$T_TMP/names2" && grep -q " threads" "$T_TMP/names2" && t_ok "--disable-plugin=heap removes the heap views" \
    || t_fail "--disable-plugin=heap removes the heap views" "$(cat "$T_TMP/names2")"
! grep -qE "request (HPIF|HPSG)" "$T_TMP/sim2.log" && t_ok "... and sends no heap requests" \
    || t_fail "... and sends no heap requests" "$(grep -E 'request' "$T_TMP/sim2.log" | head)"

# Disabled chunk types: only thread and name chunks enabled.
: >"$T_TMP/sim2.log.mark"; n0=$(wc -l <"$T_TMP/sim2.log")
t_ddmon --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports2")" --selected-port 0 --chunks=THCR,THDE,THNM,THST,APNM \
    snapshot --in-process --wait 2500 --json >"$T_TMP/snap3.json" 2>/dev/null
python3 "$q" names "$T_TMP/snap3.json" >"$T_TMP/names3"
tail -n +"$((n0 + 1))" "$T_TMP/sim2.log" >"$T_TMP/sim3.log"
! grep -qE " (heap|nativeheap)\." "$T_TMP/names3" && ! grep -qE "request (HPIF|HPSG|NHSG)" "$T_TMP/sim3.log" \
    && grep -q "request THEN" "$T_TMP/sim3.log" && t_ok "--chunks without heap types: no heap views, no heap requests, threads still on" \
    || t_fail "--chunks without heap types: no heap views, no heap requests, threads still on" "$(cat "$T_TMP/names3")" "$(grep request "$T_TMP/sim3.log" | head)"
# Heap collection only while watched: a VM collecting every 200 ms sends
# segments only while its heap views are watched, and stops heap.grace_ms
# (here 1 s) after the last look.
"$SIMVM" --vms 1 --base-port "$(t_free_port)" --port-file "$T_TMP/ports4" --state-file "$T_TMP/truth4.json" \
    --gc-every 200 --thread-activity 0 >"$T_TMP/sim4.log" 2>&1 &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/ports4"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports4")" --selected-port 0 \
    --debug-port-base "$(t_free_port)" --plugin-opt heap.grace_ms=1000 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
gen4() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["vms"][0]["heaps"][0].get("segments_sent"); print(s["generation"] if s else 0)' "$T_TMP/truth4.json" 2>/dev/null; }
ready4() { t_ddmon --no-autostart vms >"$T_TMP/vms4.txt" 2>&1 && grep -q " ready " "$T_TMP/vms4.txt"; }
t_wait 15 ready4
sleep 2; u0=$(gen4); sleep 1.5; u1=$(gen4)
[ -n "$u0" ] && [ "$u0" = "$u1" ] && [ "$u1" = 0 ] && t_ok "unwatched: a VM collecting garbage sends no heap segments" \
    || t_fail "unwatched: a VM collecting garbage sends no heap segments" "segment generations $u0 -> $u1"
"$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart \
    watch --json >/dev/null 2>&1 &
w=$!; T_PIDS+=("$w")
grew() { [ "$(gen4)" -gt "${1:-0}" ]; }
t_wait 10 grew 1 && t_ok "watched: the heap plugin switches segments on (generation $(gen4))" \
    || t_fail "watched: the heap plugin switches segments on" "generation $(gen4)" "$(tail -5 "$T_TMP/server.err")"
kill $w; wait $w 2>/dev/null
sleep 2.5; o0=$(gen4); sleep 1.5; o1=$(gen4)
[ -n "$o0" ] && [ "$o0" = "$o1" ] && t_ok "heap.grace_ms after the watch ends: no more segments ($o0)" \
    || t_fail "heap.grace_ms after the watch ends: no more segments" "segment generations $o0 -> $o1"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
