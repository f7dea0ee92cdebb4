#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon watch` without VMs: on a terminal (util-linux `script` gives it a
# pty) it draws on the alternate screen and restores the terminal on
# Ctrl-C (SIGINT); on a pipe it prints the table; with --json it prints
# one JSON object per line; on a terminal too short for every VM it says how
# many are not shown.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v script >/dev/null || t_skip_all "no script(1) (util-linux)"
t_plan 8
sock="$T_TMP/ddmon.sock"
t_start_server --scan=none || t_fail "server" "$(cat "$T_TMP/server.err")"

script -qec "stty cols 120 rows 30; timeout --preserve-status -s INT 3 '$DDMON' --socket '$sock' --no-autostart watch --plain" \
    /dev/null >"$T_TMP/tty.out" 2>&1
rc=$?
[ $rc -eq 0 ] && t_ok "watch on a terminal exits 0 on SIGINT" || t_fail "watch on a terminal exits 0 on SIGINT" "rc=$rc"
grep -q $'\e\[?1049h' "$T_TMP/tty.out" && t_ok "it uses the alternate screen" \
    || t_fail "it uses the alternate screen" "$(head -c 200 "$T_TMP/tty.out" | od -c | head -5)"
tail -c 40 "$T_TMP/tty.out" | grep -q $'\e\[?25h\e\[?1049l' && t_ok "the terminal is restored at the end" \
    || t_fail "the terminal is restored at the end" "$(tail -c 80 "$T_TMP/tty.out" | od -c | tail -4)"
grep -q "0 VMs" "$T_TMP/tty.out" && grep -q "no VMs found yet" "$T_TMP/tty.out" && t_ok "it shows the (empty) VM list" \
    || t_fail "it shows the (empty) VM list" "$(head -c 300 "$T_TMP/tty.out")"

timeout 2 "$DDMON" --socket "$sock" --no-autostart watch >"$T_TMP/pipe.out" 2>/dev/null
head -1 "$T_TMP/pipe.out" | grep -q "^ddmon .* 0 VMs" && sed -n 2p "$T_TMP/pipe.out" | grep -q "^KEY" \
    && ! grep -q $'\e' "$T_TMP/pipe.out" && t_ok "on a pipe: plain tables, no escape sequences" \
    || t_fail "on a pipe: plain tables, no escape sequences" "$(head -5 "$T_TMP/pipe.out")"

timeout 2 "$DDMON" --socket "$sock" --no-autostart watch --json >"$T_TMP/json.out" 2>/dev/null
python3 - "$T_TMP/json.out" <<'PY' && t_ok "--json: one event object per line" || t_fail "--json: one event object per line" "$(head -c 300 "$T_TMP/json.out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines
names = set()
for l in lines:
    e = json.loads(l)
    assert e["event"] in ("added", "changed", "removed")
    names.add(e["view"]["name"])
assert {"vms", "plugins"} <= names
PY
"$DDMON" --socket "$sock" --no-autostart kill-server >/dev/null 2>&1
t_wait 10 t_dead "$DDMON_PID"

# Eight simulated VMs on a terminal of 8 rows: the header, a blank line, the
# column titles, then room for 3 VMs and the "not shown" line.
base=$(t_free_ports 8) || t_skip_all "no free ports"
t_start_simvm --vms 8 --base-port "$base" --port-file "$T_TMP/ports"
t_wait 10 test -s "$T_TMP/ports"
rm -f "$sock"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base "$(t_free_port)" || t_fail "server" "$(cat "$T_TMP/server.err")"
named() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" = 8 ]; }
t_wait 15 named && t_ok "eight VMs are ready" || t_fail "eight VMs are ready" "$(cat "$T_TMP/vms.txt")"
script -qec "stty cols 120 rows 8; timeout --preserve-status -s INT 3 '$DDMON' --socket '$sock' --no-autostart watch --plain" \
    /dev/null >"$T_TMP/short.out" 2>&1
grep -q "8 VMs" "$T_TMP/short.out" && grep -q "\.\.\. 5 more not shown" "$T_TMP/short.out" \
    && t_ok "a short terminal: 3 VMs shown and '... 5 more not shown'" \
    || t_fail "a short terminal: 3 VMs shown and '... 5 more not shown'" "$(tr -d '\033' <"$T_TMP/short.out" | tail -c 600)"
exit 0
