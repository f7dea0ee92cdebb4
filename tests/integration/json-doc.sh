#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# JSON documents (a plugin command's application/json result, doc/json.md)
# through the real server and CLI, made by the test plugin json-doc
# (tests/plugins/json-doc.c), so that the rule is checked apart from any
# one plugin: --json embeds the document parsed as the result's "data"
# (python's json reads it back equal to what the plugin wrote); the text is
# the indented outline; a document that is not JSON, nested one level past
# the cap or one byte past 32 MiB fails with exit 1, "ok": false and the
# reason; --out-dir writes the bytes as they were (also of one too large to
# show); another media type stays bytes.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
src="${DDM_TEST_PLUGIN_DIR:-$DDM_TOP_BUILDDIR/tests/plugins/.libs}/json-doc.so"
[ -f "$src" ] || t_skip_all "test plugin $src not built"
t_plan 10
PLUGINDIR="$T_TMP/plugins"
mkdir -p "$PLUGINDIR" && chmod 755 "$PLUGINDIR" && install -m 644 "$src" "$PLUGINDIR/json-doc.so"
t_start_server --scan=none --plugins json-doc || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
jd() { local name=$1; shift; t_ddmon --no-autostart "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"; echo $? >"$T_TMP/$name.rc"; }

# 1-2: a document: embedded parsed, and as an outline
jd tree json-doc tree --json
python3 - "$T_TMP/tree.out" "$(cat "$T_TMP/tree.rc")" <<'PY' >"$T_TMP/tree.cmp" 2>&1 \
    && t_ok "--json: the document is the result's data, as the plugin wrote it" \
    || t_fail "--json: the document is the result's data, as the plugin wrote it" "$(cat "$T_TMP/tree.cmp" "$T_TMP/tree.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0" and d["ok"] is True and d["schema"] == 1, d
r = d["result"]
assert r["kind"] == "blob" and r["media_type"] == "application/json" and "data_base64" not in r, r
assert r["data"] == {"schema": 1, "name": "t\"ree\u0007",
                     "root": {"class": "a.Root", "n": 3, "ok": True,
                              "children": [{"class": "b.Kid", "x": 1.5, "children": []}]}}, r["data"]
assert r["size_bytes"] == 129, r
PY
jd text json-doc tree
cat >"$T_TMP/text.want" <<'TXT'
tree
schema: 1
name: t"ree?
root: class=a.Root n=3 ok=yes
  children:
    - class=b.Kid x=1.5 children=[]
TXT
if [ "$(cat "$T_TMP/text.rc")" = 0 ] && cmp -s "$T_TMP/text.want" "$T_TMP/text.out"; then
    t_ok "text: the indented outline, the control character shown as ?"
else
    t_fail "text: the indented outline" "rc=$(cat "$T_TMP/text.rc")" "$(diff "$T_TMP/text.want" "$T_TMP/text.out")"
fi

# 3-5: not JSON, too deep, too large: exit 1, the reason, no document
for case in "bad|not JSON: <data>:1:5" "deep|a JSON document nested deeper than the 2048 levels ddmon reads" \
    "big|a JSON document of 33554433 bytes is larger than the 32 MiB ddmon reads"; do
    kind=${case%%|*} why=${case#*|}
    jd "$kind" json-doc "$kind" --json
    python3 - "$T_TMP/$kind.out" "$(cat "$T_TMP/$kind.rc")" "$why" <<'PY' >"$T_TMP/$kind.cmp" 2>&1 \
        && grep -qF "ddmon: the result of 'json-doc' cannot be read: $why" "$T_TMP/$kind.err" \
        && t_ok "$kind: exit 1, \"ok\": false, data null and the reason" \
        || t_fail "$kind: exit 1, \"ok\": false, data null and the reason" "$(cat "$T_TMP/$kind.cmp" "$T_TMP/$kind.err" | head -c 2000)"
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "1", sys.argv[2]
assert d["ok"] is False and d["code"] == 1 and d["kind"] == "failed", d
assert sys.argv[3] in d["error"] and d["result"]["data"] is None, d
assert d["result"]["data_error"] in d["error"], d
PY
done

# 6: text mode of a bad one: exit 1 and the reason, no outline
jd badtext json-doc bad
if [ "$(cat "$T_TMP/badtext.rc")" = 1 ] && grep -qF "cannot be read: not JSON" "$T_TMP/badtext.err" \
    && [ ! -s "$T_TMP/badtext.out" ]; then
    t_ok "text: a document that is not JSON fails with the reason"
else
    t_fail "text: a document that is not JSON fails with the reason" "rc=$(cat "$T_TMP/badtext.rc")" "$(cat "$T_TMP/badtext.err" "$T_TMP/badtext.out")"
fi

# 7: --out-dir writes the document's bytes as the plugin made them
mkdir -p "$T_TMP/out"
jd outdir --out-dir "$T_TMP/out" json-doc tree
f="$T_TMP/out/global-json-doc.json"
if [ "$(cat "$T_TMP/outdir.rc")" = 0 ] && [ -f "$f" ] && [ "$(wc -c <"$f")" = 129 ] \
    && python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["root"]["class"] == "a.Root"' "$f"; then
    t_ok "--out-dir: the document written to a .json file"
else
    t_fail "--out-dir: the document written to a .json file" "$(ls "$T_TMP/out")" "$(cat "$T_TMP/outdir.out" "$T_TMP/outdir.err")"
fi

# 8: one too large to read is still written with --out-dir (and exits 1)
mkdir -p "$T_TMP/outbig"
jd outbig --out-dir "$T_TMP/outbig" json-doc big
f="$T_TMP/outbig/global-json-doc.json"
if [ "$(cat "$T_TMP/outbig.rc")" = 1 ] && [ "$(stat -c %s "$f" 2>/dev/null)" = 33554433 ] \
    && grep -qF "larger than the 32 MiB ddmon reads (--out-dir writes it to a file)" "$T_TMP/outbig.err" \
    && grep -qxF "written to $f" "$T_TMP/outbig.out"; then
    t_ok "--out-dir: a document too large to show is written whole, exit 1 with the reason"
else
    t_fail "--out-dir: a document too large to show is written whole" "rc=$(cat "$T_TMP/outbig.rc")" \
        "$(ls -l "$T_TMP/outbig")" "$(head -c 1000 "$T_TMP/outbig.err")" "$(head -c 1000 "$T_TMP/outbig.out")"
fi
rm -f "$f"

# 9: another media type is no document
jd png json-doc png --json
python3 - "$T_TMP/png.out" <<'PY' >"$T_TMP/png.cmp" 2>&1 \
    && t_ok "image/png: bytes, no data member" || t_fail "image/png: bytes, no data member" "$(cat "$T_TMP/png.cmp")"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r["media_type"] == "image/png" and "data" not in r and "data_base64" not in r, r
PY

# 10: the server is still there
t_check "the server still answers" sh -c "\"$DDMON\" --socket \"$T_TMP/ddmon.sock\" --no-autostart version >/dev/null"
exit 0
