#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The profile plugin through the real ddmon and ddmon-simvm (ground truth:
# its --state-file, "profiling"): a streamed method trace (dual clock) and
# a sampling trace land with the simulator's bytes and no .part; Debian's
# dmtracedump reads them (-o and the profile), and so it does a single-clock
# trace and a trace written on the device (MPRS/MPRE, --device-dir);
# trace-summary's call counts (table and --json) equal the simulator's and
# its calls, inclusive and exclusive times dmtracedump's profile;
# the VM gets the summary views and MPRQ's state shows in the VM list
# while a trace runs and after; Ctrl-C on a running trace still saves it;
# a stop that finds nothing running times out with a clear message; a
# truncated MPSE stream leaves no file; bad .trace files (unknown version,
# bad offset, truncated, not a trace) get clear errors; a VM without
# profiling is refused; a server killed (SIGKILL: a crash; a server that
# stops stops its traces, trace-server-stop.sh) mid-trace leaves the VM
# sampling: the next start names 'trace VM --stop', which stops it and saves what
# comes back; a bad file argument exits 1 (file error, not 3 or 2); a
# plain JVM is refused as one by trace, hprof, gc, alloc, ui and
# native-heap; heap-info and heap-bitmap name a pid that matches several
# VMs as the core does;
# the simulator's sampling trace spans the time it ran (no thread longer),
# and one cut to --buffer says data-file-overflow=true.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile || t_skip_all "the profile plugin was configured out"
DMTRACEDUMP=${DMTRACEDUMP:-$(command -v dmtracedump || true)}
t_plan 30

SIMVM="$DDM_TOP_BUILDDIR/ddmon-simvm"
mkdir -p "$T_TMP/dev"
chmod 700 "$T_TMP"
common=(--base-port 0 --gc-every 0 --thread-activity 0)
t_start_simvm --vms 2 --app tr.one --app tr.two --port-file "$T_TMP/s.ports" --state-file "$T_TMP/s.json" \
    --trace-rate 200000 "${common[@]}"
t_start_simvm --vms 1 --app tr.dev --port-file "$T_TMP/d.ports" --state-file "$T_TMP/d.json" \
    --trace=device --device-dir "$T_TMP/dev" --seed 2 "${common[@]}"
t_start_simvm --vms 1 --app tr.single --port-file "$T_TMP/c.ports" --state-file "$T_TMP/c.json" \
    --trace-clock=thread-cpu --mode dalvik --seed 3 "${common[@]}"
t_start_simvm --vms 1 --app tr.trunc --port-file "$T_TMP/t.ports" --trace-fault=truncate \
    --trace-rate 400000 --seed 4 "${common[@]}"
t_start_simvm --vms 1 --app tr.lost --port-file "$T_TMP/l.ports" --trace-fault=silent --seed 5 "${common[@]}"
t_start_simvm --vms 1 --app tr.none --port-file "$T_TMP/n.ports" --trace=none "${common[@]}" # seed 1: tr.one's pid too (check 29)
t_start_simvm --vms 1 --mode jvm --port-file "$T_TMP/j.ports" --seed 7 "${common[@]}"
for p in s d c t l n j; do t_wait 10 test -s "$T_TMP/$p.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
server_args=(--scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0
    --plugin-opt profile.timeout_ms=5000)
t_start_server "${server_args[@]}" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 7 ]; }
t_wait 20 ready || t_diag "$T_TMP/vms.txt"

