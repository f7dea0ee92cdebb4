/* SPDX-License-Identifier: Apache-2.0
 *
 * nhmaps: /proc/self/maps text from an NHGT reply, reduced to the
 * mappings of files ("start-end perms offset dev inode /path"), so that a
 * backtrace address can be shown as "libc.so+0x1a2b" (address - mapping
 * start + file offset). Lines that do not parse or name no file are
 * skipped, as ddmlib does.
 *
 * Ownership: the map borrows the text (names point into it) and owns its
 * entry array (nh_maps_free). At most NH_MAPS_MAX entries are kept.
 */
#ifndef DDM_NATIVEHEAP_NHMAPS_H
#define DDM_NATIVEHEAP_NHMAPS_H

#include <stddef.h>
#include <stdint.h>

#define NH_MAPS_MAX 65536

typedef struct nh_map_entry {
    uint64_t start, end, offset;
    const char *name;     /**< basename, borrowed from the text */
    size_t name_len;
} nh_map_entry;

typedef struct nh_maps {
    nh_map_entry *e;      /**< sorted by start */
    size_t n;
} nh_maps;

/** Parse @len bytes of maps text (borrowed). Returns 0 or -ENOMEM. */
int nh_maps_parse(nh_maps *m, const char *text, size_t len);
void nh_maps_free(nh_maps *m);
/** Format @addr as "name+0xOFF" if a mapping holds it, else "0xADDR". */
void nh_maps_symbolize(const nh_maps *m, uint64_t addr, char *buf, size_t len);

#endif /* DDM_NATIVEHEAP_NHMAPS_H */
