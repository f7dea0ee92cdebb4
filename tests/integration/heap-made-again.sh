#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A heap view taken back after the linger (vm_view_unmake, ABI 1.6) and made
# again shows the data the plugin still holds (review rU 3: GET
# /api/vms/K/views/heap.summary answered an empty table until the next
# HPIF). One simulated VM A, the heap plugin, a server with --http and
# heap.grace_ms=600000, so collection (and the plugin's state) outlives
# the views:
#  1. `ddmon view heap.summary --vm A` shows A's heap (rows), collection on;
#  2. nobody watches A's heap views: the one-shot view's interest (30 s)
#     and then the linger (10 s) pass, and they are taken back (made:
#     false in GET /api/vms);
#  3. GET /api/vms/A/views/heap.summary makes it again and answers with the
#     rows the plugin held: the same heaps with the same HPIF timestamps as
#     in 1 (the VM runs no GC, so no other HPIF comes).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" \
    || t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins heap || t_skip_all "the heap plugin was not built"
t_plan 3
base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --seed 7 --gc-every 0
port_lines() { wc -l <"$T_TMP/ports"; }
t_wait 10 t_is 1 port_lines || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
A=127.0.0.1:$(awk 'NR==1{print $2}' "$T_TMP/ports")
export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    --plugin-opt heap.grace_ms=600000 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
web=${url%%\?*}
token=${url#*token=}
vm_path="api/vms/$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$A")"
# get PATH FIELD: "made" (A's heap.summary in GET /api/vms: true, false or
# absent) or "heaps" (GET PATH's rows as HEAP@TIMESTAMP, comma-separated:
# the HPIF's own timestamp tells the HPIF the plugin held from a new one).
get() {
    python3 - "$web" "$token" "$A" "$1" "$2" <<'PYEOF'
import json, sys, urllib.request
web, token, key, path, field = sys.argv[1:6]
req = urllib.request.Request(web + path)
req.add_header("Authorization", "Bearer " + token)
doc = json.load(urllib.request.urlopen(req, timeout=10))
if field == "made":
    m = (((doc["vms"].get(key) or {}).get("views") or {}).get("heap.summary")) or {}
    print(str(m["made"]).lower() if "made" in m else "absent")
else:
    rows = doc.get("rows") or []
    cols = [c if isinstance(c, str) else c.get("name") for c in (doc.get("columns") or [])]
    pick = lambda r, k: r[k] if isinstance(r, dict) else r[cols.index(k)]
    print(",".join("%s@%s" % (pick(r, "heap"), pick(r, "timestamp")) for r in rows))
PYEOF
}
listed() { [ "$(get api/vms made)" != absent ]; }
if ! t_wait 15 listed; then
    t_fail "VM A listed by GET /api/vms" "$(get api/vms made 2>&1 | head -c 400)"
    exit 1
fi
# 1. a one-shot view: made, collection on, the HPIF "now" shown
heaps_of_view() { t_ddmon --json view heap.summary --vm "$A" >"$T_TMP/first.json" 2>&1 \
    && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d.get("rows") or d.get("view",{}).get("rows") or []; print(",".join("%s@%s" % (x["heap"], x["timestamp"]) for x in r))' "$T_TMP/first.json"; }
first=""
have_rows() { first=$(heaps_of_view); [ -n "$first" ]; }
if t_wait 10 have_rows; then
    t_ok "view heap.summary --vm A shows A's heaps ($first)"
else
    t_fail "view heap.summary --vm A shows A's heaps" "$(head -c 400 "$T_TMP/first.json")"
fi
# 2. unwatched: taken back after the view's interest and the linger
unmade() { [ "$(get api/vms made)" = false ]; }
if t_wait 60 unmade; then
    t_ok "A's heap.summary, unwatched, is taken back (made: false)"
else
    t_fail "A's heap.summary, unwatched, is taken back" "$(get api/vms made)"
fi
# 3. made again by a GET: the rows the plugin held, at once
again=$(get "$vm_path/views/heap.summary" heaps)
if [ -n "$first" ] && [ "$again" = "$first" ]; then
    t_ok "GET makes it again with the heaps the plugin held ($again)"
else
    t_fail "GET makes it again with the heaps the plugin held" "first '$first' again '$again'"
fi
