#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon with the REAL adb server (on a private port, emulator probing off)
# and ddmon-simvm's simulated Android device (--adb-device, VMs without TCP
# ports: reachable only through adb). ddmon starts first; the device is
# plugged in (adb connect) -> its VMs appear with names (with threads and
# heaps in the one-shot JSON snapshot); a JDWP client attaches through
# the VM's relay port and the selected-VM port; a second device joins;
# the first unplugged (adb disconnect) -> its VMs go, the other's stay;
# replugged -> they return; the adb server is killed and
# restarted on the same port -> ddmon survives, the VMs return.
# Only the adb server this test started is ever killed.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v adb >/dev/null || t_skip_all "adb is not installed"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=23
export ADB_EMU=0
unset ADB_SERVER_SOCKET ANDROID_SERIAL
mkdir -p "$T_TMP/home"
# adb keeps its keys under $HOME/.android: a private HOME keeps the user's alone.
adbc() { HOME="$T_TMP/home" TMPDIR="$T_TMP" timeout 20 adb "$@"; }
ADB_SERVER_PID=""
ADB_RUNNING=0
adb_server_pid() { # the pid listening on our adb port (the server we started), if ss can tell
    ss -ltnpH "sport = :$ADB_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2
}
port_closed() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
adb_start() {
    adbc start-server >"$T_TMP/adb-start.out" 2>&1 || return 1
    ADB_RUNNING=1
    ADB_SERVER_PID=$(adb_server_pid)
    [ -n "$ADB_SERVER_PID" ] && T_PIDS+=("$ADB_SERVER_PID") # lib.sh's trap kills it if all else fails
    return 0
}
adb_stop() { # only ever the server this test started
    [ "$ADB_RUNNING" = 1 ] || return 0
    adbc kill-server >/dev/null 2>&1
    ADB_RUNNING=0
    t_wait 5 port_closed "$ADB_PORT"
}
trap 'adb_stop; t_cleanup' EXIT

t_plan $PLAN

# 1: our own adb server (a port free when probed may be taken when adb binds: retry).
started=0
for _ in 1 2 3 4 5; do
    ADB_PORT=$(t_free_port) || break
    export ANDROID_ADB_SERVER_PORT=$ADB_PORT
    if adb_start; then started=1; break; fi
done
if [ $started = 1 ] && adbc devices >/dev/null 2>&1; then
    t_ok "adb server started on private port $ADB_PORT (pid ${ADB_SERVER_PID:-?})"
else
    t_fail "adb server started on private port $ADB_PORT" "$(cat "$T_TMP/adb-start.out")"
    adb_bail $PLAN "no adb server"
fi

# 2: ddmon first.
relay_base=$(t_free_ports 8); SEL=$(t_free_port)
if t_start_server --scan=adb --debug-port-base "$relay_base" --selected-port "$SEL"; then
    t_ok "ddmon server started with --scan=adb"
else
    t_fail "ddmon server started with --scan=adb" "$(tail -5 "$T_TMP/server.err")"
    adb_bail $PLAN "no ddmon server"
fi

# 3: the simulated device: three VMs reachable only through adb.
DEV_PORT=""
for _ in 1 2 3 4 5; do
    p=$(t_free_port) || break
    t_start_simvm --vms 3 --no-tcp --port-file "$T_TMP/ports" --seed 5 --adb-device "$p" --serial ddmonsim-it
    if t_wait 10 grep -q "listening on 127.0.0.1:$p " "$T_TMP/simvm.err" && t_wait 10 file_lines_ge "$T_TMP/ports" 3; then
        DEV_PORT=$p
        break
    fi
    kill "$SIMVM_PID" 2>/dev/null
done
if [ -n "$DEV_PORT" ]; then
    t_ok "simulated device listening on 127.0.0.1:$DEV_PORT"
else
    t_fail "simulated device listening" "$(cat "$T_TMP/simvm.err")"
    adb_bail $PLAN "no simulated device"
fi
SERIAL="127.0.0.1:$DEV_PORT"
read -r p1 _ app1 _ < <(sed -n 1p "$T_TMP/ports")
read -r p2 _ app2 _ < <(sed -n 2p "$T_TMP/ports")
read -r p3 _ app3 _ < <(sed -n 3p "$T_TMP/ports")
all=$(adb_keys_for "$SERIAL" "$p1" "$p2" "$p3")
adb_device_online() { adbc devices | grep -qF "$SERIAL	device"; }
vms_named() {
    adb_vm_keys_are "adb:$SERIAL:" "$all" && adb_vm_app_is "adb:$SERIAL:$p1" "$app1" &&
        adb_vm_app_is "adb:$SERIAL:$p2" "$app2" && adb_vm_app_is "adb:$SERIAL:$p3" "$app3"
}
plug() { adbc connect "$SERIAL" >"$T_TMP/connect.out" 2>&1 && t_wait 10 adb_device_online; }

