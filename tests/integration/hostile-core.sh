#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile peers for the core's limits of issue 15 (faults 3, 5 and 6), each
# beside a good ddmon-simvm VM (tests/integration/hostile-lib.sh says what
# every case checks):
#  - a packet that claims 200 MiB and sends 8 MiB, then nothing (fault 5:
#    the buffer grows with the bytes that arrive, never to the claim; the
#    budget across peers is peer-limits.sh's case);
#  - a rename flood: 300 APNM renames with 512 Ki-character names (fault 3:
#    the relay's port maps kept every name);
#  - silent peers, before and after the handshake (a scanned port that never
#    echoes the handshake is no VM: dropped after the handshake timeout at
#    info level, so no warning is expected within the attack);
#  - a VM that breaks the protocol on every connection is retried with
#    backoff (fault 6): at most 4 connections in the attack's 4 s.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
. "$DDM_TOP_SRCDIR/tests/integration/hostile-lib.sh"
t_have_plugins vminfo threads || t_skip_all "a standard plugin was configured out"
t_plan 17
h_start_good || t_fail "the good VM starts" "$(cat "$T_TMP/simvm.err")"

h_case big-claim 100 - greet header 200M 8M silent 30000
h_case rename-flood 100 - greet apnm-flood 300 512K hold
h_case silent-before-handshake 100 - silent 30000
h_case silent-after-handshake 100 - greet silent 30000
h_case bad-every-time 100 "declared length 4294967295" greet header 0xFFFFFFFF hold
conns=$(grep -c '^conn [0-9]* step 1 ' "$T_TMP/case/evil.out")
if [ "$conns" -le 4 ]; then
    t_ok "bad-every-time: reconnects back off ($conns connections)"
else
    t_fail "bad-every-time: reconnects back off" "$conns connections in ${H_ATTACK_S} s"
fi
