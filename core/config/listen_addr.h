/* SPDX-License-Identifier: Apache-2.0
 *
 * A TCP listener's address as the user writes it on the command line
 * (--http[=ADDR], --metrics=ADDR): "HOST:PORT", "[V6]:PORT", ":PORT" or
 * "PORT" alone, HOST an IP literal or "localhost". A missing host is
 * 127.0.0.1: listeners are loopback unless the user names another
 * address. Port 0 asks the kernel for a free port (tests).
 */
#ifndef DDM_CONFIG_LISTEN_ADDR_H
#define DDM_CONFIG_LISTEN_ADDR_H

#include <glib.h>

typedef struct DdmListenAddr {
    char *host;        /* an IP literal, never a name: "127.0.0.1", "::1", "0.0.0.0" */
    guint16 port;
    gboolean loopback; /* host is a loopback address */
    gboolean wildcard; /* host is 0.0.0.0 or :: (every interface) */
} DdmListenAddr;

/** Parse @spec for @option (named in the message). FALSE with a
 *  G_OPTION_ERROR_BAD_VALUE @error, leaving @out untouched. @out's host is
 *  the caller's (ddm_listen_addr_clear). */
gboolean ddm_listen_addr_parse(const char *option, const char *spec, DdmListenAddr *out,
                               GError **error);
void ddm_listen_addr_clear(DdmListenAddr *a);
/** Split "HOST:PORT", "[V6]:PORT", "[V6]", "HOST" or ":PORT" (the forms
 *  of a listener option and of an HTTP Host header): *@host gets HOST
 *  without brackets (maybe "", transfer full), *@port the port (0..65535)
 *  or -1 when none is given. FALSE, with nothing set, for an unbracketed
 *  second ':', anything but ":PORT" after ']', or a port that is not 1 to
 *  5 digits up to 65535. Names are not checked: callers decide what HOST
 *  may be. */
gboolean ddm_host_port_split(const char *s, char **host, gint *port);
/** "127.0.0.1:8585" or "[::1]:8585", for URLs and Host checks. (transfer full) */
char *ddm_listen_addr_authority(const char *host, guint16 port);

#endif /* DDM_CONFIG_LISTEN_ADDR_H */
