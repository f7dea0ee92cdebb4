#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A client that meets a server while it stops. A stopping server (SIGTERM,
# kill-server) no longer accepts and waits, bounded, for the VMs' last
# answers (DDM_STOPPING_WAIT_MS) while it still holds its lock; its lock
# file then says "stopping" (server.h). A command that would autostart a
# server waits for it to exit and starts a fresh one, saying so, instead of
# failing (exit 4) with the new server's "already running (pid N)"; with
# --no-autostart it says the server is stopping; `ddmon server
# --foreground` waits too. Made observable as in trace-server-stop.sh: a
# `trace VM --stop` in flight to a simulator stopped with SIGSTOP holds the
# server's wait (2 s). Then the same with the lock held by `flock` and the
# lock file saying "stopping" (a server stopping for as long as the test
# wants, no timing): the client waits until it lets go, and one held past
# the client's bound (DDM_CLIENT_STOPPING_WAIT_MS) gets a clear message,
# exit status 4. The web dashboard is closed during that wait: a request
# made then is refused (skipped, visibly, without libsoup 3). A client
# that connected just as the server stopped (in its listener's backlog
# when the listener closed: reset before any answer) reads the lock and
# waits too, instead of failing with "the server closed the connection"
# (a stand-in server in python3 that closes its listener once a client
# waits in its backlog; skipped, visibly, without python3). So do the
# commands that only look for a server there: kill-server reports it
# stopped once it has let go, a --no-autostart command says it is
# stopping (not "lost the server"), a snapshot waits for it and runs in
# this process as with no server, a plain `ddmon server` waits for it and
# starts one. A connection reset that way while a live server that is not
# stopping holds the lock (one that took over) is made once more. A
# command run from the web and waiting for its VM's answer when the server
# stops gets "503 the server stops" (skipped, visibly, without libsoup 3
# or the vminfo plugin).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile || t_skip_all "the profile plugin was configured out"
t_need_tool flock util-linux
t_plan 19

sock="$T_TMP/ddmon.sock"
common=(--base-port 0 --gc-every 0 --thread-activity 0)
t_start_simvm --vms 1 --app ss.hang --port-file "$T_TMP/h.ports" "${common[@]}"
hang_pid=$SIMVM_PID
t_wait 10 test -s "$T_TMP/h.ports"
hang_port=$(awk '{print $2}' "$T_TMP/h.ports")
server_args=(--scan=local --scan-ports "$hang_port" --selected-port 0 --debug-port-base 0)
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && grep -q ' ready ' "$T_TMP/vms.txt"; }
# unread: bytes waiting in the stopped VM's socket (ss's Recv-Q)
unread() { ss -tnH state established "( sport = :$hang_port )" | awk '{s += $1} END {print s + 0}'; }
has_unread() { [ "$(unread)" -gt 0 ]; }
lock_says_stopping() { [ "$(sed -n 2p "$sock.lock" 2>/dev/null)" = stopping ]; }
# the pid of the server answering on the socket now, from its lock file
# ("" if none answers)
server_pid() { t_ddmon --no-autostart vms >/dev/null 2>&1 && sed -n 1p "$sock.lock"; }
# the pid in the lock file while someone holds the lock ("" if none does)
lock_pid() { flock -n -s "$sock.lock" true 2>/dev/null || sed -n 1p "$sock.lock"; }

# stop_slowly: the server (DDMON_PID) gets SIGTERM with a `trace --stop` in
# flight to the stopped simulator: it waits for that VM's answer, up to 2 s.
# Returns once its log says it is stopping.
stop_slowly() {
    t_wait 20 ready || t_diag "$T_TMP/vms.txt"
    t_wait 10 t_is 0 unread
    kill -STOP "$hang_pid"
    t_ddmon --no-autostart trace ss.hang "$T_TMP/hang.trace" --stop >"$T_TMP/hang.out" 2>&1 &
    HANG_CLIENT=$!
    t_wait 10 has_unread
    kill -TERM "$DDMON_PID"
    t_wait 10 grep -q "ddmon server stopping (SIGTERM)" "$T_TMP/server.err"
}
# end_slowly: the simulator runs again, the old server is gone
end_slowly() {
    wait "$HANG_CLIENT" 2>/dev/null
    kill -CONT "$hang_pid"
    t_wait 20 t_dead "$1"
}

