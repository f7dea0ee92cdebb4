#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon's adb discovery against a fake adb server (tests/integration/fake_adb.py)
# that bridges jdwp:PID to ddmon-simvm VMs on TCP ports: a device appears
# with its VMs (serial, names, relay port); FAIL on jdwp:PID is shown and
# retried with backoff, not in a loop; malformed and truncated hex4 lengths,
# a length larger than the data, streams cut mid-update and a bad status
# are logged and survived; unknown device states are shown, offline
# devices lose their VMs; pid lists that change faster than connections
# complete converge; a server that dies and comes back on the same port is
# found again, without a busy loop while it is gone.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=23
t_plan $PLAN

fake_adb_start || t_skip_all "no free ports for the fake adb server"
t_start_simvm --vms 3 --base-port 0 --port-file "$T_TMP/ports" --seed 11
if t_wait 10 test -s "$T_TMP/fake.ports" && t_wait 10 file_lines_ge "$T_TMP/ports" 3; then
    t_ok "fake adb server and simvm started"
else
    t_fail "fake adb server and simvm started" "$(cat "$T_TMP/fake.err" "$T_TMP/simvm.err")"
    exit 0
fi
read -r p1 port1 app1 _ < <(sed -n 1p "$T_TMP/ports")
read -r p2 port2 app2 _ < <(sed -n 2p "$T_TMP/ports")
read -r p3 port3 app3 _ < <(sed -n 3p "$T_TMP/ports")
S=emu-fake1

export ANDROID_ADB_SERVER_PORT=$FAKE_PORT
unset ADB_SERVER_SOCKET
relay_base=$(t_free_ports 8)
if t_start_server --scan=adb --debug-port-base "$relay_base" --selected-port 0; then
    t_ok "ddmon server started with --scan=adb"
else
    t_fail "ddmon server started with --scan=adb" "$(tail -5 "$T_TMP/server.err")"
    exit 0
fi

# 3: the device appears with its VMs, named as the VMs say.
fake_ctl vm "$S" "$p1" "127.0.0.1:$port1" >/dev/null
fake_ctl vm "$S" "$p2" "127.0.0.1:$port2" >/dev/null
fake_ctl vm "$S" "$p3" "127.0.0.1:$port3" >/dev/null
fake_ctl pids "$S" "$p1" "$p2" >/dev/null
fake_ctl devices "$S=device" >/dev/null
if t_wait 15 adb_vm_app_is "adb:$S:$p1" "$app1" && t_wait 5 adb_vm_app_is "adb:$S:$p2" "$app2"; then
    t_ok "device $S appears with its two VMs and their names"
else
    t_fail "device $S appears with its two VMs and their names" "$(cat "$T_TMP/vms.json")" "$(tail -5 "$T_TMP/server.err")"
    adb_bail $PLAN "the device never appeared"
fi

# 4: the VM rows show the device serial and a relay port column.
dev=$(adb_vm_field "adb:$S:$p1" device)
if [ "$dev" = "$S" ] && grep -q '"debug_port"' "$T_TMP/vms.json"; then
    t_ok "VM rows show the device serial and the debug (relay) port column"
else
    t_fail "VM rows show the device serial and the debug (relay) port column" "device='$dev'" "$(cat "$T_TMP/vms.json")"
fi
rport=$(adb_vm_field "adb:$S:$p1" debug_port)
if [ -n "$rport" ] && [ "$rport" -gt 0 ] 2>/dev/null; then
    t_ok "adb VM has relay port $rport"
else
    t_fail "adb VM has a relay port" "no debug port listed" "$(cat "$T_TMP/vms.json")"
fi

# 6: ddmon view devices lists the device as "device"; the view is ddmon's
# own (owner "ddmon", doc/json.md), as the other core views.
devices_owner_is_ddmon() {
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["global"]["devices"]["owner"] != "ddmon")' \
        "$T_TMP/devices.json"
}
if t_wait 5 adb_device_state_is "$S" device && devices_owner_is_ddmon; then
    t_ok "view devices lists $S in state device, owner ddmon"
else
    t_fail "view devices lists $S in state device, owner ddmon" "$(cat "$T_TMP/devices.json" "$T_TMP/devices.err")"
fi

# 7: states ddmon does not know are shown as they are; such a device offers no VMs.
fake_ctl devices "$S=device" "emu-odd=unauthorized" >/dev/null
if t_wait 10 adb_device_state_is emu-odd unauthorized && adb_vm_keys_are "adb:emu-odd:" ""; then
    t_ok "a device in state 'unauthorized' is listed as such, without VMs"
else
    t_fail "a device in state 'unauthorized' is listed as such, without VMs" "$(cat "$T_TMP/devices.json")"
fi

# 8: the device goes offline (its VMs go) and comes back (they return).
fake_ctl devices "$S=offline" >/dev/null
if t_wait 15 adb_vm_keys_are "adb:$S:" "" && fake_ctl devices "$S=device" >/dev/null &&
    t_wait 20 adb_vm_app_is "adb:$S:$p1" "$app1" && t_wait 10 adb_vm_app_is "adb:$S:$p2" "$app2"; then
    t_ok "offline drops the device's VMs, device brings them back"
else
    t_fail "offline drops the device's VMs, device brings them back" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi

# 9-11: jdwp:PID answered FAIL: the reason is shown on the VM's row, retried with backoff.
fake_ctl fail-jdwp "$S" "$p3" "already held by another debugger" >/dev/null
j0=$(fake_stat jdwp); t0=$(date +%s)
fake_ctl pids "$S" "$p1" "$p2" "$p3" >/dev/null
if t_wait 15 adb_vm_has "adb:$S:$p3" "already held by another debugger"; then
    t_ok "FAIL on jdwp:$p3 is shown on its row"
