#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The viewdebug plugin through the real ddmon and ddmon-simvm (ground
# truth: the state file's "views", what the simulator sent): `ui windows`
# lists the simulator's windows; `ui dump` (text and --json, with and
# without --properties) gives its tree (--json: nested objects walked
# against the simulator's nesting: class, hash, id, bounds, children in
# order, typed properties; text: the indented outline); `ui capture` writes the very PNG it sent
# (sha256), which python's zlib/struct and file(1) read as a PNG of the
# view's size, and leaves no .part; `ui theme` gives its attributes (their
# text hashes to what it sent); an unknown window or view shows the VM's
# FAIL message and exits 3 without a file; a Dalvik VM answers too; a VM
# whose FEAT lacks view-hierarchy is refused without a request.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins viewdebug || t_skip_all "the viewdebug plugin was configured out"
t_plan 16
chmod 700 "$T_TMP"
mkdir -p "$T_TMP/out"

t_start_simvm --vms 1 --app com.example.inbox --base-port 0 --port-file "$T_TMP/a.ports" \
    --state-file "$T_TMP/a.json" --gc-every 0 --thread-activity 0 --seed 7
t_start_simvm --vms 1 --app com.example.dalvik --mode dalvik --base-port 0 --port-file "$T_TMP/d.ports" \
    --state-file "$T_TMP/d.json" --gc-every 0 --thread-activity 0 --seed 8
t_start_simvm --vms 1 --app com.example.noviews --base-port 0 --port-file "$T_TMP/n.ports" \
    --state-file "$T_TMP/n.json" --gc-every 0 --thread-activity 0 --no-view-hierarchy
