#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web dashboard in headless Chromium against ddmon-simvm
# (web_dashboard.py drives it over the DevTools protocol): the VM rows,
# the thread names of a simulated VM as the API lists them, a thread-state
# change without a reload, a screenshot kept as an artifact in
# $DDM_TOP_BUILDDIR/test-artifacts/web-dashboard.png, and the page of a VM
# that exits (marked gone, its last views kept, its buttons off).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins threads vminfo heap || t_skip_all "the threads, vminfo and heap plugins were not built"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || t_need_tool chromium chromium
t_plan 18

base=$(t_free_ports 2) || t_skip_all "no free ports"
# Worker threads come and go about every second; the main thread switches
# between waiting and runnable every 1.5 s, the state change tests 9-10 wait for.
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --seed 11 --thread-activity 1000 \
    --main-state-every 1500
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    && t_ok "server started" || t_fail "server started" "$(cat "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
read -r _ port app _ <"$T_TMP/ports"
key="127.0.0.1:$port"
t_wait 10 t_is ready t_vm_field "$key" state && t_ok "the VM is ready" \
    || t_fail "the VM is ready" "$(cat "$T_TMP/dp.json")"

art="$DDM_TOP_BUILDDIR/test-artifacts"
mkdir -p "$art"
rm -f "$art/web-dashboard.png"
timeout 180 python3 "$DDM_TOP_SRCDIR/tests/integration/web_dashboard.py" "$CHROMIUM" "$url" "$key" \
    "$app" "$art/web-dashboard.png" >"$T_TMP/dash.out" 2>"$T_TMP/dash.err"
rc=$?
if [ $rc -eq 2 ]; then
    t_diag "$T_TMP/dash.out" "$art/chromium-profile.log"
    for _ in $(seq 14); do t_fail "chromium runs" "$(head -3 "$T_TMP/dash.out")"; done
    exit 0
fi
[ $rc -eq 0 ] || t_fail "web_dashboard.py exits 0" "rc=$rc $(tail -5 "$T_TMP/dash.err")"
while read -r verdict rest; do
    case $verdict in
    PASS) t_ok "$rest" ;;
    FAIL) t_fail "${rest%% -- *}" "${rest#* -- }" ;;
    "#") echo "# $rest" ;;
    *) t_fail "web_dashboard.py output" "$verdict $rest" ;;
    esac
done <"$T_TMP/dash.out"
rm -rf "$art/chromium-profile"
[ -s "$art/web-dashboard.png" ] && echo "# screenshot: $art/web-dashboard.png"
exit 0
