/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's HTTP listener (http_server.h): binding, the request checks in
 * order, routing, and the small answer helpers. The checks run in the
 * early handler, after the headers and before libsoup reads a body, so a
 * refused request never gets to send one.
 *
 * Accepting is ours, not GIO's: the listening GSocket is accepted on by a
 * DdmListener (core/loop/listener.h: ddm_accept(), DDM_ACCEPT_BATCH a
 * wake-up), so out of descriptors a pending connection is shed with one
 * rate-limited log line, and after another accept error the listener
 * pauses, where a GSocketService would log "fail: ..." and retry at once,
 * spinning.
 */
#include "web/http_server.h"

#include <string.h>
#include <unistd.h>

#include "core/config/listen_addr.h"
#include "core/loop/accept.h"
#include "core/loop/listener.h"
#include "core/session/ratelog.h"
#include "core/wire/ctlproto.h" /* ddm_ctl_encode: json-glib's text, made strict */
#include "web/auth.h"
#include "web/paths.h"

/* The largest request body we read (a command's arguments). */
#define MAX_REQUEST_BODY (64 * 1024)
/* A refused connection is logged at most this often. */
#define REFUSED_LOG_INTERVAL_US (10 * G_USEC_PER_SEC)

/* A connection we count: the timer that closes it while it sends no whole
 * request (http_server.h: DDM_HTTP_HEADER_TIMEOUT_S, DDM_HTTP_IDLE_TIMEOUT_S). */
typedef struct Conn {
    DdmHttpServer *srv;
    GSocketConnection *conn; /* borrowed: libsoup holds it; we have a weak ref */
    char *remote;            /* "ADDR:PORT", to find it from a message */
    guint timer;             /* 0 while a request is being handled */
    guint busy;              /* requests read and not yet finished */
} Conn;

typedef struct Route {
    char *path;
    unsigned flags;
    DdmHttpHandler handler;
    gpointer ud;
} Route;

struct DdmHttpServer {
    SoupServer *soup;
    GSocket *listener;       /* bound and listening; accepted by on_accept */
    DdmListener *accepting;  /* on the listener's fd (core/loop/listener.h) */
    GHashTable *conns;       /* GSocketConnection* libsoup still holds (weak refs) -> Conn* */
    gint64 refused_logged_us;
    guint refused_since_log;
    char *option;
    DdmListenAddr addr;
    guint port;
    char *token;        /* NULL: none required */
    char *cookie_name;
    GPtrArray *routes;  /* Route* */
};

static void route_free(gpointer p)
{
    Route *r = p;
    g_free(r->path);
    g_free(r);
}

/* --------------------------------------------------------------- answers */

static void security_headers(SoupServerMessage *msg)
{
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    soup_message_headers_replace(h, "X-Content-Type-Options", "nosniff");
    soup_message_headers_replace(h, "X-Frame-Options", "DENY");
    soup_message_headers_replace(h, "Referrer-Policy", "no-referrer");
    soup_message_headers_replace(h, "Cache-Control", "no-store");
    soup_message_headers_replace(h, "Content-Security-Policy",
                                 "default-src 'self'; img-src 'self' data:; "
                                 "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
}

void ddm_http_reply(SoupServerMessage *msg, guint status, const char *content_type,
                    const char *body, gsize len)
{
    soup_server_message_set_status(msg, status, NULL);
    soup_server_message_set_response(msg, content_type, SOUP_MEMORY_COPY, body, len);
}

void ddm_http_reply_json(SoupServerMessage *msg, guint status, JsonNode *node)
{
    gsize len = 0;
    char *text = ddm_ctl_encode(node, &len); /* ends in "\n": not sent */
    json_node_unref(node);
    soup_server_message_set_status(msg, status, NULL);
    /* The text is ours: hand it over instead of copying it. */
    soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_TAKE, text, len - 1);
}

void ddm_http_reply_error(SoupServerMessage *msg, guint status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    JsonObject *o = json_object_new();
    json_object_set_int_member(o, "schema", 1);
    json_object_set_int_member(o, "status", status);
    json_object_set_string_member(o, "error", text);
    JsonNode *n = json_node_init_object(json_node_alloc(), o);
    json_object_unref(o);
    ddm_http_reply_json(msg, status, n);
}

