/* SPDX-License-Identifier: Apache-2.0
 *
 * Opening and validating one plugin file (doc/plugin-abi.md, "The load
 * rule"), and loading it into a registry: ddm_loader_open() and
 * ddm_loader_load_file(). The checks on where the file lives are in
 * loader_trust.c, the search path and ddm_loader_load_all() in
 * loader_path.c, --check-plugin and --list-plugins in loader_report.c.
 *
 * Every candidate goes through one sequence, and the first failing step
 * refuses it with a DDM_LOADER_ERROR and a record (for --list-plugins):
 * trusted directory -> lstat -> ".so" suffix -> open + fstat (the same
 * inode, the same checks) -> ELF magic (loader_trust.c) -> ELF header,
 * segments and section headers within the file's size (loader_elf.c: a
 * truncated file would die of SIGBUS inside dlopen) -> no undefined ddm_
 * symbol (loader_elf.c: the binary's exports are the web module's) -> dlopen(RTLD_NOW
 * | RTLD_LOCAL) by the real path -> that path still names the checked
 * inode -> dlsym(ddm_plugin_descriptor) -> magic -> ABI (major equal,
 * minor not newer) -> size -> name/version/init present -> name ==
 * basename. As nobody but root and us can change a trusted path, the file
 * loaded is the file checked. No plugin function is called before every
 * check passed (plugins must not have constructors, which dlopen runs;
 * doc/plugin-abi.md). Then init runs through the registry, which undoes
 * everything if it fails. --check-plugin stops before dlopen and checks
 * the descriptor read from the file instead (ddm_loader_read_desc()), with
 * the same ddm_loader_check_desc_prefix() and _fields().
 * Non-goals: SIGSEGV traps, a registry cache, reloading.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"

/* The descriptor size of ABI 1.0: frozen forever, whatever fields 1.x appends. */
#define DESC_SIZE_1_0 (offsetof(ddm_plugin_desc, fini) + sizeof(void (*)(ddm_plugin *)))
G_STATIC_ASSERT(DESC_SIZE_1_0 <= sizeof(ddm_plugin_desc));

G_DEFINE_QUARK(ddm-loader-error-quark, ddm_loader_error)

/* The file name without directory and ".so": the name the descriptor must carry. */
char *ddm_loader_plugin_stem(const char *path)
{
    char *base = g_path_get_basename(path);
    if (g_str_has_suffix(base, ".so"))
        base[strlen(base) - 3] = '\0';
    return base;
}


/* dlopen the checked file open as @fd, entry @name of @td, by its real
 * path (so dladdr, gdb and sanitizer reports name the file), then make
 * sure that path still leads to the file that was checked. Only root and
 * the effective user can change anything along a trusted path, so this
 * catches a file replaced meanwhile by the user's own rebuild, not an
 * attack. (dlopen("/proc/self/fd/N") would load the open file itself, but
 * the dynamic linker then knows the plugin by that name only: sanitizer
 * and gdb backtraces lose its symbols, and glibc hands back a loaded object
 * for any later dlopen of a name it was once opened by.) */
void *ddm_loader_dlopen_checked(int fd, const DdmTrustedDir *td, const char *name,
                                const char *path, GError **error)
{
    g_autofree char *real = g_build_filename(td->real, name, NULL);
    (void)dlerror();
    void *dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        /* glibc's message begins with the file's name: say it once. */
        size_t rl = strlen(real);
        if (why != NULL && strncmp(why, real, rl) == 0 && strncmp(why + rl, ": ", 2) == 0)
            why += rl + 2;
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN, "cannot load %s: %s",
                    path, why ? why : "dlopen failed");
        return NULL;
    }
    struct stat checked, in_dir, by_path;
    if (fstat(fd, &checked) != 0 || fstatat(td->fd, name, &in_dir, AT_SYMLINK_NOFOLLOW) != 0 ||
        stat(real, &by_path) != 0 || checked.st_dev != in_dir.st_dev ||
        checked.st_ino != in_dir.st_ino || checked.st_dev != by_path.st_dev ||
        checked.st_ino != by_path.st_ino) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_UNSAFE,
                    "%s changed while it was being loaded", path);
        dlclose(dl);
        return NULL;
    }
    return dl;
}

