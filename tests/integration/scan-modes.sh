#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon scan MODES` switches discovery at run time: a server started with
# --scan=local,adb lists a simvm's VMs on local ports and the VMs of a
# simulated Android device (ddmon-simvm --adb-device, through the REAL adb
# server on a private port); `scan adb` drops the local VMs and keeps the
# device's (still connected: not reconnected), `scan local` the reverse,
# `scan none` drops all (and nothing comes back on its own), `scan
# local,adb` brings both back; a bad mode is a usage error (exit 2) that
# changes nothing. Without adb the device's half is skipped.
# Only the adb server this test started is ever killed.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=17
export ADB_EMU=0
unset ADB_SERVER_SOCKET ANDROID_SERIAL
HAVE_ADB=0
command -v adb >/dev/null && HAVE_ADB=1
mkdir -p "$T_TMP/home"
# adb keeps its keys under $HOME/.android: a private HOME keeps the user's alone.
adbc() { HOME="$T_TMP/home" TMPDIR="$T_TMP" timeout 20 adb "$@"; }
ADB_RUNNING=0
adb_stop() { # only ever the server this test started
    [ "$ADB_RUNNING" = 1 ] || return 0
    adbc kill-server >/dev/null 2>&1
    ADB_RUNNING=0
}
trap 'adb_stop; t_cleanup' EXIT
t_plan $PLAN

# t_adb_check DESC COND...: a check of the device's VMs, skipped without adb.
t_adb_check() {
    local desc=$1; shift
    if [ $HAVE_ADB = 0 ]; then
        t_ok "$desc # SKIP adb is not installed"
    elif "$@"; then
        t_ok "$desc"
    else
        t_fail "$desc" "local: '$(adb_vm_keys 127.0.0.1:)' device: '$(adb_vm_keys "adb:")'" "$(tail -5 "$T_TMP/server.err")"
    fi
}
sorted() { printf '%s\n' "$@" | LC_ALL=C sort | paste -sd' '; }
# local_are KEYS / dev_are KEYS: the listed VMs of each origin are exactly KEYS.
local_are() { adb_vm_keys_are "127.0.0.1:" "$1"; }
dev_are() { [ $HAVE_ADB = 0 ] || adb_vm_keys_are "adb:" "$1"; }
both_are() { local_are "$1" && dev_are "$2"; }
# stays MS COND...: COND holds now and all along MS milliseconds (checked every 0.25 s).
stays() {
    local end=$(( $(date +%s%N) + $1 * 1000000 )); shift
    while [ "$(date +%s%N)" -lt "$end" ]; do "$@" || return 1; sleep 0.25; done
    "$@"
}
scan() { t_ddmon --no-autostart scan "$@" >"$T_TMP/scan.out" 2>&1; }
# connections of the device's VMs, from the simulated device's ground truth
dev_connections() {
    python3 -c 'import json,sys; print(" ".join(str(v["connections"]) for v in json.load(open(sys.argv[1]))["vms"]))' \
        "$T_TMP/dev-state.json" 2>/dev/null
}

# 1: VMs on local TCP ports.
"$SIMVM" --vms 2 --base-port 0 --port-file "$T_TMP/ports" --seed 3 >"$T_TMP/local.out" 2>"$T_TMP/local.err" &
T_PIDS+=($!)
if t_wait 10 file_lines_ge "$T_TMP/ports" 2; then
    t_ok "simvm VMs on local ports $(t_simvm_ports "$T_TMP/ports")"
else
    t_fail "simvm VMs on local ports" "$(cat "$T_TMP/local.err")"
    adb_bail $PLAN "no local VMs"
fi
LOCAL=$(sorted $(awk '{print "127.0.0.1:" $2}' "$T_TMP/ports"))

# 2: our own adb server and a simulated device with two VMs, reachable only through adb.
DEV=""
SERIAL=""
if [ $HAVE_ADB = 1 ]; then
    for _ in 1 2 3 4 5; do
        ADB_PORT=$(t_free_port) || break
        export ANDROID_ADB_SERVER_PORT=$ADB_PORT
        adbc start-server >"$T_TMP/adb-start.out" 2>&1 && { ADB_RUNNING=1; break; }
    done
    for _ in 1 2 3 4 5; do
        [ $ADB_RUNNING = 1 ] || break
        p=$(t_free_port) || break
        t_start_simvm --vms 2 --no-tcp --port-file "$T_TMP/dev-ports" --state-file "$T_TMP/dev-state.json" \
            --seed 5 --adb-device "$p" --serial ddmonsim-scan
        if t_wait 10 grep -q "listening on 127.0.0.1:$p " "$T_TMP/simvm.err" &&
            t_wait 10 file_lines_ge "$T_TMP/dev-ports" 2; then
            SERIAL="127.0.0.1:$p"
            break
        fi
        kill "$SIMVM_PID" 2>/dev/null
    done
    online() { adbc devices | grep -qF "$SERIAL	device"; }
    if [ -n "$SERIAL" ] && adbc connect "$SERIAL" >"$T_TMP/connect.out" 2>&1 && t_wait 10 online; then
        t_ok "simulated device $SERIAL online in our adb server (port $ADB_PORT)"
        DEVKEYS=$(sorted $(awk -v s="$SERIAL" '{print "adb:" s ":" $1}' "$T_TMP/dev-ports"))
    else
        t_fail "simulated device online in our adb server" "$(cat "$T_TMP/adb-start.out" "$T_TMP/connect.out" 2>/dev/null)"
        adb_bail $PLAN "no simulated device"
    fi
