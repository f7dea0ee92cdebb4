#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fresh server answers its first `vms` at most STARTUP_MAX_MS (3 s) after
# its start, as ddmon(1) says, even when a port accepts and never speaks:
# the VM list's wait ends at that bound, and the headline figures' first
# look after it ends there too (it added up to 1.2 s, DDM_FIRST_LOOK_MS).
# No clock is read: the server's debug log says which bound ended the wait
# (before, the look ended on its own 1.2 s later: 4.2 s in all).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads || t_skip_all "the threads plugin (a headline figure) was configured out"
t_plan 2

# As a user's default scan: a range (41 ports, as 8000-8040), one port mute.
base=$(t_free_ports 41) || t_skip_all "no free ports"
port=$((base + 5))
python3 - "$port" >"$T_TMP/mute.out" 2>&1 <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(5)
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # accepts, never speaks
PY
T_PIDS+=("$!")
t_wait 5 t_port_in_use "$port" || t_fail "the mute port listens" "$(cat "$T_TMP/mute.out")"

G_MESSAGES_DEBUG=all t_ddmon --scan=local --scan-ports "$base-$((base + 40))" --selected-port 0 \
    --debug-port-base "$(t_free_port)" vms >"$T_TMP/vms.out" 2>"$T_TMP/vms.err"; rc=$?
[ $rc = 0 ] && t_ok "the first vms on a fresh server answers" \
    || t_fail "the first vms on a fresh server answers" "rc=$rc" "$(cat "$T_TMP/vms.err")"
log="$T_TMP/ddmon.log"
# The mute port keeps the VM list's wait to its 3 s; the headline look
# that follows would wait up to 1.2 s more: it is cut at the bound.
grep -q "went out at the startup bound (3000 ms after the start)" "$log" \
    && t_ok "the headline figures' first look ends at the startup bound too" \
    || t_fail "the headline figures' first look ends at the startup bound too" "$(grep "control" "$log")"
t_ddmon kill-server >/dev/null 2>&1
exit 0
