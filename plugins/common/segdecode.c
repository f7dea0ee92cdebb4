/* SPDX-License-Identifier: Apache-2.0
 *
 * segdecode: heap segment piece parsing and single-pass run decoding.
 * See segdecode.h for the wire layout, the reject rule and what an
 * "allocation" is. Hot path: seg_piece_decode, no allocation, one branch
 * for the partial flag per pair.
 */
#include "segdecode.h"

#include <string.h>

#include <ddmon/bytes.h>

const char *seg_class_name(unsigned cls)
{
    static const char *const names[SEG_NCLASS] = {
        "free",
        "data object",
        "class object",
        "1-byte array (byte[], boolean[])",
        "2-byte array (short[], char[])",
        "4-byte array (object[], int[], float[])",
        "8-byte array (long[], double[])",
        "unknown object",
        "non-Java object",
    };
    return cls < SEG_NCLASS ? names[cls] : "?";
}

const char *seg_error_str(seg_error e)
{
    switch (e) {
    case SEG_OK:
        return "ok";
    case SEG_ERR_SHORT_HEADER:
        return "piece shorter than its 17-byte header";
    case SEG_ERR_UNIT_ZERO:
        return "allocation unit size 0";
    case SEG_ERR_ODD_RUNS:
        return "run data ends in half a pair";
    case SEG_ERR_RUNS_SHORT:
        return "runs end before the declared unit count";
    case SEG_ERR_RUNS_LONG:
        return "runs go past the declared unit count";
    case SEG_ERR_PARTIAL_CHANGE:
        return "state change inside a partial run";
    }
    return "?";
}

seg_error seg_piece_parse(const uint8_t *data, size_t len, seg_piece *out)
{
    ddm_reader r;

    memset(out, 0, sizeof(*out));
    ddm_reader_init(&r, data, len);
    out->heap_id = ddm_read_u4(&r);
    out->unit_size = ddm_read_u1(&r);
    out->start = ddm_read_u4(&r);
    out->offset = ddm_read_u4(&r);
    out->length_units = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r))
        return SEG_ERR_SHORT_HEADER;
    out->runs_len = ddm_reader_remaining(&r);
    out->runs = ddm_read_bytes(&r, out->runs_len);
    if (out->unit_size == 0)
        return SEG_ERR_UNIT_ZERO;
    return SEG_OK;
}

static inline unsigned bucket_of(uint64_t bytes)
{
    unsigned b = 63u - (unsigned)__builtin_clzll(bytes | 1);
    return b < SEG_NBUCKETS ? b : SEG_NBUCKETS - 1;
}

unsigned seg_bucket(uint64_t bytes)
{
    return bucket_of(bytes);
}

void seg_stats_reset(seg_stats *st)
{
    unsigned c;
    memset(st, 0, sizeof(*st));
    for (c = 0; c < SEG_NCLASS; c++)
        st->cls[c].min_bytes = UINT64_MAX;
}

void seg_stats_add(seg_stats *dst, const seg_stats *src)
{
    unsigned c, b;
    for (c = 0; c < SEG_NCLASS; c++) {
        seg_class_stats *d = &dst->cls[c];
        const seg_class_stats *s = &src->cls[c];
        d->count += s->count;
        d->units += s->units;
        d->bytes += s->bytes;
        if (s->min_bytes < d->min_bytes)
            d->min_bytes = s->min_bytes;
        if (s->max_bytes > d->max_bytes)
            d->max_bytes = s->max_bytes;
        if (!s->count)
            continue;
        for (b = 0; b < SEG_NBUCKETS; b++) {
            dst->hist_count[c][b] += src->hist_count[c][b];
            dst->hist_bytes[c][b] += src->hist_bytes[c][b];
        }
    }
    dst->total_units += src->total_units;
    dst->total_bytes += src->total_bytes;
    if (src->largest_free_bytes > dst->largest_free_bytes)
        dst->largest_free_bytes = src->largest_free_bytes;
    dst->runs += src->runs;
    dst->pieces += src->pieces;
}

/* Count one run of @units units (@bytes bytes) of class @cls in @st: its
 * class totals, extremes and size bucket. */
static inline __attribute__((always_inline)) void count_run(seg_stats *st, unsigned cls,
                                                            uint64_t units, uint64_t bytes)
{
    seg_class_stats *cs = &st->cls[cls];
    const unsigned b = bucket_of(bytes);

    cs->count++;
    cs->units += units;
    cs->bytes += bytes;
    cs->min_bytes = bytes < cs->min_bytes ? bytes : cs->min_bytes;
    cs->max_bytes = bytes > cs->max_bytes ? bytes : cs->max_bytes;
    st->hist_count[cls][b]++;
    st->hist_bytes[cls][b] += bytes;
}

/* Account one merged run of @units units of @state. Branch-free where the
 * input decides (free or not), so mixed heaps do not mispredict. */