for p in a d n; do t_wait 10 test -s "$T_TMP/$p.ports"; done
ports=$(cat "$T_TMP"/*.ports | awk '{print $2}' | sort -n | paste -sd,)
t_start_server --scan=local --scan-ports "$ports" --selected-port 0 --debug-port-base 0 \
    --request-timeout 3000 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" -ge 3 ]; }
t_wait 20 ready || t_diag "$T_TMP/vms.txt"
ui() { t_ddmon --no-autostart ui "$@"; }
# views STATE EXPR: python expression over the VM's "views" object v
views() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["vms"][0]["views"]; print(eval(sys.argv[2]))' "$@"; }

# 1-2: windows, text and JSON
ui com.example.inbox windows >"$T_TMP/win.txt" 2>&1; rc=$?
t_wait 5 test -n "$(views "$T_TMP/a.json" 'v and v["vulw"]' 2>/dev/null)"
W0=$(views "$T_TMP/a.json" 'v["windows"][0]')
W1=$(views "$T_TMP/a.json" 'v["windows"][1]')
if [ $rc = 0 ] && grep -qxF "    0  $W0" "$T_TMP/win.txt" && grep -qxF "    1  $W1" "$T_TMP/win.txt" \
    && case $W0 in com.example.inbox/com.example.inbox.MainActivity/android.view.ViewRootImpl@*) true ;; *) false ;; esac; then
    t_ok "ui windows lists the simulator's windows"
else
    t_fail "ui windows lists the simulator's windows" "rc=$rc $(cat "$T_TMP/win.txt")" "truth: $W0 | $W1"
fi
ui com.example.inbox windows --json >"$T_TMP/win.json" 2>&1
python3 - "$T_TMP/win.json" "$T_TMP/a.json" <<'EOF' >"$T_TMP/win.cmp" 2>&1 \
    && t_ok "ui windows --json: rows equal the simulator's windows, in order" \
    || t_fail "ui windows --json: rows equal the simulator's windows, in order" "$(cat "$T_TMP/win.cmp")"
import json, sys
d = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))["vms"][0]["views"]["windows"]
assert d["schema"] == 1 and d["ok"], d
rows = d["result"]["rows"]
assert [r["window"] for r in rows] == truth, (rows, truth)
assert [r["index"] for r in rows] == list(range(len(truth)))
EOF

# compare.py JSON STATE PROPS WINDOW: the dump's nested tree (the result's
# "data", an application/json result embedded by --json) against the
# simulator's tree, view by view in the same nesting and order
cat >"$T_TMP/compare.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))["vms"][0]["views"]
props = sys.argv[3] == "1"
assert d["ok"] and d["schema"] == 1, d
last = v["last_dump"]
assert last["properties"] == props and last["window"] == sys.argv[4], last
res = d["result"]
assert res["kind"] == "blob" and res["media_type"] == "application/json" and "data_base64" not in res, res
doc = res["data"]
assert doc["schema"] == 1 and doc["window"] == sys.argv[4] and doc["properties"] == props, doc
def typed(s):  # a value as the plugin types it: by its form
    if s in ("true", "false"): return s == "true"
    try: return int(s) if str(int(s)) == s else s
    except ValueError: return s
count = 0
def walk(mine, n, path):
    global count
    count += 1
    assert mine["class"] == n["class"] and mine["hash"] == n["hash"], (path, mine["class"], n)
    assert len(mine["children"]) == len(n["children"]), (path, len(mine["children"]), n)
    if props:
        assert mine["id"] == n["id"], (path, mine["id"], n["id"])
        b = mine["bounds"]
        assert (b["left"], b["top"], b["right"], b["bottom"]) == (n["left"], n["top"], n["right"], n["bottom"]), (path, b, n)
        p = mine["properties"]
        want = {"mID": n["id"], "layout:mLeft": n["left"], "layout:mTop": n["top"],
                "layout:mRight": n["right"], "layout:mBottom": n["bottom"],
                "layout:getWidth()": n["right"] - n["left"], "layout:getHeight()": n["bottom"] - n["top"],
                "drawing:getAlpha()": 1.0, "focus:hasFocus()": False,
                "getVisibility()": "GONE" if (n["left"], n["top"]) == (n["right"], n["bottom"]) else "VISIBLE"}
        if "text" in n:
            want["text:mText"] = typed(n["text"])
        for k, w in want.items():
            assert p[k] == w and type(p[k]) == type(w), (path, k, p.get(k), w)
        assert len(p) == len(want), (path, sorted(p), sorted(want))
    else:
        assert mine["id"] is None and mine["bounds"] is None and "properties" not in mine, (path, mine)
    for i, (c, t) in enumerate(zip(mine["children"], n["children"])):
        walk(c, t, path + [i])
walk(doc["root"], last["tree"], [])
assert count == last["views"] == doc["views"], (count, last["views"], doc["views"])
print(count, "views match")
EOF

# 3-5: dump, --json and text, with and without properties
ui com.example.inbox dump "$W0" --json >"$T_TMP/dump.json" 2>&1; rc=$?
t_wait 5 t_is 1 views "$T_TMP/a.json" 'v["dumps"]'
python3 "$T_TMP/compare.py" "$T_TMP/dump.json" "$T_TMP/a.json" 0 "$W0" >"$T_TMP/dump.cmp" 2>&1 && [ $rc = 0 ] \
    && t_ok "ui dump --json: the nested tree's classes, hashes and children equal the simulator's ($(cat "$T_TMP/dump.cmp"))" \
    || t_fail "ui dump --json: the nested tree's classes, hashes and children equal the simulator's" \
        "rc=$rc $(tail -5 "$T_TMP/dump.cmp")"
ui com.example.inbox dump "$W0" --properties --json >"$T_TMP/dumpp.json" 2>&1; rc=$?
t_wait 5 t_is 2 views "$T_TMP/a.json" 'v["dumps"]'
python3 "$T_TMP/compare.py" "$T_TMP/dumpp.json" "$T_TMP/a.json" 1 "$W0" >"$T_TMP/dumpp.cmp" 2>&1 && [ $rc = 0 ] \
    && t_ok "ui dump --properties --json: ids, bounds and typed properties (texts by UTF-16 length) equal the simulator's" \
    || t_fail "ui dump --properties --json: ids, bounds and typed properties equal the simulator's" \
        "rc=$rc $(tail -5 "$T_TMP/dumpp.cmp")"
ui com.example.inbox dump "$W1" >"$T_TMP/dump1.txt" 2>&1; rc=$?
t_wait 5 t_is 3 views "$T_TMP/a.json" 'v["dumps"]'
python3 - "$T_TMP/dump1.txt" "$T_TMP/a.json" <<'EOF' >"$T_TMP/dump1.cmp" 2>&1 \
    && t_ok "ui dump (text) of the popup: the indented tree the simulator sent" \
    || t_fail "ui dump (text) of the popup: the indented tree the simulator sent" "$(cat "$T_TMP/dump1.cmp" "$T_TMP/dump1.txt")"
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
last = json.load(open(sys.argv[2]))["vms"][0]["views"]["last_dump"]
want = []
def walk(n, d):
    want.append((d, n["class"], n["hash"]))
    for c in n["children"]:
        walk(c, d + 1)
walk(last["tree"], 0)
assert "3 views in PopupWindow:" in lines[0], lines[0]
assert "window: " + last["window"] in lines, lines
# the outline: "root: class=C hash=H ...", each child a "- class=..." line
# 4 spaces further in than its parent
got = []
for l in lines:
    m = re.match(r"^( *)(root: |- )class=(\S+) hash=(\S+) ", l)
    if m:
        got.append((len(m.group(1)) // 4, m.group(3), m.group(4)))
assert got == want, (got, want)
EOF

# 6-8: capture: the simulator's PNG, read by python and file(1), no .part
(cd "$T_TMP/out" && ui com.example.inbox capture "$W0" com.example.inbox:id/fab fab.png --json >"$T_TMP/cap.json" 2>&1); rc=$?
t_wait 5 test -n "$(views "$T_TMP/a.json" 'v["last_capture"] and v["last_capture"]["sha256"]' 2>/dev/null)"
sha=$(sha256sum "$T_TMP/out/fab.png" 2>/dev/null | awk '{print $1}')
if [ $rc = 0 ] && [ -n "$sha" ] && [ "$sha" = "$(views "$T_TMP/a.json" 'v["last_capture"]["sha256"]')" ] \
    && [ "$(stat -c %s "$T_TMP/out/fab.png")" = "$(views "$T_TMP/a.json" 'v["last_capture"]["bytes"]')" ]; then
    t_ok "ui capture: FILE (relative to the client's directory) is byte for byte the PNG the simulator sent"
else
    t_fail "ui capture: FILE is byte for byte the PNG the simulator sent" "rc=$rc $(cat "$T_TMP/cap.json")" \
        "ls: $(ls -la "$T_TMP/out")"
fi
python3 - "$T_TMP/out/fab.png" "$T_TMP/a.json" "$T_TMP/cap.json" <<'EOF' >"$T_TMP/png.cmp" 2>&1 \
    && t_ok "the capture is a PNG of the view's size (python zlib/struct: IHDR, CRCs, IDAT inflates to the rows)" \
    || t_fail "the capture is a PNG of the view's size" "$(cat "$T_TMP/png.cmp")"
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
cap = json.load(open(sys.argv[2]))["vms"][0]["views"]["last_capture"]
res = json.load(open(sys.argv[3]))["result"]["fields"]
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, chunks = 8, []
while pos < len(data):
    n, t = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert zlib.crc32(t + body) & 0xffffffff == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0], t
    chunks.append((t, body))
    pos += 12 + n
assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
w, h, depth, ctype = struct.unpack(">IIBB", chunks[0][1][:10])
assert (w, h) == (cap["width"], cap["height"]) == (res["width"], res["height"]) == (147, 147), (w, h, cap, res)
raw = zlib.decompress(b"".join(b for t, b in chunks if t == b"IDAT"))
assert depth == 8 and ctype == 6 and len(raw) == h * (1 + 4 * w), (depth, ctype, len(raw))
assert res["file"].endswith("/out/fab.png") and res["size_bytes"] == len(data), res
EOF
if [ ! -e "$T_TMP/out/fab.png.part" ] && file "$T_TMP/out/fab.png" | grep -q "PNG image data, 147 x 147"; then
    t_ok "file(1) agrees; no .part is left"
else
    t_fail "file(1) agrees; no .part is left" "$(file "$T_TMP/out/fab.png"; ls -la "$T_TMP/out")"
fi

# 9: theme: the attributes, whose text is what the simulator sent
ui com.example.inbox theme "$W0" --json >"$T_TMP/theme.json" 2>&1; rc=$?
t_wait 5 test -n "$(views "$T_TMP/a.json" 'v["last_theme"] and v["last_theme"]["sha256"]' 2>/dev/null)"
python3 - "$T_TMP/theme.json" "$T_TMP/a.json" <<'EOF' >"$T_TMP/theme.cmp" 2>&1 && [ $rc = 0 ] \
    && t_ok "ui theme: the attributes rebuild the dump the simulator sent (sha256)" \
    || t_fail "ui theme: the attributes rebuild the dump the simulator sent" "rc=$rc $(cat "$T_TMP/theme.cmp")"
import hashlib, json, sys
rows = json.load(open(sys.argv[1]))["result"]["rows"]
truth = json.load(open(sys.argv[2]))["vms"][0]["views"]["last_theme"]["sha256"]
text = "".join(r["attribute"] + "\n" + r["value"] + "\n" for r in rows) + "DONE.\n"
assert len(rows) > 5 and rows[0]["attribute"] == "android:attr/colorPrimary", rows
assert hashlib.sha256(text.encode()).hexdigest() == truth, (text, truth)
EOF

# 10-11: the VM's FAIL, shown; exit 3; no file
ui com.example.inbox dump "no.such/window" >"$T_TMP/bad.out" 2>"$T_TMP/bad.err"; rc=$?
t_wait 5 t_is "Invalid View Root" views "$T_TMP/a.json" 'v["last_fail"]["message"]'
if [ $rc = 3 ] && grep -q "the VM said: Invalid View Root (code -2" "$T_TMP/bad.err" \
    && [ "$(views "$T_TMP/a.json" 'v["last_fail"]["code"]')" = -2 ]; then
    t_ok "an unknown window: the VM's FAIL(-2) message, exit 3"
else
    t_fail "an unknown window: the VM's FAIL(-2) message, exit 3" "rc=$rc $(cat "$T_TMP/bad.out" "$T_TMP/bad.err")"
fi
ui com.example.inbox capture "$W0" android.view.View@1 "$T_TMP/out/none.png" >"$T_TMP/badv.out" 2>"$T_TMP/badv.err"; rc=$?
if [ $rc = 3 ] && grep -q "the VM said: Invalid target view (code -2" "$T_TMP/badv.err" \
    && [ ! -e "$T_TMP/out/none.png" ] && [ ! -e "$T_TMP/out/none.png.part" ]; then
    t_ok "an unknown view: the VM's FAIL message, exit 3, no file and no .part"
else
    t_fail "an unknown view: the VM's FAIL message, exit 3, no file and no .part" \
        "rc=$rc $(cat "$T_TMP/badv.out" "$T_TMP/badv.err"; ls -la "$T_TMP/out")"
fi

# 12: a Dalvik VM (empty replies elsewhere) answers the same requests
ui com.example.dalvik windows --json >"$T_TMP/dw.json" 2>&1; rc_w=$?
t_wait 5 test -n "$(views "$T_TMP/d.json" 'v and v["vulw"]' 2>/dev/null)"
DW=$(views "$T_TMP/d.json" 'v["windows"][0]')
ui com.example.dalvik dump "$DW" --properties --json >"$T_TMP/dd.json" 2>&1; rc_d=$?
t_wait 5 t_is 1 views "$T_TMP/d.json" 'v["dumps"]'
python3 "$T_TMP/compare.py" "$T_TMP/dd.json" "$T_TMP/d.json" 1 "$DW" >"$T_TMP/dd.cmp" 2>&1 \
    && [ $rc_w = 0 ] && [ $rc_d = 0 ] \
    && t_ok "a Dalvik VM: windows and its tree with properties" \
    || t_fail "a Dalvik VM: windows and its tree with properties" "windows rc=$rc_w dump rc=$rc_d $(tail -5 "$T_TMP/dd.cmp")"

# 13: no view-hierarchy in FEAT: refused by ddmon, no request sent
ui com.example.noviews windows >"$T_TMP/nv.out" 2>"$T_TMP/nv.err"; rc=$?
sleep 0.3
if [ $rc = 1 ] && grep -q "its FEAT list does not name view-hierarchy" "$T_TMP/nv.err" \
    && [ "$(views "$T_TMP/n.json" 'v')" = None ]; then
    t_ok "a VM without view-hierarchy in FEAT is refused, and never asked"
else
    t_fail "a VM without view-hierarchy in FEAT is refused, and never asked" \
        "rc=$rc $(cat "$T_TMP/nv.out" "$T_TMP/nv.err")" "state: $(views "$T_TMP/n.json" 'v')"
fi

# 14-15: a window named by a part of its name, or by its index
ui com.example.inbox dump MainActivity --json >"$T_TMP/sel.json" 2>&1; rc=$?
t_wait 5 t_is 4 views "$T_TMP/a.json" 'v["dumps"]'
python3 "$T_TMP/compare.py" "$T_TMP/sel.json" "$T_TMP/a.json" 0 "$W0" >"$T_TMP/sel.cmp" 2>&1 && [ $rc = 0 ] \
    && t_ok "ui dump MainActivity: the one window whose name holds it" \
    || t_fail "ui dump MainActivity: the one window whose name holds it" "rc=$rc $(tail -5 "$T_TMP/sel.cmp")"
ui com.example.inbox dump 5 >"$T_TMP/sel5.out" 2>&1; rc=$?
[ $rc = 3 ] && grep -q "has 2 windows, and none is '5'" "$T_TMP/sel5.out" \
    && [ "$(views "$T_TMP/a.json" 'v["dumps"]')" = 4 ] \
    && t_ok "an index past the windows: not found, and no dump asked" \
    || t_fail "an index past the windows: not found, and no dump asked" "rc=$rc $(cat "$T_TMP/sel5.out")"

# 16: usage
ui com.example.inbox dump >"$T_TMP/u.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "usage: ui VM windows" "$T_TMP/u.out" \
    && t_ok "a bad command line gets the usage, exit 2" \
    || t_fail "a bad command line gets the usage, exit 2" "rc=$rc $(cat "$T_TMP/u.out")"

