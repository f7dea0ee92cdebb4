/* SPDX-License-Identifier: Apache-2.0
 *
 * GET /metrics on the dashboard and on the token-free --metrics listener
 * (metrics_http.h).
 */
#include "web/metrics_http.h"

#include <string.h>

#include "web/http_server.h"
#include "web/metrics_source.h"

#include "core/daemon/daemon.h"
#include "core/session/monitor.h"

struct DdmMetricsEndpoint {
    DdmMetricsSource *source; /* owned */
    DdmHttpServer *own;       /* the --metrics listener, owned; NULL without one */
    DdmMonitor *mon;          /* borrowed: told own's port, so the scan never dials it */
    DdmHttpServer *dashboard; /* borrowed, outlives us; NULL without one */
};

static void on_metrics(SoupServerMessage *msg, const char *path, gpointer ud)
{
    DdmMetricsEndpoint *ep = ud;
    const char *accept = soup_message_headers_get_list(
        soup_server_message_get_request_headers(msg), "Accept");
    const char *type = NULL;
    gsize len = 0;
    (void)path;
    g_autofree char *body = ddm_metrics_source_scrape(ep->source, accept, &len, &type);
    ddm_http_reply(msg, SOUP_STATUS_OK, type, body, len);
}

DdmMetricsEndpoint *ddm_metrics_endpoint_new(DdmDaemon *daemon, DdmHttpServer *dashboard,
                                             const char *listen, GError **error)
{
    DdmMetricsEndpoint *ep;
    if (dashboard == NULL && listen == NULL)
        return NULL;
    ep = g_new0(DdmMetricsEndpoint, 1);
    if (listen != NULL) {
        DdmHttpOptions o = {.listen = listen, .option = "--metrics", .token = FALSE};
        ep->own = ddm_http_server_new(&o, error);
        if (ep->own == NULL) {
            g_free(ep);
            return NULL;
        }
        ep->mon = ddm_daemon_monitor(daemon);
        ddm_monitor_own_port(ep->mon, (guint16)ddm_http_server_port(ep->own), TRUE);
    }
    ep->source = ddm_metrics_source_new(daemon);
    if (ep->own != NULL)
        ddm_http_server_add_route(ep->own, "/metrics", DDM_HTTP_GET, on_metrics, ep);
    if (dashboard != NULL)
        ddm_http_server_add_route(dashboard, "/metrics", DDM_HTTP_GET, on_metrics, ep);
    ep->dashboard = dashboard;
    return ep;
}

void ddm_metrics_endpoint_free(DdmMetricsEndpoint *ep)
{
    if (ep == NULL)
        return;
    /* The dashboard serves on while its last answers are written as the
     * server stops (ddm_web_free): no route to us then. */
    if (ep->dashboard != NULL)
        ddm_http_server_remove_route(ep->dashboard, "/metrics", ep);
    if (ep->own) {
        ddm_monitor_own_port(ep->mon, (guint16)ddm_http_server_port(ep->own), FALSE);
        ddm_http_server_free(ep->own);
    }
    ddm_metrics_source_free(ep->source);
    g_free(ep);
}

char *ddm_metrics_endpoint_url(const DdmMetricsEndpoint *ep)
{
    if (ep == NULL || ep->own == NULL)
        return NULL;
    g_autofree char *base = ddm_http_server_url(ep->own); /* "http://HOST:PORT/", no token */
    return g_strconcat(base, "metrics", NULL);
}
