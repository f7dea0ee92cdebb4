/* SPDX-License-Identifier: Apache-2.0
 *
 * Parsing a listener's address (listen_addr.h): the syntax and the
 * loopback default, in one place for every TCP listener option.
 */
#include "core/config/listen_addr.h"

#include <gio/gio.h>
#include <string.h>

static gboolean bad(GError **error, const char *option, const char *spec, const char *why)
{
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s: '%s'", option, why,
                spec);
    return FALSE;
}

static gboolean parse_port(const char *s, guint16 *port)
{
    if (*s == '\0' || strlen(s) > 5)
        return FALSE;
    guint v = 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (!g_ascii_isdigit(*p))
            return FALSE;
        v = v * 10 + (guint)(*p - '0');
    }
    if (v > 65535)
        return FALSE;
    *port = (guint16)v;
    return TRUE;
}

gboolean ddm_host_port_split(const char *s, char **host, gint *port)
{
    const char *port_s = NULL;
    g_autofree char *h = NULL;
    if (s == NULL)
        return FALSE;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (end == NULL || (end[1] != '\0' && end[1] != ':'))
            return FALSE;
        h = g_strndup(s + 1, (gsize)(end - s - 1));
        port_s = end[1] == ':' ? end + 2 : NULL;
    } else {
        const char *colon = strchr(s, ':');
        if (colon != NULL && strchr(colon + 1, ':') != NULL)
            return FALSE; /* an IPv6 address without its brackets */
        h = colon != NULL ? g_strndup(s, (gsize)(colon - s)) : g_strdup(s);
        port_s = colon != NULL ? colon + 1 : NULL;
    }
    guint16 p = 0;
    if (port_s != NULL && !parse_port(port_s, &p))
        return FALSE;
    *host = g_steal_pointer(&h);
    *port = port_s != NULL ? (gint)p : -1;
    return TRUE;
}

gboolean ddm_listen_addr_parse(const char *option, const char *spec, DdmListenAddr *out,
                               GError **error)
{
    if (spec == NULL || *spec == '\0')
        return bad(error, option, "", "expected [HOST:]PORT");
    g_autofree char *host = NULL;
    gint split_port = -1;
    if (!ddm_host_port_split(spec, &host, &split_port)) {
        if (spec[0] == '[')
            return bad(error, option, spec, "expected [IPV6]:PORT");
        if (strchr(spec, ':') != strrchr(spec, ':'))
            return bad(error, option, spec, "an IPv6 address goes in brackets, [::1]:PORT");
        return bad(error, option, spec, "expected a port number from 0 to 65535");
    }
    guint16 port = 0;
    if (split_port < 0) { /* "PORT" alone (or "[V6]" without one) */
        if (spec[0] == '[')
            return bad(error, option, spec, "expected [IPV6]:PORT");
        if (!parse_port(host, &port))
            return bad(error, option, spec, "expected a port number from 0 to 65535");
        g_clear_pointer(&host, g_free);
    } else {
        port = (guint16)split_port;
    }
    if (host == NULL || *host == '\0' || g_ascii_strcasecmp(host, "localhost") == 0) {
        g_free(host);
        host = g_strdup("127.0.0.1");
    }
    g_autoptr(GInetAddress) ia = g_inet_address_new_from_string(host);
    if (ia == NULL)
        return bad(error, option, spec, "the host must be an IP address or localhost");
    out->host = g_steal_pointer(&host);
    out->port = port;
    out->loopback = g_inet_address_get_is_loopback(ia);
    out->wildcard = g_inet_address_get_is_any(ia);
    return TRUE;
}

void ddm_listen_addr_clear(DdmListenAddr *a)
{
    g_clear_pointer(&a->host, g_free);
}

char *ddm_listen_addr_authority(const char *host, guint16 port)
{
    if (strchr(host, ':') != NULL)
        return g_strdup_printf("[%s]:%u", host, port);
    return g_strdup_printf("%s:%u", host, port);
}
