/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugin search path and ddm_loader_load_all(), the policy of which
 * files load (doc/plugin-abi.md, "Search path and file layout").
 *
 * Search path: --plugin-dir (in order), DDMON_PLUGIN_PATH (colon list;
 * ignored when running setuid/setgid), the installed plugin directory. A
 * missing directory is skipped quietly; an unsafe one with a warning, its
 * *.so recorded as refused. The first file of a name that loads (or that
 * --plugins / --disable-plugin leave out) decides the name; later files of
 * it are recorded as shadowed. A refused file decides nothing: the next
 * file of the name is tried, and if it loads a warning names both (so a
 * broken copy early in the path is visible but does not take the plugin
 * away). Policy (B5): a refused plugin found by the scan is a warning; a
 * plugin named with --plugins that no file of its name loads fails startup.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"


static void add_dir(GPtrArray *dirs, const char *dir)
{
    if (!dir || !*dir)
        return;
    for (guint i = 0; i < dirs->len; i++)
        if (strcmp(g_ptr_array_index(dirs, i), dir) == 0)
            return;
    g_ptr_array_add(dirs, g_strdup(dir));
}

char **ddm_loader_search_path(const DdmConfig *config)
{
    g_return_val_if_fail(config != NULL, NULL);
    GPtrArray *dirs = g_ptr_array_new();
    if (config->plugin_dirs)
        for (guint i = 0; i < config->plugin_dirs->len; i++)
            add_dir(dirs, g_ptr_array_index(config->plugin_dirs, i));
    const char *env = g_getenv("DDMON_PLUGIN_PATH");
    if (env && *env) {
        gboolean elevated = getuid() != geteuid() || getgid() != getegid();
        if (!config->use_env_plugin_path || elevated) {
            g_debug("DDMON_PLUGIN_PATH ignored (%s)",
                    elevated ? "running setuid/setgid" : "disabled by configuration");
        } else {
            g_auto(GStrv) parts = g_strsplit(env, ":", -1);
            for (char **s = parts; *s; s++)
                add_dir(dirs, *s);
        }
    }
    if (config->installed_plugin_dir)
        add_dir(dirs, config->installed_plugin_dir);
#ifdef DDM_PLUGINDIR
    else
        add_dir(dirs, DDM_PLUGINDIR);
#endif
    g_ptr_array_add(dirs, NULL);
    return (char **)g_ptr_array_free(dirs, FALSE);
}

static gboolean name_listed(GPtrArray *list, const char *name)
{
    if (!list)
        return FALSE;
    for (guint i = 0; i < list->len; i++)
        if (g_strcmp0(g_ptr_array_index(list, i), name) == 0)
            return TRUE;
    return FALSE;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean is_candidate(const char *entry)
{
    return g_str_has_suffix(entry, ".so") && strlen(entry) > 3;
}

/* Every "*.so" entry of the directory open as @dirfd (or, when -1, of @dir
 * by name: only to record what a refused directory holds), sorted so load
 * order does not depend on the file system. NULL when it cannot be read. */
static GPtrArray *list_candidates(int dirfd, const char *dir)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    if (dirfd >= 0) {
        int fd = dup(dirfd); /* closedir closes it */
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            g_debug("plugin directory %s skipped: %s", dir, g_strerror(errno));
            if (fd >= 0)
                close(fd);
            g_ptr_array_unref(names);
            return NULL;
        }
        const struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (is_candidate(e->d_name))
                g_ptr_array_add(names, g_strdup(e->d_name));
        closedir(d);
    } else {
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *entry;
        while (d && (entry = g_dir_read_name(d)) != NULL)
            if (is_candidate(entry))
                g_ptr_array_add(names, g_strdup(entry));
        if (d)
            g_dir_close(d);
    }
    g_ptr_array_sort(names, cmp_str);
    return names;
}

static void record_disabled(DdmRegistry *reg, const char *name, const char *path,
                            const char *reason)
{
    ddm_plugin *p = ddm_registry_add(reg, name, path);
    p->status = DDM_PLUGIN_DISABLED;
    p->reason = g_strdup(reason);
}

/* One ddm_loader_load_all() run. A name is decided by its first file that
 * loads or that the policy (--plugins, --disable-plugin) leaves out; a
 * refused file decides nothing, so a later file of the name gets its turn. */
typedef struct Scan {
    DdmRegistry *reg;
    const DdmConfig *config;
    gboolean only;        /* --plugins given */
    GHashTable *decided;  /* stem -> path of the deciding file (owned) */
    GHashTable *refused;  /* stem -> first refused ddm_plugin record (borrowed) */
    GHashTable *failures; /* stem -> GError of that first refusal (owned) */
} Scan;

/* The file @entry of @dir: load it (@td, @dir trusted) or, when @td is
 * NULL, record it refused for @dir_refusal. */
