#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Build-time check that the ddmon binary exports every core function the
# web module calls, and nothing else (web/binary-exports.list; run by make
# after both are linked, web/local.mk). The module is linked with undefined
# symbols allowed and ddmon takes only the objects of libddmcore.a it needs,
# so a stale list would otherwise show only when `ddmon server --http`
# fails to load the module.
#
# usage: check-exports.sh LIST MODULE BINARY ARCHIVE...
#   LIST     web/binary-exports.list (the names ddmon exports)
#   MODULE   the built ddmon-web.so
#   BINARY   the built ddmon
#   ARCHIVE  the project's static libraries linked into BINARY: a symbol
#            they define, or any ddm_ symbol, is one the module takes from
#            the binary (the rest come from libsoup, glib, libc...).
# Exit 0 if the binary exports exactly what the module needs, else 1 with
# the names at fault.
set -eu
NM=${NM:-nm}
[ $# -ge 3 ] || { echo "usage: $0 LIST MODULE BINARY ARCHIVE..." >&2; exit 2; }
list=$1 module=$2 binary=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names in the list: "    name;" lines between the braces.
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$list" | LC_ALL=C sort -u >"$tmp/listed"
# What the module leaves undefined (versioned names come from libraries).
$NM -D --undefined-only "$module" | awk '{print $NF}' | grep -v '@' | LC_ALL=C sort -u >"$tmp/undef"
# What the project defines (any object, linked into the binary or not).
$NM -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 {print $3}' | LC_ALL=C sort -u >"$tmp/project"
# What the binary exports.
$NM -D --defined-only "$binary" | awk '{print $NF}' | sed 's/@.*//' | LC_ALL=C sort -u >"$tmp/exported"

{ grep '^ddm_' "$tmp/undef" || true; LC_ALL=C comm -12 "$tmp/undef" "$tmp/project"; } |
    LC_ALL=C sort -u >"$tmp/needed"

status=0
unlisted=$(LC_ALL=C comm -23 "$tmp/needed" "$tmp/listed")
if [ -n "$unlisted" ]; then
    echo "$list: ${module##*/} calls these, which are not listed (add them):" >&2
    echo "$unlisted" | sed 's/^/  /' >&2
    status=1
fi
unused=$(LC_ALL=C comm -13 "$tmp/needed" "$tmp/listed")
if [ -n "$unused" ]; then
    echo "$list: ${module##*/} does not call these; remove them (the binary exports only what the module needs):" >&2
    echo "$unused" | sed 's/^/  /' >&2
    status=1
fi
missing=$(LC_ALL=C comm -23 "$tmp/needed" "$tmp/exported")
if [ -n "$missing" ]; then
    echo "${binary##*/} does not export these, which ${module##*/} calls (listed but their object is not linked into ${binary##*/}, or not listed):" >&2
    echo "$missing" | sed 's/^/  /' >&2
    status=1
fi
exit $status
