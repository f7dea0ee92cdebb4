#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The one-shot snapshot, without a server, against ddmon-simvm: three
# DDM-aware VMs and one that answers HELO like a plain JVM must all be
# listed, the DDM ones with their pids and names, the JVM one as non-DDM;
# and it returns once they are (--wait is a limit, not a delay).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 7

base=$(t_free_ports 4) || t_skip_all "no free ports"
t_start_simvm --vms 3 --jvm-vms 1 --base-port "$base" --port-file "$T_TMP/ports" --seed 7
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"

# simvm skips busy ports: scan exactly the ports it reports.
range=$(t_simvm_ports "$T_TMP/ports")
start=$(date +%s%N)
t_ddmon --scan=local --scan-ports "$range" snapshot --wait 20000 --json \
    >"$T_TMP/snap.json" 2>"$T_TMP/snap.err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 10000 ] && t_ok "snapshot returns once settled, well before --wait 20000 ($ms ms)" \
    || t_fail "snapshot returns once settled, well before --wait 20000" "$ms ms"
[ $rc -eq 0 ] && t_ok "snapshot exits 0" || t_fail "snapshot exits 0" "rc=$rc" "$(tail -5 "$T_TMP/snap.err")"

python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" rows "$T_TMP/snap.json" vms >"$T_TMP/vms.rows" 2>"$T_TMP/q.err"
n=$(wc -l <"$T_TMP/vms.rows")
[ "$n" -eq 4 ] && t_ok "four VMs listed" || t_fail "four VMs listed" "got $n rows" "$(cat "$T_TMP/vms.rows" "$T_TMP/q.err")"

# simvm's port file: "pid port app" per VM; each DDM VM must appear with that pid and app.
ok=1
while read -r pid port app mode; do
    [ "${mode:-}" = "jvm" ] && continue
    grep -q "\"pid\": $pid\b" "$T_TMP/vms.rows" && grep "\"pid\": $pid\b" "$T_TMP/vms.rows" | grep -q "\"app\": \"$app\"" || { ok=0; echo "# missing pid $pid app $app"; }
done <"$T_TMP/ports"
[ $ok = 1 ] && t_ok "DDM VMs listed with pid and app name" || t_fail "DDM VMs listed with pid and app name" "$(cat "$T_TMP/ports")"

ddm=$(grep -c '"ddm": true' "$T_TMP/vms.rows")
[ "$ddm" -eq 3 ] && t_ok "three VMs are DDM-aware" || t_fail "three VMs are DDM-aware" "got $ddm"
grep '"ddm": false' "$T_TMP/vms.rows" | grep -q '"state": "plain"' && t_ok "the plain JVM is listed as non-DDM" \
    || t_fail "the plain JVM is listed as non-DDM" "$(cat "$T_TMP/vms.rows")"
exit 0
