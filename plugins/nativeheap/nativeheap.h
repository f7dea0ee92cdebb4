/* SPDX-License-Identifier: Apache-2.0
 *
 * nativeheap plugin internals shared by nativeheap.c (lifecycle, chunk
 * handlers, the native-heap command), nh_poll.c (NHGT and NHSG while their views
 * are watched) and nh_views.c (the views). Not an SDK header.
 *
 * Ownership: one nh_plugin per loaded plugin (host set_data), one nh_vm
 * per VM (host vm_set_data, freed after DDM_VM_GONE; the poll finds each
 * through host->foreach_vm, so the plugin keeps no list); views belong to
 * the host. Callbacks
 * get the nh_plugin as ud and never hold an nh_vm across a request.
 */
#ifndef DDM_NATIVEHEAP_NATIVEHEAP_H
#define DDM_NATIVEHEAP_NATIVEHEAP_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

#include "nhgt.h"
#include "../common/segcollect.h"

#define NH_CHUNK_NHGT DDM_CHUNK('N', 'H', 'G', 'T')
#define NH_CHUNK_NHSG DDM_CHUNK('N', 'H', 'S', 'G')
#define NH_CHUNK_NHST DDM_CHUNK('N', 'H', 'S', 'T')
#define NH_CHUNK_NHEN DDM_CHUNK('N', 'H', 'E', 'N')

#define NH_DEFAULT_INTERVAL_MS 10000u /* nativeheap.interval: NHGT period while watched */
#define NH_MIN_INTERVAL_MS 1000u
#define NH_TICK_MS 250u               /* how often nh_poll.c looks at the watchers */
#define NH_DEFAULT_GRACE_MS 10000u    /* nativeheap.grace_ms: NHSG off this long after the last look */
/* An update (NHST, pieces) with no NHEN and no piece for this long is
 * dropped by the tick: a real VM sends one update's NHSG pieces in one burst
 * (milliseconds apart), so only a broken or hostile VM goes quiet for this
 * long in the middle of one; without the limit its unfinished update kept
 * the state busy forever. */
#define NH_UPDATE_STALL_MS 10000u

/** Options ("nativeheap.KEY"). */
typedef struct nh_opts {
    int segments;          /**< nativeheap.segments: NHSG(1, 0) while the segments view is watched (1) */
    int always;            /**< nativeheap.always: NHSG(1, 0) at READY, never off (0) */
    unsigned grace_ms;     /**< nativeheap.grace_ms: NHSG(0, 1) this long after the last look */
    unsigned max_rows;     /**< nativeheap.max_rows: rows per table view (500) */
    unsigned frames;       /**< nativeheap.frames: frames shown per backtrace (8) */
    unsigned timeout_ms;   /**< nativeheap.timeout_ms: NHGT reply timeout (0 = host default) */
    unsigned interval_ms;  /**< nativeheap.interval: NHGT period while watched (0 = never by itself) */
} nh_opts;

struct nh_vm;

typedef struct nh_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    nh_opts opts;
    uint32_t poll_timer;     /**< nh_poll.c's tick (NHGT poll and NHSG switch), 0 if none */
    double (*now)(void);     /**< monotonic seconds; tests replace it */
    size_t group_max;        /**< groups per NHGT table (0: NH_GROUPS_MAX); tests lower it */
    size_t group_records_max; /**< records grouped per NHGT (0: NH_GROUP_RECORDS_MAX) */
    uint64_t last_group_ops; /**< work of the last NHGT grouping (probes; tests bound it) */
    ddm_tick_list ticks;     /**< nh_poll.c: the VMs a tick visits while the watches stay the same */
    int lazy_views;          /**< the views are declared (vm_view_declare, 1.6): a VM's are
                                  made when asked for or when there is data to show */
} nh_plugin;

typedef struct nh_vm {
    nh_plugin *np;
    ddm_vm *vm;
    int ready;               /**< DDM_VM_READY seen, not gone */
    int was_watched;         /**< an NHGT view was watched at the last tick */
    int nhgt_in_flight;      /**< a polling NHGT awaits its reply */
    int nhgt_fail_logged;    /**< a refused polling NHGT was logged (once per VM) */
    double last_nhgt;        /**< when the last polling NHGT went out (np->now) */
    ddm_view *segments;      /**< nativeheap.segments (NHSG enabled) */
    ddm_view *summary;       /**< nativeheap.summary (NHGT enabled) */
    ddm_view *allocations;   /**< nativeheap.allocations */
    ddm_view *backtraces;    /**< nativeheap.backtraces */
    int segments_on;         /**< NHSG(1, 0) was sent last (not yet NHSG(0, 1)) */
    int seg_fail_logged;     /**< a failed NHSG switch was logged (until one succeeds) */
    double seg_last_wanted;  /**< when the segments view was last seen watched (np->now) */
    seg_collector *coll;     /**< NULL until the first NHST or NHSG (nh_vm_collector):
                                  an idle VM holds none */
    unsigned rejects_logged;
    int headline_nhgt;       /**< the "native" headline comes from NHGT (not NHSG) */
    double unasked_logged_at; /**< when an unsolicited NHGT was last logged (np->now) */
    unsigned unasked_quiet;  /**< unsolicited NHGTs ignored since without a log line */
    int metric_logged;       /**< a failed vm_metric was logged (ddm_vm_metric_logged) */
    int tick_watched;        /**< a view of it was watched at the last tick (nh_poll.c) */
    int views_made;          /**< nh_views_create ran */
    int data_came;           /**< segment data came that nobody may have asked for (late,
                                  or unsolicited): on the tick list until a tick finds @nv
                                  idle and frees it or its segments (nh_poll.c) */
    double piece_at;         /**< when the last NHST or NHSG came (np->now): an update
                                  quiet for NH_UPDATE_STALL_MS is dropped */
    ddm_tick_node tick;      /**< on np->ticks */
} nh_vm;

