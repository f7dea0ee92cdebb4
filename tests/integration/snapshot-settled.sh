#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot` returns as soon as discovery is settled; --wait is the
# longest it waits, not the shortest (doc/ddmon.1).
#  1. A warm server knows 10 simulated VMs: `snapshot --wait 600000` comes
#     back complete (every VM named, with its pid and app, "settled": true).
#  2. Without a server (in process) the same holds: discovery, handshakes
#     and the plugins' first replies, then the snapshot.
#  3. A port that accepts and never answers the JDWP handshake keeps
#     discovery unsettled: the snapshot waits for --wait, then prints the
#     VMs it has, "settled": true (its 30 s cap would make that false).
#  4. A VM that never answers its first requests (evilvm: greet, then
#     silent), with --request-timeout 600000, keeps discovery unsettled
#     for 10 minutes: only --wait can end the snapshot before the cap, so
#     "settled": true proves that --wait ended it (3's handshake times out
#     after 5 s, which also settles discovery).
# No check has an upper time bound (a loaded machine must not fail them;
# how fast the snapshot is, bench/snapshot.sh measures): --wait in 1 and 2
# is 10 minutes, and the snapshot runs under a 120 s `timeout` that only
# guards against a hang, so it can only come back if --wait was a limit.
# The one time checked is a lower bound: 3 and 4 waited at least --wait.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 12
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); } # for the messages and 3's lower bound
LONG_WAIT=600000 # 10 min: never reached while the guard runs
GUARD_S=120      # a hang guard, far below LONG_WAIT
# settled_value FILE: the snapshot's "settled" member (true, false, or what
# was wrong); settled FILE: it is true.
settled_value() {
    python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get("settled")))' "$1" 2>&1 | tail -1
}
settled() { [ "$(settled_value "$1")" = true ]; }
# returned RC FILE: a snapshot came back by itself (not ended by the
# guard's timeout: rc 124, or 137 after its SIGKILL) and settled (not cut
# at its cap). With --wait $LONG_WAIT (1, 2) neither --wait nor the cap
# (--wait + 500 ms) can have passed: discovery settling ended it. In 4,
# where discovery cannot settle in time, --wait did.
returned() { [ "$1" != 124 ] && [ "$1" != 137 ] && settled "$2"; }
returned_why() {
    case $1 in
    124 | 137) echo "still waiting after ${GUARD_S} s (rc $1 from timeout): --wait was taken as a delay" ;;
    *) echo "rc=$1, settled: $(settled_value "$2")" ;;
    esac
}

base=$(t_free_ports 10) || t_skip_all "no free ports"
t_start_simvm --vms 10 --base-port "$base" --port-file "$T_TMP/ports" --seed 16
port_lines() { wc -l <"$T_TMP/ports"; }
t_wait 10 t_is 10 port_lines && t_ok "simvm started 10 VMs" || t_fail "simvm started 10 VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")

# every_vm FILE: each simulated VM is in snapshot FILE with its pid and app
every_vm() {
    python3 - "$1" "$T_TMP/ports" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["pid"]: r for r in doc["global"]["vms"]["rows"]}  # doc/json.md: rows keyed by column
missing = []
for line in open(sys.argv[2]):
    pid, port, app = line.split()[:3]
    r = rows.get(int(pid))
    if r is None or r.get("app") != app or r.get("state") != "ready":
        missing.append("%s/%s: %s" % (pid, app, r))
if missing:
    sys.exit("missing: " + "; ".join(missing))
assert doc["settled"] is True, "not settled"
EOF
}

# 1. warm server
t_start_server --scan=local --scan-ports "$range" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 10 ]; }
t_wait 30 ready && t_ok "the server knows the 10 simulated VMs" || t_fail "the server knows the 10 simulated VMs" "$(cat "$T_TMP/vms.json")"
sleep 1 # warm: let the first fills finish
start=$(now_ms)
timeout "$GUARD_S" "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --no-autostart snapshot --wait "$LONG_WAIT" --json >"$T_TMP/warm.json" 2>"$T_TMP/warm.err"; rc=$?
ms=$(( $(now_ms) - start ))
[ $rc -eq 0 ] && every_vm "$T_TMP/warm.json" >"$T_TMP/warm.check" 2>&1 && t_ok "warm server: the snapshot has every VM, named" \
    || t_fail "warm server: the snapshot has every VM, named" "rc=$rc $(tail -1 "$T_TMP/warm.check")" "$(tail -3 "$T_TMP/warm.err")"
returned "$rc" "$T_TMP/warm.json" && t_ok "warm server: --wait $LONG_WAIT is a limit, not a delay (back, settled, in $ms ms)" \
    || t_fail "warm server: --wait $LONG_WAIT is a limit, not a delay" "$(returned_why "$rc" "$T_TMP/warm.json")"
# The server's view of itself: to a client that watches, the version reply
# says "settled" (held until the polls the watch woke are answered when the
# watch made views watched); to one that does not, it says nothing about it.
python3 - "$DDMON" "$T_TMP/ddmon.sock" >"$T_TMP/version.out" 2>&1 <<'EOF'
import json, socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[2])
    return s, s.makefile("rb")
def reply(f, key):
    while True:  # skip the watch's events
        line = f.readline()
        assert line, "the server closed"
        d = json.loads(line)
        if key in d:
            return d
s, f = conn()
s.sendall(b'{"op":"version"}\n')
r = reply(f, "version")
print("not watching:", r)
assert r["ok"] is True and "settled" not in r
s, f = conn()
s.sendall(b'{"op":"watch"}\n')
assert reply(f, "watching")["ok"] is True
deadline = time.time() + 10
while True:
    s.sendall(b'{"op":"version"}\n')
    r = reply(f, "version")
    if r["settled"] is True or time.time() > deadline:
        break
    time.sleep(0.05)
