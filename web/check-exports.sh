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
# the names at fault; 2 when it cannot tell (nm missing or failing, an
# input not built), naming that cause.
set -eu
NM=${NM:-nm}
[ $# -ge 3 ] || { echo "usage: $0 LIST MODULE BINARY ARCHIVE..." >&2; exit 2; }
list=$1 module=$2 binary=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each input must exist and each nm must succeed: a failure would read as
# empty symbol lists (then every listed name looks unused).
command -v "${NM%% *}" >/dev/null 2>&1 || {
    echo "$0: cannot run nm: '${NM%% *}' not found (set NM)" >&2
    exit 2
}
for f in "$list" "$module" "$binary" "$@"; do
    [ -f "$f" ] || { echo "$0: $f does not exist (not built?)" >&2; exit 2; }
done
# run_nm OUT ARGS...: nm ARGS into OUT; on failure, say so with nm's words.
run_nm() {
    out=$1
    shift
    if ! $NM "$@" >"$out" 2>"$tmp/nm.err"; then
        echo "$0: '$NM $*' failed:" >&2
        sed -n '1,5s/^/  /p' "$tmp/nm.err" >&2
        exit 2
    fi
}

# The names in the list: "    name;" lines between the braces.
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$list" | LC_ALL=C sort -u >"$tmp/listed"
# What the module leaves undefined (versioned names come from libraries).
run_nm "$tmp/undef.nm" -D --undefined-only "$module"
awk '{print $NF}' "$tmp/undef.nm" | grep -v '@' | LC_ALL=C sort -u >"$tmp/undef" || true
# What the project defines (any object, linked into the binary or not;
# nm's "no symbols" notes for empty objects are not failures).
run_nm "$tmp/project.nm" -g --defined-only "$@"
awk 'NF == 3 {print $3}' "$tmp/project.nm" | LC_ALL=C sort -u >"$tmp/project"
# What the binary exports.
run_nm "$tmp/exported.nm" -D --defined-only "$binary"
awk '{print $NF}' "$tmp/exported.nm" | sed 's/@.*//' | LC_ALL=C sort -u >"$tmp/exported"
[ -s "$tmp/undef" ] && [ -s "$tmp/exported" ] || {
    echo "$0: nm found no dynamic symbols in ${module} or ${binary}: not a dynamically linked build?" >&2
    exit 2
}

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
# And nothing else of the project: a flag such as -rdynamic would export
# every core function to every plugin.
extra=$({ grep '^ddm_' "$tmp/exported" || true; LC_ALL=C comm -12 "$tmp/exported" "$tmp/project"; } |
    LC_ALL=C sort -u | LC_ALL=C comm -23 - "$tmp/listed")
if [ -n "$extra" ]; then
    echo "${binary##*/} exports these, which the list does not name (is it linked with -rdynamic or --export-dynamic?):" >&2
    echo "$extra" | sed 's/^/  /' >&2
    status=1
fi
exit $status
