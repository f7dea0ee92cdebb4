#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A server that stops stops what its plugins started in the VMs (plugin ABI
# 1.8 stopping hooks), seen from ddmon-simvm's side (its --state-file): with
# a streamed method trace, a sampling trace and a trace on the device
# running and allocation tracking on, `ddmon kill-server` leaves every VM
# off (the device trace is written on the device, tracking is off); the
# same for SIGTERM and for `server --replace`, the new server then starting
# a trace again. The traces recorded up to the stop are saved (the server
# waits for them): FILE, no .part, the simulator's bytes plus the line
# that marks them as cut short, dmtracedump reads them (skipped, visibly,
# without dmtracedump), and the `ddmon trace` client is told where; one the
# VM cut off mid-stream (--trace-fault=truncate) is saved up to its last
# whole record. A `trace VM --stop` whose VM has not answered (its
# simulator stopped with SIGSTOP) when the server stops ends with a clear
# error once the bounded wait is over, not a dropped connection; a second
# SIGTERM during that wait ends it at once. A server killed with SIGKILL has no say: its trace runs on (trace-simvm.sh covers
# `trace VM --stop` for that).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile alloc || t_skip_all "the profile or alloc plugin was configured out"
DMTRACEDUMP=${DMTRACEDUMP:-$(command -v dmtracedump || true)}
t_plan 20

mkdir -p "$T_TMP/dev"
common=(--base-port 0 --gc-every 0 --thread-activity 0)
t_start_simvm --vms 2 --app st.one --app st.two --port-file "$T_TMP/s.ports" --state-file "$T_TMP/s.json" \
    "${common[@]}"
t_start_simvm --vms 1 --app st.dev --port-file "$T_TMP/d.ports" --state-file "$T_TMP/d.json" \
    --trace=device --device-dir "$T_TMP/dev" --seed 2 "${common[@]}"
t_start_simvm --vms 1 --app st.cut --port-file "$T_TMP/c.ports" --state-file "$T_TMP/c.json" \
    --trace-fault=truncate --trace-rate 400000 --seed 3 "${common[@]}"
t_start_simvm --vms 1 --app st.hang --port-file "$T_TMP/h.ports" --seed 4 "${common[@]}"
hang_pid=$SIMVM_PID
for p in s d c h; do t_wait 10 test -s "$T_TMP/$p.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
server_args=(--scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0)
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 5 ]; }
t_start_server "${server_args[@]}" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"

# vm STATE APP EXPR: a Python expression over v, the simulator's VM named APP
vm() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; print(eval(sys.argv[3]))' "$@"; }
mode() { vm "$1" "$2" 'v["profiling"]["mode"]'; }
alloc_on() { vm "$T_TMP/s.json" st.one 'str(v["alloc"]["enabled"]).lower()'; }
MARK='ddmon-cut-short=server-stopped'
# saved FILE STATE APP: FILE and no FILE.part; FILE is the simulator's last
# trace of APP with the cut-short line after the version number
saved() {
    [ -f "$1" ] && [ ! -e "$1.part" ] && [ "$(sed -n 3p "$1")" = "$MARK" ] || return 1
    [ "$(sed 3d "$1" | sha256sum | awk '{print $1}')" = "$(vm "$2" "$3" 'v["profiling"]["last"]["sha256"]')" ]
}
# told OUT FILE: the `ddmon trace` client's output names FILE, cut short
told() { grep -q "written to $2 " "$1" && grep -q "cut short: ddmon is stopping" "$1"; }
# dmt_check DESC FILE...: dmtracedump reads each FILE (-o lists calls, the
# profile runs); without dmtracedump: a visible SKIP
dmt_check() {
    local desc=$1 f; shift
    if [ -z "$DMTRACEDUMP" ]; then
        T_N=$((T_N + 1)); echo "ok $T_N - $desc # SKIP dmtracedump is not installed (Debian: dmtracedump)"
        return
    fi
    for f in "$@"; do
        if ! "$DMTRACEDUMP" -o "$f" >"$f.dump" 2>"$f.dump.err" || ! grep -q ' ent ' "$f.dump" \
            || ! "$DMTRACEDUMP" "$f" >"$f.profile" 2>&1 || ! grep -q "Total cycles" "$f.profile"; then
            t_fail "$desc" "dmtracedump refused $f" "$(head -5 "$f.dump.err" "$f.profile")"
            return
        fi
    done
    t_ok "$desc"
}

