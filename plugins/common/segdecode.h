/* SPDX-License-Identifier: Apache-2.0
 *
 * segdecode: the heap segment ("HPSG"/"HPSO"/"NHSG") piece parser and
 * run-length decoder. Pure C, no host, no allocation: shared by the heap
 * and nativeheap plugins through plugins/common/libddmsegments.la, a
 * convenience library linked into each .so (so neither compiles the
 * other's sources). Sees only <ddmon/bytes.h> and libc.
 *
 * A piece is `u4 heap id, u1 allocation unit size, u4 segment start
 * address, u4 offset of this piece, u4 piece length in units`, then
 * `(u1 state, u1 units-1)` pairs to the end of the chunk. The state byte
 * is P<<7 | kind<<3 | solidity: P (partial) says the run continues in the
 * next run of the same state; solidity 0 is free, anything else in use.
 *
 * Invariants:
 *  - A piece is accepted only if its runs and its declared unit count end
 *    together (the draft's rule), the run bytes come in whole pairs, the
 *    unit size is not 0, and no partial sequence changes state. A rejected
 *    piece adds nothing to the caller's statistics: decode into scratch
 *    statistics (seg_stats_reset) and add them (seg_stats_add) on success.
 *  - One pass, no allocation; a partial sequence still open at the end of
 *    the piece is closed there (pieces never split a run in ART/Dalvik).
 *  - An "allocation" is a merged run (partial runs plus the run that ends
 *    them). In HPSO mode that is one object; in HPSG (merged) mode one
 *    allocation may hold several adjacent objects of the same state.
 *
 * Non-goals: remembering where runs are (see bitmap.h for that, which
 * re-decodes retained pieces), interpreting solidity beyond free/in use.
 */
#ifndef DDM_PLUGINS_SEGDECODE_H
#define DDM_PLUGINS_SEGDECODE_H

#include <stddef.h>
#include <stdint.h>

/** Bytes before the run pairs. */
#define SEG_PIECE_HEADER_LEN 17

/** Kinds from the state byte (bits 5..3). */
enum {
    SEG_KIND_OBJECT = 0,
    SEG_KIND_CLASS = 1,
    SEG_KIND_ARRAY1 = 2,
    SEG_KIND_ARRAY2 = 3,
    SEG_KIND_ARRAY4 = 4,
    SEG_KIND_ARRAY8 = 5,
    SEG_KIND_UNKNOWN = 6,
    SEG_KIND_NATIVE = 7
};

/** Statistic classes: 0 = free (any kind, solidity 0), 1 + kind = in use. */
#define SEG_CLASS_FREE 0
#define SEG_NCLASS 9
/** Size buckets: bucket b holds allocations of [2^b, 2^(b+1)) bytes. */
#define SEG_NBUCKETS 48

/** Statistic class of a state byte. */
static inline unsigned seg_state_class(uint8_t state)
{
    return (state & 7) == 0 ? SEG_CLASS_FREE : 1u + ((state >> 3) & 7);
}

/** Human name of a class ("free", "data object", ...; DDMS's legend). */
const char *seg_class_name(unsigned cls);

/** A parsed piece header; runs are borrowed from the chunk. */
typedef struct seg_piece {
    uint32_t heap_id;
    uint8_t unit_size;       /**< bytes per allocation unit */
    uint32_t start;          /**< segment start address (32 bits on the wire) */
    uint32_t offset;         /**< offset of this piece, in bytes (ddmlib adds it to start) */
    uint32_t length_units;   /**< units the runs must cover */
    const uint8_t *runs;     /**< borrowed: (state, units-1) pairs */
    size_t runs_len;         /**< bytes of runs */
} seg_piece;

/** Per-class totals. min_units is UINT64_MAX while count is 0. */
typedef struct seg_class_stats {
    uint64_t count;     /**< allocations (merged runs) */
    uint64_t units;     /**< allocation units */
    uint64_t bytes;
    uint64_t min_bytes;
    uint64_t max_bytes;
} seg_class_stats;

/** Everything a pass over pieces accumulates. */
typedef struct seg_stats {
    seg_class_stats cls[SEG_NCLASS];
    uint64_t hist_count[SEG_NCLASS][SEG_NBUCKETS];
    uint64_t hist_bytes[SEG_NCLASS][SEG_NBUCKETS];
    /* seg_stats_reset_used zeroes everything from here on */
    uint64_t total_units;
    uint64_t total_bytes;
    uint64_t largest_free_bytes;  /**< largest run of adjacent free units within a piece */
    uint64_t runs;                /**< wire pairs decoded */
    uint64_t pieces;
} seg_stats;

/** Why a piece was rejected. */
typedef enum seg_error {
    SEG_OK = 0,
    SEG_ERR_SHORT_HEADER,    /**< fewer than 17 bytes */
    SEG_ERR_UNIT_ZERO,       /**< allocation unit size 0 */
    SEG_ERR_ODD_RUNS,        /**< run data ends in half a pair */
    SEG_ERR_RUNS_SHORT,      /**< the runs end before the declared units */
    SEG_ERR_RUNS_LONG,       /**< the declared units end before the runs */
    SEG_ERR_PARTIAL_CHANGE   /**< a state change inside a partial sequence */
} seg_error;

/** Where a decode stopped (for the log line). */
typedef struct seg_error_at {
    size_t run_offset;     /**< byte offset in the run data of the offending pair */
    uint64_t units_seen;   /**< units decoded before it */
} seg_error_at;

/** Text for @e ("runs end before the declared unit count", ...). */
const char *seg_error_str(seg_error e);

/** Parse the piece header of chunk payload @data/@len into @out (runs borrowed). */
seg_error seg_piece_parse(const uint8_t *data, size_t len, seg_piece *out);

/**
 * Pieces of fewer pairs than this are decoded pair by pair: the eight-at-a-
 * time decoder's fixed cost a piece (~5,400 instructions) outweighs what it
 * saves a pair (~50) below about 190 pairs (bench/heapdecode-ir.sh, small
 * pieces: 35 Ir a byte either way at 192 pairs; a 1-pair piece cost 6,900
 * Ir through the collector instead of 1,500). Tests pad pieces to reach
 * the fast path.
 */
#define SEG_FAST_MIN_PAIRS 192u

/**
 * Check and decode @p's runs, adding to @st (which the caller resets for
 * each piece if it may have to drop it). On error @st holds a partial
 * result the caller must discard, and @at (if not NULL) says where.
 */
seg_error seg_piece_decode(const seg_piece *p, seg_stats *st, seg_error_at *at);

/** Zero @st (min_bytes set to "none"). */
void seg_stats_reset(seg_stats *st);

/**
 * The same for an @st that was reset and then only decoded into (even by
 * a rejected piece) or added to: it writes only the histogram buckets
 * between each class's min_bytes and max_bytes, the only ones that can be
 * nonzero (~7 KiB written otherwise: most of a small piece's cost).
 */
void seg_stats_reset_used(seg_stats *st);
/** Add @src into @dst. Reads @src's histogram of a class only from the
 *  bucket of its min_bytes to that of its max_bytes: where every
 *  allocation a decoder counted lies. */
void seg_stats_add(seg_stats *dst, const seg_stats *src);
/** Bucket of an allocation of @bytes (> 0). */
unsigned seg_bucket(uint64_t bytes);

#endif /* DDM_PLUGINS_SEGDECODE_H */