# 1-3: `ddmon vms` (autostart) during the wait: waits, then a fresh server
t_start_server "${server_args[@]}" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
old=$DDMON_PID
stop_slowly
lock_says_stopping && ! t_dead "$old" && t_ok "a stopping server's lock file says so" \
    || t_fail "a stopping server's lock file says so" "$(cat "$sock.lock" 2>&1)" \
        "$(tail -5 "$T_TMP/server.err")"
t_ddmon vms "${server_args[@]}" >"$T_TMP/vms1.out" 2>"$T_TMP/vms1.err"
rc=$?
end_slowly "$old"
new=$(server_pid)
[ "$rc" = 0 ] && [ -n "$new" ] && [ "$new" != "$old" ] && t_dead "$old" \
    && t_ok "a command during the stop wait gets a fresh server" \
    || t_fail "a command during the stop wait gets a fresh server" "rc $rc, old $old, new '$new'" \
        "$(cat "$T_TMP/vms1.err")"
grep -q "ddmon server (pid $old) is stopping; waiting for it to exit" "$T_TMP/vms1.err" \
    && grep -q "ddmon server started successfully" "$T_TMP/vms1.err" \
    && t_ok "... and says it waited for the stopping one" \
    || t_fail "... and says it waited for the stopping one" "$(cat "$T_TMP/vms1.err")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1

# 4-5: --no-autostart during the wait says the server is stopping; a
# foreground `ddmon server` started then waits for it and runs
t_start_server "${server_args[@]}" || t_fail "server started again" "$(tail -5 "$T_TMP/server.err")"
old=$DDMON_PID
stop_slowly
t_ddmon --no-autostart vms >"$T_TMP/vms2.out" 2>"$T_TMP/vms2.err"
rc=$?
mv "$T_TMP/server.err" "$T_TMP/server-old.err"
t_start_server "${server_args[@]}"
fg=$DDMON_PID
end_slowly "$old"
[ "$rc" = 4 ] && grep -q "ddmon server on .* (pid $old) is stopping (and --no-autostart given)" \
    "$T_TMP/vms2.err" \
    && t_ok "--no-autostart during the stop wait: the server is stopping, exit 4" \
    || t_fail "--no-autostart during the stop wait: the server is stopping, exit 4" "rc $rc" \
        "$(cat "$T_TMP/vms2.err")"
t_wait 10 t_is "$fg" server_pid
[ "$(server_pid)" = "$fg" ] && grep -q "(pid $old) is stopping; waiting for it to exit" "$T_TMP/server.err" \
    && t_ok "a foreground server started during the stop wait waits, then runs" \
    || t_fail "a foreground server started during the stop wait waits, then runs" \
        "pid '$(server_pid)', want $fg" "$(tail -5 "$T_TMP/server.err")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
t_wait 20 t_dead "$fg"

# 6: the web dashboard during the stop wait: closed, a request is refused
if grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h"; then
    t_start_server "${server_args[@]}" --http=127.0.0.1:0
    old=$DDMON_PID
    url=$(t_web_url "$T_TMP/server.err")
    stop_slowly
    got=$(python3 - "$url" <<'PY' 2>&1
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
token = urllib.parse.parse_qs(u.query)["token"][0]
try:
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", "/api/vms", headers={"Authorization": "Bearer " + token})
    print("answered", c.getresponse().status)
except ConnectionRefusedError:
    print("refused")
except Exception as e:
    print("other", type(e).__name__, e)
PY
)
    alive=yes
    t_dead "$old" && alive=no
    end_slowly "$old"
    [ -n "$url" ] && [ "$got" = refused ] && [ "$alive" = yes ] \
        && t_ok "the web dashboard is closed during the stop wait: a request is refused" \
        || t_fail "the web dashboard is closed during the stop wait: a request is refused" \
            "url '$url', got '$got', server alive then: $alive"
