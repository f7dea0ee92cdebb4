/* SPDX-License-Identifier: Apache-2.0
 *
 * The web dashboard of `ddmon server --http` (doc/web.md): an HTTP
 * listener with a per-server token (http_server.h, auth.h), the pages
 * (static_files.h), the JSON API and its live stream (api.h, stream.h)
 * and the downloads of commands run from the web (downloads.h), over one
 * running daemon. The server (server/) makes one when --http is given.
 */
#ifndef DDM_WEB_H
#define DDM_WEB_H

#include "core/daemon/daemon.h"

typedef struct DdmWeb DdmWeb;

typedef struct DdmWebOptions {
    const char *listen;        /* listen_addr.h syntax */
    const char *downloads_dir; /* where commands write (private; emptied at start and stop) */
} DdmWebOptions;

/** Serve the dashboard for @daemon (borrowed; outlives the web). NULL
 *  with @error (address in use, ...). (transfer full) */
DdmWeb *ddm_web_new(DdmDaemon *daemon, const DdmWebOptions *opts, GError **error);
/** Stop and free: the listener closes first (a connection made now is
 *  refused), the commands run from the web still waiting get their 503
 *  "the server stops", written before the connections close (the loop
 *  runs for that, at most DDM_WEB_API_STOP_FLUSH_MS: api.h). */
void ddm_web_free(DdmWeb *web);
/** The HTTP listener, to add routes to (GET /metrics). (transfer none) */
struct DdmHttpServer *ddm_web_http(DdmWeb *web);
/** The URL to open, with the token. (transfer none) */
const char *ddm_web_url(const DdmWeb *web);

#endif /* DDM_WEB_H */
