/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's request rules, as pure functions (unit-tested in
 * tests/unit/web/): the per-server token, where a request may carry it
 * (cookie, "Authorization: Bearer"), and the Host and Origin checks that
 * stop DNS rebinding and cross-site requests. http_server.c applies them
 * to every request; doc/web.md ("Security") is the user's side.
 *
 * Host: the port must be the bound one and the name an IP literal,
 * "localhost" (or NAME.localhost), or, when the server listens on a
 * non-loopback address, this machine's host name. A rebinding attack
 * reaches us under the attacker's DNS name, which none of these is.
 * Origin: absent (not a browser, or a same-origin GET), or exactly
 * "http://" + the Host the request was sent to.
 * A token-free listener on a non-loopback address (--metrics off loopback:
 * read-only, GET only) takes any well-formed Host, so that Prometheus may
 * scrape it by any DNS name or through a port forward, and refuses instead
 * every request a web page's script makes (ddm_web_from_page_script).
 */
#ifndef DDM_WEB_AUTH_H
#define DDM_WEB_AUTH_H

#include <glib.h>

/** Random bytes in a token (shown as twice as many hex digits). */
#define DDM_WEB_TOKEN_BYTES 24

/** A new random token from the kernel's generator (getrandom), as hex.
 *  NULL with @error if the kernel gave no randomness. (transfer full) */
char *ddm_web_token_new(GError **error);
/** @given equals @expected, in a time that does not depend on where they
 *  differ. FALSE for NULL. */
gboolean ddm_web_token_equal(const char *expected, const char *given);
/** The cookie that keeps the token: "ddmon_token_PORT" (cookies ignore
 *  ports, so servers on two ports of one host each have their own).
 *  (transfer full) */
char *ddm_web_cookie_name(guint port);
/** The value of cookie @name in a Cookie header ("a=1; b=2"), NULL if it
 *  is not there. (transfer full) */
char *ddm_web_cookie_get(const char *cookie_header, const char *name);
/** The token of "Authorization: Bearer TOKEN", NULL for any other scheme
 *  or none. (transfer full) */
char *ddm_web_bearer_token(const char *authorization);

/** Whether a request with Host header @host may be served by a server on
 *  @port, listening on a loopback address (@loopback) or not. */
gboolean ddm_web_host_allowed(const char *host, guint port, gboolean loopback);
/** Whether @host is a well-formed Host header (a name or address, an
 *  optional port), whatever it names: the rule of a read-only, token-free
 *  listener on a non-loopback address (--metrics=0.0.0.0:P), which
 *  Prometheus reaches under any DNS name and, behind a port forward, any
 *  port. Rebinding is stopped there by ddm_web_from_page_script instead. */
gboolean ddm_web_host_wellformed(const char *host);
/** Whether a request was made by a script or element of a web page
 *  (fetch, XHR, <img>...) rather than by a program or a person opening the
 *  URL: an Origin header, or a Sec-Fetch-Mode other than "navigate". A
 *  page a DNS-rebinding attack loaded could read only through such a
 *  request. (Browsers too old for Sec-Fetch-* are not told apart.) */
gboolean ddm_web_from_page_script(const char *origin, const char *sec_fetch_mode);
/** Whether a request whose Host header is @host (already allowed) may come
 *  from @origin (NULL: no Origin header). */
gboolean ddm_web_origin_allowed(const char *origin, const char *host);
/** Whether a Sec-Fetch-Site value (NULL: none sent) is same-origin enough. */
gboolean ddm_web_fetch_site_allowed(const char *sec_fetch_site);

#endif /* DDM_WEB_AUTH_H */