# 1-5: kill-server while four traces run and allocation tracking is on
t_ddmon --no-autostart trace st.one "$T_TMP/one.trace" --tracing --seconds 0 >"$T_TMP/one.out" 2>&1 &
c1=$!
t_ddmon --no-autostart trace st.two "$T_TMP/two.trace" --sampling --seconds 0 >"$T_TMP/two.out" 2>&1 &
c2=$!
t_ddmon --no-autostart trace st.dev --tracing --seconds 0 >"$T_TMP/dev.out" 2>&1 &
c3=$!
t_ddmon --no-autostart trace st.cut "$T_TMP/cut.trace" --tracing --seconds 0 >"$T_TMP/cut.out" 2>&1 &
c4=$!
t_ddmon --no-autostart alloc st.one start >"$T_TMP/alloc.out" 2>&1 || t_diag "$T_TMP/alloc.out"
t_wait 10 t_is tracing mode "$T_TMP/s.json" st.one
t_wait 10 t_is sampling mode "$T_TMP/s.json" st.two
t_wait 10 t_is tracing mode "$T_TMP/d.json" st.dev
t_wait 10 t_is tracing mode "$T_TMP/c.json" st.cut
t_wait 10 t_is true alloc_on
if [ "$(mode "$T_TMP/s.json" st.one)" = tracing ] && [ "$(mode "$T_TMP/s.json" st.two)" = sampling ] \
    && [ "$(mode "$T_TMP/d.json" st.dev)" = tracing ] && [ "$(mode "$T_TMP/c.json" st.cut)" = tracing ] \
    && [ "$(alloc_on)" = true ]; then
    t_ok "before: the VMs trace, sample, trace on the device, and track allocations"
else
    t_fail "before: the VMs trace, sample, trace on the device, and track allocations" \
        "$(cat "$T_TMP/one.out" "$T_TMP/two.out" "$T_TMP/dev.out" "$T_TMP/cut.out" "$T_TMP/alloc.out")"
fi
old=$DDMON_PID
t_ddmon --no-autostart kill-server >"$T_TMP/kill.out" 2>&1
t_wait 20 t_dead "$old"
wait "$c1" "$c2" "$c3" "$c4" 2>/dev/null
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

# 6-11: what the traces recorded up to the stop is saved, and the clients told
saved "$T_TMP/one.trace" "$T_TMP/s.json" st.one && told "$T_TMP/one.out" "$T_TMP/one.trace" \
    && t_ok "kill-server: the streamed trace is saved (no .part, the VM's bytes, marked cut short), the client told" \
    || t_fail "kill-server: the streamed trace is saved (no .part, the VM's bytes, marked cut short), the client told" \
        "$(ls -la "$T_TMP" | grep one)" "$(cat "$T_TMP/one.out")" "$(grep one.trace "$T_TMP/server.err")"
saved "$T_TMP/two.trace" "$T_TMP/s.json" st.two && told "$T_TMP/two.out" "$T_TMP/two.trace" \
    && t_ok "kill-server: the sampling trace is saved, the client told" \
    || t_fail "kill-server: the sampling trace is saved, the client told" \
        "$(ls -la "$T_TMP" | grep two)" "$(cat "$T_TMP/two.out")"
grep -q "written on the device to" "$T_TMP/dev.out" \
    && t_ok "kill-server: the device trace's client is told where the VM wrote it" \
    || t_fail "kill-server: the device trace's client is told where the VM wrote it" "$(cat "$T_TMP/dev.out")"
grep -q "tracing of .* written to $T_TMP/one.trace .*cut short: ddmon is stopping" "$T_TMP/server.err" \
    && t_ok "the server's log says where the trace went" \
    || t_fail "the server's log says where the trace went" "$(grep -i trace "$T_TMP/server.err" | tail -5)"
# the simulator closed the connection halfway through st.cut's trace
# (the trace's size: what the VM declared, which the log line repeats)
full=$(sed -n 's/.*only [0-9]* of the \([0-9]*\) bytes arrived before ddmon stopped.*/\1/p' "$T_TMP/server.err" | head -1)
size=$(stat -c %s "$T_TMP/cut.trace" 2>/dev/null || echo 0)
[ -f "$T_TMP/cut.trace" ] && [ ! -e "$T_TMP/cut.trace.part" ] && [ "$(sed -n 3p "$T_TMP/cut.trace")" = "$MARK" ] \
    && [ "$size" -gt 0 ] && [ -n "$full" ] && [ "$size" -lt "$full" ] \
    && grep -q "only [0-9]* of the [0-9]* bytes arrived before ddmon stopped: kept up to the last whole record" \
        "$T_TMP/server.err" \
    && t_ok "a trace cut off mid-stream is saved up to its last whole record, and the log says so" \
    || t_fail "a trace cut off mid-stream is saved up to its last whole record, and the log says so" \
        "size $size of $full" "$(cat "$T_TMP/cut.out")" "$(grep cut.trace "$T_TMP/server.err")"
