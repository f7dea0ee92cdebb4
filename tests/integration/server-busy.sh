#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A server with every control slot taken (64 clients: "server busy") runs,
# though it will not serve one more client. `ddmon snapshot` says why and
# exits 4 instead of running in this process next to it (the VMs are the
# server's), and `ddmon server` says one runs ("started": false) instead
# of starting one that loses the lock and exits. The 64 clients are a
# python3 stand-in's connections, each answered once (skipped, visibly,
# without python3).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null 2>&1 || t_skip_all "needs python3"
t_plan 5

sock="$T_TMP/ddmon.sock"
t_start_server --scan=none || t_fail "server" "$(cat "$T_TMP/server.err")"
t_wait 20 t_ddmon --no-autostart vms >/dev/null 2>&1
pid=$(sed -n 1p "$sock.lock")

# hold SOCKET N DONE: N connections, each answered once, held until DONE exists
cat >"$T_TMP/hold.py" <<'PY'
import os, socket, sys, time
path, n, ready, done = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
held = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b'{"op":"version"}\n')
    buf = b""
    while b"\n" not in buf:
        data = s.recv(65536)
        if not data:
            sys.exit("the server closed connection %d" % (len(held) + 1))
        buf += data
    held.append(s)
open(ready, "w").close()
while not os.path.exists(done):
    time.sleep(0.05)
PY
python3 "$T_TMP/hold.py" "$sock" 64 "$T_TMP/held" "$T_TMP/done" 2>"$T_TMP/hold.err" &
T_PIDS+=("$!")
t_wait 20 test -e "$T_TMP/held" || t_diag "$T_TMP/hold.err"

t_ddmon --no-autostart vms >"$T_TMP/busy.out" 2>"$T_TMP/busy.err"
grep -q "server busy" "$T_TMP/busy.err" \
    && t_ok "the 65th client is refused: server busy" \
    || t_fail "the 65th client is refused: server busy" "$(cat "$T_TMP/busy.out" "$T_TMP/busy.err")"

t_ddmon --json snapshot --wait 100 >"$T_TMP/snap.out" 2>"$T_TMP/snap.err"
rc=$?
[ "$rc" = 4 ] && grep -q "server busy" "$T_TMP/snap.err" && grep -q '"ok":false' "$T_TMP/snap.out" \
    && ! grep -q '"settled"' "$T_TMP/snap.out" \
    && t_ok "a snapshot next to a busy server says why, exit 4, and runs no snapshot of its own" \
    || t_fail "a snapshot next to a busy server says why, exit 4, and runs no snapshot of its own" \
        "rc $rc" "$(cat "$T_TMP/snap.out" "$T_TMP/snap.err")"

t_ddmon --json server >"$T_TMP/srv.out" 2>"$T_TMP/srv.err"
rc=$?
[ "$rc" = 0 ] && grep -q '"started" *: *false' "$T_TMP/srv.out" \
    && ! grep -q "starting it now" "$T_TMP/srv.err" \
    && t_ok "'ddmon server' next to a busy server says one runs" \
    || t_fail "'ddmon server' next to a busy server says one runs" "rc $rc" \
        "$(cat "$T_TMP/srv.out" "$T_TMP/srv.err")"

[ "$(sed -n 1p "$sock.lock")" = "$pid" ] && kill -0 "$pid" 2>/dev/null \
    && t_ok "the same server runs" || t_fail "the same server runs" "lock: $(cat "$sock.lock")"

touch "$T_TMP/done"
t_wait 10 t_ddmon --no-autostart vms >/dev/null 2>&1 \
    && t_ok "once the clients leave, the server serves again" \
    || t_fail "once the clients leave, the server serves again"
