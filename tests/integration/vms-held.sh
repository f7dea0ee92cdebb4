#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A VM serves one debugger at a time: a VM another debugger holds is listed
# "busy", saying why, and a port that is no VM is not taken for one.
# - In-process snapshot (the port scan): a stand-in that keeps a first
#   connection (its debugger) and accepts and closes every other one, as
#   ART and ddmon-simvm do, is "busy"; a service that accepts and closes at
#   once with nobody connected to it is not listed at all, as a server
#   does not list it (it was "busy" too); named with --connect, such a
#   service is "retrying" with the plain reason, not "busy".
# - A real OpenJDK JVM (-agentlib:jdwp=...,server=y) whose debugger (a raw
#   JDWP client) is attached refuses the connection: named with --connect,
#   an in-process snapshot lists it "busy", and a server lists it "busy"
#   (text and --json; it was "retrying" forever, with only "Connection
#   refused"), saying another debugger holds it and that it is retried;
#   once that debugger leaves, the server gets the JVM (plain).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 9

ports=$(t_free_ports 2) || t_skip_all "no free ports"
closer=$ports held=$((ports + 1))
cat >"$T_TMP/stand.py" <<'PY'
import socket, sys, time
mode, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port)); srv.listen(16)
kept = []
if mode == "held":  # its debugger: a connection of its own, kept open
    dbg = socket.create_connection(("127.0.0.1", port))
    kept += [dbg, srv.accept()[0]]
open(ready, "w").close()
while True:
    c, _ = srv.accept()
    c.close()  # nothing sent: as ART drops a second debugger
PY
python3 "$T_TMP/stand.py" close "$closer" "$T_TMP/closer.ready" 2>"$T_TMP/closer.err" &
T_PIDS+=($!)
python3 "$T_TMP/stand.py" held "$held" "$T_TMP/held.ready" 2>"$T_TMP/held.err" &
T_PIDS+=($!)
t_wait 10 test -e "$T_TMP/closer.ready" -a -e "$T_TMP/held.ready" \
    || t_fail "the stand-ins listen" "$(cat "$T_TMP/closer.err" "$T_TMP/held.err")"

t_ddmon --scan=local --scan-ports "$closer,$held" snapshot --in-process --wait 500 --json \
    >"$T_TMP/scan.json" 2>"$T_TMP/scan.err"; rc=$?
python3 - "$T_TMP/scan.json" "127.0.0.1:$held" "127.0.0.1:$closer" >"$T_TMP/check.out" 2>&1 <<'PY' && [ $rc -eq 0 ] \
    && t_ok "scan: the held stand-in is \"busy\", the port that closes at once is not listed" \
    || t_fail "scan: the held stand-in is \"busy\", the port that closes at once is not listed" "rc=$rc" \
        "$(cat "$T_TMP/check.out" "$T_TMP/scan.err")"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["key"]: r for r in doc["global"]["vms"]["rows"]}
assert set(rows) == {sys.argv[2]}, rows
assert rows[sys.argv[2]]["state"] == "busy" and "another debugger holds it" in rows[sys.argv[2]]["info"], rows
PY
line="ddmon: snapshot --in-process: 1 VM (127.0.0.1:$held) refused the connection or closed it during the JDWP handshake, listed as \"busy\": another debugger holds them (a VM takes one at a time)"
[ "$(cat "$T_TMP/scan.err")" = "$line" ] && t_ok "scan: one stderr line names the held one only" \
    || t_fail "scan: one stderr line names the held one only" "want: $line" "got: $(cat "$T_TMP/scan.err")"

t_ddmon --scan=none --connect "127.0.0.1:$closer" snapshot --in-process --wait 500 \
    >"$T_TMP/named.txt" 2>"$T_TMP/named.err"; rc=$?
row=$(grep "^127.0.0.1:$closer " "$T_TMP/named.txt")
case $row in
*" busy "* | *"another debugger"*) t_fail "named: a port that closes at once is \"retrying\", not \"busy\"" "$row" ;;
*" retrying "*) t_ok "named: a port that closes at once is \"retrying\", not \"busy\"" ;;
*) t_fail "named: a port that closes at once is \"retrying\", not \"busy\"" "rc=$rc" "$(cat "$T_TMP/named.txt" "$T_TMP/named.err")" ;;
esac

# A real JVM held by a raw JDWP client.
command -v java >/dev/null && command -v javac >/dev/null && t_javac || {
    for i in 4 5 6 7 8 9; do echo "ok $i # SKIP no OpenJDK (java, javac)"; done
    exit 0
}
port=$(t_free_port)
key="127.0.0.1:$port"
t_start_jvm "$port" n Sleeper
t_wait_jvm "$port" || t_fail "the JVM listens" "$(cat "$T_TMP/jvm-$port.err")"
"$JDWPC" "$key" version waitfile "$T_TMP/leave" >"$T_TMP/jdwpc.out" 2>&1 &
JDWPC_PID=$!
T_PIDS+=("$JDWPC_PID")
t_wait 10 grep -q "^version" "$T_TMP/jdwpc.out" && t_ok "a raw JDWP client holds the JVM" \
    || t_fail "a raw JDWP client holds the JVM" "$(cat "$T_TMP/jdwpc.out")"

t_ddmon --scan=none --connect "$key" snapshot --in-process --wait 500 --json >"$T_TMP/jvm.json" 2>"$T_TMP/jvm.err"
python3 - "$T_TMP/jvm.json" "$key" >"$T_TMP/check.out" 2>&1 <<'PY' \
    && t_ok "in process: the held JVM (it refuses the connection) is \"busy\"" \
    || t_fail "in process: the held JVM (it refuses the connection) is \"busy\"" "$(cat "$T_TMP/check.out" "$T_TMP/jvm.err")"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["key"]: r for r in doc["global"]["vms"]["rows"]}
r = rows[sys.argv[2]]
assert r["state"] == "busy" and "another debugger holds it" in r["info"] and "refused" in r["info"], r
PY

t_start_server --scan=none --connect "$key" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 t_is busy t_vm_field "$key" state && t_ok "server --json: the held JVM is \"busy\"" \
    || t_fail "server --json: the held JVM is \"busy\"" "$(cat "$T_TMP/dp.json")"
info=$(t_vm_field "$key" info)
case $info in
"another debugger holds it (a VM takes one at a time; retried until it is free): "*"Connection refused"*)
    t_ok "server --json: \"info\" says another debugger holds it, that it is retried, and the error" ;;
*) t_fail "server --json: \"info\" says another debugger holds it, that it is retried, and the error" "$info" ;;
esac
t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1
grep "^$key " "$T_TMP/vms.txt" | grep " busy " | grep -q "another debugger holds it" \
    && t_ok "server text: the row says busy and why" || t_fail "server text: the row says busy and why" "$(cat "$T_TMP/vms.txt")"
touch "$T_TMP/leave"
wait "$JDWPC_PID"
t_wait 40 t_is plain t_vm_field "$key" state && t_ok "the debugger left: the server gets the JVM (plain)" \
    || t_fail "the debugger left: the server gets the JVM (plain)" "$(cat "$T_TMP/dp.json")"
exit 0
