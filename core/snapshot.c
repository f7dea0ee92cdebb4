/* SPDX-License-Identifier: Apache-2.0
 *
 * The one-shot snapshot, in process or through a server. See snapshot.h.
 */
#include <build-config.h>

#include "snapshot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "monitor.h"
#include "views.h"

#define TICK_MS 100

typedef struct Collector {
    GHashTable *views;   /* "vm\x1fname" -> JsonNode* (latest content) */
    GHashTable *seen;    /* "vm\x1fname" -> last version seen (gint64*) */
    char *vms_signature; /* who is in the VM list, in which state, under which name */
    gint64 start_us;
    gint64 last_change_us;
    const DdmSnapshotOptions *opt;
    GMainLoop *loop;
    gboolean settled;
    int status;
} Collector;

static char *view_key(const char *vm, const char *name)
{
    return g_strdup_printf("%s\x1f%s", vm != NULL ? vm : "", name != NULL ? name : "");
}

/* The VM list's identity columns (key, pid, app, state), not the headline
 * figures that change all the time. (transfer full) */
static char *vms_signature(JsonNode *vms)
{
    if (vms == NULL || !JSON_NODE_HOLDS_OBJECT(vms))
        return g_strdup("");
    JsonObject *o = json_node_get_object(vms);
    JsonNode *cols = json_object_get_member(o, "columns");
    JsonNode *rows = json_object_get_member(o, "rows");
    if (cols == NULL || rows == NULL || !JSON_NODE_HOLDS_ARRAY(cols) || !JSON_NODE_HOLDS_ARRAY(rows))
        return g_strdup("");
    static const char *const wanted[] = {"key", "pid", "app", "state"};
    int idx[G_N_ELEMENTS(wanted)];
    JsonArray *ca = json_node_get_array(cols);
    for (gsize w = 0; w < G_N_ELEMENTS(wanted); w++) {
        idx[w] = -1;
        for (guint i = 0; i < json_array_get_length(ca); i++) {
            JsonNode *c = json_array_get_element(ca, i);
            if (JSON_NODE_HOLDS_OBJECT(c) &&
                g_strcmp0(ddm_json_get_string(json_node_get_object(c), "name"), wanted[w]) == 0)
                idx[w] = (int)i;
        }
    }
    GString *sig = g_string_new(NULL);
    JsonArray *ra = json_node_get_array(rows);
    for (guint r = 0; r < json_array_get_length(ra); r++) {
        JsonNode *row = json_array_get_element(ra, r);
        if (!JSON_NODE_HOLDS_ARRAY(row))
            continue;
        JsonArray *cells = json_node_get_array(row);
        for (gsize w = 0; w < G_N_ELEMENTS(wanted); w++) {
            JsonNode *cell = idx[w] >= 0 && (guint)idx[w] < json_array_get_length(cells)
                                 ? json_array_get_element(cells, (guint)idx[w])
                                 : NULL;
            if (cell != NULL && JSON_NODE_HOLDS_VALUE(cell)) {
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
    if (elapsed_ms >= col->opt->wait_ms && quiet_ms >= col->opt->settle_ms) {
        col->settled = TRUE;
        g_main_loop_quit(col->loop);
    } else if (elapsed_ms >= col->opt->max_ms) {
        g_message("snapshot: views still changing after %u ms; printing what there is",
                  col->opt->max_ms);
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

/* Write a blob view's data (base64 in the JSON) to the out dir, replace the
 * data by a "file" member. FALSE on a write error (reported). */
static gboolean write_blob(JsonObject *o, const char *out_dir)
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
        if (opt->out_dir != NULL && !write_blob(o, opt->out_dir))
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
}

static void collector_clear(Collector *col)
{
    g_hash_table_unref(col->views);
    g_hash_table_unref(col->seen);
    g_free(col->vms_signature);
    g_main_loop_unref(col->loop);
}

/* Run the loop until settled, interrupted or capped. */
static void collector_run(Collector *col)
{
    guint tick = g_timeout_add(TICK_MS, on_tick, col);
    guint sigint = g_unix_signal_add(SIGINT, on_interrupt, col);
    guint sigterm = g_unix_signal_add(SIGTERM, on_interrupt, col);
    g_main_loop_run(col->loop);
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

int ddm_snapshot_run_local(DdmConfig *config, const DdmSnapshotOptions *opt)
{
    g_autoptr(GError) error = NULL;
    /* A one-shot snapshot exits at once: debugger ports would only collide
     * with a running server's. */
    config->relay = FALSE;
    DdmMonitor *mon = ddm_monitor_new(config, &error);
    if (mon == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    Collector col;
    collector_init(&col, opt);
    /* What exists before discovery (the plugin list, global views). */
    g_autoptr(GPtrArray) initial = ddm_views_list(mon->views);
    for (guint i = 0; i < initial->len; i++) {
        ddm_view *v = g_ptr_array_index(initial, i);
        note_change(&col, FALSE, ddm_view_vm_key(v), ddm_view_name(v),
                    (gint64)ddm_view_version(v), NULL);
    }
    guint listener = ddm_views_add_listener(mon->views, on_local_change, &col);
    guint watch = ddm_views_watch(mon->views, NULL, NULL);
    ddm_monitor_start(mon);
    collector_run(&col);
    ddm_views_unwatch(mon->views, watch);
    ddm_views_remove_listener(mon->views, listener);
    /* The content, from the store. */
    g_autoptr(GPtrArray) final = ddm_views_list(mon->views);
    for (guint i = 0; i < final->len; i++) {
        g_autoptr(JsonNode) json = ddm_view_to_json(g_ptr_array_index(final, i),
                                                    opt->out_dir != NULL);
        collect(&col, "added", json);
    }
    int status = col.status != 0 ? col.status : print_views(&col);
    collector_clear(&col);
    ddm_monitor_free(mon);
    return status;
}

/* ------------------------------------------------------------ via server */

typedef struct ServerCollector {
    Collector col;
    DdmClient *client;
    gboolean failed;
} ServerCollector;

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
        } else if (!ddm_json_get_bool(o, "ok", FALSE)) {
            const char *err = ddm_json_get_string(o, "error");
            g_printerr("ddmon: %s\n", err != NULL ? err : "the server refused");
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
    collector_init(&sc.col, opt);
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.blobs = opt->out_dir != NULL;
    g_autoptr(GError) error = NULL;
    if (!ddm_client_send(client, &req, &error)) {
        g_printerr("ddmon: %s\n", error->message);
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
    collector_clear(&sc.col);
    return status;
}
