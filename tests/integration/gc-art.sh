#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon gc` ends as soon as something shows the GC ended, not at its 3 s
# timeout (issue 12, defect 8). ART never answers HPGC, Dalvik answers
# empty. vminfo taps the heap chunks a GC sends while the heap plugin has
# them on (HPST..HPEN, HPIF), and when nothing is on sends a REAQ after the
# HPGC (VMs answer in order). ddmon-simvm in art and in dalvik mode, no GC
# of their own (--gc-every 0), one server:
#  - ART, nothing watched: ends well under 3 s, says ART does not answer;
#  - Dalvik: still "GC done";
#  - snapshot --gc (the heap views watched, segments switched on at the
#    HPGC): the ART VM's gc ends at its segments, which the snapshot has;
#  - heap.always=1 (segments on every GC): ends at the segments.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo heap || t_skip_all "the vminfo or heap plugin was configured out"
t_plan 10
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
FAST_MS=1500 # the gc timeout is 3000 ms

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --mode art --vms 1 --gc-every 0 --thread-activity 0 --app art.app \
    --base-port "$base" --port-file "$T_TMP/ports-art"
"$SIMVM" --mode dalvik --vms 1 --gc-every 0 --thread-activity 0 --app dalvik.app --seed 2 \
    --base-port "$((base + 1))" --port-file "$T_TMP/ports-dalvik" \
    >"$T_TMP/simvm-dalvik.out" 2>"$T_TMP/simvm-dalvik.err" &
T_PIDS+=("$!")
t_wait 10 test -s "$T_TMP/ports-art" && t_wait 10 test -s "$T_TMP/ports-dalvik" \
    || t_fail "simvm started" "$(cat "$T_TMP/simvm.err" "$T_TMP/simvm-dalvik.err")"
art=$(awk '{print $1; exit}' "$T_TMP/ports-art")
dalvik=$(awk '{print $1; exit}' "$T_TMP/ports-dalvik")
ports="$(t_simvm_ports "$T_TMP/ports-art"),$(t_simvm_ports "$T_TMP/ports-dalvik")"

ms() { date +%s%3N; }
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 2 ]; }
start() { # start SERVER-OPTIONS...
    t_start_server --scan=local --scan-ports "$ports" --selected-port 0 \
        --debug-port-base "$(t_free_port)" "$@" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
    t_wait 15 ready
}
# gc VM OUT: runs `ddmon gc VM`, sets rc and took (ms).
gc() {
    local t0
    t0=$(ms)
    t_ddmon --no-autostart gc "$1" >"$2" 2>&1
    rc=$?
    took=$(($(ms) - t0))
}

start && t_ok "the server has the ART and the Dalvik VM ready" \
    || t_fail "the server has the ART and the Dalvik VM ready" "$(cat "$T_TMP/vms.json")"

# 2. ART, no heap view watched: nothing the VM sends can show the GC.
gc "$art" "$T_TMP/art.out"
[ $rc -eq 0 ] && [ "$took" -lt $FAST_MS ] \
    && t_ok "ART, nothing watched: gc ends in ${took} ms (< $FAST_MS)" \
    || t_fail "ART, nothing watched: gc ends in ${took} ms (< $FAST_MS)" "rc=$rc: $(cat "$T_TMP/art.out")"
grep -q "ART does not answer HPGC and no heap information was switched on" "$T_TMP/art.out" \
    && t_ok "... and says ART does not answer HPGC and what ended it" \
    || t_fail "... and says ART does not answer HPGC and what ended it" "$(cat "$T_TMP/art.out")"

# 3. Dalvik answers.
gc "$dalvik" "$T_TMP/dalvik.out"
[ $rc -eq 0 ] && [ "$took" -lt $FAST_MS ] && grep -qx "GC done" "$T_TMP/dalvik.out" \
    && t_ok "Dalvik: \"GC done\" in ${took} ms" \
    || t_fail "Dalvik: \"GC done\" in ${took} ms" "rc=$rc: $(cat "$T_TMP/dalvik.out")"

# 4. snapshot --gc watches the heap views: the ART VM's gc ends at the
# segments its GC sent, and the snapshot has them.
t0=$(ms)
t_ddmon snapshot --gc --wait 200 --json >"$T_TMP/snap.json" 2>"$T_TMP/snap.err"
rc=$?
took=$(($(ms) - t0))
msg=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*[g["message"] for g in d["gc"] if g["vm"].endswith(":" + sys.argv[2])])' \
    "$T_TMP/snap.json" "$(t_simvm_ports "$T_TMP/ports-art")" 2>&1)
[ $rc -eq 0 ] && [[ "$msg" == "GC done (its heap segments arrived"* ]] \
    && t_ok "snapshot --gc: the ART VM's gc ended at its heap segments (snapshot took ${took} ms)" \
    || t_fail "snapshot --gc: the ART VM's gc ended at its heap segments (snapshot took ${took} ms)" "rc=$rc: $msg" "$(tail -3 "$T_TMP/snap.err")"
rows=$(python3 "$q" rows "$T_TMP/snap.json" heap.segments "127.0.0.1:$(t_simvm_ports "$T_TMP/ports-art")" | grep -c .)
[ "${rows:-0}" -gt 0 ] && t_ok "snapshot --gc: the ART VM's segment rows are there ($rows)" \
    || t_fail "snapshot --gc: the ART VM's segment rows are there" "rows=$rows"
[ "$took" -lt 3000 ] && t_ok "snapshot --gc took ${took} ms, less than the gc timeout" \
    || t_fail "snapshot --gc took ${took} ms, less than the gc timeout"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
t_wait 10 t_dead "$DDMON_PID"

# 5. heap.always=1: segments on at every GC from the start.
start --plugin-opt heap.always=1 || t_fail "server with heap.always=1" "$(tail -5 "$T_TMP/server.err")"
sleep 0.3 # the "on" requests went out at READY; let them reach the VM
gc "$art" "$T_TMP/always.out"
[ $rc -eq 0 ] && [ "$took" -lt $FAST_MS ] && grep -q "GC done (its heap segments arrived" "$T_TMP/always.out" \
    && t_ok "heap.always=1, ART: gc ends at its segments in ${took} ms" \
    || t_fail "heap.always=1, ART: gc ends at its segments in ${took} ms" "rc=$rc: $(cat "$T_TMP/always.out")"
gc "$dalvik" "$T_TMP/always-dalvik.out"
[ $rc -eq 0 ] && grep -q "GC done" "$T_TMP/always-dalvik.out" \
    && t_ok "heap.always=1, Dalvik: GC done in ${took} ms" \
    || t_fail "heap.always=1, Dalvik: GC done in ${took} ms" "rc=$rc: $(cat "$T_TMP/always-dalvik.out")"
kill -0 "$DDMON_PID" && ! grep -qE " (critical|error) [a-z0-9-]+( \[[^] ]+\])?: |CRITICAL|runtime error" "$T_TMP/server.err" \
    && t_ok "the server runs on, no criticals" || t_fail "the server runs on, no criticals" "$(tail -5 "$T_TMP/server.err")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
