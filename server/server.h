/* SPDX-License-Identifier: Apache-2.0
 *
 * The server process: where its files live (socket, lock file with the
 * server's pid, log), the checks on their directory, the single-instance
 * lock, the listening socket, signals, and the run loop that ties the
 * monitor and the control server together.
 *
 * Invariants: one server per socket path (flock on PATH.lock, held for the
 * server's lifetime); the socket's directory is a real directory owned by
 * us with no group/other access (created 0700 when missing); the socket is
 * mode 0600; a socket left behind by a dead server is replaced. On SIGTERM,
 * SIGINT, SIGHUP or a client's kill the server stops cleanly: control
 * closed, socket removed, VMs closed, plugins unloaded, lock released.
 * Non-goals: forking itself into the background (the client spawns a
 * detached `ddmon server --foreground`, see client.c).
 */
#ifndef DDM_SERVER_H
#define DDM_SERVER_H

#include <glib.h>

#include "core/config/config.h"

/** The control socket of @config: its socket_path or the default. (transfer full) */
char *ddm_server_socket_path(const DdmConfig *config);
/** "DIR/ddmon.log" for "DIR/ddmon.sock"; PATH.log otherwise. (transfer full) */
char *ddm_server_log_path(const char *socket_path);
/** "DIR/ddmon.downloads" for "DIR/ddmon.sock" (PATH.downloads otherwise):
 *  where commands run from the web dashboard write. (transfer full) */
char *ddm_server_downloads_path(const char *socket_path);
/** PATH.lock. (transfer full) */
char *ddm_server_lock_path(const char *socket_path);

/** Check that @dir is a private directory of ours (not a symlink, owned by
 *  the effective uid, no group/other permission bits). With @create a
 *  missing @dir (last component only) is created with mode 0700. FALSE
 *  with a user-facing @error otherwise; G_IO_ERROR_NOT_FOUND if it is
 *  missing and !@create. */
gboolean ddm_server_check_dir(const char *dir, gboolean create, GError **error);

/** The lock file (PATH.lock) holds the server's pid, one line, and once
 *  the server stops (its loop ended: it accepts no new client and waits,
 *  bounded, for the VMs' last answers) this second line. */
#define DDM_SERVER_LOCK_STOPPING "stopping"

/** The pid written in the lock file by the server holding the lock, or 0
 *  when no server holds it. */
int ddm_server_running_pid(const char *socket_path);
/** As ddm_server_running_pid; *@stopping (may be NULL) says whether that
 *  server is stopping (DDM_SERVER_LOCK_STOPPING). */
int ddm_server_lock_holder(const char *socket_path, gboolean *stopping);

/** Take @socket_path's lock (PATH.lock, LOCK_EX) and write our pid in it:
 *  the fd to keep open while serving, or -1 with @error (G_IO_ERROR_EXISTS:
 *  another server holds it). A client's probe of the lock (a brief
 *  LOCK_SH: ddm_server_lock_holder) is no server: tried again a few times
 *  before giving up, calling @between (may be NULL: a pause of 1.5 ms; for
 *  tests) before each retry. */
int ddm_server_take_lock(const char *socket_path, void (*between)(void *), void *between_data,
                         GError **error);

/** Create, bind (mode 0600) and listen on a non-blocking UNIX socket at
 *  @path, replacing a stale file. -1 with @error on failure. */
int ddm_server_listen(const char *path, GError **error);

/** Run a server in this process until it is stopped. Takes over @config.
 *  Returns the process exit status (0, or 1 with a message on stderr). */
int ddm_server_run(DdmConfig *config);

#endif /* DDM_SERVER_H */
