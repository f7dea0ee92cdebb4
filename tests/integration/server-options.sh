#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Server options given to a client while a server runs (issue 12, defect 5):
# they cannot reach that server, so the client says so in one line naming
# them and the `ddmon server --replace` command that applies them, then goes
# on; the same options say nothing; `server --replace` stops the running
# server and starts one with the new options (`version --json` shows them),
# and without a server just starts one. start-server does the same (its
# options compared with the running server's, --replace honoured). A
# server started for a command it does not know is stopped again.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 17

# options_of FILE: the running server's options from `ddmon version --json`.
server_field() {
    python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = doc.get("server")
if s is None:
    sys.exit(1)
v = s.get(sys.argv[2])
print(" ".join(v) if isinstance(v, list) else v)
PY
}

t_start_server --scan=none --scan-interval 300 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
first=$DDMON_PID

t_ddmon --scan=none --scan-interval 300 vms >/dev/null 2>"$T_TMP/same.err"; rc=$?
[ $rc = 0 ] && ! grep -q "options" "$T_TMP/same.err" && t_ok "the server's own options: no warning" \
    || t_fail "the server's own options: no warning" "rc=$rc" "$(cat "$T_TMP/same.err")"

t_ddmon --scan=none --scan-interval 700 vms >"$T_TMP/other.out" 2>"$T_TMP/other.err"; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T_TMP/other.err")" = 1 ] && grep -q -- "--scan-interval" "$T_TMP/other.err" \
    && ! sed 's/; to apply.*//' "$T_TMP/other.err" | grep -q -- "--scan=\|--plugin-dir" \
    && t_ok "another --scan-interval: one line naming it, and the command goes on" \
    || t_fail "another --scan-interval: one line naming it, and the command goes on" "rc=$rc" "$(cat "$T_TMP/other.err")"
grep -q -- "ddmon --socket=$T_TMP/ddmon.sock server --replace .*--scan-interval=700" "$T_TMP/other.err" \
    && t_ok "... and says how to apply it (ddmon server --replace ...)" \
    || t_fail "... and says how to apply it (ddmon server --replace ...)" "$(cat "$T_TMP/other.err")"

mkdir -p "$T_TMP/plugins2"
"$DDMON" --socket "$T_TMP/ddmon.sock" --no-autostart --plugin-dir "$T_TMP/plugins2" vms \
    >/dev/null 2>"$T_TMP/pdir.err"; rc=$?
[ $rc = 0 ] && grep -q -- "--plugin-dir" "$T_TMP/pdir.err" \
    && t_ok "another --plugin-dir (with --no-autostart): named too" \
    || t_fail "another --plugin-dir (with --no-autostart): named too" "rc=$rc" "$(cat "$T_TMP/pdir.err")"

t_ddmon --scan=none --scan-interval 500 server --replace >"$T_TMP/replace.out" 2>"$T_TMP/replace.err"; rc=$?
t_wait 10 t_dead "$first"
[ $rc = 0 ] && t_dead "$first" && t_ok "server --replace stops the running server" \
    || t_fail "server --replace stops the running server" "rc=$rc" "$(cat "$T_TMP/replace.err")"
t_ddmon version --json >"$T_TMP/version.json" 2>"$T_TMP/version.err"
opts=$(server_field "$T_TMP/version.json" options)
pid=$(server_field "$T_TMP/version.json" pid)
case " $opts " in
*" --scan-interval=500 "*) [ -n "$pid" ] && [ "$pid" != "$first" ] \
    && t_ok "... and starts one with the new options ($opts)" \
    || t_fail "... and starts one with the new options" "pid $pid, first $first" ;;
*) t_fail "... and starts one with the new options" "$(cat "$T_TMP/version.json" "$T_TMP/replace.err")" ;;
esac

t_ddmon --scan=none --scan-interval 500 vms >/dev/null 2>"$T_TMP/same2.err"; rc=$?
[ $rc = 0 ] && ! grep -q "options" "$T_TMP/same2.err" && t_ok "the new options: no warning" \
    || t_fail "the new options: no warning" "rc=$rc" "$(cat "$T_TMP/same2.err")"

t_ddmon kill-server >/dev/null 2>&1
t_ddmon --scan=none --scan-interval 600 server --replace >/dev/null 2>"$T_TMP/replace2.err"; rc=$?
t_ddmon version --json >"$T_TMP/version2.json" 2>/dev/null
opts=$(server_field "$T_TMP/version2.json" options)
[ $rc = 0 ] && case " $opts " in *" --scan-interval=600 "*) true ;; *) false ;; esac \
    && t_ok "server --replace without a server starts one" \
    || t_fail "server --replace without a server starts one" "rc=$rc" "$(cat "$T_TMP/replace2.err" "$T_TMP/version2.json")"

