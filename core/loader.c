/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding, validating and loading plugin files (house style B4/B5).
 *
 * Every candidate goes through one sequence, and the first failing step
 * refuses it with a DDM_LOADER_ERROR and a record (for --list-plugins):
 * lstat (regular file, not a symlink, not group/other-writable, owned by us
 * or root, readable) -> ".so" suffix -> ELF magic -> dlopen(RTLD_NOW |
 * RTLD_LOCAL) -> dlsym(ddm_plugin_descriptor) -> magic -> ABI (major equal,
 * minor not newer) -> size -> name/version/init present -> name ==
 * basename. No plugin function runs before every check passed (plugins
 * must not have constructors; doc/plugin-abi.md). Then init runs through
 * the registry, which undoes everything if it fails.
 *
 * Search path, first file of a name wins: --plugin-dir (in order),
 * DDMON_PLUGIN_PATH (colon list; ignored when running setuid/setgid), the
 * installed plugin directory. Later files of the same name are recorded as
 * shadowed. Policy (B5): a refused plugin found by the scan is a warning;
 * a plugin named with --plugins that fails or is missing fails startup.
 * Non-goals: SIGSEGV traps, a registry cache, reloading.
 */
#include "build-config.h" /* autoconf; core/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "monitor.h"
#include "registry-private.h"
#include "views.h"

/* The descriptor size of ABI 1.0: frozen forever, whatever fields 1.x appends. */
#define DESC_SIZE_1_0 (offsetof(ddm_plugin_desc, fini) + sizeof(void (*)(ddm_plugin *)))
G_STATIC_ASSERT(DESC_SIZE_1_0 <= sizeof(ddm_plugin_desc));

G_DEFINE_QUARK(ddm-loader-error-quark, ddm_loader_error)

/* The file name without directory and ".so": the name the descriptor must carry. */
static char *plugin_stem(const char *path)
{
    char *base = g_path_get_basename(path);
    if (g_str_has_suffix(base, ".so"))
        base[strlen(base) - 3] = '\0';
    return base;
}

/* Checks on the file itself, before dlopen. */
static gboolean check_file_safety(const char *path, GError **error)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        int e = errno;
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot read plugin file %s: %s", path, g_strerror(e));
        return FALSE;
    }
    if (S_ISLNK(st.st_mode)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is a symbolic link; plugins must be regular files", path);
        return FALSE;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a regular file", path);
        return FALSE;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is writable by group or others (mode %04o); fix with chmod go-w", path,
                    (unsigned)(st.st_mode & 07777));
        return FALSE;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s is owned by uid %u, neither you (uid %u) nor root", path,
                    (unsigned)st.st_uid, (unsigned)geteuid());
        return FALSE;
    }
    if (!g_str_has_suffix(path, ".so")) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s: plugin file names end in .so", path);
        return FALSE;
    }
    /* root reads mode 000 files too; a plugin nobody may read is not meant to load. */
    if (!(st.st_mode & S_IRUSR) || access(path, R_OK) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not readable (mode %04o)", path, (unsigned)(st.st_mode & 07777));
        return FALSE;
    }
    unsigned char magic[4] = {0};
    ssize_t got = -1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        got = read(fd, magic, sizeof magic);
        close(fd);
    }
    if (got != (ssize_t)sizeof magic || memcmp(magic, "\177ELF", 4) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is not a shared object (%s)", path,
                    st.st_size == 0 ? "empty file" : "no ELF header");
        return FALSE;
    }
    return TRUE;
}

/* Open and validate. On failure abi_major and abi_minor hold what the frozen
 * prefix said (0 when it was never read). */
