#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `ddmon view NAME --out-dir DIR` writes a blob view (the heap bitmap PNG)
# to DIR, says where in text and as a "file" member with --json; without
# --out-dir it only describes the blob; a blob that cannot be written is a
# failure, still one JSON object with --json.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins heap vminfo || t_skip_all "the heap or vminfo plugin was configured out"
t_plan 5
base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --gc-every 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base "$(t_free_port)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
pid=$(awk 'NR==1{print $1}' "$T_TMP/ports")
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && grep -q " ready " "$T_TMP/vms.txt"; }
t_wait 15 ready || t_fail "the VM is ready" "$(cat "$T_TMP/vms.txt")"

# Look at the bitmap (so the heap plugin collects), collect, then write it out.
t_ddmon --no-autostart view heap.bitmap --vm "$pid" >/dev/null 2>&1
t_ddmon --no-autostart gc "$pid" >/dev/null 2>&1
written() {
    rm -rf "$T_TMP/out"
    t_ddmon --no-autostart view heap.bitmap --vm "$pid" --out-dir "$T_TMP/out" >"$T_TMP/view.txt" 2>&1 &&
        [ -s "$T_TMP/out/127.0.0.1_${base}-heap.bitmap.png" ]
}
t_wait 15 written && head -c 8 "$T_TMP/out/127.0.0.1_${base}-heap.bitmap.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" \
    && t_ok "view heap.bitmap --out-dir writes a PNG" \
    || t_fail "view heap.bitmap --out-dir writes a PNG" "$(cat "$T_TMP/view.txt")" "$(ls -la "$T_TMP/out" 2>&1)"
grep -q "written to $T_TMP/out/127.0.0.1_${base}-heap.bitmap.png" "$T_TMP/view.txt" \
    && t_ok "the text output says where" || t_fail "the text output says where" "$(cat "$T_TMP/view.txt")"
t_ddmon --no-autostart view heap.bitmap --vm "$pid" --out-dir "$T_TMP/out2" --json >"$T_TMP/view.json" 2>&1
python3 - "$T_TMP/view.json" "$T_TMP/out2" <<'PY' >"$T_TMP/json.chk" 2>&1 \
    && t_ok "--json: the view has a \"file\" member, no base64 data" || t_fail "--json: the view has a \"file\" member" "$(cat "$T_TMP/json.chk")"
import json, os, sys
v = json.load(open(sys.argv[1]))
assert v["kind"] == "blob", v
assert "data_base64" not in v, list(v)
assert v["file"].startswith(sys.argv[2] + "/") and os.path.getsize(v["file"]) > 8, v
PY
t_ddmon --no-autostart view heap.bitmap --vm "$pid" >"$T_TMP/plain.txt" 2>&1
grep -q "<image/png, [0-9]* bytes>$" "$T_TMP/plain.txt" && t_ok "without --out-dir: only a description" \
    || t_fail "without --out-dir: only a description" "$(cat "$T_TMP/plain.txt")"

# A directory where the file would go: exit 1, one JSON object saying so.
mkdir -p "$T_TMP/out3/127.0.0.1_${base}-heap.bitmap.png"
t_ddmon --no-autostart view heap.bitmap --vm "$pid" --out-dir "$T_TMP/out3" --json >"$T_TMP/fail.json" 2>"$T_TMP/fail.err"; rc=$?
python3 - "$T_TMP/fail.json" <<'PY' >"$T_TMP/fail.chk" 2>&1 && [ $rc -eq 1 ] \
    && t_ok "a blob that cannot be written: exit 1, one JSON object with ok false" \
    || t_fail "a blob that cannot be written: exit 1, one JSON object with ok false" "rc=$rc" "$(cat "$T_TMP/fail.chk" "$T_TMP/fail.err")"
import json, sys
v = json.load(open(sys.argv[1]))  # fails on a second document
assert v["ok"] is False and v["code"] == 1 and v["kind"] == "failed", v
assert "data_base64" not in v and "file" not in v, list(v)
PY
