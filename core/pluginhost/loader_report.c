/* SPDX-License-Identifier: Apache-2.0
 *
 * The reports on plugins that load nothing into a running monitor:
 * ddm_loader_check_file() (--check-plugin) and ddm_loader_list_plugins()
 * (--list-plugins), each against a throwaway registry.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <string.h>

#include "core/pluginhost/loader.h"
#include "core/session/monitor.h"
#include "core/views/views.h"


/* A registry with no VMs, a view store and a config: enough for a
 * plugin's init, never connected to anything. */
typedef struct Throwaway {
    DdmRegistry *registry;
    DdmViews *views;
    DdmConfig *own_config;
} Throwaway;

static void throwaway_init(Throwaway *t, const DdmConfig *config)
{
    memset(t, 0, sizeof *t);
    if (!config)
        config = t->own_config = ddm_config_new();
    t->views = ddm_views_new();
    t->registry = ddm_registry_new(NULL, t->views, config);
}

static void throwaway_clear(Throwaway *t)
{
    ddm_registry_free(t->registry);
    ddm_views_free(t->views);
    if (t->own_config)
        ddm_config_free(t->own_config);
}

static void report_line(GString *report, const char *key, const char *value)
{
    if (report)
        g_string_append_printf(report, "%-9s %s\n", key, value && *value ? value : "-");
}

gboolean ddm_loader_check_file(const char *path, GString *report, GError **error)
{
    g_return_val_if_fail(path != NULL, FALSE);
    Throwaway t;
    throwaway_init(&t, NULL);
    DdmRegistry *reg = t.registry;
    ddm_plugin *p = NULL;
    GError *err = NULL;
    gboolean ok = ddm_loader_load_file(reg, path, &p, &err);

    report_line(report, "file:", p->path);
    report_line(report, "name:", p->name);
    report_line(report, "version:", p->version);
    report_line(report, "license:", p->license);
    report_line(report, "summary:", p->summary);
    if (p->abi_major || p->abi_minor) {
        g_autofree char *abi = g_strdup_printf("%u.%u (core %u.%u)", p->abi_major, p->abi_minor,
                                               DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
        report_line(report, "ABI:", abi);
    }
    if (ok) {
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < types->len; i++) {
            char name[5];
            g_string_append_printf(s, "%s%s", i ? " " : "",
                                   ddm_chunk_name(g_array_index(types, uint32_t, i), name));
        }
        report_line(report, "chunks:", s->str);
        g_string_truncate(s, 0);
        guint taps = 0, listeners = 0;
        ddm_registry_count_observers(reg, p, &taps, &listeners);
        g_autoptr(GArray) cmds = ddm_registry_commands(reg);
        for (guint i = 0; i < cmds->len; i++) {
            const DdmCommandInfo *c = &g_array_index(cmds, DdmCommandInfo, i);
            if (g_strcmp0(c->plugin, p->name) == 0)
                g_string_append_printf(s, "%s%s", s->len ? " " : "", c->name);
        }
        report_line(report, "commands:", s->str);
        g_string_printf(s, "%u tap(s), %u VM listener(s)", taps, listeners);
        report_line(report, "observes:", s->str);
        g_string_free(s, TRUE);
        report_line(report, "result:", "OK (validated, init succeeded, unloaded)");
    } else {
        g_autofree char *res = g_strdup_printf("REFUSED: %s", err->message);
        report_line(report, "result:", res);
        g_propagate_error(error, err);
    }
    throwaway_clear(&t);
    return ok;
}

gboolean ddm_loader_list_plugins(const DdmConfig *config, JsonNode **out, GError **error)
{
    g_return_val_if_fail(config != NULL && out != NULL, FALSE);
    Throwaway t;
    throwaway_init(&t, config);
    gboolean ok = ddm_loader_load_all(t.registry, config, error);
    *out = ddm_registry_plugins_to_json(t.registry);
    throwaway_clear(&t);
    return ok;
}
