/* SPDX-License-Identifier: Apache-2.0
 *
 * nativeheap plugin internals shared by nativeheap.c (lifecycle, chunk
 * handlers, the native-heap command) and nh_views.c (the views). Not an
 * SDK header.
 *
 * Ownership: one nh_plugin per loaded plugin (host set_data), one nh_vm
 * per VM (host vm_set_data, freed after DDM_VM_GONE); views belong to the
 * host. Callbacks get the nh_plugin as ud.
 */
#ifndef DDM_NATIVEHEAP_NATIVEHEAP_H
#define DDM_NATIVEHEAP_NATIVEHEAP_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>

#include "nhgt.h"
#include "../heap/segcollect.h"

#define NH_CHUNK_NHGT DDM_CHUNK('N', 'H', 'G', 'T')
#define NH_CHUNK_NHSG DDM_CHUNK('N', 'H', 'S', 'G')
#define NH_CHUNK_NHST DDM_CHUNK('N', 'H', 'S', 'T')
#define NH_CHUNK_NHEN DDM_CHUNK('N', 'H', 'E', 'N')

/** Options ("nativeheap.KEY"). */
typedef struct nh_opts {
    int segments;          /**< nativeheap.segments: ask for NHSG on READY (1) */
    unsigned max_rows;     /**< nativeheap.max_rows: rows per table view (500) */
    unsigned frames;       /**< nativeheap.frames: frames shown per backtrace (8) */
    unsigned timeout_ms;   /**< nativeheap.timeout_ms: NHGT reply timeout (0 = host default) */
} nh_opts;

typedef struct nh_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    nh_opts opts;
} nh_plugin;

typedef struct nh_vm {
    nh_plugin *np;
    ddm_vm *vm;
    ddm_view *segments;      /**< nativeheap.segments (NHSG enabled) */
    ddm_view *summary;       /**< nativeheap.summary (NHGT enabled) */
    ddm_view *allocations;   /**< nativeheap.allocations */
    ddm_view *backtraces;    /**< nativeheap.backtraces */
    int segments_on;         /**< NHSG(1, 0) was sent */
    seg_collector coll;
    unsigned rejects_logged;
} nh_vm;

/* nativeheap.c */
nh_vm *nh_vm_get(nh_plugin *np, ddm_vm *vm);
const char *nh_vm_label(nh_plugin *np, ddm_vm *vm, char *buf, size_t len);

/* nh_views.c */
void nh_views_create(nh_vm *nv);
/** Publish nativeheap.segments from the collector. */
void nh_views_segments(nh_vm *nv);
/** Publish summary, allocations and backtraces from a parsed NHGT.
 *  Returns 0 or -ENOMEM. Fills the totals for the command's message. */
int nh_views_nhgt(nh_vm *nv, const nhgt_info *in, uint64_t *allocations, uint64_t *bytes);

#endif /* DDM_NATIVEHEAP_NATIVEHEAP_H */
