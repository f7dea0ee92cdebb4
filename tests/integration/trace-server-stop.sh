#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A server that stops stops what its plugins started in the VMs (plugin ABI
# 1.8 stopping hooks), seen from ddmon-simvm's side (its --state-file): with
# a streamed method trace, a sampling trace and a trace on the device
# running and allocation tracking on, `ddmon kill-server` leaves every VM
# off (the device trace is written on the device, tracking is off); the
# same for SIGTERM and for `server --replace`, the new server then starting
# a trace again. A server killed with SIGKILL has no say: its trace runs on
# (trace-simvm.sh covers `trace VM --stop` for that).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile alloc || t_skip_all "the profile or alloc plugin was configured out"
t_plan 9

mkdir -p "$T_TMP/dev"
common=(--base-port 0 --gc-every 0 --thread-activity 0)
t_start_simvm --vms 2 --app st.one --app st.two --port-file "$T_TMP/s.ports" --state-file "$T_TMP/s.json" \
    "${common[@]}"
t_start_simvm --vms 1 --app st.dev --port-file "$T_TMP/d.ports" --state-file "$T_TMP/d.json" \
    --trace=device --device-dir "$T_TMP/dev" --seed 2 "${common[@]}"
for p in s d; do t_wait 10 test -s "$T_TMP/$p.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
server_args=(--scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0)
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 3 ]; }
t_start_server "${server_args[@]}" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"

# vm STATE APP EXPR: a Python expression over v, the simulator's VM named APP
vm() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; print(eval(sys.argv[3]))' "$@"; }
mode() { vm "$1" "$2" 'v["profiling"]["mode"]'; }
alloc_on() { vm "$T_TMP/s.json" st.one 'str(v["alloc"]["enabled"]).lower()'; }

# 1-5: kill-server while three traces run and allocation tracking is on
t_ddmon --no-autostart trace st.one "$T_TMP/one.trace" --tracing --seconds 0 >"$T_TMP/one.out" 2>&1 &
c1=$!
t_ddmon --no-autostart trace st.two "$T_TMP/two.trace" --sampling --seconds 0 >"$T_TMP/two.out" 2>&1 &
c2=$!
t_ddmon --no-autostart trace st.dev --tracing --seconds 0 >"$T_TMP/dev.out" 2>&1 &
c3=$!
t_ddmon --no-autostart alloc st.one start >"$T_TMP/alloc.out" 2>&1 || t_diag "$T_TMP/alloc.out"
t_wait 10 t_is tracing mode "$T_TMP/s.json" st.one
t_wait 10 t_is sampling mode "$T_TMP/s.json" st.two
t_wait 10 t_is tracing mode "$T_TMP/d.json" st.dev
t_wait 10 t_is true alloc_on
if [ "$(mode "$T_TMP/s.json" st.one)" = tracing ] && [ "$(mode "$T_TMP/s.json" st.two)" = sampling ] \
    && [ "$(mode "$T_TMP/d.json" st.dev)" = tracing ] && [ "$(alloc_on)" = true ]; then
    t_ok "before: the VMs trace, sample, trace on the device, and track allocations"
else
    t_fail "before: the VMs trace, sample, trace on the device, and track allocations" \
        "$(cat "$T_TMP/one.out" "$T_TMP/two.out" "$T_TMP/dev.out" "$T_TMP/alloc.out")"
fi
old=$DDMON_PID
t_ddmon --no-autostart kill-server >"$T_TMP/kill.out" 2>&1
t_wait 20 t_dead "$old"
wait "$c1" "$c2" "$c3" 2>/dev/null
t_wait 10 t_is off mode "$T_TMP/s.json" st.one
t_wait 10 t_is off mode "$T_TMP/s.json" st.two
[ "$(mode "$T_TMP/s.json" st.one)" = off ] && [ "$(mode "$T_TMP/s.json" st.two)" = off ] \
    && t_ok "kill-server: the streamed trace and the sampling stopped (MPSE, SPSE)" \
    || t_fail "kill-server: the streamed trace and the sampling stopped (MPSE, SPSE)" \
        "modes $(mode "$T_TMP/s.json" st.one) $(mode "$T_TMP/s.json" st.two)" "$(tail -5 "$T_TMP/server.err")"
