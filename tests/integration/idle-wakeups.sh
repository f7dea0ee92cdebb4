#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An idle server does not wake 4 times a second (issue 16, ABI 1.7): with
# VMs connected and nobody looking, the plugins' 250 ms poll ticks sleep
# (DDM_TIMER_SLEEP) until a watch gives them work. Counted with strace -c
# over 5 s (poll/epoll wake-ups of every thread of the server; the local
# scan runs every 30 s here, so it is not in the window): fewer than 2 a
# second. Before ABI 1.7 the threads, heap, nativeheap, alloc and jvm
# ticks alone made 4 a second. Then a look still gets fresh data at once
# from the ticks that slept: a one-shot `view threads --vm A` shows A's
# table (THEN and THST sent by the tick a watch woke), and while a live
# view of the VM list runs the ticks wake (the threads trickle needs the
# tick while the list is watched), and sleep again after it ended.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads heap nativeheap alloc || t_skip_all "the plugins were not built"
command -v strace >/dev/null || t_skip_all "strace is not installed"
t_plan 4

base=$(t_free_ports 20) || t_skip_all "no free ports"
t_start_simvm --vms 20 --base-port "$base" --port-file "$T_TMP/ports" --seed 3 \
    --tick 1000 --thread-activity 0
t_wait 10 t_is 20 eval 'wc -l <"$T_TMP/ports"' || t_fail "simvm started 20 VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
A=$(awk 'NR==1{print $2}' "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$range" --scan-interval=30000 --selected-port 0 \
    --debug-port-base 0 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

named() { t_ddmon --no-autostart --json vms 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(sum(1 for r in d.get("rows") or [] if r.get("app")))' 2>/dev/null; }
t_wait 30 t_is 20 named || t_fail "20 VMs named" "$(named)"
# The one-shot `vms` above keeps the VM list watched for its interest
# (30 s): the threads trickle ticks meanwhile. Wait for it to end.
sleep 32

# wakeups SECONDS: the server's wake-ups over the window (lib.sh t_wakeups).
wakeups() { t_wakeups "$DDMON_PID" "$1"; }

n=$(wakeups 5)
if [ -z "$n" ]; then
    t_ok "# SKIP strace cannot attach to the server (ptrace not allowed)"
elif [ "$n" -lt 10 ]; then
    t_ok "idle with 20 VMs: $n wake-ups in 5 s (fewer than 2 a second)"
else
    t_fail "idle with 20 VMs: $n wake-ups in 5 s (fewer than 2 a second)" "$(t_diag "$T_TMP/strace.txt")"
fi

# A look after the ticks slept: the woken tick keeps A's table.
rows() { t_ddmon --no-autostart --json view threads --vm "127.0.0.1:$A" 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(len(d.get("rows") or []) if d.get("name") == "threads" else 0)' 2>/dev/null; }
r=$(rows)
if [ -n "$r" ] && [ "$r" -gt 0 ]; then
    t_ok "a one-shot view of A's threads after the idle window has A's $r threads"
else
    t_fail "a one-shot view of A's threads after the idle window has A's threads" \
        "$(t_ddmon --no-autostart --json view threads --vm "127.0.0.1:$A" 2>&1 | head -c 600)"
fi

# A live view of the VM list: the ticks wake (the trickle) while it runs.
t_ddmon --no-autostart watch vms >"$T_TMP/watch.out" 2>&1 &
WATCH_PID=$!
T_PIDS+=("$WATCH_PID")
sleep 2
n=$(wakeups 3)
kill "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null
if [ -z "$n" ]; then
    t_ok "# SKIP strace cannot attach to the server (ptrace not allowed)"
elif [ "$n" -ge 6 ]; then
    t_ok "while the VM list is watched the ticks run: $n wake-ups in 3 s"
else
    t_fail "while the VM list is watched the ticks run: $n wake-ups in 3 s" "$(t_diag "$T_TMP/strace.txt")"
fi

# The look's interest and the linger of A's table (threads.linger, 10 s)
# end, and so do the trickle and the table's ticks: idle again.
sleep 42
n=$(wakeups 5)
if [ -z "$n" ]; then
    t_ok "# SKIP strace cannot attach to the server (ptrace not allowed)"
elif [ "$n" -lt 10 ]; then
    t_ok "idle again after the looks: $n wake-ups in 5 s"
else
    t_fail "idle again after the looks: $n wake-ups in 5 s" "$(t_diag "$T_TMP/strace.txt")"
fi
t_stop "$DDMON_PID"
exit 0
