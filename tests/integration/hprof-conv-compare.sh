#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plugins/hprof/hprof_stream.c against the real hprof-conv: sample Android
# dumps (tests/unit/plugins/hprof-write-sample: every sub-record kind; a few
# MiB with big arrays and segments longer than the stream's output buffer)
# converted by hprof-conv and by tests/unit/plugins/hprof-convert (random
# pieces, write + pwrite) must be the same bytes, for several piece
# patterns. Android mode must copy its input unchanged, hprof-conv must
# accept that copy, and a dump hprof-conv refuses must be refused too.
# Skipped when hprof-conv is not installed (Debian: apt-get install
# hprof-conv, which puts it in /usr/lib/android-sdk/platform-tools).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"

HPROF_CONV=$(command -v hprof-conv 2>/dev/null || true)
[ -n "$HPROF_CONV" ] || [ ! -x /usr/lib/android-sdk/platform-tools/hprof-conv ] \
    || HPROF_CONV=/usr/lib/android-sdk/platform-tools/hprof-conv
[ -n "$HPROF_CONV" ] || t_skip_all "hprof-conv not installed"
WRITE="$DDM_TOP_BUILDDIR/tests/unit/plugins/hprof-write-sample"
CONVERT="$DDM_TOP_BUILDDIR/tests/unit/plugins/hprof-convert"
[ -x "$WRITE" ] && [ -x "$CONVERT" ] || t_skip_all "test programs not built (make check builds them)"

SEEDS="1 2 3 17 99"
t_plan 14

for kind in all big; do
    in="$T_TMP/$kind.hprof"
    if ! "$WRITE" "$kind" "$in" 2>"$T_TMP/err"; then
        t_fail "write the $kind sample" "$(cat "$T_TMP/err")"
        continue
    fi
    if ! "$HPROF_CONV" "$in" "$T_TMP/$kind.ref" 2>"$T_TMP/err"; then
        t_fail "hprof-conv converts the $kind sample" "$(cat "$T_TMP/err")"
        continue
    fi
    t_ok "hprof-conv converts the $kind sample ($(stat -c %s "$in") bytes)"

    bad=""
    for seed in $SEEDS; do
        if ! "$CONVERT" -s "$seed" "$in" "$T_TMP/$kind.std" 2>"$T_TMP/err" \
            || ! cmp "$T_TMP/$kind.ref" "$T_TMP/$kind.std" >"$T_TMP/cmp" 2>&1; then
            bad="$bad seed $seed: $(cat "$T_TMP/err" "$T_TMP/cmp")"
        fi
    done
    [ -z "$bad" ] && t_ok "$kind: standard mode is byte-identical to hprof-conv (seeds $SEEDS)" \
        || t_fail "$kind: standard mode is byte-identical to hprof-conv" "$bad"
    # The comparison can fail: the conversion really changed something.
    ! cmp -s "$in" "$T_TMP/$kind.ref" && t_ok "$kind: the conversion changes the file" \
        || t_fail "$kind: the conversion changes the file"

    bad=""
    for seed in $SEEDS; do
        if ! "$CONVERT" -a -s "$seed" "$in" "$T_TMP/$kind.and" 2>"$T_TMP/err" \
            || ! cmp "$in" "$T_TMP/$kind.and" >"$T_TMP/cmp" 2>&1; then
            bad="$bad seed $seed: $(cat "$T_TMP/err" "$T_TMP/cmp")"
        fi
    done
    [ -z "$bad" ] && t_ok "$kind: android mode copies its input" || t_fail "$kind: android mode copies its input" "$bad"
    "$HPROF_CONV" "$T_TMP/$kind.and" "$T_TMP/$kind.and.ref" 2>"$T_TMP/err" \
        && cmp -s "$T_TMP/$kind.ref" "$T_TMP/$kind.and.ref" \
        && t_ok "$kind: hprof-conv accepts the android-mode output" \
        || t_fail "$kind: hprof-conv accepts the android-mode output" "$(cat "$T_TMP/err")"
done

# 8-byte ids: android mode checks and copies; hprof-conv reads 4-byte ids only,
# so standard mode refuses, naming the header's id size.
"$WRITE" id8 "$T_TMP/id8.hprof"
"$CONVERT" -a "$T_TMP/id8.hprof" "$T_TMP/id8.and" 2>"$T_TMP/err" && cmp -s "$T_TMP/id8.hprof" "$T_TMP/id8.and" \
    && t_ok "id size 8: android mode copies" || t_fail "id size 8: android mode copies" "$(cat "$T_TMP/err")"
"$CONVERT" "$T_TMP/id8.hprof" "$T_TMP/id8.std" 2>"$T_TMP/err"; rc=$?
[ $rc = 1 ] && grep -q "id size 8 at byte 19" "$T_TMP/err" && t_ok "id size 8: standard mode refuses" \
    || t_fail "id size 8: standard mode refuses" "rc=$rc $(cat "$T_TMP/err")"

# A dump hprof-conv refuses (an unknown sub-record) is refused by both modes.
head -c 31 "$T_TMP/all.hprof" >"$T_TMP/bad.hprof"
printf '\034\0\0\0\0\0\0\0\005\102\0\0\0\0' >>"$T_TMP/bad.hprof"
if "$HPROF_CONV" "$T_TMP/bad.hprof" "$T_TMP/bad.ref" 2>/dev/null; then
    t_fail "hprof-conv refuses an unknown sub-record tag"
else
    t_ok "hprof-conv refuses an unknown sub-record tag"
fi
"$CONVERT" "$T_TMP/bad.hprof" "$T_TMP/bad.std" 2>"$T_TMP/err"; rc1=$?
"$CONVERT" -a "$T_TMP/bad.hprof" "$T_TMP/bad.and" 2>>"$T_TMP/err"; rc2=$?
[ $rc1 = 1 ] && [ $rc2 = 1 ] && [ "$(grep -c "tag 0x42 at byte 40" "$T_TMP/err")" = 2 ] \
    && t_ok "hprof_stream refuses it too, naming tag and offset" \
    || t_fail "hprof_stream refuses it too, naming tag and offset" "$(cat "$T_TMP/err")"
exit 0
