#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lib.sh's port picking (t_port_in_use, under t_free_port and
# t_free_ports): a port is taken while any TCP socket has it as its own,
# not only while something listens on it. A JDWP agent stops listening
# while a debugger (or ddmon) is connected and binds its port again when
# that one leaves; a port picked by another test meanwhile (a connect was
# refused: "free") and bound with SO_REUSEADDR, as ddmon's and the JDK's
# listeners are, left that JVM unreachable for good (relay-jvm.sh under
# `make -j2`). Checked with a Python listener that takes one connection
# and closes, as the agent does, so no JVM is needed.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || t_skip_all "no python3"
t_plan 5

port=$(t_free_port) || { t_fail "a free port"; exit 0; }
# Listen on PORT, connect to it, accept, stop listening: the connection
# stays (both ends), nothing listens. Then "ready"; then wait to be killed.
python3 - "$port" >"$T_TMP/conn.out" 2>"$T_TMP/conn.err" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port))
l.listen(1)
c = socket.create_connection(("127.0.0.1", port))
a, _ = l.accept()
l.close()
print("ready", flush=True)
time.sleep(3600)
PY
T_PIDS+=($!)
t_wait 20 grep -q ready "$T_TMP/conn.out" ||
    { t_fail "the connected-only port is set up" "$(cat "$T_TMP/conn.err")"; exit 0; }

# What the old check saw: a connect is refused.
! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && t_ok "nothing listens on the port (a connect is refused)" ||
    t_fail "nothing listens on the port (a connect is refused)"
t_port_in_use "$port" && t_ok "a port held only by a connection is in use" ||
    t_fail "a port held only by a connection is in use" "$(grep -i "$(printf ':%04X ' "$port")" /proc/net/tcp)"

# A listener's port is in use, and free again once it closed.
l=$(t_free_port) || { t_fail "a free port"; exit 0; }
python3 - "$l" >"$T_TMP/listen.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
print("ready", flush=True)
time.sleep(3600)
PY
lpid=$!
T_PIDS+=($lpid)
t_wait 20 grep -q ready "$T_TMP/listen.out"
t_port_in_use "$l" && t_ok "a listening port is in use" || t_fail "a listening port is in use" "$(cat "$T_TMP/listen.out")"
kill "$lpid"; wait "$lpid" 2>/dev/null
! t_port_in_use "$l" && t_ok "a port is free once its listener (that had no connection) closed" ||
    t_fail "a port is free once its listener (that had no connection) closed"

# t_free_port and t_free_ports ask t_port_in_use of each port they would
# give: with RANDOM a plain variable, every port they try is $only ($only
# and $only + 1 for two); they give it only while t_port_in_use says free.
only=$(t_free_port) || { t_fail "a free port"; exit 0; }
busy="" # the port t_port_in_use says is in use (none: "")
tried() ( # FN ARGS...
    unset RANDOM
    RANDOM=$((only - 20000))
    t_port_in_use() { [ "$1" = "$busy" ]; }
    "$@"
)
free1=$(tried t_free_port); free2=$(tried t_free_ports 2)
busy=$only; got1=$(tried t_free_port)
busy=$((only + 1)); got2=$(tried t_free_ports 2)
[ "$free1" = "$only" ] && [ "$free2" = "$only" ] && [ -z "$got1" ] && [ -z "$got2" ] &&
    t_ok "t_free_port and t_free_ports give no port that t_port_in_use says is in use" ||
    t_fail "t_free_port and t_free_ports give no port that t_port_in_use says is in use" \
        "free: '$free1' '$free2' (want $only); one in use: '$got1' '$got2' (want none)"
exit 0