/* ---------------------------------------------------------------- paths */

char **ddm_http_path_segments(const char *path)
{
    return ddm_web_path_segments(path);
}

char *ddm_http_query_param(SoupServerMessage *msg, const char *name)
{
    const char *query = g_uri_get_query(soup_server_message_get_uri(msg));
    if (query == NULL)
        return NULL;
    g_autoptr(GHashTable) params = g_uri_parse_params(query, -1, "&", G_URI_PARAMS_NONE, NULL);
    const char *v = params != NULL ? g_hash_table_lookup(params, name) : NULL;
    return g_strdup(v);
}

/* Exact paths first, then patterns, then the longest prefix. */
static const Route *find_route(DdmHttpServer *srv, const char *path)
{
    const Route *pattern = NULL, *prefix = NULL;
    gsize prefix_len = 0;
    for (guint i = 0; i < srv->routes->len; i++) {
        const Route *r = srv->routes->pdata[i];
        if (strcmp(r->path, path) == 0)
            return r;
        gsize len = strlen(r->path);
        if (r->flags & DDM_HTTP_PREFIX) {
            if (len > prefix_len && strncmp(r->path, path, len) == 0) {
                prefix = r;
                prefix_len = len;
            }
        } else if (pattern == NULL && strchr(r->path, '*') != NULL &&
                   ddm_web_path_matches(r->path, path)) {
            pattern = r;
        }
    }
    return pattern != NULL ? pattern : prefix;
}

/* --------------------------------------------------------------- checks */

static gboolean is_get(const char *method)
{
    return method == SOUP_METHOD_GET || method == SOUP_METHOD_HEAD;
}

/* The path and query of @msg without its "token" parameter, for the
 * redirect after a first visit. (transfer full) */
static char *location_without_token(SoupServerMessage *msg)
{
    GUri *uri = soup_server_message_get_uri(msg);
    GString *s = g_string_new(g_uri_get_path(uri));
    const char *query = g_uri_get_query(uri);
    if (query != NULL) {
        g_auto(GStrv) parts = g_strsplit(query, "&", -1);
        gboolean first = TRUE;
        for (char **p = parts; *p != NULL; p++) {
            if (**p == '\0' || g_str_has_prefix(*p, "token=") || strcmp(*p, "token") == 0)
                continue;
            g_string_append_c(s, first ? '?' : '&');
            g_string_append(s, *p);
            first = FALSE;
        }
    }
    return g_string_free(s, FALSE);
}

/* Steps 1-6 of http_server.h. TRUE when the request may go to its route;
 * otherwise @msg has its answer. */
