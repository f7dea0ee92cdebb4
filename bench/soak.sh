#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/soak.sh: does ddmon stay flat while VMs come and go? (not a test)
#
# Starts ddmon-simvm with N churning VMs (--churn: every MS some VMs exit
# and new ones start, half with a gone app's name) and a ddmon server
# scanning their ports, for M minutes. Every S seconds it samples the
# server's resident memory (VmRSS), its open descriptors and the debugger
# ports in use (lowest and highest, from `ddmon vms --json`). At the end
# it prints the samples and the RSS slope after the warm-up (least squares,
# KiB per minute; the goal is under 1 KiB/min), the descriptor range and
# the highest debugger port above the base. With -r R it runs R times and
# prints the median slope.
#
# As root it runs itself in a private network namespace (unshare -n, lo
# up), so its ports are its own; otherwise it uses ports from 20000 up.
#
# Usage: bench/soak.sh [-n VMS] [-m MINUTES] [-s SAMPLE_S] [-c CHURN_MS]
#                      [-w WARMUP_S] [-r RUNS]
#   defaults: -n 50 -m 3 -s 5 -c 1000 -w 60 -r 1 (a few minutes); an
#   overnight soak: -n 200 -m 60 -r 3.
# Environment: DDM_TOP_BUILDDIR (default: the current directory), a build
# tree holding ddmon and ddmon-simvm; build it without --enable-sanitizers
# (a sanitizer's quarantine grows RSS by itself). BENCH_SERVER_ARGS: extra
# server options.
set -u

vms=50 minutes=3 sample_s=5 churn_ms=1000 warmup_s=60 runs=1
while getopts "n:m:s:c:w:r:h" o; do
    case $o in
    n) vms=$OPTARG ;; m) minutes=$OPTARG ;; s) sample_s=$OPTARG ;;
    c) churn_ms=$OPTARG ;; w) warmup_s=$OPTARG ;; r) runs=$OPTARG ;;
    *) sed -n '3,27p' "$0"; exit 2 ;;
    esac
done

. "$(dirname "$0")/lib.sh" --netns SOAK_IN_NETNS "$@" # as root: again in a private network namespace

here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
BENCH_NAME=bench/soak keep=0
. "$here/lib.sh"
builddir=$DDM_TOP_BUILDDIR
ddmon=$builddir/ddmon
simvm=$builddir/ddmon-simvm
extra_args=${BENCH_SERVER_ARGS:-}
for prog in "$ddmon" "$simvm"; do
    [ -x "$prog" ] || { echo "bench/soak: $prog not built (set DDM_TOP_BUILDDIR)" >&2; exit 2; }
done
case "$(ldd "$ddmon" 2>/dev/null)" in
*libasan*) echo "bench/soak: note: $ddmon is built with ASan; its quarantine grows RSS on its own" >&2 ;;
esac
ulimit -n "$(ulimit -Hn)" 2>/dev/null

tmp=$T_TMP # removed at exit (bench/lib.sh), after what still runs is stopped
simvm_pid='' server_pid=''
trap 'exit 130' INT TERM

# N+40 consecutive ports no one listens on, from $1 up.
free_span() {
    local base=$1 n=$2 i
    while :; do
        for ((i = 0; i < n; i++)); do
            (exec 3<>"/dev/tcp/127.0.0.1/$((base + i))") 2>/dev/null && break
        done
        [ "$i" = "$n" ] && { echo "$base"; return; }
        base=$((base + i + 1))
    done
}

# One run: prints the samples; "slope fd_min fd_max port_high samples" go
# to $tmp/result.
soak_once() {
    local run=$1 span=$((vms + vms / 2 + 8))
    local vm_base dbg_base sock t0 end now rss fds ports
    vm_base=$(free_span 20000 "$span")
    dbg_base=$(free_span $((vm_base + span + 100)) $((span + 80)))
    sock=$tmp/ddmon-$run.sock
    "$simvm" --vms "$vms" --churn "$churn_ms" --base-port "$vm_base" --seed "$run" \
        --port-file "$tmp/ports" >"$tmp/simvm.log" 2>&1 &
    simvm_pid=$!
    T_PIDS+=("$simvm_pid")
    # shellcheck disable=SC2086
    "$ddmon" --socket "$sock" --no-adb-start server --foreground --scan=local \
        --scan-ports "$vm_base-$((vm_base + span - 1))" --debug-port-base "$dbg_base" \
        --selected-port 0 $extra_args >"$tmp/server.log" 2>&1 &
    server_pid=$!
    T_PIDS+=("$server_pid")
    for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
    t0=$(date +%s)
    end=$((t0 + minutes * 60))
    : >"$tmp/samples"
    printf '# run %d: %d VMs churning every %d ms, %d min; t_s rss_kib fds vms port_lo port_hi\n' \
        "$run" "$vms" "$churn_ms" "$minutes"
    while now=$(date +%s) && [ "$now" -lt "$end" ]; do
        sleep "$sample_s"
        kill -0 "$server_pid" 2>/dev/null || { echo "bench/soak: the server died" >&2; tail -5 "$tmp/server.log" >&2; return 1; }
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status")
        fds=$(find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
        ports=$("$ddmon" --socket "$sock" --no-autostart vms --json 2>/dev/null |
            python3 -c 'import json,sys
rows = json.load(sys.stdin)["rows"]
p = [r["debug_port"] for r in rows if r.get("debug_port")]
print(len(rows), min(p) if p else 0, max(p) if p else 0)' 2>/dev/null || echo "0 0 0")
        printf '%d %d %d %s\n' $(($(date +%s) - t0)) "$rss" "$fds" "$ports" | tee -a "$tmp/samples"
    done
    stop_pid "$server_pid"
    stop_pid "$simvm_pid"
    server_pid='' simvm_pid=''
    bench_prune_pids # T_PIDS keeps only live children, not every run's PIDs
    awk -v w="$warmup_s" -v base="$dbg_base" '
        { if ($6 > pmax) pmax = $6; if (fmin == "" || $3 < fmin) fmin = $3; if ($3 > fmax) fmax = $3 }
        $1 >= w { n++; x = $1 / 60; sx += x; sy += $2; sxx += x * x; sxy += x * $2 }
        END {
            slope = (n > 1 && n * sxx - sx * sx > 0) ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0
            printf "%.2f %d %d %d %d\n", slope, fmin, fmax, (pmax ? pmax - base : 0), n
        }' "$tmp/samples" >"$tmp/result"
}

slopes=()
for r in $(seq 1 "$runs"); do
    soak_once "$r" || exit 1
    read -r slope fmin fmax phigh n <"$tmp/result"
    slopes+=("$slope")
    printf 'run %d: RSS slope %s KiB/min after %d s warm-up (%d samples), fds %d..%d, highest debugger port base+%d\n' \
        "$r" "$slope" "$warmup_s" "$n" "$fmin" "$fmax" "$phigh"
done
median=$(printf '%s\n' "${slopes[@]}" | median)
printf 'soak: %d VMs churning every %d ms, %d min x %d runs: median RSS slope %s KiB/min (goal < 1)\n' \
    "$vms" "$churn_ms" "$minutes" "$runs" "$median"
