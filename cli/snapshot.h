/* SPDX-License-Identifier: Apache-2.0
 *
 * `ddmon snapshot`: discover, wait until the views settle, print every
 * view, exit. The one-shot form for scripts, CI and tests.
 *
 * Two sources, one collector: without a running server the monitor is
 * built in this process (ddm_monitor_new/start, every view watched so
 * pollers poll); with a server its watch stream is used instead (a VM
 * accepts one JDWP connection, and the server already holds it).
 *
 * Settled = the source says discovery has nothing more to say now (the
 * daemon's ddm_daemon_settled: every discovery module had its first round,
 * no VM is mid-handshake, every ready VM's first requests are answered or
 * timed out; in process it is asked directly, of a server through the
 * "settled" member of {"op":"version"}) and no structural change came
 * since; OR, when that never comes (a VM that never finishes its
 * handshake), wait_ms since the start AND no structural change for
 * settle_ms (a view added or removed, a view's first content, a VM that
 * comes, goes, changes state or name). So wait_ms is the longest the
 * snapshot waits for discovery, not the shortest: against a warm server it
 * answers from the server's current state at once. Periodic refreshes
 * (thread tables, headline figures) do not hold the snapshot back. Capped
 * at max_ms (then printed anyway, with a note).
 *
 * Per-VM commands: with gc (--gc) and with hprof (--hprof), every VM the
 * VM list shows as DDM-aware and ready is given the plugin command once:
 * "gc KEY" (vminfo's) and "hprof --out-dir=OUT_DIR KEY" (hprof's: the
 * dump streams to OUT_DIR/APP-PID.hprof, or is written on the device when
 * the VM cannot stream), the way a client command runs: through the
 * registry in process, through the control protocol with a server (on up
 * to DDM_SNAPSHOT_CMD_CONNS connections of their own, as the server
 * answers one connection's commands one at a time; progress lines are
 * skipped). The core sends no chunk itself. One mechanism for both
 * (snapshot_cmds.c); a kind says how they differ. The snapshot is not
 * settled while such a command is in flight, and each answer restarts the
 * quiet period (the views a GC fills, heap segments, are then in the
 * snapshot). max_ms caps the wait for the views to settle and for GCs,
 * not heap dumps: a dump in flight at the cap is not cut short (a GiB
 * takes seconds; what would be left is a .part file), it is waited for
 * until it ends (the hprof plugin's hprof.timeout ends a VM that never
 * sends; SIGINT stops waiting), then the views get settle_ms more; no
 * command is started after the cap. hprof needs out_dir (the CLI says so).
 * No plugin providing the command is a warning; the snapshot is taken
 * anyway. Plain JVMs and VMs not ready are not asked. A GC that fails is
 * a warning; a heap dump that fails makes the exit status non-zero, and
 * stderr says which.
 *
 * Output: text (the VM list, the plugin list, other global views, then
 * each VM's views; with hprof then one line per VM: where its dump went
 * or why it failed), or with json one object (cli/jsonout.h, doc/json.md)
 * {"schema":1,"settled":BOOL,"vms":{KEY:{ROW...,FIGURES...,"views":
 * {NAME:VIEW}}},"global":{NAME:VIEW}} (with gc
 * also "gc": [{"vm":KEY,"ok":BOOL,"message":TEXT}...]; with hprof also
 * "hprof": {KEY:{"ok":BOOL,"via":"stream"|"device","path"|"device_path":P,
 * "bytes":N,"sha256":HEX,"seconds":S,"format","pid","message"[,"error"]}...},
 * the fields of the hprof command's result; each null when no plugin
 * provides the command). Blob views carry
 * metadata only, unless out_dir is set: then each blob is written to
 * OUT_DIR/VMKEY-NAME.EXT and its path is the view's "file" member.
 */
#ifndef DDM_SNAPSHOT_H
#define DDM_SNAPSHOT_H

#include <glib.h>

#include "cli/client.h"
#include "core/config/config.h"

#define DDM_SNAPSHOT_DEFAULT_WAIT_MS 3000
#define DDM_SNAPSHOT_SETTLE_MS 500
#define DDM_SNAPSHOT_MAX_MS 30000
#define DDM_SNAPSHOT_CMD_CONNS 4 /* per-VM commands in flight at once through a server */

typedef struct DdmSnapshotOptions {
    guint wait_ms;       /* longest time to wait for discovery to settle */
    guint settle_ms;     /* quiet time that counts as settled */
    guint max_ms;        /* hard cap */
    gboolean json;
    const char *out_dir; /* write blobs here (NULL: metadata only) */
    gboolean gc;         /* ask every ready DDM VM for a GC first (plugin command "gc") */
    gboolean hprof;      /* dump every ready DDM VM's heap into out_dir (plugin command "hprof") */
    const char *socket_path; /* the server's, for the per-VM commands' own connections
                              * (NULL: the watch one) */
    const char *server_socket; /* in process: a server holds this control socket's lock
                                * (NULL: none), named when VMs are "busy" or none answered */
} DdmSnapshotOptions;

/** Snapshot with a monitor built in this process from @config (taken over).
 *  Returns the exit status. */
int ddm_snapshot_run_local(DdmConfig *config, const DdmSnapshotOptions *opt);
/** Snapshot through a running server. (@client: transfer none) */
int ddm_snapshot_run_client(DdmClient *client, const DdmSnapshotOptions *opt);

/** File name for a blob view: "VMKEY-NAME.EXT" with every character
 *  outside [A-Za-z0-9._-] replaced by '_' (so no "/" or ".." escapes the
 *  directory); "global" stands for no VM; EXT from the media type.
 *  (transfer full) */
char *ddm_snapshot_blob_filename(const char *vm_key, const char *name, const char *media_type);
/** Write a blob view's data (base64 in the view's JSON object @o) to
 *  @out_dir under ddm_snapshot_blob_filename(), and replace the data by a
 *  "file" member (the path). TRUE if @o is no blob with data; FALSE on a
 *  write error (reported on stderr). */
gboolean ddm_snapshot_write_blob(JsonObject *o, const char *out_dir);

#endif /* DDM_SNAPSHOT_H */
