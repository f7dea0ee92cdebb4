/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's request rules (auth.h): token, cookie, bearer, Host,
 * Origin.
 */
#include "web/auth.h"

#include "core/config/listen_addr.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/random.h>

char *ddm_web_token_new(GError **error)
{
    guint8 raw[DDM_WEB_TOKEN_BYTES];
    gsize got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                        "no random bytes for the dashboard token: %s", g_strerror(e));
            return NULL;
        }
        got += (gsize)n;
    }
    GString *s = g_string_sized_new(2 * sizeof(raw));
    for (gsize i = 0; i < sizeof(raw); i++)
        g_string_append_printf(s, "%02x", raw[i]);
    memset(raw, 0, sizeof(raw));
    return g_string_free(s, FALSE);
}

gboolean ddm_web_token_equal(const char *expected, const char *given)
{
    if (expected == NULL || given == NULL)
        return FALSE;
    gsize le = strlen(expected), lg = strlen(given);
    guint8 diff = le != lg;
    /* Walk the expected length whatever @given is. */
    for (gsize i = 0; i < le; i++)
        diff |= (guint8)(expected[i] ^ (i < lg ? given[i] : 0));
    return diff == 0;
}

char *ddm_web_cookie_name(guint port)
{
    return g_strdup_printf("ddmon_token_%u", port);
}

char *ddm_web_cookie_get(const char *cookie_header, const char *name)
{
    if (cookie_header == NULL || name == NULL)
        return NULL;
    gsize nlen = strlen(name);
    const char *p = cookie_header;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        gsize len = end != NULL ? (gsize)(end - p) : strlen(p);
        if (len > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            const char *v = p + nlen + 1;
            gsize vlen = len - nlen - 1;
            while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
                v++;
                vlen -= 2;
            }
            return vlen > 0 ? g_strndup(v, vlen) : NULL;
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    return NULL;
}

char *ddm_web_bearer_token(const char *authorization)
{
    if (authorization == NULL)
        return NULL;
    while (*authorization == ' ')
        authorization++;
    if (g_ascii_strncasecmp(authorization, "Bearer ", 7) != 0)
        return NULL;
    const char *t = authorization + 7;
    while (*t == ' ')
        t++;
    char *token = g_strdup(t);
    g_strchomp(token);
    if (*token == '\0') {
        g_free(token);
        return NULL;
    }
    return token;
}

/* Split "name:port", "[v6]:port" or "name" into a lower-case name without
 * a trailing dot and a port (80 when none). FALSE if malformed, or if the
 * port has leading zeros. */
static gboolean split_host(const char *host, char **name, guint *port)
{
    g_autofree char *n = NULL;
    gint p = -1;
    if (!ddm_host_port_split(host, &n, &p)) /* the syntax listeners are given in */
        return FALSE;
    const char *colon = strrchr(host, ':');
    if (p >= 0 && colon != NULL && colon[1] == '0' && colon[2] != '\0')
        return FALSE; /* "08585": not how a browser writes a port */
    gsize len = strlen(n);
    if (len > 0 && n[len - 1] == '.')
        n[len - 1] = '\0';
    if (*n == '\0')
        return FALSE;
    *name = g_ascii_strdown(n, -1);
    *port = p >= 0 ? (guint)p : 80;
    return TRUE;
}

gboolean ddm_web_host_allowed(const char *host, guint port, gboolean loopback)
{
    if (host == NULL)
        return FALSE; /* HTTP/1.1 requires it; a browser always sends it */
    g_autofree char *name = NULL;
    guint p = 0;
    if (!split_host(host, &name, &p) || p != port)
        return FALSE;
    if (g_hostname_is_ip_address(name))
        return TRUE;
    if (strcmp(name, "localhost") == 0 || g_str_has_suffix(name, ".localhost"))
        return TRUE;
    if (!loopback) {
        g_autofree char *self = g_ascii_strdown(g_get_host_name(), -1);
        if (strcmp(name, self) == 0)
            return TRUE;
    }
    return FALSE;
}

gboolean ddm_web_host_wellformed(const char *host)
{
    g_autofree char *name = NULL;
    guint p = 0;
    return host != NULL && split_host(host, &name, &p);
}

gboolean ddm_web_from_page_script(const char *origin, const char *sec_fetch_mode)
{
    return origin != NULL ||
           (sec_fetch_mode != NULL && g_ascii_strcasecmp(sec_fetch_mode, "navigate") != 0);
}

gboolean ddm_web_origin_allowed(const char *origin, const char *host)
{
    if (origin == NULL)
        return TRUE;
    if (host == NULL || g_ascii_strncasecmp(origin, "http://", 7) != 0)
        return FALSE; /* "null", https://, another scheme */
    const char *o = origin + 7;
    gsize olen = strlen(o);
    if (olen > 0 && o[olen - 1] == '/')
        olen--;
    return olen == strlen(host) && g_ascii_strncasecmp(o, host, olen) == 0;
}

gboolean ddm_web_fetch_site_allowed(const char *sec_fetch_site)
{
    return sec_fetch_site == NULL || g_ascii_strcasecmp(sec_fetch_site, "same-origin") == 0 ||
           g_ascii_strcasecmp(sec_fetch_site, "none") == 0;
}
