#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/vmmem: what an idle VM costs ddmon in memory (issue 16).
#
# Each run starts ddmon-simvm with N idle DDM VMs (default 1,000: no thread
# activity, a 1 s model tick) on consecutive local ports, then, one after
# the other, two ddmon servers of the same build with every plugin of the
# build: the baseline with discovery off (--scan=none), and one scanning
# exactly those ports. Once the second lists all N VMs ready, both wait the
# same --settle seconds (default 25: two of the monitor's 10 s trim rounds,
# each followed 200 ms later by a malloc_trim, core/loop/heaptrim.h) and
# are measured:
#   heap: the server's own heap in use, from the log line SIGUSR2 makes it
#         write (glibc's mallinfo2: uordblks + hblkhd, malloc's per-block
#         overhead included; kernel socket buffers are not in it); a ddmon
#         without that line (an older build) is asked through gdb
#         (malloc_stats(), the same figure),
#   RSS:  VmRSS, and its anonymous part (smaps_rollup; the rest is mapped
#         library and program pages, shared with other processes).
# Prints, as medians of --runs runs: heap and RSS of each server, the heap
# and RSS per VM ((scanning - baseline) / N), each against its goal:
#   heap per idle VM <= 4 KiB (4096 bytes),
#   RSS of the server with N VMs <= 8 MB (the issue's figure is for 1,000
#   VMs through adb; this measures the same server with the VMs over TCP).
# For context, not a goal: the same run also measures bench/rssfloor (a
# program that links glib, gio and json-glib, the libraries ddmon must use,
# and waits in a main loop) and prints each server's RSS above that floor,
# the part ddmon's own code and data can still change.
# --check exits 1 when a goal is missed. When run as root, the script
# re-executes itself in a private network namespace (unshare -n, lo up) so
# its ports collide with nobody's.
#
#   bench/vmmem.sh [--vms N] [--runs N] [--settle S] [--base-port P]
#                  [--plugins all|none|NAME,NAME...] [--check] [--keep]
# --plugins: every plugin of the build (all), none (the core alone), or only
# those named (e.g. every one but threads, to measure one engineer's change
# apart from another's).
#   make bench-vmmem [BENCH_VMMEM_ARGS="--runs 5 --check"]
# Needs jq; DDM_TOP_BUILDDIR (default: the current directory) with ddmon,
# ddmon-simvm and the plugins built (make uninstalled-plugins), and
# bench/rssfloor (without it the floor's figures are nan).
set -u
. "$(dirname "$0")/lib.sh" --netns BENCH_VMMEM_NETNS "$@" # as root: again in a private network namespace
here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
vms=1000 runs=3 settle=25 base_port=20000 plugins=all check=0 keep=0 timeout_s=120
while [ $# -gt 0 ]; do
    case $1 in
    --vms) vms=$2; shift ;;
    --runs) runs=$2; shift ;;
    --settle) settle=$2; shift ;;
    --base-port) base_port=$2; shift ;;
    --plugins) plugins=$2; shift ;;
    --check) check=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/vmmem: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
case $plugins in
all|none) ;;
*[!a-z0-9_,]*|,*|*,|*,,*) echo "bench/vmmem: --plugins all, none or NAME,NAME..." >&2; exit 2 ;;
esac

