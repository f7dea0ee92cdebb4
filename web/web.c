/* SPDX-License-Identifier: Apache-2.0
 *
 * The web dashboard assembled (web.h): listener, pages, API, stream,
 * history, downloads.
 */
#include "web/web.h"

#include "web/api.h"
#include "web/downloads.h"
#include "web/history.h"
#include "web/http_server.h"
#include "web/static_files.h"
#include "web/stream.h"
#include "web/view_json.h"

#include "core/daemon/daemon.h"
#include "core/session/monitor.h"

struct DdmWeb {
    DdmHttpServer *http;
    DdmMonitor *mon; /* borrowed: told the listener's port, so the scan never dials it */
    DdmWebStatic *statics;
    DdmWebStream *stream;
    DdmWebHistory *history;
    DdmWebDownloads *downloads;
    DdmWebApi *api;
    char *url;
};

DdmWeb *ddm_web_new(DdmDaemon *daemon, const DdmWebOptions *opts, GError **error)
{
    DdmHttpOptions http = {.listen = opts->listen, .option = "--http", .token = TRUE};
    DdmHttpServer *srv = ddm_http_server_new(&http, error);
    if (srv == NULL)
        return NULL;
    DdmWebDownloads *downloads = ddm_web_downloads_new(opts->downloads_dir, error);
    if (downloads == NULL) {
        ddm_http_server_free(srv);
        return NULL;
    }
    DdmWeb *web = g_new0(DdmWeb, 1);
    web->http = srv;
    web->mon = ddm_daemon_monitor(daemon);
    ddm_monitor_own_port(web->mon, (guint16)ddm_http_server_port(srv), TRUE);
    web->downloads = downloads;
    ddm_web_view_json_hide_dir(opts->downloads_dir);
    g_autofree char *dir = ddm_web_static_dir();
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        g_warning("web: the dashboard's files are not in %s (set DDMON_WEB_DIR); the API works",
                  dir);
    web->statics = ddm_web_static_new(srv, dir);
    web->stream = ddm_web_stream_new(ddm_daemon_views(daemon));
    web->history = ddm_web_history_new(ddm_daemon_views(daemon));
    web->api = ddm_web_api_new(srv, daemon, web->stream, web->history, downloads);
    web->url = ddm_http_server_url(srv);
    return web;
}

void ddm_web_free(DdmWeb *web)
{
    if (web == NULL)
        return;
    /* Refused from now on; the commands waiting get their 503, written
     * before the connections close (a closed connection says nothing). */
    ddm_http_server_stop_accepting(web->http);
    ddm_web_api_stop(web->api, DDM_WEB_API_STOP_FLUSH_MS);
    ddm_web_api_free(web->api);
    ddm_web_stream_free(web->stream);
    ddm_web_history_free(web->history);
    ddm_monitor_own_port(web->mon, (guint16)ddm_http_server_port(web->http), FALSE);
    ddm_http_server_free(web->http);
    ddm_web_static_free(web->statics);
    ddm_web_downloads_free(web->downloads);
    ddm_web_view_json_hide_dir(NULL);
    g_free(web->url);
    g_free(web);
}

const char *ddm_web_url(const DdmWeb *web)
{
    return web->url;
}

DdmHttpServer *ddm_web_http(DdmWeb *web)
{
    return web->http;
}
