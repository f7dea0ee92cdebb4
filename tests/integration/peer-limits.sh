#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a broken or hostile peer can cost ddmon (issue 15, faults 3-7), each
# against the real server:
#  - a VM that breaks the protocol after the handshake is retried with
#    growing intervals, not at every scan (connects counted in a window),
#    and its log line names it and the value;
#  - two peers claiming 200 MiB packets share the --max-buffers budget: one
#    is refused with a line naming it, RSS stays near the budget;
#  - thousands of debugger connects log a bounded number of lines;
#  - a scan of ports that include ddmon's own debugger ports, and of the
#    kernel's ephemeral range (set narrow in this private namespace when
#    permitted), never lists a phantom VM;
#  - churning VMs keep the debugger ports within a bound.
# The fake peers: tests/tools/evilvm and small python3 programs (below).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
t_plan 10

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# fake_peer MODE PORT COUNTFILE [ARGS]: a TCP "VM" that echoes the JDWP
# handshake, then misbehaves per MODE; every accepted connection appends a
# line to COUNTFILE. Mode claim N_MIB SEND_MIB: a reply declaring N MiB,
# SEND MiB of it sent, then silence.
cat >"$T_TMP/peer.py" <<'PY'
import socket, sys, threading, time
mode, port, count = sys.argv[1], int(sys.argv[2]), sys.argv[3]
args = [int(a) for a in sys.argv[4:]]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
def serve(c):
    try:
        got = b""
        while len(got) < 14:
            b = c.recv(14 - len(got))
            if not b:
                return
            got += b
        c.sendall(b"JDWP-Handshake")
        if mode == "claim":
            total, send = args[0] << 20, args[1] << 20
            c.sendall(total.to_bytes(4, "big") + b"\x00\x00\x00\x07\x80\x00\x00")
            piece = b"\x00" * (1 << 20)
            for _ in range(send >> 20):
                c.sendall(piece)
            time.sleep(60)
    except OSError:
        pass
    finally:
        c.close()
while True:
    c, _ = srv.accept()
    with open(count, "a") as f:
        f.write("connect\n")
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
start_peer() { python3 "$T_TMP/peer.py" "$@" >>"$T_TMP/peer.err" 2>&1 & T_PIDS+=("$!"); }

# ---- a protocol violator backs off; its line names it and the value
# evilvm (tests/tools/evilvm.c) answers like Dalvik until the VM is READY,
# then sends a header declaring 5 bytes, on every connection.
EVIL=$DDM_TOP_BUILDDIR/tests/tools/evilvm
"$EVIL" --port-file "$T_TMP/evil.port" --app bad --pid 4242 greet header 5 hold \
    >"$T_TMP/evil.out" 2>"$T_TMP/evil.err" &
T_PIDS+=($!)
t_wait 5 test -s "$T_TMP/evil.port"
bad=$(awk '{print $2}' "$T_TMP/evil.port")
t_start_server --scan=local --scan-ports "$bad" --scan-interval 200 --selected-port 0 \
    --debug-port-base "$(t_free_ports 8)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
sleep 12
n=$(grep -c '^conn [0-9]* step 1 ' "$T_TMP/evil.out")
# every 200 ms without backoff: ~50; with it (2, 4, 8 s): 4
[ "$n" -ge 2 ] && [ "$n" -le 6 ] && t_ok "a protocol violator is retried with growing intervals ($n connects in 12 s)" \
    || t_fail "a protocol violator is retried with growing intervals" "connects in 12 s: $n (scan every 200 ms)"
grep "127.0.0.1:$bad" "$T_TMP/server.err" | grep -q "declared length 5" \
    && t_ok "its warning names the VM and the declared length" \
    || t_fail "its warning names the VM and the declared length" "$(grep -i "length" "$T_TMP/server.err" | tail -3)"
t_stop "$DDMON_PID"

# ---- two peers claiming 200 MiB share the budget
p1=$(t_free_port); p2=$(t_free_port)
start_peer claim "$p1" "$T_TMP/c1.count" 200 100
start_peer claim "$p2" "$T_TMP/c2.count" 200 100
t_wait 5 bash -c "(exec 3<>/dev/tcp/127.0.0.1/$p1) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$p2) 2>/dev/null"
rm -f "$T_TMP/ddmon.sock"
# (ASan's quarantine would keep every freed buffer resident: none here)
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0" \
t_start_server --scan=local --scan-ports "$p1,$p2" --selected-port 0 --max-buffers 64M \
    --debug-port-base "$(t_free_ports 8)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
