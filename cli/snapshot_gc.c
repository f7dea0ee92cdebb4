/* SPDX-License-Identifier: Apache-2.0
 *
 * --gc (snapshot.h): which VMs are asked for a GC, once each, what their
 * answers do to the quiet period, and the "gc" member of the JSON output.
 * How a GC command is sent is the source's: snapshot_local.c runs it
 * through the registry, snapshot_server.c through the control protocol.
 */
#include <build-config.h>

#include <string.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

void ddm_snapshot_gc_call_free(gpointer p)
{
    DdmSnapshotGcCall *call = p;
    g_free(call->vm_key);
    g_free(call->message);
    g_free(call);
}

/* @call's command ended. The views its GC filled arrived before its answer
 * (or arrive just after it): count the answer as a structural change so the
 * quiet period starts again. */
void ddm_snapshot_gc_call_done(DdmSnapshotGcCall *call, gboolean ok, const char *message)
{
    if (call->answered)
        return;
    DdmSnapshotCollector *col = call->col;
    call->answered = TRUE;
    call->ok = ok;
    call->message = g_strdup(message != NULL ? message : ok ? "GC done" : "GC failed");
    col->gc_pending--;
    if (col->finished)
        return;
    col->last_change_us = g_get_monotonic_time();
    if (ok)
        g_debug("snapshot --gc: %s: %s", call->vm_key, call->message);
    else
        g_warning("snapshot --gc: %s: %s", call->vm_key, call->message);
}

/* No plugin provides "gc": say so once; the snapshot goes on without. */
void ddm_snapshot_gc_unavailable(DdmSnapshotCollector *col, const char *why)
{
    col->gc_available = 0;
    g_warning("snapshot --gc: %s; taking the snapshot without asking the VMs for a GC "
              "(the vminfo plugin provides 'gc')",
              why);
}

/* Ask each VM that became DDM-aware and ready since the last look, once. */
void ddm_snapshot_request_gcs(DdmSnapshotCollector *col)
{
    if (!col->opt->gc || col->gc_available != 1 || !col->vms_dirty || col->finished)
        return;
    col->vms_dirty = FALSE;
    g_autoptr(GPtrArray) keys = ddm_snapshot_ready_ddm_keys(col->vms_latest);
    for (guint i = 0; i < keys->len; i++) {
        const char *key = g_ptr_array_index(keys, i);
        gboolean asked = FALSE;
        for (guint j = 0; j < col->gc_calls->len && !asked; j++) {
            const DdmSnapshotGcCall *other = g_ptr_array_index(col->gc_calls, j);
            asked = strcmp(other->vm_key, key) == 0;
        }
        if (asked)
            continue;
        DdmSnapshotGcCall *call = g_new0(DdmSnapshotGcCall, 1);
        call->col = col;
        call->vm_key = g_strdup(key);
        g_ptr_array_add(col->gc_calls, call);
        col->gc_pending++;
        col->send_gc(col, call);
    }
}

/* "gc": what each GC command answered, or null when none could be asked. */
void ddm_snapshot_add_gc_json(JsonBuilder *b, DdmSnapshotCollector *col)
{
    json_builder_set_member_name(b, "gc");
    if (col->gc_available != 1) {
        json_builder_add_null_value(b);
        return;
    }
    json_builder_begin_array(b);
    for (guint i = 0; i < col->gc_calls->len; i++) {
        DdmSnapshotGcCall *call = g_ptr_array_index(col->gc_calls, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "vm");
        json_builder_add_string_value(b, call->vm_key);
        json_builder_set_member_name(b, "ok");
        json_builder_add_boolean_value(b, call->answered && call->ok);
        json_builder_set_member_name(b, "message");
        json_builder_add_string_value(b, call->answered ? call->message
                                                        : "no answer before the snapshot was taken");
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}