static gboolean check_request(DdmHttpServer *srv, SoupServerMessage *msg, const char *path)
{
    SoupMessageHeaders *req = soup_server_message_get_request_headers(msg);
    const char *method = soup_server_message_get_method(msg);
    const char *host = soup_message_headers_get_one(req, "Host");
    security_headers(msg);
    const char *origin = soup_message_headers_get_one(req, "Origin");
    /* Read-only and token-free off loopback (--metrics=0.0.0.0:P): any name
     * Prometheus knows the host by, but no web page's script (auth.h). */
    gboolean any_host = srv->token == NULL && !srv->addr.loopback;
    if (any_host ? !ddm_web_host_wellformed(host)
                 : !ddm_web_host_allowed(host, srv->port, srv->addr.loopback)) {
        ddm_http_reply_error(msg, SOUP_STATUS_FORBIDDEN,
                             "Host '%s' refused: use the address ddmon printed", host ? host : "");
        return FALSE;
    }
    if (any_host &&
        ddm_web_from_page_script(origin, soup_message_headers_get_one(req, "Sec-Fetch-Mode"))) {
        ddm_http_reply_error(msg, SOUP_STATUS_FORBIDDEN,
                             "requests from web pages are refused on this listener");
        return FALSE;
    }
    if (!ddm_web_origin_allowed(origin, host) ||
        !ddm_web_fetch_site_allowed(soup_message_headers_get_one(req, "Sec-Fetch-Site"))) {
        ddm_http_reply_error(msg, SOUP_STATUS_FORBIDDEN, "cross-origin request refused");
        return FALSE;
    }
    const Route *r = find_route(srv, path);
    if (r == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such page: %s", path);
        return FALSE;
    }
    gboolean post = (r->flags & DDM_HTTP_POST) != 0;
    if (post ? method != SOUP_METHOD_POST : !is_get(method)) {
        soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                     post ? "POST" : "GET, HEAD");
        ddm_http_reply_error(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "%s needs %s", path,
                             post ? "POST" : "GET");
        return FALSE;
    }
    goffset body = soup_message_headers_get_content_length(req);
    if (soup_message_headers_get_encoding(req) == SOUP_ENCODING_CHUNKED ||
        body > MAX_REQUEST_BODY) {
        ddm_http_reply_error(msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE,
                             "request bodies are limited to %d bytes", MAX_REQUEST_BODY);
        return FALSE;
    }
    if (srv->token == NULL || (r->flags & DDM_HTTP_PUBLIC))
        return TRUE;

    g_autofree char *bearer = ddm_web_bearer_token(soup_message_headers_get_one(req, "Authorization"));
    if (bearer != NULL) {
        if (ddm_web_token_equal(srv->token, bearer))
            return TRUE;
        ddm_http_reply_error(msg, SOUP_STATUS_UNAUTHORIZED, "wrong token");
        return FALSE;
    }
    g_autofree char *query_token = (r->flags & DDM_HTTP_PAGE) && is_get(method)
                                       ? ddm_http_query_param(msg, "token")
                                       : NULL;
    if (query_token != NULL) {
        if (!ddm_web_token_equal(srv->token, query_token)) {
            ddm_http_reply_error(msg, SOUP_STATUS_UNAUTHORIZED,
                                 "wrong token: open the URL ddmon printed");
            return FALSE;
        }
        /* First visit: keep the token in a cookie and take it out of the
         * address bar (and the history). */
        g_autofree char *cookie = g_strdup_printf("%s=%s; Path=/; HttpOnly; SameSite=Strict",
                                                  srv->cookie_name, srv->token);
        soup_message_headers_append(soup_server_message_get_response_headers(msg), "Set-Cookie",
                                    cookie);
        g_autofree char *location = location_without_token(msg);
        soup_server_message_set_redirect(msg, SOUP_STATUS_SEE_OTHER, location);
        return FALSE;
    }
    g_autofree char *cookie = ddm_web_cookie_get(soup_message_headers_get_one(req, "Cookie"),
                                                 srv->cookie_name);
    if (cookie == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_UNAUTHORIZED,
                             "no token: open the URL with ?token= that ddmon printed "
                             "(ddmon web-url shows it again)");
        return FALSE;
    }
    if (!ddm_web_token_equal(srv->token, cookie)) {
        ddm_http_reply_error(msg, SOUP_STATUS_UNAUTHORIZED,
                             "wrong token in the cookie: open the URL ddmon printed");
        return FALSE;
    }
    if (post && origin == NULL) {
        ddm_http_reply_error(msg, SOUP_STATUS_FORBIDDEN,
                             "a POST with the cookie needs an Origin header "
                             "(or use Authorization: Bearer)");
        return FALSE;
    }
    return TRUE;
}

static void on_early(SoupServer *soup, SoupServerMessage *msg, const char *path, GHashTable *query,
                     gpointer ud)
{
    DdmHttpServer *srv = ud;
    if (!check_request(srv, msg, path))
        g_debug("http: %s %s refused (%u)", soup_server_message_get_method(msg), path,
                soup_server_message_get_status(msg));
}

static void on_request(SoupServer *soup, SoupServerMessage *msg, const char *path,
                       GHashTable *query, gpointer ud)
{
    DdmHttpServer *srv = ud;
    if (soup_server_message_get_status(msg) != 0)
        return; /* answered by the checks */
    const Route *r = find_route(srv, path);
    if (r == NULL) { /* the early handler found one: routes do not change under a request */
        ddm_http_reply_error(msg, SOUP_STATUS_NOT_FOUND, "no such page: %s", path);
        return;
    }
    r->handler(msg, path, r->ud);
}

