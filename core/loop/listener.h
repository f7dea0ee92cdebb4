/* SPDX-License-Identifier: Apache-2.0
 *
 * A listener: the accept loop every listening socket of ddmon shares (the
 * relay's debugger ports, core/relay/relay_ports.c; the control socket,
 * server/control.c; the web listener, web/http_server.c). It owns the watch
 * on the listening fd (watch.h) and, from its first accept error on, a
 * timer (timer.h) with the backoff, not the fd itself. Small, since every
 * VM's debugger port has one: 40 bytes (the callbacks in one static
 * DdmListenerOps, the timer made only when needed; doc/memory.md).
 * When the fd is readable it takes up to DDM_ACCEPT_BATCH connections
 * through ddm_accept() (accept.h) and hands each to the owner's accept
 * callback, with the peer's address; a shed connection (out of
 * descriptors) or an accept error goes to the owner's trouble callback,
 * which logs (core/session/ratelog.h's ddm_ratelog_accept; this layer may
 * not include core/session).
 *
 * Why the pause: on DDM_ACCEPT_ERROR (ENOBUFS, ENOMEM under memory
 * pressure; EMFILE with no reserve descriptor) the pending connection
 * stays queued and the listener stays readable, so the level-triggered
 * loop would call the callback again at once: 100% CPU. So after an error
 * the watch goes dormant for a backoff and a timer resumes it and tries at
 * once. The first pause is DDM_LISTENER_PAUSE_MIN_MS; while each try after
 * a pause fails again it doubles, DDM_LISTENER_PAUSE_MAX_MS at most; a try
 * that accepts a connection or finds none pending (EAGAIN) ends the run,
 * so the next error, however much later, pauses the minimum again. A shed
 * needs no pause: it took the connection off the queue.
 *
 * Ownership: ddm_listener_new() returns a listener the caller owns and
 * frees with ddm_listener_free() before it closes the fd (the watch goes
 * first, watch.h). The accept callback owns the fd it is given (it must
 * close it). Either callback may free the listener; the batch then ends.
 * Main thread only (the default main context).
 */
#ifndef DDM_LOOP_LISTENER_H
#define DDM_LOOP_LISTENER_H

#include <glib.h>
#include <sys/socket.h>

#include "core/loop/accept.h"

/** The first pause after an accept error, in ms. */
#define DDM_LISTENER_PAUSE_MIN_MS 100u
/** The longest pause, in ms (errors that go on). */
#define DDM_LISTENER_PAUSE_MAX_MS 2000u

typedef struct DdmListener DdmListener;

/** A new connection @fd (non-blocking, close-on-exec; transfer full: the
 *  callee closes it) from @addr (@addrlen bytes; 0 when the kernel gave
 *  none). */
typedef void (*DdmListenerAcceptFn)(int fd, const struct sockaddr *addr, socklen_t addrlen,
                                    gpointer ud);
/** ddm_accept() said DDM_ACCEPT_SHED or DDM_ACCEPT_ERROR (@r), with @err
 *  (its errno); after an error the listener pauses for @paused_ms (0 after
 *  a shed). For the log. */
typedef void (*DdmListenerTroubleFn)(DdmAcceptResult r, int err, guint paused_ms, gpointer ud);

/** The owner's two callbacks, in one static const struct (borrowed: it
 *  must outlive its listeners). */
typedef struct DdmListenerOps {
    DdmListenerAcceptFn on_accept;
    DdmListenerTroubleFn on_trouble;
} DdmListenerOps;

/** Watch @fd (listening, non-blocking; borrowed) and accept on it, calling
 *  @ops (borrowed; both callbacks are required) with @ud. Also makes accept.h's reserve descriptor if
 *  there is none (ddm_accept_reserve()), now while descriptors are still
 *  free, so the owner need not. (transfer full) */
DdmListener *ddm_listener_new(int fd, const DdmListenerOps *ops, gpointer ud);

/** Stop watching (NULL is a no-op); the fd stays open, the caller's. Safe
 *  from the listener's own callbacks. */
void ddm_listener_free(DdmListener *l);

/** TRUE while paused after an accept error (for tests). */
gboolean ddm_listener_paused(const DdmListener *l);

#endif /* DDM_LOOP_LISTENER_H */
