/* SPDX-License-Identifier: Apache-2.0
 *
 * heapinfo: the HPIF data chunk (a VM event, also for when=1 "now"):
 * `u4 heapCount`, then per heap `u4 id, u8 timestamp ms, u1 reason,
 * u4 max bytes, u4 size bytes, u4 allocated bytes, u4 allocated objects`
 * (29 bytes per heap). Pure C, no allocation.
 *
 * Invariants: the count is bounded by the bytes present (remaining / 29)
 * and by HPIF_MAX_HEAPS; whatever is declared beyond that is reported,
 * not read. Trailing bytes after the last entry are ignored (forward
 * compatibility).
 */
#ifndef DDM_HEAP_HEAPINFO_H
#define DDM_HEAP_HEAPINFO_H

#include <stddef.h>
#include <stdint.h>

#define HPIF_ENTRY_LEN 29
#define HPIF_MAX_HEAPS 16

typedef struct hpif_entry {
    uint32_t heap_id;
    uint64_t timestamp_ms;  /**< Unix epoch, ms */
    uint8_t reason;         /**< the "when" value that caused it */
    uint32_t max_bytes;
    uint32_t size_bytes;
    uint32_t allocated_bytes;
    uint32_t allocated_objects;
} hpif_entry;

typedef struct hpif_data {
    uint32_t declared;            /**< heapCount as sent */
    size_t n;                     /**< entries read into @heaps */
    hpif_entry heaps[HPIF_MAX_HEAPS];
} hpif_data;

/** Parse an HPIF payload. Returns 0 if every declared entry was read,
 *  1 if the count was cut (fewer bytes or more heaps than allowed; @out
 *  holds what fitted), -EINVAL if not even the count is there. */
int hpif_parse(const uint8_t *data, size_t len, hpif_data *out);

/** "never", "now", "next GC", "every GC", or "?" for a "when"/reason value. */
const char *hpif_when_name(unsigned when);

#endif /* DDM_HEAP_HEAPINFO_H */