else
    T_N=$((T_N + 1)); echo "ok $T_N - the web dashboard during the stop wait # SKIP built --without-http"
fi

# 7: a command run from the web (gc) waiting for its VM's answer (the
# simulator is stopped) when the server stops: answered 503, not closed
if grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" && t_have_plugins vminfo; then
    t_start_server "${server_args[@]}" --http=127.0.0.1:0
    old=$DDMON_PID
    url=$(t_web_url "$T_TMP/server.err")
    t_wait 20 ready || t_diag "$T_TMP/vms.txt"
    t_wait 10 t_is 0 unread
    kill -STOP "$hang_pid"
    python3 - "$url" >"$T_TMP/webcmd.out" 2>&1 <<'PY' &
import http.client, json, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
token = urllib.parse.parse_qs(u.query)["token"][0]
try:
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", "/api/vms/ss.hang/commands/gc", body=b"",
              headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    body = r.read()
    try:
        print(r.status, json.loads(body).get("error"))
    except ValueError:
        print(r.status, "not JSON:", body[:200])
except Exception as e:
    print("other", type(e).__name__, e)
PY
    HANG_CLIENT=$!
    t_wait 10 grep -q "web: running 'gc' on" "$T_TMP/server.err"
    t_wait 10 has_unread # its HPGC waits in the stopped VM's socket
    kill -TERM "$old"
    t_wait 10 grep -q "ddmon server stopping (SIGTERM)" "$T_TMP/server.err"
    end_slowly "$old"
    got=$(cat "$T_TMP/webcmd.out")
    [ "$got" = "503 the server stops" ] \
        && t_ok "a web command waiting for its VM when the server stops gets 503 'the server stops'" \
        || t_fail "a web command waiting for its VM when the server stops gets 503 'the server stops'" \
            "got '$got'" "$(tail -5 "$T_TMP/server.err")"
else
    T_N=$((T_N + 1)); echo "ok $T_N - a web command when the server stops # SKIP no libsoup 3 or no vminfo plugin"
fi

# 8-9: a lock held by flock, its file saying "stopping": the client waits
# until it is let go (the test lets go once the client says it waits)
printf '%s\nstopping\n' 999999 >"$sock.lock"
flock -x "$sock.lock" -c "while [ ! -e '$T_TMP/let-go' ]; do sleep 0.05; done" &
holder=$!
T_PIDS+=("$holder")
t_wait 10 t_is 999999 lock_pid
t_ddmon vms >"$T_TMP/vms3.out" 2>"$T_TMP/vms3.err" &
client=$!
t_wait 10 grep -q "is stopping; waiting" "$T_TMP/vms3.err"
t_dead "$client" && early=yes || early=no
touch "$T_TMP/let-go"
wait "$client"
rc=$?
[ "$early" = no ] && grep -q "ddmon server (pid 999999) is stopping; waiting for it to exit" "$T_TMP/vms3.err" \
    && t_ok "the client waits while the stopping server holds the lock" \
    || t_fail "the client waits while the stopping server holds the lock" "ended early: $early" \
        "$(cat "$T_TMP/vms3.err")"
[ "$rc" = 0 ] && [ -n "$(server_pid)" ] && t_ok "... and starts a server once it is let go" \
    || t_fail "... and starts a server once it is let go" "rc $rc" "$(cat "$T_TMP/vms3.err")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
t_wait 10 t_dead "$holder"