else
    export ANDROID_ADB_SERVER_PORT=$(t_free_port) # nothing there: adb discovery finds no server
    t_ok "simulated device # SKIP adb is not installed"
    DEVKEYS=""
fi

# 3: both origins listed.
t_start_server --scan=local,adb --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --scan-interval 300 \
    --selected-port 0 --debug-port-base "$(t_free_ports 8)" || adb_bail $PLAN "no server: $(tail -5 "$T_TMP/server.err")"
if t_wait 30 both_are "$LOCAL" "$DEVKEYS"; then
    t_ok "--scan=local,adb lists the local VMs and the device's"
else
    t_fail "--scan=local,adb lists the local VMs and the device's" \
        "local: '$(adb_vm_keys 127.0.0.1:)' want '$LOCAL'" "device: '$(adb_vm_keys "adb:")' want '$DEVKEYS'" \
        "$(tail -5 "$T_TMP/server.err")"
    adb_bail $PLAN "not every VM was listed"
fi
conn0=$(dev_connections)

# 4-7: scan adb.
scan adb && t_ok "ddmon scan adb: exit 0" || t_fail "ddmon scan adb: exit 0" "$(cat "$T_TMP/scan.out")"
if t_wait 10 local_are "" && stays 1500 local_are ""; then
    t_ok "scan adb: the local VMs are dropped and not scanned again"
else
    t_fail "scan adb: the local VMs are dropped and not scanned again" "local: '$(adb_vm_keys 127.0.0.1:)'"
fi
t_adb_check "scan adb: the device's VMs stay" dev_are "$DEVKEYS"
t_adb_check "scan adb: ... still on their first connection" [ "$(dev_connections)" = "$conn0" ]

# 8-10: scan local.
scan local && t_ok "ddmon scan local: exit 0" || t_fail "ddmon scan local: exit 0" "$(cat "$T_TMP/scan.out")"
if t_wait 15 local_are "$LOCAL"; then
    t_ok "scan local: the local VMs come back"
else
    t_fail "scan local: the local VMs come back" "local: '$(adb_vm_keys 127.0.0.1:)' want '$LOCAL'"
fi
t_adb_check "scan local: the device's VMs are dropped" eval 't_wait 10 dev_are "" && stays 1500 dev_are ""'

# 11-12: scan none.
scan none && t_ok "ddmon scan none: exit 0" || t_fail "ddmon scan none: exit 0" "$(cat "$T_TMP/scan.out")"
if t_wait 10 both_are "" "" && stays 1500 both_are "" ""; then
    t_ok "scan none: every VM is dropped and none comes back"
else
    t_fail "scan none: every VM is dropped and none comes back" "$(adb_vm_keys "")"
fi

# 13: scan local,adb: both back.
if scan local,adb && t_wait 30 both_are "$LOCAL" "$DEVKEYS"; then
    t_ok "scan local,adb: both come back"
else
    t_fail "scan local,adb: both come back" "$(cat "$T_TMP/scan.out")" "$(adb_vm_keys "")"
fi

# 14-17: bad modes: exit 2 with the reason; nothing changes.
t_ddmon --no-autostart scan bogus >"$T_TMP/bad.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "bogus" "$T_TMP/bad.out" && t_ok "scan bogus: exit 2, the message names it" ||
    t_fail "scan bogus: exit 2, the message names it" "exit $rc" "$(cat "$T_TMP/bad.out")"
t_ddmon --no-autostart scan none,local >"$T_TMP/bad.out" 2>&1; rc=$?
[ $rc = 2 ] && t_ok "scan none,local: exit 2" || t_fail "scan none,local: exit 2" "exit $rc" "$(cat "$T_TMP/bad.out")"
t_ddmon --no-autostart scan >"$T_TMP/bad.out" 2>&1; rc=$?
[ $rc = 2 ] && t_ok "scan without a mode: exit 2" || t_fail "scan without a mode: exit 2" "exit $rc" "$(cat "$T_TMP/bad.out")"
if stays 1500 both_are "$LOCAL" "$DEVKEYS" && ! t_dead "$DDMON_PID"; then
    t_ok "after the bad modes both discoveries still run"
else
    t_fail "after the bad modes both discoveries still run" "$(adb_vm_keys "")" "$(tail -5 "$T_TMP/server.err")"
fi
exit 0
