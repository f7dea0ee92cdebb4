#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debugger ports across server restarts (issue 12, defect 6): two apps get
# their ports; the server restarts and the apps come back in the other order,
# each on the port it had (a saved IDE run configuration keeps working); the
# map is a file of mode 0600 next to the private socket; a corrupt map is
# ignored with one warning and rewritten.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 6

base=$(t_free_ports 4); sel=$(t_free_port)
p1=$(t_free_port); p2=$(t_free_port)
MAP="$T_TMP/ddmon.ports"
server() {
    t_start_server --scan=local --scan-ports "$p1,$p2" --scan-interval 200 \
        --debug-port-base "$base" --selected-port "$sel"
}
# sim NAME APP PORT: a simulated VM of APP on PORT; its key in $KEY_NAME.
sim() {
    "$SIMVM" --vms 1 --app "$2" --base-port "$3" --port-file "$T_TMP/ports-$1" >/dev/null 2>&1 &
    eval "PID_$1=$!"
    T_PIDS+=($!)
    t_wait 10 test -s "$T_TMP/ports-$1"
    eval "KEY_$1=127.0.0.1:$(awk '{print $2}' "$T_TMP/ports-$1")"
}
port_of() { local k; eval "k=\$KEY_$1"; t_debug_port "$k"; }

server || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
# The bee first (the lowest port), then the ay.
sim b com.example.bee "$p1"
t_wait 15 port_of b && bee1=$(port_of b)
sim a com.example.ay "$p2"
t_wait 15 port_of a && ay1=$(port_of a)
[ -n "${bee1:-}" ] && [ -n "${ay1:-}" ] && [ "$bee1" != "$ay1" ] && t_ok "two apps get two ports ($bee1, $ay1)" \
    || t_fail "two apps get two ports" "bee ${bee1:-none}, ay ${ay1:-none}" "$(grep relay "$T_TMP/server.err" | tail -3)"

# Restart the server without the bee: the ay comes back alone (it would
# take the lowest free port), then the bee.
t_stop "$PID_b"
t_stop "$DDMON_PID"
server || t_fail "server restarted" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 port_of a && ay2=$(port_of a)
[ -n "${ay2:-}" ] && [ "$ay2" = "${ay1:-x}" ] && t_ok "after a restart the app keeps its port ($ay1)" \
    || t_fail "after a restart the app keeps its port" "before ${ay1:-none}, after ${ay2:-none}" \
        "$(grep relay "$T_TMP/server.err" | tail -3)" "$(cat "$MAP" 2>&1)"
sim b com.example.bee "$p1"
t_wait 15 port_of b && bee2=$(port_of b)
[ -n "${bee2:-}" ] && [ "$bee2" = "${bee1:-x}" ] && t_ok "... and so does the other app, started later ($bee1)" \
    || t_fail "... and so does the other app, started later" "before ${bee1:-none}, after ${bee2:-none}" \
        "$(cat "$MAP" 2>&1)"

mode=$(stat -c %a "$MAP" 2>/dev/null)
[ "$mode" = 600 ] && grep -q "	com.example.ay	${ay1:-x}\$" "$MAP" && grep -q "	com.example.bee	${bee1:-x}\$" "$MAP" \
    && t_ok "the map is a file of mode 0600 next to the socket naming both apps" \
    || t_fail "the map is a file of mode 0600 next to the socket naming both apps" "mode ${mode:-none}" \
        "$(cat "$MAP" 2>&1)"

# A corrupt (hostile) map: one warning, the server runs, the apps get ports
# and the map is rewritten.
t_stop "$DDMON_PID"
printf 'ddmon-ports 1\n\tcom.example.ay\t99999\n\033[2J\tx\t1\n' >"$MAP"
chmod 600 "$MAP"
server || t_fail "server restarted" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 port_of a && t_wait 15 port_of b
n=$(grep -c "ignoring the remembered debugger ports" "$T_TMP/server.err")
[ "$n" = 1 ] && grep "ignoring the remembered" "$T_TMP/server.err" | grep -q "line 2" \
    && t_ok "a corrupt map is ignored with one warning" \
    || t_fail "a corrupt map is ignored with one warning" "$n warnings" "$(grep relay "$T_TMP/server.err" | tail -3)"
t_wait 10 grep -q "	com.example.bee	" "$MAP"
head -1 "$MAP" | grep -qx "ddmon-ports 1" && grep -q "	com.example.ay	" "$MAP" && grep -q "	com.example.bee	" "$MAP" \
    && ! grep -q 99999 "$MAP" && t_ok "... and rewritten with the apps' ports" \
    || t_fail "... and rewritten with the apps' ports" "$(cat -A "$MAP" 2>&1)"
exit 0
