#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot` returns as soon as discovery is settled; --wait is the
# longest it waits, not the shortest (doc/ddmon.1).
#  1. A warm server knows 10 simulated VMs: `snapshot --wait 20000` comes
#     back complete (every VM named, with its pid and app, "settled": true)
#     in well under half of --wait.
#  2. Without a server (in process) the same holds: discovery, handshakes
#     and the plugins' first replies, then the snapshot.
#  3. A port that accepts and never answers the JDWP handshake keeps
#     discovery unsettled: the snapshot waits for --wait (and not much
#     longer), then prints the VMs it has.
# Times are checked loosely (the suite runs on a loaded machine): only
# "less than half of --wait" and "at least --wait".
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 10
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

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
t_ddmon --no-autostart snapshot --wait 20000 --json >"$T_TMP/warm.json" 2>"$T_TMP/warm.err"; rc=$?
ms=$(( $(now_ms) - start ))
[ $rc -eq 0 ] && every_vm "$T_TMP/warm.json" >"$T_TMP/warm.check" 2>&1 && t_ok "warm server: the snapshot has every VM, named" \
    || t_fail "warm server: the snapshot has every VM, named" "rc=$rc $(tail -1 "$T_TMP/warm.check")" "$(tail -3 "$T_TMP/warm.err")"
[ "$ms" -lt 10000 ] && t_ok "warm server: --wait 20000 is a limit, not a delay ($ms ms)" \
    || t_fail "warm server: --wait 20000 is a limit, not a delay" "$ms ms"
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
t_ddmon --no-autostart --scan=local --scan-ports "$range" snapshot --in-process --wait 20000 --json \
    >"$T_TMP/local.json" 2>"$T_TMP/local.err"; rc=$?
ms=$(( $(now_ms) - start ))
[ $rc -eq 0 ] && every_vm "$T_TMP/local.json" >"$T_TMP/local.check" 2>&1 && t_ok "in process: the snapshot has every VM, named" \
    || t_fail "in process: the snapshot has every VM, named" "rc=$rc $(tail -1 "$T_TMP/local.check")" "$(tail -3 "$T_TMP/local.err")"
[ "$ms" -lt 10000 ] && t_ok "in process: --wait 20000 is a limit, not a delay ($ms ms)" \
    || t_fail "in process: --wait 20000 is a limit, not a delay" "$ms ms"

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
[ "$ms" -lt 6500 ] && t_ok "... and not much longer (--wait 1500: $ms ms)" \
    || t_fail "... and not much longer" "$ms ms"
n=$(python3 "$q" rows "$T_TMP/stall.json" vms 2>/dev/null | grep -c '"state": "ready"')
[ "${n:-0}" -eq 10 ] && t_ok "... and prints the VMs it has (10 ready)" \
    || t_fail "... and prints the VMs it has" "ready=$n"
exit 0