t_wait 10 t_is off mode "$T_TMP/d.json" st.dev
[ "$(mode "$T_TMP/d.json" st.dev)" = off ] && [ "$(vm "$T_TMP/d.json" st.dev 'v["profiling"]["traces"]')" = 1 ] \
    && [ -n "$(ls "$T_TMP/dev")" ] \
    && t_ok "kill-server: the device trace stopped (MPRE) and was written on the device" \
    || t_fail "kill-server: the device trace stopped (MPRE) and was written on the device" \
        "mode $(mode "$T_TMP/d.json" st.dev)" "$(ls -la "$T_TMP/dev")"
t_wait 10 t_is false alloc_on
[ "$(alloc_on)" = false ] && t_ok "kill-server: allocation tracking is off (REAE 0)" \
    || t_fail "kill-server: allocation tracking is off (REAE 0)" "$(tail -5 "$T_TMP/server.err")"
grep -q "ddmon is stopping: tracing stopped (MPSE sent)" "$T_TMP/server.err" \
    && grep -q "ddmon is stopping: sampling stopped (SPSE sent)" "$T_TMP/server.err" \
    && grep -q "ddmon is stopping: allocation tracking turned off" "$T_TMP/server.err" \
    && t_ok "the server's log says what it stopped" \
    || t_fail "the server's log says what it stopped" "$(grep -i stopping "$T_TMP/server.err")"

# 6-7: SIGTERM
cp "$T_TMP/server.err" "$T_TMP/server1.err"
t_start_server "${server_args[@]}" || t_fail "server started again" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_ddmon --no-autostart trace st.one "$T_TMP/term.trace" --tracing --seconds 0 >"$T_TMP/term.out" 2>&1 &
c1=$!
t_wait 10 t_is tracing mode "$T_TMP/s.json" st.one
[ "$(mode "$T_TMP/s.json" st.one)" = tracing ] && t_ok "a new server traces again" \
    || t_fail "a new server traces again" "$(cat "$T_TMP/term.out")"
old=$DDMON_PID
kill -TERM "$old"
t_wait 20 t_dead "$old"
wait "$c1" 2>/dev/null
t_wait 10 t_is off mode "$T_TMP/s.json" st.one
[ "$(mode "$T_TMP/s.json" st.one)" = off ] && t_ok "SIGTERM: the trace stopped" \
    || t_fail "SIGTERM: the trace stopped" "$(tail -5 "$T_TMP/server.err")"

# 8-9: server --replace stops the old server's trace; the new one traces
cp "$T_TMP/server.err" "$T_TMP/server2.err"
t_start_server "${server_args[@]}" || t_fail "server started again" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_ddmon --no-autostart trace st.two "$T_TMP/rep.trace" --sampling --seconds 0 >"$T_TMP/rep.out" 2>&1 &
c2=$!
t_wait 10 t_is sampling mode "$T_TMP/s.json" st.two
old=$DDMON_PID
cp "$T_TMP/server.err" "$T_TMP/server3.err"
t_start_server --replace "${server_args[@]}" || t_fail "server --replace started" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 t_dead "$old"
wait "$c2" 2>/dev/null
t_wait 10 t_is off mode "$T_TMP/s.json" st.two
[ "$(mode "$T_TMP/s.json" st.two)" = off ] && t_ok "server --replace: the old server's sampling stopped" \
    || t_fail "server --replace: the old server's sampling stopped" "mode $(mode "$T_TMP/s.json" st.two)"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_ddmon --no-autostart trace st.two "$T_TMP/after.trace" --sampling --seconds 1 >"$T_TMP/after.out" 2>&1 \
    && [ -f "$T_TMP/after.trace" ] && t_ok "... and the new server traces it again" \
    || t_fail "... and the new server traces it again" "$(cat "$T_TMP/after.out")"

