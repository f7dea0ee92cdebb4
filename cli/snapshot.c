/* SPDX-License-Identifier: Apache-2.0
 *
 * The one-shot snapshot, in process or through a server. See snapshot.h.
 */
#include <build-config.h>

#include "cli/snapshot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "core/daemon/daemon.h"
#include "core/pluginhost/registry.h"
#include "core/views/views.h"

#define TICK_MS 100

typedef struct Collector Collector;

/* One GC asked of one VM (--gc). */
typedef struct GcCall {
    Collector *col; /* borrowed */
    char *vm_key;
    gboolean answered, ok;
    char *message;
} GcCall;

/* Start @call's command; it ends with gc_call_done, maybe before this returns. */
typedef void (*GcSendFn)(Collector *col, GcCall *call);

struct Collector {
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
    GPtrArray *gc_calls;  /* GcCall*, one per VM asked (owned) */
    guint gc_pending;     /* calls not answered yet */
    JsonNode *vms_latest; /* the latest VM list (owned), for the VMs to ask */
    gboolean vms_dirty;   /* vms_latest not scanned for new VMs yet */
    GcSendFn send_gc;
    gpointer source;      /* the monitor (in process) or the ServerCollector */
};

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
static GPtrArray *ready_ddm_keys(JsonNode *vms)
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
static gboolean vms_changed(Collector *col, JsonNode *vms)
{
    char *sig = vms_signature(vms);
    gboolean changed = g_strcmp0(sig, col->vms_signature) != 0;
    g_free(col->vms_signature);
    col->vms_signature = sig;
    return changed;
}

/* A view changed: is it structural (see snapshot.h)? Restarts the quiet
 * period if so. @vms_json: the content, for the VM list only. */
static void note_change(Collector *col, gboolean removed, const char *vm, const char *name,
                        gint64 version, JsonNode *vms_json)
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
    if (vms_json != NULL && col->opt->gc) {
        if (col->vms_latest != NULL)
            json_node_unref(col->vms_latest);
        col->vms_latest = json_node_copy(vms_json);
        col->vms_dirty = TRUE;
    }
}

/* ------------------------------------------------------------------ --gc */

static void gc_call_free(gpointer p)
{
    GcCall *call = p;
    g_free(call->vm_key);
    g_free(call->message);
    g_free(call);
}

/* @call's command ended. The views its GC filled arrived before its answer
 * (or arrive just after it): count the answer as a structural change so the
 * quiet period starts again. */
