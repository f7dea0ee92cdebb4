/* SPDX-License-Identifier: Apache-2.0
 *
 * The snapshot's output (snapshot.h): the collected views in order, as
 * text or one JSON object, and blob views written to --out-dir files; the
 * per-VM commands' outcomes (snapshot_cmds.c) after the views.
 */
#include <build-config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli/jsonout.h"
#include "cli/snapshot-private.h"
#include "core/views/views.h"

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


int ddm_snapshot_print_views(DdmSnapshotCollector *col)
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
        /* The views grouped per VM beside its row of the VM list
         * (cli/jsonout.h, doc/json.md), then the per-VM commands' members. */
        JsonNode *vms_list = NULL;
        for (guint i = 0; i < all->len && vms_list == NULL; i++) {
            JsonObject *o = json_node_get_object(g_ptr_array_index(all, i));
            if (ddm_json_get_string(o, "vm") == NULL &&
                g_strcmp0(ddm_json_get_string(o, "name"), "vms") == 0)
                vms_list = g_ptr_array_index(all, i);
        }
        JsonObject *root = json_object_new();
        json_object_set_int_member(root, "schema", DDM_JSON_SCHEMA);
        json_object_set_boolean_member(root, "settled", col->settled);
        ddm_jq_group_views(root, vms_list, all);
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        ddm_snapshot_add_cmds_json(b, col);
        json_builder_end_object(b);
        g_autoptr(JsonNode) cmds = json_builder_get_root(b);
        JsonObject *co = json_node_get_object(cmds);
        GList *names = json_object_get_members(co);
        for (GList *l = names; l != NULL; l = l->next)
            json_object_set_member(root, l->data, json_node_copy(json_object_get_member(co, l->data)));
        g_list_free(names);
        g_autoptr(JsonNode) doc = json_node_init_object(json_node_alloc(), root);
        json_object_unref(root);
        gsize len = 0;
        g_autofree char *line = ddm_ctl_encode(doc, &len);
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
        ddm_snapshot_print_cmds_text(col);
    }
    if (fflush(stdout) != 0)
        status = DDM_EXIT_FAILED;
    int cmds_status = ddm_snapshot_cmds_status(col);
    return status != DDM_EXIT_OK ? status : cmds_status;
}
