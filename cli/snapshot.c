/* SPDX-License-Identifier: Apache-2.0
 *
 * The snapshot's collector (snapshot.h): what a snapshot waits for and
 * gathers. It records each view's latest content, tells structural changes
 * from periodic refreshes, and runs the loop until the views settle, the
 * cap is reached or the user interrupts. The sources that feed it are in
 * snapshot_local.c (a monitor in this process) and snapshot_server.c
 * (a server's watch stream); the per-VM commands (--gc, --hprof) are in
 * snapshot_cmds.c, the output in snapshot_output.c.
 */
#include <build-config.h>

#include <signal.h>
#include <string.h>

#include <glib-unix.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

#define TICK_MS 20

static char *view_key(const char *vm, const char *name)
{
    return g_strdup_printf("%s\x1f%s", vm != NULL ? vm : "", name != NULL ? name : "");
}

/* The index of column @name in table view @view, or -1. */
static int column_index(JsonObject *view, const char *name)
{
    JsonNode *cols = json_object_get_member(view, "columns");
    if (cols == NULL || !JSON_NODE_HOLDS_ARRAY(cols))
        return -1;
    JsonArray *ca = json_node_get_array(cols);
    for (guint i = 0; i < json_array_get_length(ca); i++) {
        JsonNode *c = json_array_get_element(ca, i);
        if (JSON_NODE_HOLDS_OBJECT(c) &&
            g_strcmp0(ddm_json_get_string(json_node_get_object(c), "name"), name) == 0)
            return (int)i;
    }
    return -1;
}

/* Cell @idx of @cells if it is a plain value, else NULL. (transfer none) */
static JsonNode *row_value(JsonArray *cells, int idx)
{
    JsonNode *cell = idx >= 0 && (guint)idx < json_array_get_length(cells)
                         ? json_array_get_element(cells, (guint)idx)
                         : NULL;
    return cell != NULL && JSON_NODE_HOLDS_VALUE(cell) ? cell : NULL;
}

/* The VM list's identity columns (key, pid, app, state), not the headline
 * figures that change all the time. (transfer full) */
static char *vms_signature(JsonNode *vms)
{
    if (vms == NULL || !JSON_NODE_HOLDS_OBJECT(vms))
        return g_strdup("");
    JsonObject *o = json_node_get_object(vms);
    JsonNode *rows = json_object_get_member(o, "rows");
    if (rows == NULL || !JSON_NODE_HOLDS_ARRAY(rows))
        return g_strdup("");
    static const char *const wanted[] = {"key", "pid", "app", "state"};
    int idx[G_N_ELEMENTS(wanted)];
    for (gsize w = 0; w < G_N_ELEMENTS(wanted); w++)
        idx[w] = column_index(o, wanted[w]);
    GString *sig = g_string_new(NULL);
    JsonArray *ra = json_node_get_array(rows);
    for (guint r = 0; r < json_array_get_length(ra); r++) {
        JsonNode *row = json_array_get_element(ra, r);
        if (!JSON_NODE_HOLDS_ARRAY(row))
            continue;
        JsonArray *cells = json_node_get_array(row);
        for (gsize w = 0; w < G_N_ELEMENTS(wanted); w++) {
            JsonNode *cell = row_value(cells, idx[w]);
            if (cell != NULL) {
                if (json_node_get_value_type(cell) == G_TYPE_STRING)
                    g_string_append(sig, json_node_get_string(cell));
                else if (json_node_get_value_type(cell) == G_TYPE_INT64)
                    g_string_append_printf(sig, "%" G_GINT64_FORMAT, json_node_get_int(cell));
            }
            g_string_append_c(sig, '\x1f');
        }
        g_string_append_c(sig, '\n');
    }
    return g_string_free(sig, FALSE);
}

/* Keys of the VMs that VM list @vms shows DDM-aware and ready.
 * (transfer full) */
