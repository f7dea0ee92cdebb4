#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon-simvm's heap dumps: --write-hprof (exact sizes, sha256 as sha256sum
# computes it, the same bytes for the same seed, accepted by Debian's
# hprof-conv when installed); HPDS streamed as an event before its empty
# reply and checked against the ground truth, two HPDS serialized; HPDU
# under --hprof=device with --device-dir; FEAT and FAIL per --hprof mode;
# the --hprof-fault misbehaviours. The client is tests/integration/hprof_client.py.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
CLIENT="$DDM_TOP_SRCDIR/tests/integration/hprof_client.py"
t_plan 20

HPROF_CONV=$(command -v hprof-conv || echo /usr/lib/android-sdk/platform-tools/hprof-conv)
[ -x "$HPROF_CONV" ] || HPROF_CONV=
t_skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP $2"; }

start() { # start NAME ARGS...: a simvm with its own port and state files; sets PORT
    local name=$1; shift
    "$SIMVM" --base-port 0 --port-file "$T_TMP/$name.ports" --state-file "$T_TMP/$name.json" \
        --thread-activity 0 "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    T_PIDS+=("$!")
    t_wait 10 test -s "$T_TMP/$name.ports" || return 1
    PORT=$(head -1 "$T_TMP/$name.ports" | cut -d' ' -f2)
}
client() { timeout 60 python3 "$CLIENT" "$PORT" "$@"; }
val() { sed -n "s/^$2=//p" "$T_TMP/$1" | head -1; }
# truth NAME EXPR: a Python expression on the first VM's "hprof" object (h)
truth() { python3 -c "import json,sys; h=json.load(open(sys.argv[1]))['vms'][0]['hprof']; print($2)" \
    "$T_TMP/$1.json" 2>/dev/null; }
truth_is() { [ "$(truth "$1" "$2")" = "$3" ]; }
check() { # check DESC FILE PATTERN...: every pattern is a line of FILE
    local desc=$1 f=$2 p; shift 2
    for p in "$@"; do
        grep -qx -- "$p" "$T_TMP/$f" || { t_fail "$desc" "missing: $p" "$(sed 's/^/  /' "$T_TMP/$f")"; return; }
    done
    t_ok "$desc"
}

# --- --write-hprof: exact size, sha256, hprof-conv ---
SIZES=(4096 1048589 12582917)
conv_ok=1
for size in "${SIZES[@]}"; do
    f="$T_TMP/w$size.hprof"
    out=$("$SIMVM" --write-hprof "$f" --hprof-size "$size" --seed 9 2>&1)
    if [ "$(stat -c %s "$f" 2>/dev/null)" = "$size" ] && [ "$out" = "$(sha256sum "$f")" ]; then
        t_ok "--write-hprof $size: exact size, sha256 as sha256sum"
    else
        t_fail "--write-hprof $size: exact size, sha256 as sha256sum" "$out" "$(sha256sum "$f")"
    fi
    if [ -n "$HPROF_CONV" ]; then
        "$HPROF_CONV" "$f" "$f.conv" >"$T_TMP/conv.err" 2>&1 && [ -s "$f.conv" ] ||
            { conv_ok=0; t_diag "$T_TMP/conv.err"; }
    fi
done
if [ -z "$HPROF_CONV" ]; then
    t_skip "hprof-conv accepts the dumps" "hprof-conv not installed"
elif [ $conv_ok = 1 ]; then
    t_ok "hprof-conv accepts the dumps (${SIZES[*]} bytes)"
else
    t_fail "hprof-conv accepts the dumps"
fi
a=$("$SIMVM" --write-hprof "$T_TMP/a.hprof" --hprof-size 100000 --seed 4 | cut -d' ' -f1)
b=$("$SIMVM" --write-hprof "$T_TMP/b.hprof" --hprof-size 100000 --seed 4 | cut -d' ' -f1)
c=$("$SIMVM" --write-hprof "$T_TMP/c.hprof" --hprof-size 100000 --seed 5 | cut -d' ' -f1)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ] && t_ok "the same seed gives the same dump, another seed another" ||
    t_fail "the same seed gives the same dump, another seed another" "$a $b $c"

# --- --hprof=stream (the default): HPDS streamed, then its empty reply ---
SIZE=3145735
start stream --hprof-size "$SIZE" || t_fail "stream simvm starts"
client feat >"$T_TMP/stream.feat" 2>&1
check "stream: FEAT lists both heap-dump features" stream.feat \
    'feature=hprof-heap-dump' 'feature=hprof-heap-dump-streaming'
client hpds >"$T_TMP/hpds.out" 2>&1
check "HPDS: one HPDS event of the whole dump, then the empty reply" hpds.out \
    'order=eventHPDS,reply1' "event.0.declared=$SIZE" "event.0.chunk_len=$SIZE" "event.0.bytes=$SIZE" \
    'reply.1=empty'
sha=$(val hpds.out event.0.sha256)
if t_wait 5 truth_is stream "h['dumps']" 1 && truth_is stream "h['last']['via']" hpds &&
    truth_is stream "h['last']['bytes']" "$SIZE" && truth_is stream "h['last']['sha256']" "$sha" &&
    truth_is stream "h['last']['path']" None; then
    t_ok "the ground truth has the bytes and sha256 the client received"
else
    t_fail "the ground truth has the bytes and sha256 the client received" "client: $sha" \
        "truth: $(truth stream h)"
