/* SPDX-License-Identifier: Apache-2.0
 *
 * Accepting on a listening socket, and shedding a connection when the
 * process is out of descriptors. Every accept loop of ddmon (the relay's
 * debugger ports, core/relay/relay_ports.c; the control socket,
 * server/control.c; the web listener, web/http_server.c) takes its
 * connections through ddm_accept(), by way of the accept loop they share
 * (listener.h, which also pauses after DDM_ACCEPT_ERROR).
 *
 * Why: with EMFILE or ENFILE the pending connection stays queued, the
 * listener stays readable, and the level-triggered loop (watch.h) would
 * call the accept callback again at once: 100% CPU until a descriptor
 * frees up. So this file keeps one reserve descriptor (/dev/null, opened
 * O_CLOEXEC: no exec'd child inherits it); on EMFILE/ENFILE it closes the
 * reserve, accepts the pending connection, closes that at once (the peer
 * sees the connection closed rather than waiting) and opens the reserve
 * again (libuv and libev do the same).
 *
 * Ownership: the reserve descriptor is this file's alone (static, one per
 * process, never handed out); nothing else may close it. It is made by
 * ddm_accept_reserve() (ddm_listener_new() calls it, listener.h, while
 * descriptors are still free) or else by the first ddm_accept(). If it cannot be made (already out of descriptors),
 * ddm_accept() reports DDM_ACCEPT_ERROR with EMFILE and tries again next
 * time. Logging is the caller's (rate-limited: core/session/ratelog.h,
 * which this layer may not include). Main thread only.
 */
#ifndef DDM_LOOP_ACCEPT_H
#define DDM_LOOP_ACCEPT_H

#include <glib.h>
#include <sys/socket.h>

/** Connections one accept callback takes per call at most: the loop's
 *  other watches get their turn under a connect flood. */
#define DDM_ACCEPT_BATCH 16

typedef enum {
    DDM_ACCEPT_OK,    /**< *fd is a new connection (non-blocking, close-on-exec) */
    DDM_ACCEPT_AGAIN, /**< nothing pending (EAGAIN): end this callback's loop */
    DDM_ACCEPT_SHED,  /**< out of descriptors: one pending connection was
                       *   accepted and closed; end this callback's loop */
    DDM_ACCEPT_ERROR, /**< another error (errno set; EMFILE/ENFILE when
                       *   there was no reserve to shed with): end the loop */
} DdmAcceptResult;

/** Accept one connection on @listen_fd (accept4, SOCK_NONBLOCK |
 *  SOCK_CLOEXEC). @addr/@addrlen as accept4's (may be NULL). On
 *  DDM_ACCEPT_OK *@fd is the connection, else -1. Connections the peer
 *  aborted while queued (ECONNABORTED, EPROTO), connections with a network
 *  error already pending (ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET,
 *  EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH: accept(2) says to retry them
 *  like EAGAIN) and EINTR are passed over (each takes one off the queue),
 *  none of them a DDM_ACCEPT_ERROR, which pauses a listener (listener.h);
 *  but after 64 of them in one call (EOPNOTSUPP is also a socket that is
 *  not SOCK_STREAM, which would give it forever) the last is one. */
DdmAcceptResult ddm_accept(int listen_fd, struct sockaddr *addr, socklen_t *addrlen, int *fd);

/** Make the reserve descriptor now if there is none; TRUE when there is
 *  one afterwards. Idempotent and cheap. */
gboolean ddm_accept_reserve(void);

/** The reserve descriptor, -1 when there is none (for tests). */
int ddm_accept_reserve_fd(void);

/** Connections shed since the start (for tests and the log). */
guint64 ddm_accept_n_shed(void);

#endif /* DDM_LOOP_ACCEPT_H */
