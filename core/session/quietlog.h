/* SPDX-License-Identifier: Apache-2.0
 *
 * Debug and info lines that cost nothing when nobody prints them. glib's
 * g_logv formats a message before the writer (server/log.c) drops it, and
 * debug and info lines are dropped unless G_MESSAGES_DEBUG names their
 * domain (ddmon -v): ~4,300 instructions a line, and a VM that starts logs
 * about a dozen (19% of the server's instructions starting 1,000 VMs,
 * callgrind; issue 16). DDM_DEBUG and DDM_INFO are g_debug and g_info
 * asked first whether the default writer's rule would drop the line
 * (g_log_writer_default_would_drop, the question server/log.c's writer
 * asks too); the arguments are not evaluated when it would. For the lines
 * every VM logs on its way up; elsewhere g_debug is fine.
 */
#ifndef DDM_QUIETLOG_H
#define DDM_QUIETLOG_H

#include <glib.h>

#define DDM_LOG_IF_SHOWN(level, ...)                                                   \
    do {                                                                               \
        if (G_UNLIKELY(!g_log_writer_default_would_drop((level), G_LOG_DOMAIN)))       \
            g_log(G_LOG_DOMAIN, (level), __VA_ARGS__);                                 \
    } while (0)
#define DDM_DEBUG(...) DDM_LOG_IF_SHOWN(G_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define DDM_INFO(...) DDM_LOG_IF_SHOWN(G_LOG_LEVEL_INFO, __VA_ARGS__)

#endif /* DDM_QUIETLOG_H */
