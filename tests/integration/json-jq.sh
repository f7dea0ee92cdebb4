#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --json for scripts (doc/json.md) with the real ddmon and ddmon-simvm: every
# document has "schema", table rows are objects with snake_case keys, the
# snapshot groups views per VM with pid, app and device beside them, the
# headline figures are numbers; and the jq one-liners of doc/json.md answer
# what they promise (checked with python3's json; run as written when jq
# is installed), with a plain JVM beside the DDM VMs (it has no heap views:
# `view heap.summary` leaves it out). The shapes: plugins and commands keyed
# by name, chunks as arrays, a per-VM command's result names its VM, a
# stack's line is an integer.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 18

base=$(t_free_ports 4) || t_skip_all "no free ports"
t_have_plugins heap threads vminfo || t_skip_all "the heap, threads and vminfo plugins were not built"
t_start_simvm --vms 3 --jvm-vms 1 --base-port "$base" --port-file "$T_TMP/ports" --seed 12
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
SCAN=(--scan=local --scan-ports "$range")

# The snapshot (in process): the grouped shape.
t_ddmon "${SCAN[@]}" snapshot --wait 2500 --json >"$T_TMP/snap.json" 2>"$T_TMP/snap.err" \
    && t_ok "snapshot --json exits 0" || t_fail "snapshot --json exits 0" "$(tail -5 "$T_TMP/snap.err")"
python3 - "$T_TMP/snap.json" "$T_TMP/ports" >"$T_TMP/snap.chk" 2>&1 <<'PY' \
    && t_ok "snapshot: schema 1, vms keyed by VM with pid/app/device and views by name, global views" \
    || t_fail "snapshot: schema 1, vms keyed by VM with pid/app/device and views by name, global views" "$(cat "$T_TMP/snap.chk")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["settled"] is True, (d.get("schema"), d.get("settled"))
sim = {int(l.split()[0]): l.split()[2] for l in open(sys.argv[2]) if l.strip() and l.split()[2] != "-"}
assert isinstance(d["vms"], dict) and isinstance(d["global"], dict)
assert "vms" in d["global"] and "plugins" in d["global"], sorted(d["global"])
seen = {}
for key, vm in d["vms"].items():
    assert vm["key"] == key
    for m in ("pid", "app", "device", "state", "debug_port", "views"):
        assert m in vm, (key, m, sorted(vm))
    for name, v in vm["views"].items():
        assert v["name"] == name and v["vm"] == key and "schema" not in v, (key, name)
    seen[vm["pid"]] = vm["app"]
for pid, app in sim.items():
    assert seen.get(pid) == app, (pid, app, seen)
PY

python3 - "$T_TMP/snap.json" >"$T_TMP/rows.chk" 2>&1 <<'PY' \
    && t_ok "tables: columns keyed by snake_case name with type and unit; rows are objects" \
    || t_fail "tables: columns keyed by snake_case name with type and unit; rows are objects" "$(cat "$T_TMP/rows.chk")"
import json, re, sys
d = json.load(open(sys.argv[1]))
vms = d["global"]["vms"]
assert vms["kind"] == "table" and vms["columns"]["debug_port"]["name"] == "debug port", vms["columns"]
snake = re.compile(r"^[a-z_][a-z0-9_]*$")
n = 0
for vm in d["vms"].values():
    for v in vm["views"].values():
        if v["kind"] == "table":
            assert isinstance(v["columns"], dict) and isinstance(v["rows"], list)
            for k, c in v["columns"].items():
                assert snake.match(k) and {"name", "type", "unit"} <= set(c), (v["name"], k, c)
            for r in v["rows"]:
                assert set(r) == set(v["columns"]), (v["name"], sorted(r), sorted(v["columns"]))
                n += 1
        elif v["kind"] == "record":
            assert isinstance(v["fields"], dict) and all(snake.match(k) for k in v["fields"]), v["fields"]
cpu = [vm["views"]["threads"]["columns"]["cpu"] for vm in d["vms"].values() if "threads" in vm["views"]]
assert cpu and cpu[0]["unit"] == "%" and cpu[0]["type"] == "double", cpu
assert n > 0
PY

python3 - "$T_TMP/snap.json" >"$T_TMP/fig.chk" 2>&1 <<'PY' \
    && t_ok "headline figures are numbers beside each DDM VM, the text kept in info" \
    || t_fail "headline figures are numbers beside each DDM VM, the text kept in info" "$(cat "$T_TMP/fig.chk")"
