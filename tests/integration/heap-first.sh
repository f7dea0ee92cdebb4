#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first `ddmon heap-bitmap` of a fresh VM nobody watched succeeds (it
# switches segments on, asks for a GC and waits for its segments; simvm in
# ART mode, which answers HPIF, HPSG and HPGC with nothing), and so does
# the next; `ddmon heap-info` on a fresh VM returns its heap summary.
# libpng is loaded at the first image, not with the heap and viewdebug
# plugins (plugins/common/pnglib.c): the server maps it only after that
# first heap-bitmap, and the image it then writes is a whole PNG.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins heap || t_skip_all "the heap plugin was configured out"
t_plan 7
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --gc-every 0 --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
ports=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base "$(t_free_port)" \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 2 ]; }
t_wait 15 ready && t_ok "both simulated VMs are ready" || t_fail "both simulated VMs are ready" "$(cat "$T_TMP/vms.json")"
pids=$(awk '{print $1}' "$T_TMP/ports")
first=$(echo "$pids" | head -1); second=$(echo "$pids" | tail -1)

# Every plugin is loaded, none has drawn yet: no libpng in the server.
maps_png() { grep -c 'libpng' "/proc/$DDMON_PID/maps" 2>/dev/null; }
[ -r "/proc/$DDMON_PID/maps" ] && [ "$(maps_png)" = 0 ] && t_ok "the server maps no libpng before its first image" \
    || t_fail "the server maps no libpng before its first image" "$(grep libpng "/proc/$DDMON_PID/maps")"

# Fresh VM, nobody watches: the very first heap-bitmap must succeed.
t_ddmon --no-autostart heap-bitmap "$first" "$T_TMP/first.png" >"$T_TMP/first.out" 2>&1
rc=$?
[ $rc = 0 ] && [ -s "$T_TMP/first.png" ] && t_ok "the first heap-bitmap of a fresh VM succeeds" \
    || t_fail "the first heap-bitmap of a fresh VM succeeds" "rc $rc: $(cat "$T_TMP/first.out")" "$(tail -5 "$T_TMP/server.err")"
[ "$(maps_png)" -gt 0 ] && t_ok "... and libpng is mapped once it drew" \
    || t_fail "... and libpng is mapped once it drew" "$(grep -c . "/proc/$DDMON_PID/maps") mappings"
# The image, read back by Python's zlib (not by libpng): signature, IHDR,
# and IDAT data that inflates to height rows of (1 + width) bytes.
python3 - "$T_TMP/first.png" <<'PY' >"$T_TMP/png.chk" 2>&1 && t_ok "the image is a whole PNG" \
    || t_fail "the image is a whole PNG" "$(cat "$T_TMP/png.chk")"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", d[:8]
pos, idat, ihdr, end = 8, b"", None, False
while pos < len(d):
    n, kind = struct.unpack(">I4s", d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", d[pos + 8 + n:pos + 12 + n])[0], kind
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    elif kind == b"IEND":
        end = True
    pos += 12 + n
w, h, depth, color = ihdr
assert end and depth == 8 and color == 3, ihdr
assert len(zlib.decompress(idat)) == h * (1 + w), (w, h)
PY
t_ddmon --no-autostart heap-bitmap "$first" "$T_TMP/again.png" >"$T_TMP/again.out" 2>&1 \
    && t_ok "... and the next one too" || t_fail "... and the next one too" "$(cat "$T_TMP/again.out")"

# heap-info on the other fresh VM.
t_ddmon --no-autostart heap-info "$second" >"$T_TMP/info.out" 2>&1 \
    && t_ok "heap-info on a fresh VM succeeds" || t_fail "heap-info on a fresh VM succeeds" "$(cat "$T_TMP/info.out")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
