#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon's choice of tracking service, through the REAL adb server (private
# port, emulator probing off) with two simulated devices from ddmon-simvm:
# one at API 31 (serves track-app: protobuf AppProcesses with debuggable/
# profileable flags) and one at API 30 (adbd refuses track-app; adb 29
# reports that as FAIL "closed"). Checks that adb itself forwards track-app
# to the device, that ddmon lists both devices' VMs, that the devices view
# says track-app for one and track-jdwp for the other (each choice logged
# once), that device-processes lists the API 31 device's processes with
# architecture and flags, that a debugger reaches a VM found by track-app,
# and that unplugging/replugging the API 31 device brings its VMs back,
# again through track-app. Only the adb server this test started is killed.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v adb >/dev/null || t_skip_all "adb is not installed"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=16
export ADB_EMU=0 LC_ALL=C
unset ADB_SERVER_SOCKET ANDROID_SERIAL
mkdir -p "$T_TMP/home"
# adb keeps its keys under $HOME/.android: a private HOME keeps the user's alone.
adbc() { HOME="$T_TMP/home" TMPDIR="$T_TMP" timeout 20 adb "$@"; }
ADB_RUNNING=0
adb_server_pid() {
    ss -ltnpH "sport = :$ADB_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2
}
port_closed() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
adb_start() {
    adbc start-server >"$T_TMP/adb-start.out" 2>&1 || return 1
    ADB_RUNNING=1
    local pid
    pid=$(adb_server_pid)
    [ -n "$pid" ] && T_PIDS+=("$pid") # lib.sh's trap kills it if all else fails
    return 0
}
adb_stop() { # only ever the server this test started
    [ "$ADB_RUNNING" = 1 ] || return 0
    adbc kill-server >/dev/null 2>&1
    ADB_RUNNING=0
    t_wait 5 port_closed "$ADB_PORT"
}
trap 'adb_stop; t_cleanup' EXIT

# adb_service SERIAL SERVICE: host:transport:SERIAL + SERVICE on the adb
# server; prints "FAIL reason", or "OKAY" and the pids of the first update
# (a track-app update is decoded here independently of ddmon: field 1
# entries, their field 1 varint = pid, field 2 = debuggable).
ADB_SVC="$T_TMP/adbsvc.py"
cat >"$ADB_SVC" <<'PY'
import socket, sys
port, serial, service = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
def recv_n(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("closed after %r" % b)
        b += c
    return b
def request(text):
    s.sendall(b"%04x%s" % (len(text), text.encode()))
    st = recv_n(4)
    if st == b"FAIL":
        print("FAIL", recv_n(int(recv_n(4), 16)).decode(errors="replace"))
        sys.exit(0)
    if st != b"OKAY":
        raise SystemExit("bad status %r" % st)
request("host:transport:" + serial)
request(service)
payload = recv_n(int(recv_n(4), 16))
def varint(b, i):
    v = shift = 0
    while True:
        v |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i)
        elif key & 7 == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise SystemExit("unexpected wire type %d" % (key & 7))
        yield key >> 3, v
if service == "track-app":
    pids = []
    for f, entry in fields(payload):
        if f == 1:
            e = dict(fields(entry))
            pids.append("%d%s" % (e.get(1, 0), "d" if e.get(2) else ""))
    print("OKAY", " ".join(sorted(pids)))
else:
    print("OKAY", " ".join(sorted(payload.decode().split())))
PY
adb_service() { HOME="$T_TMP/home" timeout 15 python3 "$ADB_SVC" "$ADB_PORT" "$1" "$2" 2>&1; }

t_plan $PLAN

# 1: our own adb server (a port free when probed may be taken when adb binds: retry).
started=0
for _ in 1 2 3 4 5; do
    ADB_PORT=$(t_free_port) || break
    export ANDROID_ADB_SERVER_PORT=$ADB_PORT
    if adb_start; then started=1; break; fi
done
if [ $started = 1 ] && adbc devices >/dev/null 2>&1; then
    t_ok "adb server ($(adbc version | sed -n 2p)) started on private port $ADB_PORT"
else
    t_fail "adb server started on private port $ADB_PORT" "$(cat "$T_TMP/adb-start.out")"
    adb_bail $PLAN "no adb server"
fi

# 2: ddmon first.
relay_base=$(t_free_ports 8)
if t_start_server --scan=adb --debug-port-base "$relay_base"; then
    t_ok "ddmon server started with --scan=adb"
else
    t_fail "ddmon server started with --scan=adb" "$(tail -5 "$T_TMP/server.err")"
    adb_bail $PLAN "no ddmon server"
fi

