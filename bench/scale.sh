#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/scale: how ddmon copes with many VMs (issue 16). Not a test: it
# prints figures, each beside a baseline measured in the same run, and the
# issue's goal; --check exits 1 when a goal is missed. Medians of --runs
# runs. The machine is usually shared: read times as medians, and prefer
# the counted figures (context switches, syscalls) for idle costs.
#
# TCP (unless --no-tcp): ddmon-simvm plays N VMs on local ports (split over
# several simvm processes of at most --per-simvm VMs each: a VM costs simvm
# a listener and a connection); for each N (default 100 1000 10000):
#   - the time from `ddmon server` starting (--scan=local over exactly those
#     ports) until `ddmon vms --json` lists all N VMs ready with a pid and
#     their app name; goal: N = 10,000 within 2 s;
#   - the growth exponent k of t(N) ~ N^k between the two largest N (goal:
#     linear, k <= 1.1);
#   (the column "CPU ms": the server's CPU time from its start until then,
#   the queries' included; "1st reply": when the first `ddmon vms` answered; a fresh
#   server answers it once discovery had its first round and no VM is still
#   connecting or saying HELO, and its headline figures once the VMs' first
#   requests are answered; the polling here adds up to 50 ms);
#   - the resident memory of that server once settled, minus that of the
#     same server started without discovery (the baseline), per VM
#     (goal: <= 4 KiB).
#   A VM costs ddmon a socket, and with the relay a debugger listener too;
#   the relay hands out at most 4,096 VM ports, and the descriptor limit
#   here may be 20,000, so with --relay auto (default) every N of the run
#   is measured with the relay off (--no-relay) when the largest N needs
#   it, and on otherwise; the output says which.
# Idle (--idle SECONDS, default 30; 0 = skip): with --idle-vms VMs (default
#   1,000) connected over TCP (and through adb with --adb), ddmon's CPU
#   time over the idle window (the sum of its threads' schedstat) divided
#   by the wall time; goal: <= 0.15% of a core, the figure of ddmlib in the
#   issue (ddmlib itself cannot run here: no Android SDK). Also its
#   context switches per second (/proc, the window above) and, in a second
#   window of the same length, the syscalls per second strace -c -f counts
#   (its poll/epoll calls are its wake-ups). The windows begin
#   --idle-quiet SECONDS (default 32) after the last look: the bench's own
#   `ddmon vms --json` keeps the VM list watched for 30 s (its interest),
#   and while it is watched the threads plugin refreshes the counts of the
#   VMs nobody looks at (a trickle of THSTs): that is a server being
#   looked at, not an idle one. With --idle-quiet 0 the CPU window falls
#   in that trickle, as it did before 2026-11-26 (0.10-0.13% of a core
#   then, against 0.01-0.07% once it ended: doc/benchmarks.md).
# adb (--adb): ddmon-simvm's simulated Android device (--adb-device, VMs
#   reachable only through adb) with --adb-vms VMs (default 1,000), plugged
#   into the REAL adb server (private port and HOME) with `adb connect`:
#   - the time until ddmon (--scan=adb) lists every VM ready with its
#     name, against bench/adb_min_client.py (asyncio: track-jdwp, jdwp:PID,
#     JDWP handshake, HELO, the name: the same work) in the same run;
#     goal: ddmon <= 1.5x the minimal client; beside it the server's CPU
#     time until then (steadier than the wall time on a shared machine);
#   - ddmon's resident memory with those VMs; goal: <= 8 MB.
#
#   bench/scale.sh [--runs N] [--check] [--adb] [--no-tcp] [--idle S] [--idle-quiet S]
#                  [--idle-vms N] [--adb-vms N] [--relay auto|on|off]
#                  [--per-simvm N] [--also BUILDDIR] [--keep] [N...]
#   make bench-scale [BENCH_SCALE_ARGS="--runs 5 --adb --check"]
# When run as root, the script re-executes itself in a private network
# namespace (unshare -n, lo up): nobody else's ports. --also BUILDDIR
# measures a second build's ddmon (e.g. the code before a change) in the
# same runs, as the column "also". Needs jq, python3; adb for --adb;
# strace for the syscall counts (skipped without it).
# Environment: DDM_TOP_BUILDDIR (default: the current directory, a build
# tree with ddmon, ddmon-simvm and the plugins), BENCH_BASE_PORT (default
# 20000), BENCH_DEBUG_PORT_BASE (default 10000), BENCH_TIMEOUT (s, 120).
set -u
. "$(dirname "$0")/lib.sh" --netns BENCH_SCALE_NETNS "$@" # as root: again in a private network namespace
here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
runs=3 check=0 adb_mode=0 tcp=1 idle_s=30 idle_quiet=32 idle_vms=1000 adb_vms=1000 relay=auto per_simvm=4000
also="" keep=0
sizes=()
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --check) check=1 ;;
    --adb) adb_mode=1 ;;
    --no-tcp) tcp=0 ;;
    --idle) idle_s=$2; shift ;;
    --idle-vms) idle_vms=$2; shift ;;
    --idle-quiet) idle_quiet=$2; shift ;;
    --adb-vms) adb_vms=$2; shift ;;
    --relay) relay=$2; shift ;;
    --per-simvm) per_simvm=$2; shift ;;
    --also) also=$(cd "$2" && pwd) || exit 2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/scale: unknown option $1" >&2; exit 2 ;;
    *) sizes+=("$1") ;;
    esac
    shift
