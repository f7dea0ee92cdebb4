#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile peers against the core's wire handling (issue 15), each beside a
# good ddmon-simvm VM (tests/integration/hostile-lib.sh says what every case
# checks): JDWP lengths 0xFFFFFFFF and 5 (below the 11-byte header), a HELO
# reply claiming 2^31 - 1 UTF-16 units for its strings, a FEAT reply of
# 4,000,000 names, a chunk that runs
# past its packet, ZLIB bombs (a declared inner size of 4 GiB - 1, and a
# stream that inflates to 64 MiB while declaring 16 bytes), a close in the
# middle of a packet, a flood of 200,000 small packets, and peers that go
# silent before and after the handshake.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
. "$DDM_TOP_SRCDIR/tests/integration/hostile-lib.sh"
t_have_plugins vminfo threads || t_skip_all "a standard plugin was configured out"
t_plan 43
h_start_good || t_fail "the good VM starts" "$(cat "$T_TMP/simvm.err")"

h_case len-ffffffff 100 "declared length 4294967295" greet header 0xFFFFFFFF hold
h_case len-short 100 "declared length 5 is below 11" greet header 5 hold
h_case helo-huge 100 "malformed HELO" helo-huge greet hold
# a FEAT of 4,000,000 empty names (16 MB): 256 kept, the rest only walked
h_case feat-huge 100 "FEAT of 4000000 names" reply FEAT feat 4000000 greet hold
h_case chunk-overrun 100 "chunk runs past the packet" greet overrun serve 500 overrun hold
h_case zlib-size 100 "ZLIB.*(cap|size)" greet zbomb-size serve 500 zbomb-size hold
# (the core stops inflating where the stream passes its declared size)
h_case zlib-lie 100 "ZLIB.*(cap|size)" greet zbomb-lie 64M serve 500 zbomb-lie 64M hold
h_case close-mid-packet 100 "closed" greet serve 300 half
h_case flood 100 "chunk EVIL" greet flood 200000 hold
# silent peers: one that never echoes the handshake (5 s timeout; named with
# --connect, as a port the scan finds silent is no VM), one that goes quiet
# once it is ready (nothing to log: it owes no answer)
H_CONNECT=1 H_ATTACK_S=7 h_case silent-before-handshake 100 "no handshake echo" silent 60000
h_case silent-after-handshake 100 - greet silent 60000
