#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/lib.sh's process and namespace helpers, which the benches (and a
# soak of hundreds of runs) rely on: stop_pid drops the PID it reaped from
# T_PIDS, bench_prune_pids keeps only this shell's running children (the
# PID of one that exited, or another's process, is not signalled at exit), and
# bench_netns runs the bench outside a namespace, with a note, when `ip`
# is missing instead of failing inside one where lo cannot come up.
# shellcheck disable=SC2034 # BENCH_NAME and keep are read by bench/lib.sh
BENCH_NAME=tests/tree/bench-lib keep=0
. "$DDM_TOP_SRCDIR/bench/lib.sh"

t_plan 6

has() { # has PID: T_PIDS holds it
    local p
    for p in "${T_PIDS[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}

# A background child is this shell for a moment after the fork: signalled
# then, it would run the EXIT trap (bench_cleanup) itself. Wait for sleep.
is_sleep() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]; }

sleep 60 &
a=$!
sleep 60 &
b=$!
T_PIDS+=("$a" "$b")
t_wait 5 is_sleep "$a"
t_wait 5 is_sleep "$b"
stop_pid "$a"
if ! has "$a" && has "$b" && t_dead "$a"; then
    t_ok "stop_pid stops, reaps and forgets its PID, and keeps the others"
else
    t_fail "stop_pid stops, reaps and forgets its PID, and keeps the others" "T_PIDS: ${T_PIDS[*]}; a=$a b=$b"
fi

sleep 0 &
reaped=$!
wait "$reaped"
sleep 0.2 &
exited=$! # exits on its own: bash reaps it at once (SIGCHLD), so its PID is free
foreign=$(sleep 60 >/dev/null 2>&1 & echo $!) # a live process, not this shell's child
T_PIDS+=("$reaped" "$exited" "$foreign")
t_wait 5 t_dead "$exited"
bench_prune_pids
if has "$b" && ! has "$exited" && ! has "$reaped" && ! has "$foreign"; then
    t_ok "bench_prune_pids keeps this shell's running children only"
else
    t_fail "bench_prune_pids keeps this shell's running children only" \
        "T_PIDS: ${T_PIDS[*]}; live=$b exited=$exited reaped=$reaped foreign=$foreign"
fi
kill "$foreign" 2>/dev/null
wait "$exited" 2>/dev/null
stop_pid "$b"
bench_prune_pids
if [ ${#T_PIDS[@]} = 0 ]; then
    t_ok "nothing left to signal at exit"
else
    t_fail "nothing left to signal at exit" "T_PIDS: ${T_PIDS[*]}"
fi

# bench_netns: a probe bench prints whether it ran in the namespace.
cat >"$T_TMP/probe.sh" <<'PROBE'
. "$DDM_TOP_SRCDIR/bench/lib.sh" --netns PROBE_NETNS "$@"
flags=$(ip -o link show lo 2>/dev/null | cut -d' ' -f3) # <LOOPBACK,UP,...>
echo "ran ${PROBE_NETNS:-outside} ns=$(readlink /proc/self/ns/net) lo=$flags"
PROBE
mkdir "$T_TMP/bin"
for prog in bash id unshare true cat; do
    ln -s "$(type -P "$prog")" "$T_TMP/bin/$prog"
done
root_netns=0
[ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null && command -v ip >/dev/null && root_netns=1

out=$(PATH=$T_TMP/bin bash "$T_TMP/probe.sh" 2>"$T_TMP/noip.err")
rc=$?
if [ $rc = 0 ] && [ "${out%% *}" = ran ] && [[ $out == "ran outside"* ]]; then
    t_ok "bench_netns without ip: the bench runs, outside a namespace"
else
    t_fail "bench_netns without ip: the bench runs, outside a namespace" "status $rc, output '$out'" \
        "$(cat "$T_TMP/noip.err")"
fi
if [ $root_netns = 0 ]; then
    t_ok "bench_netns without ip says so # SKIP needs root, unshare -n and ip"
elif grep -q "no 'ip'" "$T_TMP/noip.err"; then
    t_ok "bench_netns without ip says so (as root)"
else
    t_fail "bench_netns without ip says so (as root)" "$(cat "$T_TMP/noip.err")"
fi

out=$(bash "$T_TMP/probe.sh" 2>&1)
if [ $root_netns = 1 ]; then
    name="bench_netns with ip, as root: the bench runs in a namespace of its own, lo up"
    if [[ $out == "ran 1 ns="* ]] && [[ $out != *"ns=$(readlink /proc/self/ns/net) "* ]] &&
        [[ $out == *"lo=<"*",UP"* ]]; then
        t_ok "$name"
    else
        t_fail "$name" "output '$out'"
    fi
elif [[ $out == "ran outside"* ]]; then
    t_ok "bench_netns not as root (or no unshare): the bench runs outside # no namespace here"
else
    t_fail "bench_netns not as root: the bench runs outside" "output '$out'"
fi
