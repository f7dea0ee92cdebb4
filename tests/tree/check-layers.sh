#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/check-layers on the source tree (the parts include each other only
# downwards, plugins see only the SDK), and on small made-up trees that prove
# it fails on each kind of fault it is meant to catch. TAP.
set -u
: "${DDM_TOP_SRCDIR:?run under make check}"
CHECK="$DDM_TOP_SRCDIR/tools/check-layers"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is not installed"; exit 0; }

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-layers.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT
N=0
FAILED=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; sed 's/^/# /' "$T_TMP/out" "$T_TMP/err"; }

# run ROOT [ARGS...]: the checker on ROOT; sets RC, output in $T_TMP/out, err.
run() {
    local root=$1; shift
    python3 "$CHECK" --root "$root" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
    RC=$?
}
# put TREE FILE LINE...: write FILE (relative to TREE) with the given lines.
put() {
    local tree=$1 f=$2; shift 2
    mkdir -p "$(dirname "$tree/$f")"
    printf '%s\n' "$@" >"$tree/$f"
}
# A small tree that keeps every rule: each kind of part, one include down.
good_tree() {
    local t=$1
    rm -rf "$t"
    put "$t" sdk/include/ddmon/plugin.h '#include <ddmon/abi.h>' '#include <stdint.h>'
    put "$t" sdk/include/ddmon/abi.h.in '#define DDM_ABI_MAJOR @DDM_ABI_MAJOR@'
    put "$t" core/wire/jdwp.h '#include <ddmon/plugin.h>'
    put "$t" core/transport/target.h '#include "core/wire/jdwp.h"'
    put "$t" core/session/vm.h '#include "core/transport/target.h"' '#include "core/session/vm.h"'
    put "$t" core/relay/relay.c '#include "core/session/vm.h"' '#include "build-config.h"'
    put "$t" server/server.c '#include "core/relay/relay.h"'
    put "$t" core/relay/relay.h '#include <glib.h>'
    put "$t" plugins/heap/heap.c '#include "heap.h"' '#include <ddmon/plugin.h>'
    put "$t" plugins/heap/heap.h '#include <ddmon/plugin.h>'
    put "$t" tools/simvm/simvm.c '#include "core/wire/jdwp.h"' '#include "simvm.h"'
    put "$t" tools/simvm/simvm.h ''
}

echo "1..10"

# 1. The real tree.
run "$DDM_TOP_SRCDIR"
if [ "$RC" -eq 0 ]; then ok "the source tree keeps the layering"; else not_ok "the source tree keeps the layering"; fi

# 2. --dot on the real tree is a Graphviz digraph with the same edges.
run "$DDM_TOP_SRCDIR"
edges=$(grep -c ' -> ' "$T_TMP/out")
run "$DDM_TOP_SRCDIR" --dot
if head -n 1 "$T_TMP/out" | grep -qx 'digraph layers {' && tail -n 1 "$T_TMP/out" | grep -qx '}' \
    && [ "$(grep -c ' -> ' "$T_TMP/out")" -eq "$edges" ] && [ "$edges" -gt 0 ]; then
    ok "--dot prints the same $edges edges as a digraph"
else
    not_ok "--dot prints the same edges as a digraph"
fi

G="$T_TMP/good"
# 3. A tree that keeps the rules passes and shows its edges.
good_tree "$G"
run "$G"
if [ "$RC" -eq 0 ] && [ ! -s "$T_TMP/err" ] \
    && grep -qx 'core/session -> core/transport  (1 include, e.g. core/session/vm.h:1)' "$T_TMP/out" \
    && grep -q '^core/relay -> configure ' "$T_TMP/out" \
    && grep -q '^tools/simvm -> core/wire ' "$T_TMP/out" && grep -q '^plugins/heap -> sdk ' "$T_TMP/out" \
    && ! grep -q '^core/session -> core/session' "$T_TMP/out"; then
    ok "a layered tree passes and its graph lists each edge once"
else
    not_ok "a layered tree passes and its graph lists each edge once"
fi

# 4. An upward edge: the session includes a relay header.
good_tree "$G"
put "$G" core/session/vm.c '#include <stdio.h>' '#include "core/relay/relay.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'upward edge core/session (rank 3) -> core/relay (rank 4)' "$T_TMP/err" \
    && grep -q 'core/session/vm.c:2: #include "core/relay/relay.h"' "$T_TMP/err"; then
    ok "an upward edge fails, naming the include"
else
    not_ok "an upward edge fails, naming the include"
fi

# 5. A cycle between two folders of the same rank (no edge is upward).
good_tree "$G"
put "$G" core/discovery/scan.h '#include "core/relay/relay.h"'
put "$G" core/relay/ports.c '#include "core/discovery/scan.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'cycle between folders: core/discovery -> core/relay -> core/discovery' "$T_TMP/err" \
    && grep -q 'core/discovery/scan.h:1: #include "core/relay/relay.h"' "$T_TMP/err" \
    && grep -q 'core/relay/ports.c:1: #include "core/discovery/scan.h"' "$T_TMP/err" \
    && ! grep -q upward "$T_TMP/err"; then
    ok "a cycle between folders of one rank fails, naming both includes"
else
    not_ok "a cycle between folders of one rank fails, naming both includes"
fi

# 6. A plugin that includes another plugin's header and a core header.
good_tree "$G"
put "$G" plugins/nativeheap/nh.c '#include "../heap/heap.h"' '#include "core/wire/jdwp.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'plugin plugins/nativeheap includes plugins/heap' "$T_TMP/err" \
    && grep -q 'plugin plugins/nativeheap includes core/wire' "$T_TMP/err" \
    && grep -q 'plugins/nativeheap/nh.c:1: #include "../heap/heap.h"' "$T_TMP/err"; then
    ok "a plugin including outside sdk/ and itself fails"
else
    not_ok "a plugin including outside sdk/ and itself fails"
fi

# 7. The simulated VM includes a part of the core above core/wire.
good_tree "$G"
put "$G" tools/simvm/world.c '#include "core/session/vm.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'tools/simvm includes core/session' "$T_TMP/err" \
    && grep -q 'tools/simvm/world.c:1:' "$T_TMP/err"; then
    ok "tools/simvm including core/ beyond core/wire fails"
else
    not_ok "tools/simvm including core/ beyond core/wire fails"
fi

# 8. Core headers are spelled from the top; a quoted include must resolve.
good_tree "$G"
put "$G" core/relay/map.c '#include "../session/vm.h"' '#include "core/relay/nothere.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'write the include from the top of the tree as "core/session/vm.h"' "$T_TMP/err" \
    && grep -q 'core/relay/map.c:2: #include "core/relay/nothere.h"' "$T_TMP/err"; then
    ok "a relative core include and an include of no file fail"
else
    not_ok "a relative core include and an include of no file fail"
fi

# 9. A new part folder must be given a rank before it may include anything.
good_tree "$G"
put "$G" core/stats/stats.c '#include "core/wire/jdwp.h"'
run "$G"
if [ "$RC" -eq 1 ] && grep -q 'core/stats: folder has no rank in the table' "$T_TMP/err"; then
    ok "a folder missing from the rank table fails"
else
    not_ok "a folder missing from the rank table fails"
fi

# 10. A directory that is no source tree is a usage error, not a pass.
mkdir -p "$T_TMP/empty"
run "$T_TMP/empty"
if [ "$RC" -eq 2 ]; then ok "a root without the parts is an error"; else not_ok "a root without the parts is an error"; fi

[ "$FAILED" -eq 0 ]
