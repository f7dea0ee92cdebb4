#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The hostile VM's `feat N` generator (tests/tools/evilvm), which
# hostile-wire.sh's feat-huge case relies on: a FEAT reply whose u4 count
# is N and whose payload is 4 + 4N bytes, read by a plain JDWP client; an N
# whose reply cannot be one JDWP packet (above 1,073,741,818, 2^32 among
# them, whose count a u4 cut to 0) is refused with a message naming it and
# the limit, not sent with a wrong count.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
EVILVM="$DDM_TOP_BUILDDIR/tests/tools/evilvm"
t_plan 4

# run_evil NAME STEP...: evilvm --once playing STEP..., its port in $port.
run_evil() {
    local name=$1
    shift
    rm -f "$T_TMP/$name.port"
    "$EVILVM" --once --port-file "$T_TMP/$name.port" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    evil_pid=$!
    T_PIDS+=("$evil_pid")
    t_wait 10 test -s "$T_TMP/$name.port" || return 1
    port=$(awk '{print $2}' "$T_TMP/$name.port")
}

# A JDWP client: handshake, then the first packet; prints its length, the
# chunk type, the chunk length and the FEAT count.
read_feat() {
    python3 - "$1" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"JDWP-Handshake")
def read(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit("closed after %d of %d bytes" % (len(b), n))
        b += c
    return b
assert read(14) == b"JDWP-Handshake"
length, = struct.unpack(">I", read(4))
body = read(length - 4)
ctype, clen, count = struct.unpack(">4sII", body[7:19])
print(length, ctype.decode(), clen, count)
PY
}

run_evil small handshake send FEAT feat 3 || t_fail "evilvm starts" "$(cat "$T_TMP/small.err")"
got=$(read_feat "$port" 2>&1)
if [ "$got" = "35 FEAT 16 3" ]; then
    t_ok "feat 3: one packet of 35 bytes, FEAT of 16 bytes, count 3"
else
    t_fail "feat 3: one packet of 35 bytes, FEAT of 16 bytes, count 3" "got: $got"
fi
wait "$evil_pid"
rc=$?
if [ $rc = 0 ]; then
    t_ok "evilvm --once exits 0 after its script"
else
    t_fail "evilvm --once exits 0 after its script" "status $rc" "$(cat "$T_TMP/small.err")"
fi

# refused_case N: evilvm told to send `feat N` exits 1 with the message.
refused_case() {
    local n=$1 rc
    run_evil "big$n" handshake send FEAT feat "$n" || { t_fail "evilvm starts" "$(cat "$T_TMP/big$n.err")"; return; }
    read_feat "$port" >"$T_TMP/big$n.client" 2>&1
    wait "$evil_pid"
    rc=$?
    if [ $rc = 1 ] && grep -q "feat $n: at most 1073741818 names" "$T_TMP/big$n.err"; then
        t_ok "feat $n: refused (status 1), naming N and the limit"
    else
        t_fail "feat $n: refused (status 1), naming N and the limit" "status $rc" \
            "stderr: $(cat "$T_TMP/big$n.err")" "client: $(cat "$T_TMP/big$n.client")"
    fi
}
refused_case 4294967296 # 2^32: the count a u4 cut to 0
refused_case 1073741819 # one past the largest that fits one packet