print("watching:", r)
assert r["ok"] is True and r["settled"] is True
EOF
rc=$?
[ $rc -eq 0 ] && t_ok "the version reply says the warm server is settled, to a client that watches" \
    || t_fail "the version reply says the warm server is settled, to a client that watches" "$(tail -3 "$T_TMP/version.out")"
t_stop "$DDMON_PID"

# 2. in process (no server): a VM accepts one JDWP connection, so after the server is gone
t_wait 10 test ! -S "$T_TMP/ddmon.sock"
start=$(now_ms)
timeout "$GUARD_S" "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --no-autostart --scan=local --scan-ports "$range" snapshot --in-process --wait "$LONG_WAIT" --json \
    >"$T_TMP/local.json" 2>"$T_TMP/local.err"; rc=$?
ms=$(( $(now_ms) - start ))
[ $rc -eq 0 ] && every_vm "$T_TMP/local.json" >"$T_TMP/local.check" 2>&1 && t_ok "in process: the snapshot has every VM, named" \
    || t_fail "in process: the snapshot has every VM, named" "rc=$rc $(tail -1 "$T_TMP/local.check")" "$(tail -3 "$T_TMP/local.err")"
returned "$rc" "$T_TMP/local.json" && t_ok "in process: --wait $LONG_WAIT is a limit, not a delay (back, settled, in $ms ms)" \
    || t_fail "in process: --wait $LONG_WAIT is a limit, not a delay" "$(returned_why "$rc" "$T_TMP/local.json")"

# 3. a port that accepts and never answers the handshake
stall=$(t_free_port) || t_fail "a free port for the stalled VM"
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
print("listening", flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c)   # never answers "JDWP-Handshake"
' "$stall" >"$T_TMP/stall.out" 2>&1 &
T_PIDS+=($!)
t_wait 10 grep -q listening "$T_TMP/stall.out" || t_fail "the stalled listener started" "$(cat "$T_TMP/stall.out")"
start=$(now_ms)
t_ddmon --no-autostart --scan=local --scan-ports "$range,$stall" snapshot --in-process --wait 1500 --json \
    >"$T_TMP/stall.json" 2>"$T_TMP/stall.err"; rc=$?
ms=$(( $(now_ms) - start ))
[ $rc -eq 0 ] && [ "$ms" -ge 1500 ] && t_ok "a stalled handshake makes the snapshot wait for --wait ($ms ms)" \
    || t_fail "a stalled handshake makes the snapshot wait for --wait" "rc=$rc $ms ms" "$(tail -3 "$T_TMP/stall.err")"
# Not until the 30 s cap: the snapshot ended through --wait and 500 ms of
# quiet, which says "settled": true (the cap says false; doc/json.md).
settled "$T_TMP/stall.json" && ! grep -q "printing what there is" "$T_TMP/stall.err" \
    && t_ok "... and then answers, \"settled\": true (not cut at the 30 s cap)" \
    || t_fail "... and then answers, \"settled\": true (not cut at the 30 s cap)" \
        "settled: $(settled_value "$T_TMP/stall.json")" "$(tail -3 "$T_TMP/stall.err")"
n=$(python3 "$q" rows "$T_TMP/stall.json" vms 2>/dev/null | grep -c '"state": "ready"')
[ "${n:-0}" -eq 10 ] && t_ok "... and prints the VMs it has (10 ready)" \
    || t_fail "... and prints the VMs it has" "ready=$n"

# 4. a VM whose first requests stay unanswered for longer than the guard
"$DDM_TOP_BUILDDIR/tests/tools/evilvm" --port-file "$T_TMP/evil.port" --pid 4242 --app com.silent \
    greet silent 600000 >"$T_TMP/evil.out" 2>"$T_TMP/evil.err" &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/evil.port" || t_fail "evilvm started" "$(cat "$T_TMP/evil.err")"
evil=$(awk '{print $2; exit}' "$T_TMP/evil.port")
start=$(now_ms)
timeout "$GUARD_S" "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --no-autostart --scan=local --scan-ports "$evil" --request-timeout "$LONG_WAIT" \
    snapshot --in-process --wait 1500 --json >"$T_TMP/silent.json" 2>"$T_TMP/silent.err"; rc=$?
ms=$(( $(now_ms) - start ))
n=$(python3 "$q" rows "$T_TMP/silent.json" vms 2>/dev/null | grep -c '"app": "com.silent"')
[ $rc -eq 0 ] && [ "$ms" -ge 1500 ] && [ "${n:-0}" -eq 1 ] \
    && t_ok "a VM that answers none of its first requests makes the snapshot wait for --wait ($ms ms)" \
    || t_fail "a VM that answers none of its first requests makes the snapshot wait for --wait" \
        "rc=$rc $ms ms, rows of com.silent: $n" "$(tail -3 "$T_TMP/silent.err")" "$(tail -2 "$T_TMP/evil.out")"
returned "$rc" "$T_TMP/silent.json" && ! grep -q "printing what there is" "$T_TMP/silent.err" \
    && t_ok "... and then answers, \"settled\": true: --wait ended it (not discovery, not the cap)" \
    || t_fail "... and then answers, \"settled\": true: --wait ended it (not discovery, not the cap)" \
        "$(returned_why "$rc" "$T_TMP/silent.json")" "$(tail -3 "$T_TMP/silent.err")"
exit 0
