/* SPDX-License-Identifier: Apache-2.0
 *
 * Accepting, and shedding when out of descriptors (see accept.h): the
 * reserve descriptor and the count of shed connections, both static (one
 * per process, main thread only).
 */
#define _GNU_SOURCE 1 /* accept4 */

#include "core/loop/accept.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int reserve_fd = -1; /* /dev/null, O_CLOEXEC; owned here alone */
static guint64 n_shed;

gboolean ddm_accept_reserve(void)
{
    if (reserve_fd < 0) {
        int saved = errno;
        reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        errno = saved;
    }
    return reserve_fd >= 0;
}

int ddm_accept_reserve_fd(void)
{
    return reserve_fd;
}

guint64 ddm_accept_n_shed(void)
{
    return n_shed;
}

/* Out of descriptors with a connection pending: free the reserve, take the
 * connection with it and close it, take the reserve back. */
static DdmAcceptResult shed(int listen_fd, int err)
{
    if (reserve_fd < 0) {
        errno = err;
        return DDM_ACCEPT_ERROR;
    }
    close(reserve_fd);
    reserve_fd = -1;
    int c = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int accept_errno = errno;
    if (c >= 0)
        close(c);
    ddm_accept_reserve(); /* the number just freed (single-threaded) */
    if (c < 0) {
        if (accept_errno == EAGAIN || accept_errno == EWOULDBLOCK)
            return DDM_ACCEPT_AGAIN; /* the peer went away meanwhile */
        errno = accept_errno;
        return DDM_ACCEPT_ERROR;
    }
    n_shed++;
    errno = err;
    return DDM_ACCEPT_SHED;
}

/* Errors passed over in one call at most: each should have taken a
 * connection off the queue, but EOPNOTSUPP is also what accept(2) says
 * for a socket that is not SOCK_STREAM, which would give it forever. */
#define PASSED_OVER_MAX 64

DdmAcceptResult ddm_accept(int listen_fd, struct sockaddr *addr, socklen_t *addrlen, int *fd)
{
    *fd = -1;
    ddm_accept_reserve();
    socklen_t len0 = addrlen ? *addrlen : 0;
    for (unsigned passed = 0;; passed++) {
        if (addrlen)
            *addrlen = len0;
        int c = accept4(listen_fd, addr, addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c >= 0) {
            *fd = c;
            return DDM_ACCEPT_OK;
        }
        switch (errno) {
        case EAGAIN:
#if EWOULDBLOCK != EAGAIN
        case EWOULDBLOCK:
#endif
            return DDM_ACCEPT_AGAIN;
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
        /* accept(2), Linux: network errors already pending on the new
         * connection come back from accept and are to be retried like
         * EAGAIN; that connection is gone. (Not a reason to pause.) */
#ifdef ENETDOWN
        case ENETDOWN:
#endif
#ifdef ENOPROTOOPT
        case ENOPROTOOPT:
#endif
#ifdef EHOSTDOWN
        case EHOSTDOWN:
#endif
#ifdef ENONET
        case ENONET:
#endif
#ifdef EHOSTUNREACH
        case EHOSTUNREACH:
#endif
#ifdef EOPNOTSUPP
        case EOPNOTSUPP:
#endif
#ifdef ENETUNREACH
        case ENETUNREACH:
#endif
            if (passed < PASSED_OVER_MAX)
                continue; /* that one is gone; the next, if any */
            return DDM_ACCEPT_ERROR; /* errno kept: the same error, again and again */
        case EMFILE:
        case ENFILE:
            return shed(listen_fd, errno);
        default:
            return DDM_ACCEPT_ERROR;
        }
    }
}
