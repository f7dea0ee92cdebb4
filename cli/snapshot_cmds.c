/* SPDX-License-Identifier: Apache-2.0
 *
 * The commands a snapshot runs once per VM (snapshot.h): --gc (vminfo's
 * "gc KEY") and --hprof (hprof's "hprof --out-dir=DIR KEY"). One mechanism
 * for both, a kind (DdmSnapshotCmdKind) saying what differs: which VMs are
 * asked (DDM-aware and ready, once each), what an answer does to the quiet
 * period, what keeps the snapshot waiting, each kind's JSON member, the
 * text lines and the exit status of the kinds whose outcome is the
 * snapshot's. How a command is sent is the source's: snapshot_local.c runs
 * it through the registry, snapshot_server.c through the control protocol.
 */
#include <build-config.h>

#include <stdio.h>
#include <string.h>

#include "cli/snapshot-private.h"
#include "core/views/views.h"

/* ------------------------------------------------------------------ kinds */

static char **gc_argv(const DdmSnapshotOptions *opt, const char *vm_key)
{
    (void)opt;
    char **argv = g_new0(char *, 3);
    argv[0] = g_strdup("gc");
    argv[1] = g_strdup(vm_key);
    return argv;
}

/* The plugin names the file APP-PID.hprof in the directory (absolute:
 * main.c makes --out-dir so), as `ddmon hprof --out-dir=DIR` does. */
static char **hprof_argv(const DdmSnapshotOptions *opt, const char *vm_key)
{
    char **argv = g_new0(char *, 4);
    argv[0] = g_strdup("hprof");
    argv[1] = g_strdup_printf("--out-dir=%s", opt->out_dir != NULL ? opt->out_dir : ".");
    argv[2] = g_strdup(vm_key);
    return argv;
}

/* The fields of record view @view as one object, null values left out.
 * (transfer full; empty for anything but a record) */
static JsonObject *record_fields(JsonNode *view)
{
    JsonObject *out = json_object_new();
    JsonNode *fields = view != NULL && JSON_NODE_HOLDS_OBJECT(view)
                           ? json_object_get_member(json_node_get_object(view), "fields")
                           : NULL;
    if (fields == NULL || !JSON_NODE_HOLDS_ARRAY(fields))
        return out;
    JsonArray *a = json_node_get_array(fields);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *f = json_array_get_element(a, i);
        if (!JSON_NODE_HOLDS_OBJECT(f))
            continue;
        JsonObject *fo = json_node_get_object(f);
        const char *key = ddm_json_get_string(fo, "key");
        JsonNode *value = json_object_get_member(fo, "value");
        if (key != NULL && value != NULL && !JSON_NODE_HOLDS_NULL(value))
            json_object_set_member(out, key, json_node_copy(value));
    }
    return out;
}

static double field_double(JsonObject *o, const char *key)
{
    JsonNode *n = json_object_get_member(o, key);
    return n != NULL && JSON_NODE_HOLDS_VALUE(n) &&
                   (json_node_get_value_type(n) == G_TYPE_DOUBLE ||
                    json_node_get_value_type(n) == G_TYPE_INT64)
               ? json_node_get_double(n)
               : 0.0;
}

/* Where the dump went, or why it failed. */
static char *hprof_describe(const DdmSnapshotCall *call)
{
    if (!call->answered)
        return g_strdup("failed: no answer before the snapshot was taken");
    g_autoptr(JsonObject) f = record_fields(call->result);
    const char *path = ddm_json_get_string(f, "path");
    const char *device = ddm_json_get_string(f, "device_path");
    const char *error = ddm_json_get_string(f, "error");
    if (call->ok && path != NULL)
        return g_strdup_printf("written to %s (%" G_GINT64_FORMAT " bytes, %.1f s)", path,
                               ddm_json_get_int(f, "bytes", 0), field_double(f, "seconds"));
    if (call->ok && device != NULL)
        return g_strdup_printf("written on the device to %s (fetch it with: adb pull %s)",
                               device, device);
    if (call->ok)
        return g_strdup(call->message);
    return g_strdup_printf("failed: %s", error != NULL ? error : call->message);
}

const DdmSnapshotCmdKind ddm_snapshot_cmd_gc = {
    .name = "gc",
    .what = "GC",
    .provider = "vminfo",
    .argv = gc_argv,
    .outlasts_cap = FALSE,
    .describe = NULL,
};

const DdmSnapshotCmdKind ddm_snapshot_cmd_hprof = {
    .name = "hprof",
    .what = "heap dump",
    .title = "Heap dumps",
    .provider = "hprof",
    .argv = hprof_argv,
    .outlasts_cap = TRUE,
    .describe = hprof_describe,
};

/* ------------------------------------------------------------ bookkeeping */

