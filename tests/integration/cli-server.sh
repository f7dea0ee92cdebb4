#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The server process and the control socket without any VM: usage errors,
# the socket directory checks, one server per socket, a stale socket, bad
# and oversized requests on the wire, watch --json, SIGTERM cleanup.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 24

# Scan a port range where nothing listens, so no VM shows up.
base=$(t_free_ports 2) || t_skip_all "no free ports"
scan=(--scan=local --scan-ports "$base-$((base + 1))")
sock="$T_TMP/ddmon.sock"

"$DDMON" --version | grep -q '^ddmon [0-9]' && t_ok "--version" || t_fail "--version"

"$DDMON" --socket "$sock" --no-bogus-option vms >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option" "$T_TMP/err" && t_ok "unknown option: exit 2" \
    || t_fail "unknown option: exit 2" "rc=$rc $(cat "$T_TMP/err")"
"$DDMON" --socket "$sock" view >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 2 ] && t_ok "view without a name: exit 2" || t_fail "view without a name: exit 2" "rc=$rc"

"$DDMON" --socket "$sock" --no-autostart help >"$T_TMP/help.out" 2>&1
grep -q "^  version  " "$T_TMP/help.out" && t_ok "help lists version" || t_fail "help lists version" "$(cat "$T_TMP/help.out")"
"$DDMON" --socket "$sock" --no-autostart help version >"$T_TMP/helpv.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "version" "$T_TMP/helpv.out" && t_ok "help version: its usage, exit 0" \
    || t_fail "help version: its usage, exit 0" "rc=$rc $(cat "$T_TMP/helpv.out")"
# The word version takes no arguments, like every command of ddmon's own
# (--version goes with any command line).
"$DDMON" --socket "$sock" --no-autostart version extra >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'version' takes no arguments" "$T_TMP/err" && t_ok "version with an argument: exit 2" \
    || t_fail "version with an argument: exit 2" "rc=$rc $(cat "$T_TMP/err")"
# A plugin's usage wider than its column has a line of its own, its summary
# the next one, as ddmon's own commands (not glued after one space).
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" --no-autostart help >"$T_TMP/helpp.out" 2>&1
if ! t_have_plugins alloc; then
    t_ok "# SKIP the alloc plugin was configured out"
elif grep -A1 '^  alloc VM ' "$T_TMP/helpp.out" | awk 'NR == 1 && /allocation tracker/ { exit 1 }
        NR == 2 && index($0, "allocation tracker") == 34 { found = 1 } END { exit !found }'; then
    t_ok "help: a long plugin usage, then its summary on the next line"
else
    t_fail "help: a long plugin usage, then its summary on the next line" "$(grep -A1 '^  alloc' "$T_TMP/helpp.out")"
fi
# --wait is the longest a snapshot waits (doc/ddmon.1), not a least.
"$DDMON" --help >"$T_TMP/opts.out" 2>&1
grep -- "--wait=MS" "$T_TMP/opts.out" | grep -q "at most" && t_ok "--help: --wait is a limit" \
    || t_fail "--help: --wait is a limit" "$(grep -- --wait "$T_TMP/opts.out")"

# A socket directory others can enter is refused, by clients and servers.
mkdir -m 755 "$T_TMP/open"
"$DDMON" --socket "$T_TMP/open/ddmon.sock" --no-autostart vms >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 4 ] && grep -q "accessible to others" "$T_TMP/err" && t_ok "client refuses an open socket directory" \
    || t_fail "client refuses an open socket directory" "rc=$rc $(cat "$T_TMP/err")"
"$DDMON" --socket "$T_TMP/open/ddmon.sock" kill-server >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 4 ] && grep -q "accessible to others" "$T_TMP/err" && t_ok "kill-server there: exit 4 too (no server reached)" \
    || t_fail "kill-server there: exit 4 too (no server reached)" "rc=$rc $(cat "$T_TMP/err")"
