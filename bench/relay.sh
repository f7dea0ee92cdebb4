#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/relay: what the debugger relay costs. A raw-JDWP client (jdwpc)
# against one real JVM (-agentlib:jdwp, suspend=n, running tests/java/Storm)
# three ways in the same run: directly, through a plain byte relay (socat
# with TCP_NODELAY on both sides) and through ddmon (a private server; the
# VM's 86xx relay port). Figures: Version round trip p50/p99 (us), pipelined
# Version commands (packets/s), bulk StringReference.Value replies (MB/s),
# MethodEntry event storm (events/s). Several runs, the path order rotating;
# MEDIANS per path, each with its ratio to the byte relay, and the median of
# the per-run ratios (each run measures both relays minutes apart at most,
# so slow drifts of the shared machine's load cancel out). Also the CPU time
# the relay process itself used for a run's steps (socat: its forked child;
# informative, no target). Target: ddmon
# within 10% of the byte relay on every figure (latency ratio <= 1.10,
# throughput ratio >= 0.90). A benchmark, not a test: it prints a table and
# exits 0 unless a measurement failed (or, with --check, a figure misses the
# target). The JVM can be reached by one connection at a time, so ddmon is
# started for its turn of each run and stopped after it.
#
#   bench/relay.sh [--runs N] [--rtt N] [--pipeline N] [--bulk N SIZE]
#                  [--storm SECONDS] [--also BUILDDIR] [--check] [--keep]
#   make bench-relay [BENCH_RELAY_ARGS="--runs 9"]
# Needs java, javac, socat, python3; DDM_TOP_BUILDDIR (default: the current
# directory) with ddmon, plugins and tests/tools/jdwpc built. --also BUILDDIR
# measures a second ddmon (another build, e.g. with a relay change) in the
# same runs, as the column "ddmon-b".
set -u
here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
also="" runs=5 rtt_n=2000 pipe_n=5000 bulk_n=20 bulk_size=1048576 storm_s=2 check=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --rtt) rtt_n=$2; shift ;;
    --pipeline) pipe_n=$2; shift ;;
    --bulk) bulk_n=$2; bulk_size=$3; shift 2 ;;
    --storm) storm_s=$2; shift ;;
    --also) also=$(cd "$2" && pwd) || exit 2; shift ;;
    --check) check=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/relay: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

BENCH_NAME=bench/relay
. "$DDM_TOP_SRCDIR/bench/lib.sh"
for tool in java javac socat python3; do command -v $tool >/dev/null || die "needs $tool"; done
[ -x "$JDWPC" ] && [ -x "$DDMON" ] || die "build ddmon and tests/tools/jdwpc in $DDM_TOP_BUILDDIR first"
t_javac || die "javac failed"

# A "free" port may still be taken by the time it is bound (the machine is
# shared and the range overlaps ephemeral ports): retry with another.
for try in 1 2 3 4 5; do
    vm_port=$(t_free_port) || die "no free ports"
    t_start_jvm "$vm_port" n Storm
    t_wait 20 grep -q "storm ready" "$T_TMP/jvm-$vm_port.out" && t_wait_jvm "$vm_port" && break
    kill "$JVM_PID" 2>/dev/null; wait "$JVM_PID" 2>/dev/null
    [ $try = 5 ] && die "the JVM did not start: $(cat "$T_TMP/jvm-$vm_port.err")"
done
key="127.0.0.1:$vm_port"
for try in 1 2 3 4 5; do
    relay_port=$(t_free_port) || die "no free ports"
    socat TCP-LISTEN:"$relay_port",bind=127.0.0.1,reuseaddr,fork,nodelay TCP:127.0.0.1:"$vm_port",nodelay \
        2>"$T_TMP/socat.err" &
    socat_pid=$!
    T_PIDS+=("$socat_pid")
    t_wait 10 bash -c "t_dead() { ! kill -0 \$1 2>/dev/null; }; t_dead $socat_pid || (exec 3<>/dev/tcp/127.0.0.1/$relay_port) 2>/dev/null"
    kill -0 "$socat_pid" 2>/dev/null && break
    [ $try = 5 ] && die "socat did not start: $(cat "$T_TMP/socat.err")"
