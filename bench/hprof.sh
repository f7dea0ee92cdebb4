#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/hprof: what a heap dump through ddmon costs. One ddmon-simvm VM
# streams HPDS dumps of SIZE bytes (default 1 GiB); in the same run the
# same dump is read three ways:
#   read        a plain socket client (tests/tools/jdwpc "hpds") reads the
#               event and throws the bytes away: the ceiling;
#   read+write  the same client writes the bytes to a file: what any
#               monitor that keeps the dump must at least do;
#   ddmon       `ddmon hprof VM FILE` through a private ddmon server (the
#               hprof plugin: stream, check, hash, write, rename).
# Figures: MB/s of each (median of N runs) and ddmon's ratio to each
# baseline (median of the per-run ratios; goal: >= 0.8 of read), and the
# server's extra resident memory during the dump (peak VmRSS, sampled from
# /proc every 20 ms, minus VmRSS before; goal: <= 16 MiB for 1 GiB).
# The simulator generates the dump as it sends it, so its own speed bounds
# all three paths alike. The baselines time request to reply on a socket
# already connected; ddmon's time is the whole `ddmon hprof` client (start,
# connect, resolve the VM, dump): biased against ddmon, the more so for a
# small --size. A benchmark, not a test: prints a table, exits 0
# unless a measurement failed (or, with --check, a figure misses its goal).
#
#   bench/hprof.sh [--runs N] [--size BYTES] [--format android|standard] [--check] [--keep]
#   make bench-hprof [BENCH_HPROF_ARGS="--runs 9"]
# DDM_TOP_BUILDDIR (default: the current directory) must hold ddmon,
# ddmon-simvm, the plugins and tests/tools/jdwpc. Use a build without
# sanitizers for figures that mean anything.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
runs=5 size=1073741824 format=android check=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --size) size=$2; shift ;;
    --format) format=$2; shift ;;
    --check) check=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/hprof: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

BENCH_NAME=bench/hprof
. "$DDM_TOP_SRCDIR/bench/lib.sh"
JDWPC="$DDM_TOP_BUILDDIR/tests/tools/jdwpc"
[ -x "$JDWPC" ] || { echo "bench/hprof: build tests/tools/jdwpc first (make check or make tests/tools/jdwpc)" >&2; exit 2; }

now() { date +%s.%N; }
mbps() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) / 1e6 / (float(sys.argv[3]) - float(sys.argv[2]))))" "$@"; }
rss_kb() { awk '/^VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null; }

# One VM for every run: the baselines talk to it while ddmon is not connected.
t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --hprof-size "$size" --gc-every 0 --thread-activity 0 --app bench.hprof
t_wait 10 test -s "$T_TMP/ports" || { echo "bench/hprof: simvm did not start" >&2; exit 1; }
port=$(awk 'NR==1{print $2}' "$T_TMP/ports")

results="$T_TMP/results"
: >"$results"
for run in $(seq 1 "$runs"); do
    # 1. plain read
    line=$("$JDWPC" "127.0.0.1:$port" hpds) || { echo "bench/hprof: jdwpc read failed" >&2; exit 1; }
    read_mbps=$(awk '{print $4}' <<<"$line")
    # 2. plain read + write to a file
    line=$("$JDWPC" "127.0.0.1:$port" hpds "$T_TMP/base.hprof") || { echo "bench/hprof: jdwpc write failed" >&2; exit 1; }
    write_mbps=$(awk '{print $4}' <<<"$line")
    rm -f "$T_TMP/base.hprof"
    # 3. ddmon (a fresh private server each run: its RSS baseline is clean)
    t_start_server --scan=local --scan-ports "$port" --selected-port 0 --debug-port-base 0 \
        --request-timeout 30000 || { echo "bench/hprof: server did not start" >&2; exit 1; }
    t_wait 15 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q ' ready '" \
        || { echo "bench/hprof: the VM did not become ready" >&2; exit 1; }
    before=$(rss_kb "$DDMON_PID")
    ( peak=$before; while kill -0 "$DDMON_PID" 2>/dev/null && [ ! -e "$T_TMP/stop" ]; do
          r=$(rss_kb "$DDMON_PID"); [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r; echo "$peak" >"$T_TMP/peak"; sleep 0.02
      done ) &
    sampler=$!
    t0=$(now)
    t_ddmon --no-autostart hprof bench.hprof "$T_TMP/ddmon.hprof" --format="$format" >"$T_TMP/out.txt" 2>&1 \
        || { echo "bench/hprof: ddmon hprof failed: $(cat "$T_TMP/out.txt")" >&2; exit 1; }
    t1=$(now)
    touch "$T_TMP/stop"; wait "$sampler" 2>/dev/null; rm -f "$T_TMP/stop"
    peak=$(cat "$T_TMP/peak")
    # the bytes the VM sent (--format=standard writes a file of another size)
    ddmon_mbps=$(mbps "$size" "$t0" "$t1")
    rm -f "$T_TMP/ddmon.hprof"
    kill "$DDMON_PID" 2>/dev/null; wait "$DDMON_PID" 2>/dev/null
    echo "$read_mbps $write_mbps $ddmon_mbps $(( (peak - before) ))" >>"$results"
    printf 'run %d: read %s MB/s, read+write %s MB/s, ddmon %s MB/s, ddmon extra RSS %d KiB\n' \
        "$run" "$read_mbps" "$write_mbps" "$ddmon_mbps" $(( peak - before ))
done

python3 - "$results" "$size" "$check" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
size, check = int(sys.argv[2]), sys.argv[3] == "1"
med = lambda xs: statistics.median(xs)
r, w, d, rss = (med([x[i] for x in rows]) for i in range(4))
vs_read = med([x[2] / x[0] for x in rows])
vs_write = med([x[2] / x[1] for x in rows])
rss_mib = med([x[3] for x in rows]) / 1024
print(f"\nheap dump of {size} bytes, medians of {len(rows)} runs")
print(f"  read (plain socket)      {r:8.1f} MB/s")
print(f"  read+write (plain)       {w:8.1f} MB/s")
print(f"  ddmon hprof              {d:8.1f} MB/s")
print(f"  ratio ddmon/read         {vs_read:8.2f}   (goal >= 0.80)")
print(f"  ratio ddmon/read+write   {vs_write:8.2f}")
print(f"  ddmon extra RSS          {rss_mib:8.1f} MiB (goal <= 16 MiB, whatever the size)")
ok = vs_read >= 0.8 and rss_mib <= 16  # flat: not more for a larger dump
if check and not ok:
    print("bench/hprof: a figure misses its goal", file=sys.stderr)
    sys.exit(1)
PY