static inline __attribute__((always_inline)) void emit(seg_stats *st, uint8_t state,
                                                       uint64_t units, unsigned unit_size,
                                                       uint64_t *free_extent, uint64_t *largest)
{
    const unsigned cls = seg_state_class(state);
    const uint64_t bytes = units * unit_size;
    const uint64_t keep = (uint64_t)0 - (uint64_t)(cls == SEG_CLASS_FREE);
    uint64_t ext;

    count_run(st, cls, units, bytes);
    ext = (*free_extent + bytes) & keep; /* adjacent free runs form one extent */
    *free_extent = ext;
    *largest = ext > *largest ? ext : *largest;
}

/* The pair-at-a-time decoder: the definition of the statistics and of
 * where a bad piece stops. The fast path below hands any piece it cannot
 * accept to this one, so errors and their offsets come from one place. */
static seg_error decode_checked(const seg_piece *p, seg_stats *st, seg_error_at *at)
{
    const uint8_t *runs = p->runs;
    const uint8_t *r = runs;
    const uint8_t *end;
    const uint64_t need = p->length_units;
    const unsigned unit = p->unit_size;
    uint64_t seen = 0, open_units = 0, free_extent = 0, largest = st->largest_free_bytes, npairs;
    uint8_t open_state = 0;
    int open = 0;
    seg_error err = SEG_OK;

    if (unit == 0) {
        err = SEG_ERR_UNIT_ZERO;
        goto fail;
    }
    if (p->runs_len & 1) {
        err = SEG_ERR_ODD_RUNS;
        r = runs + (p->runs_len - 1);
        goto fail;
    }
    if (p->runs_len == 0) { /* no run pairs: only valid for an empty piece */
        if (need != 0) {
            err = SEG_ERR_RUNS_SHORT;
            goto fail;
        }
        st->pieces++;
        return SEG_OK;
    }
    end = runs + p->runs_len;
    npairs = p->runs_len / 2;

    while (r < end) {
        const uint8_t s = r[0];
        const uint64_t n = (uint64_t)r[1] + 1u;
        if (n > need - seen) {
            err = SEG_ERR_RUNS_LONG;
            goto fail;
        }
        if (open) {
            if ((uint8_t)(s & 0x7f) != open_state) {
                err = SEG_ERR_PARTIAL_CHANGE;
                goto fail;
            }
            open_units += n;
        } else {
            open_state = (uint8_t)(s & 0x7f);
            open_units = n;
        }
        seen += n;
        r += 2;
        if (s & 0x80) {
            open = 1;
            continue;
        }
        open = 0;
        emit(st, open_state, open_units, unit, &free_extent, &largest);
    }
    if (open) /* a piece never splits a run: close it at the piece's end */
        emit(st, open_state, open_units, unit, &free_extent, &largest);
    st->largest_free_bytes = largest;
    if (seen != need) {
        err = SEG_ERR_RUNS_SHORT;
        goto fail;
    }
    st->total_units += seen;
    st->total_bytes += seen * unit;
    st->runs += npairs;
    st->pieces++;
    return SEG_OK;

fail:
    if (at) {
        at->run_offset = runs ? (size_t)(r - runs) : 0;
        at->units_seen = seen;
    }
    return err;
}

/* Per state byte (P bit clear): the row of the count table (class * 256),
 * and the mask that keeps a running free extent (all ones for free, 0 for
 * in use). Tables, so that a pair costs loads and adds, no tests. */
#define CLS(s) ((((s) & 7) == 0) ? 0u : 1u + (((s) >> 3) & 7))
#define ROW(s) ((uint16_t)(CLS(s) * 256u))
#define ROW8(s) ROW(s), ROW((s) + 1), ROW((s) + 2), ROW((s) + 3), ROW((s) + 4), ROW((s) + 5), \
                ROW((s) + 6), ROW((s) + 7)
static const uint16_t row_of_state[128] = {
    ROW8(0), ROW8(8), ROW8(16), ROW8(24), ROW8(32), ROW8(40), ROW8(48), ROW8(56),
    ROW8(64), ROW8(72), ROW8(80), ROW8(88), ROW8(96), ROW8(104), ROW8(112), ROW8(120),
};
#define KEEP(s) ((((s) & 7) == 0) ? UINT64_MAX : (uint64_t)0)
#define KEEP8(s) KEEP(s), KEEP((s) + 1), KEEP((s) + 2), KEEP((s) + 3), KEEP((s) + 4), \
                 KEEP((s) + 5), KEEP((s) + 6), KEEP((s) + 7)
static const uint64_t keep_free_of_state[128] = {
    KEEP8(0), KEEP8(8), KEEP8(16), KEEP8(24), KEEP8(32), KEEP8(40), KEEP8(48), KEEP8(56),
    KEEP8(64), KEEP8(72), KEEP8(80), KEEP8(88), KEEP8(96), KEEP8(104), KEEP8(112), KEEP8(120),
};
#undef KEEP8
#undef KEEP
#undef ROW8
#undef ROW
#undef CLS

/* Largest piece the fast path takes: its counters are 32 bits. */
#define FAST_MAX_PAIRS ((uint64_t)UINT32_MAX)

/* Fold the per-(class, run length) counts of single-pair allocations into
 * @st; returns the units they cover. Lengths whose byte sizes share a size
 * bucket are summed together, so the histogram gets one add per bucket,
 * not one per length. */
