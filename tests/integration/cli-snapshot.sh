#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon snapshot` without VMs and without a server: it runs in process,
# returns once discovery is settled (--wait is the longest it waits: with
# no VM on the scanned ports nothing holds it back), prints one JSON object
# with the VM and plugin lists, and starts no server.
# With a server holding ddmon-simvm's VMs, `snapshot --in-process` over the
# same VMs still runs (exit 0), and says what it found: each VM is listed
# "busy" (text and --json; a VM takes one debugger at a time, and closes
# this process's connection during the JDWP handshake) instead of being
# left out, one stderr line names the VMs, the server's socket and the way
# out, and the monitor's raw "ddmon-Message: ... session closed" lines
# show only with --verbose.
# Every other log line of an in-process snapshot still shows (a
# --plugin-opt notice for a disabled plugin); next to a server (its lock
# held) with no VM that answered, one line names the server; --in-process
# never connects to the control socket: next to a wedged server's socket,
# whose listen backlog is full, it does not hang (and, no lock held, names
# no server).
# Once it has printed, an in-process snapshot waits for no VM's answers: a
# VM that went silent with requests in flight (evilvm) does not hold its
# exit for the stopping server's 2 s, nor add "ddmon is stopping: ... did
# not answer" to its output (with -v the debug line shows it was cut).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 17

base=$(t_free_ports 2) || t_skip_all "no free ports"
sock="$T_TMP/ddmon.sock"
start=$(date +%s%N)
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=local \
    --scan-ports "$base-$((base + 1))" snapshot --wait 20000 --json >"$T_TMP/snap.json" 2>"$T_TMP/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] && t_ok "snapshot exits 0" || t_fail "snapshot exits 0" "rc=$rc $(cat "$T_TMP/err")"
[ "$ms" -lt 10000 ] && t_ok "snapshot returns once settled, well before --wait 20000 ($ms ms)" \
    || t_fail "snapshot returns once settled, well before --wait 20000" "$ms ms"
python3 - "$T_TMP/snap.json" <<'EOF' && t_ok "one JSON object with vms, plugins, views" || t_fail "one JSON object with vms, plugins, views" "$(head -c 300 "$T_TMP/snap.json")"
import json, sys
doc = json.load(open(sys.argv[1]))  # doc/json.md
assert doc["schema"] == 1
assert doc["global"]["vms"]["name"] == "vms" and doc["global"]["vms"]["rows"] == []
assert doc["global"]["plugins"]["name"] == "plugins"
assert doc["vms"] == {}
EOF
[ ! -e "$sock" ] && t_ok "no server was started" || t_fail "no server was started"
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    snapshot --wait 0 >"$T_TMP/snap.txt" 2>"$T_TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^KEY" "$T_TMP/snap.txt" && t_ok "text snapshot prints the VM table" \
    || t_fail "text snapshot prints the VM table" "rc=$rc $(cat "$T_TMP/snap.txt" "$T_TMP/err")"

# A server holds simvm's two VMs; an in-process snapshot scans the same ports.
t_start_simvm --vms 2 --thread-activity 0 --base-port "$base" --port-file "$T_TMP/ports"
t_wait 10 test -s "$T_TMP/ports" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
ports=$(t_simvm_ports "$T_TMP/ports")
keys=$(awk '{print "127.0.0.1:" $2}' "$T_TMP/ports" | sort | paste -sd,)
scan=(--scan=local --scan-ports "$ports")
t_start_server "${scan[@]}" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null \
    && [ "$(grep -o '"state": *"ready"' "$T_TMP/vms.json" | wc -l)" -eq 2 ]; }
t_wait 15 ready && t_ok "the server has both VMs ready" || t_fail "the server has both VMs ready" "$(cat "$T_TMP/vms.json")"

t_ddmon "${scan[@]}" snapshot --in-process --wait 500 >"$T_TMP/held.txt" 2>"$T_TMP/held.err"; rc=$?
busy=$(awk -v k="$keys" 'BEGIN { n = split(k, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    /^$/ { exit } ($1 in want) && / busy / && /another debugger holds it/ { c++ } END { print c + 0 }' "$T_TMP/held.txt")
[ $rc -eq 0 ] && [ "$busy" -eq 2 ] && t_ok "text: exit 0, each VM the server holds listed \"busy\", saying why" \
    || t_fail "text: exit 0, each VM the server holds listed \"busy\", saying why" "rc=$rc busy=$busy" \
        "$(sed -n '1,5p' "$T_TMP/held.txt")" "$(cat "$T_TMP/held.err")"
