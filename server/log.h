/* SPDX-License-Identifier: Apache-2.0
 *
 * The server's log lines: one readable line per event, in the server's
 * stderr (the log file PATH.log of a background server, see
 * ddm_server_log_path):
 *
 *   2026-11-25T12:00:01.123 warning loader: refused /x/y.so: ...
 *
 * local time (ISO 8601, milliseconds), level (error, critical, warning,
 * message, info, debug), component (the glib log domain without its
 * "ddmon-" prefix, "ddmon" itself being "core"), message.
 *
 * Invariants: a line holds one event (newlines in a message become
 * spaces) and is written with one write(2), so lines of concurrent
 * threads do not interleave; debug and info are dropped unless
 * G_MESSAGES_DEBUG enables them, as glib's default writer does.
 * Non-goals: rotation (the client rotates the file when it starts a
 * server), syslog or the journal.
 */
#ifndef DDM_SERVER_LOG_H
#define DDM_SERVER_LOG_H

#include <glib.h>

/** The lower-case word of the most severe level in @level ("warning");
 *  "message" for a level without a glib level bit. */
const char *ddm_log_level_word(GLogLevelFlags level);

/** The log line of one event, with its trailing newline:
 *  "TIME LEVEL COMPONENT [VM]: MESSAGE" — @time (printed in its own time
 *  zone), @level, the component of @domain (NULL: "core"), the key of the
 *  VM the line is about (@vm, NULL: no field; the writer passes the log
 *  context's, core/session/logctx.h) and @message (NULL: empty). Pure.
 *  (transfer full) */
char *ddm_log_format_line(GDateTime *time, GLogLevelFlags level, const char *domain,
                          const char *vm, const char *message);

/** The message of @line when it is a warning line in this format, NULL
 *  otherwise. (transfer none: points into @line) */
const char *ddm_log_line_warning_message(const char *line);

/** Send this process's glib log (g_warning, g_message, ...) to stderr in
 *  this format. Once per process; later calls do nothing. */
void ddm_log_install(void);

#endif /* DDM_SERVER_LOG_H */
