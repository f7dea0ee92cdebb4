#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The hprof plugin through the real ddmon and ddmon-simvm (ground truth:
# its --state-file): an HPDS dump lands with the simulator's bytes and
# sha256 and no .part; Debian's hprof-conv accepts it; --format=standard
# equals hprof-conv's conversion of the very same dump (rebuilt by
# ddmon-simvm --write-hprof from the state file's gen_seed); a VM without
# hprof-heap-dump-streaming is dumped with HPDU to /sdcard/APP.hprof, and so
# is any VM with --on-device PATH; several VMs at once with --out-dir;
# progress on a terminal; a second dump of a VM while one runs is refused;
# and every broken VM (truncated, lying either way, FAIL) leaves no file
# and says how many bytes arrived.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins hprof || t_skip_all "the hprof plugin was configured out"
t_plan 20

HPROF_CONV=${HPROF_CONV:-$(command -v hprof-conv || true)}
[ -n "$HPROF_CONV" ] || [ ! -x /usr/lib/android-sdk/platform-tools/hprof-conv ] \
    || HPROF_CONV=/usr/lib/android-sdk/platform-tools/hprof-conv
SIMVM="$DDM_TOP_BUILDDIR/ddmon-simvm"
size=3000000
mkdir -p "$T_TMP/dev" "$T_TMP/out"
chmod 700 "$T_TMP"

# Three simulators: streaming VMs, a VM that can only write on the device,
# and one VM per fault.
t_start_simvm --vms 2 --app hp.one --app hp.two --base-port 0 --port-file "$T_TMP/s.ports" \
    --state-file "$T_TMP/s.json" --hprof-size $size --gc-every 0 --thread-activity 0
t_start_simvm --vms 1 --app hp.dev --base-port 0 --port-file "$T_TMP/d.ports" \
    --state-file "$T_TMP/d.json" --hprof=device --device-dir "$T_TMP/dev" --hprof-size $size \
    --gc-every 0 --thread-activity 0 --seed 2
for f in truncate lie-long lie-short fail; do
    t_start_simvm --vms 1 --app "hp.$f" --base-port 0 --port-file "$T_TMP/f-$f.ports" \
        --hprof-fault=$f --hprof-size $size --gc-every 0 --thread-activity 0 --seed 3
done
t_start_simvm --vms 1 --app hp.big --base-port 0 --port-file "$T_TMP/b.ports" \
    --hprof-size 400000000 --gc-every 0 --thread-activity 0 --seed 4
for p in s d f-truncate f-lie-long f-lie-short f-fail b; do t_wait 10 test -s "$T_TMP/$p.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0 \
    --request-timeout 2000 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 8 ]; }
t_wait 20 ready || t_diag "$T_TMP/vms.txt"

# field JSON KEY: a field of a record result
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d.get("result") or {}; print(r.get("fields", {}).get(sys.argv[2]))' "$1" "$2"; }
# truth STATE APP KEY: hprof.last.KEY of the VM named APP
truth() { python3 -c 'import json,sys; v=[v for v in json.load(open(sys.argv[1]))["vms"] if v["app"]==sys.argv[2]][0]; print(v["hprof"]["last"][sys.argv[3]])' "$@"; }
sha() { sha256sum "$1" | awk '{print $1}'; }

# 1-3: HPDS, android format
t_ddmon --no-autostart hprof hp.one "$T_TMP/one.hprof" --json >"$T_TMP/one.json" 2>"$T_TMP/one.err"; rc=$?
t_wait 5 t_is hpds truth "$T_TMP/s.json" hp.one via
if [ $rc = 0 ] && [ -f "$T_TMP/one.hprof" ] && [ "$(stat -c %s "$T_TMP/one.hprof")" = $size ] \
    && [ "$(sha "$T_TMP/one.hprof")" = "$(truth "$T_TMP/s.json" hp.one sha256)" ] \
    && [ "$(field "$T_TMP/one.json" sha256)" = "$(sha "$T_TMP/one.hprof")" ] \
    && [ "$(field "$T_TMP/one.json" bytes)" = $size ] && [ "$(field "$T_TMP/one.json" via)" = stream ]; then
    t_ok "HPDS: the file has the simulator's bytes and sha256, and the JSON says so"
