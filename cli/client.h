/* SPDX-License-Identifier: Apache-2.0
 *
 * The client side of the control socket, and starting a server the adb
 * way. A client is a short-lived process: it may block on its own socket
 * (with timeouts), never on anything of the server's.
 *
 * Starting a server: spawn `/proc/self/exe server --foreground OPTIONS
 * --socket=PATH` with an argv (no shell), in a new session (setsid), stdin
 * from /dev/null and stdout/stderr appended to the log next to the socket
 * (ddmon.log, rotated to ddmon.log.old past 1 MiB), then wait (bounded, DDM_CLIENT_START_TIMEOUT_MS) until the
 * socket answers. A server that exits early is reported with the tail of
 * its log. A server still stopping (its lock file says so, server.h) is
 * waited for first (bounded, DDM_CLIENT_STOPPING_WAIT_MS): it holds the
 * lock a new server needs.
 */
#ifndef DDM_CLIENT_H
#define DDM_CLIENT_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include <ddmon/plugin.h> /* DDM_STOPPING_WAIT_MS */

#include "core/wire/ctlproto.h"

#define DDM_CLIENT_START_TIMEOUT_MS 5000
/* How long a client waits for a stopping server to exit: its wait for the
 * VMs' answers (DDM_STOPPING_WAIT_MS, after DDM_STOPPING_FLUSH_MS) and 3 s
 * more for the rest of its stop, in which the web dashboard's flush of
 * its last answers (at most 500 ms: DDM_WEB_API_STOP_FLUSH_MS, web/api.h)
 * fits. */
#define DDM_CLIENT_STOPPING_WAIT_MS (DDM_STOPPING_FLUSH_MS + DDM_STOPPING_WAIT_MS + 3000)
#define DDM_CLIENT_LOG_ROTATE (1024 * 1024) /* ddmon.log -> ddmon.log.old above this */

typedef struct DdmClient DdmClient;

/** Connect to a running server. On failure @error is
 *  G_IO_ERROR_NOT_FOUND / G_IO_ERROR_CONNECTION_REFUSED when no server
 *  runs there, something else when the socket's directory is unsafe.
 *  (transfer full) */
DdmClient *ddm_client_connect(const char *socket_path, GError **error);
/** ddm_client_connect, and the first exchange (the version op) made: a
 *  connection reset before that answer while the lock says the server
 *  stops, or no server holds the lock any more, fails as if refused
 *  (G_IO_ERROR_CONNECTION_REFUSED); while a live server that is not
 *  stopping holds it (one that replaced the server we reached), it is
 *  made once more (bounded), and lost again it is an error. For commands
 *  that only look for a running server, so that they never take a
 *  stopping one's dead connection for a server. (transfer full) */
DdmClient *ddm_client_connect_answered(const char *socket_path, GError **error);
/** Whether @error, from ddm_client_connect or ddm_client_connect_answered,
 *  means no server runs there (no socket, refused, or one that stopped
 *  before it answered), rather than one that runs but would not serve this
 *  client (too many clients, closed the connection twice, an unsafe
 *  directory): only then may a command start one or work without it. */
gboolean ddm_client_error_no_server(const GError *error);
void ddm_client_free(DdmClient *c);
int ddm_client_fd(const DdmClient *c);

/* adb's line before a server starts. */
#define DDM_CLIENT_STARTING "ddmon server not running; starting it now"

/** Start a background server on @socket_path with @server_args (options
 *  passed through, may be NULL) and wait until it answers. Prints
 *  "* @announce *" (DDM_CLIENT_STARTING, or what else is being done),
 *  then "* ddmon server started successfully *", to stderr; nothing when
 *  @announce is NULL. */
gboolean ddm_client_start_server(const char *socket_path, char **server_args, const char *announce,
                                 GError **error);
/** A server that holds @socket_path's lock and is stopping (it accepts no
 *  client, and a server started now could not take the lock): wait until
 *  it has exited, at most DDM_CLIENT_STOPPING_WAIT_MS; with @say, one line
 *  on stderr first. TRUE at once when none is stopping; FALSE with a
 *  user-facing @error (G_IO_ERROR_BUSY) when it still is after that. */
gboolean ddm_client_wait_stopping_server(const char *socket_path, gboolean say, GError **error);
/** Stop the server on @socket_path ({"op":"kill"}) and wait (bounded) until
 *  it let go of its socket and lock. TRUE with *@was_running FALSE when no
 *  server runs; one already stopping is waited for (*@was_running TRUE),
 *  also when it reset our connection before the kill's answer (in its
 *  backlog as it stopped); a reset while a live server that is not
 *  stopping holds the lock is tried once more. */
gboolean ddm_client_kill_server(const char *socket_path, gboolean *was_running, GError **error);
/** Connect; when no server runs and @autostart, start one first. A server
 *  of another ddmon version is replaced (with @autostart), as adb does. A
 *  running server started with other options than the @server_args given
 *  (ddm_client_options_differ) is used, with one line on stderr naming them
 *  and the `ddmon server --replace` command that applies them. The first
 *  exchange is made as ddm_client_connect_answered makes it, with or
 *  without @autostart: a connection reset before its answer while the
 *  lock says the server stops (or no server holds it any more) counts as
 *  no server (waited for and started with @autostart; "is stopping" or
 *  "no ddmon server running" without), one reset while a live server
 *  holds the lock is made once more.
 *  *@started (may be NULL) says whether this call started the server.
 *  Errors are user-facing. (transfer full) */
DdmClient *ddm_client_connect_or_start(const char *socket_path, char **server_args,
                                       gboolean autostart, gboolean *started, GError **error);

/** The options of @mine ("--name=value", NULL-terminated) that @theirs
 *  (a running server's) gives other values, as "--a, --b"; NULL when none
 *  differs. Options @mine does not name, and --verbose, are not compared; a
 *  repeatable option compares as its list of values. (transfer full) */
char *ddm_client_options_differ(char **mine, char **theirs);

gboolean ddm_client_send(DdmClient *c, const DdmCtlRequest *req, GError **error);
/** The next message (a JSON object), waiting at most @timeout_ms (-1:
 *  forever). NULL with @error on timeout (G_IO_ERROR_TIMED_OUT), end of
 *  stream (G_IO_ERROR_CLOSED) or garbage. (transfer full) */
/** Progress lines ({"progress":{...}}) that come before a command's answer
 *  in ddm_client_call go to @fn (NULL: skipped). */
typedef void (*DdmClientProgressFn)(guint64 done, guint64 total, const char *unit, gpointer ud);
void ddm_client_on_progress(DdmClient *c, DdmClientProgressFn fn, gpointer ud);
JsonNode *ddm_client_receive(DdmClient *c, int timeout_ms, GError **error);
/** As ddm_client_receive, the line as it came, unparsed, without its
 *  "\n" (its length in @len). (transfer full) */
char *ddm_client_receive_line(DdmClient *c, int timeout_ms, gsize *len, GError **error);
/** For event loops: read what the socket has now (never blocks). FALSE at
 *  end of stream or on error. Then take messages with ddm_client_next. */
gboolean ddm_client_read_some(DdmClient *c, GError **error);
/** A buffered message, or NULL (with @error set only on garbage). (transfer full) */
JsonNode *ddm_client_next(DdmClient *c, GError **error);
/** Send @req and wait for its response. (transfer full) */
JsonNode *ddm_client_call(DdmClient *c, const DdmCtlRequest *req, int timeout_ms,
                          GError **error);

#endif /* DDM_CLIENT_H */
