/* SPDX-License-Identifier: Apache-2.0
 *
 * Where the server finds the web module (ddmon-web.so: the dashboard and
 * GET /metrics with libsoup 3, web/module.h) and loading it, once, when
 * --http or --metrics asks for it. Never unloaded: libsoup registers
 * GObject types, which cannot be unregistered.
 */
#ifndef DDM_SERVER_WEB_MODULE_H
#define DDM_SERVER_WEB_MODULE_H

#include <glib.h>

#include "web/module.h"

/** The directory the module is loaded from: the build tree's web/.libs
 *  when this process is the ddmon binary of the build tree it was built
 *  in, else the package library directory it was configured with
 *  (pkglibdir, where `make install` puts it). No environment variable
 *  changes it. (transfer full) */
char *ddm_server_web_module_dir(void);

/** Load DDM_WEB_MODULE_FILE from @dir through the plugins' trust checks
 *  (ddm_loader_open_module()), look up its table and check its version,
 *  size, package version, build token (DDM_BUILD_TOKEN: the module of
 *  another build is refused) and that no entry is NULL. The table
 *  (transfer none; the module is never unloaded once it passed), or NULL
 *  with @error naming the file and why (dlerror()'s text when dlopen
 *  failed). Each call loads (dlopen counts references); the tests call it
 *  on fixture modules. */
const DdmWebModule *ddm_server_web_module_load_from(const char *dir, GError **error);

/** ddm_server_web_module_load_from(ddm_server_web_module_dir()), at most
 *  once: later calls return the same table, or NULL with the same error
 *  without looking again. */
const DdmWebModule *ddm_server_web_module_load(GError **error);

#endif /* DDM_SERVER_WEB_MODULE_H */
