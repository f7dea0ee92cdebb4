#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/heapdecode-ir.sh: instructions per byte of run data for the heap
# segment decoder and for the tight loop (bench/heapdecode.c says what
# each is), counted by valgrind's callgrind inside each pass's function
# only (--toggle-collect), on a smaller heap than the timed bench (4 M
# units, 32 MiB). Instruction counts do not depend on the neighbours'
# load, so this is the figure to compare across runs on a shared machine.
#
# Usage: heapdecode-ir.sh [HEAPDECODE_BINARY] [UNITS]
# `make bench-heapdecode-ir` runs it on the build's bench/heapdecode.
set -eu
bin=${1:-./bench/heapdecode}
units=${2:-4194304}
command -v valgrind >/dev/null 2>&1 || { echo "heapdecode-ir: valgrind not installed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir MODE FUNCTION: prints "instructions run_bytes"
ir() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$2*" \
        "$bin" --units "$units" --only "$1" >"$tmp/out" 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    n=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/err")
    b=$(sed -n 's/^run_bytes \([0-9]*\)$/\1/p' "$tmp/out")
    echo "$n $b"
}

set -- $(ir loop pass_loop) $(ir decode pass_plugin) $(ir sum pass_sum)
awk -v li="$1" -v bytes="$2" -v di="$3" -v si="$5" -v units="$units" 'BEGIN {
    printf "heap of %d units, %d bytes of run data; instructions (callgrind Ir) per byte:\n", units, bytes
    printf "  tight loop (units per class)  %6.2f Ir/B\n", li / bytes
    printf "  sum only                      %6.2f Ir/B\n", si / bytes
    printf "  decode (every statistic)      %6.2f Ir/B  %5.2fx the tight loop\n", di / bytes, di / li
}'