done
base=$(t_free_ports 4) && sel=$(t_free_port) || die "no free ports"

# The pipeline burst is short: three of them per run, their median counts.
steps=(rtt "$rtt_n" pipeline "$pipe_n" pipeline "$pipe_n" pipeline "$pipe_n" bulk "$bulk_n" "$bulk_size" storm "$storm_s")

# jdwpc PORT STEPS...: retried while the connection is refused (the JVM's
# agent listens again only a moment after a debugger left).
jdwpc_retry() {
    local port=$1 out i; shift
    for i in $(seq 1 100); do
        out=$("$JDWPC" "127.0.0.1:$port" "$@" 2>&1) && { echo "$out"; return 0; }
        case $out in *"connect: Connection refused"*) sleep 0.1 ;; *) echo "$out"; return 1 ;; esac
    done
    echo "$out"; return 1
}

# CPU time (ms) used so far by PID and its reaped children.
cpu_ms() {
    local f
    # fields 14-17 (utime stime cutime cstime), after "pid (comm)" which may hold spaces
    f=($(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null))
    [ ${#f[@]} -gt 14 ] || { echo 0; return; }
    echo $(( (f[11] + f[12] + f[13] + f[14]) * 1000 / $(getconf CLK_TCK) ))
}

# One measurement: jdwpc on PORT, figures appended to results as "PATH FIGURE VALUE";
# with RELAY_PID, also the CPU time that process used meanwhile.
measure() { # measure PATH PORT [RELAY_PID]
    local out cpu0=0
    [ -n "${3:-}" ] && cpu0=$(cpu_ms "$3")
    out=$(jdwpc_retry "$2" "${steps[@]}") || { echo "$out" >&2; return 1; }
    if [ -n "${3:-}" ]; then
        sleep 0.2 # socat's parent reaps the connection's child
        echo "$1 relay_cpu_ms $(( $(cpu_ms "$3") - cpu0 )) $run" >>"$T_TMP/results"
    fi
    echo "$out" | awk -v p="$1" -v r="$run" '
        $1 == "rtt" { print p, "rtt_p50_us", $2, r; print p, "rtt_p99_us", $3, r }
        $1 == "pipeline" { pipe[++np] = $3 }
        $1 == "bulk" { print p, "bulk_MB_s", $4, r }
        $1 == "storm" { print p, "storm_events_s", $3, r }
        END {
            for (i = 2; i <= np; i++) for (j = i; j > 1 && pipe[j - 1] + 0 > pipe[j] + 0; j--) {
                t = pipe[j]; pipe[j] = pipe[j - 1]; pipe[j - 1] = t }
            if (np) print p, "pipeline_pkt_s", pipe[int((np + 1) / 2)], r }' >>"$T_TMP/results"
    echo "$out" | sed "s/^/#   $1: /" >&2
}

run_ddmon() { # run_ddmon PATHNAME BUILDDIR
    local DDMON="$2/ddmon" PLUGINDIR="$2/plugins"
    rm -f "$T_TMP/ddmon.sock"
    t_start_server --scan=local --scan-ports "$vm_port" --debug-port-base "$base" --selected-port "$sel" \
        || { tail -5 "$T_TMP/server.err" >&2; return 1; }
    local port=""
    t_wait 15 t_debug_port "$key" && port=$(t_debug_port "$key")
    [ -n "$port" ] || { tail -5 "$T_TMP/server.err" >&2; kill "$DDMON_PID"; wait "$DDMON_PID" 2>/dev/null; return 1; }
    measure "$1" "$port" "$DDMON_PID"
    local rc=$?
    kill "$DDMON_PID"
    t_wait 10 t_dead "$DDMON_PID" || kill -9 "$DDMON_PID"
    wait "$DDMON_PID" 2>/dev/null
    return $rc
}

run_path() {
    case $1 in
    direct) measure direct "$vm_port" ;;
    socat) measure socat "$relay_port" "$socat_pid" ;;
    ddmon) run_ddmon ddmon "$DDM_TOP_BUILDDIR" ;;
    ddmon-b) run_ddmon ddmon-b "$also" ;;
    esac
}