BENCH_NAME=bench/vmmem
. "$DDM_TOP_SRCDIR/bench/lib.sh"
b=$DDM_TOP_BUILDDIR
command -v jq >/dev/null || die "needs jq"
[ -x "$b/ddmon" ] && [ -x "$b/ddmon-simvm" ] || die "build ddmon and ddmon-simvm in $b first"
[ "$plugins" = none ] || ls "$b"/plugins/*.so >/dev/null 2>&1 || die "no plugins in $b/plugins (make uninstalled-plugins)"
floor_bin=$b/bench/rssfloor
[ -x "$floor_bin" ] || echo "bench/vmmem: no $floor_bin (make bench/rssfloor): the libraries' floor is not measured" >&2
[ -n "${BENCH_VMMEM_NETNS:-}" ] || echo "bench/vmmem: not in a private network namespace (run as root for one):" \
    "ports from $base_port up may be taken by others" >&2
ulimit -n "$(ulimit -H -n)" 2>/dev/null
GOAL_HEAP_PER_VM=4096
GOAL_RSS_KB=$((8 * 1024))

# median, ratio, le, verdict, stop_pid: bench/lib.sh

# start_server SOCK LOG ARGS...: a ddmon server in the background; sets SERVER_PID.
start_server() {
    local sock=$1 log=$2
    shift 2
    local pargs=(--plugin-dir "$b/plugins") so
    if [ "$plugins" != all ]; then
        for so in "$b"/plugins/*.so; do
            case ",$plugins," in *",$(basename "$so" .so),"*) continue ;; esac
            pargs+=(--disable-plugin "$(basename "$so" .so)")
        done
    fi
    "$b/ddmon" --socket "$sock" "${pargs[@]}" --no-adb-start server --foreground \
        --selected-port=0 --debug-port-base=0 "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    T_PIDS+=("$SERVER_PID")
    for _ in $(seq 1 200); do
        [ -S "$sock" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    die "ddmon server did not start: $(tail -5 "$log")"
}

# heap_bytes PID LOG: ask the server for its heap figure and print it:
# SIGUSR2 (its "memory: heap in use" line), or, for a ddmon older than that
# line (a before/after comparison), glibc's malloc_stats() called through
# gdb, whose "Total (incl. mmap)" in-use bytes are the same figure.
heap_bytes() {
    local n0 n
    if ! grep -q 'memory: heap in use' "$b/ddmon"; then
        command -v gdb >/dev/null || { echo nan; return; }
        gdb -batch -p "$1" -ex 'call (void)malloc_stats()' >/dev/null 2>&1
        awk '/^Total \(incl. mmap\):/ { t = 1 } t && /^in use bytes/ { v = $NF } END { print (v == "" ? "nan" : v) }' "$2"
        return
    fi
    n0=$(grep -c 'memory: heap in use' "$2")
    kill -USR2 "$1" || { echo nan; return; }
    for _ in $(seq 1 100); do
        n=$(grep -c 'memory: heap in use' "$2")
        [ "$n" -gt "$n0" ] && break
        sleep 0.05
    done
    grep 'memory: heap in use' "$2" | tail -1 | sed 's/.*heap in use \([0-9]*\) bytes.*/\1/' | grep . || echo nan
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo nan; }
anon_kb() { awk '/^Anonymous:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo nan; }
count_ready() {
    "$b/ddmon" --socket "$1" --no-autostart --json vms 2>/dev/null |
        jq '[.rows[] | select(.state == "ready")] | length' 2>/dev/null || echo 0
}

for r in $(seq 1 "$runs"); do
    rm -f "$T_TMP/ports"
    "$b/ddmon-simvm" --vms "$vms" --base-port "$base_port" --port-file "$T_TMP/ports" --seed "$r" \
        --tick 1000 --thread-activity 0 >"$T_TMP/simvm.log" 2>&1 &
    simvm_pid=$!
    T_PIDS+=("$simvm_pid")
    for _ in $(seq 1 $((timeout_s * 10))); do
        [ "$(cat "$T_TMP/ports" 2>/dev/null | wc -l)" -ge "$vms" ] && break
        kill -0 "$simvm_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ "$(cat "$T_TMP/ports" 2>/dev/null | wc -l)" -ge "$vms" ] || die "ddmon-simvm did not bring up $vms VMs: $(tail -3 "$T_TMP/simvm.log")"
    first=$(awk '{ print $2 }' "$T_TMP/ports" | sort -n | head -1)
    last=$(awk '{ print $2 }' "$T_TMP/ports" | sort -n | tail -1)

    # The baseline and the server with the VMs run side by side, measured
    # after the same settling time.
    start_server "$T_TMP/base.sock" "$T_TMP/base.log" --scan=none
    base_pid=$SERVER_PID
    start_server "$T_TMP/vms.sock" "$T_TMP/vms.log" --scan=local --scan-ports="$first-$last" \
        --scan-interval=1000
    vms_pid=$SERVER_PID
    floor_pid=
    if [ -x "$floor_bin" ]; then
        "$floor_bin" &
        floor_pid=$!
        T_PIDS+=("$floor_pid")
    fi
    deadline=$(($(date +%s) + timeout_s))
    while [ "$(count_ready "$T_TMP/vms.sock")" -lt "$vms" ]; do
        [ "$(date +%s)" -gt "$deadline" ] && die "only $(count_ready "$T_TMP/vms.sock") of $vms VMs ready after ${timeout_s}s"
        kill -0 "$vms_pid" 2>/dev/null || die "the server died: $(tail -5 "$T_TMP/vms.log")"
        sleep 0.2
    done
    sleep "$settle"
    RB+="$(rss_kb "$base_pid") "
    AB+="$(anon_kb "$base_pid") "
    RV+="$(rss_kb "$vms_pid") "
    AV+="$(anon_kb "$vms_pid") "
    if [ -n "$floor_pid" ]; then
        RF+="$(rss_kb "$floor_pid") "
        AF+="$(anon_kb "$floor_pid") "
    else
        RF+="nan " AF+="nan "
    fi
    HB+="$(heap_bytes "$base_pid" "$T_TMP/base.log") "
    HV+="$(heap_bytes "$vms_pid" "$T_TMP/vms.log") "
    [ "$(count_ready "$T_TMP/vms.sock")" -ge "$vms" ] || echo "bench/vmmem: run $r: VMs left during the settling time" >&2
    stop_pid "$vms_pid"
    stop_pid "$base_pid"
    stop_pid "$floor_pid"
    stop_pid "$simvm_pid"
done

med() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
hb=$(med "$HB") rb=$(med "$RB") ab=$(med "$AB") hv=$(med "$HV") rv=$(med "$RV") av=$(med "$AV")
rf=$(med "$(echo "$RF" | tr ' ' '\n' | grep -v nan)") af=$(med "$(echo "$AF" | tr ' ' '\n' | grep -v nan)")
above() { awk -v a="$1" -v f="$2" 'BEGIN { if (a == "nan" || f == "nan") print "nan"; else printf "%.0f", a - f }'; }
per() { awk -v a="$1" -v b="$2" -v n="$vms" -v k="$3" 'BEGIN { if (a == "nan" || b == "nan") print "nan"; else printf "%.0f", (a - b) * k / n }'; }
heap_vm=$(per "$hv" "$hb" 1)
rss_vm=$(per "$rv" "$rb" 1024)
anon_vm=$(per "$av" "$ab" 1024)

echo "bench/vmmem: $vms idle DDM VMs over TCP, plugins: $plugins; medians of $runs runs, ${settle}s after all were ready"
printf '  %-26s %12s %12s %12s\n' "" "heap B" "RSS kB" "anon kB"
printf '  %-26s %12s %12s %12s\n' "baseline (--scan=none)" "$hb" "$rb" "$ab"
printf '  %-26s %12s %12s %12s\n' "with $vms VMs" "$hv" "$rv" "$av"
printf '  %-26s %12s %12s %12s\n' "per VM (bytes)" "$heap_vm" "$rss_vm" "$anon_vm"
printf '  %-26s %12s %12s %12s\n' "libraries' floor" "-" "$rf" "$af"
printf '  runs: heap %s | %s; RSS %s | %s\n' "$(echo $HB | tr ' ' ',')" "$(echo $HV | tr ' ' ',')" \
    "$(echo $RB | tr ' ' ',')" "$(echo $RV | tr ' ' ',')"
printf '  runs: floor RSS %s\n' "$(echo $RF | tr ' ' ',')"
echo "  heap per idle VM: $heap_vm B = $(ratio "$heap_vm" $GOAL_HEAP_PER_VM)x the goal of 4 KiB: $(verdict "$heap_vm" $GOAL_HEAP_PER_VM)"
echo "  RSS with $vms VMs: $rv kB = $(ratio "$rv" $GOAL_RSS_KB)x the goal of 8 MB: $(verdict "$rv" $GOAL_RSS_KB)" \
    "(baseline alone: $rb kB = $(ratio "$rb" $GOAL_RSS_KB)x)"
echo "  above the libraries' floor ($rf kB, bench/rssfloor: glib, gio, json-glib and a main loop):" \
    "with $vms VMs $(above "$rv" "$rf") kB, baseline $(above "$rb" "$rf") kB (context, not a goal)"
if [ $check = 1 ] && [ -s "$T_TMP/missed" ]; then
    echo "bench/vmmem: goals missed: $(paste -sd';' "$T_TMP/missed")" >&2
    exit 1
fi
exit 0
