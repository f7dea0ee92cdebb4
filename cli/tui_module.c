/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding and loading the terminal UI's module (tui_module.h): the
 * directory choice, the opening and the table header's checks are the
 * loader's (core/pluginhost/loader.h, shared with server/web_module.c);
 * the entries of DdmTuiModule are checked here. Loaded once: a failure
 * too is remembered (ddm_loader_module_load_once()).
 */
#include <build-config.h>

#include "cli/tui_module.h"

#include <dlfcn.h>
#include <gio/gio.h>

#include "core/pluginhost/loader.h"

char *ddm_cli_tui_module_dir(void)
{
    return ddm_loader_module_dir(DDM_ABS_TOP_BUILDDIR, "tui", DDM_PKGLIBDIR);
}

const DdmTuiModule *ddm_cli_tui_module_load_from(const char *dir, GError **error)
{
    void *dl = NULL;
    void *sym = ddm_loader_module_symbol(dir, DDM_TUI_MODULE_FILE, DDM_TUI_MODULE_SYMBOL, &dl, error);
    if (sym == NULL)
        return NULL;
    g_autofree char *path = g_build_filename(dir, DDM_TUI_MODULE_FILE, NULL);
    const DdmTuiModule *t = ((DdmTuiModuleGetFunc)sym)();
    if (!ddm_loader_check_module_header(path, t ? t->version : 0u, t ? t->size : 0u,
                                        t ? t->package_version : NULL, t ? t->build_token : NULL,
                                        DDM_TUI_MODULE_VERSION, sizeof(DdmTuiModule), error)) {
        dlclose(dl);
        return NULL;
    }
    if (!t->available || !t->run) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: its table has empty entries",
                    path);
        dlclose(dl);
        return NULL;
    }
    return t; /* never dlclosed (tui_module.h) */
}

/* ddm_cli_tui_module_load_from() as ddm_loader_module_load_once() calls it. */
static const void *load_from(const char *dir, GError **error)
{
    return ddm_cli_tui_module_load_from(dir, error);
}

const DdmTuiModule *ddm_cli_tui_module_load(GError **error)
{
    static DdmLoaderModuleOnce once;
    return ddm_loader_module_load_once(&once, ddm_cli_tui_module_dir, load_from, error);
}
