# SPDX-License-Identifier: Apache-2.0
# bench/lib.sh: what the benches share on top of
# tests/integration/lib.sh (which it sources): the scratch folder removed at
# exit unless --keep, and die. Source it after the options are parsed, with
# BENCH_NAME (e.g. bench/relay, for messages) and keep (0 or 1) set.
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
# later (default 5; more for a program under valgrind, slow to exit); reaped.
# An empty PID or a process already gone is no error.
stop_pid() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || return 0
    t_wait "${2:-5}" t_dead "$1" || kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}
