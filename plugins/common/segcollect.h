/* SPDX-License-Identifier: Apache-2.0
 *
 * segcollect: per-VM collection of heap segment updates. An update is
 * HPST(heap) ... any number of pieces ... HPEN(heap) (NHST/NHSG/NHEN for
 * the native heap); several heaps may be updated at once and pieces may
 * arrive in any order. Pure C (libc only), shared by the heap and
 * nativeheap plugins (plugins/common/libddmsegments.la); the caller logs,
 * using what the calls report.
 *
 * Invariants:
 *  - Per heap there is at most one update being collected ("pending") and
 *    one published ("current"). HPEN publishes the pending update, which
 *    replaces the current one. A second HPST drops an unfinished pending
 *    update (reported). A piece without HPST starts an update implicitly
 *    (reported), so HPEN still publishes it. HPEN with no pending update is
 *    reported and changes nothing.
 *  - A rejected piece (segdecode.h's rule) changes nothing but the
 *    update's rejected count: the rest of the heap is kept.
 *  - Accepted pieces are kept (a copy of the run pairs, for the bitmap)
 *    only when the collector was told to keep them, within a byte cap for
 *    the whole collector and SEG_MAX_BITMAP_UNITS per update; past either,
 *    the update's bitmap is marked incomplete (statistics are unaffected).
 *    Published pieces are sorted by address.
 *  - At most SEG_MAX_HEAPS heap ids per collector.
 *
 * Ownership: the collector owns every seg_heap and kept piece; pointers
 * it returns are borrowed until the next call that changes that heap.
 */
#ifndef DDM_PLUGINS_SEGCOLLECT_H
#define DDM_PLUGINS_SEGCOLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "segdecode.h"

#define SEG_MAX_HEAPS 16
/** Refuse to keep a bitmap of more units than this (1 G units). */
#define SEG_MAX_BITMAP_UNITS ((uint64_t)1 << 30)

/** An accepted piece kept for the bitmap: where it is and its run pairs. */
typedef struct seg_kept {
    uint64_t addr;        /**< start + offset (bytes) */
    uint64_t units;       /**< units covered (== declared length) */
    uint8_t unit_size;
    size_t runs_len;
    uint8_t runs[];       /**< copy of the (state, units-1) pairs */
} seg_kept;

/** One update of one heap. */
typedef struct seg_gen {
    seg_stats stats;          /**< of accepted pieces */
    uint32_t accepted;
    uint32_t rejected;
    uint8_t unit_size;        /**< of the first accepted piece */
    int objects_mode;         /**< 1 if pieces came as HPSO (runs end at objects) */
    int bitmap_complete;      /**< 1 if every accepted piece is in @pieces */
    seg_kept **pieces;
    size_t n_pieces;
    size_t cap_pieces;
    size_t kept_bytes;
} seg_gen;

typedef struct seg_heap {
    uint32_t id;
    int collecting;       /**< @pending is an update in progress */
    seg_gen pending;
    int have_current;     /**< @current holds a published update */
    seg_gen current;
    uint64_t updates;     /**< updates published so far */
} seg_heap;

typedef struct seg_collector {
    seg_heap *heaps[SEG_MAX_HEAPS]; /**< sorted by id */
    size_t n_heaps;
    int keep_pieces;
    size_t keep_max_bytes;
    size_t kept_bytes;              /**< over every heap, pending and current */
    seg_stats *scratch;             /**< one piece's statistics (~7 KiB): allocated at the
                                         first piece, so a collector that never saw one (an
                                         idle VM's) costs only this struct */
} seg_collector;

/** What a piece did, for the caller's log line. */
typedef struct seg_piece_report {
    seg_piece piece;      /**< the parsed header (runs borrowed from the chunk) */
    seg_error error;      /**< SEG_OK if accepted */
    seg_error_at at;
    int implicit_start;   /**< no HPST before it: an update was started */
    int not_kept;         /**< accepted, but not kept for the bitmap (cap reached) */
} seg_piece_report;

/** Set up an empty collector. @keep_pieces: keep pieces for a bitmap, within @keep_max_bytes. */
void seg_collector_init(seg_collector *c, int keep_pieces, size_t keep_max_bytes);
/** Free everything. The collector may be used again after init. */
void seg_collector_clear(seg_collector *c);

/** HPST: start an update. Returns 0, 1 if an unfinished update was dropped,
 *  or -ENOSPC (too many heaps). */
int seg_collector_start(seg_collector *c, uint32_t heap_id);
/** A piece (payload of HPSG/HPSO/NHSG); @objects is 1 for HPSO. Returns 0
 *  if accepted, -EINVAL if rejected (see @rep->error), -ENOSPC if its heap
 *  id is one too many, -ENOMEM. @rep is always filled. */
int seg_collector_piece(seg_collector *c, const uint8_t *data, size_t len, int objects,
                        seg_piece_report *rep);
/** HPEN: publish the update. Returns 0 and sets *@out, or -ENOENT when no
 *  update is pending for @heap_id. */
int seg_collector_end(seg_collector *c, uint32_t heap_id, const seg_heap **out);

/** Drop every unfinished update (HPST or a piece came, no HPEN): their
 *  pieces are freed, published updates stay. Returns how many were dropped
 *  (the plugins' stall limit: a VM that never sends HPEN). */
size_t seg_collector_abandon(seg_collector *c);

/** Heap by id, or NULL. */
const seg_heap *seg_collector_heap(const seg_collector *c, uint32_t heap_id);

#endif /* DDM_PLUGINS_SEGCOLLECT_H */