GPtrArray *ddm_snapshot_ready_ddm_keys(JsonNode *vms)
{
    GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
    if (vms == NULL || !JSON_NODE_HOLDS_OBJECT(vms))
        return keys;
    JsonObject *o = json_node_get_object(vms);
    int key_idx = column_index(o, "key"), ddm_idx = column_index(o, "ddm");
    int state_idx = column_index(o, "state");
    JsonNode *rows = json_object_get_member(o, "rows");
    if (rows == NULL || !JSON_NODE_HOLDS_ARRAY(rows))
        return keys;
    JsonArray *ra = json_node_get_array(rows);
    for (guint r = 0; r < json_array_get_length(ra); r++) {
        JsonNode *row = json_array_get_element(ra, r);
        if (!JSON_NODE_HOLDS_ARRAY(row))
            continue;
        JsonArray *cells = json_node_get_array(row);
        JsonNode *key = row_value(cells, key_idx), *ddm = row_value(cells, ddm_idx);
        JsonNode *state = row_value(cells, state_idx);
        if (key != NULL && json_node_get_value_type(key) == G_TYPE_STRING && ddm != NULL &&
            json_node_get_value_type(ddm) == G_TYPE_BOOLEAN && json_node_get_boolean(ddm) &&
            state != NULL && json_node_get_value_type(state) == G_TYPE_STRING &&
            g_strcmp0(json_node_get_string(state), "ready") == 0)
            g_ptr_array_add(keys, g_strdup(json_node_get_string(key)));
    }
    return keys;
}

/* The VM list changed: structural if its identity columns did. */
static gboolean vms_changed(DdmSnapshotCollector *col, JsonNode *vms)
{
    char *sig = vms_signature(vms);
    gboolean changed = g_strcmp0(sig, col->vms_signature) != 0;
    g_free(col->vms_signature);
    col->vms_signature = sig;
    return changed;
}

/* A view changed: is it structural (see snapshot.h)? Restarts the quiet
 * period if so. @vms_json: the content, for the VM list only. */
void ddm_snapshot_note_change(DdmSnapshotCollector *col, gboolean removed, const char *vm,
                              const char *name, gint64 version, JsonNode *vms_json)
{
    char *key = view_key(vm, name);
    gint64 *old = g_hash_table_lookup(col->seen, key);
    gboolean structural = removed || old == NULL || *old <= 0 ||
                          (vms_json != NULL && vms_changed(col, vms_json));
    if (removed) {
        g_hash_table_remove(col->seen, key);
        g_free(key);
    } else {
        gint64 *v = g_new(gint64, 1);
        *v = version;
        g_hash_table_replace(col->seen, key, v);
    }
    if (structural)
        col->last_change_us = g_get_monotonic_time();
    if (vms_json != NULL && col->cmds->len > 0) {
        if (col->vms_latest != NULL)
            json_node_unref(col->vms_latest);
        col->vms_latest = json_node_copy(vms_json);
        col->vms_dirty = TRUE;
    }
}

/* Record @view (JSON, transfer none): its content and the change. */
void ddm_snapshot_collect(DdmSnapshotCollector *col, const char *event, JsonNode *view)
{
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return;
    JsonObject *o = json_node_get_object(view);
    const char *vm = ddm_json_get_string(o, "vm");
    const char *name = ddm_json_get_string(o, "name");
    gboolean removed = strcmp(event, "removed") == 0;
    gboolean is_vms = vm == NULL && g_strcmp0(name, "vms") == 0;
    ddm_snapshot_note_change(col, removed, vm, name, ddm_json_get_int(o, "version", 0),
                             is_vms && !removed ? view : NULL);
    char *key = view_key(vm, name);
    if (removed) {
        g_hash_table_remove(col->views, key);
        g_free(key);
    } else {
        g_hash_table_replace(col->views, key, json_node_copy(view));
    }
}

/* Settled when the views are (see snapshot.h) and no per-VM command keeps
 * the snapshot waiting: at once when the source says discovery is settled,
 * else after wait_ms and settle_ms of quiet. At max_ms it stops waiting for
 * the views and for
 * commands that do not outlast the cap (GCs), but a heap dump in flight is
 * not cut short: it is waited for (the plugin's own timeout ends a VM that
 * never sends), and its views get settle_ms more after the last one. */