done
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000 10000)
case $relay in auto|on|off) ;; *) echo "bench/scale: --relay auto, on or off" >&2; exit 2 ;; esac

BENCH_NAME=bench/scale
. "$here/lib.sh"
base_port=${BENCH_BASE_PORT:-20000}
debug_base=${BENCH_DEBUG_PORT_BASE:-10000}
timeout_s=${BENCH_TIMEOUT:-120}
simvm=$DDM_TOP_BUILDDIR/ddmon-simvm
builds=("$DDM_TOP_BUILDDIR")
[ -n "$also" ] && builds+=("$also")
for b in "${builds[@]}"; do
    [ -x "$b/ddmon" ] || die "$b/ddmon not built"
    [ -d "$b/plugins" ] || die "$b/plugins: no plugins built (make uninstalled-plugins)"
done
[ -x "$simvm" ] || die "$simvm not built"
command -v jq >/dev/null || die "needs jq"
command -v python3 >/dev/null || die "needs python3"
ulimit -n "$(ulimit -H -n)" 2>/dev/null
fd_limit=$(ulimit -n)
[ "$fd_limit" = unlimited ] && fd_limit=1048576
hz=$(getconf CLK_TCK)

now_ms() { echo $(($(date +%s%N) / 1000000)); }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# Nanoseconds on a CPU, all threads of $1 (schedstat; stat's ticks are too coarse for 0.15%).
# "%.0f", not "%d": mawk's %d stops at 2^31 - 1 (2.1 s).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
ctxsw() {
    cat /proc/"$1"/task/*/status 2>/dev/null |
        awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { printf "%d\n", s }'
}
# median, ratio, le, verdict, stop_pid: bench/lib.sh

# start_server BUILD SOCK ARGS...: a ddmon server of BUILD in the background; sets SERVER_PID.
start_server() {
    local b=$1 sock=$2
    shift 2
    rm -f "$sock"
    "$b/ddmon" --socket "$sock" --plugin-dir "$b/plugins" --no-adb-start server --foreground \
        --selected-port=0 --debug-port-base="$debug_base" "$@" >>"$T_TMP/server.log" 2>&1 &
    SERVER_PID=$!
    T_PIDS+=("$SERVER_PID")
    for _ in $(seq 1 200); do
        [ -S "$sock" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "bench/scale: ddmon server did not start; its log:" >&2
    tail -20 "$T_TMP/server.log" >&2
    return 1
}

# count_named BUILD SOCK PREFIX: VMs whose key starts with PREFIX listed ready with a pid and a name.
count_named() {
    "$1/ddmon" --socket "$2" --no-autostart --json vms 2>/dev/null |
        jq --arg p "$3" '[.rows[] | select((.key | startswith($p)) and .state == "ready" and .pid != null
            and (.app // "") != "" and .app != "<pre-initialized>")] | length' 2>/dev/null || echo 0
}

# wait_named BUILD SOCK PREFIX N: until N are named; prints the ms since T0_MS, or "nan";
# FIRST_MS (a file) gets the ms of the first answer (a fresh server answers
# once discovery's first round and the VMs' first requests are done).
wait_named() {
    local deadline=$((T0_MS + timeout_s * 1000)) known=0 first=""
    while :; do
        known=$(count_named "$1" "$2" "$3")
        [ -z "$first" ] && { first=$(($(now_ms) - T0_MS)); echo "$first" >"$T_TMP/first_ms"; }
        if [ "${known:-0}" -ge "$4" ]; then
            echo $(($(now_ms) - T0_MS))
            return 0
        fi
        if [ "$(now_ms)" -gt $deadline ] || ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "bench/scale: only $known of $4 VMs named after ${timeout_s}s; server log:" >&2
            tail -5 "$T_TMP/server.log" >&2
            echo nan
            return 1
        fi
        sleep 0.05
    done
}

# idle_window PID SECONDS: "cpu_percent ctxsw_per_s" over the window.
idle_window() {
    local c0 x0 t0 c1 x1 t1
    c0=$(cpu_ns "$1"); x0=$(ctxsw "$1"); t0=$(date +%s%N)
    sleep "$2"
    c1=$(cpu_ns "$1"); x1=$(ctxsw "$1"); t1=$(date +%s%N)
    awk -v c=$((c1 - c0)) -v x=$((x1 - x0)) -v t=$((t1 - t0)) \
        'BEGIN { printf "%.3f %.1f\n", 100 * c / t, x * 1e9 / t }'
}

# syscalls_window PID SECONDS: "syscalls_per_s polls_per_s" (strace -c -f), or "nan nan".
syscalls_window() {
    command -v strace >/dev/null || { echo "nan nan"; return; }
    timeout -s INT "$2" strace -c -f -p "$1" -o "$T_TMP/strace.txt" >/dev/null 2>&1
    awk -v s="$2" '
        $NF ~ /^(poll|ppoll|epoll_wait|epoll_pwait|epoll_pwait2|select|pselect6)$/ { p += $4 }
        $NF == "total" { t = $4 }
        END { printf "%.1f %.1f\n", t / s, p / s }' "$T_TMP/strace.txt" 2>/dev/null || echo "nan nan"
}

# ------------------------------------------------------------ simulated VMs over TCP

SIMVM_PIDS=()
stop_simvms() {
    local p
    for p in "${SIMVM_PIDS[@]}"; do stop_pid "$p"; done
    SIMVM_PIDS=()
}
# start_simvms N: N VMs over ceil(N / per_simvm) processes; sets SCAN_RANGES.
start_simvms() {
    local n=$1 left=$1 i=0 chunk base files=() lines deadline
    while [ "$left" -gt 0 ]; do
        chunk=$((left < per_simvm ? left : per_simvm))
        base=$((base_port + i * (per_simvm + 100)))
        rm -f "$T_TMP/ports.$i"
        "$simvm" --vms "$chunk" --base-port "$base" --port-file "$T_TMP/ports.$i" --seed $((i + 1)) \
            --tick 1000 --thread-activity 0 >"$T_TMP/simvm.$i.log" 2>&1 &
        SIMVM_PIDS+=($!)
        T_PIDS+=($!)
        files+=("$T_TMP/ports.$i")
        left=$((left - chunk))
        i=$((i + 1))
    done
    deadline=$(($(now_ms) + timeout_s * 1000))
    while :; do
        lines=$(cat "${files[@]}" 2>/dev/null | wc -l)
        [ "$lines" -ge "$n" ] && break
        [ "$(now_ms)" -gt $deadline ] && die "ddmon-simvm did not bring up $n VMs ($lines): $(tail -3 "$T_TMP"/simvm.*.log)"
        sleep 0.1
    done
    SCAN_RANGES=$(cat "${files[@]}" | awk '{ print $2 }' | sort -n |
        awk 'NR == 1 { lo = hi = $1; next } $1 == hi + 1 { hi = $1; next }
             { printf "%s%d-%d", sep, lo, hi; sep = ","; lo = hi = $1 } END { printf "%s%d-%d\n", sep, lo, hi }')
}

relay_args_for() { # the relay setting of this run's TCP figures
    local big=0 n
    for n in "${sizes[@]}"; do [ "$n" -gt "$big" ] && big=$n; done
    case $relay in
    on) echo "" ;;
    off) echo "--no-relay" ;;
    auto) if [ "$big" -gt 4000 ] || [ $((big * 2 + 512)) -gt "$fd_limit" ]; then echo "--no-relay"; else echo ""; fi ;;
    esac
}

# tcp_once BUILD N: sets TCP_RESULT to "ms rss0_kb rss_kb" for one run.
tcp_once() {
    local b=$1 n=$2 rss0 rss1 ms
    : >"$T_TMP/server.log"
    # shellcheck disable=SC2086
    start_server "$b" "$T_TMP/base.sock" --scan=none $RELAY_ARGS || { TCP_RESULT="nan nan nan"; return; }
    sleep 1
    rss0=$(rss_kb "$SERVER_PID")
    stop_pid "$SERVER_PID"
    T0_MS=$(now_ms)
    # shellcheck disable=SC2086
    start_server "$b" "$T_TMP/scan.sock" --scan=local --scan-ports="$SCAN_RANGES" \
        --scan-interval=1000 $RELAY_ARGS || { TCP_RESULT="nan $rss0 nan"; return; }
    ms=$(wait_named "$b" "$T_TMP/scan.sock" "" "$n")
    FIRST_MS=$(cat "$T_TMP/first_ms" 2>/dev/null || echo nan)
    CPU_MS=$(( $(cpu_ns "$SERVER_PID") / 1000000 ))
    [ "$ms" = nan ] && CPU_MS=nan
    sleep 1 # settle: pending replies, view rebuilds
    rss1=$(rss_kb "$SERVER_PID")
    if [ "$n" = "$idle_vms" ] && [ "$idle_s" != 0 ] && [ "$ms" != nan ] && [ -z "${IDLE_DONE[$b]:-}" ]; then
        IDLE_DONE[$b]=1
        sleep "$idle_quiet" # the last look's interest ends (see Idle above)
        IDLE_TCP[$b]="$(idle_window "$SERVER_PID" "$idle_s") $(syscalls_window "$SERVER_PID" "$idle_s")"
    fi
    stop_pid "$SERVER_PID"
    TCP_RESULT="$ms $rss0 $rss1 $FIRST_MS $CPU_MS"
}

declare -A IDLE_DONE IDLE_TCP IDLE_ADB
label() { if [ "$1" = "$DDM_TOP_BUILDDIR" ]; then echo ddmon; else echo also; fi; }

echo "bench/scale: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), descriptors $fd_limit," \
    "$runs runs, $( [ -n "${BENCH_SCALE_NETNS:-}" ] && echo "private network namespace" || echo "host network")"
[ -n "$also" ] && echo "  ddmon = $DDM_TOP_BUILDDIR, also = $also"

if [ $tcp = 1 ]; then
    RELAY_ARGS=$(relay_args_for)
    echo
    echo "TCP: all N VMs ready with names in \`ddmon vms --json\` (relay $( [ -n "$RELAY_ARGS" ] && echo "off: --no-relay" || echo on))"
    declare -A T_MS RSS0 RSS1 F_MS C_MS
    need_idle=1
    for n in "${sizes[@]}"; do [ "$n" = "$idle_vms" ] && need_idle=0; done
    all_sizes=("${sizes[@]}")
    [ $need_idle = 1 ] && [ "$idle_s" != 0 ] && all_sizes+=("$idle_vms")
    for n in "${all_sizes[@]}"; do
        start_simvms "$n"
        for r in $(seq 1 "$runs"); do
            order=("${builds[@]}")
            [ $((r % 2)) = 0 ] && [ ${#builds[@]} = 2 ] && order=("${builds[1]}" "${builds[0]}")
            for b in "${order[@]}"; do
                tcp_once "$b" "$n"
                read -r ms r0 r1 f1 c1 <<<"$TCP_RESULT"
                T_MS[$b,$n]+="$ms "
                F_MS[$b,$n]+="$f1 "
                C_MS[$b,$n]+="$c1 "
                RSS0[$b,$n]+="$r0 "
                RSS1[$b,$n]+="$r1 "
            done
        done
        stop_simvms
    done
    printf '%8s %-6s %10s %-20s %9s %9s %10s %10s %9s\n' VMs build "ms(median)" runs "1st reply" "CPU ms" "RSS0 kB" "RSS kB" "KiB/VM"
    for n in "${sizes[@]}"; do
        for b in "${builds[@]}"; do
            ms=$(echo "${T_MS[$b,$n]}" | tr ' ' '\n' | grep -v '^$' | median)
            r0=$(echo "${RSS0[$b,$n]}" | tr ' ' '\n' | grep -v '^$' | median)
            r1=$(echo "${RSS1[$b,$n]}" | tr ' ' '\n' | grep -v '^$' | median)
            per=$(awk -v a="$r1" -v b="$r0" -v n="$n" 'BEGIN { if (a == "nan" || b == "nan") print "nan"; else printf "%.2f", (a - b) / n }')
            f1=$(echo "${F_MS[$b,$n]}" | tr ' ' '\n' | grep -v '^$' | median)
            c1=$(echo "${C_MS[$b,$n]}" | tr ' ' '\n' | grep -v '^$' | median)
            printf '%8d %-6s %10s %-20s %9s %9s %10s %10s %9s\n' "$n" "$(label "$b")" "$ms" "$(echo ${T_MS[$b,$n]} | tr ' ' ',')" "$f1" "$c1" "$r0" "$r1" "$per"
            eval "MED_$(label "$b")_$n=$ms PER_$(label "$b")_$n=$per CPU_$(label "$b")_$n=$c1"
        done
    done
    # Goals on the largest two sizes.
    sorted=($(printf '%s\n' "${sizes[@]}" | sort -n))
    nbig=${sorted[-1]}
    for b in "${builds[@]}"; do
        l=$(label "$b")
        tb=$(eval echo "\$MED_${l}_$nbig")
        per=$(eval echo "\$PER_${l}_$nbig")
        if [ ${#sorted[@]} -ge 2 ]; then
            nsm=${sorted[-2]}
            ts=$(eval echo "\$MED_${l}_$nsm")
            k=$(awk -v a="$tb" -v b="$ts" -v na="$nbig" -v nb="$nsm" 'BEGIN { if (a == "nan" || b == "nan" || b <= 0) print "nan"; else printf "%.2f", log(a / b) / log(na / nb) }')
            printf '  %-5s growth k (t ~ N^k, N = %d..%d): %s  goal <= 1.1: %s\n' "$l" "$nsm" "$nbig" "$k" \
                "$([ "$l" = ddmon ] && verdict "$k" 1.1 || echo info)"
            cb=$(eval echo "\$CPU_${l}_$nbig") cs=$(eval echo "\$CPU_${l}_$nsm")
            kc=$(awk -v a="$cb" -v b="$cs" -v na="$nbig" -v nb="$nsm" 'BEGIN { if (a == "nan" || b == "nan" || b <= 0) print "nan"; else printf "%.2f", log(a / b) / log(na / nb) }')
            printf '  %-5s growth of the CPU time to all named (server start included): k = %s (info: steadier than wall time on a shared machine)\n' "$l" "$kc"
        fi
        if [ "$nbig" -ge 10000 ]; then
            printf '  %-5s N = %d all named: %s ms = %sx the goal of 2,000 ms: %s\n' "$l" "$nbig" "$tb" \
                "$(ratio "$tb" 2000)" "$([ "$l" = ddmon ] && verdict "$tb" 2000 || echo info)"
        fi
        printf '  %-5s RSS per VM at N = %d: %s KiB = %sx the goal of 4 KiB: %s\n' "$l" "$nbig" "$per" \
            "$(ratio "$per" 4)" "$([ "$l" = ddmon ] && verdict "$per" 4 || echo info)"
    done
    if [ ${#builds[@]} = 2 ]; then
        for n in "${sizes[@]}"; do
            printf '  ddmon / also, N = %d: time %s, RSS per VM %s\n' "$n" \
                "$(ratio "$(eval echo "\$MED_ddmon_$n")" "$(eval echo "\$MED_also_$n")")" \
                "$(ratio "$(eval echo "\$PER_ddmon_$n")" "$(eval echo "\$PER_also_$n")")"
        done
    fi
fi

# ------------------------------------------------------------ idle report

# idle_report WHERE ASSOC-NAME
idle_report() {
    local where=$1 b cpu cs sc po
    for b in "${builds[@]}"; do
        eval "read -r cpu cs sc po <<<\"\${$2[\$b]:-nan nan nan nan}\""
        printf '  %-5s idle %s, %d VMs, %ss from %ss after the last look: CPU %s%% of a core = %sx ddmlib'"'"'s 0.15%%: %s; %s context switches/s; %s syscalls/s, %s poll/epoll wake-ups/s\n' \
            "$(label "$b")" "$where" "$idle_vms" "$idle_s" "$idle_quiet" "$cpu" "$(ratio "$cpu" 0.15)" \
            "$([ "$(label "$b")" = ddmon ] && verdict "$cpu" 0.15 || echo info)" "$cs" "$sc" "$po"
    done
}
if [ $tcp = 1 ] && [ "$idle_s" != 0 ]; then
    echo
    echo "Idle over TCP (ddmlib's 0.15% is the issue's figure: ddmlib cannot run here)"
    idle_report "TCP" IDLE_TCP
fi

# ------------------------------------------------------------ through the real adb server

if [ $adb_mode = 1 ]; then
    command -v adb >/dev/null || die "--adb needs adb"
    export ADB_EMU=0
    unset ADB_SERVER_SOCKET ANDROID_SERIAL
    mkdir -p "$T_TMP/home"
    adbc() { HOME="$T_TMP/home" TMPDIR="$T_TMP" timeout 30 adb "$@"; }
    ADB_PORT=$(t_free_port) || die "no free port for adb"
    export ANDROID_ADB_SERVER_PORT=$ADB_PORT
    adbc start-server >"$T_TMP/adb-start.log" 2>&1 || die "adb start-server: $(cat "$T_TMP/adb-start.log")"
    adb_stop() { adbc kill-server >/dev/null 2>&1; }
    trap 'adb_stop; bench_cleanup' EXIT
    DEV_PORT=$(t_free_port) || die "no free port for the device"
    "$simvm" --vms "$adb_vms" --no-tcp --port-file "$T_TMP/adb-ports" --seed 5 --tick 1000 \
        --thread-activity 0 --adb-device "$DEV_PORT" --serial ddmonsim-bench >"$T_TMP/simvm-adb.log" 2>&1 &
    SIMVM_PIDS+=($!)
    T_PIDS+=($!)
    SERIAL="127.0.0.1:$DEV_PORT"
    for _ in $(seq 1 200); do
        [ "$(cat "$T_TMP/adb-ports" 2>/dev/null | wc -l)" -ge "$adb_vms" ] && break
        sleep 0.1
    done
    adbc connect "$SERIAL" >"$T_TMP/adb-connect.log" 2>&1
    for _ in $(seq 1 100); do adbc devices | grep -qF "$SERIAL	device" && break; sleep 0.2; done
    adbc devices | grep -qF "$SERIAL	device" || die "adb did not take the simulated device: $(cat "$T_TMP/adb-connect.log")"
    declare -A A_MS A_RSS A_CPU
    MIN_MS=""
    for r in $(seq 1 "$runs"); do
        out=$(python3 "$here/adb_min_client.py" --port "$ADB_PORT" --serial "$SERIAL" --vms "$adb_vms" \
            --timeout "$timeout_s" 2>"$T_TMP/minclient.err")
        MIN_MS+="$(echo "$out" | awk '/^named/ { print $4; exit }' | grep . || echo nan) "
        for b in "${builds[@]}"; do
            : >"$T_TMP/server.log"
            T0_MS=$(now_ms)
            start_server "$b" "$T_TMP/adb.sock" --scan=adb || { A_MS[$b]+="nan "; continue; }
            ms=$(wait_named "$b" "$T_TMP/adb.sock" "adb:$SERIAL:" "$adb_vms")
            A_MS[$b]+="$ms "
            A_CPU[$b]+="$([ "$ms" = nan ] && echo nan || echo $(( $(cpu_ns "$SERVER_PID") / 1000000 ))) "
            sleep 1
            A_RSS[$b]+="$(rss_kb "$SERVER_PID") "
            if [ "$idle_s" != 0 ] && [ "$ms" != nan ] && [ -z "${IDLE_ADB[$b]:-}" ]; then
                sleep "$idle_quiet" # the last look's interest ends (see Idle above)
                IDLE_ADB[$b]="$(idle_window "$SERVER_PID" "$idle_s") $(syscalls_window "$SERVER_PID" "$idle_s")"
            fi
            stop_pid "$SERVER_PID"
        done
    done
    min_med=$(echo "$MIN_MS" | tr ' ' '\n' | grep -v '^$' | median)
    echo
    echo "adb: $adb_vms VMs on the simulated device through the real adb server, all named"
    printf '  %-12s %10s   runs: %s\n' "minimal client" "$min_med ms" "$(echo $MIN_MS | tr ' ' ',')"
    for b in "${builds[@]}"; do
        l=$(label "$b")
        med=$(echo "${A_MS[$b]}" | tr ' ' '\n' | grep -v '^$' | median)
        rss=$(echo "${A_RSS[$b]:-nan}" | tr ' ' '\n' | grep -v '^$' | median)
        mb=$(awk -v k="$rss" 'BEGIN { if (k == "nan") print "nan"; else printf "%.1f", k / 1024 }')
        rt=$(ratio "$med" "$min_med")
        cpu=$(echo "${A_CPU[$b]:-nan}" | tr ' ' '\n' | grep -v '^$' | median)
        printf '  %-12s %10s   runs: %s; server CPU to all named (median): %s ms\n' "$l" "$med ms" \
            "$(echo ${A_MS[$b]} | tr ' ' ',')" "$cpu"
        printf '  %-5s time = %sx the minimal client, goal <= 1.5x: %s\n' "$l" "$rt" \
            "$([ "$l" = ddmon ] && verdict "$rt" 1.5 || echo info)"
        printf '  %-5s RSS with %d adb VMs: %s MB = %sx the goal of 8 MB: %s\n' "$l" "$adb_vms" "$mb" \
            "$(ratio "$mb" 8)" "$([ "$l" = ddmon ] && verdict "$mb" 8 || echo info)"
    done
    if [ "$idle_s" != 0 ]; then
        echo
        echo "Idle through adb (ddmlib's 0.15% is the issue's figure: ddmlib cannot run here)"
        idle_vms=$adb_vms
        idle_report "adb" IDLE_ADB
    fi
    adbc disconnect "$SERIAL" >/dev/null 2>&1
    stop_simvms
fi

echo
missed=$(cat "$T_TMP/missed" 2>/dev/null | wc -l)
if [ $check = 1 ]; then
    if [ $missed -gt 0 ]; then
        echo "bench/scale: $missed goal(s) missed"
        exit 1
    fi
    echo "bench/scale: every goal met"
fi
exit 0
