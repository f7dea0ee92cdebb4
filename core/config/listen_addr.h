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
/** "127.0.0.1:8585" or "[::1]:8585", for URLs and Host checks. (transfer full) */
char *ddm_listen_addr_authority(const char *host, guint16 port);

#endif /* DDM_CONFIG_LISTEN_ADDR_H */
