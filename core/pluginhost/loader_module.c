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
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-loader"

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
