#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A VM's debugger port is never the JDWP port of a VM ddmon is connected
# to on this machine. A JVM's agent does not listen while ddmon is
# connected to it, and SO_REUSEADDR let ddmon's bind succeed there: with
# --debug-port-base on the JVMs' ports, a JVM got its own JDWP port as
# its debugger port, and after the first Dispose its agent could not bind
# again ("bind failed") and the VM never came back. Two JVMs on the first
# two ports of the debugger range, found two ways (a scan of 127.0.0.1,
# then --connect localhost:PORT: the same machine however the host is
# spelled): each must get a port above them, and come back after a
# debugger's Dispose on that port. And a third way where the test can
# give this machine a second address (root, in a network namespace of
# its own, made here): --connect 192.0.2.1:PORT (TEST-NET-1, on lo: an
# address of this machine that is no loopback address).
if [ -z "${DDM_OWN_PORT_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
    unshare -n true 2>/dev/null; then
    DDM_OWN_PORT_NS=1 DDM_IT_NETNS=1 exec unshare -n -- bash -c \
        'ip link set lo up; ip addr add 192.0.2.1/32 dev lo 2>/dev/null; exec bash "$0"' "$0"
fi
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_plan 12
t_javac || t_skip_all "javac failed"
lan=""
[ -n "${DDM_OWN_PORT_NS:-}" ] && ip -4 addr show dev lo | grep -q "inet 192.0.2.1/" && lan=192.0.2.1
# in the namespace of its own, the agents listen on every address, so
# that the second one reaches them too (nowhere else: JDWP is remote code
# execution, and the host's other interfaces may face a network)
[ -n "$lan" ] && export T_JVM_HOST='*'

base=$(t_free_ports 6) || { t_fail "six free ports"; exit 0; }
a=$base; b=$((base + 1))
t_start_jvm "$a" n Sleeper
t_start_jvm "$b" n Sleeper
t_wait_jvm "$a" && t_wait_jvm "$b" || { t_fail "the JVMs listen" "$(cat "$T_TMP"/jvm-*.err)"; exit 0; }
stop_server() {
    t_ddmon --no-autostart kill-server >/dev/null 2>&1
    t_wait 10 t_dead "$DDMON_PID" || kill "$DDMON_PID" 2>/dev/null
    wait "$DDMON_PID" 2>/dev/null
}
# own_ports HOW: a server that finds the JVMs by HOW (scan or connect) and the
# four checks; the server is stopped at the end.
own_ports() {
    local how=$1 host opts p jp k pa pb
    case $how in
    scan) host=127.0.0.1 opts=(--scan=local --scan-ports "$a,$b") ;;
    connect) host=localhost opts=(--scan=none --connect "localhost:$a" --connect "localhost:$b") ;;
    lan) host=$lan opts=(--scan=none --connect "$lan:$a" --connect "$lan:$b") ;;
    esac
    t_start_server "${opts[@]}" --debug-port-base "$base" --selected-port 0 \
        || t_fail "server started ($how)" "$(tail -5 "$T_TMP/server.err")"
    both_up() { t_debug_port "$host:$a" && t_debug_port "$host:$b"; }
    t_wait 20 both_up || { t_fail "$how: both JVMs get a debugger port" "$(cat "$T_TMP/dp.json" 2>/dev/null)" \
        "$(tail -5 "$T_TMP/server.err")"; stop_server; return; }
    pa=$(t_debug_port "$host:$a"); pb=$(t_debug_port "$host:$b")
    [ "$pa" != "$a" ] && [ "$pa" != "$b" ] && [ "$pb" != "$a" ] && [ "$pb" != "$b" ] &&
        t_ok "$how: no JVM's debugger port is a JDWP port of the JVMs (ports $pa, $pb; JDWP $a, $b)" ||
        t_fail "$how: no JVM's debugger port is a JDWP port of the JVMs" "ports $pa, $pb; JDWP $a, $b"

    # A debugger's Dispose: the agent closes and binds its port again; ddmon
    # reconnects and the next debugger gets in on the same port.
    for k in a b; do
        eval "p=\$p$k; jp=\$$k"
        "$JDWPC" "127.0.0.1:$p" version dispose >"$T_TMP/d$k.out" 2>&1
        if t_wait 15 bash -c "'$JDWPC' 127.0.0.1:$p version >/dev/null 2>&1"; then
            t_ok "$how: JVM $k is back on its debugger port $p after a Dispose"
        else
            t_fail "$how: JVM $k is back on its debugger port $p after a Dispose" "$(cat "$T_TMP/d$k.out")" \
                "$(cat "$T_TMP/jvm-$jp.err")" "$(tail -5 "$T_TMP/server.err")"
        fi
    done
    grep -q "bind failed" "$T_TMP"/jvm-*.err && t_fail "$how: no JVM failed to bind its port again" "$(cat "$T_TMP"/jvm-*.err)" ||
        t_ok "$how: no JVM failed to bind its port again"
    stop_server
}
own_ports scan
own_ports connect
if [ -n "$lan" ]; then
    own_ports lan
else
    for d in "no debugger port is a JDWP port" "JVM a is back" "JVM b is back" "no JVM failed to bind"; do
        T_N=$((T_N + 1))
        echo "ok $T_N - lan: $d # SKIP no second address (needs root and unshare -n)"
    done
fi
exit 0
