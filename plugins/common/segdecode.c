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

/* Account one merged run of @units units of @state. Branch-free where the
 * input decides (free or not), so mixed heaps do not mispredict. */
static inline __attribute__((always_inline)) void emit(seg_stats *st, uint8_t state,
                                                       uint64_t units, unsigned unit_size,
                                                       uint64_t *free_extent, uint64_t *largest)
{
    const unsigned cls = seg_state_class(state);
    const uint64_t bytes = units * unit_size;
    seg_class_stats *cs = &st->cls[cls];
    const unsigned b = bucket_of(bytes);
    const uint64_t keep = (uint64_t)0 - (uint64_t)(cls == SEG_CLASS_FREE);
    uint64_t ext;

    cs->count++;
    cs->units += units;
    cs->bytes += bytes;
    cs->min_bytes = bytes < cs->min_bytes ? bytes : cs->min_bytes;
    cs->max_bytes = bytes > cs->max_bytes ? bytes : cs->max_bytes;
    st->hist_count[cls][b]++;
    st->hist_bytes[cls][b] += bytes;
    ext = (*free_extent + bytes) & keep; /* adjacent free runs form one extent */
    *free_extent = ext;
    *largest = ext > *largest ? ext : *largest;
}

seg_error seg_piece_decode(const seg_piece *p, seg_stats *st, seg_error_at *at)
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
