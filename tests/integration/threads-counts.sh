#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The thread counts of the VM list, for VMs nobody looks at (the threads
# plugin keeps no table for them: their count is as of their last THST),
# checked against the simulator's ground truth (--state-file: what each VM
# last sent, and whether its thread events are on):
#  1. a one-shot view of one VM (`view heap.summary --vm A`) is no look at
#     the VM list: no VM is asked for THST, none for THEN;
#  2. `view threads --vm A` turns A's thread events on (THEN(1)), not B's;
#  3. `ddmon vms` (plain) and `ddmon --json vms` are looks at the VM list:
#     each VM whose count is older than threads.interval is asked for a
#     THST first, and the list shows what B sent for it; C (a second
#     simulator whose threads come and go, --thread-activity) has a new
#     count before each call, and the list must show that new count (a
#     `vms` that answered before its look showed the old one);
#  4. while a live view (`ddmon watch` piped: it watches the VM list)
#     runs and nothing else asks, B's count is refreshed again (the
#     trickle: counts older than 5 s, at most 32 THSTs a second);
#  5. a watch of B's "threads" (a view never made: the watch makes it,
#     as the TUI's threads tab does) shows B's table, as B sent it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads heap || t_skip_all "the threads and heap plugins were not built"
t_plan 8
state="$T_TMP/state.json"

state_c="$T_TMP/state-c.json"

base=$(t_free_ports 3) || t_skip_all "no free ports"
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --seed 5 \
    --state-file "$state" --thread-activity 0
# C: threads born and dying every 400 ms on average, so its count changes
"$SIMVM" --vms 1 --base-port $((base + 2)) --port-file "$T_TMP/ports-c" --seed 6 \
    --state-file "$state_c" --thread-activity 400 >"$T_TMP/simvm-c.out" 2>"$T_TMP/simvm-c.err" &
T_PIDS+=("$!")
port_lines() { cat "$T_TMP/ports" "$T_TMP/ports-c" 2>/dev/null | wc -l; }
t_wait 10 t_is 3 port_lines || t_fail "simvm started 3 VMs" "$(cat "$T_TMP/simvm.err" "$T_TMP/simvm-c.err")"
range=$(t_simvm_ports "$T_TMP/ports"),$(t_simvm_ports "$T_TMP/ports-c")
A=$(awk 'NR==1{print $2}' "$T_TMP/ports")
B=$(awk 'NR==2{print $2}' "$T_TMP/ports")
C=$(awk 'NR==1{print $2}' "$T_TMP/ports-c")

t_start_server --scan=local --scan-ports "$range" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# vm PORT FIELD: a VM's field of the ground truth, as JSON
vm() {
    local f=$state
    [ "$1" = "$C" ] && f=$state_c
    python3 -c 'import json,sys
for v in json.load(open(sys.argv[1]))["vms"]:
    if v["port"] == int(sys.argv[2]): print(json.dumps(v[sys.argv[3]], sort_keys=True))' "$f" "$1" "$2"
}
# Ready without a look at the VM list: both VMs answered READY's THST.
answered() { [ "$(vm "$A" thst_sent)" != null ] && [ "$(vm "$B" thst_sent)" != null ] \
    && [ "$(vm "$C" thst_sent)" != null ]; }
t_wait 30 answered && t_ok "every VM answered the THST of its READY" \
    || t_fail "every VM answered the THST of its READY" "$(cat "$state" "$state_c")"
sleep 1.5 # the counts are older than threads.interval (1 s)

b0=$(vm "$B" thst_sent)
a0=$(vm "$A" thst_sent)
c0=$(vm "$C" thst_sent)
t_ddmon --no-autostart view heap.summary --vm "127.0.0.1:$A" >/dev/null 2>"$T_TMP/v1.err"
sleep 0.5
if [ "$(vm "$A" thst_sent)" = "$a0" ] && [ "$(vm "$B" thst_sent)" = "$b0" ] && [ "$(vm "$C" thst_sent)" = "$c0" ] \
    && [ "$(vm "$A" thread_events)" = false ] && [ "$(vm "$B" thread_events)" = false ]; then
    t_ok "a one-shot view of one VM's heap asks no VM for THST or THEN"
else
    t_fail "a one-shot view of one VM's heap asks no VM for THST or THEN" \
        "A events $(vm "$A" thread_events), B events $(vm "$B" thread_events), A THST changed: $([ "$(vm "$A" thst_sent)" = "$a0" ] && echo no || echo yes), B: $([ "$(vm "$B" thst_sent)" = "$b0" ] && echo no || echo yes)"
fi

t_ddmon --no-autostart view threads --vm "127.0.0.1:$A" >/dev/null 2>"$T_TMP/v2.err"
a_on() { [ "$(vm "$A" thread_events)" = true ]; }
t_wait 5 a_on
if a_on && [ "$(vm "$B" thread_events)" = false ]; then
    t_ok "view threads --vm A turns A's thread events on, not B's"
else
    t_fail "view threads --vm A turns A's thread events on, not B's" \
        "A $(vm "$A" thread_events), B $(vm "$B" thread_events); $(cat "$T_TMP/v2.err")"
fi

