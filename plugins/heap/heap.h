/* SPDX-License-Identifier: Apache-2.0
 *
 * heap plugin internals shared by heap.c (lifecycle, options, chunk
 * handlers), heap_watch.c (collection switched on only while someone
 * looks), heap_views.c (publishing the views) and heap_cmd.c (the
 * heap-bitmap and heap-info commands). Not an SDK header.
 *
 * Ownership: one heap_plugin per loaded plugin (the host frees it after
 * fini through set_data); one heap_vm per ready VM (vm_set_data, freed by
 * the host after DDM_VM_GONE; the watch timer finds each through
 * host->foreach_vm, so there is no list to unlink it from). Views belong
 * to the host. Every callback is registered
 * with the heap_plugin as ud, which is how it reaches the host.
 */
#ifndef DDM_HEAP_HEAP_H
#define DDM_HEAP_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

#include "heapinfo.h"
#include "../common/segcollect.h"

#define HEAP_CHUNK_HPIF DDM_CHUNK('H', 'P', 'I', 'F')
#define HEAP_CHUNK_HPSG DDM_CHUNK('H', 'P', 'S', 'G')
#define HEAP_CHUNK_HPSO DDM_CHUNK('H', 'P', 'S', 'O')
#define HEAP_CHUNK_HPST DDM_CHUNK('H', 'P', 'S', 'T')
#define HEAP_CHUNK_HPEN DDM_CHUNK('H', 'P', 'E', 'N')
#define HEAP_CHUNK_HPGC DDM_CHUNK('H', 'P', 'G', 'C')

/** How often heap_watch.c looks at the views' watchers (ms). */
#define HEAP_WATCH_TICK_MS 250u
/** heap.grace_ms default: collection stays on this long after the last look. */
#define HEAP_DEFAULT_GRACE_MS 10000u
/** Reply timeout of the HPGC that heap-bitmap sends when it has no segments. */
#define HEAP_BITMAP_GC_TIMEOUT_MS 10000u
/** How long heap-bitmap still waits for the GC's segments after the HPGC
 *  reply (a VM may answer before the GC's segments reach us). */
#define HEAP_BITMAP_REPLY_GRACE_MS 2000u
/** How long heap-info still waits for the HPIF event after an empty reply. */
#define HEAP_INFO_REPLY_GRACE_MS 500u

/** An update (HPST, pieces) with no HPEN and no piece for this long is
 *  dropped by the tick: a real VM sends one update's pieces in one burst
 *  while it walks the heap (milliseconds apart), so only a broken or
 *  hostile VM goes quiet for this long in the middle of one; without the
 *  limit its unfinished update (up to heap.bitmap_max_mb) kept the state
 *  busy forever. */
#define HEAP_UPDATE_STALL_MS 10000u

/** Rejected pieces logged one by one per update; the rest are summed up at HPEN. */
#define HEAP_REJECT_LOG_MAX 5

/** Most rows of the heap.map view (heap_map.c): past this, coarse granules. */
#define HEAP_MAP_MAX_ROWS 2048u

/** Options ("heap.KEY"); defaults in heap.c. */
typedef struct heap_opts {
    unsigned hpif_when;        /**< heap.hpif_when: 0 none, 1 now, 2 next GC, 3 every GC */
    unsigned what;             /**< heap.what: 0 merged (HPSG), 1 objects (HPSO) */
    int segments;              /**< heap.segments: 0 never asks for segments */
    uint32_t bitmap_width;     /**< heap.bitmap_width */
    size_t bitmap_max_bytes;   /**< heap.bitmap_max_mb: run data kept per VM for bitmaps */
    size_t blob_max_bytes;     /**< heap.blob_max_mb: cap of the heap.bitmap view's PNG */
    unsigned blob_interval_ms; /**< heap.blob_interval_ms: at most one heap.bitmap per this (2000) */
    int always;                /**< heap.always: collect on every VM from READY on (0) */
    unsigned grace_ms;         /**< heap.grace_ms: keep collecting this long after the last look */
} heap_opts;

struct heap_vm;

typedef struct heap_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    heap_opts opts;
    uint32_t watch_timer;       /**< heap_watch.c's tick, 0 if none (heap.always) */
    double (*now)(void);        /**< monotonic seconds; tests replace it */
    int64_t (*wall_ms)(void);   /**< Unix epoch ms (captions); tests replace it */
    ddm_tick_list ticks;        /**< heap_watch.c: the VMs a tick visits while the watches stay the same */
    int lazy_views;             /**< the views are declared (vm_view_declare, 1.6): a VM's are
                                     made when asked for or when there is data to show */
} heap_plugin;

/** A heap-bitmap command waiting for the segments of the GC it asked for;
 *  owned by the HPGC request's reply callback, then (when the reply came
 *  before the segments) by its grace timer; shared with the per-VM state
 *  so the HPEN event can finish the command first. */