fi
client hpds 2 >"$T_TMP/hpds2.out" 2>&1
sha2=$(val hpds2.out event.1.sha256)
check "two HPDS at once: the second waits for the first (event, reply, event, reply)" hpds2.out \
    'order=eventHPDS,reply1,eventHPDS,reply2' "event.1.bytes=$SIZE" 'reply.2=empty'
t_wait 5 truth_is stream "h['dumps']" 3 && truth_is stream "h['last']['sha256']" "$sha2" &&
    t_ok "both counted; the last is the second's" || t_fail "both counted; the last is the second's" "$(truth stream h)"

# --- --hprof=device: no streaming; HPDU writes the file on the "device" ---
mkdir -p "$T_TMP/device"
start device --hprof=device --device-dir "$T_TMP/device" --hprof-size 200003 || t_fail "device simvm starts"
client feat >"$T_TMP/device.feat" 2>&1
if grep -qx 'feature=hprof-heap-dump' "$T_TMP/device.feat" &&
    ! grep -q 'feature=hprof-heap-dump-streaming' "$T_TMP/device.feat"; then
    t_ok "device: FEAT lists hprof-heap-dump, not streaming"
else
    t_fail "device: FEAT lists hprof-heap-dump, not streaming" "$(cat "$T_TMP/device.feat")"
fi
client hpds >"$T_TMP/device.hpds" 2>&1
check "device: HPDS gets FAIL and no event" device.hpds 'reply.1=FAIL:1:HPDS not supported' 'order=reply1'
client hpdu /data/local/tmp/dump.hprof >"$T_TMP/device.hpdu" 2>&1
f="$T_TMP/device/dump.hprof"
if grep -qx 'reply.1=HPDU:0' "$T_TMP/device.hpdu" && t_wait 5 truth_is device "h['dumps']" 1 &&
    truth_is device "h['last']['via']" hpdu && truth_is device "h['last']['path']" /data/local/tmp/dump.hprof &&
    [ "$(stat -c %s "$f" 2>/dev/null)" = 200003 ] && truth_is device "h['last']['bytes']" 200003 &&
    truth_is device "h['last']['sha256']" "$(sha256sum "$f" | cut -d' ' -f1)"; then
    t_ok "HPDU: result 0, the file in --device-dir, path and sha256 in the ground truth"
else
    t_fail "HPDU: result 0, the file in --device-dir, path and sha256 in the ground truth" \
        "$(cat "$T_TMP/device.hpdu")" "$(truth device h)" "$(ls -l "$T_TMP/device")"
fi
if [ -z "$HPROF_CONV" ]; then
    t_skip "hprof-conv accepts the HPDU file" "hprof-conv not installed"
else
    t_check "hprof-conv accepts the HPDU file" "$HPROF_CONV" "$f" "$f.conv"
fi

# --- --hprof=none: neither ---
start none --hprof=none || t_fail "none simvm starts"
client feat >"$T_TMP/none.feat" 2>&1
client hpds >"$T_TMP/none.hpds" 2>&1
client hpdu /sdcard/x.hprof >"$T_TMP/none.hpdu" 2>&1
if ! grep -q 'feature=hprof' "$T_TMP/none.feat" && grep -q '^feature=' "$T_TMP/none.feat" &&
    grep -qx 'reply.1=FAIL:1:HPDS not supported' "$T_TMP/none.hpds" &&
    grep -qx 'reply.1=FAIL:1:HPDU not supported' "$T_TMP/none.hpdu"; then
    t_ok "none: FEAT lists no heap dump; HPDS and HPDU get FAIL"
else
    t_fail "none: FEAT lists no heap dump; HPDS and HPDU get FAIL" "$(cat "$T_TMP"/none.*)"
fi

# --- --hprof-fault ---
start truncate --hprof-fault=truncate --hprof-size 2000000 || t_fail "truncate simvm starts"
client hpds >"$T_TMP/truncate.out" 2>&1
check "truncate: the connection closes halfway through the body" truncate.out \
    'closed=1' 'event.0.declared=2000000' 'event.0.bytes=1000000' 'reply.1=none'
truth_is truncate "h['dumps']" 0 && t_ok "truncate: not counted as a dump" ||
    t_fail "truncate: not counted as a dump" "$(truth truncate h)"
start short --hprof-fault=lie-short --hprof-size 100000 || t_fail "lie-short simvm starts"
client hpds >"$T_TMP/short.out" 2>&1
check "lie-short: the chunk length is less than the packet carries" short.out \
    'event.0.declared=100000' 'event.0.chunk_len=50000' 'event.0.bytes=100000' 'reply.1=empty'
start long --hprof-fault=lie-long --hprof-size 100000 || t_fail "lie-long simvm starts"
client hpds >"$T_TMP/long.out" 2>&1
if grep -qx 'event.0.declared=101000' "$T_TMP/long.out" && grep -qx 'silent_after=100000' "$T_TMP/long.out" &&
    grep -qx 'reply.1=none' "$T_TMP/long.out" && t_wait 5 truth_is long "h['last']['fault']" lie-long; then
    t_ok "lie-long: declares 1000 bytes more, sends the dump, then stays silent"
else
    t_fail "lie-long: declares 1000 bytes more, sends the dump, then stays silent" "$(cat "$T_TMP/long.out")"
fi
start fail --hprof-fault=fail || t_fail "fail simvm starts"
client hpds >"$T_TMP/fail.out" 2>&1
check "fail: FAIL(1, heap dump failed) and no event" fail.out 'reply.1=FAIL:1:heap dump failed' 'order=reply1'
exit 0
