#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A client whose first exchange with the server (the version op) times out
# (5 s: a server too busy to answer) goes on with its command on that
# connection. The server answers a connection's requests in order, so its
# late version answer comes first: the client must drop it, not print it as
# the command's answer. A python3 stand-in server answers the version
# request only once the command (web-url) has arrived, which the client
# sends only after it gave up waiting (no timing), then the command; the
# two answers carry different web URLs (skipped, visibly, without python3).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null 2>&1 || t_skip_all "needs python3"
t_plan 3

sock="$T_TMP/ddmon.sock"
cat >"$T_TMP/standin.py" <<'PY'
import socket, sys, time
path, log = sys.argv[1:]
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ls.bind(path)
ls.listen(8)
c, _ = ls.accept()
buf, n = b"", 0
with open(log, "w") as out:
    while True:
        data = c.recv(65536)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            n += 1
            out.write(line.decode() + "\n")
            out.flush()
            if n == 2:  # the command, sent once the client gave up on the version op
                c.sendall(b'{"ok":true,"version":"0","options":[],"web_url":"http://version-answer/"}\n')
                c.sendall(b'{"ok":true,"web_url":"http://command-answer/"}\n')
PY
python3 "$T_TMP/standin.py" "$sock" "$T_TMP/requests" &
standin=$!
T_PIDS+=("$standin")
t_wait 10 test -S "$sock"

t_ddmon --no-autostart web-url >"$T_TMP/url.out" 2>"$T_TMP/url.err"
rc=$?
[ "$rc" = 0 ] && t_ok "the command succeeds after a first exchange that timed out" \
    || t_fail "the command succeeds after a first exchange that timed out" "rc $rc" \
        "$(cat "$T_TMP/url.err")"
[ "$(cat "$T_TMP/url.out")" = "http://command-answer/" ] \
    && t_ok "its answer is the command's, not the late version answer" \
    || t_fail "its answer is the command's, not the late version answer" "$(cat "$T_TMP/url.out")"
[ "$(wc -l <"$T_TMP/requests")" = 2 ] && grep -q '"version"' "$T_TMP/requests" \
    && t_ok "the server saw the version request and the command" \
    || t_fail "the server saw the version request and the command" "$(cat "$T_TMP/requests")"
