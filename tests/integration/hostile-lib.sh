# SPDX-License-Identifier: Apache-2.0
# Shared by the hostile-peer tests (sourced after lib.sh, not run): one
# good VM (ddmon-simvm) for the whole test, and per case a fresh server and
# a fresh evil VM (tests/tools/evilvm) playing the case's script. While the
# attack runs, the control socket is asked `ddmon vms` and the good VM's
# threads view in turn, every 0.2 s; then four checks:
#   - responsive: every control reply came within H_REPLY_MS (5000 ms): a
#     stall detector, not a speed figure (that is bench/hostile.sh's,
#     against a run with no attacker). Each reply is a whole sanitized
#     `ddmon` process, whose start alone took over 1 s on a loaded CI
#     machine (1,326 ms once, with the server idle between attacks);
#   - memory: the server's peak RSS (VmHWM) stayed under the case's bound;
#   - the good VM kept updating: its threads view changed at least twice
#     during the attack (threads are polled every second while looked at);
#   - the server log has a line naming the evil VM and the reason (a regex;
#     "-" for a case with nothing to complain about, e.g. a valid big table).
# Sanitized builds keep freed memory in a quarantine (256 MiB by default),
# which would count as RSS: the servers here get a small one.
EVILVM="$DDM_TOP_BUILDDIR/tests/tools/evilvm"
H_DDMON="$DDMON --socket $T_TMP/ddmon.sock --plugin-dir $PLUGINDIR --no-adb-start --no-autostart"
H_REPLY_MS=${H_REPLY_MS:-5000}
H_ATTACK_S=${H_ATTACK_S:-4}
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=8"
export ASAN_OPTIONS

# The good VM, once per test: its key is H_GOOD.
h_start_good() {
    t_start_simvm --vms 1 --base-port 0 --port-file "$T_TMP/good.ports" --seed 15
    t_wait 10 test -s "$T_TMP/good.ports" || return 1
    H_GOOD_PORT=$(awk '{print $2}' "$T_TMP/good.ports")
    H_GOOD="127.0.0.1:$H_GOOD_PORT"
}

h_vm_state() { t_vm_field "$1" state; }
# The version of the good VM's threads view (asking for it is a look: the
# threads plugin polls it while someone looks).
h_good_version() {
    local v
    v=$(t_ddmon --no-autostart view threads --vm "$H_GOOD" --json 2>/dev/null |
        python3 -c '
import json, sys
def walk(d):
    if isinstance(d, dict):
        if d.get("name") == "threads" and "version" in d:
            print(d["version"]); sys.exit(0)
        for x in d.values(): walk(x)
    elif isinstance(d, list):
        for x in d: walk(x)
walk(json.load(sys.stdin))' 2>/dev/null)
    echo "${v:-0}"
}

# h_case NAME RSS_MB LOG_REGEX STEP...: run one case (see the top of this file).
# H_CONNECT=1 names the evil VM with --connect instead of the port scan
# (a scanned port that does not speak JDWP is no VM: it is logged at info).
# H_DURING, when set, is a shell command run in the background as the attack
# begins ($H_EVIL is the evil VM's key; `ddmon` as t_ddmon runs it: $H_DDMON).
h_case() {
    local name=$1 rss_mb=$2 log_re=$3 port n0 n1 max_ms=0 slow=0 t0 t1 ms end hwm evil_pid req
    shift 3
    rm -rf "$T_TMP/case"; mkdir -p "$T_TMP/case"
    "$EVILVM" --port-file "$T_TMP/case/evil.port" --app evil --pid 4242 "$@" \
        >"$T_TMP/case/evil.out" 2>"$T_TMP/case/evil.err" &
    evil_pid=$!; T_PIDS+=("$evil_pid")
    t_wait 5 test -s "$T_TMP/case/evil.port"
    port=$(awk '{print $2}' "$T_TMP/case/evil.port")
    H_EVIL="127.0.0.1:$port"
    export H_EVIL H_DDMON
    rm -f "$T_TMP/ddmon.sock"
    if [ -n "${H_CONNECT:-}" ]; then # named with --connect: not a speculative scan target
        t_start_server --scan=local --scan-ports "$H_GOOD_PORT" --connect "$H_EVIL" --selected-port 0 \
            --debug-port-base "$(t_free_port)"
    else
        t_start_server --scan=local --scan-ports "$H_GOOD_PORT,$port" --selected-port 0 \
            --debug-port-base "$(t_free_port)"
    fi
    t_wait 15 t_is ready h_vm_state "$H_GOOD"
    sleep 1 # the first thread tables of the good VM
    n0=$(h_good_version)
    if [ -n "${H_DURING:-}" ]; then # an action of the case (a command to the evil VM)
        bash -c "$H_DURING" >"$T_TMP/case/during.out" 2>&1 &
        T_PIDS+=($!)
    fi
    end=$(( $(date +%s%N) + H_ATTACK_S * 1000000000 ))
    while [ "$(date +%s%N)" -lt "$end" ]; do
        for req in vms "view threads --vm $H_GOOD --json"; do
            t0=$(date +%s%N)
            # shellcheck disable=SC2086
            timeout 20 "$DDMON" --socket "$T_TMP/ddmon.sock" --no-autostart $req \
                >"$T_TMP/case/reply" 2>&1 || slow=$((slow + 1))
            t1=$(date +%s%N)
            ms=$(( (t1 - t0) / 1000000 ))
            [ "$ms" -gt "$max_ms" ] && max_ms=$ms
        done
        sleep 0.2
    done
    n1=$(h_good_version)
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$DDMON_PID/status" 2>/dev/null)
    if [ "$max_ms" -lt "$H_REPLY_MS" ] && [ "$slow" = 0 ]; then
        t_ok "$name: control replies within $H_REPLY_MS ms during the attack (max $max_ms ms)"
    else
        t_fail "$name: control replies within $H_REPLY_MS ms during the attack" \
            "max $max_ms ms, $slow failed" "$(tail -5 "$T_TMP/server.err")"
    fi
    if [ -n "$hwm" ] && [ "$hwm" -lt $((rss_mb * 1024)) ]; then
        t_ok "$name: peak RSS under $rss_mb MB ($((hwm / 1024)) MB)"
    else
        t_fail "$name: peak RSS under $rss_mb MB" "VmHWM ${hwm:-?} kB"
    fi
    if [ "$((n1 - n0))" -ge 2 ]; then
        t_ok "$name: the good VM kept updating ($((n1 - n0)) thread tables)"
    else
        t_fail "$name: the good VM kept updating" "threads updates $n0 -> $n1" \
            "$(head -c 300 "$T_TMP/case/reply")"
    fi
    if [ "$log_re" = - ]; then
        :
    elif grep -E "$log_re" "$T_TMP/server.err" | grep -qF "$H_EVIL"; then
        t_ok "$name: the log names the VM and the reason"
    else
        t_fail "$name: the log names the VM ($H_EVIL) and the reason (/$log_re/)" \
            "$(grep -v 'listening on' "$T_TMP/server.err" | tail -8)" "$(cat "$T_TMP/case/evil.out")"
    fi
    t_stop "$DDMON_PID" "$evil_pid"
    cp "$T_TMP/server.err" "$T_TMP/case.$name.server.err"
}
