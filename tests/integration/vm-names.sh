#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Naming a VM (issue 12, defect 10): one resolver and one message for the
# core's commands and the plugins'; a unique suffix of an app name names
# its VM ("notes" for com.example.notes), a suffix two apps share is
# ambiguous and lists them; a plugin command's --json failure is the same
# object as every other failure; `ddmon help CMD` shows that command only.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins vminfo || t_skip_all "the vminfo plugin was configured out"
t_plan 8
base=$(t_free_ports 3) || t_skip_all "no free ports"
t_start_simvm --vms 3 --app com.example.notes --app com.a.dup --app com.b.dup --base-port "$base" \
    --port-file "$T_TMP/ports" --gc-every 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port "$(t_free_port)" \
    --debug-port-base "$(t_free_port)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
all() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c " ready " "$T_TMP/vms.txt")" = 3 ]; }
t_wait 15 all && t_ok "three VMs are ready" || t_fail "three VMs are ready" "$(cat "$T_TMP/vms.txt")"

# A unique suffix names the VM, in core and plugin commands alike.
t_ddmon --no-autostart gc notes >"$T_TMP/gc-notes.out" 2>&1; rc=$?
t_ddmon --no-autostart view vminfo --vm notes >"$T_TMP/view-notes.out" 2>&1; rc2=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && grep -q com.example.notes "$T_TMP/view-notes.out" &&
    t_ok "'notes' names com.example.notes (gc, view --vm)" ||
    t_fail "'notes' names com.example.notes (gc, view --vm)" "gc rc=$rc view rc=$rc2" \
        "$(cat "$T_TMP/gc-notes.out" "$T_TMP/view-notes.out")"

# No match: the same message from the core and from a plugin.
t_ddmon --no-autostart gc nosuch >/dev/null 2>"$T_TMP/gc-none.err"; rc=$?
t_ddmon --no-autostart view vminfo --vm nosuch >/dev/null 2>"$T_TMP/view-none.err"; rc2=$?
[ $rc -eq 3 ] && [ $rc2 -eq 3 ] && cmp -s "$T_TMP/gc-none.err" "$T_TMP/view-none.err" &&
    grep -qx "ddmon: no VM matches 'nosuch' (try 'ddmon vms')" "$T_TMP/gc-none.err" &&
    t_ok "no match: one message, exit 3, from the core and from a plugin" ||
    t_fail "no match: one message, exit 3, from the core and from a plugin" "gc rc=$rc: $(cat "$T_TMP/gc-none.err")" \
        "view rc=$rc2: $(cat "$T_TMP/view-none.err")"

# A suffix two apps share: ambiguous, the VMs listed, the same message.
t_ddmon --no-autostart gc dup >/dev/null 2>"$T_TMP/gc-dup.err"; rc=$?
t_ddmon --no-autostart view vminfo --vm dup >/dev/null 2>"$T_TMP/view-dup.err"; rc2=$?
[ $rc -eq 3 ] && [ $rc2 -eq 3 ] && cmp -s "$T_TMP/gc-dup.err" "$T_TMP/view-dup.err" &&
    grep -q "'dup' matches 2 VMs: .*(com.a.dup, pid [0-9]*), .*(com.b.dup, pid [0-9]*); name one by pid or key" \
        "$T_TMP/gc-dup.err" &&
    t_ok "an ambiguous suffix lists the VMs, one message" ||
    t_fail "an ambiguous suffix lists the VMs, one message" "gc rc=$rc: $(cat "$T_TMP/gc-dup.err")" \
        "view rc=$rc2: $(cat "$T_TMP/view-dup.err")"
t_ddmon --no-autostart gc com.a.dup >"$T_TMP/gc-full.out" 2>&1 && t_ok "the full name still works" ||
    t_fail "the full name still works" "$(cat "$T_TMP/gc-full.out")"

# --json: a plugin command's failure is the object every failure prints.
t_ddmon --no-autostart gc nosuch --json >"$T_TMP/gc.json" 2>/dev/null
t_ddmon --no-autostart view vminfo --vm nosuch --json >"$T_TMP/view.json" 2>/dev/null
python3 - "$T_TMP/gc.json" "$T_TMP/view.json" <<'PY' >"$T_TMP/json.chk" 2>&1 &&
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("schema", None)  # the --json output's version, not the failure's
assert a == b, (a, b)
assert sorted(a) == ["code", "error", "kind", "ok"], a
PY
    t_ok "--json: a plugin's failure object equals the core's (ok, error, code, kind)" ||
    t_fail "--json: a plugin's failure object equals the core's" "$(cat "$T_TMP/json.chk" "$T_TMP/gc.json")"

# `ddmon help gc`: that command only.
t_ddmon --no-autostart help gc >"$T_TMP/help.out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$T_TMP/help.out")" -eq 2 ] && grep -q "^usage: ddmon gc PID$" "$T_TMP/help.out" &&
    t_ok "help gc prints gc's usage and summary only" ||
    t_fail "help gc prints gc's usage and summary only" "rc=$rc" "$(head -5 "$T_TMP/help.out")"
t_ddmon --no-autostart help vms >"$T_TMP/help2.out" 2>&1 && [ "$(wc -l <"$T_TMP/help2.out")" -eq 2 ] &&
    t_ddmon --no-autostart help no-such-cmd >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "^usage: ddmon vms$" "$T_TMP/help2.out" &&
    t_ok "help of ddmon's own command; an unknown one is a usage error" ||
    t_fail "help of ddmon's own command; an unknown one is a usage error" "rc=$rc" "$(cat "$T_TMP/help2.out")"
exit 0
