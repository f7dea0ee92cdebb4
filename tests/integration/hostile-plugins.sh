#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile peers against the plugins' decoders (issue 15), each beside a good
# ddmon-simvm VM (tests/integration/hostile-lib.sh says what every case checks):
#  - a valid THST of 65,535 threads in descending id order, three times
#    (fault 1: O(n^2) inserts stalled the loop for seconds);
#  - an unsolicited valid 60 MiB NHGT inside a small ZLIB chunk, three times
#    (fault 2: ~600 MB and a 4 s stall; now ignored, logged naming the VM);
#  - a 32 MiB NHGT that was asked for, with 100,000 distinct keys;
#  - inconsistent counts in every decoder: each chunk type the plugins
#    decode, with every count and length at its maximum (0xFF bytes), then
#    a table whose count claims more entries than it has; and as replies to
#    commands (STKL, NHGT), after a VirtualMachine.Version reply whose
#    string claims 4 GiB.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
. "$DDM_TOP_SRCDIR/tests/integration/hostile-lib.sh"
t_have_plugins vminfo threads heap nativeheap alloc || t_skip_all "a standard plugin was configured out"
t_plan 20
h_start_good || t_fail "the good VM starts" "$(cat "$T_TMP/simvm.err")"

h_case thst-65535 100 - greet serve 500 \
    send THST thst 65535 desc serve 1000 send THST thst 65535 desc serve 1000 \
    send THST thst 65535 desc hold

# (the core inflates the 15 MiB, under its 16 MiB ZLIB cap, before a plugin
# sees it: the bound allows that; a bigger one is refused by the core itself)
h_case nhgt-unsolicited 120 "NHGT .*did not ask for" greet serve 500 \
    zsend NHGT nhgt 15M serve 500 zsend NHGT nhgt 15M serve 500 zsend NHGT nhgt 15M hold

# An NHGT that was asked for (`ddmon native-heap`): 32 MiB of 699,049
# records of 100,000 distinct sizes and backtraces, grouped in bounded tables.
H_DURING='$H_DDMON native-heap 4242 >"$DDM_IT_TMP/case/native-heap.out" 2>&1' \
    h_case nhgt-asked 120 - greet reply NHGT nhgt 32M 100000 hold
if grep -q "699049 records" "$T_TMP/case/native-heap.out"; then
    t_ok "nhgt-asked: the native-heap command got the whole table"
else
    t_fail "nhgt-asked: the native-heap command got the whole table" "$(cat "$T_TMP/case/native-heap.out")"
fi

steps=(greet serve 300)
for t in THST THCR THNM THDE STKL HPIF HPSG HPSO HPST HPEN NHSG NHST NHEN NHGT REAL REAQ REAE \
    APNM WAIT STAG EXIT HPDU VULW; do
    steps+=(send "$t" ff 64 send "$t" ff 3 zsend "$t" ff 4096)
done
# Replies with inconsistent counts to what a command asked (STKL, NHGT),
# from a VM whose VirtualMachine.Version reply claims a 4 GiB string (the
# session's probe then tries HELO, as for any unreadable Version reply).
H_DURING='for i in 1 2 3; do $H_DDMON stack 4242 1; $H_DDMON native-heap 4242; sleep 0.5; done' \
    h_case decoder-replies 100 "STKL reply .*rejected: frame count 4294967295" \
    reply version version-bad greet reply STKL ff 64 reply NHGT ff 64 hold
if grep -q "malformed STKL reply" "$T_TMP/case/during.out" &&
    grep -q "bad NHGT reply: backtrace size 4294967295" "$T_TMP/case/during.out"; then
    t_ok "decoder-replies: the commands fail saying what was wrong"
else
    t_fail "decoder-replies: the commands fail saying what was wrong" "$(head -5 "$T_TMP/case/during.out")"
fi

# a real THST header whose count (0x0100) claims more entries than follow
steps+=(send THST hex 04120100000000010100000001000000020000000300 hold)
h_case decoders 100 "THST .*rejected" "${steps[@]}"
