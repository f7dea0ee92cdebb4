#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/scale.sh N [N...]: how ddmon copes with many VMs (not a test).
#
# For each N (default: 100 1000 5000), starts ddmon-simvm with N simulated
# ART VMs on consecutive local ports, then:
#   1. a ddmon server with discovery off: its resident memory is the baseline;
#   2. a ddmon server scanning exactly those ports: the time from its start
#      until `ddmon vms --json` lists all N VMs as ready with their names,
#      and its resident memory once settled.
# Prints N, time to know all N, RSS baseline, RSS with N VMs and RSS per VM.
#
# Environment: DDM_TOP_BUILDDIR (default: the current directory, a build
# tree holding ddmon and ddmon-simvm), BENCH_BASE_PORT (default 20000),
# BENCH_DEBUG_PORT_BASE (default 10000: below the ephemeral ports the
# connections use), BENCH_TIMEOUT (seconds, default 120),
# BENCH_SERVER_ARGS (extra ddmon server options, e.g. --plugin-dir=...).
# Many VMs need many descriptors (ddmon: one socket per VM plus a debugger
# listener per VM; simvm: a listener and a connection per VM): the script
# raises `ulimit -n` as far as the hard limit allows and says so if short.
# Run: make bench-scale, or sh bench/scale.sh 100 1000 from a build tree.
set -u

builddir=${DDM_TOP_BUILDDIR:-$(pwd)}
ddmon=$builddir/ddmon
simvm=$builddir/ddmon-simvm
base_port=${BENCH_BASE_PORT:-20000}
debug_base=${BENCH_DEBUG_PORT_BASE:-10000}
timeout_s=${BENCH_TIMEOUT:-120}
extra_args=${BENCH_SERVER_ARGS:-}

for prog in "$ddmon" "$simvm"; do
    if [ ! -x "$prog" ]; then
        echo "bench/scale: $prog not built (run from a build tree or set DDM_TOP_BUILDDIR)" >&2
        exit 2
    fi
done

[ $# -gt 0 ] || set -- 100 1000 5000

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-bench.XXXXXX") || exit 2
chmod 700 "$tmp"
simvm_pid=
server_pid=

stop_pid() {
    if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
        kill "$1" 2>/dev/null
        i=0
        while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$1" 2>/dev/null
        wait "$1" 2>/dev/null
    fi
}

cleanup() {
    stop_pid "$server_pid"
    stop_pid "$simvm_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() {
    echo $(($(date +%s%N) / 1000000))
}

rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# Start `ddmon server` with a private socket; sets server_pid, waits for the socket.
start_server() {
    sock=$1
    shift
    # shellcheck disable=SC2086
    "$ddmon" server --foreground --socket="$sock" --selected-port=0 \
        --debug-port-base="$debug_base" $extra_args "$@" >>"$tmp/server.log" 2>&1 &
    server_pid=$!
    i=0
    while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "bench/scale: ddmon server exited; its log:" >&2
            tail -20 "$tmp/server.log" >&2
            return 1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    [ -S "$sock" ]
}

# VMs listed ready with a pid and an app name.
count_named_ready() {
    "$ddmon" vms --json --socket="$1" --no-autostart 2>/dev/null |
        grep -o '\["[^"]*",[0-9][0-9]*,"[^"][^"]*",[^]]*"ready"' | wc -l
}

printf '%8s %14s %12s %12s %12s\n' "VMs" "all known (ms)" "RSS base kB" "RSS kB" "kB per VM"

for n in "$@"; do
    want_fds=$((n * 4 + 512))
    if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$want_fds" ]; then
        ulimit -n "$want_fds" 2>/dev/null || ulimit -n "$(ulimit -H -n)" 2>/dev/null
        if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$want_fds" ]; then
            echo "bench/scale: N=$n wants $want_fds descriptors, the limit is $(ulimit -n);" \
                "raise the hard limit (ulimit -H -n) for a fair run" >&2
        fi
    fi

    : >"$tmp/server.log"
    rm -f "$tmp/ports"
    "$simvm" --vms="$n" --base-port="$base_port" --port-file="$tmp/ports" --seed=1 \
        >"$tmp/simvm.log" 2>&1 &
    simvm_pid=$!
    deadline=$(($(now_ms) + timeout_s * 1000))
    while [ "$(cat "$tmp/ports" 2>/dev/null | wc -l)" -lt "$n" ]; do
        if ! kill -0 "$simvm_pid" 2>/dev/null || [ "$(now_ms)" -gt "$deadline" ]; then
            echo "bench/scale: ddmon-simvm did not bring up $n VMs; its log:" >&2
            tail -20 "$tmp/simvm.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    first=$(awk '{ print $2 }' "$tmp/ports" | sort -n | head -1)
    last=$(awk '{ print $2 }' "$tmp/ports" | sort -n | tail -1)

    # 1. Baseline: the same server, no discovery.
    start_server "$tmp/base.sock" --scan=none || exit 1
    sleep 1
    rss0=$(rss_kb "$server_pid")
    stop_pid "$server_pid"
    server_pid=

    # 2. Scanning the simulated VMs' ports.
    t0=$(now_ms)
    deadline=$((t0 + timeout_s * 1000))
    start_server "$tmp/scan.sock" --scan=local --scan-ports="$first-$last" \
        --scan-interval=1000 || exit 1
    known=0
    while :; do
        known=$(count_named_ready "$tmp/scan.sock")
        [ "$known" -ge "$n" ] && break
        if [ "$(now_ms)" -gt "$deadline" ] || ! kill -0 "$server_pid" 2>/dev/null; then
            echo "bench/scale: only $known of $n VMs known after ${timeout_s}s; server log:" >&2
            tail -20 "$tmp/server.log" >&2
            break
        fi
        sleep 0.1
    done
    t1=$(now_ms)
    sleep 1 # settle: pending FEAT replies, view rebuilds
    rss1=$(rss_kb "$server_pid")
    stop_pid "$server_pid"
    server_pid=
    stop_pid "$simvm_pid"
    simvm_pid=

    per_vm=$(awk -v a="$rss1" -v b="$rss0" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')
    if [ "$known" -ge "$n" ]; then
        printf '%8d %14d %12d %12d %12s\n' "$n" $((t1 - t0)) "$rss0" "$rss1" "$per_vm"
    else
        printf '%8d %14s %12d %12d %12s\n' "$n" "incomplete" "$rss0" "$rss1" "$per_vm"
    fi
done
