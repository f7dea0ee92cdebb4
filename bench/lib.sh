# SPDX-License-Identifier: Apache-2.0
# bench/lib.sh: what the benches (hostile, hprof, relay) share on top of
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