static const ddm_plugin_desc *open_validated(const char *path, void **dl_out, uint16_t *abi_major,
                                             uint16_t *abi_minor, GError **error)
{
    *dl_out = NULL;
    *abi_major = *abi_minor = 0;
    if (!check_file_safety(path, error))
        return NULL;

    (void)dlerror();
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "cannot load %s: %s", path, why ? why : "dlopen failed");
        return NULL;
    }
    const ddm_plugin_desc *d = dlsym(dl, DDM_PLUGIN_SYMBOL);
    if (!d) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s exports no %s symbol (use DDM_PLUGIN_DEFINE); not a ddmon plugin", path,
                    DDM_PLUGIN_SYMBOL);
        goto fail;
    }
    /* Only the frozen prefix is read until magic, ABI and size are known good. */
    if (d->magic != DDM_PLUGIN_MAGIC) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "bad descriptor magic 0x%08x (expected 0x%08x); file %s", d->magic,
                    DDM_PLUGIN_MAGIC, path);
        goto fail;
    }
    *abi_major = d->abi_major;
    *abi_minor = d->abi_minor;
    if (d->abi_major != DDM_CORE_ABI_MAJOR || d->abi_minor > DDM_CORE_ABI_MINOR) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "plugin wants ABI %u.%u, core provides %u.%u; file %s", d->abi_major,
                    d->abi_minor, DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR, path);
        goto fail;
    }
    if (d->desc_size < DESC_SIZE_1_0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor size %u is smaller than the ABI 1.0 size %zu; file %s",
                    d->desc_size, (size_t)DESC_SIZE_1_0, path);
        goto fail;
    }
    if (!d->name || !d->version || !d->init) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor lacks %s; file %s",
                    !d->name ? "a name" : !d->version ? "a version" : "an init function", path);
        goto fail;
    }
    {
        g_autofree char *stem = plugin_stem(path);
        if (strcmp(d->name, stem) != 0) {
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                        "descriptor name '%.64s' does not match the file name %s.so; file %s",
                        d->name, stem, path);
            goto fail;
        }
    }
    *dl_out = dl;
    return d;

fail:
    dlclose(dl);
    return NULL;
}

static char *absolute_path(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    g_autofree char *cwd = g_get_current_dir();
    return g_build_filename(cwd, path, NULL);
}

const ddm_plugin_desc *ddm_loader_open(const char *path, void **dl, GError **error)
{
    g_return_val_if_fail(path != NULL && dl != NULL, NULL);
    g_autofree char *abs = absolute_path(path);
    uint16_t major, minor;
    return open_validated(abs, dl, &major, &minor, error);
}

gboolean ddm_loader_load_file(DdmRegistry *reg, const char *path, ddm_plugin **out,
                              GError **error)
{
    g_return_val_if_fail(reg != NULL && path != NULL, FALSE);
    g_autofree char *abs = absolute_path(path);
    g_autofree char *stem = plugin_stem(abs);
    ddm_plugin *loaded = ddm_registry_find_plugin(reg, stem);
    ddm_plugin *p = ddm_registry_add(reg, stem, abs);
    if (out)
        *out = p;
    if (loaded && loaded->status == DDM_PLUGIN_LOADED) {
        p->status = DDM_PLUGIN_REFUSED;
        p->reason = g_strdup_printf("a plugin named %s is already loaded from %s", stem,
                                    loaded->path ? loaded->path : "(built in)");
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_DUPLICATE, "%s; file %s", p->reason,
                    abs);
        return FALSE;
    }
    void *dl = NULL;
    uint16_t major, minor;
    GError *err = NULL;
    const ddm_plugin_desc *d = open_validated(abs, &dl, &major, &minor, &err);
    if (!d) {
        p->status = DDM_PLUGIN_REFUSED;
        p->abi_major = major;
        p->abi_minor = minor;
        g_free(p->reason);
        /* The record shows the file already; keep the reason short. */
        g_autofree char *suffix = g_strconcat("; file ", abs, NULL);
        p->reason = g_str_has_suffix(err->message, suffix)
                        ? g_strndup(err->message, strlen(err->message) - strlen(suffix))
                        : g_strdup(err->message);
        g_propagate_error(error, err);
        return FALSE;
    }
    p->dl = dl;
    p->desc = d;
    return ddm_registry_init_plugin(reg, p, error);
}

/* ---------------------------------------------------------- search path */

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

