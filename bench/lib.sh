# SPDX-License-Identifier: Apache-2.0
# bench/lib.sh: what the benches share on top of
# tests/integration/lib.sh (which it sources): the scratch folder removed at
# exit unless --keep, and die. Source it after the options are parsed, with
# BENCH_NAME (e.g. bench/relay, for messages) and keep (0 or 1) set.
#
# A bench that opens ports also sources it first, as its first command,
# with --netns (which does only bench_netns, below):
#     . "$(dirname "$0")/lib.sh" --netns BENCH_X_NETNS "$@"

# bench_netns MARKER ARGS...: as root, run this bench again with ARGS in a
# private network namespace (unshare -n, lo up), so that its ports are
# nobody else's and nobody else's traffic is on its lo. MARKER (a variable
# name, exported as 1) marks the run inside, which goes on; so does a run
# not as root, or where unshare is missing or not permitted (a container),
# or where `ip` (iproute2, to bring lo up) is missing: that one says so.
bench_netns() {
    local marker=$1
    shift
    [ "$(id -u)" = 0 ] && [ -z "${!marker:-}" ] && command -v unshare >/dev/null &&
        unshare -n true 2>/dev/null || return 0
    if ! command -v ip >/dev/null; then
        echo "$0: note: no 'ip' (iproute2) to bring lo up: running without a private network namespace" >&2
        return 0
    fi
    export "$marker=1"
    exec unshare -n bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
}
if [ "${1:-}" = --netns ]; then
    shift
    bench_netns "$@"
    return 0
fi

# Not lib.sh's own namespace run: it would run the bench again with the
# arguments left after the bench's parsing (none); a bench makes its own
# namespace first thing (bench_netns, above), where it needs one.
T_NO_NETNS=1
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
bench_cleanup() {
    [ $keep = 1 ] && { echo "kept $T_TMP" >&2; T_TMP=/nonexistent-kept; }
    t_cleanup
}
trap bench_cleanup EXIT
die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

# Figures: median of numbers on stdin ("nan" for none), A/B ratio, A <= B
# (nan never is), and a goal's verdict: "ok", or "MISSED" noted in
# $T_TMP/missed for --check (callers run it in $(...)).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.2f", a / b }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "nan" && a + 0 <= b + 0) }'; }
verdict() {
    if le "$1" "$2"; then echo ok; else echo "$1 > $2" >>"$T_TMP/missed"; echo MISSED; fi
}
# stop_pid PID [SECONDS]: SIGTERM; SIGKILL if it has not exited SECONDS
# later (default 5; more for a program under valgrind, slow to exit); reaped
# and dropped from T_PIDS (once reaped, the number is free for any new
# process, which the exit's t_cleanup would otherwise signal). An empty PID
# or a process already gone is no error.
stop_pid() {
    [ -n "$1" ] || return 0
    if kill "$1" 2>/dev/null; then
        t_wait "${2:-5}" t_dead "$1" || kill -9 "$1" 2>/dev/null
    fi
    wait "$1" 2>/dev/null
    bench_prune_pids
    return 0
}

# bench_prune_pids: keep in T_PIDS only this shell's running children: bash
# reaps a child as soon as it exits (keeping its status for `wait`), so the
# PID of one that exited, or of a process that is not this shell's child,
# may be anyone's process by now. A long soak starts hundreds of processes,
# and t_cleanup signals what T_PIDS holds at exit.
bench_prune_pids() {
    local p stat ppid live=()
    for p in "${T_PIDS[@]}"; do
        { stat=$(<"/proc/$p/stat"); } 2>/dev/null || continue
        read -r _ ppid _ <<<"${stat##*) }" # after "PID (COMM) ": state, ppid
        [ "$ppid" = "$BASHPID" ] && live+=("$p") # (a subshell's children are its own)
    done
    T_PIDS=(${live[@]+"${live[@]}"})
}