gboolean ddm_loader_check_desc_prefix(uint32_t magic, uint16_t abi_major, uint16_t abi_minor,
                                      uint32_t desc_size, const char *path, GError **error)
{
    if (magic != DDM_PLUGIN_MAGIC) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "bad descriptor magic 0x%08x (expected 0x%08x); file %s", magic,
                    DDM_PLUGIN_MAGIC, path);
        return FALSE;
    }
    if (abi_major != DDM_CORE_ABI_MAJOR || abi_minor > DDM_CORE_ABI_MINOR) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "plugin wants ABI %u.%u, core provides %u.%u; file %s", abi_major,
                    abi_minor, DDM_CORE_ABI_MAJOR, DDM_CORE_ABI_MINOR, path);
        return FALSE;
    }
    if (desc_size < DESC_SIZE_1_0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor size %u is smaller than the ABI 1.0 size %zu; file %s",
                    desc_size, (size_t)DESC_SIZE_1_0, path);
        return FALSE;
    }
    return TRUE;
}

gboolean ddm_loader_check_desc_fields(const char *name, const char *version, gboolean has_init,
                                      const char *path, GError **error)
{
    if (!name || !version || !has_init) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor lacks %s; file %s",
                    !name ? "a name" : !version ? "a version" : "an init function", path);
        return FALSE;
    }
    g_autofree char *stem = ddm_loader_plugin_stem(path);
    if (strcmp(name, stem) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_BAD_DESCRIPTOR,
                    "descriptor name '%.64s' does not match the file name %s.so; file %s", name,
                    stem, path);
        return FALSE;
    }
    return TRUE;
}

/* Open @path, in the trusted directory @td or (NULL) in its own directory
 * checked here (a file named by the user: its directory may be sticky,
 * like /tmp, since others cannot replace a file of ours there), through
 * every check before dlopen (loader_trust.c, loader_elf.c). The checked
 * fd, or -1 with @error. @own: the directory opened here, to clear. */
static int open_checked(const DdmTrustedDir *td, const char *path, DdmTrustedDir *own,
                        GError **error)
{
    if (!td) {
        g_autofree char *dir = g_path_get_dirname(path);
        int os_errno = 0;
        GError *derr = NULL;
        if (!ddm_loader_open_trusted_dir(dir, FALSE, own, &os_errno, &derr)) {
            if (os_errno) {
                g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                            "cannot read plugin file %s: %s", path, g_strerror(os_errno));
                g_error_free(derr);
            } else {
                g_propagate_error(error, derr);
            }
            return -1;
        }
        td = own;
    }
    g_autofree char *base = g_path_get_basename(path);
    int fd = ddm_loader_open_checked_file(td->fd, base, path, error);
    struct stat st;
    /* Plugins only (not the web module): no binding to the core's exports. */
    if (fd >= 0 && (fstat(fd, &st) != 0 || !ddm_loader_check_no_core_refs(fd, &st, path, error))) {
        if (error != NULL && *error == NULL)
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "cannot read plugin file %s: %s", path, g_strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Plugins are small; a larger file is not read whole for --check-plugin. */
#define DESC_FILE_MAX ((size_t)64 * 1024 * 1024)

gboolean ddm_loader_read_desc(const char *abs, DdmElfDescriptor *out, GError **error)
{
    memset(out, 0, sizeof *out);
    DdmTrustedDir own = {-1, NULL};
    int fd = open_checked(NULL, abs, &own, error);
    ddm_loader_trusted_dir_clear(&own);
    if (fd < 0)
        return FALSE;
    struct stat st;
    g_autofree uint8_t *buf = NULL;
    size_t len = 0;
    int e = 0;
    if (fstat(fd, &st) != 0) {
        e = errno;
    } else if (st.st_size < 0 || (uint64_t)st.st_size > DESC_FILE_MAX) {
        close(fd);
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s is larger than %zu MiB; not read as a plugin", abs,
                    DESC_FILE_MAX / (1024 * 1024));
        return FALSE;
    } else {
        len = (size_t)st.st_size;
        buf = g_malloc(len ? len : 1);
        if (!ddm_loader_read_at(fd, buf, len, 0))
            e = errno;
    }
    close(fd);
    if (e) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN, "cannot read %s: %s",
                    abs, g_strerror(e));
        return FALSE;
    }
    GError *eerr = NULL;
    if (!ddm_elf_read_descriptor(buf, len, out, &eerr)) {
        if (g_error_matches(eerr, DDM_ELF_ERROR, DDM_ELF_ERROR_NO_DESCRIPTOR))
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "%s exports no %s symbol (use DDM_PLUGIN_DEFINE); not a ddmon plugin",
                        abs, DDM_PLUGIN_SYMBOL);
        else
            g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "cannot read the descriptor of %s without loading it: %s", abs,
                        eerr->message);
        g_error_free(eerr);
        return FALSE;
    }
    return ddm_loader_check_desc_prefix(out->magic, out->abi_major, out->abi_minor,
                                        out->desc_size, abs, error) &&
           ddm_loader_check_desc_fields(out->name, out->version, out->has_init, abs, error);
}

