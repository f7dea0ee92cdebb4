/* SPDX-License-Identifier: Apache-2.0
 *
 * segdecode: heap segment piece parsing and single-pass run decoding.
 * See segdecode.h for the wire layout, the reject rule and what an
 * "allocation" is. Hot path: seg_piece_decode, no allocation (its tables
 * are on the stack), one branch for the partial flags of eight pairs and
 * one for whether they may hold a new largest free extent.
 */
#include "segdecode.h"

#include <stddef.h>
#include <string.h>

#include <ddmon/bytes.h>

/* The fold sums eight counters a step with SSE2 (any x86-64); elsewhere,
 * or built with -DSEG_FOLD_SCALAR (to test that path), one at a time. */
#if defined(__SSE2__) && !defined(SEG_FOLD_SCALAR)
#include <emmintrin.h>
#define SEG_FOLD_SSE2 1
#endif

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

void seg_stats_reset_used(seg_stats *st)
{
    unsigned c, b;
    for (c = 0; c < SEG_NCLASS; c++) {
        seg_class_stats *cs = &st->cls[c];
        if (cs->min_bytes <= cs->max_bytes) /* every bucket written lies between them */
            for (b = bucket_of(cs->min_bytes); b <= bucket_of(cs->max_bytes); b++) {
                st->hist_count[c][b] = 0;
                st->hist_bytes[c][b] = 0;
            }
        memset(cs, 0, sizeof(*cs));
        cs->min_bytes = UINT64_MAX;
    }
    /* the fields after the histograms */
    memset(&st->total_units, 0, sizeof(*st) - offsetof(seg_stats, total_units));
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
        /* every allocation of the class lies between its min and max */
        for (b = bucket_of(s->min_bytes); b <= bucket_of(s->max_bytes); b++) {
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

/* Per state byte (P bit clear): the count table row of its class, and
 * the mask that keeps a running free extent (all ones for free, 0 for in
 * use). Tables, so that a pair costs loads and adds, no tests. */
#define CLS(s) ((((s) & 7) == 0) ? 0u : 1u + (((s) >> 3) & 7))
#define CLS8(s) CLS(s), CLS((s) + 1), CLS((s) + 2), CLS((s) + 3), CLS((s) + 4), CLS((s) + 5), \
                CLS((s) + 6), CLS((s) + 7)
static const uint8_t class_of_state[128] = {
    CLS8(0), CLS8(8), CLS8(16), CLS8(24), CLS8(32), CLS8(40), CLS8(48), CLS8(56),
    CLS8(64), CLS8(72), CLS8(80), CLS8(88), CLS8(96), CLS8(104), CLS8(112), CLS8(120),
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
#undef CLS8
#undef CLS

/* One-pair allocations counted per (class, run length) before a fold:
 * 16-bit counters, which the fold reads as signed (SSE2's pmaddwd), so a
 * block may bump one counter at most 32,767 times; one pair bumps one
 * counter, so at most this many pairs between folds (ART's pieces hold at
 * most ~8,000: one fold a piece). */
#define FAST_BLOCK_PAIRS 32760u


/*
 * The count table of one block of pairs, cnt[class][units - 1], and per
 * state byte (P clear) a pointer to its class's row and the free-extent
 * mask, so that a pair costs one load for the row, one add to the counter
 * and one masked add for the extent.
 *
 * The layout matters for speed. A load whose address has the same low 12
 * bits as an earlier store still in flight waits for that store to be
 * checked ("4K aliasing"); the loop stores to the counters of short runs
 * all the time and loads the two tables for every pair, so a table entry
 * of a common state that aliases a busy counter (row[1], the data
 * objects' state, 4096 bytes past the counter of 5-unit data objects when
 * row[] followed cnt) slows the whole loop down, or not at all, depending
 * on where the stack and static tables happen to fall (a one-off
 * observation, in a test harness not kept in the tree, with row[]
 * following cnt: 12 ms a pass over bench/heapdecode's heap instead of
 * 3.4, 3.5-fold).
 * All three are kept in one struct, so that their distances are fixed:
 * relative to cnt, rows of 512 bytes whose first 128 (runs up to 64
 * units, most of them) are busy, the entries of states 0..47 (kinds 0..5,
 * any solidity) land in a quiet stretch (bytes 128..511 of a row) modulo
 * 4096. See the static assertions below the struct. The entries of states
 * 48..63 (kinds 6 and 7) do alias busy counters: row[] those of 2-byte
 * arrays, keep[] those of 8-byte arrays (runs of 33..64 units). A native
 * heap (nativeheap: free runs and kind 7, 0x39) never increments array
 * counters, and a Java heap sends kinds 6 and 7 rarely: harmless.
 */
typedef struct run_counts {
    uint16_t *row[128];                    /* offset 0 */
    uint64_t keep[128];                    /* offset 1024 */
    char pad[384];
    _Alignas(64) uint16_t cnt[SEG_NCLASS][256]; /* offset 2432 */
} run_counts;

#define ROW_OFFSET_OK(off) ((((off) - offsetof(run_counts, cnt) + 4096 * 2) % 512) >= 128 && \
                            (((off) - offsetof(run_counts, cnt) + 4096 * 2) % 512) + 48 * 8 <= 512)
_Static_assert(ROW_OFFSET_OK(offsetof(run_counts, row)), "row[0..47] must not alias busy counters");
_Static_assert(ROW_OFFSET_OK(offsetof(run_counts, keep)), "keep[0..47] must not alias busy counters");
#undef ROW_OFFSET_OK

/* The P bit of each state byte of four pairs in a word read by
 * load_le64 (below): the state is the low byte of each 16-bit lane. */
#define PARTIAL_BITS_OF_4 UINT64_C(0x0080008000800080)

/* The runs of 1..256 units that fall into one size bucket: [previous
 * hi (1 for the first), hi) in units, for one unit size. At most 9
 * ranges (1..256 units cross at most 8 powers of two). */
typedef struct bucket_ranges {
    unsigned n;
    unsigned hi[12], bucket[12];
} bucket_ranges;

static void bucket_ranges_init(bucket_ranges *br, unsigned unit)
{
    unsigned n = 1;
    br->n = 0;
    while (n <= 256) {
        unsigned b = bucket_of((uint64_t)n * unit);
        uint64_t next = ((uint64_t)1 << (b + 1)) / unit + (((uint64_t)1 << (b + 1)) % unit != 0);
        br->hi[br->n] = next > 257 ? 257 : (unsigned)next;
        br->bucket[br->n] = b;
        n = br->hi[br->n];
        br->n++;
    }
}

/* Index of the first (@from_end 0) or last nonzero counter of @row, or
 * -1 if all 256 are 0. Looks at sixteen counters a step. */
static int row_edge(const uint16_t *row, int from_end)
{
    int i;
#ifdef SEG_FOLD_SSE2
    const __m128i zero = _mm_setzero_si128();
    for (i = 0; i < 16; i++) {
        const int at = from_end ? 16 * (15 - i) : 16 * i;
        const __m128i v0 = _mm_load_si128((const __m128i *)(const void *)(row + at));
        const __m128i v1 = _mm_load_si128((const __m128i *)(const void *)(row + at + 8));
        /* one bit a byte of the sixteen counters that is zero, inverted */
        const unsigned nz = ~((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(v0, zero)) |
                              (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(v1, zero)) << 16);
        if (!nz)
            continue;
        return at + (from_end ? (31 - __builtin_clz(nz)) : __builtin_ctz(nz)) / 2;
    }
#else
    uint64_t w0, w1;
    int k;
    for (i = 0; i < 32; i++) {
        const int at = from_end ? 8 * (31 - i) : 8 * i;
        memcpy(&w0, row + at, 8);
        memcpy(&w1, row + at + 4, 8);
        if (!(w0 | w1))
            continue;
        for (k = 0; k < 8; k++) {
            const int m = from_end ? at + 7 - k : at + k;
            if (row[m])
                return m;
        }
    }
#endif
    return -1;
}

/* The counts (*@k) and units (*@u) of the counters @row[@lo..@hi): a
 * counter at index m counts runs of m + 1 units. */
static inline void sum_counts(const uint16_t *row, unsigned lo, unsigned hi, uint64_t *k,
                              uint64_t *u)
{
    uint64_t kk = 0, uu = 0;
    unsigned m = lo;
#ifdef SEG_FOLD_SSE2
    if (hi - lo >= 8) {
        /* eight counters a step: pmaddwd by 1 and by their lengths (m + 1,
         * at most 256) into 32-bit sums. Exact: a counter is at most
         * FAST_BLOCK_PAIRS (< 32,768, so its signed reading is its value)
         * and all of a block's counters together count at most
         * FAST_BLOCK_PAIRS runs of at most 256 units */
        const __m128i one = _mm_set1_epi16(1), eight = _mm_set1_epi16(8);
        __m128i len = _mm_add_epi16(_mm_setr_epi16(1, 2, 3, 4, 5, 6, 7, 8),
                                    _mm_set1_epi16((short)lo));
        __m128i ks = _mm_setzero_si128(), us = _mm_setzero_si128();
        for (; m + 8 <= hi; m += 8) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(row + m));
            ks = _mm_add_epi32(ks, _mm_madd_epi16(v, one));
            us = _mm_add_epi32(us, _mm_madd_epi16(v, len));
            len = _mm_add_epi16(len, eight);
        }
        ks = _mm_add_epi32(ks, _mm_shuffle_epi32(ks, 0x4e));
        us = _mm_add_epi32(us, _mm_shuffle_epi32(us, 0x4e));
        ks = _mm_add_epi32(ks, _mm_shuffle_epi32(ks, 0xb1));
        us = _mm_add_epi32(us, _mm_shuffle_epi32(us, 0xb1));
        kk = (uint32_t)_mm_cvtsi128_si32(ks);
        uu = (uint32_t)_mm_cvtsi128_si32(us);
    }
#endif
    for (; m < hi; m++) {
        kk += row[m];
        uu += (uint64_t)row[m] * (m + 1);
    }
    *k = kk;
    *u = uu;
}