# 10-11: held past the client's bound: a clear message, exit status 4, and
# no server was started
rm -f "$T_TMP/let-go"
printf '%s\nstopping\n' 999999 >"$sock.lock"
flock -x "$sock.lock" -c "while [ ! -e '$T_TMP/let-go' ]; do sleep 0.05; done" &
holder=$!
T_PIDS+=("$holder")
t_wait 10 t_is 999999 lock_pid
t_ddmon vms >"$T_TMP/vms4.out" 2>"$T_TMP/vms4.err"
rc=$?
touch "$T_TMP/let-go"
[ "$rc" = 4 ] && grep -q "the ddmon server on .* (pid 999999) is still stopping after [0-9.]* s; retry once it has exited" \
    "$T_TMP/vms4.err" \
    && t_ok "a server still stopping after the client's bound: a clear message, exit 4" \
    || t_fail "a server still stopping after the client's bound: a clear message, exit 4" "rc $rc" \
        "$(cat "$T_TMP/vms4.err")"
! grep -q "already running" "$T_TMP/vms4.err" && ! grep -q "starting it now" "$T_TMP/vms4.err" \
    && t_ok "... and no server was started meanwhile" \
    || t_fail "... and no server was started meanwhile" "$(cat "$T_TMP/vms4.err")"
t_wait 10 t_dead "$holder"

# 12-18: reset in the backlog. A stand-in server (standin LOCK MODE) holds
# the lock (its file says LOCK: "999998\nstopping\n" for a stopping one),
# listens, and once a client waits in its backlog closes the listener
# without accepting it (what a server whose loop just ended does); it lets
# go of the lock (unlinking socket and lock, as a server does) once the
# test says so (let-go). MODE serve: a server that took over listens on
# the path before the old listener closes, and answers every request line
# as the version op does (no "version": as an older server), counting its
# connections in $T_TMP/served.
cat >"$T_TMP/standin.py" <<'PY'
import fcntl, os, select, socket, sys, time
path, let_go, closed, lock_text, mode = sys.argv[1:]
lock = open(path + ".lock", "w")
fcntl.flock(lock, fcntl.LOCK_EX)
lock.write(lock_text)
lock.flush()
ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ls.bind(path)
ls.listen(8)
select.select([ls], [], [])  # a client is in the backlog
time.sleep(0.2)              # and has sent its request, likely
new = None
if mode == "serve":
    new = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    new.bind(path + ".new")
    new.listen(8)
    os.rename(path + ".new", path)  # connects reach it from now on
ls.close()                   # never accepted: it is reset
open(closed, "w").close()
bufs, served = {}, 0
while not os.path.exists(let_go):
    if new is None:
        time.sleep(0.05)
        continue
    ready, _, _ = select.select([new] + list(bufs), [], [], 0.05)
    for s in ready:
        if s is new:
            c, _ = new.accept()
            bufs[c] = b""
            served += 1
            with open(closed + ".served", "w") as f:
                f.write("%d\n" % served)
            continue
        data = s.recv(65536)
        if not data:
            del bufs[s]
            s.close()
            continue
        bufs[s] += data
        while b"\n" in bufs[s]:
            _, bufs[s] = bufs[s].split(b"\n", 1)
            s.sendall(b'{"ok":true,"pid":999997,"options":[],"web_url":"http://stand-in/"}\n')