static gboolean on_tick(gpointer data)
{
    DdmSnapshotCollector *col = data;
    gint64 now = g_get_monotonic_time();
    gint64 elapsed_ms = (now - col->start_us) / 1000;
    gint64 quiet_ms = (now - col->last_change_us) / 1000;
    if (col->finished || col->settled)
        return G_SOURCE_CONTINUE;
    ddm_snapshot_request_cmds(col);
    const DdmSnapshotCmdKind *busy = ddm_snapshot_cmds_busy(col, FALSE);
    gboolean discovered = busy == NULL && !col->capped && col->source_settled != NULL &&
                          col->source_settled(col);
    if (discovered && col->vms_dirty) {
        /* Asking published the VM list (ddm_daemon_settled in process,
         * a server's ddm_daemon_look_settled, flush a rebuild that was
         * due): its new VMs' commands go out first. */
        ddm_snapshot_request_cmds(col);
        busy = ddm_snapshot_cmds_busy(col, FALSE);
    }
    if (busy == NULL &&
        (discovered || (elapsed_ms >= col->opt->wait_ms && quiet_ms >= col->opt->settle_ms))) {
        col->settled = TRUE;
        g_main_loop_quit(col->loop);
        return G_SOURCE_CONTINUE;
    }
    if (elapsed_ms < col->opt->max_ms)
        return G_SOURCE_CONTINUE;
    const DdmSnapshotCmdKind *waiting = ddm_snapshot_cmds_busy(col, TRUE);
    if (!col->capped && waiting != NULL)
        g_message("snapshot: not settled after %u ms; waiting for the %ss in flight to end",
                  col->opt->max_ms, waiting->what);
    col->capped = TRUE;
    if (waiting != NULL ||
        (col->long_done_us > 0 && now - col->long_done_us < (gint64)col->opt->settle_ms * 1000))
        return G_SOURCE_CONTINUE;
    g_message("snapshot: %s%s after %" G_GINT64_FORMAT " ms; printing what there is",
              busy != NULL ? busy->what : "views still changing",
              busy != NULL ? "s still unanswered" : "", elapsed_ms);
    g_main_loop_quit(col->loop);
    return G_SOURCE_CONTINUE;
}

static gboolean on_interrupt(gpointer data)
{
    DdmSnapshotCollector *col = data;
    col->status = 130;
    g_main_loop_quit(col->loop);
    return G_SOURCE_CONTINUE;
}

void ddm_snapshot_collector_init(DdmSnapshotCollector *col, const DdmSnapshotOptions *opt)
{
    memset(col, 0, sizeof(*col));
    col->views = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify)json_node_unref);
    col->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    col->opt = opt;
    col->start_us = col->last_change_us = g_get_monotonic_time();
    col->loop = g_main_loop_new(NULL, FALSE);
    ddm_snapshot_cmds_init(col);
}

void ddm_snapshot_collector_clear(DdmSnapshotCollector *col)
{
    g_hash_table_unref(col->views);
    g_hash_table_unref(col->seen);
    g_free(col->vms_signature);
    g_main_loop_unref(col->loop);
    g_ptr_array_unref(col->cmds);
    if (col->vms_latest != NULL)
        json_node_unref(col->vms_latest);
}

void ddm_snapshot_collector_check(DdmSnapshotCollector *col)
{
    on_tick(col);
}

/* Run the loop until settled, interrupted or capped. */
void ddm_snapshot_collector_run(DdmSnapshotCollector *col)
{
    guint tick = g_timeout_add(TICK_MS, on_tick, col);
    guint sigint = g_unix_signal_add(SIGINT, on_interrupt, col);
    guint sigterm = g_unix_signal_add(SIGTERM, on_interrupt, col);
    g_main_loop_run(col->loop);
    col->finished = TRUE;
    g_source_remove(tick);
    g_source_remove(sigint);
    g_source_remove(sigterm);
}