else
    t_fail "FAIL on jdwp:$p3 is shown on its row" "$(python3 "$ADB_Q" rows "$T_TMP/vms.json" vms)"
fi
# over 12 s: the first attempt and at least one retry, but no tight loop
sleep $((12 - ($(date +%s) - t0))) 2>/dev/null
j1=$(fake_stat jdwp); dt=$(($(date +%s) - t0))
attempts=$((j1 - j0))
if [ "$attempts" -ge 2 ] && [ "$attempts" -le 20 ]; then
    t_ok "jdwp:$p3 retried with backoff ($attempts attempts in $dt s)"
else
    t_fail "jdwp:$p3 retried with backoff" "$attempts attempts in $dt s (want 2..20)"
fi
fake_ctl unfail-jdwp "$S" "$p3" >/dev/null
if t_wait 40 adb_vm_app_is "adb:$S:$p3" "$app3"; then
    t_ok "once jdwp:$p3 succeeds the VM is connected and named"
else
    t_fail "once jdwp:$p3 succeeds the VM is connected and named" "$(python3 "$ADB_Q" rows "$T_TMP/vms.json" vms)"
fi

# 12-16: broken track-devices streams; each time ddmon logs, reconnects and keeps serving.
all3=$(adb_keys_for "$S" "$p1" "$p2" "$p3")
for fault in garbage cut biglen badstatus; do
    td0=$(fake_stat track_devices)
    fake_ctl "$fault" >/dev/null
    # badstatus hits the next request: make there be one
    [ "$fault" = badstatus ] && fake_ctl cut >/dev/null
    if t_wait 20 fake_stat_gt track_devices "$td0" && t_wait 20 adb_vm_keys_are "adb:$S:" "$all3" &&
        t_wait 10 adb_vm_app_is "adb:$S:$p1" "$app1" && ! t_dead "$DDMON_PID"; then
        t_ok "after '$fault' ddmon reconnects and lists the device's VMs again"
    else
        t_fail "after '$fault' ddmon reconnects and lists the device's VMs again" \
            "track_devices $td0 -> $(fake_stat track_devices)" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
    fi
done
if grep -qi "adb" "$T_TMP/server.err"; then
    t_ok "the broken streams were logged"
else
    t_fail "the broken streams were logged" "$(tail -5 "$T_TMP/server.err")"
fi

# 17-18: pid lists that change faster than connections complete (some pids have no VM).
for i in $(seq 1 25); do
    case $((i % 5)) in
    0) fake_ctl pids "$S" "$p1" 99001 >/dev/null ;;
    1) fake_ctl pids "$S" "$p2" "$p3" 99002 99003 >/dev/null ;;
    2) fake_ctl pids "$S" >/dev/null ;;
    3) fake_ctl pids "$S" "$p3" "$p1" >/dev/null ;;
    4) fake_ctl pids "$S" 99004 "$p2" >/dev/null ;;
    esac
done
fake_ctl pids "$S" "$p1" "$p2" >/dev/null
want=$(adb_keys_for "$S" "$p1" "$p2")
if t_wait 20 adb_vm_keys_are "adb:$S:" "$want"; then
    t_ok "after 25 rapid pid-list changes the VM list converges to the last one"
else
    t_fail "after 25 rapid pid-list changes the VM list converges to the last one" "want '$want' got '$(adb_vm_keys "adb:")'"
fi
if t_wait 20 adb_vm_app_is "adb:$S:$p1" "$app1" && t_wait 10 adb_vm_app_is "adb:$S:$p2" "$app2"; then
    t_ok "the remaining VMs are connected and named"
else
    t_fail "the remaining VMs are connected and named" "$(python3 "$ADB_Q" rows "$T_TMP/vms.json" vms)" "$(tail -5 "$T_TMP/server.err")"
fi

# 19-21: the adb server dies: devices go, no busy loop; it comes back: devices reappear.
fake_ctl die >/dev/null
if t_wait 15 adb_vm_keys_are "adb:" "" && t_wait 5 adb_device_gone "$S"; then
    t_ok "the dead adb server's device and VMs are gone"
else
    t_fail "the dead adb server's device and VMs are gone" "$(adb_vm_keys "adb:")" "$(cat "$T_TMP/devices.json")"
fi
c0=$(cpu_ticks "$DDMON_PID"); sleep 5; c1=$(cpu_ticks "$DDMON_PID")
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
if [ $((c1 - c0)) -le $((hz * 5 / 4)) ]; then # at most a quarter of a CPU (sanitizers included)
    t_ok "no busy loop while the adb server is gone ($((c1 - c0)) ticks in 5 s)"
else
    t_fail "no busy loop while the adb server is gone" "$((c1 - c0)) ticks in 5 s at $hz Hz"
fi
conn0=$(fake_stat connections)
fake_ctl revive >/dev/null
if t_wait 40 adb_vm_keys_are "adb:$S:" "$want" && t_wait 15 adb_vm_app_is "adb:$S:$p1" "$app1"; then
    t_ok "the revived adb server's device and VMs reappear"
else
    t_fail "the revived adb server's device and VMs reappear" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi
sleep 3
conn1=$(fake_stat connections)
# one tracker + one track-jdwp + two VMs, plus a few retries: not hundreds
if [ $((conn1 - conn0)) -le 20 ]; then
    t_ok "a bounded number of connections after revival ($((conn1 - conn0)))"
else
    t_fail "a bounded number of connections after revival" "$((conn1 - conn0)) connections"
fi
if ! t_dead "$DDMON_PID" && adb_vms_json; then
    t_ok "ddmon survived it all and still answers"
else
    t_fail "ddmon survived it all and still answers" "$(tail -20 "$T_TMP/server.err")"
fi
exit 0