/* ---------------------------------------------------------- connections */

static void conn_free(gpointer p)
{
    Conn *c = p;
    if (c->timer != 0)
        g_source_remove(c->timer);
    g_free(c->remote);
    g_free(c);
}

static void conn_gone(gpointer data, GObject *where_the_object_was)
{
    DdmHttpServer *srv = data;
    g_hash_table_remove(srv->conns, where_the_object_was);
}

static char *address_string(GSocketAddress *a)
{
    if (!G_IS_INET_SOCKET_ADDRESS(a))
        return NULL;
    g_autofree char *ip =
        g_inet_address_to_string(g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(a)));
    return g_strdup_printf("%s:%u", ip, g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(a)));
}

/* The connection sent no whole request in time: shut it down, so that
 * libsoup sees the end and lets it go (conn_gone). */
static gboolean on_conn_timeout(gpointer ud)
{
    Conn *c = ud;
    c->timer = 0;
    g_debug("%s: closing %s: no whole request in time", c->srv->option,
            c->remote != NULL ? c->remote : "a connection");
    g_socket_shutdown(g_socket_connection_get_socket(c->conn), TRUE, TRUE, NULL);
    return G_SOURCE_REMOVE;
}

static void conn_arm(Conn *c, guint seconds)
{
    if (c->timer != 0)
        g_source_remove(c->timer);
    c->timer = g_timeout_add_seconds(seconds, on_conn_timeout, c);
}

/* The Conn @msg came on (at most DDM_HTTP_MAX_CONNECTIONS to look at). */
static Conn *conn_of(DdmHttpServer *srv, SoupServerMessage *msg)
{
    g_autofree char *remote = address_string(soup_server_message_get_remote_address(msg));
    if (remote == NULL)
        return NULL;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, srv->conns);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        Conn *c = value;
        if (c->remote != NULL && strcmp(c->remote, remote) == 0)
            return c;
    }
    return NULL;
}

/* A whole request arrived: no deadline while it is handled (a command or
 * a stream may take long; those are capped by their own rules). */
static void on_request_read(SoupServer *soup, SoupServerMessage *msg, gpointer ud)
{
    Conn *c = conn_of(ud, msg);
    (void)soup;
    if (c == NULL)
        return;
    c->busy++;
    if (c->timer != 0) {
        g_source_remove(c->timer);
        c->timer = 0;
    }
}

/* Its answer went out (or the client left): idle until the next request. */
static void on_request_done(SoupServer *soup, SoupServerMessage *msg, gpointer ud)
{
    Conn *c = conn_of(ud, msg);
    (void)soup;
    if (c == NULL || c->busy == 0)
        return;
    if (--c->busy == 0)
        conn_arm(c, DDM_HTTP_IDLE_TIMEOUT_S);
}

/* A new connection: past DDM_HTTP_MAX_CONNECTIONS it is closed at once
 * (whoever holds them, the server's other listeners and its VMs keep their
 * descriptors); else libsoup serves it, and we count it until libsoup lets
 * it go. */
static void on_incoming(DdmHttpServer *srv, GSocketConnection *conn)
{
    if (g_hash_table_size(srv->conns) >= DDM_HTTP_MAX_CONNECTIONS) {
        gint64 now = g_get_monotonic_time();
        srv->refused_since_log++;
        if (now - srv->refused_logged_us >= REFUSED_LOG_INTERVAL_US) {
            g_message("%s: %u connection(s) refused: %u open already", srv->option,
                      srv->refused_since_log, DDM_HTTP_MAX_CONNECTIONS);
            srv->refused_logged_us = now;
            srv->refused_since_log = 0;
        }
        g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
        return;
    }
    g_autoptr(GSocketAddress) local = g_socket_connection_get_local_address(conn, NULL);
    g_autoptr(GSocketAddress) remote = g_socket_connection_get_remote_address(conn, NULL);
    g_autoptr(GError) error = NULL;
    Conn *c = g_new0(Conn, 1);
    c->srv = srv;
    c->conn = conn;
    c->remote = address_string(remote);
    conn_arm(c, DDM_HTTP_HEADER_TIMEOUT_S);
    g_hash_table_insert(srv->conns, conn, c);
    g_object_weak_ref(G_OBJECT(conn), conn_gone, srv);
    if (!soup_server_accept_iostream(srv->soup, G_IO_STREAM(conn), local, remote, &error)) {
        g_debug("%s: a connection could not be served: %s", srv->option, error->message);
        g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
    }
}

