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

gboolean ddm_listen_addr_parse(const char *option, const char *spec, DdmListenAddr *out,
                               GError **error)
{
    if (spec == NULL || *spec == '\0')
        return bad(error, option, "", "expected [HOST:]PORT");
    g_autofree char *host = NULL;
    const char *port_s;
    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');
        if (end == NULL || end[1] != ':')
            return bad(error, option, spec, "expected [IPV6]:PORT");
        host = g_strndup(spec + 1, (gsize)(end - spec - 1));
        port_s = end + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (colon != NULL && strchr(spec, ':') != colon)
            return bad(error, option, spec, "an IPv6 address goes in brackets, [::1]:PORT");
        if (colon != NULL) {
            host = g_strndup(spec, (gsize)(colon - spec));
            port_s = colon + 1;
        } else {
            port_s = spec;
        }
    }
    guint16 port = 0;
    if (!parse_port(port_s, &port))
        return bad(error, option, spec, "expected a port number from 0 to 65535");
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