import json, sys
d = json.load(open(sys.argv[1]))
ddm = [vm for vm in d["vms"].values() if vm.get("ddm")]
assert len(ddm) == 3, len(ddm)
for vm in ddm:
    p, used, size = vm["heap_used_percent"], vm["heap_used_bytes"], vm["heap_size_bytes"]
    assert isinstance(p, float) and 0 <= p <= 100, p
    assert isinstance(used, int) and isinstance(size, int) and 0 < used <= size, (used, size)
    assert abs(p - 100.0 * used / size) < 0.01, (p, used, size)
    assert isinstance(vm["threads_count"], int) and vm["threads_count"] == len(vm["views"]["threads"]["rows"])
    assert "heap: " in vm["info"] and "threads: " in vm["info"], vm["info"]
    assert vm["views"]["headline"]["fields"]["heap_used_percent"] == p
PY

# Through a server: vms, view, views, plugins, a plugin command, watch, a failure.
t_start_server "${SCAN[@]}"
t_wait 10 test -S "$T_TMP/ddmon.sock" || t_fail "server started" "$(cat "$T_TMP/server.err")"
# Figures come once the heap and threads views are looked at (a thread's CPU
# needs two polls): a watch keeps them looked at, and the snapshot, which
# answers from the server's current state as soon as it is settled, has them.
t_ddmon --no-autostart watch --json >/dev/null 2>&1 &
watcher=$!
T_PIDS+=("$watcher")
sleep 2.5
t_ddmon --no-autostart snapshot --wait 2500 --json >"$T_TMP/snap2.json" 2>"$T_TMP/snap2.err"
kill "$watcher" 2>/dev/null
t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" 2>"$T_TMP/vms.err"
python3 - "$T_TMP/vms.json" "$T_TMP/ports" >"$T_TMP/vms.chk" 2>&1 <<'PY' \
    && t_ok "vms --json: one table document, rows with debug_port and the headline figures" \
    || t_fail "vms --json: one table document, rows with debug_port and the headline figures" "$(cat "$T_TMP/vms.chk" "$T_TMP/vms.err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["name"] == "vms" and d["kind"] == "table", d
rows = [r for r in d["rows"] if r.get("ddm")]
assert len(rows) == 3, rows
for r in rows:
    assert isinstance(r["debug_port"], int) and r["debug_port"] > 0, r
    assert isinstance(r["heap_used_percent"], float) and isinstance(r["threads_count"], int), r
PY

key=$(python3 -c 'import json,sys; print([r["key"] for r in json.load(open(sys.argv[1]))["rows"] if r.get("ddm")][0])' "$T_TMP/vms.json")
t_ddmon --no-autostart view threads --vm "$key" --json >"$T_TMP/view1.json" 2>&1
t_ddmon --no-autostart view vminfo --json >"$T_TMP/viewall.json" 2>&1
python3 - "$T_TMP/view1.json" "$T_TMP/viewall.json" "$key" >"$T_TMP/view.chk" 2>&1 <<'PY' \
    && t_ok "view --vm: one view document; view without --vm: grouped per VM as the snapshot" \
    || t_fail "view --vm: one view document; view without --vm: grouped per VM as the snapshot" "$(cat "$T_TMP/view.chk")"
import json, sys
one = json.load(open(sys.argv[1]))
assert one["schema"] == 1 and one["name"] == "threads" and one["vm"] == sys.argv[3], one
assert all(isinstance(r, dict) for r in one["rows"])
allv = json.load(open(sys.argv[2]))
assert allv["schema"] == 1 and len([vm for vm in allv["vms"].values() if vm.get("ddm")]) == 3, allv
for k, vm in allv["vms"].items():
    assert "vminfo" in vm["views"], (k, vm)
    if vm.get("ddm"):
        assert vm["views"]["vminfo"]["fields"]["pid"] == vm["pid"], vm
PY

# A view no plain JVM has: only the VMs that have it, each with its figures
# (the JVM used to come with "views": {} and no figures, and jq's
# `.views["heap.summary"].rows[]` failed on it).
t_ddmon --no-autostart view heap.summary --json >"$T_TMP/viewheap.json" 2>&1
python3 - "$T_TMP/viewheap.json" "$T_TMP/vms.json" >"$T_TMP/viewheap.chk" 2>&1 <<'PY' \
    && t_ok "view heap.summary without --vm: only the VMs that have it, with their figures" \
    || t_fail "view heap.summary without --vm: only the VMs that have it, with their figures" "$(cat "$T_TMP/viewheap.chk")"
import json, sys
d = json.load(open(sys.argv[1]))
rows = json.load(open(sys.argv[2]))["rows"]
jvms = [r["key"] for r in rows if r.get("ddm") is False]
assert jvms, "no plain JVM in the VM list: %r" % rows
assert len(d["vms"]) == 3, sorted(d["vms"])
for k, vm in d["vms"].items():
    assert k not in jvms, (k, jvms)
    assert isinstance(vm["views"]["heap.summary"]["rows"], list), vm
    assert isinstance(vm.get("heap_used_percent"), float), (k, sorted(vm))