typedef struct heap_bitmap_ticket {
    heap_plugin *hp;
    ddm_cmd *cmd;               /**< NULL once finished */
    struct heap_vm *hv;         /**< NULL once the VM is gone */
    char *file;                 /**< absolute or as given (owned) */
    uint32_t width;
    uint32_t heap_id;
    int have_heap;
    int raw;                    /**< --raw: the bare bitmap, no caption */
    uint32_t grace_timer;       /**< owns the ticket after the reply, 0 before */
} heap_bitmap_ticket;

/** A heap-info command waiting for HPIF data; owned by the request's reply
 *  callback, then (after an empty reply) by its grace timer. */
typedef struct heap_info_ticket {
    heap_plugin *hp;
    ddm_cmd *cmd;               /**< NULL once finished */
    struct heap_vm *hv;         /**< NULL once the VM is gone */
    uint32_t grace_timer;       /**< owns the ticket after the reply, 0 before */
} heap_info_ticket;

/** The HPIF data of a VM that has sent none (no heaps). */
extern const hpif_data heap_no_info;

typedef struct heap_vm {
    heap_plugin *hp;
    ddm_vm *vm;
    ddm_view *summary;
    ddm_view *segments;
    ddm_view *histogram;
    ddm_view *frag;
    ddm_view *bitmap;           /**< blob, only with libpng */
    ddm_view *map;              /**< heap.map: address ranges by kind (heap_map.c) */
    uint32_t map_heap;          /**< heap and update number heap.map shows */
    uint64_t map_updates;
    int have_info;
    const hpif_data *info;      /**< the last HPIF; &heap_no_info (n 0) until the first,
                                     then malloc'd: an idle VM holds no HPIF table */
    uint64_t gcs;               /**< HPIFs "at GC" (reason next/every GC): ddmon_heap_gcs_total */
    int ready;                  /**< DDM_VM_READY seen: requests may be sent */
    int hpif_on;                /**< HPIF(2|3) was sent and not switched off */
    int segments_on;            /**< HPSG(1, what) was sent and not switched off */
    int collecting;             /**< the "on" requests were sent (heap_watch.c) */
    int on_failed_logged;       /**< "cannot send" logged since the last success */
    double last_wanted;         /**< when a view was last watched (hp->now) */
    unsigned holds;             /**< commands that need collection on now */
    heap_bitmap_ticket *bm_ticket;
    seg_collector coll;
    struct heap_published {
        uint32_t heap_id;
        int64_t wall_ms;
    } *published;               /**< when each heap's current update came (HPEN): n_published
                                     of SEG_MAX_HEAPS, malloc'd with the first */
    size_t n_published;
    unsigned rejects_logged;    /**< in the current updates, for rate limiting */
    unsigned rejects_quiet;
    heap_info_ticket *ticket;
    uint64_t blob_last_ms;      /**< when heap.bitmap was last built (monotonic) */
    uint32_t blob_heap;         /**< heap and update number heap.bitmap was last built */
    uint64_t blob_updates;      /**< from (tried: a failed build is not retried per tick) */
    uint32_t blob_timer;        /**< deferred heap.bitmap build, 0 if none */
    int blob_too_big_logged;
    int metric_logged;          /**< a failed vm_metric was logged (ddm_vm_metric_logged) */
    int tick_wanted;            /**< wanted at its last update (heap_watch.c) */
    int data_came;              /**< data came that nobody may have asked for (late, or
                                     unsolicited): on the tick list until a tick finds
                                     @hv idle and sheds or frees it (heap_watch.c) */
    int views_made;             /**< heap_views_create ran */
    double piece_at;            /**< when the last HPST or piece came (hp->now): an
                                     update quiet for HEAP_UPDATE_STALL_MS is dropped */
    ddm_tick_node tick;         /**< on hp->ticks */
} heap_vm;

/* heap.c */
/** Per-VM state, created (with its views) on first need. NULL if out of memory. */
heap_vm *heap_vm_get(heap_plugin *hp, ddm_vm *vm);
/** Free @hv (vm_set_data NULL) if it holds nothing but data the views
 *  showed: no view, collection off, no command, ticket, deferred bitmap
 *  or update coming, not heap.always (views made on demand, 1.6: their
 *  last unmake, the end of the collection or of a command that outlived
 *  them). With GCs counted (ddmon_heap_gcs_total must not go back) only
 *  its data goes (segments, HPIF table), the struct stays. @hv may be gone
 *  on return. */
void heap_vm_release_if_idle(heap_vm *hv);
/** Drop @hv's unfinished updates if no HPST or piece came for
 *  HEAP_UPDATE_STALL_MS (one log line naming the VM); the tick calls it
 *  before heap_vm_release_if_idle, which an update in progress stops. */
