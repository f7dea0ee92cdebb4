/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_loader_open_module() (loader.h): one named module that is not a
 * plugin, such as the web module ddmon-web.so (web/module.h), loaded by
 * the plugins' load rule (doc/plugin-abi.md, "The load rule"): its
 * directory and every directory above it trusted (loader_trust.c, as for a
 * search-path directory: not writable by others, sticky or not), the file
 * a regular, non-symlink, trusted ELF shared object whose segments lie in
 * it (loader_elf.c), then dlopen by its real path, which must still name
 * the checked file (loader.c). The caller decides where the module lives
 * and what it looks up in it.
 * Shared by the web module's and the terminal UI's loaders
 * (server/web_module.c, cli/tui_module.c): where a module is looked for
 * (ddm_loader_module_dir), opening it and finding its table function
 * (ddm_loader_module_symbol), and the checks of the header every module
 * table starts with (ddm_loader_check_module_header); each loader checks
 * its own entries. Loading once, a failure included
 * (ddm_loader_module_load_once).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/pluginhost/loader-private.h"

void *ddm_loader_open_module(const char *dir, const char *name, GError **error)
{
    g_return_val_if_fail(dir != NULL && name != NULL, NULL);
    g_return_val_if_fail(strchr(name, '/') == NULL, NULL);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    DdmTrustedDir td;
    int os_errno = 0;
    GError *derr = NULL;
    if (!ddm_loader_open_trusted_dir(dir, TRUE, &td, &os_errno, &derr)) {
        /* The trust checks speak of plugin directories; this is a module's. */
        g_auto(GStrv) parts = g_strsplit(derr->message, "plugin directory ", -1);
        g_autofree char *said = g_strjoinv("directory ", parts);
        g_set_error(error, derr->domain, derr->code, "cannot load %s: %s", path, said);
        g_error_free(derr);
        return NULL;
    }
    void *dl = NULL;
    int fd = ddm_loader_open_checked_file(td.fd, name, path, error);
    if (fd >= 0) {
        dl = ddm_loader_dlopen_checked(fd, &td, name, path, error);
        close(fd);
    }
    ddm_loader_trusted_dir_clear(&td);
    return dl;
}

char *ddm_loader_module_dir(const char *top_builddir, const char *subdir, const char *installed_dir)
{
    g_return_val_if_fail(subdir != NULL && installed_dir != NULL, NULL);
    if (top_builddir != NULL) {
        /* Run from its build tree (the tests, a developer's ./ddmon): the
         * module built beside it, not an older installed one. Only for the
         * binary that sits in the tree it was built in (or libtool's .libs
         * there), so an installed ddmon never looks there. */
        char *exe = realpath("/proc/self/exe", NULL);
        char *top = realpath(top_builddir, NULL);
        gboolean in_tree = FALSE;
        if (exe != NULL && top != NULL) {
            g_autofree char *dir = g_path_get_dirname(exe);
            g_autofree char *libs = g_build_filename(top, ".libs", NULL);
            in_tree = strcmp(dir, top) == 0 || strcmp(dir, libs) == 0;
        }
        char *found = in_tree ? g_build_filename(top, subdir, ".libs", NULL) : NULL;
        free(exe);
        free(top);
        if (found != NULL)
            return found;
    }
    return g_strdup(installed_dir);
}

void *ddm_loader_module_symbol(const char *dir, const char *name, const char *symbol, void **dl,
                               GError **error)
{
    g_return_val_if_fail(symbol != NULL && dl != NULL, NULL);
    *dl = ddm_loader_open_module(dir, name, error);
    if (*dl == NULL)
        return NULL;
    (void)dlerror();
    void *sym = dlsym(*dl, symbol);
    if (sym == NULL) {
        const char *why = dlerror();
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                    "%s exports no %s (%s)", path, symbol, why ? why : "dlsym found nothing");
        dlclose(*dl);
        *dl = NULL;
    }
    return sym;
}

gboolean ddm_loader_check_module_header(const char *path, guint32 version, guint32 size,
                                        const char *package_version, const char *build_token,
                                        guint32 want_version, gsize want_size, GError **error)
{
    if (version != want_version || size < want_size) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "%s: table version %u, size %u; this ddmon needs version %u, size %zu", path,
                    version, size, want_version, want_size);
        return FALSE;
    }
    if (package_version == NULL || strcmp(package_version, PACKAGE_VERSION) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "%s is from ddmon %.64s, this is ddmon %s: install both from one build", path,
                    package_version ? package_version : "(unknown)", PACKAGE_VERSION);
        return FALSE;
    }
    /* A module calls this binary's core functions, or shares its control
     * protocol, neither of which has a stable ABI: the same version from
     * another build may not fit. */
    if (build_token == NULL || strcmp(build_token, DDM_BUILD_TOKEN) != 0) {
        g_set_error(error, DDM_LOADER_ERROR, DDM_LOADER_ERROR_ABI_MISMATCH,
                    "%s is from another build of ddmon %s (build %.64s, this ddmon is build %s): "
                    "install both from one build",
                    path, PACKAGE_VERSION, build_token ? build_token : "(unknown)", DDM_BUILD_TOKEN);
        return FALSE;
    }
    return TRUE;
}

const void *ddm_loader_module_load_once(DdmLoaderModuleOnce *once, char *(*dir)(void),
                                        const void *(*load_from)(const char *dir, GError **error),
                                        GError **error)
{
    g_return_val_if_fail(once != NULL && dir != NULL && load_from != NULL, NULL);
    if (once->table == NULL && once->failed == NULL) {
        g_autofree char *d = dir();
        once->table = load_from(d, &once->failed);
        if (once->table == NULL && once->failed == NULL)
            g_set_error(&once->failed, DDM_LOADER_ERROR, DDM_LOADER_ERROR_NOT_A_PLUGIN,
                        "%s: the module did not load", d);
    }
    if (once->table == NULL)
        g_propagate_error(error, g_error_copy(once->failed));
    return once->table;
}
