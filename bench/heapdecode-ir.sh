#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/heapdecode-ir.sh: instructions per byte of run data for the heap
# segment decoder and for the tight loop (bench/heapdecode.c says what
# each is), counted by valgrind's callgrind inside each pass's function
# only (--toggle-collect), on a smaller heap than the timed bench (4 M
# units, 32 MiB). Instruction counts do not depend on the neighbours'
# load, so this is the figure to compare across runs on a shared machine.
# Then the same for small pieces (a heap of 256 K units sent in pieces of
# at most 1, 8 and 64 pairs): what the decoder costs a piece whatever its
# size, the figure a VM sending tiny pieces would make us pay.
#
# Usage: heapdecode-ir.sh [HEAPDECODE_BINARY] [UNITS] [HEAPDECODE ARGS...]
#   (e.g. --native, --seed N: passed to every run; --no-small skips the
#   small pieces; --check exits 1 when a 1-pair piece costs more than
#   1,200 Ir: 6,882 when every piece took the eight-pairs path, 1,509
#   while the collector cleared all 7 KiB of its scratch statistics)
# `make bench-heapdecode-ir` runs it on the build's bench/heapdecode.
set -eu
# (the two positional arguments are optional: an option in their place
# starts the options, so `heapdecode-ir.sh --check` checks the default)
bin=./bench/heapdecode units=4194304
# (an empty one stands for its default)
if [ $# -gt 0 ]; then case $1 in -*) ;; '') shift ;; *) bin=$1; shift ;; esac; fi
if [ $# -gt 0 ]; then case $1 in -*) ;; '') shift ;; *) units=$1; shift ;; esac; fi
small=1 check=0
extra=
for a in "$@"; do
    case $a in
    --no-small) small=0 ;;
    --check) check=1 ;;
    *) extra="$extra $a" ;;
    esac
done
command -v valgrind >/dev/null 2>&1 || { echo "heapdecode-ir: valgrind not installed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir MODE FUNCTION UNITS [ARGS...]: prints "instructions run_bytes pieces"
ir() {
    mode=$1 fn=$2 u=$3
    shift 3
    # shellcheck disable=SC2086 # $extra: words on purpose
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$fn*" \
        "$bin" --units "$u" --only "$mode" $extra "$@" >"$tmp/out" 2>"$tmp/err" || {
        cat "$tmp/err" >&2
        exit 1
    }
    n=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/err")
    b=$(sed -n 's/^run_bytes \([0-9]*\)$/\1/p' "$tmp/out")
    p=$(sed -n 's/^pieces \([0-9]*\)$/\1/p' "$tmp/out")
    echo "$n $b $p"
}

set -- $(ir loop pass_loop "$units") $(ir decode pass_plugin "$units") $(ir sum pass_sum "$units")
awk -v li="$1" -v bytes="$2" -v di="$4" -v si="$7" -v units="$units" -v extra="$extra" 'BEGIN {
    printf "heap of %d units%s, %d bytes of run data; instructions (callgrind Ir) per byte:\n", units, extra, bytes
    printf "  tight loop (units per class)  %6.2f Ir/B\n", li / bytes
    printf "  sum only                      %6.2f Ir/B\n", si / bytes
    printf "  decode (every statistic)      %6.2f Ir/B  %5.2fx the tight loop'"'"'s instructions\n", di / bytes, di / li
}'
[ "$small" = 1 ] || exit 0
su=262144
echo "small pieces, heap of $su units; decode (collector and decoder) per byte and per piece:"
status=0
for pp in 1 8 64; do
    set -- $(ir loop pass_loop "$su" --piece-pairs "$pp") $(ir decode pass_plugin "$su" --piece-pairs "$pp")
    awk -v pp="$pp" -v li="$1" -v bytes="$2" -v pieces="$3" -v di="$4" 'BEGIN {
        printf "  <= %2d pairs a piece (%7d pieces)  %7.2f Ir/B  %6.0f Ir a piece  (tight loop %5.2f Ir/B)\n",
            pp, pieces, di / bytes, di / pieces, li / bytes
    }'
    if [ "$pp" = 1 ] && [ "$check" = 1 ] && [ $(($4 / $3)) -gt 1200 ]; then
        echo "goal: a 1-pair piece <= 1,200 Ir: MISSED" >&2
        status=1
    fi
done
exit $status