"$DDMON" --socket "$T_TMP/open/ddmon.sock" "${scan[@]}" server --foreground >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "accessible to others" "$T_TMP/err" && [ ! -e "$T_TMP/open/ddmon.sock" ] \
    && t_ok "server refuses an open socket directory" || t_fail "server refuses an open socket directory" "rc=$rc $(cat "$T_TMP/err")"
mkdir -m 700 "$T_TMP/real"; ln -s "$T_TMP/real" "$T_TMP/link"
"$DDMON" --socket "$T_TMP/link/ddmon.sock" "${scan[@]}" server --foreground >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "not a directory" "$T_TMP/err" && t_ok "server refuses a symlinked socket directory" \
    || t_fail "server refuses a symlinked socket directory" "rc=$rc $(cat "$T_TMP/err")"

# A missing directory is created 0700.
"$DDMON" --socket "$T_TMP/new/ddmon.sock" --plugin-dir "$PLUGINDIR" "${scan[@]}" server --foreground \
    >/dev/null 2>"$T_TMP/server.err" &
srv=$!; T_PIDS+=("$srv")
if t_wait 10 test -S "$T_TMP/new/ddmon.sock" && [ "$(stat -c %a "$T_TMP/new")" = 700 ]; then
    t_ok "missing socket directory created 0700"
else
    t_fail "missing socket directory created 0700" "$(cat "$T_TMP/server.err")"
fi

# One server per socket.
"$DDMON" --socket "$T_TMP/new/ddmon.sock" "${scan[@]}" server --foreground >/dev/null 2>"$T_TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "already running" "$T_TMP/err" && t_ok "a second server on the same socket is refused" \
    || t_fail "a second server on the same socket is refused" "rc=$rc $(cat "$T_TMP/err")"

# Requests on the wire: bad JSON, unknown op, an oversized line; the server survives.
cat >"$T_TMP/wire.py" <<'EOF'
import json, socket, sys
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    return s, s.makefile("rb")
def ask(line):
    s, f = conn()
    s.sendall(line)
    r = json.loads(f.readline())
    s.close()
    return r
out = []
r = ask(b"this is not json\n"); out.append(r["ok"] is False and r["code"] == 2)
r = ask(b'{"op":"frobnicate"}\n'); out.append(r["ok"] is False and "unknown op" in r["error"])
r = ask(b'{"op":"view","name":"x","vm":"no-such-vm"}\n'); out.append(r["ok"] is False and r["code"] == 3)
# 2 MiB without a newline: an error, then the server closes the connection.
s, f = conn()
try:
    s.sendall(b"[" * (2 * 1024 * 1024))
except OSError:
    pass
try:
    line = f.readline()
    r = json.loads(line) if line else {"ok": False}
    rest = f.read()
except ConnectionResetError:  # closed with our unread bytes pending: also a close
    r, rest = {"ok": False}, b""
out.append(r["ok"] is False and rest == b"")
s.close()
# Two requests in one write, answered in order.
s, f = conn()
s.sendall(b'{"op":"version"}\n{"op":"vms"}\n')
a, b = json.loads(f.readline()), json.loads(f.readline())
out.append(a["ok"] and "version" in a and b["ok"] and b["view"]["name"] == "vms")
s.close()
print(" ".join("1" if x else "0" for x in out))
EOF
res=$(python3 "$T_TMP/wire.py" "$T_TMP/new/ddmon.sock" 2>&1)
[ "$res" = "1 1 1 1 1" ] && t_ok "bad, unknown, oversized and pipelined requests" \
    || t_fail "bad, unknown, oversized and pipelined requests" "got: $res"
# A client that writes 20000 requests before reading any answer: the server
# stops reading while answers back up, and answers every one, in order.
cat >"$T_TMP/flood.py" <<'EOF'
import json, socket, sys, threading
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
s.connect(sys.argv[1])
n = 20000
req = b"".join(b'{"op":"view","name":"vms","vm":"no-such-%d"}\n' % i for i in range(n))
t = threading.Thread(target=lambda: s.sendall(req))
t.start()
f = s.makefile("rb")
ok = 0
for i in range(n):
    r = json.loads(f.readline())
    ok += r["ok"] is False and ("no-such-%d'" % i) in r["error"]