/* A connection (core/loop/listener.h: at most DDM_ACCEPT_BATCH a wake-up,
 * so a connect flood leaves the loop's other watches their turn). */
static void on_accept(int cfd, const struct sockaddr *addr, socklen_t addrlen, gpointer ud)
{
    DdmHttpServer *srv = ud;
    (void)addr;
    (void)addrlen;
    g_autoptr(GError) error = NULL;
    GSocket *sock = g_socket_new_from_fd(cfd, &error);
    if (sock == NULL) {
        g_debug("%s: a connection could not be served: %s", srv->option, error->message);
        close(cfd);
        return;
    }
    GSocketConnection *conn = g_socket_connection_factory_create_connection(sock);
    g_object_unref(sock); /* the connection holds it */
    on_incoming(srv, conn);
    g_object_unref(conn); /* libsoup holds it while it serves it */
}

/* Out of descriptors ddm_accept() shed a connection, or accepting failed
 * (the listener pauses): one rate-limited line. */
static void on_accept_trouble(DdmAcceptResult r, int err, guint paused_ms, gpointer ud)
{
    const DdmHttpServer *srv = ud;
    ddm_ratelog_accept(srv->option, NULL, r, err, paused_ms);
}

static const DdmListenerOps accept_ops = {on_accept, on_accept_trouble};

GSocket *ddm_http_server_message_socket(DdmHttpServer *srv, SoupServerMessage *msg)
{
    GSocket *sock = soup_server_message_get_socket(msg);
    if (sock != NULL)
        return sock;
    Conn *c = conn_of(srv, msg);
    return c != NULL ? g_socket_connection_get_socket(c->conn) : NULL;
}

guint ddm_http_server_n_connections(const DdmHttpServer *srv)
{
    return g_hash_table_size(srv->conns);
}

/* ------------------------------------------------------------- lifetime */

DdmHttpServer *ddm_http_server_new(const DdmHttpOptions *opts, GError **error)
{
    const char *option = opts->option != NULL ? opts->option : "--http";
    DdmListenAddr addr = {0};
    if (!ddm_listen_addr_parse(option, opts->listen, &addr, error))
        return NULL;
    DdmHttpServer *srv = g_new0(DdmHttpServer, 1);
    srv->addr = addr;
    srv->option = g_strdup(option);
    srv->routes = g_ptr_array_new_with_free_func(route_free);
    if (opts->token) {
        srv->token = ddm_web_token_new(error);
        if (srv->token == NULL) {
            ddm_http_server_free(srv);
            return NULL;
        }
    }
    srv->soup = soup_server_new("server-header", "ddmon", NULL);
    soup_server_add_early_handler(srv->soup, NULL, on_early, srv, NULL);
    soup_server_add_handler(srv->soup, NULL, on_request, srv, NULL);
    srv->conns = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, conn_free);
    g_signal_connect(srv->soup, "request-read", G_CALLBACK(on_request_read), srv);
    g_signal_connect(srv->soup, "request-finished", G_CALLBACK(on_request_done), srv);
    g_signal_connect(srv->soup, "request-aborted", G_CALLBACK(on_request_done), srv);
    g_autoptr(GSocketAddress) sa = g_inet_socket_address_new_from_string(addr.host, addr.port);
    g_autoptr(GSocketAddress) bound = NULL;
    g_autoptr(GError) local = NULL;
    /* What g_socket_listener_add_address() did: a socket of the address's
     * family, bound with address reuse, listening (the same errors). */
    if (sa != NULL)
        srv->listener = g_socket_new(g_socket_address_get_family(sa), G_SOCKET_TYPE_STREAM,
                                     G_SOCKET_PROTOCOL_TCP, &local);
    if (sa == NULL || srv->listener == NULL || !g_socket_bind(srv->listener, sa, TRUE, &local) ||
        !g_socket_listen(srv->listener, &local) ||
        (bound = g_socket_get_local_address(srv->listener, &local)) == NULL) {
        g_set_error(error, G_IO_ERROR, local != NULL ? local->code : G_IO_ERROR_INVALID_ARGUMENT,
                    "%s: cannot listen on %s port %u: %s", option, addr.host, addr.port,
                    local != NULL ? local->message : "bad address");
        ddm_http_server_free(srv);
        return NULL;
    }
    srv->port = G_IS_INET_SOCKET_ADDRESS(bound)
                    ? g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound))
                    : addr.port;
    srv->accepting = ddm_listener_new(g_socket_get_fd(srv->listener), &accept_ops, srv);
    srv->cookie_name = ddm_web_cookie_name(srv->port);
    return srv;
}

