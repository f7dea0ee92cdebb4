#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lib.sh's evidence keeping (t_cleanup, t_keep_evidence): with
# DDM_IT_KEEP_DIR set, a test whose check failed, or whose cleanup found a
# sanitizer report, copies its logs (bounded) to
# $DDM_IT_KEEP_DIR/<test>.<pid>/ before its temporary directory goes, and
# says so; a test that passed keeps nothing. Checked on small child tests
# that source lib.sh, so no ddmon is run.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 7

# The children's output and kept copies hold a fake sanitizer report: kept
# out of $T_TMP, whose files this test's own cleanup scans for reports.
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-it-keep.XXXXXX")
trap 'rm -rf "$OUT"; t_cleanup' EXIT

# child NAME MODE: run a child test NAME.sh (MODE pass, fail or san) with
# DDM_IT_KEEP_DIR=$OUT/keep; its output in $OUT/NAME.out. It leaves a log
# with a marker, a log over its T_KEEP_FILE_MAX (2000 bytes), a file of no
# log type, and a sanitizer-report-like file in san/ when MODE is san.
child() {
    cat >"$OUT/$1.sh" <<'EOF'
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
T_KEEP_FILE_MAX=2000
t_plan 1
echo "# tmp $T_TMP"
echo "the server said: marker-$$" >"$T_TMP/server.err"
{ echo first-line; head -c 5000 /dev/zero | tr '\0' x; echo; echo last-line; } >"$T_TMP/big.log"
head -c 100 /dev/zero >"$T_TMP/data.bin"
case $1 in
fail) t_fail "a check that fails" ;;
san) t_ok "a check that passes"; echo "==1==ERROR: AddressSanitizer: fake" >"$T_TMP/san/asan.1" ;;
*) t_ok "a check that passes" ;;
esac
exit 0
EOF
    DDM_IT_KEEP_DIR="$OUT/keep" DDM_TAP_COUNTS_FAILURES=1 bash "$OUT/$1.sh" "$2" >"$OUT/$1.out" 2>&1
}
# kept NAME: the one directory kept for child NAME (none: "")
kept() { find "$OUT/keep" -mindepth 1 -maxdepth 1 -name "$1.*" 2>/dev/null; }
child_tmp() { sed -n 's/^# tmp //p' "$OUT/$1.out"; }

child failing fail
d=$(kept failing)
[ -n "$d" ] && grep -qF "# kept evidence in $d (" "$OUT/failing.out" &&
    t_ok "a failed check keeps the test's evidence, and says where ($(grep -m1 'kept evidence' "$OUT/failing.out"))" ||
    t_fail "a failed check keeps the test's evidence, and says where" "kept: '$d'" "$(t_diag "$OUT/failing.out")"
grep -q "^the server said: marker-" "$d/server.err" 2>/dev/null && [ ! -e "$d/data.bin" ] &&
    t_ok "... its logs, not other files" ||
    t_fail "... its logs, not other files" "$(ls -la "$d" 2>&1 | sed 's/^/# /')"
[ "$(wc -c <"$d/big.log" 2>/dev/null)" = 2000 ] && [ "$(tail -1 "$d/big.log" 2>/dev/null)" = last-line ] &&
    grep -q "big.log" "$d/MANIFEST" 2>/dev/null &&
    t_ok "... a log over the bound as its last T_KEEP_FILE_MAX bytes, noted in MANIFEST" ||
    t_fail "... a log over the bound as its last T_KEEP_FILE_MAX bytes, noted in MANIFEST" \
        "$(wc -c "$d/big.log" 2>&1)" "$(cat "$d/MANIFEST" 2>&1)"
tmp=$(child_tmp failing)
[ -n "$tmp" ] && [ ! -e "$tmp" ] && t_ok "... and its temporary directory is removed all the same" ||
    t_fail "... and its temporary directory is removed all the same" "'$tmp'"

child sanitized san
d=$(kept sanitized)
[ -n "$d" ] && grep -q "AddressSanitizer: fake" "$d/san/asan.1" 2>/dev/null && grep -q "^# kept evidence in $d " "$OUT/sanitized.out" &&
    t_ok "a sanitizer report keeps the evidence, the report with it" ||
    t_fail "a sanitizer report keeps the evidence, the report with it" "kept: '$d'" "$(t_diag "$OUT/sanitized.out")"

child passing pass
d=$(kept passing)
[ -z "$d" ] && ! grep -q "kept evidence" "$OUT/passing.out" && grep -q "^ok 1" "$OUT/passing.out" &&
    t_ok "a test that passed keeps nothing" ||
    t_fail "a test that passed keeps nothing" "kept: '$d'" "$(t_diag "$OUT/passing.out")"
tmp=$(child_tmp passing)
[ -n "$tmp" ] && [ ! -e "$tmp" ] && t_ok "... and its temporary directory is removed" ||
    t_fail "... and its temporary directory is removed" "'$tmp'"
exit 0