# 4: adb accepts the device.
if plug; then
    t_ok "adb connect $SERIAL: the real adb server lists it as a device"
else
    t_fail "adb connect $SERIAL: the real adb server lists it as a device" "$(cat "$T_TMP/connect.out")" "$(adbc devices -l)"
    adb_bail $PLAN "adb did not accept the simulated device"
fi

# 5-6: the device's properties and pid list through adb itself.
sdk=$(adbc -s "$SERIAL" shell getprop ro.build.version.sdk | tr -d '\r')
[ "$sdk" = 30 ] && t_ok "adb shell getprop ro.build.version.sdk = 30" || t_fail "adb shell getprop ro.build.version.sdk = 30" "got '$sdk'"
pids=$(HOME="$T_TMP/home" timeout 5 adb -s "$SERIAL" jdwp 2>/dev/null | tr -d '\r' | sort -n | paste -sd' ')
want_pids=$(printf '%s\n' "$p1" "$p2" "$p3" | sort -n | paste -sd' ')
[ "$pids" = "$want_pids" ] && t_ok "adb jdwp lists the device's VMs ($pids)" || t_fail "adb jdwp lists the device's VMs" "got '$pids' want '$want_pids'"

# 7-8: ddmon (started before the device was plugged in) lists the VMs with names.
if t_wait 20 vms_named; then
    t_ok "hotplugged device: ddmon lists its three VMs with names"
else
    t_fail "hotplugged device: ddmon lists its three VMs with names" "$(python3 "$ADB_Q" rows "$T_TMP/vms.json" vms)" "$(tail -5 "$T_TMP/server.err")"
fi
if [ "$(adb_vm_field "adb:$SERIAL:$p1" device)" = "$SERIAL" ] && t_wait 5 adb_device_state_is "$SERIAL" device; then
    t_ok "VM rows and the devices view show the device $SERIAL"
else
    t_fail "VM rows and the devices view show the device $SERIAL" "$(cat "$T_TMP/vms.json" "$T_TMP/devices.json")"
fi

