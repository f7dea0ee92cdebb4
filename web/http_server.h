/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's HTTP listener (libsoup 3): binds one address, accepts at most
 * DDM_HTTP_MAX_CONNECTIONS connections at once, checks every
 * request against the rules of auth.h and hands it to the route that
 * matches its path. Used twice: by the dashboard (web.c: token required,
 * pages, API, stream) and, token-free, by the metrics-only listener
 * (--metrics, one public route). Runs on the default GMainContext and
 * never blocks it.
 *
 * A request goes through, in order:
 *   1. Host must be allowed (ddm_web_host_allowed)          -> else 403
 *   2. Origin same-origin, Sec-Fetch-Site not cross-site     -> else 403
 *   3. a route must match                                   -> else 404
 *   4. the method: POST for DDM_HTTP_POST routes, GET/HEAD
 *      for the others                                       -> else 405
 *   5. unless the server has no token or the route is
 *      DDM_HTTP_PUBLIC: the token, from "Authorization:
 *      Bearer", the cookie, or "?token=" on a GET of a page
 *      (DDM_HTTP_PAGE), which sets the cookie and redirects
 *      to the same URL without it                           -> else 401
 *   6. a POST authenticated by the cookie must carry an
 *      Origin (browsers send one; a form on another site
 *      could not have the right one)                        -> else 403
 *
 * Adding a route: ddm_http_server_add_route(srv, "/api/thing", flags,
 * handler, ud). @path is matched exactly; a "*" segment matches any one
 * segment (web/api.c's "/api/vms/" "*" "/views/" "*"); with DDM_HTTP_PREFIX
 * @path is a prefix. An exact path wins over a pattern, a pattern over a prefix, a longer
 * prefix over a shorter one. The handler answers @msg
 * before it returns (ddm_http_reply*), or pauses it
 * (soup_server_message_pause) and answers later from the main loop.
 */
#ifndef DDM_WEB_HTTP_SERVER_H
#define DDM_WEB_HTTP_SERVER_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

typedef struct DdmHttpServer DdmHttpServer;

/** Connections open at once; more are closed as they arrive (with a log
 *  line at most every 10 s), so that no client can take the descriptors
 *  the rest of the server needs. */
#define DDM_HTTP_MAX_CONNECTIONS 64
/** A new connection that has not sent a whole request (headers and body)
 *  within this many seconds is closed, so that 64 clients sending half a
 *  request cannot keep everyone else out. */
#define DDM_HTTP_HEADER_TIMEOUT_S 10
/** A kept-alive connection with no request for this many seconds after its
 *  last answer is closed (a new request must be whole by then too). Longer
 *  than Prometheus's usual 15 s scrape interval, so scrapes reuse it. */
#define DDM_HTTP_IDLE_TIMEOUT_S 20

typedef enum {
    DDM_HTTP_GET = 0,              /* GET and HEAD only (the default) */
    DDM_HTTP_POST = 1 << 0,        /* POST only: an action that changes state */
    DDM_HTTP_PREFIX = 1 << 1,      /* @path is a prefix, e.g. "/api/vms/" */
    DDM_HTTP_PUBLIC = 1 << 2,      /* no token needed (Host and Origin still checked) */
    DDM_HTTP_PAGE = 1 << 3,        /* a page a person opens: "?token=" accepted */
} DdmHttpRouteFlags;

/** Answer @msg (or pause it and answer later). @path is the request's
 *  path, percent-decoded segment by segment is the handler's business
 *  (ddm_http_path_segments). */
typedef void (*DdmHttpHandler)(SoupServerMessage *msg, const char *path, gpointer ud);

typedef struct DdmHttpOptions {
    const char *listen;   /* listen_addr.h syntax: "127.0.0.1:8585", ":0", ... */
    const char *option;   /* the option it came from, for messages: "--http" */
    gboolean token;       /* require the token (step 5); FALSE: every route is public */
} DdmHttpOptions;

/** Bind and serve @opts->listen. NULL with @error (address in use, bad
 *  address). (transfer full) */
DdmHttpServer *ddm_http_server_new(const DdmHttpOptions *opts, GError **error);
/** Stop listening, drop every connection and route. */
void ddm_http_server_free(DdmHttpServer *srv);

/** Add a route (see the top of this file). @ud is borrowed. */
void ddm_http_server_add_route(DdmHttpServer *srv, const char *path, unsigned flags,
                               DdmHttpHandler handler, gpointer ud);
/** Remove the routes on @path with @ud (their owner goes before @srv):
 *  a request for it is answered 404 from then on. */
void ddm_http_server_remove_route(DdmHttpServer *srv, const char *path, gpointer ud);

/** Close the listener: a connection made from now on is refused. The
 *  connections open are served on until ddm_http_server_free (a server
 *  that stops lets answers already made be written first). */
void ddm_http_server_stop_accepting(DdmHttpServer *srv);

/** Connections open now. */
guint ddm_http_server_n_connections(const DdmHttpServer *srv);
/** The socket @msg came on (borrowed; NULL if unknown). libsoup's own
 *  soup_server_message_get_socket() is NULL for the connections this
 *  server hands it (soup_server_accept_iostream). For a paused message
 *  whose client may leave: libsoup reads nothing while it is paused. */
GSocket *ddm_http_server_message_socket(DdmHttpServer *srv, SoupServerMessage *msg);
/** The port bound (the real one when the option said 0). */
guint ddm_http_server_port(const DdmHttpServer *srv);
/** "http://127.0.0.1:8585/", plus "?token=..." when the server has a
 *  token: the URL a person opens first. (transfer full) */
char *ddm_http_server_url(const DdmHttpServer *srv);
/** The token, NULL when none is required. (transfer none) */
const char *ddm_http_server_token(const DdmHttpServer *srv);

/* ------------------------------------------------------------ answers */

/** Answer @status with @body (@len bytes, copied) of @content_type. */
void ddm_http_reply(SoupServerMessage *msg, guint status, const char *content_type,
                    const char *body, gsize len);
/** Answer @status with @node (taken) as JSON. */
void ddm_http_reply_json(SoupServerMessage *msg, guint status, JsonNode *node);
/** Answer @status with {"schema":1,"status":STATUS,"error":"MESSAGE"}. */
void ddm_http_reply_error(SoupServerMessage *msg, guint status, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

/** @path split at "/" and each segment percent-decoded
 *  (ddm_web_path_segments, paths.h). (transfer full) */
char **ddm_http_path_segments(const char *path);
/** The value of query parameter @name of @msg's URI, or NULL. (transfer full) */
char *ddm_http_query_param(SoupServerMessage *msg, const char *name);

#endif /* DDM_WEB_HTTP_SERVER_H */