t.join()
print(ok)
EOF
res=$(python3 "$T_TMP/flood.py" "$T_TMP/new/ddmon.sock" 2>&1)
[ "$res" = 20000 ] && t_ok "a request flood is answered completely and in order" \
    || t_fail "a request flood is answered completely and in order" "got: $res"
"$DDMON" --socket "$T_TMP/new/ddmon.sock" --no-autostart vms --json >"$T_TMP/vms.json" 2>"$T_TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q '"name":"vms"' "$T_TMP/vms.json" && t_ok "the server still answers" \
    || t_fail "the server still answers" "rc=$rc $(cat "$T_TMP/err")"

# watch --json: the views that exist come first, as "added" events.
timeout 3 "$DDMON" --socket "$T_TMP/new/ddmon.sock" --no-autostart watch --json >"$T_TMP/watch.json" 2>/dev/null
grep -q '"event":"added".*"name":"vms"' "$T_TMP/watch.json" && t_ok "watch --json streams view events" \
    || t_fail "watch --json streams view events" "$(head -c 300 "$T_TMP/watch.json")"

# SIGTERM: clean stop, socket and lock removed.
kill -TERM "$srv"
t_wait 10 t_dead "$srv"; wait "$srv"; rc=$?
[ $rc -eq 0 ] && [ ! -e "$T_TMP/new/ddmon.sock" ] && [ ! -e "$T_TMP/new/ddmon.sock.lock" ] \
    && t_ok "SIGTERM stops the server and removes its files" || t_fail "SIGTERM stops the server and removes its files" "rc=$rc $(ls -la "$T_TMP/new")"
grep -q "stopping (SIGTERM)" "$T_TMP/server.err" && t_ok "the server logs why it stops" \
    || t_fail "the server logs why it stops" "$(tail -3 "$T_TMP/server.err")"

# A stale socket (server killed with SIGKILL) is replaced by the next server.
"$DDMON" --socket "$sock" "${scan[@]}" server --foreground >/dev/null 2>"$T_TMP/s2.err" &
srv=$!; T_PIDS+=("$srv")
t_wait 10 test -S "$sock"
kill -KILL "$srv"; wait "$srv" 2>/dev/null
"$DDMON" --socket "$sock" --no-autostart vms >/dev/null 2>&1; rc=$?
[ $rc -eq 4 ] && [ -S "$sock" ] && t_ok "a dead server's socket means no server (exit 4)" \
    || t_fail "a dead server's socket means no server (exit 4)" "rc=$rc"
"$DDMON" --socket "$sock" --plugin-dir "$PLUGINDIR" "${scan[@]}" vms >/dev/null 2>"$T_TMP/auto.err"; rc=$?
[ $rc -eq 0 ] && grep -q "started successfully" "$T_TMP/auto.err" && t_ok "autostart replaces the stale socket" \
    || t_fail "autostart replaces the stale socket" "rc=$rc $(cat "$T_TMP/auto.err")"
pid=$(cat "$sock.lock" 2>/dev/null)
"$DDMON" --socket "$sock" kill-server; rc=$?
[ $rc -eq 0 ] && [ ! -e "$sock" ] && [ ! -e "$sock.lock" ] && t_ok "kill-server returns once socket and lock are gone" \
    || t_fail "kill-server returns once socket and lock are gone" "rc=$rc"
[ -z "$pid" ] || t_wait 5 t_dead "$pid" || echo "# server $pid still alive"
"$DDMON" --socket "$sock" kill-server; rc=$?
[ $rc -eq 0 ] && t_ok "kill-server without a server: exit 0" || t_fail "kill-server without a server: exit 0" "rc=$rc"
exit 0