else
    t_fail "HPDS: the file has the simulator's bytes and sha256, and the JSON says so" \
        "rc=$rc $(cat "$T_TMP/one.json" "$T_TMP/one.err")" "truth: $(truth "$T_TMP/s.json" hp.one sha256)"
fi
[ ! -e "$T_TMP/one.hprof.part" ] && [ "$(stat -c %a "$T_TMP/one.hprof")" = 600 ] \
    && t_ok "no .part left; the dump is private (mode 600)" \
    || t_fail "no .part left; the dump is private (mode 600)" "$(ls -la "$T_TMP")"
if [ -n "$HPROF_CONV" ]; then
    "$HPROF_CONV" "$T_TMP/one.hprof" "$T_TMP/one.conv" >"$T_TMP/conv.err" 2>&1 && [ -s "$T_TMP/one.conv" ] \
        && t_ok "hprof-conv accepts the android output" \
        || t_fail "hprof-conv accepts the android output" "$(cat "$T_TMP/conv.err")"
else
    t_ok "# SKIP hprof-conv is not installed"
fi

# 4: --format=standard equals hprof-conv of the same dump
t_ddmon --no-autostart hprof hp.two "$T_TMP/two.std" --format=standard >"$T_TMP/two.out" 2>&1; rc=$?
t_wait 5 t_is hpds truth "$T_TMP/s.json" hp.two via
if [ -n "$HPROF_CONV" ]; then
    "$SIMVM" --write-hprof "$T_TMP/two.android" --hprof-size $size \
        --hprof-gen-seed "$(truth "$T_TMP/s.json" hp.two gen_seed)" \
        --hprof-package "$(truth "$T_TMP/s.json" hp.two package)" >"$T_TMP/regen.out" 2>&1
    "$HPROF_CONV" "$T_TMP/two.android" "$T_TMP/two.conv" >"$T_TMP/conv2.err" 2>&1
    [ $rc = 0 ] && [ "$(sha "$T_TMP/two.android")" = "$(truth "$T_TMP/s.json" hp.two sha256)" ] \
        && cmp -s "$T_TMP/two.conv" "$T_TMP/two.std" \
        && t_ok "--format=standard gives the bytes hprof-conv gives for the same dump" \
        || t_fail "--format=standard gives the bytes hprof-conv gives for the same dump" \
            "rc=$rc $(cat "$T_TMP/two.out" "$T_TMP/regen.out" "$T_TMP/conv2.err")" \
            "$(cmp "$T_TMP/two.conv" "$T_TMP/two.std" 2>&1)"
else
    t_ok "# SKIP hprof-conv is not installed"
fi

# 5-6: HPDU on a VM that cannot stream; --on-device on one that can
t_ddmon --no-autostart hprof hp.dev --json >"$T_TMP/dev.json" 2>&1; rc=$?
t_wait 5 t_is hpdu truth "$T_TMP/d.json" hp.dev via
[ $rc = 0 ] && [ "$(field "$T_TMP/dev.json" via)" = device ] \
    && [ "$(field "$T_TMP/dev.json" device_path)" = /sdcard/hp.dev.hprof ] \
    && [ "$(truth "$T_TMP/d.json" hp.dev path)" = /sdcard/hp.dev.hprof ] \
    && [ "$(sha "$T_TMP/dev/hp.dev.hprof")" = "$(truth "$T_TMP/d.json" hp.dev sha256)" ] \
    && grep -q "cannot stream" "$T_TMP/dev.json" \
    && t_ok "no streaming feature: HPDU to /sdcard/APP.hprof, and ddmon says where it went" \
    || t_fail "no streaming feature: HPDU to /sdcard/APP.hprof, and ddmon says where it went" "$(cat "$T_TMP/dev.json")"
