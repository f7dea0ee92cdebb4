/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the snapshot's files: snapshot.c (the collector: what
 * a snapshot waits for and gathers), snapshot_gc.c (--gc),
 * snapshot_output.c (text, JSON, --out-dir blob files), snapshot_local.c
 * (a monitor in this process) and snapshot_server.c (through a server).
 * Nothing else includes this header; the rest of the CLI uses snapshot.h.
 *
 * A source fills a DdmSnapshotCollector (ddm_snapshot_note_change() when
 * a view changes, ddm_snapshot_collect() for its content), sets send_gc,
 * runs ddm_snapshot_collector_run() and prints with
 * ddm_snapshot_print_views().
 */
#ifndef DDM_SNAPSHOT_PRIVATE_H
#define DDM_SNAPSHOT_PRIVATE_H

#include <json-glib/json-glib.h>

#include "cli/snapshot.h"

typedef struct DdmSnapshotCollector DdmSnapshotCollector;

/* One GC asked of one VM (--gc). */
typedef struct DdmSnapshotGcCall {
    DdmSnapshotCollector *col; /* borrowed */
    char *vm_key;
    gboolean answered, ok;
    char *message;
} DdmSnapshotGcCall;

/* Start @call's command; it ends with ddm_snapshot_gc_call_done(), maybe
 * before this returns. */
typedef void (*DdmSnapshotGcSendFn)(DdmSnapshotCollector *col, DdmSnapshotGcCall *call);

struct DdmSnapshotCollector {
    GHashTable *views;   /* "vm\x1fname" -> JsonNode* (latest content) */
    GHashTable *seen;    /* "vm\x1fname" -> last version seen (gint64*) */
    char *vms_signature; /* who is in the VM list, in which state, under which name */
    gint64 start_us;
    gint64 last_change_us;
    const DdmSnapshotOptions *opt;
    GMainLoop *loop;
    gboolean settled;
    gboolean finished; /* collection over: late GC answers are only recorded */
    int status;
    /* --gc */
    int gc_available;     /* -1 not known yet, 0 no plugin provides "gc", 1 yes */
    GPtrArray *gc_calls;  /* DdmSnapshotGcCall*, one per VM asked (owned) */
    guint gc_pending;     /* calls not answered yet */
    JsonNode *vms_latest; /* the latest VM list (owned), for the VMs to ask */
    gboolean vms_dirty;   /* vms_latest not scanned for new VMs yet */
    DdmSnapshotGcSendFn send_gc;
    gpointer source;      /* the monitor (in process) or the ServerCollector (snapshot_server.c) */
};

/* -------------------------------------------------------------- snapshot.c */

void ddm_snapshot_collector_init(DdmSnapshotCollector *col, const DdmSnapshotOptions *opt);
void ddm_snapshot_collector_clear(DdmSnapshotCollector *col);
/* Run the loop until settled, interrupted or capped. */
void ddm_snapshot_collector_run(DdmSnapshotCollector *col);
/* A view changed: is it structural (see snapshot.h)? Restarts the quiet
 * period if so. @vms_json: the content, for the VM list only. */
void ddm_snapshot_note_change(DdmSnapshotCollector *col, gboolean removed, const char *vm,
                              const char *name, gint64 version, JsonNode *vms_json);
/* Record @view (JSON, transfer none) of an "added"/"changed"/"removed"
 * @event: its content and the change. */
void ddm_snapshot_collect(DdmSnapshotCollector *col, const char *event, JsonNode *view);
/* Keys of the VMs that VM list @vms shows DDM-aware and ready.
 * (transfer full) */
GPtrArray *ddm_snapshot_ready_ddm_keys(JsonNode *vms);

/* ----------------------------------------------------------- snapshot_gc.c */

void ddm_snapshot_gc_call_free(gpointer call);
/* @call's command ended; restarts the quiet period. */
void ddm_snapshot_gc_call_done(DdmSnapshotGcCall *call, gboolean ok, const char *message);
/* No plugin provides "gc": say so once; the snapshot goes on without. */
void ddm_snapshot_gc_unavailable(DdmSnapshotCollector *col, const char *why);
/* Ask each VM that became DDM-aware and ready since the last look, once. */
void ddm_snapshot_request_gcs(DdmSnapshotCollector *col);
/* "gc": what each GC command answered, or null when none could be asked. */
void ddm_snapshot_add_gc_json(JsonBuilder *b, DdmSnapshotCollector *col);

/* ------------------------------------------------------- snapshot_output.c */

/* Print the collected views (and write blobs to out_dir); the exit status. */
int ddm_snapshot_print_views(DdmSnapshotCollector *col);

#endif /* DDM_SNAPSHOT_PRIVATE_H */