base_rss=$(rss_kb "$DDMON_PID")
t_wait 20 grep -q "max-buffers" "$T_TMP/server.err"
sleep 2
peak=$(awk '/^VmHWM:/ { print $2 }' "/proc/$DDMON_PID/status")
grep -E "127.0.0.1:($p1|$p2)" "$T_TMP/server.err" | grep -q "refused: a buffer of [0-9]* bytes.*--max-buffers" \
    && t_ok "the peer past the budget is refused, the line names it and the sizes" \
    || t_fail "the peer past the budget is refused, the line names it and the sizes" "$(tail -5 "$T_TMP/server.err")"
# 2 x 100 MiB arrived; the budget is 64 MiB (and a refused buffer goes at once)
grow=$(( (peak - base_rss) / 1024 ))
[ "$grow" -lt 140 ] && t_ok "two 200 MiB claims cost ${grow} MiB at the peak (budget 64 MiB)" \
    || t_fail "two 200 MiB claims cost at most the budget and its doubling" "peak growth ${grow} MiB"
t_check "ddmon answers during the claims" t_ddmon --no-autostart vms
t_stop "$DDMON_PID"

# ---- 2000 debugger connects log a bounded number of lines
vmp=$(t_free_port); dbase=$(t_free_ports 8)
t_start_simvm --vms 1 --base-port "$vmp" --port-file "$T_TMP/ports"
t_wait 10 test -s "$T_TMP/ports"
rm -f "$T_TMP/ddmon.sock"
t_start_server --scan=local --scan-ports "$vmp" --selected-port 0 --debug-port-base "$dbase" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_debug_port "127.0.0.1:$vmp"
dport=$(t_debug_port "127.0.0.1:$vmp")
before=$(wc -l <"$T_TMP/server.err")
t0=$(date +%s)
timeout 120 python3 - "$dport" <<'PY'
import socket, sys
port = int(sys.argv[1])
for i in range(2000):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 4 == 1:
        # some attach and leave (the next ones are held while the VM is
        # put back), the rest close at once or mid-handshake
        s.settimeout(0.05)
        s.sendall(b"JDWP-Handshake")
        try:
            s.recv(14)
        except OSError:
            pass
    elif i % 4 == 2:
        s.sendall(b"JDWP-Hand")
    s.close()
PY
sleep 1
after=$(wc -l <"$T_TMP/server.err")
lines=$((after - before))
# each key (the port's closes, holds and refusals, the VM's relay lines,
# the VM's closes) prints 5 lines and a summary per 10 s window, and a
# debugger that really attaches logs its session (at most one a second:
# the VM is put back after each); without limits it is one line or more
# per connect
el=$(( $(date +%s) - t0 ))
cap=$(( 40 * (1 + el / 10) + 2 * (el + 1) ))
[ "$lines" -le "$cap" ] && t_ok "2000 debugger connects logged $lines lines (at most $cap)" \
    || t_fail "2000 debugger connects log a bounded number of lines" "$lines lines, more than $cap" "$(tail -5 "$T_TMP/server.err")"
# (the last debugger's leaving may have the VM reopened: wait for it)
t_wait 15 t_is "$dport" t_debug_port "127.0.0.1:$vmp" && t_ok "the VM is still listed with its debugger port" \
    || t_fail "the VM is still listed with its debugger port" "$(t_debug_port "127.0.0.1:$vmp")"
t_stop "$DDMON_PID"
t_stop "$SIMVM_PID"

# ---- no phantom VMs: ddmon's own ports and self-connects
# The VM on B, debugger ports from B+5 inside the scanned range B..B+15;
# when the namespace allows it, the kernel's ephemeral range is B+8..B+15.
B=$(t_free_ports 16)
t_start_simvm --vms 1 --base-port "$B" --port-file "$T_TMP/ports-own"
t_wait 10 test -s "$T_TMP/ports-own"
eph=no
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/net/ipv4/ip_local_port_range ] &&
    [ "$(readlink /proc/self/ns/net)" != "$(readlink /proc/1/ns/net 2>/dev/null)" ]; then
    old_range=$(cat /proc/sys/net/ipv4/ip_local_port_range)
    sysctl -q -w net.ipv4.ip_local_port_range="$((B + 8)) $((B + 15))" 2>/dev/null && eph=yes