t_ddmon --no-autostart hprof hp.one --on-device=/data/local/tmp/x.hprof >"$T_TMP/ondev.out" 2>&1; rc=$?
t_wait 5 t_is hpdu truth "$T_TMP/s.json" hp.one via
[ $rc = 0 ] && [ "$(truth "$T_TMP/s.json" hp.one path)" = /data/local/tmp/x.hprof ] \
    && grep -q "written on the device to /data/local/tmp/x.hprof" "$T_TMP/ondev.out" \
    && t_ok "--on-device=PATH uses HPDU even where HPDS works" \
    || t_fail "--on-device=PATH uses HPDU even where HPDS works" "$(cat "$T_TMP/ondev.out")"

# 7: several VMs at once (ddmon's own --out-dir)
t_ddmon --no-autostart --out-dir "$T_TMP/out" hprof hp.one hp.two --json >"$T_TMP/multi.json" 2>&1; rc=$?
sleep 0.5
ok=1
for app in hp.one hp.two; do
    f=$(ls "$T_TMP/out/$app"-*.hprof 2>/dev/null)
    [ -n "$f" ] && [ "$(sha "$f")" = "$(truth "$T_TMP/s.json" $app sha256)" ] || ok=0
done
[ $rc = 0 ] && [ $ok = 1 ] && [ -z "$(ls "$T_TMP/out" | grep part)" ] \
    && t_ok "--out-dir: two VMs dumped at once, each with its simulator's sha256" \
    || t_fail "--out-dir: two VMs dumped at once, each with its simulator's sha256" "$(cat "$T_TMP/multi.json")" "$(ls -la "$T_TMP/out")"

# 7b: one of two fails: the answer keeps its result (the dump written)
mkdir -p "$T_TMP/out2" "$T_TMP/out3"
t_ddmon --no-autostart --out-dir "$T_TMP/out2" hprof hp.one hp.fail --json >"$T_TMP/half.json" 2>"$T_TMP/half.err"; rc=$?
python3 - "$T_TMP/half.json" "$T_TMP/out2" >"$T_TMP/half.chk" 2>&1 <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and "1 of 2 heap dumps written" in d["error"], d
rows = d["result"]["rows"]
paths = [r.get("path") for r in rows if isinstance(r, dict)] or [c for r in rows for c in (r if isinstance(r, list) else []) if isinstance(c, str) and c.endswith(".hprof")]
assert any(p and os.path.exists(p) and p.startswith(sys.argv[2]) for p in paths), rows
PY
[ $rc = 1 ] && t_ok "--json: one of two dumps failing keeps the result (what was written)" \
    || t_fail "--json: one of two dumps failing keeps the result (what was written)" "rc=$rc" "$(cat "$T_TMP/half.chk" "$T_TMP/half.json")"
t_ddmon --no-autostart --out-dir "$T_TMP/out3" hprof hp.one hp.fail >"$T_TMP/half.out" 2>"$T_TMP/half.err"; rc=$?
[ $rc = 1 ] && grep -q "$T_TMP/out3/hp.one" "$T_TMP/half.out" && grep -q "1 of 2 heap dumps written" "$T_TMP/half.err" \
    && t_ok "text: the error, and the table lists the dump written" \
    || t_fail "text: the error, and the table lists the dump written" "rc=$rc" "$(cat "$T_TMP/half.out" "$T_TMP/half.err")"

# 8: progress on a terminal (bytes, rate, time), nothing of it with --json
python3 - "$DDMON" "$T_TMP" "$PLUGINDIR" >"$T_TMP/tty.txt" 2>&1 <<'PY'
import os, pty, sys
ddmon, tmp, plugins = sys.argv[1:4]
out = bytearray()
def read(fd):
    data = os.read(fd, 65536)
    out.extend(data)
    return data
