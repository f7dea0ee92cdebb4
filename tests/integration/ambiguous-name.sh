#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two VMs running the same app: a command naming the app says it is
# ambiguous (core commands and plugin commands alike, exit 3), a pid still
# works, and the selection by that name reaches one of them; a name that
# two different apps end in (mail: com.a.mail, com.b.mail) is refused by
# select too (exit 3), and the selection stays as it was.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo || t_skip_all "the vminfo plugin was configured out"
t_plan 7
app=com.example.twin
base=$(t_free_ports 4) || t_skip_all "no free ports"
t_start_simvm --vms 4 --app "$app" --app "$app" --app com.a.mail --app com.b.mail --base-port "$base" --port-file "$T_TMP/ports" --gc-every 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port "$(t_free_port)" \
    --debug-port-base "$(t_free_port)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
both() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c " $app .* ready " "$T_TMP/vms.txt")" = 2 ] \
    && [ "$(grep -c " com\.[ab]\.mail .* ready " "$T_TMP/vms.txt")" = 2 ]; }
t_wait 15 both && t_ok "two VMs run $app" || t_fail "two VMs run $app" "$(cat "$T_TMP/vms.txt")"

t_ddmon --no-autostart view threads --vm "$app" >/dev/null 2>"$T_TMP/view.err"; rc=$?
[ $rc -eq 3 ] && grep -q "'$app' matches 2 VMs: .*; name one by pid or key" "$T_TMP/view.err" \
    && t_ok "view --vm APP: ambiguous, exit 3" || t_fail "view --vm APP: ambiguous, exit 3" "rc=$rc $(cat "$T_TMP/view.err")"
t_ddmon --no-autostart gc "$app" >/dev/null 2>"$T_TMP/gc.err"; rc=$?
[ $rc -eq 3 ] && cmp -s "$T_TMP/gc.err" "$T_TMP/view.err" \
    && t_ok "a plugin command naming APP says the same, exit 3" \
    || t_fail "a plugin command naming APP says the same, exit 3" "rc=$rc $(cat "$T_TMP/gc.err")"
pid=$(awk 'NR==1{print $1}' "$T_TMP/ports")
t_ddmon --no-autostart gc "$pid" >"$T_TMP/gcpid.out" 2>&1 && t_ok "gc by pid works" \
    || t_fail "gc by pid works" "$(cat "$T_TMP/gcpid.out")"
t_ddmon --no-autostart --json select "$app" >"$T_TMP/sel.json" 2>&1
python3 - "$T_TMP/sel.json" "$T_TMP/ports" <<'PY' >"$T_TMP/sel.chk" 2>&1 && t_ok "select APP reaches one of them" \
    || t_fail "select APP reaches one of them" "$(cat "$T_TMP/sel.chk" "$T_TMP/sel.json")"
import json, sys
sel = json.load(open(sys.argv[1]))
pids = {int(l.split()[0]) for l in open(sys.argv[2]) if l.strip()}
assert sel["vm"] is not None and sel["vm"]["pid"] in pids, sel
PY
t_ddmon --no-autostart select mail >/dev/null 2>"$T_TMP/mail.err"; rc=$?
[ $rc -eq 3 ] && grep -q "'mail' matches 2 VMs: .*com.a.mail.*com.b.mail.*; name one by pid or key" "$T_TMP/mail.err" \
    && t_ok "select NAME of two different apps: ambiguous, exit 3" \
    || t_fail "select NAME of two different apps: ambiguous, exit 3" "rc=$rc $(cat "$T_TMP/mail.err")"
t_ddmon --no-autostart --json select >"$T_TMP/sel2.json" 2>&1
grep -q "\"selection\": *\"$app\"" "$T_TMP/sel2.json" && t_ok "... and the selection stays $app" \
    || t_fail "... and the selection stays $app" "$(cat "$T_TMP/sel2.json")"
