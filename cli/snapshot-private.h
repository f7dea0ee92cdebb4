/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the snapshot's files: snapshot.c (the collector: what
 * a snapshot waits for and gathers), snapshot_cmds.c (the commands run once
 * per VM: --gc, --hprof), snapshot_output.c (text, JSON, --out-dir blob
 * files), snapshot_local.c (a monitor in this process) and
 * snapshot_server.c (through a server). Nothing else includes this header
 * (but the unit test tests/unit/cli/test-snapshot-cmds.c); the rest of the
 * CLI uses snapshot.h.
 *
 * A source fills a DdmSnapshotCollector (ddm_snapshot_note_change() when
 * a view changes, ddm_snapshot_collect() for its content), sets send (how
 * a per-VM command runs), says which commands it has
 * (ddm_snapshot_cmds_available()), runs ddm_snapshot_collector_run() and
 * prints with ddm_snapshot_print_views().
 */
#ifndef DDM_SNAPSHOT_PRIVATE_H
#define DDM_SNAPSHOT_PRIVATE_H

#include <json-glib/json-glib.h>

#include "cli/snapshot.h"

typedef struct DdmSnapshotCollector DdmSnapshotCollector;
typedef struct DdmSnapshotCmd DdmSnapshotCmd;
typedef struct DdmSnapshotCall DdmSnapshotCall;

/* What a per-VM command is (--gc, --hprof): how it is called, how it is
 * waited for and reported. One static instance per option. */
typedef struct DdmSnapshotCmdKind {
    const char *name;     /* the plugin command, the option (--NAME), the JSON member */
    const char *what;     /* in messages: "GC", "heap dump" */
    const char *title;    /* of the text lines (reported kinds only) */
    const char *provider; /* the plugin that provides it, for the warning */
    /* The command line for @vm_key. (transfer full) */
    char **(*argv)(const DdmSnapshotOptions *opt, const char *vm_key);
    /* In flight when max_ms is reached: waited for all the same (a dump
     * that is streaming ends by itself), else cut short (a GC). */
    gboolean outlasts_cap;
    /* Its outcome is the snapshot's: a text line per VM (describe), JSON
     * keyed by VM with the result view's fields, a failure fails the
     * snapshot. Else (gc) JSON [{"vm","ok","message"}...] and warnings only. */
    char *(*describe)(const DdmSnapshotCall *call); /* (transfer full) */
} DdmSnapshotCmdKind;

extern const DdmSnapshotCmdKind ddm_snapshot_cmd_gc, ddm_snapshot_cmd_hprof;

/* One run of a kind's command on one VM. */
struct DdmSnapshotCall {
    DdmSnapshotCmd *cmd; /* borrowed */
    char *vm_key;
    char **argv; /* the command line (owned) */
    gboolean answered, ok;
    char *message;
    JsonNode *result; /* the command's result view (owned), or NULL */
};

/* A kind's bookkeeping in one snapshot: which VMs were asked, what they
 * answered. */
struct DdmSnapshotCmd {
    const DdmSnapshotCmdKind *kind;
    DdmSnapshotCollector *col; /* borrowed */
    int available;    /* -1 not known yet, 0 no plugin provides it, 1 yes */
    GPtrArray *calls; /* DdmSnapshotCall*, one per VM asked (owned) */
    guint pending;    /* calls not answered yet */
};

/* Start @call's command (call->argv); it ends with
 * ddm_snapshot_call_done(), maybe before this returns. */
typedef void (*DdmSnapshotSendFn)(DdmSnapshotCollector *col, DdmSnapshotCall *call);

struct DdmSnapshotCollector {
    GHashTable *views;   /* "vm\x1fname" -> JsonNode* (latest content) */
    GHashTable *seen;    /* "vm\x1fname" -> last version seen (gint64*) */
    char *vms_signature; /* who is in the VM list, in which state, under which name */
    gint64 start_us;
    gint64 last_change_us;
    const DdmSnapshotOptions *opt;
    GMainLoop *loop;
    gboolean settled;
    gboolean capped;   /* max_ms reached: no new command is started */
    gint64 long_done_us; /* the last answer of a kind that outlasts the cap */
    gboolean finished; /* collection over: late answers are only recorded */
    int status;
    /* per-VM commands (--gc, --hprof) */
    GPtrArray *cmds;      /* DdmSnapshotCmd*, one per kind asked for (owned) */
    JsonNode *vms_latest; /* the latest VM list (owned), for the VMs to ask */
    gboolean vms_dirty;   /* vms_latest not scanned for new VMs yet */
    DdmSnapshotSendFn send;
    gpointer source;      /* the monitor (in process) or the ServerCollector (snapshot_server.c) */
    /* TRUE when the source says discovery has nothing more to say now
     * (the daemon's ddm_daemon_settled, asked in process or of the
     * server) and no structural change came since: the snapshot need not
     * wait for wait_ms. NULL: it always waits. */
    gboolean (*source_settled)(DdmSnapshotCollector *col);
};

/* -------------------------------------------------------------- snapshot.c */

void ddm_snapshot_collector_init(DdmSnapshotCollector *col, const DdmSnapshotOptions *opt);
void ddm_snapshot_collector_clear(DdmSnapshotCollector *col);
/* Run the loop until settled, interrupted or capped. */
void ddm_snapshot_collector_run(DdmSnapshotCollector *col);
/* Check now (not at the next tick) whether the snapshot is settled. */
void ddm_snapshot_collector_check(DdmSnapshotCollector *col);
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

/* --------------------------------------------------------- snapshot_cmds.c */

/* The kinds @opt asks for (gc, hprof), into col->cmds. */
void ddm_snapshot_cmds_init(DdmSnapshotCollector *col);
void ddm_snapshot_cmd_free(gpointer cmd);
/* @call's command ended (@result: its result view, transfer none,
 * nullable); restarts the quiet period. */
void ddm_snapshot_call_done(DdmSnapshotCall *call, gboolean ok, const char *message,
                            JsonNode *result);
/* No plugin provides @cmd's command: say so once; the snapshot goes on
 * without. */
void ddm_snapshot_cmd_unavailable(DdmSnapshotCmd *cmd, const char *why);
/* Every kind's command is known (or not) to the source: @has(name, ud). */
void ddm_snapshot_cmds_available(DdmSnapshotCollector *col,
                                 gboolean (*has)(const char *name, gpointer ud), gpointer ud,
                                 const char *where);
/* Run each available command on each VM that became DDM-aware and ready
 * since the last look, once. */
void ddm_snapshot_request_cmds(DdmSnapshotCollector *col);
/* What keeps the snapshot from being settled: a kind not known yet or a
 * call in flight (after the cap: only calls of kinds that outlast it).
 * The first such kind, or NULL. */
const DdmSnapshotCmdKind *ddm_snapshot_cmds_busy(DdmSnapshotCollector *col, gboolean capped);
/* Each kind's member: see snapshot.h. */
void ddm_snapshot_add_cmds_json(JsonBuilder *b, DdmSnapshotCollector *col);
/* Each reported kind's lines (text output). */
void ddm_snapshot_print_cmds_text(DdmSnapshotCollector *col);
/* A reported kind's call failed: say which on stderr; the exit status. */
int ddm_snapshot_cmds_status(DdmSnapshotCollector *col);

/* ------------------------------------------------------- snapshot_output.c */

/* Print the collected views (and write blobs to out_dir); the exit status. */
int ddm_snapshot_print_views(DdmSnapshotCollector *col);

#endif /* DDM_SNAPSHOT_PRIVATE_H */