static void gc_call_done(GcCall *call, gboolean ok, const char *message)
{
    if (call->answered)
        return;
    Collector *col = call->col;
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
static void gc_unavailable(Collector *col, const char *why)
{
    col->gc_available = 0;
    g_warning("snapshot --gc: %s; taking the snapshot without asking the VMs for a GC "
              "(the vminfo plugin provides 'gc')",
              why);
}

/* Ask each VM that became DDM-aware and ready since the last look, once. */
static void request_gcs(Collector *col)
{
    if (!col->opt->gc || col->gc_available != 1 || !col->vms_dirty || col->finished)
        return;
    col->vms_dirty = FALSE;
    g_autoptr(GPtrArray) keys = ready_ddm_keys(col->vms_latest);
    for (guint i = 0; i < keys->len; i++) {
        const char *key = g_ptr_array_index(keys, i);
        gboolean asked = FALSE;
        for (guint j = 0; j < col->gc_calls->len && !asked; j++)
            asked = strcmp(((GcCall *)g_ptr_array_index(col->gc_calls, j))->vm_key, key) == 0;
        if (asked)
            continue;
        GcCall *call = g_new0(GcCall, 1);
        call->col = col;
        call->vm_key = g_strdup(key);
        g_ptr_array_add(col->gc_calls, call);
        col->gc_pending++;
        col->send_gc(col, call);
    }
}

/* Record @view (JSON, transfer none): its content and the change. */
static void collect(Collector *col, const char *event, JsonNode *view)
{
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return;
    JsonObject *o = json_node_get_object(view);
    const char *vm = ddm_json_get_string(o, "vm");
    const char *name = ddm_json_get_string(o, "name");
    gboolean removed = strcmp(event, "removed") == 0;
    gboolean is_vms = vm == NULL && g_strcmp0(name, "vms") == 0;
    note_change(col, removed, vm, name, ddm_json_get_int(o, "version", 0),
                is_vms && !removed ? view : NULL);
    char *key = view_key(vm, name);
    if (removed) {
        g_hash_table_remove(col->views, key);
        g_free(key);
    } else {
        g_hash_table_replace(col->views, key, json_node_copy(view));
    }
}

static gboolean on_tick(gpointer data)
{
    Collector *col = data;
    gint64 now = g_get_monotonic_time();
    gint64 elapsed_ms = (now - col->start_us) / 1000;
    gint64 quiet_ms = (now - col->last_change_us) / 1000;
    request_gcs(col);
    gboolean gc_busy = col->opt->gc && (col->gc_available < 0 || col->gc_pending > 0);
    if (elapsed_ms >= col->opt->wait_ms && quiet_ms >= col->opt->settle_ms && !gc_busy) {
        col->settled = TRUE;
        g_main_loop_quit(col->loop);
    } else if (elapsed_ms >= col->opt->max_ms) {
        g_message("snapshot: %s after %u ms; printing what there is",
                  gc_busy ? "GCs still unanswered" : "views still changing", col->opt->max_ms);
        g_main_loop_quit(col->loop);
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_interrupt(gpointer data)
{
    Collector *col = data;
    col->status = 130;
    g_main_loop_quit(col->loop);
    return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------- output */

char *ddm_snapshot_blob_filename(const char *vm_key, const char *name, const char *media_type)
{
    static const struct {
        const char *type, *ext;
    } exts[] = {{"image/png", "png"},        {"application/json", "json"},
                {"text/plain", "txt"},       {"application/vnd.android.hprof", "hprof"},
                {"application/x-hprof", "hprof"}, {"text/csv", "csv"}};
    const char *ext = "bin";
    for (gsize i = 0; media_type != NULL && i < G_N_ELEMENTS(exts); i++)
        if (g_ascii_strcasecmp(media_type, exts[i].type) == 0)
            ext = exts[i].ext;
    char *raw = g_strdup_printf("%s-%s", vm_key != NULL ? vm_key : "global",
                                name != NULL ? name : "view");
    for (char *p = raw; *p != '\0'; p++)
        if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
            *p = '_';
    if (raw[0] == '.')
        raw[0] = '_';
    char *file = g_strdup_printf("%s.%s", raw, ext);
    g_free(raw);
    return file;
}

gboolean ddm_snapshot_write_blob(JsonObject *o, const char *out_dir)
{
    const char *b64 = ddm_json_get_string(o, "data_base64");
    if (b64 == NULL)
        return TRUE;
    g_autofree char *name = ddm_snapshot_blob_filename(ddm_json_get_string(o, "vm"),
                                                       ddm_json_get_string(o, "name"),
                                                       ddm_json_get_string(o, "media_type"));
    g_autofree char *path = g_build_filename(out_dir, name, NULL);
    gsize len = 0;
    g_autofree guchar *data = g_base64_decode(b64, &len);
    g_autoptr(GError) error = NULL;
    if (!g_file_set_contents(path, (const char *)data, (gssize)len, &error)) {
        g_printerr("ddmon: %s\n", error->message);
        return FALSE;
    }
    json_object_remove_member(o, "data_base64");
    json_object_set_string_member(o, "file", path);
    return TRUE;
}

static gint compare_views(gconstpointer a, gconstpointer b)
{
    JsonObject *x = json_node_get_object(*(JsonNode *const *)a);
    JsonObject *y = json_node_get_object(*(JsonNode *const *)b);
    const char *vx = ddm_json_get_string(x, "vm"), *vy = ddm_json_get_string(y, "vm");
    /* global first: vms, plugins, then the rest by name; then VMs by key */
    if ((vx == NULL) != (vy == NULL))
        return vx == NULL ? -1 : 1;
    int c = g_strcmp0(vx, vy);
    if (c != 0)
        return c;
    const char *nx = ddm_json_get_string(x, "name"), *ny = ddm_json_get_string(y, "name");
    if (vx == NULL) {
        int rx = g_strcmp0(nx, "vms") == 0 ? 0 : g_strcmp0(nx, "plugins") == 0 ? 1 : 2;
        int ry = g_strcmp0(ny, "vms") == 0 ? 0 : g_strcmp0(ny, "plugins") == 0 ? 1 : 2;
        if (rx != ry)
            return rx - ry;
    }
    return g_strcmp0(nx, ny);
}

/* "gc": what each GC command answered, or null when none could be asked. */
static void add_gc_json(JsonBuilder *b, Collector *col)
{
    json_builder_set_member_name(b, "gc");
    if (col->gc_available != 1) {
        json_builder_add_null_value(b);
        return;
    }
    json_builder_begin_array(b);
    for (guint i = 0; i < col->gc_calls->len; i++) {
        GcCall *call = g_ptr_array_index(col->gc_calls, i);
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

static int print_views(Collector *col)
{
    const DdmSnapshotOptions *opt = col->opt;
    int status = DDM_EXIT_OK;
    if (opt->out_dir != NULL && g_mkdir_with_parents(opt->out_dir, 0700) != 0) {
        g_printerr("ddmon: cannot create %s: %s\n", opt->out_dir, g_strerror(errno));
        return DDM_EXIT_FAILED;
    }
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, col->views);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_add(all, v);
    g_ptr_array_sort(all, compare_views);

    for (guint i = 0; i < all->len; i++) {
        JsonObject *o = json_node_get_object(g_ptr_array_index(all, i));
        if (opt->out_dir != NULL && !ddm_snapshot_write_blob(o, opt->out_dir))
            status = DDM_EXIT_FAILED;
        else if (json_object_has_member(o, "data_base64"))
            json_object_remove_member(o, "data_base64");
    }

    if (opt->json) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        for (int pass = 0; pass < 2; pass++) {
            const char *which = pass == 0 ? "vms" : "plugins";
            json_builder_set_member_name(b, which);
            JsonNode *found = NULL;
            for (guint i = 0; i < all->len && found == NULL; i++) {
                JsonObject *o = json_node_get_object(g_ptr_array_index(all, i));
                if (ddm_json_get_string(o, "vm") == NULL &&
                    g_strcmp0(ddm_json_get_string(o, "name"), which) == 0)
                    found = g_ptr_array_index(all, i);
            }
            if (found != NULL)
                json_builder_add_value(b, json_node_copy(found));
            else
                json_builder_add_null_value(b);
        }
        json_builder_set_member_name(b, "views");
        json_builder_begin_array(b);
        for (guint i = 0; i < all->len; i++)
            json_builder_add_value(b, json_node_copy(g_ptr_array_index(all, i)));
        json_builder_end_array(b);
        json_builder_set_member_name(b, "settled");
        json_builder_add_boolean_value(b, col->settled);
        if (opt->gc)
            add_gc_json(b, col);
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        gsize len = 0;
        g_autofree char *line = ddm_ctl_encode(root, &len);
        fwrite(line, 1, len, stdout);
    } else {
        DdmRenderOptions ropt = {0, TRUE};
        for (guint i = 0; i < all->len; i++) {
            JsonNode *view = g_ptr_array_index(all, i);
            JsonObject *o = json_node_get_object(view);
            g_autofree char *text = ddm_view_json_to_text_full(view, &ropt);
            fputs(i > 0 ? "\n" : "", stdout);
            fputs(text, stdout);
            const char *file = ddm_json_get_string(o, "file");
            if (file != NULL)
                printf("written to %s\n", file);
        }
    }
    if (fflush(stdout) != 0)
        status = DDM_EXIT_FAILED;
    return status;
}

static void collector_init(Collector *col, const DdmSnapshotOptions *opt)
{
    memset(col, 0, sizeof(*col));
    col->views = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify)json_node_unref);
    col->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    col->opt = opt;
    col->start_us = col->last_change_us = g_get_monotonic_time();
    col->loop = g_main_loop_new(NULL, FALSE);
    col->gc_available = -1;
    col->gc_calls = g_ptr_array_new_with_free_func(gc_call_free);
}

static void collector_clear(Collector *col)
{
    g_hash_table_unref(col->views);
    g_hash_table_unref(col->seen);
    g_free(col->vms_signature);
    g_main_loop_unref(col->loop);
    g_ptr_array_unref(col->gc_calls);
    if (col->vms_latest != NULL)
        json_node_unref(col->vms_latest);
}

/* Run the loop until settled, interrupted or capped. */
static void collector_run(Collector *col)
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

/* ------------------------------------------------------------ in-process */

static void on_local_change(ddm_view *view, DdmViewChange change, gpointer ud)
{
    /* Only the timing matters here: the content is read from the store at
     * the end, so no JSON is built per commit. */
    gboolean is_vms = ddm_view_vm_key(view) == NULL && strcmp(ddm_view_name(view), "vms") == 0;
    g_autoptr(JsonNode) vms = is_vms && change != DDM_VIEW_REMOVED ? ddm_view_to_json(view, FALSE)
                                                                   : NULL;
    note_change(ud, change == DDM_VIEW_REMOVED, ddm_view_vm_key(view), ddm_view_name(view),
                change == DDM_VIEW_ADDED ? 0 : (gint64)ddm_view_version(view), vms);
}

static void local_gc_done(ddm_cmd_status status, const char *message, ddm_view *result,
                          gpointer ud)
{
    (void)result;
    gc_call_done(ud, status == DDM_CMD_OK, message);
}

/* Run "gc KEY" as a client's command runs: through the registry. */
static void local_send_gc(Collector *col, GcCall *call)
{
    DdmDaemon *daemon = col->source;
    const char *const argv[] = {"gc", call->vm_key, NULL};
    if (!ddm_registry_run_command(ddm_daemon_registry(daemon), 2, argv, local_gc_done, call))
        gc_call_done(call, FALSE, "no plugin provides the 'gc' command any more");
}

static gboolean local_has_command(DdmDaemon *daemon, const char *name)
{
    if (ddm_daemon_registry(daemon) == NULL)
        return FALSE;
    g_autoptr(GArray) cmds = ddm_registry_commands(ddm_daemon_registry(daemon));
    for (guint i = 0; i < cmds->len; i++)
        if (g_strcmp0(g_array_index(cmds, DdmCommandInfo, i).name, name) == 0)
            return TRUE;
    return FALSE;
}

int ddm_snapshot_run_local(DdmConfig *config, const DdmSnapshotOptions *opt)
{
    g_autoptr(GError) error = NULL;
    /* A one-shot snapshot exits at once: debugger ports would only collide
     * with a running server's. */
    config->relay = FALSE;
    DdmDaemon *daemon = ddm_daemon_new(config, &error);
    if (daemon == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    Collector col;
    collector_init(&col, opt);
    col.source = daemon;
    col.send_gc = local_send_gc;
    if (opt->gc) {
        if (local_has_command(daemon, "gc"))
            col.gc_available = 1;
        else
            gc_unavailable(&col, "no plugin provides a 'gc' command");
    }
    /* What exists before discovery (the plugin list, global views). */
    g_autoptr(GPtrArray) initial = ddm_views_list(ddm_daemon_views(daemon));
    for (guint i = 0; i < initial->len; i++) {
        ddm_view *v = g_ptr_array_index(initial, i);
        note_change(&col, FALSE, ddm_view_vm_key(v), ddm_view_name(v),
                    (gint64)ddm_view_version(v), NULL);
    }
    guint listener = ddm_views_add_listener(ddm_daemon_views(daemon), on_local_change, &col);
    guint watch = ddm_views_watch(ddm_daemon_views(daemon), NULL, NULL);
    ddm_daemon_start(daemon);
    collector_run(&col);
    ddm_views_unwatch(ddm_daemon_views(daemon), watch);
    ddm_views_remove_listener(ddm_daemon_views(daemon), listener);
    /* The content, from the store. */
    g_autoptr(GPtrArray) final = ddm_views_list(ddm_daemon_views(daemon));
    for (guint i = 0; i < final->len; i++) {
        g_autoptr(JsonNode) json = ddm_view_to_json(g_ptr_array_index(final, i),
                                                    opt->out_dir != NULL);
        collect(&col, "added", json);
    }
    int status = col.status != 0 ? col.status : print_views(&col);
    /* GC commands still in flight end while the monitor goes: col must
     * outlive it. */
    ddm_daemon_free(daemon);
    collector_clear(&col);
    return status;
}

/* ------------------------------------------------------------ via server */

/* What the next response answers: responses come in request order. */
typedef enum { EXPECT_WATCH, EXPECT_COMMANDS, EXPECT_GC } ExpectKind;

typedef struct Expected {
    ExpectKind kind;
    GcCall *call; /* EXPECT_GC: borrowed from col.gc_calls */
} Expected;

typedef struct ServerCollector {
    Collector col;
    DdmClient *client;
    gboolean failed;
    GQueue expected;   /* Expected*, owned */
    GPtrArray *gc_conns; /* GcConn*, owned: GC commands in flight */
    GQueue gc_waiting; /* GcCall* (borrowed) waiting for a free connection */
} ServerCollector;

/* One GC command on a connection of its own: a server answers one
 * client's requests one at a time, and a GC may wait for its timeout. */
typedef struct GcConn {
    ServerCollector *sc;
    GcCall *call;
    DdmClient *client;
    guint source;
} GcConn;

static void gc_conn_free(gpointer p)
{
    GcConn *gcc = p;
    if (gcc->source != 0)
        g_source_remove(gcc->source);
    ddm_client_free(gcc->client);
    g_free(gcc);
}

static gboolean server_send(ServerCollector *sc, const DdmCtlRequest *req, ExpectKind kind,
                            GcCall *call, GError **error)
{
    if (!ddm_client_send(sc->client, req, error))
        return FALSE;
    Expected *ex = g_new0(Expected, 1);
    ex->kind = kind;
    ex->call = call;
    g_queue_push_tail(&sc->expected, ex);
    return TRUE;
}

static void expected_clear(ServerCollector *sc)
{
    Expected *ex;
    while ((ex = g_queue_pop_head(&sc->expected)) != NULL)
        g_free(ex);
}

static void gc_conn_start_next(ServerCollector *sc);

/* The answer on a GC connection: the call ends, the connection closes. */
static gboolean on_gc_conn_data(gint fd, GIOCondition cond, gpointer data)
{
    (void)fd;
    (void)cond;
    GcConn *gcc = data;
    ServerCollector *sc = gcc->sc;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(gcc->client, &error);
    g_autoptr(GError) perr = NULL;
    g_autoptr(JsonNode) msg = ddm_client_next(gcc->client, &perr);
    if (msg != NULL) {
        JsonObject *o = json_node_get_object(msg);
        gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
        const char *err = ddm_json_get_string(o, "error");
        gc_call_done(gcc->call, ok,
                     ok ? ddm_json_get_string(o, "message") : err != NULL ? err : "GC failed");
    } else if (perr != NULL || !alive) {
        g_autofree char *why = g_strdup_printf(
            "no answer from the server (%s)",
            perr != NULL ? perr->message : error != NULL ? error->message : "closed");
        gc_call_done(gcc->call, FALSE, why);
    } else {
        return G_SOURCE_CONTINUE;
    }
    gcc->source = 0; /* removed by returning G_SOURCE_REMOVE */
    g_ptr_array_remove(sc->gc_conns, gcc);
    gc_conn_start_next(sc);
    return G_SOURCE_REMOVE;
}

/* Start waiting calls while connections are free. */
static void gc_conn_start_next(ServerCollector *sc)
{
    while (sc->gc_conns->len < DDM_SNAPSHOT_GC_CONNS && !sc->col.finished) {
        GcCall *call = g_queue_pop_head(&sc->gc_waiting);
        if (call == NULL)
            return;
        g_autoptr(GError) error = NULL;
        DdmClient *client = ddm_client_connect(sc->col.opt->socket_path, &error);
        char *argv[] = {(char *)"gc", call->vm_key, NULL};
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_COMMAND;
        req.argv = argv;
        if (client == NULL || !ddm_client_send(client, &req, &error)) {
            g_autofree char *why = g_strdup_printf("cannot ask the server: %s", error->message);
            if (client != NULL)
                ddm_client_free(client);
            gc_call_done(call, FALSE, why);
            continue;
        }
        GcConn *gcc = g_new0(GcConn, 1);
        gcc->sc = sc;
        gcc->call = call;
        gcc->client = client;
        gcc->source = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    on_gc_conn_data, gcc);
        g_ptr_array_add(sc->gc_conns, gcc);
    }
}

/* {"op":"command","argv":["gc",KEY]}: the server runs it as it runs
 * `ddmon gc KEY`. On connections of their own when the socket path is
 * known, else one after the other on the watch connection. */
static void server_send_gc(Collector *col, GcCall *call)
{
    ServerCollector *sc = col->source;
    if (col->opt->socket_path != NULL) {
        g_queue_push_tail(&sc->gc_waiting, call);
        gc_conn_start_next(sc);
        return;
    }
    char *argv[] = {(char *)"gc", call->vm_key, NULL};
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = argv;
    g_autoptr(GError) error = NULL;
    if (!server_send(sc, &req, EXPECT_GC, call, &error))
        gc_call_done(call, FALSE, error->message);
}

/* The answer to {"op":"commands"}: is there a "gc"? */
static void server_commands_answered(ServerCollector *sc, JsonObject *o)
{
    JsonNode *list = json_object_get_member(o, "commands");
    if (!ddm_json_get_bool(o, "ok", FALSE) || list == NULL || !JSON_NODE_HOLDS_ARRAY(list)) {
        const char *err = ddm_json_get_string(o, "error");
        g_autofree char *why = g_strdup_printf("the server did not list its commands (%s)",
                                               err != NULL ? err : "no list");
        gc_unavailable(&sc->col, why);
        return;
    }
    JsonArray *a = json_node_get_array(list);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);
        if (JSON_NODE_HOLDS_OBJECT(e) &&
            g_strcmp0(ddm_json_get_string(json_node_get_object(e), "name"), "gc") == 0) {
            sc->col.gc_available = 1;
            sc->col.vms_dirty = TRUE; /* look at the VM list we have */
            return;
        }
    }
    gc_unavailable(&sc->col, "no plugin of the server provides a 'gc' command");
}

