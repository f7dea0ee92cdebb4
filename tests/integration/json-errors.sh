#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# With --json every failing client command prints exactly one object
# {"ok":false,"error":MESSAGE,"code":STATUS,"kind":KIND} on stdout, the
# human message on stderr, and exits with STATUS: no server (--no-autostart,
# and a server that cannot start), usage errors (option parser, missing and
# extra arguments, --json anywhere), errors the server relays (unknown view,
# unknown VM, bad scan mode, unknown command), plugin command failures,
# watch and snapshot. Without --json stdout stays empty, and successful
# --json output is unchanged.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 23

sock="$T_TMP/ddmon.sock"
nosrv="$T_TMP/nosrv/ddmon.sock" # a private directory where no server runs
mkdir -m 700 "$T_TMP/nosrv"

# run NAME ARGS...: ddmon ARGS with stdout, stderr and status kept under NAME.
run() {
    local name=$1; shift
    timeout 30 "$DDMON" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    echo $? >"$T_TMP/$name.rc"
}

# failure NAME CODE KIND [ERROR-SUBSTRING]: the run NAME exited CODE, printed
# one JSON object (one line) with ok false, code CODE, kind KIND and a
# non-empty error (containing ERROR-SUBSTRING), and said so on stderr.
failure() {
    python3 - "$T_TMP/$1" "$2" "$3" "${4:-}" <<'PY'
import json, sys
base, code, kind, part = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rc = int(open(base + ".rc").read())
out = open(base + ".out").read()
err = open(base + ".err").read()
lines = out.splitlines()
assert rc == code, "exit status %d, want %d" % (rc, code)
assert len(lines) == 1, "want one line on stdout, got %d" % len(lines)
doc = json.loads(lines[0])
assert isinstance(doc, dict), "not an object"
assert doc["ok"] is False, doc
assert doc["schema"] == 1, doc
assert doc["code"] == code, doc
assert doc["kind"] == kind, doc
assert isinstance(doc["error"], str) and doc["error"], doc
assert part in doc["error"], doc
assert "(try 'ddmon help')" not in doc["error"], doc
first = doc["error"].splitlines()[0]
assert ("ddmon: " + first) in err, "stderr lacks the message: %r" % err
PY
}

# check NAME CODE KIND [ERROR-SUBSTRING]: failure as a TAP line.
check() {
    local name=$1 code=$2 kind=$3 part=${4:-} why
    if why=$(failure "$@" 2>&1); then
        t_ok "$name: exit $code, kind $kind"
    else
        t_fail "$name: exit $code, kind $kind" "$why" "stdout: $(head -c 300 "$T_TMP/$name.out")" \
            "stderr: $(head -c 300 "$T_TMP/$name.err")"
    fi
}

# --- no server, client-side failures (no server is started here)
run nosrv-vms --socket "$nosrv" --no-autostart vms --json
check nosrv-vms 4 no-server "no ddmon server running"
run nosrv-watch --socket "$nosrv" --no-autostart watch --json
check nosrv-watch 4 no-server "no ddmon server running"
run nosrv-plugincmd --socket "$nosrv" --no-autostart --json gc 1234
check nosrv-plugincmd 4 no-server
run nosrv-text --socket "$nosrv" --no-autostart vms
[ "$(cat "$T_TMP/nosrv-text.rc")" = 4 ] && [ ! -s "$T_TMP/nosrv-text.out" ] \
    && grep -q "^ddmon: no ddmon server running" "$T_TMP/nosrv-text.err" \
    && t_ok "without --json: exit 4, the message on stderr, nothing on stdout" \
    || t_fail "without --json: exit 4, the message on stderr, nothing on stdout" \
        "$(cat "$T_TMP/nosrv-text.rc" "$T_TMP/nosrv-text.out")"

# A server that cannot start (a required plugin is missing): exit 4 too.
run autostart --socket "$T_TMP/as/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --scan=none --plugins=no-such-plugin vms --json
check autostart 4 no-server "cannot start a server"

# --- usage errors, --json before or after the mistake
run usage-missing --socket "$nosrv" --no-autostart view --json
check usage-missing 2 usage "usage: ddmon view"
run usage-extra --socket "$nosrv" --no-autostart --json vms extra
check usage-extra 2 usage "takes no arguments"
run usage-optvalue --socket "$nosrv" --json --scan-interval=5 vms
check usage-optvalue 2 usage "--scan-interval"
# the option parser itself fails, with --json before and after the mistake
run usage-parser-before --socket "$nosrv" --json --wait=abc snapshot
check usage-parser-before 2 usage "--wait"
run usage-parser-after --socket "$nosrv" --wait=abc snapshot --json
check usage-parser-after 2 usage "--wait"
run usage-option --socket "$nosrv" --no-autostart vms --frobnicate --json
check usage-option 2 usage "unknown option --frobnicate"

