#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The ddmon binary that make builds carries server/slices.c's entry in its
# .preinit_array (GLib's slices from malloc before GLib's constructors
# run). The entry lives in no library: ddmon has it only because
# cli/local.mk lists server/slices.c in ddmon's own sources, so this checks
# the linked binary itself, with binutils' nm and readelf: the symbol
# ddm_preinit_slices lies inside the .preinit_array section. (Sanitizer
# builds add ASan's own entry there, so the section alone proves nothing.)
# test-server checks what the entry does (test_server_slices_from_malloc).
set -u
: "${DDM_TOP_BUILDDIR:?run under make check}"
ddmon="$DDM_TOP_BUILDDIR/ddmon"
NM=${NM:-nm}
READELF=${READELF:-readelf}

for tool in "$NM" "$READELF"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
[ -x "$ddmon" ] || { echo "1..0 # SKIP $ddmon is not built"; exit 0; }
"$READELF" -h "$ddmon" >/dev/null 2>&1 || { echo "1..0 # SKIP $ddmon is not an ELF file (no .preinit_array)"; exit 0; }

echo "1..2"
failed=0
# readelf -SW: "[Nr] Name Type Address Off Size ..."; [Nr] may be one
# field or two ("[ 5]"), so count from the name.
section=$("$READELF" -SW "$ddmon" |
    awk '{ for (i = 1; i <= NF; i++) if ($i == ".preinit_array") { print $(i + 2), $(i + 4); exit } }')
if [ -n "$section" ]; then
    echo "ok 1 - ddmon has a .preinit_array section ($section)"
else
    echo "not ok 1 - ddmon has a .preinit_array section"
    "$READELF" -SW "$ddmon" | grep -i 'array' | sed 's/^/# /'
    failed=1
fi

symbol=$("$NM" "$ddmon" | awk '$3 == "ddm_preinit_slices" { print $1; exit }')
read -r start size <<<"${section:-0 0}"
if [ -n "$symbol" ] && [ $((16#$symbol)) -ge $((16#$start)) ] &&
    [ $((16#$symbol)) -lt $((16#$start + 16#$size)) ]; then
    echo "ok 2 - ddm_preinit_slices (0x$symbol) is in ddmon's .preinit_array"
else
    echo "not ok 2 - ddm_preinit_slices is in ddmon's .preinit_array"
    echo "# symbol: ${symbol:-not in the list nm prints}; .preinit_array: address ${start} size ${size}"
    failed=1
fi
# Run by hand, the status says whether a check failed; under make check
# (DDM_TAP_COUNTS_FAILURES=1) the TAP driver counts the "not ok" lines.
[ "${DDM_TAP_COUNTS_FAILURES:-0}" = 1 ] || exit "$failed"