/* nativeheap.c */
nh_vm *nh_vm_get(nh_plugin *np, ddm_vm *vm);
/** Free @nv (vm_set_data NULL) if it holds nothing but data its views
 *  showed: no view, NHSG off, no NHGT out, the headline not NHGT's, no
 *  update coming, not nativeheap.always (views
 *  made on demand, 1.6: their last unmake, or the end of what outlived
 *  them). With an NHGT out or NHGT's headline only its segment updates
 *  go, the struct stays. @nv may be gone on return. */
void nh_vm_release_if_idle(nh_vm *nv);
/** Drop @nv's unfinished segment updates if no NHST or NHSG came for
 *  NH_UPDATE_STALL_MS (one log line naming the VM); the tick calls it
 *  before nh_vm_release_if_idle, which an update in progress stops. */
void nh_vm_drop_stalled(nh_vm *nv);
/** @nv's segment collector, made at the first call; NULL if out of memory. */
seg_collector *nh_vm_collector(nh_vm *nv);
const char *nh_vm_label(nh_plugin *np, ddm_vm *vm, char *buf, size_t len);

/** Monotonic seconds (the default np->now). */
double nh_monotonic_now(void);

/** Reply callback of the NHSG switch requests (logs a refusal). */
void nh_on_request_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud);

/* nh_poll.c */
/** Start the tick (none when it would have nothing to do: nativeheap.interval
 *  0 and NHSG not switched by watching). */
int nh_poll_start(nh_plugin *np);
/** nh_metrics.c: declare the metric families (in init; 1.3), and set the
 *  VM's native heap figures (@allocations < 0: none known). */
int nh_metrics_register(nh_plugin *np);
void nh_metrics_publish(nh_vm *nv, uint64_t bytes, int64_t allocations);
/** One tick: NHGT to each ready VM whose NHGT views someone watches, at once
 *  when the watch begins, then every nativeheap.interval; NHSG(1, 0) to each
 *  ready VM whose segments view is watched, NHSG(0, 1) nativeheap.grace_ms
 *  after the last look. */
void nh_poll_once(nh_plugin *np);
/** The same for one VM (it just became ready): the work of a VM's start
 *  is that VM's alone, not a walk of every VM. */
void nh_poll_vm(nh_plugin *np, ddm_vm *vm);
/** @nv's VM is gone: no tick visits it again. */
void nh_poll_forget(nh_plugin *np, nh_vm *nv);
/** Segment data came for @nv (NHST, NHSG, NHEN): with views made on
 *  demand the next tick looks at it even if nothing else would, so data
 *  nobody asked for (an update after NHSG off, a VM's unsolicited ones) is
 *  freed by nh_vm_release_if_idle, not kept until the watches change
 *  (review rU3 3). */
void nh_poll_data_came(nh_plugin *np, nh_vm *nv);
/** nh_vm_release_if_idle freed @nv's segments: off the tick list unless
 *  the tick has other work for it. */
void nh_poll_data_shed(nh_plugin *np, nh_vm *nv);

/* nh_views.c */
void nh_views_create(nh_vm *nv);
/** nh_views_create unless it ran: before anything is published. */
void nh_views_ensure(nh_vm *nv);
/** Every view of @nv's VM that is missing, the segments view filled from
 * the update held: what a look makes, and what `native-heap`'s reply makes
 * before it fills the NHGT views (they are taken back after the linger). */
void nh_views_make(nh_vm *nv);
/** Declare the views nh_views_create makes (vm_view_declare, 1.6), so an
 *  idle VM nobody looks at holds none; on an older core, nothing. */
int nh_views_declare(nh_plugin *np);
/** Publish nativeheap.segments from the collector. */
void nh_views_segments(nh_vm *nv);
/** Publish summary, allocations and backtraces from a parsed NHGT.
 *  Returns 0 or -ENOMEM. Fills the totals for the command's message. */
int nh_views_nhgt(nh_vm *nv, const nhgt_info *in, uint64_t *allocations, uint64_t *bytes);

#endif /* DDM_NATIVEHEAP_NATIVEHEAP_H */
