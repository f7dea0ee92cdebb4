#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A snapshot whose discovery never settles and whose VM list never goes
# quiet is cut at its 30 s cap: it prints what there is, says so on stderr
# ("snapshot: views still changing after N ms; printing what there is"),
# exits 0, and --json has "settled": false. Discovery does not settle: a
# named port accepts and never answers the JDWP handshake (its timeout is
# 60 s); the list does not go quiet: an evilvm VM renames its app every
# 100 ms for longer than the cap (a rename is a change of the list, 500 ms
# without one would settle the snapshot). The cap is not an option (only
# --wait above 29.5 s raises it), so this test takes 30 s; nothing is
# timed, only the notice and "settled" are checked.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 3

python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])  # never a byte: the handshake never ends
' >"$T_TMP/mute.port" 2>"$T_TMP/mute.err" &
T_PIDS+=($!)
steps=(greet)
for _ in $(seq 1 200); do steps+=(send APNM apnm 5 serve 100 send APNM apnm 6 serve 100); done
"$DDM_TOP_BUILDDIR/tests/tools/evilvm" --port-file "$T_TMP/renamer.port" --app renamer --pid 4242 \
    "${steps[@]}" >"$T_TMP/renamer.out" 2>"$T_TMP/renamer.err" &
T_PIDS+=($!)
t_wait 10 test -s "$T_TMP/mute.port" -a -s "$T_TMP/renamer.port" \
    || t_fail "the mute port and the renaming VM listen" "$(cat "$T_TMP/mute.err" "$T_TMP/renamer.err")"
mute=$(cat "$T_TMP/mute.port")
renamer=$(awk '{print $2}' "$T_TMP/renamer.port")

t_ddmon --scan=none --handshake-timeout 60000 --connect "127.0.0.1:$mute" \
    --connect "127.0.0.1:$renamer" snapshot --in-process --wait 0 --json >"$T_TMP/snap.json" 2>"$T_TMP/snap.err"; rc=$?
[ $rc -eq 0 ] && grep -Eq "snapshot: views still changing after [0-9]+ ms; printing what there is$" "$T_TMP/snap.err" \
    && t_ok "cut at the cap: exit 0, the notice on stderr" \
    || t_fail "cut at the cap: exit 0, the notice on stderr" "rc=$rc" "$(cat "$T_TMP/snap.err")"
python3 - "$T_TMP/snap.json" "127.0.0.1:$mute" "127.0.0.1:$renamer" >"$T_TMP/check.out" 2>&1 <<'PY' \
    && t_ok "--json: \"settled\": false" || t_fail "--json: \"settled\": false" "$(cat "$T_TMP/check.out")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["settled"] is False, doc.get("settled")
PY
python3 - "$T_TMP/snap.json" "127.0.0.1:$mute" "127.0.0.1:$renamer" >"$T_TMP/check.out" 2>&1 <<'PY' \
    && t_ok "--json: what there is: the mute port in its handshake, the VM ready" \
    || t_fail "--json: what there is: the mute port in its handshake, the VM ready" "$(cat "$T_TMP/check.out")"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["key"]: r["state"] for r in doc["global"]["vms"]["rows"]}
assert rows == {sys.argv[2]: "handshake", sys.argv[3]: "ready"}, rows
PY
exit 0