static uint64_t fold_counts(seg_stats *st, const uint32_t *cnt, unsigned unit)
{
    unsigned lo[12], hi[12], bk[12], nr = 0, n = 1, c;
    uint64_t total = 0;

    /* the ranges of n = 1..256 units that fall into one bucket */
    while (n <= 256) {
        unsigned b = bucket_of((uint64_t)n * unit);
        uint64_t next = ((uint64_t)1 << (b + 1)) / unit + (((uint64_t)1 << (b + 1)) % unit != 0);
        lo[nr] = n;
        hi[nr] = next > 257 ? 257 : (unsigned)next;
        bk[nr] = b;
        n = hi[nr];
        nr++;
    }
    for (c = 0; c < SEG_NCLASS; c++) {
        const uint32_t *row = cnt + (size_t)c * 256;
        seg_class_stats *cs = &st->cls[c];
        uint64_t count = 0, units = 0;
        unsigned i, first, last = 0, top = 0;

        for (i = 0; i < nr; i++) {
            uint64_t k = 0, u = 0;
            unsigned m;
            for (m = lo[i]; m < hi[i]; m++) {
                k += row[m - 1];
                u += (uint64_t)row[m - 1] * m;
            }
            if (k) {
                st->hist_count[c][bk[i]] += k;
                st->hist_bytes[c][bk[i]] += u * unit;
                count += k;
                units += u;
                top = i;
            }
        }
        if (!count)
            continue;
        for (first = 0; !row[first]; first++)
            ;
        for (last = hi[top] - 2; !row[last]; last--) /* inside the top bucket's range */
            ;
        cs->count += count;
        cs->units += units;
        cs->bytes += units * unit;
        if ((uint64_t)(first + 1) * unit < cs->min_bytes)
            cs->min_bytes = (uint64_t)(first + 1) * unit;
        if ((uint64_t)(last + 1) * unit > cs->max_bytes)
            cs->max_bytes = (uint64_t)(last + 1) * unit;
        total += units;
    }
    return total;
}

/* Merge the partial sequence at *@rp (its first pair has P set) up to the
 * pair without P or the piece's end, and account it in @st. Returns its
 * units, or 0 if the sequence changes state (the piece is rejected). */
static uint64_t merge_partial(const uint8_t **rp, const uint8_t *end, seg_stats *st,
                              unsigned unit, unsigned *state_out)
{
    const uint8_t *r = *rp;
    const unsigned state = r[0] & 0x7f;
    unsigned s = r[0];
    uint64_t units = 0;
    for (;;) {
        units += (uint64_t)r[1] + 1u;
        r += 2;
        if (!(s & 0x80) || r >= end)
            break;
        s = r[0];
        if ((s & 0x7f) != state)
            return 0;
    }
    *rp = r;
    *state_out = state;
    count_run(st, seg_state_class((uint8_t)state), units, units * unit);
    return units;
}

/*
 * The fast path. Most allocations are one pair: those only bump a counter
 * per (class, run length) in a table on the stack (the row comes from a
 * table indexed by the state byte), and the counters are folded into the
 * statistics once per piece. The running free extent is kept with a mask
 * from a table, not a branch. A partial pair is the only branch the input
 * decides, and it is rare (allocations over 256 units). A piece that is
 * not accepted (wrong unit total, a partial sequence that changes state)
 * is decoded again by decode_checked, which says why and where; so is one
 * too big for 32-bit counters.
 */
seg_error seg_piece_decode(const seg_piece *p, seg_stats *st, seg_error_at *at)
{
    uint32_t cnt[SEG_NCLASS * 256]; /* [class * 256 + units - 1] */
    const uint8_t *r = p->runs;
    const uint8_t *end = r + p->runs_len;
    const unsigned unit = p->unit_size;
    uint64_t merged = 0, ext = 0, largest = 0, seen, npairs = p->runs_len / 2;

    if (unit == 0 || (p->runs_len & 1) || p->runs_len == 0 || npairs > FAST_MAX_PAIRS)
        return decode_checked(p, st, at);
    memset(cnt, 0, sizeof cnt);
    while (r < end) {
        const unsigned s = r[0], l = r[1];
        if (__builtin_expect(s & 0x80, 0)) {
            unsigned state = 0;
            uint64_t units = merge_partial(&r, end, st, unit, &state);
            /* 0: a state change; more than declared: also keeps sums from wrapping */
            if (units == 0 || units > p->length_units)
                return decode_checked(p, st, at);
            merged += units;
            ext = (ext + units) & keep_free_of_state[state];
            largest = ext > largest ? ext : largest;
            continue;
        }
        cnt[row_of_state[s] + l]++;
        ext = (ext + l + 1u) & keep_free_of_state[s];
        largest = ext > largest ? ext : largest;
        r += 2;
    }
    seen = fold_counts(st, cnt, unit) + merged;
    if (seen != p->length_units)
        return decode_checked(p, st, at);
    largest *= unit;
    if (largest > st->largest_free_bytes)
        st->largest_free_bytes = largest;
    st->total_units += seen;
    st->total_bytes += seen * unit;
    st->runs += npairs;
    st->pieces++;
    return SEG_OK;
}
