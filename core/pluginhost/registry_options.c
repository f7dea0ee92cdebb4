/* SPDX-License-Identifier: Apache-2.0
 *
 * Plugin options (registry-private.h): the keys each plugin has read
 * (config_get) and the check of --plugin-opt against them, which warns
 * about options naming no loaded plugin or a key the plugin never read.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <stdlib.h>
#include <string.h>

#include "core/pluginhost/registry-private.h"

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char **ddm_registry_options_read(ddm_plugin *p)
{
    g_return_val_if_fail(p != NULL, NULL);
    if (!p->options_read)
        return g_new0(char *, 1);
    g_autofree char **keys = (char **)g_hash_table_get_keys_as_array(p->options_read, NULL);
    char **out = g_strdupv(keys);
    qsort(out, g_strv_length(out), sizeof *out, cmp_str_ptr);
    return out;
}

/* "a, b, c", or @none for an empty list. (transfer full) */
static char *join_or(char **items, const char *none)
{
    return items && *items ? g_strjoinv(", ", items) : g_strdup(none);
}

static char *loaded_plugin_names(DdmRegistry *reg)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        if (p->status == DDM_PLUGIN_LOADED)
            g_ptr_array_add(names, p->name);
    }
    g_ptr_array_add(names, NULL);
    return join_or((char **)names->pdata, "none");
}

void ddm_registry_check_plugin_opts(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    const DdmConfig *config = reg->config;
    if (!config || !config->plugin_opts || g_hash_table_size(config->plugin_opts) == 0)
        return;
    /* Sorted "name.key" strings: one pass groups them by plugin, and the
     * warnings come out in a stable order. */
    g_autofree const char **specs =
        (const char **)g_hash_table_get_keys_as_array(config->plugin_opts, NULL);
    guint n = g_strv_length((char **)specs);
    qsort(specs, n, sizeof *specs, cmp_str_ptr);
    g_autofree char *loaded = loaded_plugin_names(reg);
    g_autofree char *prev_name = NULL;
    for (guint i = 0; i < n; i++) {
        const char *dot = strchr(specs[i], '.');
        if (!dot) /* ddm_config_add_plugin_opt never stores one */
            continue;
        g_autofree char *name = g_strndup(specs[i], (gsize)(dot - specs[i]));
        const char *key = dot + 1;
        gboolean first_of_name = g_strcmp0(prev_name, name) != 0;
        g_free(prev_name);
        prev_name = g_strdup(name);
        ddm_plugin *p = ddm_registry_find_plugin(reg, name);
        if (!p) {
            if (first_of_name)
                g_warning("--plugin-opt: no plugin named '%s' is loaded (loaded: %s)", name,
                          loaded);
            continue;
        }
        if (p->status != DDM_PLUGIN_LOADED) {
            if (first_of_name)
                g_message("--plugin-opt: plugin %s is %s, its options are not used", name,
                          ddm_registry_plugin_status_name(p->status));
            continue;
        }
        if (p->options_read && g_hash_table_contains(p->options_read, key))
            continue;
        g_auto(GStrv) reads = ddm_registry_options_read(p);
        g_autofree char *list = join_or(reads, "none");
        g_warning("--plugin-opt %s: plugin %s has no option '%s' (it reads: %s)", specs[i], name,
                  key, list);
    }
}