static void scan_entry(Scan *s, const DdmTrustedDir *td, const char *dir, const char *entry,
                       const GError *dir_refusal)
{
    g_autofree char *joined = g_build_filename(dir, entry, NULL);
    g_autofree char *path = ddm_loader_absolute_path(joined);
    g_autofree char *stem = ddm_loader_plugin_stem(entry);
    const char *first = g_hash_table_lookup(s->decided, stem);
    if (first) {
        g_autofree char *why = g_strdup_printf("shadowed by %s", first);
        g_info("plugin file %s %s", path, why);
        record_disabled(s->reg, stem, path, why);
        return;
    }
    gboolean required = s->only && name_listed(s->config->plugins_only, stem);
    if (s->only && !required) {
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        record_disabled(s->reg, stem, path, "not named in --plugins");
        return;
    }
    if (name_listed(s->config->plugins_disabled, stem)) {
        if (required)
            g_warning("plugin %s is both required (--plugins) and disabled "
                      "(--disable-plugin); not loading it",
                      stem);
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        record_disabled(s->reg, stem, path, "disabled by --disable-plugin");
        return;
    }
    ddm_plugin *p = NULL;
    GError *err = NULL;
    if (!td) {
        p = ddm_registry_add(s->reg, stem, path);
        p->status = DDM_PLUGIN_REFUSED;
        p->reason = g_strdup(dir_refusal->message);
        err = g_error_copy(dir_refusal);
    } else if (ddm_loader_load_file_at(s->reg, td, path, &p, &err)) {
        g_hash_table_insert(s->decided, g_strdup(stem), g_strdup(path));
        ddm_plugin *bad = g_hash_table_lookup(s->refused, stem);
        if (bad) {
            g_warning("plugin %s: loaded %s instead of %s, which was refused", stem, path,
                      bad->path);
            g_autofree char *old = bad->reason;
            bad->reason = g_strdup_printf("%s (%s loaded instead)", old, path);
        }
        return;
    } else {
        /* A refused directory was reported once; its files are not. */
        g_warning("%s", err->message);
    }
    p->required = required;
    if (!g_hash_table_contains(s->refused, stem)) {
        g_hash_table_insert(s->refused, g_strdup(stem), p);
        g_hash_table_insert(s->failures, g_strdup(stem), err);
    } else {
        g_error_free(err);
    }
}

static void error_free0(gpointer e)
{
    if (e)
        g_error_free(e);
}

gboolean ddm_loader_load_all(DdmRegistry *reg, const DdmConfig *config, GError **error)
{
    g_return_val_if_fail(reg != NULL && config != NULL, FALSE);
    ddm_registry_set_chunk_filter(reg, config->chunks);
    g_auto(GStrv) dirs = ddm_loader_search_path(config);
    g_autofree char *joined = g_strjoinv(":", dirs);
    g_debug("plugin search path: %s", joined);
    Scan s = {
        .reg = reg,
        .config = config,
        .only = config->plugins_only && config->plugins_only->len > 0,
        .decided = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .refused = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .failures = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, error_free0),
    };

    for (char **dir = dirs; *dir; dir++) {
        int os_errno = 0;
        GError *dir_refusal = NULL;
        DdmTrustedDir td;
        gboolean trusted = ddm_loader_open_trusted_dir(*dir, TRUE, &td, &os_errno, &dir_refusal);
        if (!trusted && os_errno) {
            /* A directory the user named (--plugin-dir) is worth a warning
             * (a typo); the default ones may well be absent. */
            if (name_listed(config->plugin_dirs, *dir))
                g_warning("--plugin-dir %s skipped: %s", *dir, dir_refusal->message);
            else
                g_debug("plugin directory %s skipped: %s", *dir, dir_refusal->message);
            g_error_free(dir_refusal);
            continue;
        }
        if (!trusted)
            g_warning("%s; skipping it", dir_refusal->message);
        g_autoptr(GPtrArray) names = list_candidates(trusted ? td.fd : -1, *dir);
        for (guint i = 0; names && i < names->len; i++)
            scan_entry(&s, trusted ? &td : NULL, *dir, g_ptr_array_index(names, i), dir_refusal);
        if (trusted)
            ddm_loader_trusted_dir_clear(&td);
        g_clear_error(&dir_refusal);
    }
    /* --disable-plugin of a name no file has: a typo, warned about as a
     * --plugin-opt naming no plugin is. */
    for (guint i = 0; config->plugins_disabled != NULL && i < config->plugins_disabled->len; i++) {
        const char *name = g_ptr_array_index(config->plugins_disabled, i);
        if (ddm_registry_find_plugin(reg, name) == NULL)
            g_warning("--disable-plugin %s: no plugin of that name on the search path (%s)", name,
                      joined);
    }

    /* A plugin named with --plugins must have loaded from one of its files. */
    GError *required_error = NULL;
    for (guint i = 0; s.only && i < config->plugins_only->len; i++) {
        const char *name = g_ptr_array_index(config->plugins_only, i);
        ddm_plugin *p = ddm_registry_find_plugin(reg, name);
        if (p && p->status != DDM_PLUGIN_REFUSED)
            continue;
        if (p) {
            GError *e = g_hash_table_lookup(s.failures, name);
            if (!required_error && e)
                g_propagate_prefixed_error(&required_error, g_error_copy(e),
                                           "required plugin %s: ", name);
            continue;
        }
        p = ddm_registry_add(reg, name, NULL);
        p->status = DDM_PLUGIN_REFUSED;
        p->required = TRUE;
        p->reason = g_strdup_printf("not found in the plugin path %s", joined);
        g_warning("plugin %s (named with --plugins) was not found in the plugin path %s", name,
                  joined);
        if (!required_error)
            g_set_error(&required_error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_FOUND,
                        "required plugin %s was not found in the plugin path %s", name, joined);
    }
    g_hash_table_unref(s.decided);
    g_hash_table_unref(s.refused);
    g_hash_table_unref(s.failures);

    ddm_registry_handoff(reg);
    if (required_error) {
        g_propagate_error(error, required_error);
        return FALSE;
    }
    return TRUE;
}