# truth STATE APP KEY: profiling.last.KEY of the VM named APP
truth() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; l=v["profiling"]["last"]; print(l[sys.argv[3]] if l else None)' "$@"; }
mode() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; print(v["profiling"]["mode"])' "$@"; }
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d.get("result") or {}; print(r.get("fields", {}).get(sys.argv[2]))' "$1" "$2"; }
sha() { sha256sum "$1" | awk '{print $1}'; }
# same_calls SUMMARY_JSON STATE APP: trace-summary's calls per method = the simulator's
same_calls() {
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = (doc.get("result") or doc).get("rows")
vm = [v for v in json.load(open(sys.argv[2]))["vms"] if v["app"] == sys.argv[3]][0]
want = {k: v for k, v in vm["profiling"]["last"]["calls"].items() if v}
got = {r["method"]: r["calls"] for r in rows}
if got != want:
    print("got", got); print("want", want); sys.exit(1)
PY
}
# dmtracedump_ok FILE STATE APP: -o lists one "ent" per call; the profile runs
dmtracedump_ok() {
    # tools/dev installs it: missing, the check fails instead of passing unseen
    [ -n "$DMTRACEDUMP" ] || { echo "dmtracedump is not installed (tools/dev installs it)"; return 1; }
    "$DMTRACEDUMP" -o "$1" >"$1.dump" 2>"$1.dump.err" || return 1
    local ents want
    ents=$(grep -c '^ *[0-9]* ent ' "$1.dump")
    want=$(python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; print(sum(v["profiling"]["last"]["calls"].values()))' "$2" "$3")
    [ "$ents" = "$want" ] || { echo "ent lines $ents, calls $want"; return 1; }
    "$DMTRACEDUMP" "$1" >"$1.profile" 2>&1 && grep -q "Total cycles" "$1.profile" \
        && grep -q "com.example.app.Model.fib" "$1.profile"
}

# same_times SUMMARY_JSON DMTRACEDUMP_PROFILE: trace-summary's calls, inclusive
# and exclusive microseconds per method (class.name + signature) equal the
# figures of dmtracedump's profile (its exclusive table and the "[N]" lines
# of its inclusive one: calls are "outer+recursive")
same_times() {
    python3 - "$@" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
rows = (doc.get("result") or doc)["rows"]
text = open(sys.argv[2]).read()
excl_part, incl_part = text.split("Inclusive elapsed times", 1)
dm = {}
for m in re.finditer(r"^\s+(\d+)\s+[\d.]+\s+[\d.]+\s+\[\d+\] (\S+) (\S+)$", excl_part, re.M):
    dm.setdefault((m.group(2), m.group(3)), {})["exclusive_us"] = int(m.group(1))
for m in re.finditer(r"^\[\d+\]\s+[\d.]+%\s+(\d+)\+(\d+)\s+(\d+) (\S+) (\S+)$", incl_part, re.M):
    d = dm.setdefault((m.group(4), m.group(5)), {})
    d["calls"] = int(m.group(1)) + int(m.group(2))
    d["inclusive_us"] = int(m.group(3))
got = {(r["method"], r["signature"]): {k: r[k] for k in ("calls", "inclusive_us", "exclusive_us")}
       for r in rows}
if len(dm) < 5 or got != dm:
    print("dmtracedump", dm); print("trace-summary", got); sys.exit(1)
PY
}

# 1-4: a streamed method trace, dual clock
t_ddmon --no-autostart trace tr.one "$T_TMP/one.trace" --tracing --seconds 1 --json >"$T_TMP/one.json" 2>"$T_TMP/one.err"; rc=$?
t_wait 5 t_is 1 python3 -c 'import json,sys; print([v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]=="tr.one"][0]["profiling"]["traces"])' "$T_TMP/s.json"
if [ $rc = 0 ] && [ -f "$T_TMP/one.trace" ] && [ ! -e "$T_TMP/one.trace.part" ] \
    && [ "$(sha "$T_TMP/one.trace")" = "$(truth "$T_TMP/s.json" tr.one sha256)" ] \
    && [ "$(field "$T_TMP/one.json" bytes)" = "$(truth "$T_TMP/s.json" tr.one bytes)" ] \
    && [ "$(field "$T_TMP/one.json" via)" = stream ] && [ "$(field "$T_TMP/one.json" version)" = 3 ] \
    && [ "$(field "$T_TMP/one.json" records)" = "$(truth "$T_TMP/s.json" tr.one records)" ]; then
    t_ok "MPSS/MPSE: the file has the simulator's bytes (sha256), no .part, and the JSON says so"
else
    t_fail "MPSS/MPSE: the file has the simulator's bytes (sha256), no .part, and the JSON says so" \
        "rc $rc" "$(cat "$T_TMP/one.json" "$T_TMP/one.err")"
fi
dmtracedump_ok "$T_TMP/one.trace" "$T_TMP/s.json" tr.one >"$T_TMP/dm1.out" 2>&1 \
    && t_ok "dmtracedump -o and dmtracedump read it: one 'ent' per call of the ground truth" \
    || t_fail "dmtracedump -o and dmtracedump read it: one 'ent' per call of the ground truth" \
        "$(cat "$T_TMP/dm1.out" "$T_TMP/one.trace.dump.err" 2>/dev/null | head -5)"
t_ddmon --no-autostart trace-summary "$T_TMP/one.trace" --top 50 --json >"$T_TMP/sum1.json" 2>&1 \
    && same_calls "$T_TMP/sum1.json" "$T_TMP/s.json" tr.one >"$T_TMP/sum1.diff" 2>&1 \
    && t_ok "trace-summary --json: calls per method equal the simulator's" \
    || t_fail "trace-summary --json: calls per method equal the simulator's" "$(cat "$T_TMP/sum1.diff" "$T_TMP/sum1.json" | head -8)"
same_times "$T_TMP/sum1.json" "$T_TMP/one.trace.profile" >"$T_TMP/times1.diff" 2>&1 \
    && t_ok "trace-summary's calls, inclusive and exclusive us per method equal dmtracedump's profile" \
    || t_fail "trace-summary's calls, inclusive and exclusive us per method equal dmtracedump's profile" "$(head -c 2000 "$T_TMP/times1.diff")"
t_ddmon --no-autostart view profile.methods --vm tr.one --json >"$T_TMP/v1.json" 2>&1
t_ddmon --no-autostart trace-summary "$T_TMP/one.trace" >"$T_TMP/sum1.txt" 2>&1
loop_calls=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([r["calls"] for r in d["rows"] if r["method"]=="android.os.Looper.loop"][0])' "$T_TMP/v1.json" 2>/dev/null)
[ "$loop_calls" = 1 ] && grep -q "android.os.Looper.loop" "$T_TMP/sum1.txt" && grep -q "dual clock" "$T_TMP/sum1.txt" \
    && t_ok "the VM's view profile.methods and the text table show the trace" \
    || t_fail "the VM's view profile.methods and the text table show the trace" "$(head -5 "$T_TMP/v1.json" "$T_TMP/sum1.txt")"

# 5-6: sampling
t_ddmon --no-autostart trace tr.two "$T_TMP/two.trace" --sampling=500 --seconds 1 >"$T_TMP/two.out" 2>&1; rc=$?
t_wait 5 t_is sampling truth "$T_TMP/s.json" tr.two kind
[ $rc = 0 ] && [ "$(sha "$T_TMP/two.trace" 2>/dev/null)" = "$(truth "$T_TMP/s.json" tr.two sha256)" ] \
    && [ "$(truth "$T_TMP/s.json" tr.two interval_us)" = 500 ] && grep -q "sampling of .* written to" "$T_TMP/two.out" \
    && t_ok "SPSS/SPSE: a sampling trace at 500 us lands with the simulator's bytes" \
    || t_fail "SPSS/SPSE: a sampling trace at 500 us lands with the simulator's bytes" "$(cat "$T_TMP/two.out")"
dmtracedump_ok "$T_TMP/two.trace" "$T_TMP/s.json" tr.two >"$T_TMP/dm2.out" 2>&1 \
    && t_ddmon --no-autostart trace-summary "$T_TMP/two.trace" --top 50 --json >"$T_TMP/sum2.json" 2>&1 \
    && same_calls "$T_TMP/sum2.json" "$T_TMP/s.json" tr.two >"$T_TMP/sum2.diff" 2>&1 \
    && t_ok "dmtracedump reads the sampling trace; trace-summary's calls equal the simulator's" \
    || t_fail "dmtracedump reads the sampling trace; trace-summary's calls equal the simulator's" "$(cat "$T_TMP/dm2.out" "$T_TMP/sum2.diff" | head -5)"

# 7: single clock (version 2), on a Dalvik VM (empty replies)
t_ddmon --no-autostart trace tr.single "$T_TMP/single.trace" --tracing --seconds 1 --json >"$T_TMP/single.json" 2>&1; rc=$?
t_wait 5 t_is thread-cpu truth "$T_TMP/c.json" tr.single clock
[ $rc = 0 ] && [ "$(field "$T_TMP/single.json" version)" = 2 ] && [ "$(field "$T_TMP/single.json" clock)" = thread-cpu ] \
    && dmtracedump_ok "$T_TMP/single.trace" "$T_TMP/c.json" tr.single >"$T_TMP/dm3.out" 2>&1 \
    && t_ddmon --no-autostart trace-summary "$T_TMP/single.trace" --top 50 --json >"$T_TMP/sum3.json" 2>&1 \
    && same_calls "$T_TMP/sum3.json" "$T_TMP/c.json" tr.single >"$T_TMP/sum3.diff" 2>&1 \
    && t_ok "a single-clock (version 2) trace from a Dalvik VM: dmtracedump and trace-summary agree with the truth" \
    || t_fail "a single-clock (version 2) trace from a Dalvik VM: dmtracedump and trace-summary agree with the truth" "$(cat "$T_TMP/single.json" "$T_TMP/dm3.out" "$T_TMP/sum3.diff" | head -6)"

# 8-9: a VM that can only trace to a device file
t_ddmon --no-autostart trace tr.dev --tracing --seconds 1 >"$T_TMP/dev.out" 2>&1; rc=$?
t_wait 5 t_is device truth "$T_TMP/d.json" tr.dev via
[ $rc = 0 ] && grep -q "written on the device to /sdcard/tr.dev.trace" "$T_TMP/dev.out" \
    && grep -q "adb pull /sdcard/tr.dev.trace" "$T_TMP/dev.out" \
    && [ "$(truth "$T_TMP/d.json" tr.dev path)" = /sdcard/tr.dev.trace ] \
    && t_ok "MPRS/MPRE: the trace goes to /sdcard/APP.trace and the message says where" \
    || t_fail "MPRS/MPRE: the trace goes to /sdcard/APP.trace and the message says where" "$(cat "$T_TMP/dev.out")"
[ "$(sha "$T_TMP/dev/tr.dev.trace" 2>/dev/null)" = "$(truth "$T_TMP/d.json" tr.dev sha256)" ] \
    && dmtracedump_ok "$T_TMP/dev/tr.dev.trace" "$T_TMP/d.json" tr.dev >"$T_TMP/dm4.out" 2>&1 \
    && t_ok "... the device's file (--device-dir) is the simulator's and dmtracedump reads it" \
    || t_fail "... the device's file (--device-dir) is the simulator's and dmtracedump reads it" "$(cat "$T_TMP/dm4.out")"

# 10-12: MPRQ in the VM list while a trace runs, and after; Ctrl-C saves the file
trace_mode() { t_vm_field "$1" trace_mode; }
key_of() { python3 -c 'import json,sys; print([r["key"] for r in json.load(open(sys.argv[1]))["rows"] if r["app"]==sys.argv[2]][0])' "$T_TMP/keys.json" "$1"; }
t_ddmon --no-autostart vms --json >"$T_TMP/keys.json" 2>/dev/null
k_one=$(key_of tr.one)
# a background job ignores SIGINT: the client gets it back, as at a terminal
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart \
    trace tr.one "$T_TMP/ctrlc.trace" --tracing --seconds 0 >"$T_TMP/ctrlc.out" 2>&1 &
client=$!
if t_wait 10 t_is tracing mode "$T_TMP/s.json" tr.one && t_wait 10 t_is 1 trace_mode "$k_one" \
    && t_ddmon --no-autostart vms >"$T_TMP/vms2.txt" 2>&1 && grep -q "trace: tracing" "$T_TMP/vms2.txt"; then
    t_ok "while it traces, the VM list shows trace: tracing (--json trace_mode 1, from MPRQ)"
else
    t_fail "while it traces, the VM list shows trace: tracing (--json trace_mode 1, from MPRQ)" "$(cat "$T_TMP/vms2.txt" 2>/dev/null)"
fi
sleep 0.5
kill -INT $client; wait $client 2>/dev/null
t_wait 10 test -f "$T_TMP/ctrlc.trace"
# (the simulator writes its state file at most every so often, and later
# when writing it is slow: a sanitizer build on a loaded machine; waiting
# costs nothing when it is there, and a stale state compares the file with
# the previous trace)
traces_of_one() { python3 -c 'import json,sys; print([v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]=="tr.one"][0]["profiling"]["traces"])' "$T_TMP/s.json"; }
t_wait 30 t_is 2 traces_of_one
[ -f "$T_TMP/ctrlc.trace" ] && [ ! -e "$T_TMP/ctrlc.trace.part" ] \
    && [ "$(sha "$T_TMP/ctrlc.trace")" = "$(truth "$T_TMP/s.json" tr.one sha256)" ] \
    && dmtracedump_ok "$T_TMP/ctrlc.trace" "$T_TMP/s.json" tr.one >"$T_TMP/dm5.out" 2>&1 \
    && t_ok "Ctrl-C on a running trace stops it and still saves the whole file" \
    || t_fail "Ctrl-C on a running trace stops it and still saves the whole file" "$(ls -la "$T_TMP" | grep ctrlc)" "$(tail -3 "$T_TMP/server.err")" \
        "the simulator's traces of tr.one: $(traces_of_one 2>&1)" "$(cat "$T_TMP/dm5.out" 2>/dev/null | head -3)"
t_wait 10 t_is 0 trace_mode "$k_one" && grep -q "ctrlc.trace" "$T_TMP/server.err" \
    && t_ok "... then MPRQ says off in the VM list, and the server's log says where the file went" \
    || t_fail "... then MPRQ says off in the VM list, and the server's log says where the file went" "trace_mode $(trace_mode "$k_one")" \
        "the server's log of it: $(grep -i 'trace\|profile\|tr\.one' "$T_TMP/server.err" | tail -4)" "$(ls -la "$T_TMP" | grep ctrlc)"

# 13: a stop that finds nothing running: no MPSE at all -> profile.timeout_ms
# (5 s: a stop that took longer on a loaded machine would fail the Ctrl-C
# trace above, which is not what that check is about)
start=$(date +%s)
t_ddmon --no-autostart trace tr.lost "$T_TMP/lost.trace" --tracing --seconds 1 >"$T_TMP/lost.out" 2>&1; rc=$?
took=$(( $(date +%s) - start ))
[ $rc != 0 ] && [ $took -le 20 ] && grep -q "no trace came back within 5.0 s" "$T_TMP/lost.out" \
    && [ ! -e "$T_TMP/lost.trace" ] && [ ! -e "$T_TMP/lost.trace.part" ] \
    && t_ok "a stop with nothing running times out (${took} s) with a clear message, no file" \
    || t_fail "a stop with nothing running times out with a clear message, no file" "rc $rc, ${took} s" "$(cat "$T_TMP/lost.out")"

# 14: a truncated MPSE stream
t_ddmon --no-autostart trace tr.trunc "$T_TMP/trunc.trace" --tracing --seconds 1 >"$T_TMP/trunc.out" 2>&1; rc=$?
[ $rc != 0 ] && [ ! -e "$T_TMP/trunc.trace" ] && [ ! -e "$T_TMP/trunc.trace.part" ] \
    && grep -q "no file written" "$T_TMP/trunc.out" \
    && t_ok "a truncated MPSE stream leaves no file and says how much arrived" \
    || t_fail "a truncated MPSE stream leaves no file and says how much arrived" "rc $rc" "$(cat "$T_TMP/trunc.out")"

# 15: a VM without profiling
t_ddmon --no-autostart trace tr.none "$T_TMP/none.trace" --tracing --seconds 1 >"$T_TMP/none.out" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "offers no method tracing" "$T_TMP/none.out" && [ ! -e "$T_TMP/none.trace.part" ] \
    && t_ok "a VM whose FEAT lists no profiling is refused clearly" \
    || t_fail "a VM whose FEAT lists no profiling is refused clearly" "$(cat "$T_TMP/none.out")"

# 16-19: bad .trace files
python3 - "$T_TMP/one.trace" "$T_TMP" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
end = data.index(b"*end\n") + 5
d = sys.argv[2]
open(d + "/badver.trace", "wb").write(data[:end + 4] + struct.pack("<H", 9) + data[end + 6:])
open(d + "/badoff.trace", "wb").write(data[:end + 6] + struct.pack("<H", 8) + data[end + 8:])
open(d + "/short.trace", "wb").write(data[:len(data) - 5])
open(d + "/not.trace", "wb").write(b"JAVA PROFILE 1.0.3\0" + data[end:end + 64])
PY
bad() { # bad FILE NEEDLE
    t_ddmon --no-autostart trace-summary "$T_TMP/$1" >"$T_TMP/$1.out" 2>&1; local rc=$?
    [ $rc != 0 ] && grep -q -- "$2" "$T_TMP/$1.out"
}
bad badver.trace "unknown trace data version 9" && t_ok "trace-summary: an unknown version is named" \
    || t_fail "trace-summary: an unknown version is named" "$(cat "$T_TMP/badver.trace.out")"
bad badoff.trace "bad data offset 8" && t_ok "trace-summary: a bad data offset is named" \
    || t_fail "trace-summary: a bad data offset is named" "$(cat "$T_TMP/badoff.trace.out")"
bad short.trace "truncated: the file ends 9 bytes into a 14-byte record" && t_ok "trace-summary: a truncated trace says where it ends" \
    || t_fail "trace-summary: a truncated trace says where it ends" "$(cat "$T_TMP/short.trace.out")"
bad not.trace "not a method trace" && t_ok "trace-summary: a file that is no trace says so" \
    || t_fail "trace-summary: a file that is no trace says so" "$(cat "$T_TMP/not.trace.out")"

# 20: threads, JSON (tr.one's last trace: the Ctrl-C one)
t_ddmon --no-autostart trace-summary "$T_TMP/ctrlc.trace" --threads --json >"$T_TMP/thr.json" 2>&1
python3 - "$T_TMP/thr.json" "$T_TMP/s.json" <<'PY' >"$T_TMP/thr.diff" 2>&1 \
    && t_ok "trace-summary --threads --json: the threads and their calls are the simulator's" \
    || t_fail "trace-summary --threads --json: the threads and their calls are the simulator's" "$(cat "$T_TMP/thr.diff" | tail -2)" "$(head -c 300 "$T_TMP/thr.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = (doc.get("result") or doc)["rows"]
vm = [v for v in json.load(open(sys.argv[2]))["vms"] if v["app"] == "tr.one"][0]
got = {r["name"]: r["calls"] for r in rows}
want = vm["profiling"]["last"]["thread_calls"]
assert got == want, (got, want)
PY

# 21: the trace starts again after all that
t_ddmon --no-autostart trace tr.one "$T_TMP/again.trace" --sampling --seconds 1 >"$T_TMP/again.out" 2>&1 \
    && [ -f "$T_TMP/again.trace" ] && t_ok "the VM traces again afterwards" \
    || t_fail "the VM traces again afterwards" "$(cat "$T_TMP/again.out")"

# 23-25: the server dies mid-trace (SIGKILL, as a crash: it cannot stop its
# trace, so the VM keeps sampling); a new one cannot start another, says how
# to stop it, and --stop does, keeping the trace
t_ddmon --no-autostart trace tr.two "$T_TMP/orphan.trace" --sampling --seconds 0 >"$T_TMP/orphan.out" 2>&1 &
orphan=$!
t_wait 10 t_is sampling mode "$T_TMP/s.json" tr.two
old_server=$DDMON_PID
kill -KILL "$old_server"
t_wait 20 t_dead "$old_server"
wait $orphan 2>/dev/null
t_start_server "${server_args[@]}" || t_fail "server started again" "$(tail -5 "$T_TMP/server.err")"
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
t_ddmon --no-autostart trace tr.two "$T_TMP/busy.trace" --sampling --seconds 1 >"$T_TMP/busy.out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "already in progress" "$T_TMP/busy.out" && grep -q "trace [0-9]* --stop'" "$T_TMP/busy.out" \
    && t_ok "a trace left running by a server that went away: the start fails and names 'trace VM --stop'" \
    || t_fail "a trace left running by a server that went away: the start fails and names 'trace VM --stop'" "rc $rc" "$(cat "$T_TMP/busy.out")"
t_ddmon --no-autostart trace tr.two "$T_TMP/stopped.trace" --stop >"$T_TMP/stop.out" 2>&1; rc=$?
t_wait 10 t_is off mode "$T_TMP/s.json" tr.two
t_wait 10 t_is 2 python3 -c 'import json,sys; print([v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]=="tr.two"][0]["profiling"]["traces"])' "$T_TMP/s.json"
[ $rc = 0 ] && [ "$(mode "$T_TMP/s.json" tr.two)" = off ] && [ ! -e "$T_TMP/stopped.trace.part" ] \
    && [ "$(sha "$T_TMP/stopped.trace" 2>/dev/null)" = "$(truth "$T_TMP/s.json" tr.two sha256)" ] \
    && t_ok "trace VM --stop FILE stops it (MPRQ off) and saves the simulator's trace" \
    || t_fail "trace VM --stop FILE stops it (MPRQ off) and saves the simulator's trace" "rc $rc, mode $(mode "$T_TMP/s.json" tr.two)" "$(cat "$T_TMP/stop.out")"
t_ddmon --no-autostart trace tr.two --stop >"$T_TMP/stop2.out" 2>&1; rc=$?
t_ddmon --no-autostart trace tr.two "$T_TMP/after.trace" --sampling --seconds 1 >"$T_TMP/after.out" 2>&1; rc2=$?
[ $rc = 0 ] && grep -q "nothing to stop" "$T_TMP/stop2.out" && [ $rc2 = 0 ] && [ -f "$T_TMP/after.trace" ] \
    && t_ok "... a second --stop finds nothing to stop, and a trace starts again" \
    || t_fail "... a second --stop finds nothing to stop, and a trace starts again" "rc $rc $rc2" "$(cat "$T_TMP/stop2.out" "$T_TMP/after.out")"

# 26: a bad file argument is a file error (exit 1), not "no VM" (3) or usage (2)
mkfifo "$T_TMP/fifo.trace"
t_ddmon --no-autostart trace-summary "$T_TMP/missing.trace" >"$T_TMP/ex1.out" 2>&1; e1=$?
t_ddmon --no-autostart trace-summary "$T_TMP/fifo.trace" >"$T_TMP/ex2.out" 2>&1; e2=$?
t_ddmon --no-autostart trace tr.one "$T_TMP" --tracing --seconds 1 >"$T_TMP/ex3.out" 2>&1; e3=$?
t_ddmon --no-autostart hprof tr.one "$T_TMP" >"$T_TMP/ex4.out" 2>&1; e4=$?
[ "$e1 $e2 $e3 $e4" = "1 1 1 1" ] && t_ok "trace-summary on a missing file or a FIFO, trace and hprof to a directory: exit 1" \
    || t_fail "trace-summary on a missing file or a FIFO, trace and hprof to a directory: exit 1" "exit $e1 $e2 $e3 $e4" \
        "$(cat "$T_TMP"/ex[1-4].out)"

# 27-28: a plain JVM is refused as one, and at once
jvm=$(awk '{print $2}' "$T_TMP/j.ports")
plain_ok=1
plain_cmds=("trace 127.0.0.1:$jvm $T_TMP/j.trace --sampling" "trace 127.0.0.1:$jvm $T_TMP/j.trace --tracing"
    "hprof 127.0.0.1:$jvm" "gc 127.0.0.1:$jvm" "alloc 127.0.0.1:$jvm status" "ui 127.0.0.1:$jvm windows")
t_have_plugins nativeheap && plain_cmds+=("native-heap 127.0.0.1:$jvm")
for c in "${plain_cmds[@]}"; do
    # shellcheck disable=SC2086
    t_ddmon --no-autostart $c >"$T_TMP/plain.out" 2>&1; rc=$?
    if [ $rc != 1 ] || ! grep -q "is a plain JVM, not DDM-aware" "$T_TMP/plain.out" \
        || grep -q "not ready\|no features\|try --tracing" "$T_TMP/plain.out"; then
        plain_ok=0; t_diag "$T_TMP/plain.out"; echo "# ($c: exit $rc)"
    fi
done
[ $plain_ok = 1 ] && t_ok "trace, hprof, gc, alloc, ui and native-heap say a plain JVM is one (exit 1)" \
    || t_fail "trace, hprof, gc, alloc, ui and native-heap say a plain JVM is one (exit 1)"
t_ddmon --no-autostart heap-info "127.0.0.1:$jvm" >"$T_TMP/plain-hi.out" 2>&1
grep -q "plain JVM, not DDM-aware" "$T_TMP/plain-hi.out" && t_ok "... as heap-info says it" \
    || t_fail "... as heap-info says it" "$(cat "$T_TMP/plain-hi.out")"

# 29: a pid several VMs share (each simulator numbers its VMs from the same pid)
pid=$(awk 'NR==1{print $1}' "$T_TMP/s.ports")
t_ddmon --no-autostart heap-info "$pid" >"$T_TMP/amb1.out" 2>&1; e1=$?
t_ddmon --no-autostart heap-bitmap "$pid" "$T_TMP/amb.png" >"$T_TMP/amb2.out" 2>&1; e2=$?
t_ddmon --no-autostart gc "$pid" >"$T_TMP/amb3.out" 2>&1
[ $e1 = 3 ] && [ $e2 = 3 ] && grep -q "'$pid' matches" "$T_TMP/amb1.out" && grep -q "'$pid' matches" "$T_TMP/amb2.out" \
    && t_ok "heap-info and heap-bitmap: an ambiguous pid gets the core's message (exit 3), as gc" \
    || t_fail "heap-info and heap-bitmap: an ambiguous pid gets the core's message (exit 3), as gc" "exit $e1 $e2" \
        "$(cat "$T_TMP/amb1.out" "$T_TMP/amb2.out" "$T_TMP/amb3.out")"

# 30: ddmon-simvm's times span the trace's time; a trace cut to the buffer says overflow
t_ddmon --no-autostart trace tr.two "$T_TMP/cut.trace" --sampling --seconds 2 --buffer 64K --json >"$T_TMP/cut.json" 2>&1; rc=$?
python3 - "$T_TMP/cut.json" <<'PY' >"$T_TMP/cut.diff" 2>&1 && [ $rc = 0 ] \
    && t_ok "a 2 s sampling trace cut to --buffer 64K: overflow, elapsed and every thread within the time traced" \
    || t_fail "a 2 s sampling trace cut to --buffer 64K: overflow, elapsed and every thread within the time traced" "rc $rc" "$(cat "$T_TMP/cut.diff")" "$(head -c 600 "$T_TMP/cut.json")"
import json, sys
f = json.load(open(sys.argv[1]))["result"]["fields"]
assert f["overflow"] in (True, "yes", 1), f["overflow"]
ran_us = f["seconds"] * 1e6   # the command's time: the VM traced no longer
assert f["elapsed_us"] <= ran_us * 1.2, (f["elapsed_us"], ran_us)
assert f["thread_time_us"] <= 3 * f["elapsed_us"], (f["thread_time_us"], f["elapsed_us"])
PY
