/* SPDX-License-Identifier: Apache-2.0
 *
 * The reports on plugins that load nothing into a running monitor:
 * ddm_loader_check_file() (--check-plugin), which reads the descriptor
 * from the file and runs no plugin code, and ddm_loader_list_plugins()
 * (--list-plugins), which loads every plugin (constructors and init run)
 * into a throwaway registry.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <string.h>

#include "core/pluginhost/loader-private.h"
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

/* @value as member @name of @o, null when absent or empty. */
static void member_str_or_null(JsonObject *o, const char *name, const char *value)
{
    if (value != NULL && *value != '\0')
        json_object_set_string_member(o, name, value);
    else
        json_object_set_null_member(o, name);
}

gboolean ddm_loader_check_file(const char *path, GString *report, GError **error)
{
    return ddm_loader_check_file_json(path, report, NULL, error);
}

/* No dlopen, no init: the descriptor is read from the file's bytes, so
 * what init would register is not known here (--list-plugins loads). */
gboolean ddm_loader_check_file_json(const char *path, GString *report, JsonObject *members,
                                    GError **error)
{
    g_return_val_if_fail(path != NULL, FALSE);
    g_autofree char *abs = ddm_loader_absolute_path(path);
    DdmElfDescriptor d;
    GError *err = NULL;
    gboolean ok = ddm_loader_read_desc(abs, &d, &err);

    report_line(report, "file:", abs);
    report_line(report, "name:", d.name);
    report_line(report, "version:", d.version);
    report_line(report, "license:", d.license);
    report_line(report, "summary:", d.summary);
    if (d.magic == DDM_PLUGIN_MAGIC) {
        g_autofree char *abi = g_strdup_printf("%u.%u (core %u.%u)", d.abi_major, d.abi_minor,
                                               DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR);
        report_line(report, "ABI:", abi);
    }
    if (members) {
        member_str_or_null(members, "name", d.name);
        member_str_or_null(members, "version", d.version);
        member_str_or_null(members, "license", d.license);
        member_str_or_null(members, "summary", d.summary);
        g_autofree char *abi = d.magic == DDM_PLUGIN_MAGIC
                                   ? g_strdup_printf("%u.%u", d.abi_major, d.abi_minor)
                                   : NULL;
        member_str_or_null(members, "abi", abi);
    }
    if (ok) {
        report_line(report, "result:",
                    "OK (descriptor read from the file; no plugin code ran: what init "
                    "registers shows in --list-plugins, which loads)");
    } else {
        g_autofree char *res = g_strdup_printf("REFUSED: %s", err->message);
        report_line(report, "result:", res);
        g_propagate_error(error, err);
    }
    ddm_elf_descriptor_clear(&d);
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