void heap_vm_drop_stalled(heap_vm *hv);
/** "key (pid N)" for log lines, written into @buf (returned). */
const char *heap_vm_label(heap_plugin *hp, ddm_vm *vm, char *buf, size_t len);
/** Heap to draw by default: id 1 if it has a published bitmap, else the lowest such. */
const seg_heap *heap_default_bitmap_heap(const heap_vm *hv);

/** Monotonic seconds (the default hp->now). */
double heap_monotonic_now(void);
/** Unix epoch milliseconds (the default hp->wall_ms). */
int64_t heap_wall_ms(void);
/** When heap @heap_id's current update was published (hp->wall_ms), 0 if never. */
int64_t heap_published_ms(const heap_vm *hv, uint32_t heap_id);
/** HPIF data (an event, or the draft's HPIF reply chunk) from @vm: keep it,
 *  publish heap.summary, finish a waiting heap-info. -EINVAL if too short. */
int heap_info_update(heap_plugin *hp, ddm_vm *vm, const uint8_t *data, size_t len);
/** Log a FAIL or JDWP error answer to a request, take an HPIF reply chunk
 *  as HPIF data (a ddm_reply_fn; @ud is the heap_plugin). */
void heap_on_request_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud);

/* heap_watch.c */
/** Start the tick that follows the views' watchers and the HPGC request tap
 *  (neither with heap.always). */
int heap_watch_start(heap_plugin *hp);
/** @hv became ready: heap.always switches collection on; else one tick for it. */
void heap_watch_ready(heap_vm *hv);
/** Look at @hv's watchers now: switch collection on at once when watched,
 *  off when nobody watched it for heap.grace_ms (heap.always: only on). */
void heap_watch_update(heap_vm *hv);
/** @hv's VM is gone: no tick visits it again. */
void heap_watch_forget(heap_vm *hv);
/** Data came for @hv (HPIF, HPST, a piece, HPEN): with views made on
 *  demand, the next tick looks at it even if nothing else would, so data
 *  nobody asked for (an update after HPSG(0), a VM's unsolicited ones) is
 *  shed or freed by heap_vm_release_if_idle, not kept until the watches
 *  change (review rU3 3). */
void heap_watch_data_came(heap_vm *hv);
/** heap_vm_release_if_idle shed @hv's data: off the tick list unless the
 *  tick has other work for it. */
void heap_watch_data_shed(heap_vm *hv);
/** A command needs collection on @hv (holds it on until heap_watch_release). */
void heap_watch_hold(heap_vm *hv);
/** The command is done; the grace period starts now. */
void heap_watch_release(heap_vm *hv);
/** 1 if collection could give segments (HPSG/HPSO enabled and heap.segments). */
int heap_watch_can_segments(heap_plugin *hp);

/* heap_views.c */
/** Create the views of @hv for the chunk types the user left enabled. */
void heap_views_create(heap_vm *hv);
/** heap_views_create unless it ran: before anything is published. */
void heap_views_ensure(heap_vm *hv);
/** Declare the views heap_views_create makes (vm_view_declare, 1.6), so an
 *  idle VM nobody looks at holds none; on an older core, nothing (they are
 *  made with the VM's state). */
int heap_views_declare(heap_plugin *hp);
/** Publish heap.summary and the "heap" headline from hv->info. */
void heap_views_summary(heap_vm *hv);
/** heap_metrics.c: declare the metric families (in init; 1.3), and set
 *  @hv's samples from its HPIF figures and GC count. */
int heap_metrics_register(heap_plugin *hp);
void heap_metrics_publish(heap_vm *hv);
/** Publish heap.segments, heap.histogram and heap.fragmentation. */
void heap_views_segments(heap_vm *hv);
/** Publish heap.bitmap if someone watches it: at once, or later by a timer
 *  when the last one is younger than heap.blob_interval_ms; unless @force,
 *  only when the default heap's current update is not on it yet (a
 *  watcher that came after the update, or a view made since). */
void heap_views_bitmap(heap_vm *hv, int force);
/** Stop a deferred heap.bitmap build (VM going away). */
void heap_views_bitmap_cancel(heap_vm *hv);
/** Format @bytes as "64.0 MiB" into @buf. */
const char *heap_fmt_bytes(uint64_t bytes, char *buf, size_t len);

/* heap_map.c */
/** Publish heap.map from the default heap's current update if someone
 *  watches it; unless @force, only when that update is not on it yet. */
void heap_views_map(heap_vm *hv, int force);

/* heap_cmd.c */
/** Register heap-bitmap and heap-info. */
int heap_cmd_register(heap_plugin *hp);
/** @hv is going away: a command waiting in a grace period fails now. */
void heap_cmd_vm_gone(heap_vm *hv);
/** HPIF data arrived: finish a waiting heap-info command. */
void heap_cmd_info_arrived(heap_vm *hv);
/** Heap @heap_id's update ended (HPEN): finish a waiting heap-bitmap command. */
void heap_cmd_segments_arrived(heap_vm *hv, uint32_t heap_id);

#endif /* DDM_HEAP_HEAP_H */
