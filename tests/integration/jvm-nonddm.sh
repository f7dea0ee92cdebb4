#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real OpenJDK VM with -agentlib:jdwp answers HELO with JDWP error 99: ddmon
# must list it as a non-DDM VM, and keep it (no reconnect loop).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v java >/dev/null && command -v javac >/dev/null || t_skip_all "no OpenJDK (java, javac)"
t_plan 3
t_javac || t_skip_all "javac failed"
port=$(t_free_port)
t_start_jvm "$port" n Sleeper
# The agent prints this line once it listens (do not probe the port: it serves one connection).
t_wait_jvm "$port"
t_ddmon --scan=local --scan-ports "$port" snapshot --wait 2500 --json >"$T_TMP/snap.json" 2>"$T_TMP/snap.err"
rc=$?
[ $rc -eq 0 ] && t_ok "snapshot exits 0" || t_fail "snapshot exits 0" "rc=$rc" "$(tail -5 "$T_TMP/snap.err")"
python3 "$DDM_TOP_SRCDIR/tests/integration/viewq.py" rows "$T_TMP/snap.json" vms >"$T_TMP/vms.rows"
grep -q "\"key\": \"127.0.0.1:$port\"" "$T_TMP/vms.rows" && t_ok "the JVM is listed" \
    || t_fail "the JVM is listed" "$(cat "$T_TMP/vms.rows")" "$(tail -5 "$T_TMP/snap.err")"
grep "\"key\": \"127.0.0.1:$port\"" "$T_TMP/vms.rows" | grep '"ddm": false' | grep -q '"state": "plain"' \
    && t_ok "the JVM is non-DDM (plain)" || t_fail "the JVM is non-DDM (plain)" "$(cat "$T_TMP/vms.rows")"
exit 0