echo "# bench/relay: $runs runs; steps: ${steps[*]}; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
jdwpc_retry "$vm_port" "${steps[@]}" >/dev/null || die "warm-up failed"
: >"$T_TMP/results"
paths=(direct socat ddmon)
[ -n "$also" ] && paths+=(ddmon-b)
np=${#paths[@]}
for run in $(seq 1 "$runs"); do
    echo "# run $run" >&2
    for k in $(seq 0 $((np - 1))); do
        p=${paths[$(( (run + k) % np ))]}
        run_path "$p" || die "run $run: the $p measurement failed"
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$T_TMP/results" "$runs" "$check" "${paths[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
runs, check, paths = int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4:]
others = [p for p in paths if p not in ("direct", "socat")]
figs = [("rtt_p50_us", "round trip p50 (us)", False), ("rtt_p99_us", "round trip p99 (us)", False),
        ("pipeline_pkt_s", "pipelined packets/s", True), ("bulk_MB_s", "bulk reply MB/s", True),
        ("storm_events_s", "event storm events/s", True)]
vals = {}   # (path, figure) -> [values]
by_run = {}  # (path, figure, run) -> value
for p, f, v, r in rows:
    vals.setdefault((p, f), []).append(float(v))
    by_run[(p, f, r)] = float(v)

def paired(p, f):
    """Median over runs of p's figure divided by socat's in the same run."""
    rs = [by_run[(p, f, r)] / by_run[("socat", f, r)] for (q, g, r) in by_run
          if q == p and g == f and by_run.get(("socat", f, r))]
    return statistics.median(rs) if rs else float("nan")

print(f"bench/relay: medians of {runs} runs; ratios to the plain byte relay (socat, nodelay):")
print("  X/socat = ratio of the medians; X/socat paired = median of the per-run ratios (the target's measure)")
print(f"{'figure':<22}" + "".join(f"{p:>11}" for p in paths) + f"{'direct/socat':>14}"
      + "".join(f"{p + '/socat':>15}{p + '/socat paired':>22}" for p in others) + "  target (ddmon, paired)")
missed = 0
for f, label, higher in figs:
    m = {p: statistics.median(vals.get((p, f), [0.0])) for p in paths}
    ratio = {p: m[p] / m["socat"] if m["socat"] else float("inf") for p in paths}
    pr = {p: paired(p, f) for p in others}
    ok = pr["ddmon"] >= 0.90 if higher else pr["ddmon"] <= 1.10
    missed += not ok
    fmt = (lambda x: f"{x:,.0f}") if m["socat"] >= 100 else (lambda x: f"{x:,.1f}")
    print(f"{label:<22}" + "".join(f"{fmt(m[p]):>11}" for p in paths) + f"{ratio['direct']:>14.2f}"
          + "".join(f"{ratio[p]:>15.2f}{pr[p]:>22.2f}" for p in others)
          + f"  {'ok' if ok else 'MISSED'} ({'>= 0.90' if higher else '<= 1.10'})")
# The relays' own CPU time for one run's steps: informative, no target.
cpu = {p: statistics.median(vals[(p, "relay_cpu_ms")]) for p in paths if (p, "relay_cpu_ms") in vals}
if "socat" in cpu and cpu["socat"]:
    print(f"{'relay CPU ms per run':<22}" + "".join(f"{cpu[p]:>11,.0f}" if p in cpu else f"{'-':>11}" for p in paths)
          + f"{'-':>14}" + "".join(f"{cpu[p] / cpu['socat']:>15.2f}{paired(p, 'relay_cpu_ms'):>22.2f}" for p in others)
          + "  (no target)")
sys.exit(1 if check and missed else 0)
PY
