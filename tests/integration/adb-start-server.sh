#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon starts an adb server only when none ever answered: with no adb
# server at ANDROID_ADB_SERVER_PORT (or ADB_SERVER_SOCKET), the program given
# with --adb is run once, as the argv [PATH, start-server] (no shell: its
# path has a space and a quote in it), directly by ddmon, with ddmon's adb
# server address in its environment as real adb reads it and without
# ddmon's sockets; ddmon keeps retrying but never runs it again. Not run
# with --no-adb-start; not run when an adb server (tests/integration/fake_adb.py)
# had answered and then went away (ddmon waits for it and finds it again).
# A --adb path that does not exist: one clear warning, ddmon keeps serving.
# The fake adb program is a shell script written by this test; it starts
# no server, it only records how it was run.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=15
t_plan $PLAN
unset ADB_SERVER_SOCKET ANDROID_ADB_SERVER_PORT

# make_fake_adb DIR: a fake adb program DIR/adb recording each run in
# DIR/call.PID: "ppid=", the adb server address variables, the file
# descriptors above 2 that are sockets ("sockets=" count), then "arg=" lines.
make_fake_adb() {
    mkdir -p "$1"
    chmod 700 "$1"
    cat >"$1/adb" <<'SH'
#!/bin/sh
out="${0%/*}/call.$$"
{
    echo "ppid=$PPID"
    echo "ANDROID_ADB_SERVER_PORT=${ANDROID_ADB_SERVER_PORT-<unset>}"
    echo "ADB_SERVER_SOCKET=${ADB_SERVER_SOCKET-<unset>}"
    n=0
    for fd in /proc/$$/fd/*; do
        case ${fd##*/} in 0 | 1 | 2) continue ;; esac
        case $(readlink "$fd" 2>/dev/null) in socket:*) n=$((n + 1)) ;; esac
    done
    echo "sockets=$n"
    for a in "$@"; do echo "arg=$a"; done
} >"$out.tmp"
mv "$out.tmp" "$out"
exit 0
SH
    chmod 700 "$1/adb"
}
# calls DIR: how many times DIR's fake adb ran.
calls() { find "$1" -maxdepth 1 -name 'call.[0-9]*' ! -name '*.tmp' | wc -l; }
calls_ge() { [ "$(calls "$1")" -ge "$2" ]; }
the_call() { cat "$1"/call.[0-9]* 2>/dev/null; }
# start_srv NAME ARGS...: a foreground ddmon server (adb discovery only) on
# socket $T_TMP/NAME.sock, log $T_TMP/NAME.err; adb start allowed unless
# ARGS say otherwise. Sets SRV_PID.
start_srv() {
    local name=$1; shift
    "$DDMON" --socket "$T_TMP/$name.sock" --plugin-dir "$PLUGINDIR" "$@" \
        server --foreground --scan=adb --selected-port 0 </dev/null >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    SRV_PID=$!
    T_PIDS+=("$SRV_PID")
    t_wait 10 test -S "$T_TMP/$name.sock"
}
answers() { "$DDMON" --socket "$T_TMP/$1.sock" --no-autostart vms >/dev/null 2>&1; }
logged() { grep -qF -- "$2" "$T_TMP/$1.err"; }
# the end of server NAME's log, for failure reports
tail_log() { tail -5 "$T_TMP/$1.err"; }

# 1-5: no adb server ever answered: the fake adb runs once, as an argv.
FA="$T_TMP/bin dir's/a"
make_fake_adb "$FA"
port=$(t_free_port)
export ANDROID_ADB_SERVER_PORT=$port
start_srv a --adb "$FA/adb" || adb_bail $PLAN "server a did not start: $(tail_log a)"
a_pid=$SRV_PID
if t_wait 10 calls_ge "$FA" 1; then
    t_ok "no adb server at 127.0.0.1:$port: --adb's program is run"
else
    t_fail "no adb server at 127.0.0.1:$port: --adb's program is run" "$(tail_log a)"
fi
args=$(the_call "$FA" | grep '^arg=' | paste -sd' ')
[ "$args" = "arg=start-server" ] && t_ok "its arguments are exactly [start-server] (an argv, no shell)" ||
    t_fail "its arguments are exactly [start-server] (an argv, no shell)" "got: $args" "$(the_call "$FA")"
if the_call "$FA" | grep -qxF "ppid=$a_pid"; then
    t_ok "ddmon runs it itself (its parent is the server, pid $a_pid)"
else
    t_fail "ddmon runs it itself (its parent is the server, pid $a_pid)" "$(the_call "$FA")"
fi
if the_call "$FA" | grep -qxF "ANDROID_ADB_SERVER_PORT=$port" && the_call "$FA" | grep -qxF "sockets=0"; then
    t_ok "it gets ANDROID_ADB_SERVER_PORT=$port (the port ddmon waits on) and none of ddmon's sockets"
else
    t_fail "it gets ANDROID_ADB_SERVER_PORT=$port (the port ddmon waits on) and none of ddmon's sockets" \
        "$(the_call "$FA")"
fi
# ddmon retries at 250, 500, 1000, 2000 ms...: 4 s cover several failed attempts.
sleep 4
n=$(calls "$FA")
if [ "$n" = 1 ] && logged a "'adb start-server' finished" && ! t_dead "$a_pid" && answers a; then
    t_ok "the server keeps retrying but never runs it again (1 run in 4 s), and still answers"
else
    t_fail "the server keeps retrying but never runs it again (1 run in 4 s), and still answers" \
        "$n runs" "$(tail_log a)"