dmt_check "dmtracedump reads the saved traces, the one cut mid-stream too" \
    "$T_TMP/one.trace" "$T_TMP/two.trace" "$T_TMP/cut.trace"

# 12-14: SIGTERM
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
saved "$T_TMP/term.trace" "$T_TMP/s.json" st.one && told "$T_TMP/term.out" "$T_TMP/term.trace" \
    && t_ok "SIGTERM: the trace is saved, the client told" \
    || t_fail "SIGTERM: the trace is saved, the client told" "$(cat "$T_TMP/term.out")"

# 15-17: server --replace stops the old server's trace; the new one traces
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
saved "$T_TMP/rep.trace" "$T_TMP/s.json" st.two && told "$T_TMP/rep.out" "$T_TMP/rep.trace" \
    && t_ok "server --replace: the old server's trace is saved, the client told" \
    || t_fail "server --replace: the old server's trace is saved, the client told" "$(cat "$T_TMP/rep.out")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_ddmon --no-autostart trace st.two "$T_TMP/after.trace" --sampling --seconds 1 >"$T_TMP/after.out" 2>&1 \
    && [ -f "$T_TMP/after.trace" ] && t_ok "... and the new server traces it again" \
    || t_fail "... and the new server traces it again" "$(cat "$T_TMP/after.out")"

# 18-19: `trace VM --stop` sent its MPRQ to a VM that does not answer (its
# simulator is stopped: the request waits in the VM's socket) when the
# server stops: the server waits its bounded time, closes the VM, and the
# client hears why; no file, no .part
hang_port=$(awk '{print $2}' "$T_TMP/h.ports")
# unread: bytes waiting in the stopped VM's socket (ss's Recv-Q)
unread() { ss -tnH state established "( sport = :$hang_port )" | awk '{s += $1} END {print s + 0}'; }
has_unread() { [ "$(unread)" -gt 0 ]; }
kill -STOP "$hang_pid"
t_ddmon --no-autostart trace st.hang "$T_TMP/hang.trace" --stop >"$T_TMP/hang.out" 2>&1 &
c5=$!
t_wait 10 has_unread
old=$DDMON_PID
t_ddmon --no-autostart kill-server >"$T_TMP/kill2.out" 2>&1
krc=$?
wait "$c5"
hrc=$?
kill -CONT "$hang_pid"
t_wait 20 t_dead "$old"
[ "$krc" = 0 ] && t_dead "$old" && t_ok "kill-server returns with a VM that does not answer" \
    || t_fail "kill-server returns with a VM that does not answer" "rc $krc" "$(cat "$T_TMP/kill2.out")"
[ "$hrc" = 1 ] && grep -q "ddmon is stopping and the VM did not answer within" "$T_TMP/hang.out" \
    && [ ! -e "$T_TMP/hang.trace" ] && [ ! -e "$T_TMP/hang.trace.part" ] \
    && t_ok "trace --stop still waiting for the VM gets a clear error, no file" \
    || t_fail "trace --stop still waiting for the VM gets a clear error, no file" "rc $hrc" \
        "$(cat "$T_TMP/hang.out")" "unread $(unread)"

# 20: the same wait, cut by a second SIGTERM: the server says so and goes
# (without the fix it sat out the whole wait, silently)
cp "$T_TMP/server.err" "$T_TMP/server4.err"
t_start_server "${server_args[@]}" || t_fail "server started again" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_wait 10 t_is 0 unread
kill -STOP "$hang_pid"
t_ddmon --no-autostart trace st.hang "$T_TMP/hang2.trace" --stop >"$T_TMP/hang2.out" 2>&1 &
c6=$!
t_wait 10 has_unread
old=$DDMON_PID
kill -TERM "$old"
t_wait 10 grep -q "ddmon server stopping (SIGTERM)" "$T_TMP/server.err"
kill -TERM "$old"
wait "$c6" 2>/dev/null
kill -CONT "$hang_pid"
t_wait 20 t_dead "$old"
t_dead "$old" && grep -q "second signal (SIGTERM): not waiting for the VMs' answers" "$T_TMP/server.err" \
    && ! grep -q "did not answer the last requests within" "$T_TMP/server.err" \
    && t_ok "a second SIGTERM ends the wait for the VMs' answers" \
    || t_fail "a second SIGTERM ends the wait for the VMs' answers" "$(tail -8 "$T_TMP/server.err")"
