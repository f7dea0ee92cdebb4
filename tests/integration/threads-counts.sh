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
#     THST first, and the list shows what B sent for it;
#  4. while a live view (`ddmon watch` piped: it watches the VM list)
#     runs and nothing else asks, B's count is refreshed again (the
#     trickle: counts older than 5 s, at most 32 THSTs a second);
#  5. a watch of B's "threads" (a view never made: the watch makes it,
#     as the TUI's threads tab does) shows B's table, as B sent it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads heap || t_skip_all "the threads and heap plugins were not built"
t_plan 8
state="$T_TMP/state.json"

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --seed 5 \
    --state-file "$state" --thread-activity 0
port_lines() { wc -l <"$T_TMP/ports"; }
t_wait 10 t_is 2 port_lines || t_fail "simvm started 2 VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
A=$(awk 'NR==1{print $2}' "$T_TMP/ports")
B=$(awk 'NR==2{print $2}' "$T_TMP/ports")

t_start_server --scan=local --scan-ports "$range" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# vm PORT FIELD: a VM's field of the ground truth, as JSON
vm() {
    python3 -c 'import json,sys
for v in json.load(open(sys.argv[1]))["vms"]:
    if v["port"] == int(sys.argv[2]): print(json.dumps(v[sys.argv[3]], sort_keys=True))' "$state" "$1" "$2"
}
# Ready without a look at the VM list: both VMs answered READY's THST.
answered() { [ "$(vm "$A" thst_sent)" != null ] && [ "$(vm "$B" thst_sent)" != null ]; }
t_wait 30 answered && t_ok "both VMs answered the THST of their READY" \
    || t_fail "both VMs answered the THST of their READY" "$(cat "$state")"
sleep 1.5 # the counts are older than threads.interval (1 s)

b0=$(vm "$B" thst_sent)
a0=$(vm "$A" thst_sent)
t_ddmon --no-autostart view heap.summary --vm "127.0.0.1:$A" >/dev/null 2>"$T_TMP/v1.err"
sleep 0.5
if [ "$(vm "$A" thst_sent)" = "$a0" ] && [ "$(vm "$B" thst_sent)" = "$b0" ] \
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

# count_of FILE: B's threads_count in a `ddmon --json vms` document
count_of() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print([r for r in d["rows"] if r["key"].endswith(":" + sys.argv[2])][0].get("threads_count"))' "$1" "$B"
}
sent_count() { vm "$B" thst_sent | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

b1=$(vm "$B" thst_sent)
t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>"$T_TMP/vms.err"
b2=$(vm "$B" thst_sent)
if [ "$b2" != "$b1" ] && grep -q "threads: $(sent_count)" "$T_TMP/vms.txt"; then
    t_ok "plain 'ddmon vms' asks B for its table first and shows its count"
else
    t_fail "plain 'ddmon vms' asks B for its table first and shows its count" \
        "B's THST changed: $([ "$b2" != "$b1" ] && echo yes || echo no)" "$(cat "$T_TMP/vms.txt" "$T_TMP/vms.err")"
fi

sleep 1.5
t_ddmon --no-autostart --json vms >"$T_TMP/vms.json" 2>"$T_TMP/vmsj.err"
b3=$(vm "$B" thst_sent)
if [ "$b3" != "$b2" ] && [ "$(count_of "$T_TMP/vms.json")" = "$(sent_count)" ]; then
    t_ok "'ddmon --json vms' asks B again after threads.interval, and threads_count is what B sent"
else
    t_fail "'ddmon --json vms' asks B again after threads.interval, and threads_count is what B sent" \
        "B's THST changed: $([ "$b3" != "$b2" ] && echo yes || echo no); count $(count_of "$T_TMP/vms.json") sent $(sent_count)"
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
