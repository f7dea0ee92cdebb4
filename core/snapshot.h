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
 * Settled = at least wait_ms since the start AND no structural change for
 * settle_ms (a view added or removed, a view's first content, a VM that
 * comes, goes, changes state or name); periodic refreshes (thread tables,
 * headline figures) do not hold the snapshot back. Capped at max_ms (then printed anyway, with a note).
 *
 * Output: text (the VM list, the plugin list, other global views, then
 * each VM's views), or with json one object
 * {"vms":VIEW,"plugins":VIEW,"views":[VIEW...]}. Blob views carry
 * metadata only, unless out_dir is set: then each blob is written to
 * OUT_DIR/VMKEY-NAME.EXT and its path is the view's "file" member.
 */
#ifndef DDM_SNAPSHOT_H
#define DDM_SNAPSHOT_H

#include <glib.h>

#include "client.h"
#include "config.h"

#define DDM_SNAPSHOT_DEFAULT_WAIT_MS 3000
#define DDM_SNAPSHOT_SETTLE_MS 500
#define DDM_SNAPSHOT_MAX_MS 30000

typedef struct DdmSnapshotOptions {
    guint wait_ms;       /* minimum time to discover */
    guint settle_ms;     /* quiet time that counts as settled */
    guint max_ms;        /* hard cap */
    gboolean json;
    const char *out_dir; /* write blobs here (NULL: metadata only) */
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

#endif /* DDM_SNAPSHOT_H */