/* Fold the per-(class, run length) counts of one-pair allocations into
 * @st; returns the units they cover. Only the span between a class's
 * shortest and longest run is read; lengths whose byte sizes share a size
 * bucket are summed together (sum_counts: eight counters a step with
 * SSE2), so the histogram gets one add per bucket, not one per length. */
static uint64_t fold_counts(seg_stats *st, const run_counts *rc, const bucket_ranges *br,
                            unsigned unit)
{
    uint64_t total = 0;
    unsigned c;

    for (c = 0; c < SEG_NCLASS; c++) {
        const uint16_t *row = rc->cnt[c];
        seg_class_stats *cs = &st->cls[c];
        uint64_t count = 0, units = 0;
        int first = row_edge(row, 0), last;
        unsigned i = 0, m;

        if (first < 0)
            continue;
        last = row_edge(row, 1);
        /* the buckets' lengths, in counter indices (units - 1): from first's bucket to last */
        while (br->hi[i] - 1 <= (unsigned)first)
            i++;
        for (m = (unsigned)first; m <= (unsigned)last; i++) {
            const unsigned hi = br->hi[i] - 1 < (unsigned)last + 1 ? br->hi[i] - 1
                                                                   : (unsigned)last + 1;
            uint64_t k, u;
            sum_counts(row, m, hi, &k, &u);
            m = hi;
            if (k) {
                st->hist_count[c][br->bucket[i]] += k;
                st->hist_bytes[c][br->bucket[i]] += u * unit;
                count += k;
                units += u;
            }
        }
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

/* Eight bytes of run data as a 64-bit word whose low byte is the first,
 * on either byte order, so that pair i of the word is its 16-bit lane i. */
static inline __attribute__((always_inline)) uint64_t load_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
#if !defined(__BYTE_ORDER__)
#error "segdecode needs __BYTE_ORDER__ to read run data as little-endian words"
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Merge the partial sequence at *@rp (its first pair has P set) up to the
 * pair without P or the piece's end, and account it in @st. Returns its
 * units, or 0 if the sequence changes state (the piece is rejected).
 * Four pairs a step while they all carry P and the sequence's state (one
 * compare of a word), their lengths summed in the word; then pair by
 * pair to the pair that ends it. */
static uint64_t merge_partial(const uint8_t **rp, const uint8_t *end, seg_stats *st,
                              unsigned unit, unsigned *state_out)
{
    const uint8_t *r = *rp;
    const unsigned state = r[0] & 0x7f;
    const uint64_t four_p = (uint64_t)(state | 0x80) * UINT64_C(0x0001000100010001);
    unsigned s;
    uint64_t units = 0;
    while (end - r >= 8) {
        const uint64_t w = load_le64(r);
        if ((w ^ four_p) & UINT64_C(0x00ff00ff00ff00ff))
            break;
        /* the four length bytes, each in the low byte of its 16-bit lane,
         * summed into the top lane (at most 1,020: no carry between lanes) */
        units += ((((w >> 8) & UINT64_C(0x00ff00ff00ff00ff)) * UINT64_C(0x0001000100010001)) >> 48) + 4;
        r += 8;
    }
    if (r < end) {
        s = r[0];
        if ((s & 0x7f) != state)
            return 0;
        for (;;) {
            units += (uint64_t)r[1] + 1u;
            r += 2;
            if (!(s & 0x80) || r >= end)
                break;
            s = r[0];
            if ((s & 0x7f) != state)
                return 0;
        }
    }
    *rp = r;
    *state_out = state;
    count_run(st, seg_state_class((uint8_t)state), units, units * unit);
    return units;
}

/* Count the one-pair allocation of state @s (its P bit clear) and length
 * byte @l: bump its (class, length) counter; returns the running free
 * extent (in units) after it, from @ext before it. */
static inline __attribute__((always_inline)) uint64_t count_pair(unsigned s, unsigned l,
                                                                 run_counts *rc, uint64_t ext)
{
    rc->row[s][l]++;
    return (ext + l + 1u) & rc->keep[s];
}

static inline __attribute__((always_inline)) uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* Keep *@w in a register whose second byte has a name (%ah, %bh, %ch,
 * %dh on x86-64) and hide its value from the compiler, so that the pair
 * in its low 16 bits is read with two zero-extending moves (%al, %ah)
 * after one shift a pair, rather than a copy, a shift and a
 * zero-extension for each byte of each pair of the unshifted word (which
 * gcc otherwise makes of the shifts: 6.86 -> 5.93 Ir a byte). */
static inline __attribute__((always_inline)) void pin_q(uint64_t *w)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__("" : "+Q"(*w));
#else
    (void)w;
#endif
}