PY

t_ddmon --no-autostart views --json >"$T_TMP/views.json" 2>&1
t_ddmon --no-autostart plugins --json >"$T_TMP/plugins.json" 2>&1
python3 - "$T_TMP/views.json" "$T_TMP/plugins.json" >"$T_TMP/views.chk" 2>&1 <<'PY' \
    && t_ok "views --json: view names per VM and global; plugins --json: a table document" \
    || t_fail "views --json: view names per VM and global; plugins --json: a table document" "$(cat "$T_TMP/views.chk")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and "vms" in d["global"], d["global"]
assert all("threads" in vm["views"] and "pid" in vm for vm in d["vms"].values()), d["vms"]
p = json.load(open(sys.argv[2]))
assert p["schema"] == 1 and p["kind"] == "table"
assert {r["name"]: r["status"] for r in p["rows"]}.get("heap") == "loaded", p["rows"]
PY
python3 - "$T_TMP/plugins.json" >"$T_TMP/chunks.chk" 2>&1 <<'PY' \
    && t_ok "plugins --json: chunks is a list of chunk types" \
    || t_fail "plugins --json: chunks is a list of chunk types" "$(cat "$T_TMP/chunks.chk")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["columns"]["chunks"]["unit"] == "list", p["columns"]["chunks"]
assert all(isinstance(r["chunks"], list) for r in p["rows"]), [r["chunks"] for r in p["rows"]]
assert "HPIF" in {r["name"]: r["chunks"] for r in p["rows"]}["heap"], p["rows"]
PY

# help and --list-plugins: objects keyed by name, as every list with names.
t_ddmon --no-autostart help --json >"$T_TMP/help.json" 2>"$T_TMP/help.err"
t_ddmon --json --list-plugins >"$T_TMP/list.json" 2>"$T_TMP/list.err"
python3 - "$T_TMP/help.json" "$T_TMP/list.json" >"$T_TMP/keyed.chk" 2>&1 <<'PY' \
    && t_ok "help --json and --list-plugins --json: commands and plugins keyed by name" \
    || t_fail "help --json and --list-plugins --json: commands and plugins keyed by name" "$(cat "$T_TMP/keyed.chk" "$T_TMP/help.err" "$T_TMP/list.err")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["schema"] == 1 and isinstance(h["commands"], dict), h
c = h["commands"]["heap-info"]
assert c["name"] == "heap-info" and c["plugin"] == "heap" and c["usage"].startswith("heap-info"), c
l = json.load(open(sys.argv[2]))
assert l["schema"] == 1 and isinstance(l["plugins"], dict), l
assert all(v["name"] == k for k, v in l["plugins"].items()), sorted(l["plugins"])
assert l["plugins"]["heap"]["status"] == "loaded" and "HPIF" in l["plugins"]["heap"]["chunks"], l["plugins"]["heap"]
PY

t_ddmon --no-autostart heap-info "$key" --json >"$T_TMP/cmd.json" 2>"$T_TMP/cmd.err"
python3 - "$T_TMP/cmd.json" "$key" >"$T_TMP/cmd.chk" 2>&1 <<'PY' \
    && t_ok "a plugin command's answer: schema, ok, the result as a view document" \
    || t_fail "a plugin command's answer: schema, ok, the result as a view document" "$(cat "$T_TMP/cmd.chk" "$T_TMP/cmd.err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["ok"] is True, d
r = d["result"]
assert r["kind"] in ("table", "record") and "schema" not in r, r
assert isinstance(r.get("rows", r.get("fields")), (list, dict)), r
assert r["vm"] == sys.argv[2], ("the result names its VM", r["vm"], sys.argv[2])
PY

# A stack: line is an integer (null when unknown), native a boolean.
tid=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rows"][0]["id"])' "$T_TMP/view1.json")
t_ddmon --no-autostart stack "$key" "$tid" --json >"$T_TMP/stack.json" 2>"$T_TMP/stack.err"
python3 - "$T_TMP/stack.json" "$key" >"$T_TMP/stack.chk" 2>&1 <<'PY' \
    && t_ok "stack --json: the result names its VM; line an integer or null, native a boolean" \
    || t_fail "stack --json: the result names its VM; line an integer or null, native a boolean" "$(cat "$T_TMP/stack.chk" "$T_TMP/stack.err")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["result"]