t_ddmon version >"$T_TMP/version.txt" 2>&1
grep -q "^server: ddmon .*--scan-interval=600" "$T_TMP/version.txt" \
    && t_ok "version shows the running server's options" \
    || t_fail "version shows the running server's options" "$(cat "$T_TMP/version.txt")"
t_ddmon --scan=none --scan-interval 700 start-server >/dev/null 2>"$T_TMP/start.err"; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T_TMP/start.err")" = 1 ] && grep -q -- "ignores --scan-interval" "$T_TMP/start.err" \
    && t_ok "start-server with other options while one runs: the same one-line hint" \
    || t_fail "start-server with other options while one runs: the same one-line hint" "rc=$rc" "$(cat "$T_TMP/start.err")"
t_ddmon --scan=none --scan-interval 800 start-server --replace >/dev/null 2>"$T_TMP/start2.err"; rc=$?
t_ddmon version --json >"$T_TMP/version3.json" 2>/dev/null
opts=$(server_field "$T_TMP/version3.json" options)
[ $rc = 0 ] && case " $opts " in *" --scan-interval=800 "*) true ;; *) false ;; esac \
    && t_ok "start-server --replace replaces the running server" \
    || t_fail "start-server --replace replaces the running server" "rc=$rc" "$(cat "$T_TMP/start2.err" "$T_TMP/version3.json")"
! grep -q "not running" "$T_TMP/start2.err" && grep -q "server stopped; starting one" "$T_TMP/start2.err" \
    && t_ok "... saying it stopped the running one (not 'not running')" \
    || t_fail "... saying it stopped the running one (not 'not running')" "$(cat "$T_TMP/start2.err")"
t_ddmon kill-server >/dev/null 2>&1

# A typo starts no server that stays (it would connect to every VM).
t_ddmon --scan=none nosuchcmd >/dev/null 2>"$T_TMP/typo.err"; rc=$?
t_ddmon --no-autostart vms >/dev/null 2>&1; rc2=$?
[ $rc = 2 ] && grep -q "unknown command 'nosuchcmd'" "$T_TMP/typo.err" && [ $rc2 = 4 ] \
    && t_ok "an unknown command: exit 2, and the server started for it is stopped again" \
    || t_fail "an unknown command: exit 2, and the server started for it is stopped again" "rc=$rc, vms after: $rc2" "$(cat "$T_TMP/typo.err")"
port=$(t_free_port)
t_ddmon --scan=none --http "$port" vms --json >"$T_TMP/http.json" 2>"$T_TMP/http.err"; rc=$?
t_ddmon --no-autostart vms >/dev/null 2>&1; rc2=$?
[ $rc = 2 ] && grep -q "did you mean --http=$port" "$T_TMP/http.err" && grep -q "did you mean" "$T_TMP/http.json" \
    && [ $rc2 = 4 ] \
    && t_ok "--http PORT CMD: 'did you mean --http=PORT', and no server stays" \
    || t_fail "--http PORT CMD: 'did you mean --http=PORT', and no server stays" "rc=$rc, vms after: $rc2" "$(cat "$T_TMP/http.err" "$T_TMP/http.json")"
# the same with --out-dir, whose absolute path is made from the option's
# value (c6e4ddd freed the hint there too: a double free at exit)
t_ddmon --scan=none --out-dir "$T_TMP/od" --http "$port" vms >/dev/null 2>"$T_TMP/http-od.err"; rc=$?
[ $rc = 2 ] && grep -q "did you mean --http=$port" "$T_TMP/http-od.err" \
    && t_ok "--out-dir DIR --http PORT CMD: the same, exit 2" \
    || t_fail "--out-dir DIR --http PORT CMD: the same, exit 2" "rc=$rc" "$(tail -5 "$T_TMP/http-od.err")"
t_ddmon kill-server >/dev/null 2>&1
t_start_server --scan=none || t_fail "server started again"
t_ddmon --scan=none nosuchcmd >/dev/null 2>&1
t_ddmon --no-autostart vms >/dev/null 2>&1 && t_ok "a server that ran before stays after an unknown command" \
    || t_fail "a server that ran before stays after an unknown command"
# server --replace --foreground says it stopped the running one, too
t_ddmon --scan=none --scan-interval 900 server --replace --foreground >/dev/null 2>"$T_TMP/fg.err" &
fg=$!
T_PIDS+=("$fg")
if t_wait 10 grep -q "server stopped; starting one" "$T_TMP/fg.err"; then
    t_ok "server --replace --foreground: says it stopped the running server"
else
    t_fail "server --replace --foreground: says it stopped the running server" "$(cat "$T_TMP/fg.err")"
fi
t_ddmon kill-server >/dev/null 2>&1
exit 0
