/* SPDX-License-Identifier: Apache-2.0
 *
 * The NHGT reply of a simulated VM: the one little-endian DDM payload.
 * Header v1 (five u32: mapSize, allocSize, allocInfoSize, totalMemory,
 * backtraceSize; implies 4-byte pointers) or v2 (u32 0x812345DD, u16 2,
 * u16 pointer size, then the five fields pointer-wide); then mapSize bytes
 * of /proc/self/maps text; then allocation records (size with the top bit
 * = allocated in zygote, count, backtraceSize pointers, 0 = unused slot).
 * Content is drawn from (seed, generation): same seed, same reply.
 * Native heap *segments* (NHSG) use the heap generator (heap.h, native=1).
 */
#ifndef SIMVM_NATIVE_H
#define SIMVM_NATIVE_H

#include <stdint.h>

#include <ddmon/bytes.h>

#define SIM_NHGT_SIGNATURE 0x812345DDu
#define SIM_NHGT_BACKTRACE 16u

/** What the reply said, for the ground truth. */
typedef struct SimNhgtStats {
    uint32_t version, ptr_size;
    uint64_t map_bytes;
    uint32_t records;
    uint64_t total_memory;      /* sum of size * count */
    uint64_t zygote_bytes;      /* part of it allocated in zygote */
    uint32_t backtrace_size;
} SimNhgtStats;

/** Append an NHGT payload (@version 1 or 2, @ptr_size 4 or 8; v1 forces 4). */
void sim_native_write_nhgt(ddm_writer *w, uint64_t seed, uint32_t generation, unsigned version,
                           unsigned ptr_size, SimNhgtStats *stats);

#endif /* SIMVM_NATIVE_H */