void ddm_http_server_stop_accepting(DdmHttpServer *srv)
{
    ddm_listener_free(srv->accepting); /* before the close (core/loop/listener.h) */
    srv->accepting = NULL;
    if (srv->listener != NULL) {
        g_socket_close(srv->listener, NULL);
        g_clear_object(&srv->listener);
    }
}

void ddm_http_server_free(DdmHttpServer *srv)
{
    if (srv == NULL)
        return;
    ddm_http_server_stop_accepting(srv);
    if (srv->soup != NULL) /* its last request-finished/aborted must not find srv */
        g_signal_handlers_disconnect_by_data(srv->soup, srv);
    if (srv->conns != NULL) {
        /* libsoup drops them below; we no longer count. */
        GHashTableIter it;
        gpointer conn;
        g_hash_table_iter_init(&it, srv->conns);
        while (g_hash_table_iter_next(&it, &conn, NULL))
            g_object_weak_unref(conn, conn_gone, srv);
        g_hash_table_destroy(srv->conns);
    }
    if (srv->soup != NULL) {
        soup_server_disconnect(srv->soup);
        g_object_unref(srv->soup);
    }
    g_ptr_array_unref(srv->routes);
    ddm_listen_addr_clear(&srv->addr);
    if (srv->token != NULL)
        memset(srv->token, 0, strlen(srv->token));
    g_free(srv->token);
    g_free(srv->cookie_name);
    g_free(srv->option);
    g_free(srv);
}

void ddm_http_server_add_route(DdmHttpServer *srv, const char *path, unsigned flags,
                               DdmHttpHandler handler, gpointer ud)
{
    Route *r = g_new0(Route, 1);
    r->path = g_strdup(path);
    r->flags = flags;
    r->handler = handler;
    r->ud = ud;
    g_ptr_array_add(srv->routes, r);
}

void ddm_http_server_remove_route(DdmHttpServer *srv, const char *path, gpointer ud)
{
    for (guint i = srv->routes->len; i-- > 0;) {
        const Route *r = g_ptr_array_index(srv->routes, i);
        if (r->ud == ud && strcmp(r->path, path) == 0)
            g_ptr_array_remove_index(srv->routes, i);
    }
}

guint ddm_http_server_port(const DdmHttpServer *srv)
{
    return srv->port;
}

const char *ddm_http_server_token(const DdmHttpServer *srv)
{
    return srv->token;
}

char *ddm_http_server_url(const DdmHttpServer *srv)
{
    /* A wildcard address is no place to browse to: name this host's loopback. */
    const char *host = srv->addr.wildcard ? (strchr(srv->addr.host, ':') ? "::1" : "127.0.0.1")
                                          : srv->addr.host;
    g_autofree char *authority = ddm_listen_addr_authority(host, (guint16)srv->port);
    if (srv->token != NULL)
        return g_strdup_printf("http://%s/?token=%s", authority, srv->token);
    return g_strdup_printf("http://%s/", authority);
}