/* The largest of @largest and the running free extents after each of
 * the eight pairs at @r (P clear), from @ext before them. It reads the
 * bytes again, so that the hot loop need not keep its two words. */
static __attribute__((noinline)) uint64_t window_max_extent(const uint8_t *r,
                                                            const run_counts *rc, uint64_t ext,
                                                            uint64_t largest)
{
    int i;
    for (i = 0; i < 8; i++) {
        ext = (ext + r[2 * i + 1] + 1u) & rc->keep[r[2 * i]];
        largest = ext > largest ? ext : largest;
    }
    return largest;
}

/* The hot loop: count the one-pair allocations from @r, eight pairs at a
 * time, while eight whole pairs are left before @bend and none of them has
 * its P bit set (one test of the eight P bits over two 64-bit loads).
 * Returns where it stopped. Its own function, not inlined, so that the
 * compiler gives its few variables registers whatever the caller does. */
static __attribute__((noinline)) const uint8_t *count_8_at_a_time(const uint8_t *r,
                                                                  const uint8_t *bend,
                                                                  run_counts *rc,
                                                                  uint64_t *ext_io,
                                                                  uint64_t *largest_io)
{
    uint64_t ext = *ext_io, largest = *largest_io;
    const uint8_t *last;
    if (bend - r < 16)
        return r;
    last = bend - 16; /* a window starting at or before it is whole */
    do {
        uint64_t a = load_le64(r), b = load_le64(r + 8), any;
        const uint64_t ext_in = ext;
        if (__builtin_expect(((a | b) & PARTIAL_BITS_OF_4) != 0, 0))
            break;
        /* Written out: -O2 does not unroll it. The states and lengths are
         * taken from the two words already loaded for the P test, not
         * loaded again byte by byte: a pair then costs two loads (its
         * class row and free mask) besides its counter, where reading
         * its two bytes made it four; on the 2-vCPU EPYC of
         * doc/benchmarks.md that is 0.73x -> 0.81x the tight loop in
         * one series, 0.88x -> 0.99x in another. Each word is shifted
         * down a pair at a time (pin_q: the length is then its second
         * byte register). The largest extent is not taken pair by pair
         * (a compare and a conditional move each): the OR of the
         * window's eight extents is at least their maximum, so one test
         * a window finds the rare window that may raise it, and only
         * that one is walked again (window_max_extent). */
#define COUNT_PAIR(w) \
        (ext = count_pair((unsigned)(w) & 0xffu, (unsigned)((w) >> 8) & 0xffu, rc, ext), \
         (w) >>= 16, pin_q(&(w)), ext)
        any = COUNT_PAIR(a);
        any |= COUNT_PAIR(a);
        any |= COUNT_PAIR(a);
        any |= COUNT_PAIR(a);
        any |= COUNT_PAIR(b);
        any |= COUNT_PAIR(b);
        any |= COUNT_PAIR(b);
        any |= COUNT_PAIR(b);
#undef COUNT_PAIR
        if (__builtin_expect(any > largest, 0))
            largest = window_max_extent(r, rc, ext_in, largest);
        r += 16;
    } while (r <= last);
    *ext_io = ext;
    *largest_io = largest;
    return r;
}

