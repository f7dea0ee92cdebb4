#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/idlewake: what one main-loop wake-up of a ddmon server costs with
# many idle VMs connected (issue 16: "a wake-up costs the number of ready
# sockets, not the number of sockets"). Not a test: it prints figures, each
# beside a baseline measured in the same run, and --check exits 1 when the
# goal is missed.
#
# For each build (this one, and with --old BUILDDIR the code before the
# change) and each N (default 100 and 1000): ddmon-simvm plays N idle VMs on
# local ports; a ddmon server (--scan=local over exactly those ports, relay
# on, no plugins: only the core's own work) runs under
# `valgrind --tool=callgrind`; once all N are ready and the server has
# settled, the counters are zeroed and a client makes --requests control
# requests (an unknown op, answered by an error line: a connect, a line in,
# a line out, a close; the same few wake-ups and the same work with any N,
# where a real op such as "version" may walk the VMs), then the counters
# are dumped:
#   - Ir per request: the instructions of the whole server for one request,
#     i.e. for those few wake-ups;
#   - the ratio Ir per request at the largest N / at the smallest N: the
#     goal is a wake-up's cost independent of N, ratio <= 1.2 (--check);
#   - with --old, each build's figure against the old one's.
# With --strace S (default 20; 0 = skip): the same servers, not under
# valgrind, idle for S seconds under `strace -c -f`: the poll / epoll_wait
# calls per second (glib's poll is the wake-up; after the change each
# wake-up that finds the epoll fd ready adds one epoll_wait) and the
# descriptors each poll call passes (from a second, short `strace -e poll`
# sample). The scan interval is long (600 s): all VMs are found by the
# first scan, and no periodic scan of N ports falls into the windows.
#
#   bench/idlewake.sh [--old BUILDDIR] [--requests K] [--strace S] [--check]
#                     [--keep] [N...]
# DDM_TOP_BUILDDIR: the build measured (default: the current directory), a
# plain (unsanitized) build with ddmon and ddmon-simvm. Needs valgrind
# (callgrind_control), python3, jq; strace for the syscall figures. When run
# as root it re-executes itself in a private network namespace (unshare -n,
# lo up), so its ports are nobody else's.
set -u
. "$(dirname "$0")/lib.sh" --netns BENCH_IDLEWAKE_NETNS "$@" # as root: again in a private network namespace
here=$(cd "$(dirname "$0")" && pwd)
export DDM_TOP_SRCDIR=${DDM_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
export DDM_TOP_BUILDDIR=${DDM_TOP_BUILDDIR:-$(pwd)}
old="" requests=200 strace_s=20 check=0 keep=0
sizes=()
while [ $# -gt 0 ]; do
    case $1 in
    --old) old=$(cd "$2" && pwd) || exit 2; shift ;;
    --requests) requests=$2; shift ;;
    --strace) strace_s=$2; shift ;;
    --check) check=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/idlewake: unknown option $1" >&2; exit 2 ;;
    *) sizes+=("$1") ;;
    esac
    shift
done
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000)
BENCH_NAME=bench/idlewake
. "$here/lib.sh"
new=$(cd "$DDM_TOP_BUILDDIR" && pwd)
builds=("$new")
[ -n "$old" ] && builds+=("$old")
for b in "${builds[@]}"; do
    [ -x "$b/ddmon" ] && [ -x "$b/ddmon-simvm" ] || die "$b: ddmon and ddmon-simvm not built"
done
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || die "needs valgrind"
command -v jq >/dev/null || die "needs jq"
mkdir -p "$T_TMP/noplugins"
ulimit -n 8192 2>/dev/null || true

now_ms() { date +%s%3N; }

# simvm N: N idle VMs; sets SIMVM_PID and RANGES.
start_vms() {
    local n=$1 deadline
    rm -f "$T_TMP/ports"
    "$new/ddmon-simvm" --vms "$n" --base-port 0 --port-file "$T_TMP/ports" --seed 1 \
        --tick 1000 --thread-activity 0 >"$T_TMP/simvm.log" 2>&1 &
    SIMVM_PID=$!
    T_PIDS+=("$SIMVM_PID")
    deadline=$(($(now_ms) + 60000))
    until [ "$(cat "$T_TMP/ports" 2>/dev/null | wc -l)" -ge "$n" ]; do
        [ "$(now_ms)" -gt $deadline ] && die "ddmon-simvm did not bring up $n VMs"
        sleep 0.1
    done
    RANGES=$(awk '{print $2}' "$T_TMP/ports" | sort -n | paste -sd,)
}

# server BUILD SOCK [PREFIX...]: a ddmon server of BUILD over RANGES; sets SERVER_PID.
start_server() {
    local b=$1 sock=$2
    shift 2
    rm -f "$sock"
    "$@" "$b/ddmon" --socket "$sock" --plugin-dir "$T_TMP/noplugins" --no-adb-start server \
        --foreground --selected-port=0 --debug-port-base=0 --scan=local --scan-ports="$RANGES" \
        --scan-interval=600000 >"$T_TMP/server.log" 2>&1 &
    SERVER_PID=$!
    T_PIDS+=("$SERVER_PID")
}

