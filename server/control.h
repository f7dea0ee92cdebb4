/* SPDX-License-Identifier: Apache-2.0
 *
 * The server side of the control protocol (wire format: ctlproto.h):
 * accepts clients on the listening UNIX socket, reads request lines,
 * answers them from the monitor (views, VMs, plugin commands), and streams
 * view changes to watching clients. Non-blocking throughout: every client
 * fd is watched by the main loop; a request line is capped
 * (DDM_CTL_MAX_REQUEST), so is each client's output queue (a client that
 * does not read is dropped with a log line), and so is the number of
 * clients. Only clients of our own uid are served (SO_PEERCRED).
 * Requests of one client are answered in order: while a plugin command is
 * in flight, that client's next requests wait.
 * Non-goals: authentication beyond the uid check, TCP.
 */
#ifndef DDM_CONTROL_H
#define DDM_CONTROL_H

#include <glib.h>

#include "core/daemon/daemon.h"

#define DDM_CTL_MAX_QUEUE (64 * 1024 * 1024) /* bytes queued to one client */
#define DDM_CTL_MAX_CLIENTS 64

typedef struct DdmControl DdmControl;

/** Called (from an idle, once) when a client sent {"op":"kill"}. */
typedef void (*DdmControlStopFn)(gpointer ud);

/** Serve @listen_fd (a bound, listening, non-blocking UNIX stream socket;
 *  ownership passes to the control) for @daemon (borrowed; must outlive the
 *  control). (transfer full) */
DdmControl *ddm_control_new(DdmDaemon *daemon, int listen_fd, DdmControlStopFn stop, gpointer ud);
/** Accept no new client (the listening socket closes); the clients
 *  connected go on being served. For a stopping server whose commands
 *  still end (ddm_daemon_stop_vms). Idempotent. */
void ddm_control_stop_accepting(DdmControl *ctl);
/** Flush what can be flushed without blocking, close every client and the
 *  listening socket, drop watches and the views listener. */
void ddm_control_free(DdmControl *ctl);
/** The web dashboard's URL (with its token), reported by the version op
 *  as "web_url" so `ddmon web-url` can show it again. @url is copied. */
void ddm_control_set_web_url(DdmControl *ctl, const char *url);
/** Clients connected now. */
guint ddm_control_n_clients(const DdmControl *ctl);
/** How many delayed answers (a first look, the VM list after the start, a
 *  watching snapshot's "settled") went out because their cap ran out, not
 *  because what they waited for was there (control_ops.c). */
guint64 ddm_control_n_delays_capped(const DdmControl *ctl);

#endif /* DDM_CONTROL_H */