line="ddmon: snapshot --in-process: 2 VMs (${keys/,/, }) refused the connection or closed it during the JDWP handshake, listed as \"busy\": a server runs on $T_TMP/ddmon.sock and holds its VMs' connections (a VM takes one debugger at a time); plain 'ddmon snapshot' asks that server ('ddmon kill-server' first for an in-process one)"
[ "$(cat "$T_TMP/held.err")" = "$line" ] \
    && t_ok "stderr: one line naming the VMs, the server's socket and the way out, no raw log lines" \
    || t_fail "stderr: one line naming the VMs, the server's socket and the way out, no raw log lines" \
        "want: $line" "got: $(cat "$T_TMP/held.err")"

t_ddmon "${scan[@]}" snapshot --in-process --wait 500 --json >"$T_TMP/held.json" 2>"$T_TMP/held-json.err"; rc=$?
python3 - "$T_TMP/held.json" "$keys" >"$T_TMP/check.out" 2>&1 <<'EOF2' && [ $rc -eq 0 ] \
    && t_ok "--json: one valid object, each VM \"state\": \"busy\" with the reason in \"info\"" \
    || t_fail "--json: one valid object, each VM \"state\": \"busy\" with the reason in \"info\"" "rc=$rc" "$(cat "$T_TMP/check.out")"
import json, sys
doc = json.load(open(sys.argv[1]))  # doc/json.md: the whole stdout is one object
keys = sys.argv[2].split(",")
assert doc["schema"] == 1 and "ok" not in doc, {k: doc.get(k) for k in ("schema", "ok", "error")}
assert sorted(doc["vms"]) == keys, sorted(doc["vms"])
for k in keys:
    v = doc["vms"][k]
    assert v["state"] == "busy" and v["pid"] is None and "another debugger holds it" in v["info"], v
rows = {r["key"]: r for r in doc["global"]["vms"]["rows"]}
assert all(rows[k]["state"] == "busy" for k in keys), rows
EOF2
grep -q "a server runs on $T_TMP/ddmon.sock" "$T_TMP/held-json.err" && ! grep -q "ddmon-Message" "$T_TMP/held-json.err" \
    && t_ok "--json: the same line on stderr" || t_fail "--json: the same line on stderr" "$(cat "$T_TMP/held-json.err")"

t_ddmon -v "${scan[@]}" snapshot --in-process --wait 500 >/dev/null 2>"$T_TMP/verbose.err"
n=$(grep -c "session closed (.*handshake" "$T_TMP/verbose.err")
[ "$n" -ge 2 ] && t_ok "--verbose: the monitor's session-closed lines too" \
    || t_fail "--verbose: the monitor's session-closed lines too" "$n lines" "$(tail -5 "$T_TMP/verbose.err")"
t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>/dev/null
[ "$(grep -o '"state": *"ready"' "$T_TMP/vms.json" | wc -l)" -eq 2 ] && kill -0 "$DDMON_PID" \
    && t_ok "the server still holds both VMs, ready" || t_fail "the server still holds both VMs, ready" "$(cat "$T_TMP/vms.json")"

# Only the session-closed lines are hidden: a "message" of another kind shows.
t_ddmon --scan=none --disable-plugin threads --plugin-opt threads.interval=5 \
    snapshot --in-process --wait 0 >/dev/null 2>"$T_TMP/notice.err"; rc=$?
[ $rc -eq 0 ] && grep -q -- "--plugin-opt: plugin threads is disabled, its options are not used" "$T_TMP/notice.err" \
    && t_ok "in process: other notices still show (--plugin-opt for a disabled plugin)" \
    || t_fail "in process: other notices still show (--plugin-opt for a disabled plugin)" "rc=$rc" "$(cat "$T_TMP/notice.err")"