# wait_ready BUILD SOCK N: until N VMs are listed ready (3 min at most, valgrind is slow).
wait_ready() {
    local deadline=$(($(now_ms) + 180000)) n
    while :; do
        n=$("$1/ddmon" --socket "$2" --no-autostart --json vms 2>/dev/null |
            jq '[.rows[] | select(.state == "ready")] | length' 2>/dev/null || echo 0)
        [ "${n:-0}" -ge "$3" ] && return 0
        [ "$(now_ms)" -gt $deadline ] && { echo "only ${n:-0} of $3 ready" >&2; return 1; }
        sleep 1
    done
}

# K control requests, each its own connection.
poke() {
    python3 - "$1" "$2" <<'EOF'
import socket, sys
path, k = sys.argv[1], int(sys.argv[2])
for _ in range(k):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b'{"op":"idlewake-noop"}\n')
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
EOF
}

stop_all() { # the server may run under valgrind: 10 s to exit
    stop_pid "${SERVER_PID:-}" 10
    stop_pid "${SIMVM_PID:-}" 10
    SERVER_PID="" SIMVM_PID=""
}

declare -A IR POLLS EPOLLS FDS
for n in "${sizes[@]}"; do
    for b in "${builds[@]}"; do
        tag=$([ "$b" = "$new" ] && echo new || echo old)
        start_vms "$n"
        sock="$T_TMP/cg.sock"
        out="$T_TMP/callgrind.$tag.$n"
        start_server "$b" "$sock" valgrind --tool=callgrind --callgrind-out-file="$out" \
            --dump-instr=no --compress-strings=no
        wait_ready "$b" "$sock" "$n" || die "$tag N=$n: VMs not ready; $(tail -3 "$T_TMP/server.log")"
        sleep 3 # settled: no more start-up work
        callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
        poke "$sock" "$requests"
        callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
        sleep 1
        dump=$(ls -t "$out".* 2>/dev/null | head -1)
        ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$dump" 2>/dev/null)
        IR[$tag.$n]=$(awk -v ir="${ir:-nan}" -v k="$requests" 'BEGIN { if (ir == "nan") print "nan"; else printf "%.0f", ir / k }')
        stop_all
        if [ "$strace_s" -gt 0 ] && command -v strace >/dev/null; then
            start_vms "$n"
            start_server "$b" "$sock"
            wait_ready "$b" "$sock" "$n" || die "$tag N=$n: VMs not ready (strace run)"
            sleep 3
            timeout $((strace_s + 5)) strace -q -c -f -p "$SERVER_PID" -o "$T_TMP/strace.$tag.$n" 2>/dev/null &
            spid=$!
            sleep "$strace_s"
            kill -INT $spid 2>/dev/null
            wait $spid 2>/dev/null
            POLLS[$tag.$n]=$(awk '$NF == "poll" || $NF == "ppoll" { c += $4 } END { print c + 0 }' "$T_TMP/strace.$tag.$n")
            EPOLLS[$tag.$n]=$(awk '$NF == "epoll_wait" || $NF == "epoll_pwait" { c += $4 } END { print c + 0 }' "$T_TMP/strace.$tag.$n")
            # descriptors per poll call: a short sample of the calls themselves
            timeout 4 strace -q -f -e trace=poll,ppoll -p "$SERVER_PID" -o "$T_TMP/polls.$tag.$n" 2>/dev/null &
            spid=$!
            sleep 3
            kill -INT $spid 2>/dev/null
            wait $spid 2>/dev/null
            # poll(2)'s second argument: the number of descriptors it passes
            FDS[$tag.$n]=$(awk '/poll\(\[/ { a = $0; sub(/^.*\], */, "", a); s += a + 0; c++ }
                END { if (c) printf "%.0f", s / c; else print "-" }' "$T_TMP/polls.$tag.$n")
            stop_all
        fi
    done
done

lo=${sizes[0]} hi=${sizes[${#sizes[@]} - 1]}
echo "bench/idlewake: an idle ddmon server, $requests control requests (a few wake-ups each); no plugins"
printf '%-6s %-7s %12s %9s %13s %9s\n' build N "Ir/request" "poll/s" "epoll_wait/s" "fds/poll"
for tag in new old; do
    [ "$tag" = old ] && [ -z "$old" ] && continue
    for n in "${sizes[@]}"; do
        w=${POLLS[$tag.$n]:-} e=${EPOLLS[$tag.$n]:-}
        [ -n "$w" ] && w=$(awk -v c="$w" -v s="$strace_s" 'BEGIN { printf "%.1f", c / s }')
        [ -n "$e" ] && e=$(awk -v c="$e" -v s="$strace_s" 'BEGIN { printf "%.1f", c / s }')
        printf '%-6s %-7s %12s %9s %13s %9s\n' "$tag" "$n" "${IR[$tag.$n]:-nan}" "${w:--}" "${e:--}" "${FDS[$tag.$n]:--}"
    done
done
status=0
r_new=$(ratio "${IR[new.$hi]}" "${IR[new.$lo]}")
echo "new: Ir per request at N=$hi / at N=$lo = $r_new (goal <= 1.2: a wake-up's cost independent of N)"
le "$r_new" 1.2 || status=1 # a missing count (nan) fails too
if [ -n "$old" ]; then
    echo "old: Ir per request at N=$hi / at N=$lo = $(ratio "${IR[old.$hi]}" "${IR[old.$lo]}")"
    for n in "${sizes[@]}"; do
        echo "N=$n: new / old Ir per request = $(ratio "${IR[new.$n]}" "${IR[old.$n]}")"
    done
fi
if [ $check = 1 ] && [ $status != 0 ]; then
    echo "bench/idlewake: goal missed" >&2
    exit 1
fi
exit 0