fi
rm -f "$T_TMP/ddmon.sock"
t_start_server --scan=local --scan-ports "$B-$((B + 15))" --scan-interval 100 --selected-port 0 \
    --debug-port-base "$((B + 5))" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_debug_port "127.0.0.1:$B"
# others_listener PORT: true when a process other than this section's
# ddmon and simvm listens on PORT. The narrowed ephemeral range is the
# whole namespace's, so while it lasts another test of a parallel suite
# may get listeners in it (a simvm or relay port the kernel chose), and
# the scan rightly lists those as VMs: they are not phantoms. A phantom is
# a key on ddmon's own listener, or on no listener (a self-connect).
others_listener() {
    local pids
    pids=$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
    [ -n "$pids" ] || return 1
    for p in $pids; do
        [ "$p" = "$DDMON_PID" ] || [ "$p" = "$SIMVM_PID" ] && return 1
    done
    return 0
}
# Without ss -p (no iproute2, or no pids shown) nobody's listener can be
# told from ours: every other key counts, as before. A key counts when two
# looks in a row list it (another test's VM that closed between the look
# and ss is no phantom; a phantom of ours stays).
ss -Hltnp 2>/dev/null | grep -q 'pid=' || others_listener() { return 1; }
phantoms="" prev=""
for _ in $(seq 1 30); do
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null
    k=$(python3 -c 'import json,sys; print(" ".join(r["key"] for r in json.load(open(sys.argv[1]))["rows"] if r["key"] != sys.argv[2]))' \
        "$T_TMP/vms.json" "127.0.0.1:$B")
    cur=""
    for key in $k; do
        others_listener "${key##*:}" && continue
        cur="$cur $key "
        case $prev in *" $key "*) phantoms="$phantoms $key" ;; esac
    done
    prev=$cur
    sleep 0.2
done
[ -z "$phantoms" ] && t_ok "no phantom VM on ddmon's own debugger ports or self-connects (ephemeral range narrowed: $eph)" \
    || t_fail "no phantom VM on ddmon's own debugger ports or self-connects" "listed:$phantoms" "$(grep -i "itself\|connected" "$T_TMP/server.err" | tail -3)"
[ $eph = yes ] && sysctl -q -w net.ipv4.ip_local_port_range="$old_range" 2>/dev/null
t_stop "$DDMON_PID"
t_stop "$SIMVM_PID"

# ---- churning VMs keep the debugger ports within a bound
# The port map remembers 200 gone apps on the first 200 debugger ports (as
# a long churn leaves it): new apps may pass over only 32 of them.
cb=$(t_free_ports 40); db=$(t_free_ports 300)
t_start_simvm --vms 20 --churn 300 --base-port "$cb" --port-file "$T_TMP/ports-churn" --seed 7
t_wait 10 test -s "$T_TMP/ports-churn"
rm -f "$T_TMP/ddmon.sock"
{ echo "ddmon-ports 1"; for i in $(seq 0 199); do printf '\tcom.example.gone%d\t%d\n' "$i" $((db + i)); done; } \
    >"$T_TMP/ddmon.ports"
chmod 600 "$T_TMP/ddmon.ports"
t_start_server --scan=local --scan-ports "$cb-$((cb + 39))" --scan-interval 200 --selected-port 0 \
    --debug-port-base "$db" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
maxp=0
for _ in $(seq 1 30); do
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null
    m=$(python3 -c 'import json,sys; print(max([r.get("debug_port") or 0 for r in json.load(open(sys.argv[1]))["rows"]] + [0]))' \
        "$T_TMP/vms.json" 2>/dev/null || echo 0)
    [ "$m" -gt "$maxp" ] && maxp=$m
    sleep 0.5
done
churned=$(grep -c "churn: .* exits" "$T_TMP/simvm.err" 2>/dev/null || echo 0)
span=$((maxp - db))
# 20 VMs + DDM_RELAY_RESERVED_SKIP_MAX (32) + a few VMs between exit and notice
[ "$maxp" -gt 0 ] && [ "$span" -lt 64 ] && t_ok "churn ($churned exits) beside 200 remembered apps: the highest debugger port is base+$span" \
    || t_fail "churn beside 200 remembered apps keeps the highest debugger port within base+64" "highest base+$span after $churned exits"
t_check "the server is still up after the churn" t_ddmon --no-autostart vms
t_stop "$DDMON_PID"
exit $((T_FAILED > 0))