static void call_free(gpointer p)
{
    DdmSnapshotCall *call = p;
    g_free(call->vm_key);
    g_strfreev(call->argv);
    g_free(call->message);
    if (call->result != NULL)
        json_node_unref(call->result);
    g_free(call);
}

static DdmSnapshotCmd *cmd_new(DdmSnapshotCollector *col, const DdmSnapshotCmdKind *kind)
{
    DdmSnapshotCmd *cmd = g_new0(DdmSnapshotCmd, 1);
    cmd->kind = kind;
    cmd->col = col;
    cmd->available = -1;
    cmd->calls = g_ptr_array_new_with_free_func(call_free);
    return cmd;
}

void ddm_snapshot_cmd_free(gpointer p)
{
    DdmSnapshotCmd *cmd = p;
    g_ptr_array_unref(cmd->calls);
    g_free(cmd);
}

void ddm_snapshot_cmds_init(DdmSnapshotCollector *col)
{
    col->cmds = g_ptr_array_new_with_free_func(ddm_snapshot_cmd_free);
    if (col->opt->gc)
        g_ptr_array_add(col->cmds, cmd_new(col, &ddm_snapshot_cmd_gc));
    if (col->opt->hprof)
        g_ptr_array_add(col->cmds, cmd_new(col, &ddm_snapshot_cmd_hprof));
}

/* @call's command ended. The views it filled (heap segments at a GC)
 * arrived before its answer or arrive just after it: count the answer as a
 * structural change so the quiet period starts again. */
void ddm_snapshot_call_done(DdmSnapshotCall *call, gboolean ok, const char *message,
                            JsonNode *result)
{
    if (call->answered)
        return;
    DdmSnapshotCmd *cmd = call->cmd;
    DdmSnapshotCollector *col = cmd->col;
    call->answered = TRUE;
    call->ok = ok;
    call->message = message != NULL ? g_strdup(message)
                                    : g_strdup_printf("%s %s", cmd->kind->what,
                                                      ok ? "done" : "failed");
    if (result != NULL && JSON_NODE_HOLDS_OBJECT(result))
        call->result = json_node_copy(result);
    cmd->pending--;
    if (col->finished)
        return;
    col->last_change_us = g_get_monotonic_time();
    if (cmd->kind->outlasts_cap)
        col->long_done_us = col->last_change_us;
    if (ok)
        g_debug("snapshot --%s: %s: %s", cmd->kind->name, call->vm_key, call->message);
    else if (cmd->kind->describe == NULL) /* reported at the end otherwise */
        g_warning("snapshot --%s: %s: %s", cmd->kind->name, call->vm_key, call->message);
}

/* No plugin provides the command: say so once; the snapshot goes on. */
void ddm_snapshot_cmd_unavailable(DdmSnapshotCmd *cmd, const char *why)
{
    if (cmd->available == 0)
        return;
    cmd->available = 0;
    g_warning("snapshot --%s: %s; taking the snapshot without a %s of each VM "
              "(the %s plugin provides '%s')",
              cmd->kind->name, why, cmd->kind->what, cmd->kind->provider, cmd->kind->name);
}

void ddm_snapshot_cmds_available(DdmSnapshotCollector *col,
                                 gboolean (*has)(const char *name, gpointer ud), gpointer ud,
                                 const char *where)
{
    for (guint i = 0; i < col->cmds->len; i++) {
        DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, i);
        if (has(cmd->kind->name, ud)) {
            cmd->available = 1;
            col->vms_dirty = TRUE; /* look at the VM list there is */
        } else {
            g_autofree char *why = g_strdup_printf("no plugin%s provides a '%s' command", where,
                                                   cmd->kind->name);
            ddm_snapshot_cmd_unavailable(cmd, why);
        }
    }
}

static gboolean was_asked(const DdmSnapshotCmd *cmd, const char *key)
{
    for (guint j = 0; j < cmd->calls->len; j++) {
        const DdmSnapshotCall *other = g_ptr_array_index(cmd->calls, j);
        if (strcmp(other->vm_key, key) == 0)
            return TRUE;
    }
    return FALSE;
}

/* Run each available command on each VM that became DDM-aware and ready
 * since the last look, once. Not after the cap: a VM that comes that late
 * would keep the snapshot waiting for ever. */
void ddm_snapshot_request_cmds(DdmSnapshotCollector *col)
{
    if (col->cmds == NULL || col->cmds->len == 0 || !col->vms_dirty || col->finished ||
        col->capped)
        return;
    col->vms_dirty = FALSE;
    g_autoptr(GPtrArray) keys = ddm_snapshot_ready_ddm_keys(col->vms_latest);
    for (guint c = 0; c < col->cmds->len; c++) {
        DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, c);
        if (cmd->available != 1)
            continue;
        for (guint i = 0; i < keys->len; i++) {
            const char *key = g_ptr_array_index(keys, i);
            if (was_asked(cmd, key))
                continue;
            DdmSnapshotCall *call = g_new0(DdmSnapshotCall, 1);
            call->cmd = cmd;
            call->vm_key = g_strdup(key);
            call->argv = cmd->kind->argv(col->opt, key);
            g_ptr_array_add(cmd->calls, call);
            cmd->pending++;
            col->send(col, call);
        }
    }
}

