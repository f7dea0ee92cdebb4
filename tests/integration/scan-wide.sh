#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A scan of every port (--scan-ports=1-65535) lists the VMs there, and
# only them; it goes a slice at a time (core/discovery/discovery_local.c),
# so the server never holds tens of thousands of sockets at once (before,
# one scan opened a socket per port in one loop iteration, ran out of
# descriptors and never listed the VMs on high ports); connected VMs are
# left alone by the later scans (one connection each);
# ddmon's own listening ports (the relay's) are never scanned.
# Scanning every port of a shared network would knock on other programs'
# (and other tests') ports: this test runs only in a network namespace of
# its own, which it makes when run as root (unshare -n), else it is skipped.
if [ -z "${DDM_SCAN_WIDE_NS:-}" ]; then
    if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
        DDM_SCAN_WIDE_NS=1 DDM_IT_NETNS=1 exec unshare -n -- bash -c 'ip link set lo up && exec bash "$0"' "$0"
    fi
    echo "1..0 # SKIP scanning every port needs a network namespace of its own (root, unshare -n)"
    exit 0
fi
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
t_plan 5

# listed_keys: the sorted keys of the VMs `ddmon vms` lists.
listed_keys() {
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null || return 1
    python3 -c 'import json,sys; print(" ".join(sorted(r["key"] for r in json.load(open(sys.argv[1]))["rows"])))' \
        "$T_TMP/vms.json"
}
# connections: each simulated VM's connection count, from its ground truth.
connections() {
    python3 -c 'import json,sys; print(" ".join(str(v["connections"]) for v in json.load(open(sys.argv[1]))["vms"]))' \
        "$T_TMP/truth.json" 2>/dev/null
}
ports_ge() { [ "$(wc -l <"$T_TMP/ports" 2>/dev/null || echo 0)" -ge "$1" ]; }
FD_PEAK=0
# all_listed: the VMs are listed (sampling the server's descriptors meanwhile).
all_listed() {
    local n
    n=$(ls "/proc/$DDMON_PID/fd" 2>/dev/null | wc -l)
    [ "$n" -gt "$FD_PEAK" ] && FD_PEAK=$n
    [ "$(listed_keys)" = "$WANT" ]
}

t_start_simvm --vms 3 --base-port 0 --port-file "$T_TMP/ports" --seed 11 \
    --state-file "$T_TMP/truth.json"
t_wait 10 ports_ge 3
WANT=$(awk '{print "127.0.0.1:" $2}' "$T_TMP/ports" | LC_ALL=C sort | paste -sd' ')
t_check "three simvm VMs on ports $(t_simvm_ports "$T_TMP/ports")" test -n "$WANT"

# The server under a soft descriptor limit of 4,096 where the hard one
# allows it: its cap on sessions in flight is then a quarter of that (1,024;
# discovery_local.c), well under the limit.
FD_LIMIT=$(ulimit -S -n)
if [ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -ge 4096 ]; then
    ulimit -S -n 4096 && FD_LIMIT=4096
fi
t_start_server --scan=local --scan-ports=1-65535 --scan-interval=1000 --debug-port-base=40000 \
    --selected-port=0
if t_wait 90 all_listed; then
    t_ok "a scan of 1-65535 lists exactly the simvm VMs"
else
    t_fail "a scan of 1-65535 lists exactly the simvm VMs" "want: $WANT" "got: $(listed_keys)" \
        "$(tail -5 "$T_TMP/server.err")"
fi
# Three more scans: every port again but the VMs' (and ddmon's own).
for _ in $(seq 1 30); do all_listed; sleep 0.1; done
t_check "later scans leave the connected VMs alone (one connection each: $(connections))" \
    t_is "1 1 1" connections
# the scan's cap (a quarter of the limit, at least 64) and the server's own
if [ "$FD_LIMIT" = unlimited ]; then FD_CAP=4096; else FD_CAP=$((FD_LIMIT / 4)); fi
[ "$FD_CAP" -ge 64 ] || FD_CAP=64
[ "$FD_CAP" -le 4096 ] || FD_CAP=4096
t_check "at most the scan's cap ($FD_CAP) and 64 more descriptors at once while scanning (peak $FD_PEAK)" \
    test "$FD_PEAK" -lt $((FD_CAP + 64))
t_check "never out of descriptors" bash -c '! grep -q "Too many open files" "$1"' _ "$T_TMP/server.err"
t_stop "$DDMON_PID"