os.unlink(path)
os.unlink(path + ".lock")
PY
# standin LOCK MODE: starts the stand-in (HOLDER), returns once it listens
standin() {
    rm -f "$T_TMP/let-go" "$T_TMP/closed" "$T_TMP/closed.served" "$sock"
    python3 "$T_TMP/standin.py" "$sock" "$T_TMP/let-go" "$T_TMP/closed" "$1" "$2" &
    HOLDER=$!
    T_PIDS+=("$HOLDER")
    t_wait 10 t_is "$(printf '%s' "$1" | sed -n 1p)" lock_pid
    t_wait 10 test -S "$sock"
}
STOPPING=$'999998\nstopping\n'
if command -v python3 >/dev/null 2>&1; then
    # 12-13: a command that would start a server waits for it
    standin "$STOPPING" stop
    t_ddmon vms >"$T_TMP/vms5.out" 2>"$T_TMP/vms5.err" &
    client=$!
    t_wait 10 test -e "$T_TMP/closed"
    t_wait 10 grep -q "is stopping; waiting" "$T_TMP/vms5.err"
    t_dead "$client" && early=yes || early=no
    touch "$T_TMP/let-go"
    wait "$client"
    rc=$?
    [ "$early" = no ] && grep -q "ddmon server (pid 999998) is stopping; waiting for it to exit" \
        "$T_TMP/vms5.err" \
        && t_ok "a client reset in a stopping server's backlog waits for it" \
        || t_fail "a client reset in a stopping server's backlog waits for it" "ended early: $early" \
            "$(cat "$T_TMP/vms5.err")"
    [ "$rc" = 0 ] && [ -n "$(server_pid)" ] && ! grep -q "closed the connection" "$T_TMP/vms5.err" \
        && t_ok "... and starts a server once it is let go" \
        || t_fail "... and starts a server once it is let go" "rc $rc" "$(cat "$T_TMP/vms5.err")"
    t_ddmon --no-autostart kill-server >/dev/null 2>&1
    t_wait 10 t_dead "$HOLDER"

    # 14: kill-server reset there: the server stops, as asked; it returns
    # once the stand-in let go (its lock file is gone), exit status 0
    standin "$STOPPING" stop
    t_ddmon kill-server --json >"$T_TMP/kill.out" 2>"$T_TMP/kill.err" &
    client=$!
    t_wait 10 test -e "$T_TMP/closed"
    touch "$T_TMP/let-go"
    wait "$client"
    rc=$?
    gone=yes
    [ -e "$sock.lock" ] && gone=no
    [ "$rc" = 0 ] && [ "$gone" = yes ] && grep -q '"was_running" *: *true' "$T_TMP/kill.out" \
        && t_ok "kill-server reset in a stopping server's backlog: stopped, exit 0, once it let go" \
        || t_fail "kill-server reset in a stopping server's backlog: stopped, exit 0, once it let go" \
            "rc $rc, lock gone: $gone" "$(cat "$T_TMP/kill.out" "$T_TMP/kill.err")"
    t_wait 10 t_dead "$HOLDER"

    # 15: --no-autostart reset there: the server is stopping, exit 4 (with
    # no server option given, as typed by hand: t_ddmon gives some, and a
    # client given any always made the first exchange)
    standin "$STOPPING" stop
    "$DDMON" --socket "$sock" --no-autostart vms >"$T_TMP/vms6.out" 2>"$T_TMP/vms6.err"
    rc=$?
    touch "$T_TMP/let-go"
    [ "$rc" = 4 ] && grep -q "ddmon server on .* (pid 999998) is stopping (and --no-autostart given)" \
        "$T_TMP/vms6.err" \
        && t_ok "--no-autostart reset in a stopping server's backlog: it is stopping, exit 4" \
        || t_fail "--no-autostart reset in a stopping server's backlog: it is stopping, exit 4" \
            "rc $rc" "$(cat "$T_TMP/vms6.err")"
    t_wait 10 t_dead "$HOLDER"

    # 16: a snapshot reset there waits for it, then runs in this process
    standin "$STOPPING" stop
    t_ddmon snapshot --wait 5000 "${server_args[@]}" >"$T_TMP/snap.out" 2>"$T_TMP/snap.err" &
    client=$!
    t_wait 10 test -e "$T_TMP/closed"
    t_wait 10 grep -q "is stopping; waiting" "$T_TMP/snap.err"
    t_dead "$client" && early=yes || early=no
    touch "$T_TMP/let-go"
    wait "$client"
    rc=$?
    [ "$rc" = 0 ] && [ "$early" = no ] && grep -q "ss.hang" "$T_TMP/snap.out" \
        && [ -z "$(lock_pid)" ] \
        && t_ok "a snapshot reset in a stopping server's backlog waits for it, then runs in process" \
        || t_fail "a snapshot reset in a stopping server's backlog waits for it, then runs in process" \
            "rc $rc, ended early: $early" "$(cat "$T_TMP/snap.err" "$T_TMP/snap.out")"
    t_wait 10 t_dead "$HOLDER"

    # 17: a plain `ddmon server` reset there waits for it, then starts one
    standin "$STOPPING" stop
    t_ddmon server "${server_args[@]}" >"$T_TMP/srv.out" 2>"$T_TMP/srv.err" &
    client=$!
    t_wait 10 test -e "$T_TMP/closed"
    t_wait 10 grep -q "is stopping; waiting" "$T_TMP/srv.err"
    t_dead "$client" && early=yes || early=no
    touch "$T_TMP/let-go"
    wait "$client"
    rc=$?
    new=$(server_pid)
    [ "$rc" = 0 ] && [ "$early" = no ] && [ -n "$new" ] && [ "$new" != 999998 ] \
        && grep -q "ddmon server started successfully" "$T_TMP/srv.err" \
        && t_ok "a plain 'ddmon server' reset in a stopping server's backlog waits, then starts one" \
        || t_fail "a plain 'ddmon server' reset in a stopping server's backlog waits, then starts one" \
            "rc $rc, ended early: $early, server '$new'" "$(cat "$T_TMP/srv.err")"
    t_ddmon --no-autostart kill-server >/dev/null 2>&1
    t_wait 10 t_dead "$HOLDER"

    # 18: reset there while a live server that is not stopping holds the
    # lock (one that took over): connected once more, and answered
    standin $'999997\n' serve
    t_ddmon web-url >"$T_TMP/url.out" 2>"$T_TMP/url.err"
    rc=$?
    served=$(cat "$T_TMP/closed.served" 2>/dev/null)
    touch "$T_TMP/let-go"
    [ "$rc" = 0 ] && [ "$(cat "$T_TMP/url.out")" = "http://stand-in/" ] && [ "$served" = 1 ] \
        && ! grep -q "starting it now" "$T_TMP/url.err" \
        && t_ok "a connection reset while a live server holds the lock is made once more" \
        || t_fail "a connection reset while a live server holds the lock is made once more" \
            "rc $rc, connections to the new listener: '$served'" \
            "$(cat "$T_TMP/url.out" "$T_TMP/url.err")"
    t_wait 10 t_dead "$HOLDER"

    # 19: so does `version`, which only looks for a server: it names the
    # one that took over (a bare connect read the reset as no server)
    standin $'999997\n' serve
    t_ddmon --json version >"$T_TMP/ver.out" 2>"$T_TMP/ver.err"
    rc=$?
    touch "$T_TMP/let-go"
    [ "$rc" = 0 ] && grep -q '"pid" *: *999997' "$T_TMP/ver.out" \
        && t_ok "version reset while a live server holds the lock asks it once more" \
        || t_fail "version reset while a live server holds the lock asks it once more" "rc $rc" \
            "$(cat "$T_TMP/ver.out" "$T_TMP/ver.err")"
    t_wait 10 t_dead "$HOLDER"
else
    for what in "a client reset in a stopping server's backlog waits for it" \
        "... and starts a server once it is let go" "kill-server reset in the backlog" \
        "--no-autostart reset in the backlog" "a snapshot reset in the backlog" \
        "a plain 'ddmon server' reset in the backlog" "a reset while a live server holds the lock" \
        "version reset while a live server holds the lock"; do
        T_N=$((T_N + 1)); echo "ok $T_N - $what # SKIP no python3"
    done
fi
