#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A web command whose HTTP client leaves is cancelled and gives its slot
# back: 4 endless traces (--seconds 0) fill the 4 command slots (a 5th POST
# gets 429), their clients close their connections, and then a 5th command
# gets a slot and runs, and all 4 traces stop; the server stops with no libsoup warning. One of
# the 4 clients pipelines a second request behind its POST before it
# leaves: its socket is then readable whatever happens, and its leaving is
# seen all the same (POLLRDHUP).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins heap profile || t_skip_all "the heap and profile plugins were not built"
t_plan 8

base=$(t_free_ports 4) || t_skip_all "no free ports"
t_start_simvm --vms 4 --base-port "$base" --port-file "$T_TMP/ports" --seed 7
t_wait 10 t_is 4 awk 'END {print NR}' "$T_TMP/ports" && t_ok "simvm started 4 VMs" \
    || t_fail "simvm started 4 VMs" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    && t_ok "server started" || t_fail "server started" "$(cat "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
keys=$(awk '{print "127.0.0.1:" $2}' "$T_TMP/ports")
ready=0
for k in $keys; do t_wait 20 t_is ready t_vm_field "$k" state && ready=$((ready + 1)); done
[ "$ready" = 4 ] && t_ok "the 4 VMs are ready" || t_fail "the 4 VMs are ready" "$ready ready"

# shellcheck disable=SC2086 # one key an argument
timeout 120 python3 - "$url" "$T_TMP/server.err" $keys >"$T_TMP/py.out" 2>"$T_TMP/py.err" <<'PY' \
    || t_diag "$T_TMP/py.err"
import json, socket, sys, time, urllib.parse, http.client
url, log, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
parts = urllib.parse.urlsplit(url)
token = urllib.parse.parse_qs(parts.query)["token"][0]
def path(k, cmd):
    return "/api/vms/" + urllib.parse.quote(k, safe="") + "/commands/" + cmd
def post(k, cmd, args):
    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    c.request("POST", path(k, cmd), body=json.dumps({"args": args}),
              headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    out = (r.status, r.read())
    c.close()
    return out
def running():
    with open(log, errors="replace") as f:
        return f.read().count("web: running 'trace'")
# 4 endless traces, each on a connection of its own that we leave open.
socks = []
for k in keys:
    body = json.dumps({"args": ["gone.trace", "--tracing", "--seconds", "0"]}).encode()
    s = socket.create_connection((parts.hostname, parts.port))
    s.sendall((f"POST {path(k, 'trace')} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    socks.append(s)
deadline = time.monotonic() + 30
while running() < 4 and time.monotonic() < deadline:
    time.sleep(0.1)
print("PASS the 4 traces run" if running() == 4 else f"FAIL the 4 traces run -- {running()} started")
# The first client pipelines a second request behind its POST, once libsoup
# has read the POST (sent with it, the bytes would be in libsoup's buffer,
# not waiting in the socket).
socks[0].sendall((f"GET /api/vms HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                  f"Authorization: Bearer {token}\r\n\r\n").encode())
time.sleep(0.5) # (the server's peek sees the bytes before the close)
st, b = post(keys[0], "gc", [])
print("PASS a 5th command while 4 run: 429" if st == 429 else f"FAIL a 5th command while 4 run: 429 -- {st} {b[:200]!r}")
# Their clients leave: the traces are cancelled and their slots come back.
for s in socks:
    s.close()
deadline = time.monotonic() + 60
while True:
    st, b = post(keys[0], "gc", [])
    if st != 429 or time.monotonic() > deadline:
        break
    time.sleep(0.2)
ok = st == 200 and json.loads(b).get("ok") is True
print("PASS once the clients left, a 5th command gets a slot and runs" if ok
      else f"FAIL once the clients left, a 5th command gets a slot and runs -- {st} {b[:200]!r}")
# Every one of the 4 was cancelled, the pipelining client's too: each
# trace stopped and was written.
def written():
    with open(log, errors="replace") as f:
        return f.read().count("(stopped: the client went away)")
deadline = time.monotonic() + 30
while written() < 4 and time.monotonic() < deadline:
    time.sleep(0.2)
print("PASS the 4 traces were cancelled, the pipelining client's too" if written() >= 4
      else f"FAIL the 4 traces were cancelled, the pipelining client's too -- {written()} written")
PY
while read -r verdict rest; do
    case $verdict in
    PASS) t_ok "$rest" ;;
    FAIL) t_fail "${rest%% -- *}" "${rest#* -- }" ;;
    *) t_fail "python output" "$verdict $rest" ;;
    esac
done <"$T_TMP/py.out"
t_stop "$DDMON_PID"
grep -qi 'assertion.*failed' "$T_TMP/server.err" \
    && t_fail "the server stops with no failed assertion" "$(grep -i 'assertion' "$T_TMP/server.err")" \
    || t_ok "the server stops with no failed assertion"
exit 0
