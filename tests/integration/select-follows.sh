#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A selection by app name follows the app across restarts: `ddmon select
# APP` makes the selected-VM port reach that app's VM; the app is stopped
# and started again (a new simvm process: new pid, another port, so another
# VM key) and the same port now reaches the new VM, while the other VMs keep
# their debugger ports; a debugger that comes to the selected-VM port while
# the app is down is held and attached once the app is back.
# Then the selection moves to a VM that is already up (an ART one, pid
# given): a debugger held on the selected-VM port meanwhile attaches to it
# at once, not when its hold runs out; while it is attached the selection
# moves again, the debugger stays on its VM and `ddmon select` says so.
# Which VM a debugger reached is told two ways: the app's VMs are the only
# Dalvik ones (VirtualMachine.Version through jdwpc says "DalvikVM"), and
# with --tcp-probe helo ddmon itself sends no JDWP command, so only the VM a
# debugger reached says "debugger_active" in its simvm's ground truth.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
PLAN=16
t_plan $PLAN
APP=com.example.follow

# bail REASON: the remaining checks fail (not run).
bail() { while [ "$T_N" -lt $PLAN ]; do t_fail "not run: $*"; done; exit 0; }
# start_app N BASEPORT SEED: simvm process N plays one Dalvik VM of $APP. Sets APP_PID.
start_app() {
    "$SIMVM" --vms 1 --mode dalvik --app "$APP" --base-port "$2" --seed "$3" --port-file "$T_TMP/app$1.ports" \
        --state-file "$T_TMP/app$1.json" >"$T_TMP/app$1.out" 2>"$T_TMP/app$1.err" &
    APP_PID=$!
    T_PIDS+=("$APP_PID")
    t_wait 10 test -s "$T_TMP/app$1.ports"
}
app_key() { echo "127.0.0.1:$(awk '{print $2}' "$T_TMP/app$1.ports")"; }
app_pid() { awk '{print $1}' "$T_TMP/app$1.ports"; }
vm_field() { t_vm_field "$@"; }
named() { [ "$(vm_field "$1" app)" = "$2" ]; }
listed() { vm_field "$1" key >/dev/null; }
# selected: "KEY PID" of the VM the selection reaches now ("none" if none).
selected() {
    t_ddmon --no-autostart --json select >"$T_TMP/sel.json" 2>"$T_TMP/sel.err" || return 1
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get("vm"); print("%s %s" % (v["key"], v["pid"]) if v else "none")' \
        "$T_TMP/sel.json"
}
selected_is() { [ "$(selected)" = "$1" ]; }
# active FILE: the debugger_active flags of a simvm's VMs, by port ("PORT=true ...").
active() {
    python3 -c 'import json,sys; print(" ".join("%d=%s" % (v["port"], str(v["debugger_active"]).lower()) for v in sorted(json.load(open(sys.argv[1]))["vms"], key=lambda v: v["port"])))' "$1"
}
all_false() { ! active "$1" | grep -q "=true"; }

# 1: two other VMs (ART), the app (Dalvik), a server that selects it by name.
"$SIMVM" --vms 2 --base-port 0 --seed 21 --port-file "$T_TMP/others.ports" --state-file "$T_TMP/others.json" \
    >"$T_TMP/others.out" 2>"$T_TMP/others.err" &
T_PIDS+=($!)
XB=$(t_free_ports 4)
start_app 1 "$XB" 31 || bail "the app did not start: $(cat "$T_TMP/app1.err")"
first=$APP_PID
t_wait 10 test -s "$T_TMP/others.json"
read -r o1 o2 < <(awk '{print "127.0.0.1:" $2}' "$T_TMP/others.ports" | paste -sd' ')
read -r oa1 oa2 < <(awk '{print $3}' "$T_TMP/others.ports" | paste -sd' ')
SEL=$(t_free_port)
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/others.ports"),$XB-$((XB + 3))" --scan-interval 300 \
    --tcp-probe helo --selected-port "$SEL" --debug-port-base "$(t_free_ports 8)" ||
    bail "no server: $(tail -5 "$T_TMP/server.err")"
k1=$(app_key 1)
if [ -n "${o1:-}" ] && [ -n "${o2:-}" ] && t_wait 20 named "$k1" "$APP" && t_wait 10 named "$o1" "$oa1" &&
    t_wait 10 named "$o2" "$oa2"; then
    t_ok "three VMs listed: $APP ($k1), $oa1 ($o1), $oa2 ($o2)"
else
    t_fail "three VMs listed" "$(t_ddmon --no-autostart vms 2>&1)" "$(tail -5 "$T_TMP/server.err")"
    bail "the VMs were not listed"
