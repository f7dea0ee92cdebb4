/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulated managed (and native) heap and its DDM segment encoder.
 *
 * A heap is not stored run by run: it is a deterministic generator over
 * (seed, generation), so 5000 VMs cost a few dozen bytes each. Walking a
 * generation yields runs (state byte, unit count) that cover exactly
 * size_units allocation units of 8 bytes. Invariants of every walk: no run
 * is empty or longer than SIM_RUN_MAX_UNITS, and two free runs are never
 * adjacent (so "largest free run" means the same to everyone). A GC moves
 * to the next generation: objects freed and allocated, size and fill change.
 *
 * The encoder cuts a walk into HPSG/HPSO/NHSG pieces as ART does: each
 * piece `u4 heapId, u1 unit(8), u4 start address, u4 offset(0), u4 units`
 * then pairs `u1 state, u1 units-1`; runs over 256 units become
 * (state|0x80, 255)... then (state, n-1); a run's pairs never straddle two
 * pieces; a piece never exceeds max_chunk bytes (ART: 16368).
 * Non-goals: addresses wider than 32 bits (ART truncates them too).
 */
#ifndef SIMVM_HEAP_H
#define SIMVM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/bytes.h>

#define SIM_HEAP_UNIT 8u
#define SIM_SEG_ART_MAX_CHUNK 16368u
#define SIM_SEG_HEADER_LEN 17u
#define SIM_SEG_PARTIAL 0x80u
#define SIM_SEG_STATE(solidity, kind) ((uint8_t)((((kind) & 7u) << 3) | ((solidity) & 7u)))
#define SIM_SEG_KIND(state) (((state) >> 3) & 7u)
#define SIM_SEG_SOLIDITY(state) ((state) & 7u)
/** Longest run a walk produces: its pairs (512 bytes) fit any allowed piece. */
#define SIM_RUN_MAX_UNITS 65536u
/** Smallest piece size accepted by the encoder (header + one longest run). */
#define SIM_SEG_MIN_CHUNK 1024u

enum {
    SIM_KIND_OBJECT = 0,
    SIM_KIND_CLASS = 1,
    SIM_KIND_ARRAY1 = 2,
    SIM_KIND_ARRAY2 = 3,
    SIM_KIND_ARRAY4 = 4,
    SIM_KIND_ARRAY8 = 5,
    SIM_KIND_UNKNOWN = 6,
    SIM_KIND_NATIVE = 7,
    SIM_KIND_COUNT = 8
};

/** What a correct decoder computes from a set of segments. */
typedef struct SimSegStats {
    uint64_t total_units;
    uint64_t bytes[SIM_KIND_COUNT];  /* allocated (solidity != 0) bytes per kind */
    uint32_t count[SIM_KIND_COUNT];  /* allocated runs (objects) per kind */
    uint64_t free_bytes;
    uint32_t free_count;
    uint64_t largest_free;           /* bytes */
    uint32_t pieces;                 /* chunks the encoder produced (0 if not encoded) */
} SimSegStats;

typedef struct SimHeap {
    uint64_t seed;
    uint32_t heap_id;
    uint32_t base_addr;      /* start address, 32 bits as ART sends it */
    uint32_t generation;     /* +1 per GC */
    uint32_t size_units;     /* current heap size */
    uint32_t max_units;      /* the heap's limit (HPIF max) */
    uint16_t fill_permille;  /* allocated fraction this generation aims at */
    uint8_t native;          /* only free and native runs */
    uint8_t stats_valid;
    SimSegStats stats;       /* cache for the current generation */
} SimHeap;

/** Kind names as the ground truth and the docs use them ("free" is separate). */
const char *sim_kind_name(unsigned kind);

void sim_heap_init(SimHeap *h, uint32_t heap_id, uint64_t seed, uint32_t size_bytes,
                   uint32_t max_bytes, int native);
/** Run a "GC": next generation, new size and fill. */
void sim_heap_gc(SimHeap *h);

typedef void (*SimRunFn)(uint8_t state, uint32_t units, void *ud);
/** Call @fn for every run of the current generation, in address order. */
void sim_heap_walk(const SimHeap *h, SimRunFn fn, void *ud);
/** Statistics of the current generation (cached). */
const SimSegStats *sim_heap_stats(SimHeap *h);
void sim_seg_stats_add_run(SimSegStats *s, uint8_t state, uint32_t units);

/** Pairs needed for a run of @units (units >= 1). */
static inline uint32_t sim_seg_run_pairs(uint32_t units)
{
    return (units + 255u) / 256u;
}
/** Write the pairs of one run at @out (2 * sim_seg_run_pairs bytes). Returns bytes written. */
size_t sim_seg_put_run(uint8_t *out, uint8_t state, uint32_t units);

/** Called per piece; @piece is borrowed for the call (a chunk's data, without chunk header). */
typedef void (*SimPieceFn)(const uint8_t *piece, size_t len, void *ud);
/** Encode the current generation into pieces of at most @max_chunk bytes
 *  (clamped to [SIM_SEG_MIN_CHUNK, SIM_SEG_ART_MAX_CHUNK]); fills @stats
 *  (may be NULL) with what the pieces say. Returns the number of pieces. */
uint32_t sim_heap_encode_segments(const SimHeap *h, size_t max_chunk, SimPieceFn fn, void *ud,
                                  SimSegStats *stats);

/** Append one HPIF heap entry (29 bytes) for @h: id, @timestamp_ms, @reason, max,
 *  size, allocated bytes and objects (from the current generation). */
void sim_heap_write_hpif(ddm_writer *w, SimHeap *h, uint64_t timestamp_ms, uint8_t reason);

#endif /* SIMVM_HEAP_H */
