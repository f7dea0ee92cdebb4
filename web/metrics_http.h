/* SPDX-License-Identifier: Apache-2.0
 *
 * Where GET /metrics is served (libsoup 3, through web/http_server.h):
 *  - on the dashboard's listener (--http), with its rules: the token
 *    (Prometheus sends it as "Authorization: Bearer TOKEN",
 *    `authorization: {credentials: ...}` in prometheus.yml);
 *  - on a listener of its own (--metrics[=127.0.0.1:9585]) that serves
 *    nothing else and needs no token: it only reads, and binds loopback
 *    unless the user names another address. The Host and Origin checks
 *    of http_server.c hold there too (a page in a browser cannot read it
 *    through DNS rebinding).
 * Both answer from one DdmMetricsSource, so a scrape on either counts as
 * a look at the views the metrics report on.
 */
#ifndef DDM_METRICS_HTTP_H
#define DDM_METRICS_HTTP_H

#include <glib.h>

#include "core/daemon/daemon.h"

struct DdmHttpServer; /* web/http_server.h: not included, so callers need no libsoup headers */

/** The address of a bare --metrics. */
#define DDM_METRICS_LISTEN_DEFAULT "127.0.0.1:9585"

typedef struct DdmMetricsEndpoint DdmMetricsEndpoint;

/** Serve /metrics for @daemon (borrowed) on @dashboard (NULL: none; it
 *  must outlive the endpoint) and, when @listen is not NULL, on a
 *  token-free listener bound to @listen (listen_addr.h syntax). NULL with
 *  @error when that address cannot be bound; NULL without an error (and
 *  nothing to free) when there is nowhere to serve. (transfer full) */
DdmMetricsEndpoint *ddm_metrics_endpoint_new(DdmDaemon *daemon, struct DdmHttpServer *dashboard,
                                             const char *listen, GError **error);
/** Free; the dashboard's /metrics route goes with it (the dashboard may
 *  serve on a little longer: ddm_web_free). */
void ddm_metrics_endpoint_free(DdmMetricsEndpoint *ep);
/** "http://HOST:PORT/metrics" of the token-free listener, or NULL. (transfer full) */
char *ddm_metrics_endpoint_url(const DdmMetricsEndpoint *ep);

#endif /* DDM_METRICS_HTTP_H */
