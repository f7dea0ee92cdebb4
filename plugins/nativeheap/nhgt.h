/* SPDX-License-Identifier: Apache-2.0
 *
 * nhgt: the NHGT reply, the one little-endian, native-word-size DDM
 * payload. Two headers:
 *   v1 (32-bit processes): u32 mapSize, allocSize, allocInfoSize,
 *      totalMemory, backtraceSize;
 *   v2: u32 signature 0x812345DD, u16 version 2, u16 pointerSize (4|8),
 *      then the same five fields as pointer-size integers.
 * Then mapSize bytes of /proc/self/maps text, then allocSize bytes of
 * records, allocInfoSize bytes each: size_t size (top bit: allocated in
 * the zygote), size_t count, backtraceSize pointers (0 = unused slot).
 * allocInfoSize 0 means malloc debugging is off: only totalMemory counts.
 *
 * Invariants: nothing is read outside the payload; every size is checked
 * against what is left; a record must hold at least its declared fields
 * ((2 + backtraceSize) * pointerSize; a longer stride is skipped over for
 * forward compatibility). v1 pointers are 4 bytes unless allocInfoSize
 * only fits 8-byte ones. Pure C, no allocation: the parse result borrows
 * the payload.
 */
#ifndef DDM_NATIVEHEAP_NHGT_H
#define DDM_NATIVEHEAP_NHGT_H

#include <stddef.h>
#include <stdint.h>

#define NHGT_SIGNATURE 0x812345DDu
/** Deepest backtrace accepted (bionic records 16..64 frames). */
#define NHGT_MAX_BACKTRACE 256

typedef struct nhgt_info {
    int version;               /**< 1 or 2 */
    unsigned ptr_size;         /**< 4 or 8 */
    uint64_t map_size;
    uint64_t alloc_size;
    uint64_t alloc_info_size;
    uint64_t total_memory;
    uint64_t backtrace_size;
    const char *maps;          /**< borrowed, map_size bytes, not NUL-terminated */
    const uint8_t *records;    /**< borrowed */
    size_t n_records;
    size_t stride;             /**< bytes per record (alloc_info_size) */
    int ragged;                /**< alloc_size was not a multiple of alloc_info_size */
} nhgt_info;

/** One allocation record. */
typedef struct nhgt_record {
    uint64_t size;     /**< bytes, zygote bit cleared */
    int zygote;
    uint64_t count;
    const uint8_t *frames; /**< borrowed: backtrace_size pointers */
} nhgt_record;

/** Parse @data/@len. Returns 0, or -EINVAL with a reason in @err. */
int nhgt_parse(const uint8_t *data, size_t len, nhgt_info *out, char *err, size_t errlen);
/** Record @i (< n_records). */
void nhgt_record_at(const nhgt_info *in, size_t i, nhgt_record *out);
/** Frame @k (< backtrace_size) of record @r. */
uint64_t nhgt_frame(const nhgt_info *in, const nhgt_record *r, size_t k);

#endif /* DDM_NATIVEHEAP_NHGT_H */