# --- snapshot (in process, no server): an output directory that cannot exist
touch "$T_TMP/a-file"
run snap-outdir --socket "$nosrv" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    snapshot --wait 0 --json --out-dir "$T_TMP/a-file/sub"
check snap-outdir 1 failed "cannot create"

# --- errors the server relays, and plugin commands
t_start_server --scan=none || t_fail "server" "$(cat "$T_TMP/server.err")"
run ok-vms --socket "$sock" --no-autostart vms --json
python3 - "$T_TMP/ok-vms.out" <<'PY' && [ "$(cat "$T_TMP/ok-vms.rc")" = 0 ] \
    && t_ok "success unchanged: vms --json is the bare view, no ok member" \
    || t_fail "success unchanged: vms --json is the bare view, no ok member" "$(head -c 300 "$T_TMP/ok-vms.out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1
doc = json.loads(lines[0])
assert doc["name"] == "vms" and "rows" in doc and "ok" not in doc and doc["kind"] == "table"
assert doc["schema"] == 1
PY
run view-unknown --socket "$sock" --no-autostart view no-such-view --json
check view-unknown 3 not-found "no-such-view"
run vm-unknown --socket "$sock" --no-autostart views --vm no-such-vm --json
check vm-unknown 3 not-found "no-such-vm"
run scan-bad --socket "$sock" --no-autostart scan bogus --json
check scan-bad 2 usage "bogus"
run cmd-unknown --socket "$sock" --no-autostart --json no-such-command 1
check cmd-unknown 2 usage "no-such-command"
if t_have_plugins vminfo; then
    run cmd-notfound --socket "$sock" --no-autostart gc 99999 --json
    check cmd-notfound 3 not-found "99999"
    run cmd-usage --socket "$sock" --no-autostart gc --json
    check cmd-usage 2 usage "gc"
    python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert sorted(d) == ["code", "error", "kind", "ok", "schema"], d' \
        "$T_TMP/cmd-notfound.out" && t_ok "a plugin command's failure is the same object as any failure (no status, message, result)" \
        || t_fail "a plugin command's failure is the same object as any failure (no status, message, result)" "$(cat "$T_TMP/cmd-notfound.out")"
else
    for d in "cmd-notfound" "cmd-usage" "plugin command members"; do t_ok "$d # SKIP vminfo plugin not built"; done
fi

# --- watch --json: events, then the server goes away: the last line is the failure
timeout 30 "$DDMON" --socket "$sock" --no-autostart watch --json >"$T_TMP/watch.out" 2>"$T_TMP/watch.err" &
watch_pid=$!
T_PIDS+=("$watch_pid")
t_wait 10 grep -q '"event"' "$T_TMP/watch.out"
kill "$DDMON_PID"
wait "$watch_pid"; echo $? >"$T_TMP/watch.rc"
python3 - "$T_TMP/watch" <<'PY' && t_ok "watch --json: events, then one failure object last, exit 1" \
    || t_fail "watch --json: events, then one failure object last, exit 1" "rc=$(cat "$T_TMP/watch.rc")" \
        "$(tail -c 300 "$T_TMP/watch.out")" "$(cat "$T_TMP/watch.err")"
import json, sys
rc = int(open(sys.argv[1] + ".rc").read())
docs = [json.loads(l) for l in open(sys.argv[1] + ".out").read().splitlines()]
assert rc == 1, rc
assert len(docs) >= 2 and all("event" in d for d in docs[:-1]), docs[:2]
last = docs[-1]
assert all(d["schema"] == 1 for d in docs), docs[:2]
assert last["ok"] is False and last["code"] == 1 and last["kind"] == "failed", last
assert "went away" in last["error"], last
PY

# --- snapshot --json whose blob cannot be written: still one object, the
# snapshot's, with the failure members (needs simvm's heap and the heap
# plugin; --gc, so the heap bitmap is there when the snapshot settles)
if t_have_plugins heap && [ -x "$SIMVM" ]; then
    port=$(t_free_port) || t_skip_all "no free port"
    t_start_simvm --vms 1 --base-port "$port" --port-file "$T_TMP/ports" --gc-every 300
    t_wait 10 test -s "$T_TMP/ports"
    port=$(awk '{print $2; exit}' "$T_TMP/ports")
    # a directory where the heap bitmap's file would go
    mkdir -p "$T_TMP/out/127.0.0.1_$port-heap.bitmap.png"
    run snap-blob --socket "$T_TMP/snap/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
        --scan=local --scan-ports "$port" snapshot --gc --wait 2500 --json --out-dir "$T_TMP/out"
    check snap-blob 1 failed "heap.bitmap.png"
    python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); assert d["global"]["vms"]["name"] == "vms" and d["vms"]' \
        "$T_TMP/snap-blob.out" && t_ok "... and that object is the snapshot (vms, views)" \
        || t_fail "... and that object is the snapshot (vms, views)" "$(head -c 300 "$T_TMP/snap-blob.out")"
else
    t_ok "snap-blob # SKIP no heap plugin or simvm"
    t_ok "snapshot object # SKIP no heap plugin or simvm"
fi
exit 0