# 3: two simulated devices: API 31 (3 VMs) and API 30 (2 VMs), VMs reachable only through adb.
# start_device TAG SDK VMS SEED: sets DEV_<TAG> to the serial (empty on failure).
start_device() {
    local tag=$1 sdk=$2 n=$3 seed=$4 p pid
    for _ in 1 2 3 4 5; do
        p=$(t_free_port) || break
        "$SIMVM" --vms "$n" --no-tcp --port-file "$T_TMP/ports$tag" --seed "$seed" --adb-device "$p" \
            --adb-sdk "$sdk" --serial "ddmonsim-$tag" >"$T_TMP/simvm$tag.out" 2>"$T_TMP/simvm$tag.err" &
        pid=$!
        T_PIDS+=("$pid")
        if t_wait 10 grep -q "listening on 127.0.0.1:$p " "$T_TMP/simvm$tag.err" &&
            t_wait 10 file_lines_ge "$T_TMP/ports$tag" "$n"; then
            printf -v "DEV_$tag" '127.0.0.1:%s' "$p"
            printf -v "SIMPID_$tag" '%s' "$pid"
            return 0
        fi
        kill "$pid" 2>/dev/null
    done
    printf -v "DEV_$tag" ''
    return 1
}
if start_device 31 31 3 5 && start_device 30 30 2 9; then
    t_ok "simulated devices listening: API 31 at $DEV_31, API 30 at $DEV_30"
else
    t_fail "simulated devices listening" "$(cat "$T_TMP"/simvm*.err)"
    adb_bail $PLAN "no simulated devices"
fi
S31=$DEV_31
S30=$DEV_30
pids31=$(cut -d' ' -f1 "$T_TMP/ports31" | sort | paste -sd' ')
pids30=$(cut -d' ' -f1 "$T_TMP/ports30" | sort | paste -sd' ')
keys31=$(adb_keys_for "$S31" $pids31)
keys30=$(adb_keys_for "$S30" $pids30)
read -r a31 _ app31 _ < <(sed -n 1p "$T_TMP/ports31")
read -r a30 _ app30 _ < <(sed -n 1p "$T_TMP/ports30")
online() { adbc devices | grep -qF "$1	device"; }
plug() { adbc connect "$1" >>"$T_TMP/connect.out" 2>&1 && t_wait 10 online "$1"; }

# 4: adb accepts both.
if plug "$S31" && plug "$S30"; then
    t_ok "adb connect: the real adb server lists both devices"
else
    t_fail "adb connect: the real adb server lists both devices" "$(cat "$T_TMP/connect.out")" "$(adbc devices -l)"
    adb_bail $PLAN "adb did not accept the simulated devices"
fi

# 5-6: what the real adb server does with track-app (the ground truth for ddmon's choice).
want31=$(for p in $pids31; do echo "${p}d"; done | sort | paste -sd' ')
got=$(adb_service "$S31" track-app)
if [ "$got" = "OKAY $want31" ]; then
    t_ok "adb forwards track-app to the API 31 device: AppProcesses lists its debuggable pids ($want31)"
else
    t_fail "adb forwards track-app to the API 31 device" "got '$got' want 'OKAY $want31'"
fi
got=$(adb_service "$S30" track-app)
got_jdwp=$(adb_service "$S30" track-jdwp)
if [ "${got%% *}" = FAIL ] && [ "$got_jdwp" = "OKAY $pids30" ]; then
    t_ok "the API 30 device refuses track-app through adb ($got) and serves track-jdwp"
else
    t_fail "the API 30 device refuses track-app through adb and serves track-jdwp" "track-app: '$got'" \
        "track-jdwp: '$got_jdwp' want 'OKAY $pids30'"
fi

# 7: ddmon (started before the devices were plugged in) lists every VM of both, with names.
all_listed() {
    adb_vm_keys_are "adb:$S31:" "$keys31" && adb_vm_keys_are "adb:$S30:" "$keys30" &&
        adb_vm_app_is "adb:$S31:$a31" "$app31" && adb_vm_app_is "adb:$S30:$a30" "$app30"
}
if t_wait 30 all_listed; then
    t_ok "ddmon lists the VMs of both devices with names"
else
    t_fail "ddmon lists the VMs of both devices with names" "$(adb_vm_keys "adb:")" "$(tail -5 "$T_TMP/server.err")"
fi

# 8-9: the devices view says which tracking each device uses, with counts.
dev_is() { # dev_is SERIAL TRACKING DEBUGGABLE PROFILEABLE
    adb_devices_json || return 1
    local q="$ADB_Q" f="$T_TMP/devices.json"
    [ "$(python3 "$q" field "$f" devices serial "$1" tracking)" = "$2" ] &&
        [ "$(python3 "$q" field "$f" devices serial "$1" debuggable)" = "$3" ] &&
        [ "$(python3 "$q" field "$f" devices serial "$1" profileable)" = "$4" ]
}
n31=$(echo $pids31 | wc -w)
n30=$(echo $pids30 | wc -w)
if t_wait 10 dev_is "$S31" track-app "$n31" "$n31"; then
    t_ok "devices view: $S31 uses track-app ($n31 debuggable, $n31 profileable)"
else
    t_fail "devices view: $S31 uses track-app" "$(python3 "$ADB_Q" rows "$T_TMP/devices.json" devices)"
