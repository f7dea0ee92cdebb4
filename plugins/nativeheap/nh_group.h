/* SPDX-License-Identifier: Apache-2.0
 *
 * nh_group: NHGT records grouped as they are read, by (size, zygote) or
 * by whole backtrace, in a bounded hash table: at most @max groups
 * (NH_GROUPS_MAX), whatever the record count; a record whose group does
 * not exist once the table is full is counted in @ungrouped (its figures
 * still count in the totals the caller keeps). One pass over the records,
 * O(1) expected per record (the hash is seeded at random per table, so a
 * VM cannot choose keys that collide), then the k biggest groups picked
 * (O(g log k)) and sorted. Replaces an array of one group per record and a qsort
 * of it (600 MB for a 64 MiB NHGT: issue 15, fault 2).
 *
 * Ownership: the table owns its arrays (nh_grouper_free); a group's
 * @frames is borrowed from the NHGT payload, which must outlive the table.
 */
#ifndef DDM_NATIVEHEAP_NH_GROUP_H
#define DDM_NATIVEHEAP_NH_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "nhgt.h"

/** Groups kept per table (each ~56 bytes + 8 bytes of index). */
#define NH_GROUPS_MAX 65536u
/** Records grouped per NHGT (the rest count in the totals only): grouping
 *  costs ~100-200 ns a record once the tables outgrow the caches, and the
 *  main loop must not stall (a VM may answer with 256 MiB of records). */
#define NH_GROUP_RECORDS_MAX 131072u

typedef struct nh_group {
    uint64_t size;          /* by size */
    int zygote;
    const uint8_t *frames;  /* by backtrace: borrowed from the payload */
    size_t frames_len;
    uint64_t count;         /* saturating sums */
    uint64_t total;
    uint64_t records;
} nh_group;

typedef struct nh_grouper {
    int by_frames;          /* key: the backtrace (1) or (size, zygote) (0) */
    size_t frames_len;      /* bytes of a backtrace key */
    nh_group *g;            /* n groups; capacity cap */
    size_t n, cap, max;
    uint32_t *index;        /* slot -> group + 1, 0 empty; mask + 1 slots */
    size_t mask;
    uint32_t seed;
    uint64_t ungrouped;     /* records left out because the table was full */
    uint64_t ops;           /* probes and hashed bytes / 8 (tests bound it) */
} nh_grouper;

/** An empty table; @max 0 means NH_GROUPS_MAX. */
void nh_grouper_init(nh_grouper *t, int by_frames, size_t frames_len, size_t max);
void nh_grouper_free(nh_grouper *t);
/** Add record @r (total = size x count, saturated). 0, or -ENOMEM. */
int nh_grouper_add(nh_grouper *t, const nhgt_record *r, uint64_t total);
/** Keep the @k biggest groups by total (then count, then size), biggest
 *  first: O(n log k), no sort of them all. The table is read-only after. */
void nh_grouper_top_by_total(nh_grouper *t, size_t k);

#endif /* DDM_NATIVEHEAP_NH_GROUP_H */