pty.spawn([ddmon, "--socket", tmp + "/ddmon.sock", "--plugin-dir", plugins, "--no-adb-start",
           "--no-autostart", "hprof", "hp.big", tmp + "/big.hprof"], read)
sys.stdout.write(out.decode("utf-8", "replace"))
PY
grep -q "MB/s\|MiB/s" "$T_TMP/tty.txt" && grep -q " of " "$T_TMP/tty.txt" && grep -q "written to" "$T_TMP/tty.txt" \
    && t_ok "a terminal sees progress (bytes of total, rate, time), then the result" \
    || t_fail "a terminal sees progress (bytes of total, rate, time), then the result" "$(tr '\r' '\n' <"$T_TMP/tty.txt" | tail -5)"
rm -f "$T_TMP/big.hprof"

# 9: a second dump of a VM while one runs
t_ddmon --no-autostart hprof hp.big "$T_TMP/big1.hprof" >"$T_TMP/big1.out" 2>&1 &
first=$!
t_wait 10 test -e "$T_TMP/big1.hprof.part"
t_ddmon --no-autostart hprof hp.big "$T_TMP/big2.hprof" >"$T_TMP/big2.out" 2>&1; rc2=$?
wait $first; rc1=$?
[ $rc1 = 0 ] && [ $rc2 = 1 ] && grep -q "already running" "$T_TMP/big2.out" && [ ! -e "$T_TMP/big2.hprof" ] \
    && t_ok "a second dump of the same VM while one runs is refused; the first lands" \
    || t_fail "a second dump of the same VM while one runs is refused; the first lands" \
        "rc1=$rc1 rc2=$rc2 $(cat "$T_TMP/big1.out" "$T_TMP/big2.out")"
rm -f "$T_TMP/big1.hprof"

# 10: the client goes away mid-dump (killed): the dump stops, no file stays,
# and the VM can be dumped again
"$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart \
    hprof hp.big "$T_TMP/gone.hprof" >/dev/null 2>&1 &
client=$!
t_wait 10 test -s "$T_TMP/gone.hprof.part"
kill -KILL $client 2>/dev/null; wait $client 2>/dev/null
if t_wait 15 test ! -e "$T_TMP/gone.hprof.part" && [ ! -e "$T_TMP/gone.hprof" ] \
    && t_wait 30 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --plugin-dir '$PLUGINDIR' --no-adb-start \
        --no-autostart hprof hp.big '$T_TMP/again.hprof' >'$T_TMP/again.out' 2>&1"; then
    t_ok "a killed client's dump stops and leaves no file; the VM can be dumped again"
else
    t_fail "a killed client's dump stops and leaves no file; the VM can be dumped again" \
        "$(ls -la "$T_TMP" | grep hprof)" "$(cat "$T_TMP/again.out" 2>/dev/null)"
fi
rm -f "$T_TMP/again.hprof"

# 11-18: broken VMs: an error that says what arrived, and no file at all
fault() { # fault NAME EXPECTED-TEXT
    t_ddmon --no-autostart hprof "hp.$1" "$T_TMP/f-$1.hprof" >"$T_TMP/f-$1.out" 2>&1; rc=$?
    [ $rc = 1 ] && grep -q -- "$2" "$T_TMP/f-$1.out" \
        && t_ok "$1: the error says '$2'" || t_fail "$1: the error says '$2'" "rc=$rc $(cat "$T_TMP/f-$1.out")"
    [ -z "$(ls "$T_TMP" | grep "^f-$1.hprof")" ] && t_ok "$1: no file, no .part" \
        || t_fail "$1: no file, no .part" "$(ls -la "$T_TMP")"
}
fault truncate "of $size bytes arrived"
fault lie-long "stopped sending"
fault lie-short "incomplete heap dump"
fault fail "the VM said: heap dump failed"
