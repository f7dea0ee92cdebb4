/* SPDX-License-Identifier: Apache-2.0
 *
 * The allocation tracker of a simulated VM (REAE/REAQ/REAL; doc/protocol.md,
 * "REAE, REAQ, REAL"). Tracking starts off. REAE 1 (when off) records a
 * deterministic set of recent allocations drawn from (seed, how many times
 * tracking was switched on); REAE 1 when already on changes nothing; REAE 0
 * turns it off and discards the records, as ART does, so a later REAL is
 * an empty table. REAL encodes the records, most recent first, with the
 * standard lengths (15-byte header, 9-byte entry header, 8-byte frames)
 * and string tables holding every name the model knows.
 * Ownership: a SimAlloc is a plain value inside its VM; nothing to free.
 */
#ifndef SIMVM_ALLOC_MODEL_H
#define SIMVM_ALLOC_MODEL_H

#include <stdint.h>

#include <ddmon/bytes.h>

#define SIM_ALLOC_MAX_RECORDS 64u
#define SIM_ALLOC_MAX_DEPTH 4u

typedef struct SimAllocFrame {
    uint16_t cls, method, file; /* indices into the name tables below */
    int16_t line;               /* -2 native, -1 unknown */
} SimAllocFrame;

typedef struct SimAllocRecord {
    uint32_t size;
    uint16_t tid;
    uint16_t cls;
    uint8_t depth;
    SimAllocFrame f[SIM_ALLOC_MAX_DEPTH];
} SimAllocRecord;

typedef struct SimAlloc {
    uint64_t seed;
    int enabled;
    uint32_t enables; /* times switched on so far */
    uint32_t n;       /* records, most recent first */
    SimAllocRecord rec[SIM_ALLOC_MAX_RECORDS];
} SimAlloc;

void sim_alloc_init(SimAlloc *a, uint64_t seed);
/** REAE: on (1) records a fresh set if it was off; off (0) discards them. */
void sim_alloc_set_enabled(SimAlloc *a, int on);
/** Append the REAL payload for the current records. */
void sim_alloc_write_real(const SimAlloc *a, ddm_writer *w);
/** The name tables (class descriptors, methods, files) and their sizes. */
const char *sim_alloc_class_name(unsigned i);
const char *sim_alloc_method_name(unsigned i);
const char *sim_alloc_file_name(unsigned i);

#endif /* SIMVM_ALLOC_MODEL_H */
