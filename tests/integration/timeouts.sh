#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --connect-timeout and --handshake-timeout reach what they name, on the
# real server. A port whose listener never accepts and whose accept queue
# is full (backlog 0, one connection already queued) drops the next SYN, so
# a connect to it never finishes: with --connect-timeout 300 the server
# gives up ("connect timed out after 300 ms") and lists the target as
# retrying with that reason. A connection to the selected-VM debugger port
# that never sends the JDWP handshake is closed with "within 300 ms" under
# --handshake-timeout 300 (the default is 5000). No timed assertion: each
# check waits for the VM list's reason or the log's line, and the
# milliseconds are read from it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 4

# A listener that never accepts, its queue full: prints its port, then
# sleeps until killed.
python3 -c '
import socket, sys, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(0)
c = socket.socket(); c.connect(l.getsockname())  # fills the queue of one
print(l.getsockname()[1], flush=True)
time.sleep(600)
' >"$T_TMP/hole.port" 2>"$T_TMP/hole.err" &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/hole.port" || t_fail "a listener with a full queue" "$(cat "$T_TMP/hole.err")"
hole=$(cat "$T_TMP/hole.port")
sel=$(t_free_port)

t_start_server --scan=none --connect "127.0.0.1:$hole" --connect-timeout 300 \
    --selected-port "$sel" --handshake-timeout 300 ||
    t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# the target's row: "STATE INFO" from `ddmon --json vms`
target_row() {
    t_ddmon --json vms 2>/dev/null | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["rows"] if r["key"] == sys.argv[1]]
print("%s %s" % (rows[0]["state"], rows[0]["info"] or "") if rows else "none")' "127.0.0.1:$hole"
}
row_says_timeout() { target_row | grep -q "connect timed out after 300 ms"; }
if t_wait 20 row_says_timeout; then
    t_ok "--connect-timeout 300: the connect gives up after 300 ms"
else
    t_fail "--connect-timeout 300: the connect gives up after 300 ms" "$(target_row)"
fi
case $(target_row) in
retrying*"connect timed out after 300 ms"*) t_ok "the target is listed as retrying, with that reason" ;;
*) t_fail "the target is listed as retrying, with that reason" "$(target_row)" ;;
esac

# A silent debugger: connected, says nothing; the server closes it.
python3 - "$sel" >"$T_TMP/silent.out" 2>&1 <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(30)
print("eof" if s.recv(100) == b"" else "data")
PY
if [ "$(cat "$T_TMP/silent.out")" = eof ]; then
    t_ok "a debugger that sends nothing is closed"
else
    t_fail "a debugger that sends nothing is closed" "$(cat "$T_TMP/silent.out")"
fi
if t_wait 10 grep -q "sent no whole handshake within 300 ms" "$T_TMP/server.err"; then
    t_ok "--handshake-timeout 300: within 300 ms, says the log"
else
    t_fail "--handshake-timeout 300: within 300 ms, says the log" "$(grep -i handshake "$T_TMP/server.err" | tail -5)"
fi
t_ddmon kill-server >/dev/null 2>&1
exit 0