assert d["ok"] is True and r["vm"] == sys.argv[2], (d.get("ok"), r.get("vm"))
assert r["columns"]["line"]["type"] == "int" and r["rows"], r["columns"]
for f in r["rows"]:
    assert f["line"] is None or (isinstance(f["line"], int) and not isinstance(f["line"], bool)), f
    assert isinstance(f["native"], bool) and not (f["native"] and f["line"] is not None), f
assert any(isinstance(f["line"], int) for f in r["rows"]), r["rows"]
PY

timeout 3 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --no-autostart watch --json >"$T_TMP/watch.json" 2>/dev/null
python3 - "$T_TMP/watch.json" >"$T_TMP/watch.chk" 2>&1 <<'PY' \
    && t_ok "watch --json: one event per line with schema, event, vm, name and the view converted" \
    || t_fail "watch --json: one event per line with schema, event, vm, name and the view converted" "$(cat "$T_TMP/watch.chk")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines
for l in lines:
    e = json.loads(l)
    assert e["schema"] == 1 and e["event"] in ("added", "changed", "removed") and "name" in e and "vm" in e, e
    v = e["view"]
    if v["kind"] == "table" and "rows" in v:
        assert isinstance(v["columns"], dict) and all(isinstance(r, dict) for r in v["rows"]), v
PY

t_ddmon --no-autostart view threads --vm nosuchvm --json >"$T_TMP/fail.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["schema"] == 1 and d["ok"] is False and d["kind"] == "not-found"))' \
    "$T_TMP/fail.json" && t_ok "a failure object has the schema too" || t_fail "a failure object has the schema too" "$(cat "$T_TMP/fail.json")"

# doc/json.md's one-liners, checked on the snapshot taken through the server.
python3 - "$T_TMP/snap2.json" >"$T_TMP/oneliners.py.out" 2>&1 <<'PY' \
    && t_ok "the documented queries (python): debug port per app, heap % per app, threads over 10% CPU" \
    || t_fail "the documented queries (python): debug port per app, heap % per app, threads over 10% CPU" "$(cat "$T_TMP/oneliners.py.out")"
import json, sys
d = json.load(open(sys.argv[1]))
ports = {vm["app"]: vm["debug_port"] for vm in d["vms"].values() if vm.get("ddm")}
assert any(vm.get("ddm") is False for vm in d["vms"].values()), "no plain JVM in the snapshot"
assert len(ports) == 3 and all(isinstance(p, int) and p > 0 for p in ports.values()), ports
heap = {vm["app"]: vm["heap_used_percent"] for vm in d["vms"].values() if "heap_used_percent" in vm}
assert len(heap) == 3 and all(0 <= p <= 100 for p in heap.values()), heap
rows = [(vm["app"], t) for vm in d["vms"].values()
        for t in vm["views"].get("threads", {}).get("rows", [])]
# the query needs thread rows whose cpu is a number (or null before a delta)
assert len(rows) >= 3 * 10, len(rows)
assert all(t["cpu"] is None or isinstance(t["cpu"], (int, float)) for _, t in rows), rows[:3]
assert any(isinstance(t["cpu"], (int, float)) for _, t in rows), "no CPU figures at all"
busy = [(app, t["name"], t["cpu"]) for app, t in rows if (t["cpu"] or 0) > 10]
print("busy threads:", busy)
PY

# The exact one-liners of doc/json.md (lines starting "$ ddmon"), run through the
# server with jq if there is one; the first two must print something.
grep -E '^\$ ddmon .*\| jq ' "$DDM_TOP_SRCDIR/doc/json.md" | sed 's/^\$ ddmon //' >"$T_TMP/oneliners"
[ "$(wc -l <"$T_TMP/oneliners")" -ge 3 ] && t_ok "doc/json.md has the one-liners" \
    || t_fail "doc/json.md has the one-liners" "$(cat "$T_TMP/oneliners")"
if command -v jq >/dev/null 2>&1; then
    ok=1 n=0
    while IFS= read -r line; do
        n=$((n + 1))
        eval "t_ddmon --no-autostart $line" >"$T_TMP/jq.out" 2>"$T_TMP/jq.err" </dev/null \
            || { ok=0; echo "# ddmon $line: $(cat "$T_TMP/jq.err")"; }
        [ $n -gt 2 ] || [ -s "$T_TMP/jq.out" ] || { ok=0; echo "# ddmon $line: no output"; }
        sed 's/^/#   /' "$T_TMP/jq.out" | head -5
    done <"$T_TMP/oneliners"
    [ $ok = 1 ] && t_ok "the one-liners run with jq" || t_fail "the one-liners run with jq"
else
    t_ok "the one-liners run with jq # SKIP jq not installed"
fi
exit 0