# 9: the one-shot JSON snapshot has the device's VMs with threads and heaps.
t_ddmon --no-autostart snapshot --json --wait 3000 >"$T_TMP/snap.json" 2>"$T_TMP/snap.err"
python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" names "$T_TMP/snap.json" >"$T_TMP/snap.names" 2>&1
missing=""
for p in "$p1" "$p2" "$p3"; do
    k="adb:$SERIAL:$p"
    h=$(python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" rows "$T_TMP/snap.json" heap.summary "$k" 2>/dev/null | wc -l)
    [ "$h" -gt 0 ] || missing="$missing $k:heap.summary"
    n=$(python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" rows "$T_TMP/snap.json" threads "$k" 2>/dev/null | wc -l)
    [ "$n" -gt 0 ] || missing="$missing $k:threads"
done
if ! t_have_plugins threads heap; then
    t_ok "snapshot --json: every VM of the device has threads and a heap summary # SKIP threads/heap plugin configured out"
elif [ -z "$missing" ]; then
    t_ok "snapshot --json: every VM of the device has threads and a heap summary"
else
    t_fail "snapshot --json: every VM of the device has threads and a heap summary" "missing:$missing" "$(head -c 300 "$T_TMP/snap.err")"
fi

# 10-11: a minimal debugger (handshake + VirtualMachine.Version) through ddmon's relay ports.
rport=$(adb_vm_field "adb:$SERIAL:$p1" debug_port)
if [ -z "$rport" ] || [ "$rport" = 0 ]; then
    t_fail "JDWP client through the VM's relay port" "no debug port listed"
elif out=$(timeout 20 bash -c "$(declare -f jdwp_version); jdwp_version $rport" 2>&1) && [ -n "$out" ]; then
    t_ok "JDWP client through the VM's relay port $rport: $out"
else
    t_fail "JDWP client through the VM's relay port $rport" "$out"
fi
sleep 1 # let the relay see the first debugger go
if [ -n "$rport" ] && [ "$rport" != 0 ] && t_ddmon --no-autostart select "$p2" >"$T_TMP/select.out" 2>&1; then
    if out=$(timeout 20 bash -c "$(declare -f jdwp_version); jdwp_version $SEL" 2>&1) && [ -n "$out" ]; then
        t_ok "JDWP client through the selected-VM port $SEL: $out"
    else
        t_fail "JDWP client through the selected-VM port $SEL" "$out" "$(cat "$T_TMP/select.out")"
    fi
else
    t_fail "JDWP client through the selected-VM port" "no relay port, or select failed" \
        "$(cat "$T_TMP/select.out" 2>/dev/null)"
fi

# 12: a second device (its own ddmon-simvm, two VMs) plugged in as well.
SERIAL2=""
for _ in 1 2 3 4 5; do
    p=$(t_free_port) || break
    "$SIMVM" --vms 2 --no-tcp --port-file "$T_TMP/ports2" --seed 9 --adb-device "$p" --serial ddmonsim-it2 \
        >"$T_TMP/simvm2.out" 2>"$T_TMP/simvm2.err" &
    SIMVM2_PID=$!
    T_PIDS+=("$SIMVM2_PID")
    if t_wait 10 grep -q "listening on 127.0.0.1:$p " "$T_TMP/simvm2.err" && t_wait 10 file_lines_ge "$T_TMP/ports2" 2; then
        SERIAL2="127.0.0.1:$p"
        break
    fi
    kill "$SIMVM2_PID" 2>/dev/null
done
read -r q1 _ qapp1 _ < <(sed -n 1p "$T_TMP/ports2")
read -r q2 _ qapp2 _ < <(sed -n 2p "$T_TMP/ports2")
all2=$(adb_keys_for "$SERIAL2" "$q1" "$q2")
second_named() {
    adb_vm_keys_are "adb:$SERIAL2:" "$all2" && adb_vm_app_is "adb:$SERIAL2:$q1" "$qapp1" &&
        adb_vm_app_is "adb:$SERIAL2:$q2" "$qapp2" && [ "$(adb_vm_field "adb:$SERIAL2:$q2" device)" = "$SERIAL2" ]
}
if [ -n "$SERIAL2" ] && adbc connect "$SERIAL2" >"$T_TMP/connect2.out" 2>&1 && t_wait 20 second_named &&
    t_wait 20 vms_named; then  # (the first device's VM may be reconnecting after the debugger left)
    t_ok "two devices at once: each VM listed with its own device"
else
    t_fail "two devices at once: each VM listed with its own device" "$(cat "$T_TMP/connect2.out")" "$(adb_vm_keys "adb:")"
fi

# 13-16: unplug the first device, replug it.
adbc disconnect "$SERIAL" >/dev/null 2>&1
if t_wait 15 adb_vm_keys_are "adb:$SERIAL:" ""; then
    t_ok "adb disconnect: the device's VMs disappear"
else
    t_fail "adb disconnect: the device's VMs disappear" "$(adb_vm_keys "adb:")"
fi
if t_wait 5 adb_device_gone "$SERIAL"; then
    t_ok "adb disconnect: the device leaves the devices view"
else
    t_fail "adb disconnect: the device leaves the devices view" "$(cat "$T_TMP/devices.json")"
fi
if second_named; then
    t_ok "the other device's VMs stay"
else
    t_fail "the other device's VMs stay" "$(adb_vm_keys "adb:")"
fi
if plug && t_wait 20 vms_named; then
    t_ok "replugged: the VMs reappear with names"
else
    t_fail "replugged: the VMs reappear with names" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi

# 17-21: the adb server is killed and restarted on the same port.
if adb_stop && { [ -z "$ADB_SERVER_PID" ] || t_wait 5 t_dead "$ADB_SERVER_PID"; }; then
    t_ok "adb kill-server stopped our adb server"
else
    t_fail "adb kill-server stopped our adb server" "port $ADB_PORT or pid '${ADB_SERVER_PID}' still there"
fi
if t_wait 15 adb_vm_keys_are "adb:$SERIAL:" "" && ! t_dead "$DDMON_PID"; then
    t_ok "adb server gone: ddmon runs on, the VMs are gone"
else
    t_fail "adb server gone: ddmon runs on, the VMs are gone" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi
c0=$(cpu_ticks "$DDMON_PID"); sleep 4; c1=$(cpu_ticks "$DDMON_PID")
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
if [ $((c1 - c0)) -le $((hz * 4 / 4)) ]; then
    t_ok "no busy loop while there is no adb server ($((c1 - c0)) ticks in 4 s)"
else
    t_fail "no busy loop while there is no adb server" "$((c1 - c0)) ticks in 4 s at $hz Hz"
fi
if adb_start && plug; then
    t_ok "adb server restarted on port $ADB_PORT and the device reconnected"
else
    t_fail "adb server restarted on port $ADB_PORT and the device reconnected" "$(cat "$T_TMP/adb-start.out" "$T_TMP/connect.out")"
fi
if t_wait 40 vms_named; then
    t_ok "after the adb server restart the VMs are back with names"
else
    t_fail "after the adb server restart the VMs are back with names" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi

# 22-23: still serving; the simulated device logged no protocol error.
if ! t_dead "$DDMON_PID" && adb_vms_json; then
    t_ok "ddmon survived and still answers"
else
    t_fail "ddmon survived and still answers" "$(tail -20 "$T_TMP/server.err")"
fi
if ! grep -q "bad message" "$T_TMP/simvm.err" && ! t_dead "$SIMVM_PID"; then
    t_ok "the simulated device saw no malformed adb message"
else
    t_fail "the simulated device saw no malformed adb message" "$(grep -i "adb" "$T_TMP/simvm.err" | tail -5)"
fi
exit 0
