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

/** Load the module from ddm_server_web_module_dir() through the plugins'
 *  trust checks (ddm_loader_open_module()), look up its table and check
 *  its version, size and package version. The table (transfer none; lives
 *  as long as the process), or NULL with @error naming the file and why
 *  (dlerror()'s text when dlopen failed). Loads at most once: later calls
 *  return the same table. */
const DdmWebModule *ddm_server_web_module_load(GError **error);

#endif /* DDM_SERVER_WEB_MODULE_H */
