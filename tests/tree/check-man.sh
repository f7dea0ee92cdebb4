#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The man pages (doc/*.1) format without a groff warning at 60, 80 and 100
# columns (-ww: every warning), and a made-up page with a line groff cannot
# justify proves the check sees such a warning. TAP.
set -u
: "${DDM_TOP_SRCDIR:?run under make check}"
command -v groff >/dev/null 2>&1 || { echo "1..0 # SKIP groff is not installed"; exit 0; }

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-man.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; sed 's/^/# /' "$T_TMP/err"; }

# warnings PAGE COLUMNS: groff's warnings formatting PAGE as man does for a
# terminal of COLUMNS, in $T_TMP/err; false if there are any.
warnings() {
    groff -t -man -Tutf8 -ww -rLL="$2"n "$1" >/dev/null 2>"$T_TMP/err"
    [ ! -s "$T_TMP/err" ]
}

pages=("$DDM_TOP_SRCDIR"/doc/*.1)
echo "1..$(( ${#pages[@]} * 3 + 1 ))"
for page in "${pages[@]}"; do
    for cols in 60 80 100; do
        if warnings "$page" $cols; then
            ok "$(basename "$page") at $cols columns: no warning"
        else
            not_ok "$(basename "$page") at $cols columns: no warning"
        fi
    done
done

# The check can fail: a justified paragraph whose line holds one long
# unbreakable word cannot be adjusted.
cat >"$T_TMP/bad.1" <<'MAN'
.TH BAD 1
.SH DESCRIPTION
With
.BR \-\-json :
.B {"schema":1,"vms":{KEY:{"pid","app","state","views":{NAME:{...}}}},"global":{NAME:{...}}}
(each view's name).
MAN
if ! warnings "$T_TMP/bad.1" 80 && grep -q "adjust\|break" "$T_TMP/err"; then
    ok "a page with an unjustifiable line is caught"
else
    not_ok "a page with an unjustifiable line is caught"
fi
[ $FAILED -eq 0 ]
