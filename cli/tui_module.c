/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding and loading the terminal UI's module (tui_module.h), modelled
 * on the web module's loader (server/web_module.c).
 */
#include <build-config.h>

#include "cli/tui_module.h"

#include <dlfcn.h>
#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pluginhost/loader.h"

char *ddm_cli_tui_module_dir(void)
{
#ifdef DDM_ABS_TOP_BUILDDIR
    /* Run from its build tree (the tests, a developer's ./ddmon): the
     * module built beside it, not an older installed one. Only for the
     * binary that sits in the tree it was built in, so an installed
     * ddmon never looks there. */
    char *exe = realpath("/proc/self/exe", NULL);
    char *top = realpath(DDM_ABS_TOP_BUILDDIR, NULL);
    gboolean in_tree = FALSE;
    if (exe != NULL && top != NULL) {
        g_autofree char *dir = g_path_get_dirname(exe);
        g_autofree char *libs = g_build_filename(top, ".libs", NULL);
        in_tree = strcmp(dir, top) == 0 || strcmp(dir, libs) == 0;
    }
    char *found = in_tree ? g_build_filename(top, "tui", ".libs", NULL) : NULL;
    free(exe);
    free(top);
    if (found != NULL)
        return found;
#endif
    return g_strdup(DDM_PKGLIBDIR);
}

/* The table @t of @path fits this binary: its layout (version, size), then
 * the build it came from (package version, build token), then every entry
 * set. @t, or NULL with @error saying which and both sides. */
static const DdmTuiModule *check_table(const DdmTuiModule *t, const char *path, GError **error)
{
    if (t == NULL || t->version != DDM_TUI_MODULE_VERSION || t->size < sizeof(DdmTuiModule)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "%s: table version %u, size %u; this ddmon needs version %u, size %zu",
                    path, t ? t->version : 0u, t ? t->size : 0u, DDM_TUI_MODULE_VERSION,
                    sizeof(DdmTuiModule));
        return NULL;
    }
    if (t->package_version == NULL || strcmp(t->package_version, PACKAGE_VERSION) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "%s is from ddmon %.64s, this is ddmon %s: install both from one build", path,
                    t->package_version ? t->package_version : "(unknown)", PACKAGE_VERSION);
        return NULL;
    }
    if (t->build_token == NULL || strcmp(t->build_token, DDM_BUILD_TOKEN) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "%s is from another build of ddmon %s (build %.64s, this ddmon is build %s): "
                    "install both from one build",
                    path, PACKAGE_VERSION, t->build_token ? t->build_token : "(unknown)",
                    DDM_BUILD_TOKEN);
        return NULL;
    }
    if (!t->available || !t->run) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: its table has empty entries",
                    path);
        return NULL;
    }
    return t;
}

const DdmTuiModule *ddm_cli_tui_module_load_from(const char *dir, GError **error)
{
    g_autofree char *path = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    void *dl = ddm_loader_open_module(dir, DDM_TUI_MODULE_FILE, error);
    if (dl == NULL)
        return NULL;
    (void)dlerror();
    DdmTuiModuleGetFunc get = (DdmTuiModuleGetFunc)dlsym(dl, DDM_TUI_MODULE_SYMBOL);
    if (get == NULL) {
        const char *why = dlerror();
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s exports no %s (%s)", path,
                    DDM_TUI_MODULE_SYMBOL, why ? why : "dlsym found nothing");
        dlclose(dl);
        return NULL;
    }
    const DdmTuiModule *t = check_table(get(), path, error);
    if (t == NULL)
        dlclose(dl);
    return t; /* never dlclosed (tui_module.h) */
}

const DdmTuiModule *ddm_cli_tui_module_load(GError **error)
{
    static const DdmTuiModule *loaded;
    static GError *failed;
    if (loaded == NULL && failed == NULL) {
        g_autofree char *dir = ddm_cli_tui_module_dir();
        loaded = ddm_cli_tui_module_load_from(dir, &failed);
    }
    if (loaded == NULL)
        g_propagate_error(error, g_error_copy(failed));
    return loaded;
}
