#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot` without VMs and without a server: it runs in process,
# returns once discovery is settled (--wait is the longest it waits: with
# no VM on the scanned ports nothing holds it back), prints one JSON object
# with the VM and plugin lists, and starts no server.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 5

base=$(t_free_ports 2) || t_skip_all "no free ports"
sock="$T_TMP/ddmon.sock"
start=$(date +%s%N)
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=local \
    --scan-ports "$base-$((base + 1))" snapshot --wait 20000 --json >"$T_TMP/snap.json" 2>"$T_TMP/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] && t_ok "snapshot exits 0" || t_fail "snapshot exits 0" "rc=$rc $(cat "$T_TMP/err")"
[ "$ms" -lt 10000 ] && t_ok "snapshot returns once settled, well before --wait 20000 ($ms ms)" \
    || t_fail "snapshot returns once settled, well before --wait 20000" "$ms ms"
python3 - "$T_TMP/snap.json" <<'EOF' && t_ok "one JSON object with vms, plugins, views" || t_fail "one JSON object with vms, plugins, views" "$(head -c 300 "$T_TMP/snap.json")"
import json, sys
doc = json.load(open(sys.argv[1]))  # doc/json.md
assert doc["schema"] == 1
assert doc["global"]["vms"]["name"] == "vms" and doc["global"]["vms"]["rows"] == []
assert doc["global"]["plugins"]["name"] == "plugins"
assert doc["vms"] == {}
EOF
[ ! -e "$sock" ] && t_ok "no server was started" || t_fail "no server was started"
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    snapshot --wait 0 >"$T_TMP/snap.txt" 2>"$T_TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^KEY" "$T_TMP/snap.txt" && t_ok "text snapshot prints the VM table" \
    || t_fail "text snapshot prints the VM table" "rc=$rc $(cat "$T_TMP/snap.txt" "$T_TMP/err")"
exit 0