fi
if t_wait 10 dev_is "$S30" track-jdwp "$n30" ""; then  # profileable: null, not known
    t_ok "devices view: $S30 uses track-jdwp ($n30 debuggable, profileable not known)"
else
    t_fail "devices view: $S30 uses track-jdwp" "$(python3 "$ADB_Q" rows "$T_TMP/devices.json" devices)"
fi

# 10: device-processes lists the API 31 device's processes (flags, architecture, VM key), none of the other's.
procs_ok() {
    t_ddmon --no-autostart --json view device-processes >"$T_TMP/procs.json" 2>/dev/null || return 1
    python3 "$ADB_Q" rows "$T_TMP/procs.json" device-processes >"$T_TMP/procs.rows" || return 1
    [ "$(grep -c . "$T_TMP/procs.rows")" = "$n31" ] || return 1
    local p
    for p in $pids31; do
        grep -F "\"pid\": $p," "$T_TMP/procs.rows" | grep -F "\"serial\": \"$S31\"" |
            grep -F "\"vm\": \"adb:$S31:$p\"" | grep -F '"debuggable": true' | grep -F '"profileable": true' |
            grep -qF '"architecture": "x86_64"' || return 1
    done
    ! grep -qF "\"serial\": \"$S30\"" "$T_TMP/procs.rows"
}
if t_wait 10 procs_ok; then
    t_ok "device-processes: the API 31 device's processes with flags and architecture; none for track-jdwp"
else
    t_fail "device-processes: the API 31 device's processes with flags and architecture" "$(cat "$T_TMP/procs.rows")"
fi

# 11: each choice logged once.
c_app=$(grep -c "device $S31: tracking apps with track-app" "$T_TMP/server.err")
c_jdwp=$(grep -c "device $S30: tracking VMs with track-jdwp (track-app: refused" "$T_TMP/server.err")
c_other=$(grep -cE "device ($S31: tracking VMs with track-jdwp|$S30: tracking apps with track-app)" "$T_TMP/server.err")
if [ "$c_app" = 1 ] && [ "$c_jdwp" = 1 ] && [ "$c_other" = 0 ]; then
    t_ok "each device's tracking service logged once"
else
    t_fail "each device's tracking service logged once" "track-app $c_app, track-jdwp $c_jdwp, wrong $c_other" \
        "$(grep "tracking" "$T_TMP/server.err")"
fi

# 12: a minimal debugger (handshake + VirtualMachine.Version) through the relay port of a VM found by track-app.
rport=$(adb_vm_field "adb:$S31:$a31" debug_port)
if [ -z "$rport" ] || [ "$rport" = 0 ]; then
    t_ok "JDWP client through a track-app VM's relay port # SKIP relay not wired"
elif out=$(timeout 20 bash -c "$(declare -f jdwp_version); jdwp_version $rport" 2>&1) && [ -n "$out" ]; then
    t_ok "JDWP client through a track-app VM's relay port $rport: $out"
else
    t_fail "JDWP client through a track-app VM's relay port $rport" "$out"
fi

# 13-14: unplug the API 31 device: its VMs and processes go, the other's stay; replug: back through track-app.
adbc disconnect "$S31" >/dev/null 2>&1
gone31() {
    adb_vm_keys_are "adb:$S31:" "" && adb_device_gone "$S31" &&
        t_ddmon --no-autostart --json view device-processes >"$T_TMP/procs.json" 2>/dev/null &&
        ! grep -qF "$S31" "$T_TMP/procs.json"
}
if t_wait 15 gone31 && adb_vm_keys_are "adb:$S30:" "$keys30"; then
    t_ok "API 31 device unplugged: its VMs and processes go, the API 30 device's VMs stay"
else
    t_fail "API 31 device unplugged: its VMs and processes go, the API 30 device's VMs stay" \
        "$(adb_vm_keys "adb:")" "$(cat "$T_TMP/procs.json")"
fi
if plug "$S31" && t_wait 30 all_listed && t_wait 10 dev_is "$S31" track-app "$n31" "$n31"; then
    t_ok "replugged: its VMs are back, tracked with track-app again"
else
    t_fail "replugged: its VMs are back, tracked with track-app again" "$(adb_vm_keys "adb:")" \
        "$(python3 "$ADB_Q" rows "$T_TMP/devices.json" devices)"
fi

# 15-16: still serving; no malformed adb message seen by either side.
if ! t_dead "$DDMON_PID" && adb_vms_json && ! grep -q "not an AppProcesses message" "$T_TMP/server.err"; then
    t_ok "ddmon survived and decoded every track-app update"
else
    t_fail "ddmon survived and decoded every track-app update" "$(tail -20 "$T_TMP/server.err")"
fi
if ! grep -q "bad message" "$T_TMP/simvm31.err" "$T_TMP/simvm30.err" && ! t_dead "$SIMPID_31" && ! t_dead "$SIMPID_30"; then
    t_ok "the simulated devices saw no malformed adb message"
else
    t_fail "the simulated devices saw no malformed adb message" "$(grep -ih "adb" "$T_TMP"/simvm3*.err | tail -5)"
fi
exit 0
