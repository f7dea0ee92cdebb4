#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Views plugins declare (ABI 1.6) are made for the VM somebody asks about,
# not for every VM (review rM 1). Two simulated VMs A and B, the heap
# plugin, a server with --http; GET /api/vms shows each VM's views with
# "made" (true: made, false: declared, not made yet):
#  1. before any look neither VM's heap.summary is made (made: false, url);
#  2. `ddmon views --vm A` lists A's heap views; B's stay unmade;
#  3. `ddmon view nosuch --vm B` fails naming B's views (heap.summary among
#     them) and makes none of B's;
#  4. `ddmon view nosuch` fails naming every view (heap.summary among them)
#     and makes none of B's;
#  5. GET /api/vms/B makes B's views (made: true);
#  6. nobody watches A's views: after the linger (10 s) the heap plugin
#     takes them back (vm_view_unmake): made: false again, and a look
#     makes them again.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" \
    || t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins heap || t_skip_all "the heap plugin was not built"
t_plan 10

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --seed 7
port_lines() { wc -l <"$T_TMP/ports"; }
t_wait 10 t_is 2 port_lines || t_fail "simvm started 2 VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
A=127.0.0.1:$(awk 'NR==1{print $2}' "$T_TMP/ports")
B=127.0.0.1:$(awk 'NR==2{print $2}' "$T_TMP/ports")
export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
web=${url%%\?*}
token=${url#*token=}

# made KEY VIEW [PATH]: "true", "false" or "absent": the view's "made" in
# GET PATH (/api/vms by default, or /api/vms/KEY: {"vm": {...}}).
made() {
    python3 - "$web" "$token" "$1" "$2" "${3:-}" <<'EOF'
import json, sys, urllib.parse, urllib.request
web, token, key, view, path = sys.argv[1:6]
req = urllib.request.Request(web + (path or "api/vms"))
req.add_header("Authorization", "Bearer " + token)
doc = json.load(urllib.request.urlopen(req, timeout=10))
vm = doc["vm"] if path else doc["vms"].get(key)
m = ((vm or {}).get("views") or {}).get(view)
print("absent" if m is None or "made" not in m else str(m["made"]).lower())
EOF
}
both_ready() { [ "$(made "$A" heap.summary)" != absent ] && [ "$(made "$B" heap.summary)" != absent ]; }
t_wait 15 both_ready
if [ "$(made "$A" heap.summary)" = false ] && [ "$(made "$B" heap.summary)" = false ]; then
    t_ok "before any look, neither VM's heap.summary is made (listed by name)"
else
    t_fail "before any look, neither VM's heap.summary is made" "A $(made "$A" heap.summary) B $(made "$B" heap.summary)"
fi

t_ddmon views --vm "$A" >"$T_TMP/views-a.out" 2>&1
if grep -q 'heap.summary' "$T_TMP/views-a.out" && [ "$(made "$A" heap.summary)" = true ]; then
    t_ok "views --vm A lists A's heap views, made"
else
    t_fail "views --vm A lists A's heap views, made" "$(head -5 "$T_TMP/views-a.out")"
fi
[ "$(made "$B" heap.summary)" = false ] && t_ok "views --vm A makes none of B's views" \
    || t_fail "views --vm A makes none of B's views" "$(made "$B" heap.summary)"

t_ddmon view nosuch --vm "$B" >"$T_TMP/nosuch-b.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "unknown view 'nosuch'; views of VM .*heap.summary" "$T_TMP/nosuch-b.out"; then
    t_ok "view nosuch --vm B fails naming B's views"
else
    t_fail "view nosuch --vm B fails naming B's views" "status $rc" "$(cat "$T_TMP/nosuch-b.out")"
fi
[ "$(made "$B" heap.summary)" = false ] && t_ok "that message makes none of B's views" \
    || t_fail "that message makes none of B's views" "$(made "$B" heap.summary)"

t_ddmon view nosuch >"$T_TMP/nosuch.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "unknown view 'nosuch'; known views: .*heap.summary" "$T_TMP/nosuch.out" \
    && [ "$(made "$B" heap.summary)" = false ]; then
    t_ok "view nosuch fails naming every view, B's made none"
else
    t_fail "view nosuch fails naming every view, B's made none" "status $rc" "$(cat "$T_TMP/nosuch.out")" \
        "B: $(made "$B" heap.summary)"
fi

vm_path="api/vms/$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$B")"
[ "$(made "$B" heap.summary "$vm_path")" = true ] && t_ok "GET /api/vms/B makes B's views" \
    || t_fail "GET /api/vms/B makes B's views" "$(made "$B" heap.summary "$vm_path")"
[ "$(made "$B" heap.summary)" = true ] && t_ok "then GET /api/vms shows them made" \
    || t_fail "then GET /api/vms shows them made" "$(made "$B" heap.summary)"

unmade() { [ "$(made "$A" heap.summary)" = false ]; }
if t_wait 40 unmade; then
    t_ok "A's heap views, unwatched, are taken back after the linger"
else
    t_fail "A's heap views, unwatched, are taken back after the linger" "$(made "$A" heap.summary)"
fi
t_ddmon view heap.summary --vm "$A" >"$T_TMP/again.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(made "$A" heap.summary)" = true ] && t_ok "a look makes A's heap.summary again" \
    || t_fail "a look makes A's heap.summary again" "status $rc" "$(head -3 "$T_TMP/again.out")"
