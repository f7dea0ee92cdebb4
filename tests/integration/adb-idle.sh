#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An idle server whose VMs come through adb does not wake to re-offer them
# (issue 16): adb discovery offers again, every scan interval, only the
# listed pids without a session, and arms no timer while every listed VM is
# connected (before, each interval visited every pid: a key string and a
# lookup each, 1.8 M instructions for 1,000 VMs, and a wake-up). Against
# the fake adb server (tests/integration/fake_adb.py) with
# --scan-interval=500 and no plugins (their ticks are not counted here),
# strace -c counts the server's poll/epoll calls over 4 s: fewer than 4.
# A listed VM that cannot be reached (FAIL on jdwp:PID) is still offered
# again until it can, and once connected the server is idle again. While
# it waits out the monitor's backoff for it (1, 2, 4, 8 s ... after each
# refusal) the re-offer timer sleeps until the backoff ends (review rD 5):
# before, it woke every interval for an offer the monitor refused.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
command -v strace >/dev/null || t_skip_all "strace is not installed"
. "$DDM_TOP_SRCDIR/tests/integration/adb-lib.sh"
PLAN=6
t_plan $PLAN

fake_adb_start || t_skip_all "no free ports for the fake adb server"
t_start_simvm --vms 3 --base-port 0 --port-file "$T_TMP/ports" --seed 7
if t_wait 10 test -s "$T_TMP/fake.ports" && t_wait 10 file_lines_ge "$T_TMP/ports" 3; then
    t_ok "fake adb server and simvm started"
else
    t_fail "fake adb server and simvm started" "$(cat "$T_TMP/fake.err" "$T_TMP/simvm.err")"
    exit 0
fi
read -r p1 port1 _ < <(sed -n 1p "$T_TMP/ports")
read -r p2 port2 _ < <(sed -n 2p "$T_TMP/ports")
read -r p3 port3 _ < <(sed -n 3p "$T_TMP/ports")
S=emu-idle1
fake_ctl vm "$S" "$p1" "127.0.0.1:$port1" >/dev/null
fake_ctl vm "$S" "$p2" "127.0.0.1:$port2" >/dev/null
fake_ctl vm "$S" "$p3" "127.0.0.1:$port3" >/dev/null
fake_ctl pids "$S" "$p1" "$p2" >/dev/null
fake_ctl devices "$S=device" >/dev/null

export ANDROID_ADB_SERVER_PORT=$FAKE_PORT
unset ADB_SERVER_SOCKET
mkdir -p "$T_TMP/no-plugins"
"$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$T_TMP/no-plugins" --no-adb-start server \
    --foreground --scan=adb --scan-interval=500 --debug-port-base "$(t_free_ports 8)" \
    --selected-port 0 >"$T_TMP/server.out" 2>"$T_TMP/server.err" &
DDMON_PID=$!
T_PIDS+=("$DDMON_PID")
t_wait 10 test -S "$T_TMP/ddmon.sock"

# wakeups SECONDS: the server's wake-ups over the window (lib.sh t_wakeups).
wakeups() { t_wakeups "$DDMON_PID" "$1"; }
# idle_check DESC: fewer than 4 wake-ups in 4 s.
idle_check() {
    local n
    n=$(wakeups 4)
    if [ -z "$n" ]; then
        t_ok "# SKIP strace cannot attach to the server (ptrace not allowed)"
    elif [ "$n" -lt 4 ]; then
        t_ok "$1: $n wake-ups in 4 s"
    else
        t_fail "$1: $n wake-ups in 4 s (fewer than 4 expected)" "$(t_diag "$T_TMP/strace.txt")"
    fi
}

if t_wait 15 adb_vm_keys_are "adb:$S:" "$(adb_keys_for "$S" "$p1" "$p2")"; then
    t_ok "the device's two VMs are listed"
else
    t_fail "the device's two VMs are listed" "$(adb_vm_keys "adb:$S:")" "$(tail -5 "$T_TMP/server.err")"
fi
sleep 1
idle_check "every listed VM connected, scan interval 500 ms: no re-offers"

# A third VM the device lists but that cannot be reached yet.
fake_ctl fail-jdwp "$S" "$p3" "busy: another debugger holds it" >/dev/null
fake_ctl pids "$S" "$p1" "$p2" "$p3" >/dev/null
t_wait 5 fake_stat_gt jdwp 2
before=$(fake_stat jdwp)
sleep 3
after=$(fake_stat jdwp)
# Its fourth refusal (about 7 s after the first): the next one is 8 s away.
t_wait 15 fake_stat_gt jdwp $((before + 2))
idle_check "a listed VM waiting out its backoff after 4 refusals: no re-offer every 500 ms"
fake_ctl unfail-jdwp "$S" "$p3" >/dev/null
# (listed while it connects: ready is when its session is up)
if [ "$after" -gt "$before" ] && t_wait 15 t_is ready adb_vm_field "adb:$S:$p3" state; then
    t_ok "a listed VM refused by adb is offered again ($before -> $after jdwp requests in 3 s) until it connects"
else
    t_fail "a listed VM refused by adb is offered again until it connects" \
        "jdwp requests $before -> $after" "$(adb_vm_keys "adb:$S:")" "$(tail -5 "$T_TMP/server.err")"
fi
sleep 2 # the relay writes its port map a second after a new port
idle_check "all three connected: idle again"
t_stop "$DDMON_PID"