/*
 * The fast path. Most allocations are one pair: those only bump a 16-bit
 * counter per (class, run length), and the counters are folded into the
 * statistics once per block of at most FAST_BLOCK_PAIRS pairs (once per
 * piece in practice: ART's pieces hold at most ~8,000). The running free
 * extent is kept with a mask from a table, not a branch. The loop takes
 * eight pairs at a time and tests their P bits with one mask over two
 * 64-bit loads: the only branch the input decides, taken for the rare
 * windows that hold a partial pair (allocations over 256 units), which
 * then go pair by pair to the first partial pair and merge its sequence.
 * A piece that is not accepted (wrong unit total, a partial sequence that
 * changes state) is decoded again by decode_checked, which says why and
 * where.
 * The fast path costs ~5,400 instructions a piece whatever its size (the
 * tables, clearing 4.6 KB of counters, the fold's scans), so a piece of
 * fewer than SEG_FAST_MIN_PAIRS pairs goes to decode_checked alone.
 */
seg_error seg_piece_decode(const seg_piece *p, seg_stats *st, seg_error_at *at)
{
    run_counts rc;
    bucket_ranges br;
    const uint8_t *r = p->runs;
    const uint8_t *end = r + p->runs_len;
    const unsigned unit = p->unit_size;
    uint64_t seen = 0, ext = 0, largest = 0, npairs = p->runs_len / 2;
    unsigned s;

    if (unit == 0 || (p->runs_len & 1) || npairs < SEG_FAST_MIN_PAIRS)
        return decode_checked(p, st, at);
    for (s = 0; s < 128; s++) {
        rc.row[s] = rc.cnt[class_of_state[s]];
        rc.keep[s] = keep_free_of_state[s];
    }
    bucket_ranges_init(&br, unit);
    while (r < end) {
        const size_t left = (size_t)(end - r) / 2;
        const uint8_t *bend = r + 2 * (left < FAST_BLOCK_PAIRS ? left : FAST_BLOCK_PAIRS);
        memset(rc.cnt, 0, sizeof rc.cnt);
        for (;;) {
            unsigned state = 0;
            uint64_t units;
            r = count_8_at_a_time(r, bend, &rc, &ext, &largest);
            /* a partial pair within the next eight, or fewer than eight left */
            while (r < bend && !(r[0] & 0x80)) {
                ext = count_pair(r[0], r[1], &rc, ext);
                largest = max_u64(largest, ext);
                r += 2;
            }
            if (r >= bend)
                break;
            /* may run past bend (to the piece's end): merges use no counter */
            units = merge_partial(&r, end, st, unit, &state);
            /* 0: a state change; more than declared: also keeps sums from wrapping */
            if (units == 0 || units > p->length_units)
                return decode_checked(p, st, at);
            seen += units;
            ext = (ext + units) & keep_free_of_state[state];
            largest = ext > largest ? ext : largest;
        }
        seen += fold_counts(st, &rc, &br, unit);
        if (seen > p->length_units)
            return decode_checked(p, st, at);
    }
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
