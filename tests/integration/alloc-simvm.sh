#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The alloc plugin through the real ddmon and ddmon-simvm: REAQ at ready
# makes the VM list say "alloc: off"; `alloc VM start` turns tracking on
# (status and headline follow); `alloc VM show --json` equals the records
# simvm says it would send (its --state-file), and so do the groups by
# class and thread; `stop` turns it off and, as on ART, the records are gone.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins alloc || t_skip_all "the alloc plugin was configured out"
t_plan 8

base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --gc-every 0 --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
pid=$(awk 'NR==1{print $1}' "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base "$(t_free_port)" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
headline() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && grep -q "alloc: $1" "$T_TMP/vms.txt"; }
t_wait 15 headline off && t_ok "REAQ at ready: the VM list says alloc: off" \
    || t_fail "REAQ at ready: the VM list says alloc: off" "$(cat "$T_TMP/vms.txt")"

# enabled STATUS-FILE: the "enabled" field of a status/start/stop result.
enabled() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(str(d["result"]["fields"]["enabled"]).lower())' "$1"; }
truth_enabled() { python3 -c 'import json,sys; print(str([v for v in json.load(open(sys.argv[1]))["vms"] if v["pid"]==int(sys.argv[2])][0]["alloc"]["enabled"]).lower())' "$T_TMP/truth.json" "$pid"; }

t_ddmon --no-autostart alloc "$pid" status --json >"$T_TMP/st0.json" 2>&1
t_ddmon --no-autostart alloc "$pid" start --json >"$T_TMP/start.json" 2>&1; rc_start=$?
t_ddmon --no-autostart alloc "$pid" status --json >"$T_TMP/st1.json" 2>&1
[ "$(enabled "$T_TMP/st0.json")" = false ] && [ $rc_start = 0 ] && [ "$(enabled "$T_TMP/start.json")" = true ] \
    && [ "$(enabled "$T_TMP/st1.json")" = true ] && t_ok "status follows start (off, then on)" \
    || t_fail "status follows start (off, then on)" "$(cat "$T_TMP/st0.json" "$T_TMP/start.json" "$T_TMP/st1.json")"
t_wait 10 headline on && t_ok "... and so does the headline (alloc: on)" \
    || t_fail "... and so does the headline (alloc: on)" "$(cat "$T_TMP/vms.txt")"

# simvm rewrites its state file a moment after a change
t_wait 10 t_is true truth_enabled
for by in none class thread site; do
    if [ $by = none ]; then t_ddmon --no-autostart alloc "$pid" show --json >"$T_TMP/show-$by.json" 2>&1
    else t_ddmon --no-autostart alloc "$pid" show --by $by --json >"$T_TMP/show-$by.json" 2>&1; fi
done
compare() { # compare BY: the command's table against the ground truth
python3 - "$T_TMP/truth.json" "$pid" "$T_TMP/show-$1.json" "$1" <<'PY'
import json, sys
from collections import defaultdict
truth = [v for v in json.load(open(sys.argv[1]))["vms"] if v["pid"] == int(sys.argv[2])][0]["alloc"]
res = json.load(open(sys.argv[3]))
by = sys.argv[4]
assert res["ok"], res
prim = dict(Z="boolean", B="byte", C="char", S="short", I="int", J="long", F="float", D="double")
def name(d):
    dims = len(d) - len(d.lstrip("["))
    b = d[dims:]
    if b.startswith("L") and b.endswith(";") and len(b) > 2: b = b[1:-1].replace("/", ".")
    elif len(b) == 1 and b in prim: b = prim[b]
    else: return d
    return b + "[]" * dims
def site(fr):
    if not fr: return None
    f = fr[0]; c = name(f["class"]) + "." + f["method"]
    if f["line"] == -2: return c + "(Native Method)"
    if not f["file"]: return c + ("(Unknown Source:%d)" % f["line"] if f["line"] >= 0 else "(Unknown Source)")
    return c + ("(%s:%d)" % (f["file"], f["line"]) if f["line"] >= 0 else "(%s)" % f["file"])
want = [[name(r["class"]), r["size"], r["thread"], site(r["frames"])] for r in truth["records"]]
cols = [c["name"] for c in res["result"]["columns"].values()]
got = [[r[k] for k in res["result"]["columns"]] for r in res["result"]["rows"]]  # rows are objects (doc/json.md)
if by == "none":
    assert cols == ["class", "size", "thread", "site"], cols
    assert got == want, "rows differ:\n%s\n%s" % (got[:3], want[:3])
else:
    idx = dict(none=None, **{"class": 0, "thread": 2, "site": 3})[by]
    g = defaultdict(lambda: [0, 0])
    for w in want: g[w[idx]][0] += 1; g[w[idx]][1] += w[1]
    assert cols == [by, "count", "bytes"], cols
    assert sorted(map(tuple, got), key=str) == sorted(((k, c, b) for k, (c, b) in g.items()), key=str), "groups differ"
    assert [r[2] for r in got] == sorted((r[2] for r in got), reverse=True), "not sorted by bytes"
print(len(got), "rows,", len(want), "records")
PY
}
ok=1; out=
for by in none class thread site; do r=$(compare $by 2>&1) || { ok=0; out="$out $by: $r"; }; done
n=$(compare none 2>/dev/null)
[ $ok = 1 ] && [ "${n%% *}" -gt 0 ] && t_ok "show --json equals simvm's ground truth ($n), grouped by class, thread, site too" \
    || t_fail "show --json equals simvm's ground truth" "$out" "$(head -c 400 "$T_TMP/show-none.json")"

t_ddmon --no-autostart alloc "$pid" stop --json >"$T_TMP/stop.json" 2>&1; rc_stop=$?
t_ddmon --no-autostart alloc "$pid" status --json >"$T_TMP/st2.json" 2>&1
[ $rc_stop = 0 ] && [ "$(enabled "$T_TMP/stop.json")" = false ] && [ "$(enabled "$T_TMP/st2.json")" = false ] \
    && t_ok "status follows stop (off)" || t_fail "status follows stop (off)" "$(cat "$T_TMP/stop.json" "$T_TMP/st2.json")"
t_wait 10 headline off && t_ok "... and so does the headline (alloc: off)" \
    || t_fail "... and so does the headline (alloc: off)" "$(cat "$T_TMP/vms.txt")"
t_ddmon --no-autostart alloc "$pid" show --json >"$T_TMP/show-after.json" 2>&1
rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["result"]["rows"]))' "$T_TMP/show-after.json" 2>&1)
[ "$rows" = 0 ] && t_ok "REAE 0 discarded the records (show after stop: 0 rows)" \
    || t_fail "REAE 0 discarded the records (show after stop: 0 rows)" "$(head -c 400 "$T_TMP/show-after.json")"
t_ddmon --no-autostart alloc "$pid" show --by size >"$T_TMP/usage.out" 2>&1; rc=$?
[ $rc = 2 ] && t_ok "a bad --by is a usage error (exit 2)" || t_fail "a bad --by is a usage error (exit 2)" "rc=$rc $(cat "$T_TMP/usage.out")"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
