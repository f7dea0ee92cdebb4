#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The "vms" list keeps its rows in the view itself and writes again only
# the rows that changed (core/daemon/vms_rows.c): a target that moves
# from "retrying" to a VM and back, beside VMs that do not change, leaves
# each key listed once, the retrying targets first, each group in key
# order, the unchanged rows as they were, and the text and JSON forms
# the same rows.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_plan 4
# one block, so that neither the control port nor the relay's debugger
# ports (taken from --debug-port-base up) can land on late or closed,
# which nothing listens on when the server starts: base and base + 1 the
# simulator's VMs, late, closed, the control port, then 8 for the relay
base=$(t_free_ports 13) || t_skip_all "no free ports"
late=$((base + 2)) closed=$((base + 3))
t_start_simvm --vms 2 --base-port "$base" --port-file "$T_TMP/ports" --gc-every 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=none --connect "127.0.0.1:$base" --connect "127.0.0.1:$((base + 1))" \
    --connect "127.0.0.1:$late" --connect "127.0.0.1:$closed" --selected-port "$((base + 4))" \
    --debug-port-base "$((base + 5))" || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"

# check_rows FILE READY...: FILE (the --json list) holds the four keys once
# each, those named ready and the others retrying, retrying first, each
# group in key order
check_rows() {
    python3 - "$@" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
ready = {"127.0.0.1:" + p for p in sys.argv[2:]}
keys = [r["key"] for r in rows]
assert len(keys) == 4 and len(set(keys)) == 4, keys
states = [r["state"] for r in rows]
want = {k: "ready" if k in ready else "retrying" for k in keys}
assert all(states[i] == want[k] for i, k in enumerate(keys)), list(zip(keys, states))
groups = ["ready" if s == "ready" else "retrying" for s in states]
n_retrying = groups.count("retrying")
assert groups == ["retrying"] * n_retrying + ["ready"] * (4 - n_retrying), groups
assert keys[:n_retrying] == sorted(keys[:n_retrying]) and keys[n_retrying:] == sorted(keys[n_retrying:]), keys
PY
}
list_is() { # list_is READY...: the list is as check_rows says
    t_ddmon --no-autostart --json vms >"$T_TMP/vms.json" 2>/dev/null && check_rows "$T_TMP/vms.json" "$@" >"$T_TMP/check.out" 2>&1
}
two="$base $((base + 1))"
# shellcheck disable=SC2086
t_wait 20 list_is $two && t_ok "two VMs ready, two targets retrying first, each key once, in order" \
    || t_fail "two VMs ready, two targets retrying first, each key once, in order" "$(cat "$T_TMP/check.out" "$T_TMP/vms.json")"
jq -c '[.rows[] | select(.state == "ready")]' "$T_TMP/vms.json" >"$T_TMP/ready-before.json"

"$SIMVM" --vms 1 --base-port "$late" --port-file "$T_TMP/ports-late" --gc-every 0 >"$T_TMP/late.out" 2>&1 &
LATE=$!
T_PIDS+=("$LATE")
# shellcheck disable=SC2086
t_wait 40 list_is $two "$late" && t_ok "the late target becomes a VM: its row moves to the VMs, once" \
    || t_fail "the late target becomes a VM: its row moves to the VMs, once" "$(cat "$T_TMP/check.out" "$T_TMP/vms.json")"

kill "$LATE"
# shellcheck disable=SC2086
t_wait 40 list_is $two && t_ok "it goes: its row is retrying again, first, once" \
    || t_fail "it goes: its row is retrying again, first, once" "$(cat "$T_TMP/check.out" "$T_TMP/vms.json")"

# the unchanged VMs' rows as they were (threads counts may move: compare
# what does not), and the text form lists the same four keys in the same order
jq -c '[.rows[] | select(.state == "ready") | del(.info, .threads_count)]' "$T_TMP/vms.json" >"$T_TMP/ready-after.json"
jq -c '[.[] | del(.info, .threads_count)]' "$T_TMP/ready-before.json" >"$T_TMP/ready-before2.json"
t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1
awk 'NR > 1 {print $1}' "$T_TMP/vms.txt" >"$T_TMP/text-keys"
jq -r '.rows[].key' "$T_TMP/vms.json" >"$T_TMP/json-keys"
cmp -s "$T_TMP/ready-before2.json" "$T_TMP/ready-after.json" && cmp -s "$T_TMP/text-keys" "$T_TMP/json-keys" \
    && t_ok "the unchanged rows are as they were; text and JSON list the same rows" \
    || t_fail "the unchanged rows are as they were; text and JSON list the same rows" \
        "$(cat "$T_TMP/ready-before2.json" "$T_TMP/ready-after.json" "$T_TMP/vms.txt" "$T_TMP/json-keys")"