const DdmSnapshotCmdKind *ddm_snapshot_cmds_busy(DdmSnapshotCollector *col, gboolean capped)
{
    for (guint i = 0; col->cmds != NULL && i < col->cmds->len; i++) {
        const DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, i);
        if (capped && !cmd->kind->outlasts_cap)
            continue;
        if ((cmd->available < 0 && !capped) || cmd->pending > 0)
            return cmd->kind;
    }
    return NULL;
}

/* ----------------------------------------------------------------- output */

/* A reported kind's entry for @call: the result view's fields (but "vm",
 * the key), "ok", "message", and "error" when it failed. */
static void add_call_object(JsonBuilder *b, const DdmSnapshotCall *call)
{
    g_autoptr(JsonObject) f = record_fields(call->result);
    json_object_remove_member(f, "vm");
    json_object_set_boolean_member(f, "ok", call->answered && call->ok);
    json_object_set_string_member(f, "message", call->answered
                                                    ? call->message
                                                    : "no answer before the snapshot was taken");
    if (!(call->answered && call->ok) && !json_object_has_member(f, "error"))
        json_object_set_string_member(f, "error", json_object_get_string_member(f, "message"));
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_set_object(node, f);
    json_builder_add_value(b, node);
}

void ddm_snapshot_add_cmds_json(JsonBuilder *b, DdmSnapshotCollector *col)
{
    for (guint c = 0; col->cmds != NULL && c < col->cmds->len; c++) {
        const DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, c);
        json_builder_set_member_name(b, cmd->kind->name);
        if (cmd->available != 1) {
            json_builder_add_null_value(b);
            continue;
        }
        gboolean keyed = cmd->kind->describe != NULL;
        if (keyed)
            json_builder_begin_object(b);
        else
            json_builder_begin_array(b);
        for (guint i = 0; i < cmd->calls->len; i++) {
            const DdmSnapshotCall *call = g_ptr_array_index(cmd->calls, i);
            if (keyed) {
                json_builder_set_member_name(b, call->vm_key);
                add_call_object(b, call);
                continue;
            }
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "vm");
            json_builder_add_string_value(b, call->vm_key);
            json_builder_set_member_name(b, "ok");
            json_builder_add_boolean_value(b, call->answered && call->ok);
            json_builder_set_member_name(b, "message");
            json_builder_add_string_value(b, call->answered
                                                 ? call->message
                                                 : "no answer before the snapshot was taken");
            json_builder_end_object(b);
        }
        if (keyed)
            json_builder_end_object(b);
        else
            json_builder_end_array(b);
    }
}

void ddm_snapshot_print_cmds_text(DdmSnapshotCollector *col)
{
    for (guint c = 0; col->cmds != NULL && c < col->cmds->len; c++) {
        const DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, c);
        if (cmd->kind->describe == NULL || cmd->available != 1)
            continue;
        printf("\n%s (--%s)\n", cmd->kind->title, cmd->kind->name);
        if (cmd->calls->len == 0)
            printf("  no DDM VM was ready\n");
        for (guint i = 0; i < cmd->calls->len; i++) {
            const DdmSnapshotCall *call = g_ptr_array_index(cmd->calls, i);
            g_autofree char *line = cmd->kind->describe(call);
            printf("  %s: %s\n", call->vm_key, line);
        }
    }
}

int ddm_snapshot_cmds_status(DdmSnapshotCollector *col)
{
    int status = DDM_EXIT_OK;
    for (guint c = 0; col->cmds != NULL && c < col->cmds->len; c++) {
        const DdmSnapshotCmd *cmd = g_ptr_array_index(col->cmds, c);
        if (cmd->kind->describe == NULL || cmd->available != 1)
            continue;
        g_autoptr(GString) which = g_string_new(NULL);
        guint failed = 0;
        for (guint i = 0; i < cmd->calls->len; i++) {
            const DdmSnapshotCall *call = g_ptr_array_index(cmd->calls, i);
            if (call->answered && call->ok)
                continue;
            g_autofree char *line = cmd->kind->describe(call);
            g_string_append_printf(which, "%s%s %s", failed > 0 ? "; " : "", call->vm_key, line);
            failed++;
        }
        if (failed == 0)
            continue;
        g_printerr("ddmon: snapshot --%s: %u of %u %ss failed: %s\n", cmd->kind->name, failed,
                   cmd->calls->len, cmd->kind->what, which->str);
        status = DDM_EXIT_FAILED;
    }
    return status;
}