# count_of FILE PORT: a VM's threads_count in a `ddmon --json vms` document
count_of() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([r for r in d["rows"] if r["key"].endswith(":" + sys.argv[2])][0].get("threads_count"))' "$1" "$2"
}
# plain_count FILE PORT: the "threads: N" of a VM's line in plain `ddmon vms`
plain_count() { grep -E "[:]$2([^0-9]|$)" "$1" | grep -oE 'threads: [0-9]+' | head -1 | cut -d' ' -f2; }
sent_count() { vm "${1:-$B}" thst_sent | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
model_count() { vm "$C" threads | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
c_moved() { [ "$(model_count)" != "$C_SENT" ]; }
# look_at_new_count OUT ARGS...: once C's count (the model) differs from
# what C last sent, and threads.interval after the last look, `ddmon
# ARGS`; C_SENT then C_NEW: what C had sent before and after. Tried again
# (3 times) if C's count changed back before the look asked it.
look_at_new_count() {
    local out=$1 try
    shift
    for try in 1 2 3; do
        sleep 1.2 # counts older than threads.interval (1 s)
        C_SENT=$(sent_count "$C")
        t_wait 4 c_moved
        t_ddmon --no-autostart "$@" >"$out" 2>"$out.err"
        sleep 0.3 # the state file is rewritten at most every 50 ms
        C_NEW=$(sent_count "$C")
        [ "$C_NEW" != "$C_SENT" ] && return 0
    done
    return 1
}

b1=$(vm "$B" thst_sent)
look_at_new_count "$T_TMP/vms.txt" vms
b2=$(vm "$B" thst_sent)
if [ "$b2" != "$b1" ] && [ "$(plain_count "$T_TMP/vms.txt" "$B")" = "$(sent_count)" ] \
    && [ "$C_NEW" != "$C_SENT" ] && [ "$(plain_count "$T_TMP/vms.txt" "$C")" = "$C_NEW" ]; then
    t_ok "plain 'ddmon vms' asks B for its table first and shows its count, and C's new count"
else
    t_fail "plain 'ddmon vms' asks B for its table first and shows its count, and C's new count" \
        "B's THST changed: $([ "$b2" != "$b1" ] && echo yes || echo no); C sent $C_SENT then $C_NEW, shown $(plain_count "$T_TMP/vms.txt" "$C")" \
        "$(cat "$T_TMP/vms.txt" "$T_TMP/vms.txt.err")"
fi

look_at_new_count "$T_TMP/vms.json" --json vms
b3=$(vm "$B" thst_sent)
if [ "$b3" != "$b2" ] && [ "$(count_of "$T_TMP/vms.json" "$B")" = "$(sent_count)" ] \
    && [ "$C_NEW" != "$C_SENT" ] && [ "$(count_of "$T_TMP/vms.json" "$C")" = "$C_NEW" ]; then
    t_ok "'ddmon --json vms' asks B again after threads.interval, and threads_count is what B sent, and C's new count"
else
    t_fail "'ddmon --json vms' asks B again after threads.interval, and threads_count is what B sent, and C's new count" \
        "B's THST changed: $([ "$b3" != "$b2" ] && echo yes || echo no); count $(count_of "$T_TMP/vms.json" "$B") sent $(sent_count)" \
        "C sent $C_SENT then $C_NEW, shown $(count_of "$T_TMP/vms.json" "$C")"
fi

# The live view watches the VM list; nothing else asks for B's count.
t_ddmon --no-autostart watch >"$T_TMP/watch.out" 2>"$T_TMP/watch.err" &
watch_pid=$!
b_changed() { [ "$(vm "$B" thst_sent)" != "$b3" ]; }
t_wait 15 b_changed && t_ok "while the live view watches the VM list, B's count is refreshed" \
    || t_fail "while the live view watches the VM list, B's count is refreshed" "$(tail -3 "$T_TMP/watch.err")"
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null
[ "$(vm "$B" thread_events)" = false ] && t_ok "B's thread events stayed off" \
    || t_fail "B's thread events stayed off"

python3 - "$T_TMP/ddmon.sock" "127.0.0.1:$B" >"$T_TMP/watch-threads.out" 2>&1 <<'EOF2'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(10)
f = s.makefile("rb")
s.sendall(json.dumps({"op": "watch", "name": "threads", "vm": sys.argv[2]}).encode() + b"\n")
deadline = time.time() + 10
rows = None
while time.time() < deadline:
    d = json.loads(f.readline())
    v = d.get("view") or {}
    if d.get("event") in ("added", "changed") and v.get("name") == "threads":
        assert v.get("vm") == sys.argv[2], v.get("vm")
        rows = v.get("rows") or []
        cols = [c.get("name") if isinstance(c, dict) else c for c in v.get("columns") or []]
        named = [r.get("name") if isinstance(r, dict) else r[cols.index("name")] for r in rows]
        if rows and all(named):  # THEN's THCR burst named them
            break
print("rows:", len(rows or []))
assert rows, "no rows"
EOF2
rc=$?
if [ $rc -eq 0 ] && [ "$(vm "$B" thread_events)" = true ] \
    && [ "$(grep -o 'rows: [0-9]*' "$T_TMP/watch-threads.out")" = "rows: $(vm "$B" threads | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" ]; then
    t_ok "a watch of B's threads view makes it and shows B's table"
else
    t_fail "a watch of B's threads view makes it and shows B's table" "$(tail -3 "$T_TMP/watch-threads.out")" \
        "B events $(vm "$B" thread_events)"
fi
t_stop "$DDMON_PID"
exit 0
