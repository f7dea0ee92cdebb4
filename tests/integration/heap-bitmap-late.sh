#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The heap.bitmap view of a VM whose heap segments came while nobody
# watched that view (its other heap views were watched: `ddmon view
# heap.segments`, then `ddmon gc`) shows the bitmap of those segments at
# the first look, as heap.map does, instead of an empty blob until the
# VM's next GC (the plugin built the image only at HPEN, for a watcher
# present then). And heap-bitmap into a directory that does not exist
# names the file given, not the temporary file next to it ("x.png.tmp123.0").
# simvm in ART mode, no GCs of its own.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins heap vminfo || t_skip_all "the heap or vminfo plugin was configured out"
t_plan 5
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"

base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --gc-every 0 --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
ports=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" && [ "$(python3 "$q" rows "$T_TMP/vms.json" vms | grep -c '"state": "ready"')" = 1 ]; }
t_wait 15 ready && t_ok "the simulated VM is ready" || t_fail "the simulated VM is ready" "$(cat "$T_TMP/vms.json")"
pid=$(awk '{print $1; exit}' "$T_TMP/ports")

# Heap views watched (collection on), then a GC: its segments arrive while
# nobody watches heap.bitmap.
t_ddmon --no-autostart view heap.segments --vm "$pid" >"$T_TMP/seg.out" 2>&1
t_ddmon --no-autostart gc "$pid" >"$T_TMP/gc.out" 2>&1
grep -q "segments arrived" "$T_TMP/gc.out" && t_ok "the GC's heap segments arrived" \
    || t_fail "the GC's heap segments arrived" "$(cat "$T_TMP/gc.out")" "$(tail -5 "$T_TMP/server.err")"

# The first look at heap.bitmap: the PNG of those segments.
blob() { # blob FILE: "MEDIA_TYPE SIZE" of the heap.bitmap view in FILE
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("media_type"), d.get("size_bytes"))' "$1"
}
t_ddmon --no-autostart --json view heap.bitmap --vm "$pid" >"$T_TMP/bm.json" 2>"$T_TMP/bm.err"
read -r mt size < <(blob "$T_TMP/bm.json")
[ "$mt" = image/png ] && [ "${size:-0}" -gt 0 ] && t_ok "the first look at heap.bitmap shows the bitmap" \
    || t_fail "the first look at heap.bitmap shows the bitmap" "$(head -c 400 "$T_TMP/bm.json")" "$(cat "$T_TMP/bm.err")"
# ... and what it writes with --out-dir is that PNG, not an empty .bin file.
mkdir -p "$T_TMP/out"
t_ddmon --no-autostart view heap.bitmap --vm "$pid" --out-dir "$T_TMP/out" >"$T_TMP/od.out" 2>&1
f=$(ls "$T_TMP/out")
case $f in
*.png) head -c 8 "$T_TMP/out/$f" | od -An -c | grep -q 'P   N   G' && t_ok "--out-dir writes that PNG" \
           || t_fail "--out-dir writes that PNG" "$(ls -l "$T_TMP/out")" ;;
*) t_fail "--out-dir writes that PNG" "$(ls -l "$T_TMP/out")" "$(cat "$T_TMP/od.out")" ;;
esac

out=$(t_ddmon --no-autostart heap-bitmap "$pid" "$T_TMP/no-such-dir/x.png" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qF "cannot create $T_TMP/no-such-dir/x.png: " && ! echo "$out" | grep -q '\.tmp' \
    && t_ok "heap-bitmap into a missing directory names the file given" \
    || t_fail "heap-bitmap into a missing directory names the file given" "rc=$rc" "$out"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
