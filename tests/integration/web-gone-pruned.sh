#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web dashboard's memory of VMs that left (web/static/app.js alone in
# headless Chromium, its stream and fetch faked: no server, no port): the
# last GONE_KEPT VMs to leave keep their page (gone, last view, app name);
# what the page held of older ones is dropped, so a dashboard left open
# does not grow with every VM it ever saw (web_gone_pruned.py).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || t_need_tool chromium chromium
t_plan 5

timeout 180 python3 "$DDM_TOP_SRCDIR/tests/integration/web_gone_pruned.py" "$CHROMIUM" "$DDM_TOP_SRCDIR" \
    "$T_TMP" >"$T_TMP/gone.out" 2>"$T_TMP/gone.err"
rc=$?
if [ $rc -eq 2 ]; then
    t_diag "$T_TMP/gone.out" "$T_TMP/chromium-profile.log"
    for _ in $(seq 5); do t_fail "chromium runs" "$(head -3 "$T_TMP/gone.out")"; done
    exit 0
fi
[ $rc -eq 0 ] || t_fail "web_gone_pruned.py exits 0" "rc=$rc $(tail -5 "$T_TMP/gone.err")"
while read -r verdict rest; do
    case $verdict in
    PASS) t_ok "$rest" ;;
    FAIL) t_fail "${rest%% -- *}" "${rest#* -- }" ;;
    "#") echo "# $rest" ;;
    *) t_fail "web_gone_pruned.py output" "$verdict $rest" ;;
    esac
done <"$T_TMP/gone.out"
exit 0
