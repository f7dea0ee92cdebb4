/* SPDX-License-Identifier: Apache-2.0
 *
 * Finding and loading the web module (web_module.h): the directory
 * choice, the opening and the table header's checks are the loader's
 * (core/pluginhost/loader.h, shared with cli/tui_module.c); the entries of
 * DdmWebModule are checked here. Loaded once: a failure too is
 * remembered (ddm_loader_module_load_once()).
 */
#include <build-config.h>

#include "server/web_module.h"

#include <dlfcn.h>
#include <gio/gio.h>

#include "core/pluginhost/loader.h"

char *ddm_server_web_module_dir(void)
{
    return ddm_loader_module_dir(DDM_ABS_TOP_BUILDDIR, "web", DDM_PKGLIBDIR);
}

const DdmWebModule *ddm_server_web_module_load_from(const char *dir, GError **error)
{
    void *dl = NULL;
    void *sym = ddm_loader_module_symbol(dir, DDM_WEB_MODULE_FILE, DDM_WEB_MODULE_SYMBOL, &dl, error);
    if (sym == NULL)
        return NULL;
    g_autofree char *path = g_build_filename(dir, DDM_WEB_MODULE_FILE, NULL);
    const DdmWebModule *t = ((DdmWebModuleGetFunc)sym)();
    if (!ddm_loader_check_module_header(path, t ? t->version : 0u, t ? t->size : 0u,
                                        t ? t->package_version : NULL, t ? t->build_token : NULL,
                                        DDM_WEB_MODULE_VERSION, sizeof(DdmWebModule), error)) {
        dlclose(dl);
        return NULL;
    }
    if (!t->web_new || !t->web_free || !t->web_http || !t->web_url || !t->metrics_new ||
        !t->metrics_free || !t->metrics_url) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: its table has empty entries",
                    path);
        dlclose(dl);
        return NULL;
    }
    return t; /* never dlclosed (web_module.h) */
}

/* ddm_server_web_module_load_from() as ddm_loader_module_load_once() calls it. */
static const void *load_from(const char *dir, GError **error)
{
    return ddm_server_web_module_load_from(dir, error);
}

const DdmWebModule *ddm_server_web_module_load(GError **error)
{
    static DdmLoaderModuleOnce once;
    return ddm_loader_module_load_once(&once, ddm_server_web_module_dir, load_from, error);
}