fi
dp1=$(t_debug_port "$o1"); dp2=$(t_debug_port "$o2"); dpx=$(t_debug_port "$k1")

# 2-4: select by name; the selected-VM port reaches the app.
if t_ddmon --no-autostart select "$APP" >"$T_TMP/select.out" 2>&1 && grep -qF "$k1" "$T_TMP/select.out" &&
    selected_is "$k1 $(app_pid 1)"; then
    t_ok "ddmon select $APP: reaches $k1 (pid $(app_pid 1))"
else
    t_fail "ddmon select $APP: reaches $k1" "$(cat "$T_TMP/select.out" "$T_TMP/sel.json")"
fi
if all_false "$T_TMP/app1.json" && all_false "$T_TMP/others.json"; then
    t_ok "before any debugger no VM saw a JDWP command (--tcp-probe helo)"
else
    t_fail "before any debugger no VM saw a JDWP command (--tcp-probe helo)" \
        "app: $(active "$T_TMP/app1.json")" "others: $(active "$T_TMP/others.json")"
fi
out=$(timeout 20 "$JDWPC" "127.0.0.1:$SEL" version 2>&1)
p1=${k1##*:}
if echo "$out" | grep -q "^version .*DalvikVM" && t_wait 5 eval '[ "$(active "$T_TMP/app1.json")" = "$p1=true" ]' &&
    all_false "$T_TMP/others.json"; then
    t_ok "the selected-VM port $SEL reaches $APP: $out"
else
    t_fail "the selected-VM port $SEL reaches $APP" "$out" "app: $(active "$T_TMP/app1.json")" \
        "others: $(active "$T_TMP/others.json")" "$(grep relay "$T_TMP/server.err" | tail -3)"
fi

# 5-9: the app restarts: new process, new pid, another port.
t_stop "$first"
start_app 2 "$((XB + 2))" 32
k2=$(app_key 2)
if [ "$k2" != "$k1" ] && [ "$(app_pid 2)" != "$(app_pid 1)" ] && t_wait 20 named "$k2" "$APP"; then
    t_ok "$APP restarted as $k2 (pid $(app_pid 2)), listed"
else
    t_fail "$APP restarted as $k2 (pid $(app_pid 2)), listed" "$(t_ddmon --no-autostart vms 2>&1)"
fi
if t_wait 15 selected_is "$k2 $(app_pid 2)"; then
    t_ok "the selection follows it: ddmon select shows $k2"
else
    t_fail "the selection follows it: ddmon select shows $k2" "$(cat "$T_TMP/sel.json" "$T_TMP/sel.err")"
fi
out=$(timeout 20 "$JDWPC" "127.0.0.1:$SEL" version 2>&1)
p2=${k2##*:}
if echo "$out" | grep -q "^version .*DalvikVM" && t_wait 5 eval '[ "$(active "$T_TMP/app2.json")" = "$p2=true" ]' &&
    all_false "$T_TMP/others.json"; then
    t_ok "the selected-VM port $SEL now reaches the new VM: $out"
else
    t_fail "the selected-VM port $SEL now reaches the new VM" "$out" "app: $(active "$T_TMP/app2.json")" \
        "others: $(active "$T_TMP/others.json")" "$(grep relay "$T_TMP/server.err" | tail -3)"
fi
if [ -n "$dp1" ] && [ "$(t_debug_port "$o1")" = "$dp1" ] && [ -n "$dp2" ] && [ "$(t_debug_port "$o2")" = "$dp2" ]; then
    t_ok "the other VMs keep their debugger ports ($dp1, $dp2)"
else
    t_fail "the other VMs keep their debugger ports" "$o1: $dp1 -> $(t_debug_port "$o1")" "$o2: $dp2 -> $(t_debug_port "$o2")"
fi
if ! listed "$k1" && [ -n "$dpx" ] && [ "$(t_debug_port "$k2")" = "$dpx" ]; then
    t_ok "the old VM is gone; the new one has the app's debugger port $dpx"
else
    t_fail "the old VM is gone; the new one has the app's debugger port" "$k1 listed: $(listed "$k1" && echo yes)" \
        "$k2: $(t_debug_port "$k2") want $dpx"
fi

# 10-12: a debugger on the selected-VM port while the app is down is held, then attached.
t_stop "$APP_PID"
selection() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["selection"])' "$T_TMP/sel.json"; }
if t_wait 10 selected_is none && [ "$(selection)" = "$APP" ]; then
    t_ok "the app is down: the selection stays $APP, no VM reached"
else
    t_fail "the app is down: the selection stays $APP, no VM reached" "$(cat "$T_TMP/sel.json")"
fi
timeout 25 "$JDWPC" "127.0.0.1:$SEL" version >"$T_TMP/held.out" 2>&1 &
held=$!
sleep 1
start_app 3 "$XB" 33
k3=$(app_key 3)
t_wait 20 t_dead "$held"
wait "$held"; rc=$?
p3=${k3##*:}
if [ $rc = 0 ] && grep -q "^version .*DalvikVM" "$T_TMP/held.out" &&
    t_wait 5 eval '[ "$(active "$T_TMP/app3.json")" = "$p3=true" ]'; then
    t_ok "a debugger that came while the app was down reaches it once it is back ($k3)"
else
    t_fail "a debugger that came while the app was down reaches it once it is back ($k3)" "exit $rc" \
        "$(cat "$T_TMP/held.out")" "$(grep relay "$T_TMP/server.err" | tail -3)"
fi
if ! t_dead "$DDMON_PID" && all_false "$T_TMP/others.json"; then
    t_ok "the other VMs never saw a debugger; the server runs on"
else
    t_fail "the other VMs never saw a debugger; the server runs on" "others: $(active "$T_TMP/others.json")"
fi

# 13-15: the selection moves to a VM that is up. A debugger waits on the
# selected-VM port for an app that is not running (held); `ddmon select
# PID` of the ART VM $o1, up and never debugged (so no event of its own
# releases the debugger), attaches it there at once. Without that it waits
# out its hold (10 s) and is closed, and its Version never comes.
nothing=com.example.nothing
t_ddmon --no-autostart select "$nothing" >/dev/null 2>&1
rm -f "$T_TMP/go"
timeout 60 "$JDWPC" "127.0.0.1:$SEL" version waitfile "$T_TMP/go" >"$T_TMP/moved.out" 2>&1 &
mover=$!
t_wait 10 grep -q "held until a VM matching '$nothing'" "$T_TMP/server.err"
# a second one held beside it: it stays held when the first attaches
timeout 60 "$JDWPC" "127.0.0.1:$SEL" version >"$T_TMP/second.out" 2>&1 &
second=$!
held_twice() { [ "$(grep -c "held until a VM matching '$nothing'" "$T_TMP/server.err")" -ge 2 ]; }
t_wait 10 held_twice
pid1=$(vm_field "$o1" pid)
po1=${o1##*:}
t_ddmon --no-autostart select "$pid1" >"$T_TMP/select2.out" 2>&1
if [ -n "$pid1" ] && t_wait 20 grep -q "^version " "$T_TMP/moved.out" && ! grep -q "DalvikVM" "$T_TMP/moved.out" &&
    t_wait 5 eval 'active "$T_TMP/others.json" | grep -q "$po1=true"'; then
    t_ok "a debugger held on the selected-VM port attaches when the selection moves to a VM that is up ($o1)"
else
    t_fail "a debugger held on the selected-VM port attaches when the selection moves to a VM that is up ($o1)" \
        "pid $pid1" "$(cat "$T_TMP/select2.out" "$T_TMP/moved.out")" "others: $(active "$T_TMP/others.json")" \
        "$(grep relay "$T_TMP/server.err" | tail -4)"
fi
# The selection moves on while that debugger is attached: it stays on $o1.
t_ddmon --no-autostart select "$APP" >"$T_TMP/select3.out" 2>&1
if grep -qF "a debugger attached through port $SEL stays on $o1 (pid $pid1" "$T_TMP/select3.out"; then
    t_ok "ddmon select says the debugger attached through port $SEL stays on $o1"
else
    t_fail "ddmon select says the debugger attached through port $SEL stays on $o1" "$(cat "$T_TMP/select3.out")"
fi
# The second debugger held with the first was not refused when the first
# attached (the VM's one debugger): it stays held, and attaches once the
# first leaves or is closed at its hold's end, never "refused" at once.
if ! grep -q "a second debugger on port $SEL is refused" "$T_TMP/server.err"; then
    t_ok "a second debugger held with it stays held, not refused"
else
    t_fail "a second debugger held with it stays held, not refused" "$(grep relay "$T_TMP/server.err" | tail -4)"
fi
touch "$T_TMP/go"
wait "$mover"; rc=$?
wait "$second" 2>/dev/null
no_stays() { t_ddmon --no-autostart select "$APP" >"$T_TMP/select4.out" 2>&1 && ! grep -q "stays on" "$T_TMP/select4.out"; }
if [ $rc = 0 ] && t_wait 10 no_stays && ! t_dead "$DDMON_PID"; then
    t_ok "that debugger kept its session; once it left, ddmon select says nothing of it"
else
    t_fail "that debugger kept its session; once it left, ddmon select says nothing of it" "exit $rc" \
        "$(cat "$T_TMP/moved.out" "$T_TMP/select4.out")"
fi
exit 0