/* Open and validate. @td: the trusted directory holding @path (a
 * search-path directory being scanned), or NULL to open and check the
 * directory of @path here (see open_checked()).
 * On failure abi_major and abi_minor hold what the frozen prefix said (0
 * when it was never read). */
static const ddm_plugin_desc *open_validated(const DdmTrustedDir *td, const char *path,
                                             void **dl_out, uint16_t *abi_major,
                                             uint16_t *abi_minor, GError **error)
{
    *dl_out = NULL;
    *abi_major = *abi_minor = 0;
    DdmTrustedDir own = {-1, NULL};
    int fd = open_checked(td, path, &own, error);
    if (!td)
        td = &own;
    g_autofree char *base = g_path_get_basename(path);
    void *dl = fd >= 0 ? ddm_loader_dlopen_checked(fd, td, base, path, error) : NULL;
    if (fd >= 0)
        close(fd);
    ddm_loader_trusted_dir_clear(&own);
    if (!dl)
        return NULL;
    const ddm_plugin_desc *d = dlsym(dl, DDM_PLUGIN_SYMBOL);
    if (!d) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s exports no %s symbol (use DDM_PLUGIN_DEFINE); not a ddmon plugin", path,
                    DDM_PLUGIN_SYMBOL);
        goto fail;
    }
    /* Only the frozen prefix is read until magic, ABI and size are known good. */
    if (d->magic == DDM_PLUGIN_MAGIC) {
        *abi_major = d->abi_major;
        *abi_minor = d->abi_minor;
    }
    if (!ddm_loader_check_desc_prefix(d->magic, d->abi_major, d->abi_minor, d->desc_size, path,
                                      error) ||
        !ddm_loader_check_desc_fields(d->name, d->version, d->init != NULL, path, error))
        goto fail;
    *dl_out = dl;
    return d;

fail:
    dlclose(dl);
    return NULL;
}

char *ddm_loader_absolute_path(const char *path)
{
    if (g_path_is_absolute(path))
        return g_strdup(path);
    g_autofree char *cwd = g_get_current_dir();
    return g_build_filename(cwd, path, NULL);
}

const ddm_plugin_desc *ddm_loader_open(const char *path, void **dl, GError **error)
{
    g_return_val_if_fail(path != NULL && dl != NULL, NULL);
    g_autofree char *abs = ddm_loader_absolute_path(path);
    uint16_t major, minor;
    return open_validated(NULL, abs, dl, &major, &minor, error);
}

/* ddm_loader_load_file() for the absolute @abs; @td as in open_validated(). */
gboolean ddm_loader_load_file_at(DdmRegistry *reg, const DdmTrustedDir *td, const char *abs,
                             ddm_plugin **out, GError **error)
{
    g_autofree char *stem = ddm_loader_plugin_stem(abs);
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
    const ddm_plugin_desc *d = open_validated(td, abs, &dl, &major, &minor, &err);
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

gboolean ddm_loader_load_file(DdmRegistry *reg, const char *path, ddm_plugin **out,
                              GError **error)
{
    g_return_val_if_fail(reg != NULL && path != NULL, FALSE);
    g_autofree char *abs = ddm_loader_absolute_path(path);
    return ddm_loader_load_file_at(reg, NULL, abs, out, error);
}