/* A response (not an event). FALSE if it ends the snapshot. */
static gboolean server_response(ServerCollector *sc, JsonObject *o)
{
    Expected *ex = g_queue_pop_head(&sc->expected);
    ExpectKind kind = ex != NULL ? ex->kind : EXPECT_WATCH;
    GcCall *call = ex != NULL ? ex->call : NULL;
    g_free(ex);
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    const char *err = ddm_json_get_string(o, "error");
    switch (kind) {
    case EXPECT_COMMANDS:
        server_commands_answered(sc, o);
        return TRUE;
    case EXPECT_GC:
        gc_call_done(call, ok,
                     ok ? ddm_json_get_string(o, "message") : err != NULL ? err : "GC failed");
        return TRUE;
    case EXPECT_WATCH:
        break;
    }
    if (!ok) {
        g_printerr("ddmon: %s\n", err != NULL ? err : "the server refused");
        return FALSE;
    }
    return TRUE;
}

static gboolean on_server_data(gint fd, GIOCondition cond, gpointer data)
{
    ServerCollector *sc = data;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(sc->client, &error);
    for (;;) {
        g_autoptr(GError) perr = NULL;
        g_autoptr(JsonNode) msg = ddm_client_next(sc->client, &perr);
        if (msg == NULL) {
            if (perr != NULL) {
                g_printerr("ddmon: %s\n", perr->message);
                sc->failed = TRUE;
                g_main_loop_quit(sc->col.loop);
                return G_SOURCE_REMOVE;
            }
            break;
        }
        JsonObject *o = json_node_get_object(msg);
        const char *event = ddm_json_get_string(o, "event");
        if (event != NULL) {
            collect(&sc->col, event, json_object_get_member(o, "view"));
        } else if (!server_response(sc, o)) {
            sc->failed = TRUE;
            g_main_loop_quit(sc->col.loop);
            return G_SOURCE_REMOVE;
        }
    }
    if (!alive) {
        g_printerr("ddmon: the server went away (%s)\n", error->message);
        sc->failed = TRUE;
        g_main_loop_quit(sc->col.loop);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

int ddm_snapshot_run_client(DdmClient *client, const DdmSnapshotOptions *opt)
{
    ServerCollector sc = {0};
    sc.client = client;
    g_queue_init(&sc.expected);
    g_queue_init(&sc.gc_waiting);
    sc.gc_conns = g_ptr_array_new_with_free_func(gc_conn_free);
    collector_init(&sc.col, opt);
    sc.col.source = &sc;
    sc.col.send_gc = server_send_gc;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.blobs = opt->out_dir != NULL;
    DdmCtlRequest commands = {0};
    commands.op = DDM_CTL_OP_COMMANDS;
    g_autoptr(GError) error = NULL;
    if (!server_send(&sc, &req, EXPECT_WATCH, NULL, &error) ||
        (opt->gc && !server_send(&sc, &commands, EXPECT_COMMANDS, NULL, &error))) {
        g_printerr("ddmon: %s\n", error->message);
        expected_clear(&sc);
        g_ptr_array_unref(sc.gc_conns);
        collector_clear(&sc.col);
        return DDM_EXIT_FAILED;
    }
    guint src = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR,
                              on_server_data, &sc);
    collector_run(&sc.col);
    if (!sc.failed)
        g_source_remove(src);
    int status = sc.failed          ? DDM_EXIT_FAILED
                 : sc.col.status != 0 ? sc.col.status
                                      : print_views(&sc.col);
    expected_clear(&sc);
    g_ptr_array_unref(sc.gc_conns);
    g_queue_clear(&sc.gc_waiting);
    collector_clear(&sc.col);
    return status;
}