# The server still runs: with no VM at all that answered (a JVM whose
# debugger is attached refuses the connection: not listed busy) one line
# names the server.
hint="ddmon: snapshot --in-process: no VM answered; a server runs on $T_TMP/ddmon.sock and may hold the VMs' connections (a VM takes one debugger at a time); plain 'ddmon snapshot' asks that server ('ddmon kill-server' first for an in-process one)"
grep -qxF "$hint" "$T_TMP/notice.err" \
    && t_ok "in process next to a server, no VM answered: one line names the server" \
    || t_fail "in process next to a server, no VM answered: one line names the server" "want: $hint" "got: $(cat "$T_TMP/notice.err")"

# A wedged server: its socket listens, accepts nothing, its backlog is full
# (a connect() would block). The 60 s timeout only guards against a hang.
python3 -c '
import errno, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(0)
held = []
while True:
    c = socket.socket(socket.AF_UNIX); c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            break
        raise
    held.append(c)
print("wedged", len(held), flush=True)
time.sleep(3600)
' "$T_TMP/wedged.sock" >"$T_TMP/wedged.out" 2>&1 &
T_PIDS+=($!)
t_wait 10 grep -q wedged "$T_TMP/wedged.out" || t_fail "a wedged listener" "$(cat "$T_TMP/wedged.out")"
timeout 60 "$DDMON" --socket "$T_TMP/wedged.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    snapshot --in-process --wait 0 >"$T_TMP/wedged.txt" 2>"$T_TMP/wedged.err"; rc=$?
[ $rc -eq 0 ] && grep -q "^KEY" "$T_TMP/wedged.txt" && ! grep -q "a server runs" "$T_TMP/wedged.err" \
    && t_ok "--in-process next to a wedged server's socket: no connection, no hang" \
    || t_fail "--in-process next to a wedged server's socket: no connection, no hang" "rc=$rc" "$(cat "$T_TMP/wedged.err")"

# A VM that answers the greeting, then nothing: the snapshot's own requests
# are in flight when it prints. (evilvm serves one connection at a time,
# and a silent one never sees it closed: one evilvm a snapshot.)
silent_vm() { # silent_vm NAME: an evilvm greeting then silent, its port in $silent_port
    "$DDM_TOP_BUILDDIR/tests/tools/evilvm" --port-file "$T_TMP/$1.port" --app silent --pid 4242 \
        greet silent 120000 >"$T_TMP/$1.out" 2>"$T_TMP/$1.err" &
    T_PIDS+=("$!")
    t_wait 5 test -s "$T_TMP/$1.port" || t_fail "the silent VM $1 starts" "$(cat "$T_TMP/$1.err")"
    silent_port=$(awk '{print $2}' "$T_TMP/$1.port")
}
silent_vm silent1
"$DDMON" --socket "$T_TMP/none.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=local \
    --scan-ports "$silent_port" snapshot --in-process --wait 1000 >"$T_TMP/silent.txt" 2>"$T_TMP/silent.snap.err"; rc=$?
[ $rc -eq 0 ] && grep -q "silent" "$T_TMP/silent.txt" && ! grep -q "ddmon is stopping" "$T_TMP/silent.snap.err" \
    && t_ok "in process, a silent VM: listed, and no stop-wait line" \
    || t_fail "in process, a silent VM: listed, and no stop-wait line" "rc=$rc" "$(cat "$T_TMP/silent.snap.err")"
silent_vm silent2
"$DDMON" -v --socket "$T_TMP/none.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=local \
    --scan-ports "$silent_port" snapshot --in-process --wait 1000 >"$T_TMP/silent.v.txt" 2>"$T_TMP/silent.v.err"; rc=$?
[ $rc -eq 0 ] && grep -q "silent" "$T_TMP/silent.v.txt" \
    && grep -q "closed without the answers to the last requests (no wait asked for)" "$T_TMP/silent.v.err" \
    && ! grep -q "did not answer the last requests within" "$T_TMP/silent.v.err" \
    && t_ok "in process, a silent VM: its requests were in flight and not waited for (-v)" \
    || t_fail "in process, a silent VM: its requests were in flight and not waited for (-v)" "rc=$rc" \
        "$(grep -E "stopping|silent" "$T_TMP/silent.v.err" "$T_TMP/silent.v.txt" | tail -8 | tr '\n' '|')"
exit 0
