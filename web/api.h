/* SPDX-License-Identifier: Apache-2.0
 *
 * The JSON API under /api/ (doc/web-api.md, a stable interface): the VM
 * list, a VM, its views, a blob's bytes and a record's recent past, the global views, the
 * commands plugins registered and running one on a VM (POST), the files
 * a command wrote (downloads.h), and the live stream (stream.h). Every
 * answer is one JSON object with "schema" (DDM_WEB_API_SCHEMA), keys in
 * snake_case, lists with natural names as objects keyed by them.
 * It reads the daemon directly: the web server runs inside the server.
 */
#ifndef DDM_WEB_API_H
#define DDM_WEB_API_H

#include "core/daemon/daemon.h"
#include "web/downloads.h"
#include "web/history.h"
#include "web/http_server.h"
#include "web/stream.h"

/* Commands from the web in flight at once; more are answered 429. */
#define DDM_WEB_API_MAX_COMMANDS 4

typedef struct DdmWebApi DdmWebApi;

/** Add the /api/ routes to @srv, answered from @daemon, streaming with
 *  @stream, records' recent past from @history, commands writing into
 *  @downloads (all borrowed; they outlive the API). (transfer full) */
DdmWebApi *ddm_web_api_new(DdmHttpServer *srv, DdmDaemon *daemon, DdmWebStream *stream,
                           DdmWebHistory *history, DdmWebDownloads *downloads);
/* How long a stopping server lets libsoup write the 503s of the commands
 * in flight (ddm_web_api_stop) before it closes their connections. */
#define DDM_WEB_API_STOP_FLUSH_MS 500

/** The server stops: each command in flight is answered 503 "the server
 *  stops" (with "Connection: close"), a command asked for from now on too,
 *  and the loop runs (nested, as the daemon's stop runs it) until libsoup
 *  has written those answers, at most @flush_ms; the commands themselves
 *  end with the registry's teardown. Once only. */
void ddm_web_api_stop(DdmWebApi *api, guint flush_ms);
/** ddm_web_api_stop(api, 0) unless it was stopped, and free. */
void ddm_web_api_free(DdmWebApi *api);

#endif /* DDM_WEB_API_H */
