#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web dashboard's security rules over plain HTTP (web_http.py): the
# server binds loopback and prints a tokenised URL; without the token, with
# a wrong one, with a foreign Host or Origin, or with GET on a POST action
# the request is refused; with the cookie or the bearer token it works.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins vminfo || t_skip_all "the vminfo plugin was not built"
t_plan 44

base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --seed 3
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    && t_ok "server started" || t_fail "server started" "$(cat "$T_TMP/server.err")"

url=$(t_web_url "$T_TMP/server.err")
case $url in
http://127.0.0.1:[0-9]*/\?token=[0-9a-f]*) t_ok "the log has the tokenised URL on loopback ($url)" ;;
*) t_fail "the log has the tokenised URL on loopback" "$(cat "$T_TMP/server.err")" ;;
esac
token=${url#*token=}
[ ${#token} -eq 48 ] && t_ok "the token is 48 hex digits (192 random bits)" \
    || t_fail "the token is 48 hex digits" "token '$token'"
shown=$(t_ddmon --no-autostart web-url 2>&1)
[ "$shown" = "$url" ] && t_ok "ddmon web-url shows the URL again" || t_fail "ddmon web-url shows the URL again" "got '$shown'"

key=$(awk 'NR==1 {print "127.0.0.1:" $2}' "$T_TMP/ports")
t_wait 10 t_is ready t_vm_field "$key" state && t_ok "the VM is ready" || t_fail "the VM is ready" "$(cat "$T_TMP/dp.json")"
python3 "$DDM_TOP_SRCDIR/tests/integration/web_http.py" "$url" "$key" >"$T_TMP/http.out" 2>&1
while read -r verdict rest; do
    case $verdict in
    PASS) t_ok "$rest" ;;
    FAIL) t_fail "${rest%% -- *}" "${rest#* -- }" ;;
    *) t_fail "web_http.py output" "$verdict $rest" ;;
    esac
done <"$T_TMP/http.out"

# A second server on another socket gets another token.
"$DDMON" --socket "$T_TMP/two.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    server --foreground --http=127.0.0.1:0 >"$T_TMP/two.out" 2>"$T_TMP/two.err" &
T_PIDS+=("$!")
url2=$(t_web_url "$T_TMP/two.err")
[ -n "$url2" ] && [ "${url2#*token=}" != "$token" ] && t_ok "each server has its own token" \
    || t_fail "each server has its own token" "$url2"
# A busy address is an error at start, not a silent server without its dashboard.
port=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
"$DDMON" --socket "$T_TMP/three.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    server --foreground --http=127.0.0.1:"$port" >"$T_TMP/three.out" 2>"$T_TMP/three.err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot start the web dashboard" "$T_TMP/three.err" \
    && t_ok "a busy --http port: exit 1 with a message" \
    || t_fail "a busy --http port: exit 1 with a message" "rc=$rc $(cat "$T_TMP/three.err")"
"$DDMON" --socket "$T_TMP/four.sock" --http=example.com:80 server --foreground >/dev/null 2>"$T_TMP/four.err"
rc=$?
[ $rc -ne 0 ] && grep -q -- "--http" "$T_TMP/four.err" && t_ok "--http takes IP addresses only" \
    || t_fail "--http takes IP addresses only" "rc=$rc $(cat "$T_TMP/four.err")"
# A bare --http never takes the next word as its address ("vms" here).
t_ddmon --socket "$T_TMP/five.sock" --no-autostart --http vms >/dev/null 2>"$T_TMP/five.err"
rc=$?
[ $rc -eq 4 ] && ! grep -q "port number" "$T_TMP/five.err" && t_ok "a bare --http before a command leaves the command alone" \
    || t_fail "a bare --http before a command leaves the command alone" "rc=$rc $(cat "$T_TMP/five.err")"
exit 0
