#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The viewdebug plugin against misbehaving VMs (ddmon-simvm --view-fault),
# through the real binaries: a dump with broken indentation or without its
# DONE. line, a VULW whose count is far larger than its bytes, a capture
# that is no PNG, and a VM that never answers each get a clear error and a
# non-zero exit, in bounded time, with no file or .part left behind; the
# server and the VMs stay up and usable.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins viewdebug || t_skip_all "the viewdebug plugin was configured out"
t_plan 7
chmod 700 "$T_TMP"
mkdir -p "$T_TMP/out"

faults="indent no-done huge-vulw not-png silent"
for f in $faults; do
    t_start_simvm --vms 1 --app "ui.$f" --base-port 0 --port-file "$T_TMP/$f.ports" \
        --state-file "$T_TMP/$f.json" --gc-every 0 --thread-activity 0 --view-fault "$f"
done
for f in $faults; do t_wait 10 test -s "$T_TMP/$f.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0 \
    --request-timeout 1500 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 5 ]; }
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
ui() { timeout 30 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart ui "$@"; }
# expect DESC RC PATTERN CMD...: the command exits RC and says PATTERN
expect() {
    local desc=$1 want=$2 pat=$3; shift 3
    "$@" >"$T_TMP/e.out" 2>&1; local rc=$?
    if [ $rc = "$want" ] && grep -q -- "$pat" "$T_TMP/e.out"; then
        t_ok "$desc"
    else
        t_fail "$desc" "rc=$rc (want $want) $(cat "$T_TMP/e.out")"
    fi
}

expect "a dump with broken indentation: the line and the jump, exit 1" 1 \
    "the view dump (VURT) cannot be read: line 2: indentation jumps from 0 to 4 spaces" \
    ui ui.indent dump MainActivity --properties
expect "a dump without DONE.: said to be truncated, exit 1" 1 \
    "the dump has no DONE. line after 48 lines: truncated" \
    ui ui.no-done dump 0
expect "a VULW claiming 4294967295 windows: refused from the bytes present, exit 1" 1 \
    "VULW says 4294967295 windows but carries only" \
    ui ui.huge-vulw windows

win=$(ui ui.not-png windows --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["rows"][0]["window"])')
expect "a capture that is no PNG: refused, exit 1" 1 "is not an image: no PNG signature" \
    ui ui.not-png capture "$win" ui.not-png:id/fab "$T_TMP/out/gif.png"
[ ! -e "$T_TMP/out/gif.png" ] && [ ! -e "$T_TMP/out/gif.png.part" ] \
    && t_ok "... and leaves neither the file nor its .part" \
    || t_fail "... and leaves neither the file nor its .part" "$(ls -la "$T_TMP/out")"

start=$(date +%s%N)
ui ui.silent capture MainActivity x.y@1 "$T_TMP/out/never.png" >"$T_TMP/silent.out" 2>&1; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc = 1 ] && grep -q "no reply from the VM in time (timeout)" "$T_TMP/silent.out" && [ $ms -lt 10000 ] \
    && [ ! -e "$T_TMP/out/never.png.part" ] && [ ! -e "$T_TMP/out/never.png" ]; then
    t_ok "a VM that never answers: a timeout after ${ms} ms (--request-timeout 1500), no .part"
else
    t_fail "a VM that never answers: a timeout, no .part" "rc=$rc after $ms ms: $(cat "$T_TMP/silent.out")" \
        "$(ls -la "$T_TMP/out")"
fi

# everything is still up: the server answers and every VM is ready
ready && [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vms"][0]["views"]["unanswered"])' "$T_TMP/silent.json")" = 1 ] \
    && t_ok "the server and all five VMs are still ready afterwards" \
    || t_fail "the server and all five VMs are still ready afterwards" "$(cat "$T_TMP/vms.txt")"