/* Every "*.so" entry of @dir, sorted (so load order does not depend on the file system). */
static GPtrArray *list_candidates(const char *dir)
{
    GError *err = NULL;
    GDir *d = g_dir_open(dir, 0, &err);
    if (!d) {
        g_debug("plugin directory %s skipped: %s", dir, err->message);
        g_error_free(err);
        return NULL;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *entry;
    while ((entry = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(entry, ".so") && strlen(entry) > 3)
            g_ptr_array_add(names, g_strdup(entry));
    g_dir_close(d);
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

gboolean ddm_loader_load_all(DdmRegistry *reg, const DdmConfig *config, GError **error)
{
    g_return_val_if_fail(reg != NULL && config != NULL, FALSE);
    ddm_registry_set_chunk_filter(reg, config->chunks);
    gboolean only = config->plugins_only && config->plugins_only->len > 0;
    g_auto(GStrv) dirs = ddm_loader_search_path(config);
    {
        g_autofree char *joined = g_strjoinv(":", dirs);
        g_debug("plugin search path: %s", joined);
    }
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    GError *required_error = NULL;

    for (char **dir = dirs; *dir; dir++) {
        g_autoptr(GPtrArray) names = list_candidates(*dir);
        if (!names)
            continue;
        for (guint i = 0; i < names->len; i++) {
            const char *entry = g_ptr_array_index(names, i);
            g_autofree char *path = g_build_filename(*dir, entry, NULL);
            g_autofree char *stem = plugin_stem(entry);
            const char *first = g_hash_table_lookup(seen, stem);
            if (first) {
                g_autofree char *why = g_strdup_printf("shadowed by %s", first);
                g_info("plugin file %s %s", path, why);
                record_disabled(reg, stem, path, why);
                continue;
            }
            g_hash_table_insert(seen, g_strdup(stem), g_strdup(path));
            gboolean required = only && name_listed(config->plugins_only, stem);
            if (only && !required) {
                record_disabled(reg, stem, path, "not named in --plugins");
                continue;
            }
            if (name_listed(config->plugins_disabled, stem)) {
                if (required)
                    g_warning("plugin %s is both required (--plugins) and disabled "
                              "(--disable-plugin); not loading it",
                              stem);
                record_disabled(reg, stem, path, "disabled by --disable-plugin");
                continue;
            }
            ddm_plugin *p = NULL;
            GError *err = NULL;
            if (ddm_loader_load_file(reg, path, &p, &err))
                continue;
            p->required = required;
            g_warning("%s", err->message);
            if (required && !required_error)
                g_propagate_prefixed_error(&required_error, err, "required plugin %s: ", stem);
            else
                g_error_free(err);
        }
    }

    if (only) {
        for (guint i = 0; i < config->plugins_only->len; i++) {
            const char *name = g_ptr_array_index(config->plugins_only, i);
            if (g_hash_table_contains(seen, name))
                continue;
            g_autofree char *joined = g_strjoinv(":", dirs);
            ddm_plugin *p = ddm_registry_add(reg, name, NULL);
            p->status = DDM_PLUGIN_REFUSED;
            p->required = TRUE;
            p->reason = g_strdup_printf("not found in the plugin path %s", joined);
            g_warning("plugin %s (named with --plugins) was not found in the plugin path %s",
                      name, joined);
            if (!required_error)
                g_set_error(&required_error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_FOUND,
                            "required plugin %s was not found in the plugin path %s", name,
                            joined);
        }
    }

    ddm_registry_handoff(reg);
    if (required_error) {
        g_propagate_error(error, required_error);
        return FALSE;
    }
    return TRUE;
}

/* ---------------------------------------------- --check-plugin, --list-plugins */

/* A monitor with nothing but a config, an empty VM table and a view store:
 * enough for a plugin's init, never connected to anything. */
typedef struct Throwaway {
    DdmMonitor mon;
    DdmConfig *own_config;
} Throwaway;

static void throwaway_init(Throwaway *t, const DdmConfig *config)
{
    memset(t, 0, sizeof *t);
    if (!config)
        config = t->own_config = ddm_config_new();
    t->mon.config = (DdmConfig *)config; /* read only: nothing here writes to it */
    t->mon.views = ddm_views_new();
    t->mon.vms = g_hash_table_new(g_str_hash, g_str_equal);
    t->mon.registry = ddm_registry_new(&t->mon);
}

static void throwaway_clear(Throwaway *t)
{
    ddm_registry_free(t->mon.registry);
    ddm_views_free(t->mon.views);
    g_hash_table_unref(t->mon.vms);
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
    DdmRegistry *reg = t.mon.registry;
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
        for (guint i = 0; i < reg->taps->len; i++)
            taps += ((DdmChunkReg *)g_ptr_array_index(reg->taps, i))->plugin == p;
        for (guint i = 0; i < reg->listeners->len; i++)
            listeners += ((DdmListenerReg *)g_ptr_array_index(reg->listeners, i))->plugin == p;
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
    gboolean ok = ddm_loader_load_all(t.mon.registry, config, error);
    *out = ddm_registry_plugins_to_json(t.mon.registry);
    throwaway_clear(&t);
    return ok;
}
