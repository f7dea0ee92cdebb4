/* SPDX-License-Identifier: Apache-2.0
 *
 * The core view "plugins": one row per plugin file the loader saw, loaded,
 * disabled or refused (with the reason), and the chunk types each owns.
 */
#include "core/daemon/daemon.h"

static const ddm_column plugins_columns[] = {
    {"name", DDM_VAL_STR, NULL},
    {"version", DDM_VAL_STR, NULL},
    {"abi", DDM_VAL_STR, NULL},
    {"status", DDM_VAL_STR, NULL},
    {"reason", DDM_VAL_STR, NULL},
    {"file", DDM_VAL_STR, NULL},
    {"chunks", DDM_VAL_STR, "list"}, /* "REAL,REAQ"; --json: ["REAL", "REAQ"] */
};

static char *owned_chunks(DdmRegistry *reg, ddm_plugin *p)
{
    GArray *types = ddm_registry_owned_types(reg, p);
    GString *chunks = g_string_new(NULL);
    char name[5];

    for (guint j = 0; types && j < types->len; j++) {
        if (chunks->len)
            g_string_append_c(chunks, ',');
        g_string_append(chunks, ddm_chunk_name(g_array_index(types, uint32_t, j), name));
    }
    if (types)
        g_array_unref(types);
    if (chunks->len == 0) {
        g_string_free(chunks, TRUE);
        return NULL;
    }
    return g_string_free(chunks, FALSE);
}

void ddm_plugins_view_refresh(DdmViews *views, DdmRegistry *reg)
{
    ddm_view *view;
    GPtrArray *plugins;

    g_return_if_fail(views != NULL && reg != NULL);
    view = ddm_views_lookup(views, "plugins", NULL);
    if (!view) {
        view = ddm_views_create(views, "ddmon", NULL, "plugins", DDM_VIEW_TABLE, "Plugins");
        if (!view)
            return;
        ddm_view_set_columns(view, plugins_columns, G_N_ELEMENTS(plugins_columns));
    }
    plugins = ddm_registry_plugins(reg);
    ddm_view_begin(view);
    for (guint i = 0; plugins && i < plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(plugins, i);
        char abi[16];
        char *chunks = owned_chunks(reg, p);

        g_snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
        ddm_view_row(view);
        ddm_view_cell_str(view, p->name);
        ddm_view_cell_str(view, p->version);
        ddm_view_cell_str(view, p->abi_major || p->abi_minor ? abi : NULL);
        ddm_view_cell_str(view, ddm_registry_plugin_status_name(p->status));
        ddm_view_cell_str(view, p->reason);
        ddm_view_cell_str(view, p->path);
        ddm_view_cell_str(view, chunks);
        g_free(chunks);
    }
    ddm_view_commit(view);
}