fi
t_stop "$a_pid"

# 6: ADB_SERVER_SOCKET instead: it is passed on as it is (real adb reads it).
FS="$T_TMP/bin dir's/s"
make_fake_adb "$FS"
unset ANDROID_ADB_SERVER_PORT
export ADB_SERVER_SOCKET="tcp:127.0.0.1:$(t_free_port)"
start_srv s --adb "$FS/adb" || adb_bail $PLAN "server s did not start: $(tail_log s)"
s_pid=$SRV_PID
if t_wait 10 calls_ge "$FS" 1 && the_call "$FS" | grep -qxF "ADB_SERVER_SOCKET=$ADB_SERVER_SOCKET" &&
    [ "$(the_call "$FS" | grep '^arg=' | paste -sd' ')" = "arg=start-server" ]; then
    t_ok "with ADB_SERVER_SOCKET=$ADB_SERVER_SOCKET: run as [start-server] with that variable"
else
    t_fail "with ADB_SERVER_SOCKET=$ADB_SERVER_SOCKET: run as [start-server] with that variable" \
        "$(the_call "$FS")" "$(tail_log s)"
fi
t_stop "$s_pid"
unset ADB_SERVER_SOCKET

# 7-8: --no-adb-start: never run.
FN="$T_TMP/bin dir's/n"
make_fake_adb "$FN"
export ANDROID_ADB_SERVER_PORT=$(t_free_port)
start_srv n --adb "$FN/adb" --no-adb-start || adb_bail $PLAN "server n did not start: $(tail_log n)"
n_pid=$SRV_PID
if t_wait 10 logged n "no adb server at 127.0.0.1:$ANDROID_ADB_SERVER_PORT"; then
    t_ok "--no-adb-start: ddmon says there is no adb server"
else
    t_fail "--no-adb-start: ddmon says there is no adb server" "$(tail_log n)"
fi
sleep 3
n=$(calls "$FN")
if [ "$n" = 0 ] && ! logged n "start-server" && answers n; then
    t_ok "--no-adb-start: the adb program is never run (3 s of retries)"
else
    t_fail "--no-adb-start: the adb program is never run (3 s of retries)" "$n runs" "$(tail_log n)"
fi
t_stop "$n_pid"

# 9-12: an adb server answered, then went away: never started by ddmon; found again.
FG="$T_TMP/bin dir's/g"
make_fake_adb "$FG"
fake_adb_start || adb_bail $PLAN "no free ports for the fake adb server"
export ANDROID_ADB_SERVER_PORT=$FAKE_PORT
fake_ctl devices emu-gone=device >/dev/null
start_srv g --adb "$FG/adb" || adb_bail $PLAN "server g did not start: $(tail_log g)"
g_pid=$SRV_PID
listed() { "$DDMON" --socket "$T_TMP/g.sock" --no-autostart --json view devices >"$T_TMP/g.json" 2>/dev/null &&
    python3 "$ADB_Q" field "$T_TMP/g.json" devices serial emu-gone state | grep -qx device; }
if t_wait 15 listed && [ "$(calls "$FG")" = 0 ]; then
    t_ok "an adb server answers: its device is listed, the adb program is not run"
else
    t_fail "an adb server answers: its device is listed, the adb program is not run" \
        "$(calls "$FG") runs" "$(tail_log g)"
fi
td0=$(fake_stat track_devices)
fake_ctl die >/dev/null
if t_wait 10 logged g "lost the adb server at 127.0.0.1:$FAKE_PORT"; then
    t_ok "the adb server goes away: ddmon notices"
else
    t_fail "the adb server goes away: ddmon notices" "$(tail_log g)"
fi
sleep 4
n=$(calls "$FG")
if [ "$n" = 0 ] && ! logged g "start-server"; then
    t_ok "the adb program is not run after the server went away (4 s of retries)"
else
    t_fail "the adb program is not run after the server went away (4 s of retries)" "$n runs" "$(tail_log g)"
fi
fake_ctl revive >/dev/null
if t_wait 15 fake_stat_gt track_devices "$td0" && t_wait 10 listed && [ "$(calls "$FG")" = 0 ]; then
    t_ok "the adb server comes back: ddmon tracks its devices again"
else
    t_fail "the adb server comes back: ddmon tracks its devices again" "$(tail_log g)"
fi
t_stop "$g_pid"

# 13-15: --adb names no program: a clear warning, the server keeps serving.
missing="$T_TMP/bin dir's/no such adb"
export ANDROID_ADB_SERVER_PORT=$(t_free_port)
start_srv m --adb "$missing" || adb_bail $PLAN "server m did not start: $(tail_log m)"
m_pid=$SRV_PID
if t_wait 10 logged m "cannot run '$missing start-server'" && grep -q " warning [a-z-]*: .*No such file" "$T_TMP/m.err"; then
    t_ok "a missing --adb program: a warning naming it and the reason"
else
    t_fail "a missing --adb program: a warning naming it and the reason" "$(tail_log m)"
fi
sleep 1.5
if ! t_dead "$m_pid" && answers m; then
    t_ok "... and the server keeps running and answering"
else
    t_fail "... and the server keeps running and answering" "$(tail_log m)"
fi
[ "$(grep -c "cannot run" "$T_TMP/m.err")" = 1 ] && t_ok "... and it is not tried again" ||
    t_fail "... and it is not tried again" "$(grep "cannot run" "$T_TMP/m.err")"
exit 0
