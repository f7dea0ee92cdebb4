/* SPDX-License-Identifier: Apache-2.0
 *
 * epoll-backed GSource (see reactor.h).
 */
#include "reactor.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#define BATCH 256

struct SimIoHandle {
    int fd;
    unsigned events;
    SimIoFn fn;
    void *ud;
    gboolean dead;
};

typedef struct ReactorSource {
    GSource source;
    SimReactor *reactor;
} ReactorSource;

struct SimReactor {
    int epfd;
    GSource *source;
    GPtrArray *graveyard; /* handles removed, freed after the batch */
    gboolean dispatching;
};

static uint32_t to_epoll(unsigned ev)
{
    return (ev & SIM_IO_IN ? EPOLLIN : 0) | (ev & SIM_IO_OUT ? EPOLLOUT : 0);
}

static gboolean reactor_dispatch(GSource *source, GSourceFunc cb, gpointer data)
{
    SimReactor *r = ((ReactorSource *)source)->reactor;
    struct epoll_event evs[BATCH];
    int n, i;

    n = epoll_wait(r->epfd, evs, BATCH, 0);
    r->dispatching = TRUE;
    for (i = 0; i < n; i++) {
        SimIoHandle *h = evs[i].data.ptr;
        unsigned ev = 0;
        if (h->dead)
            continue;
        if (evs[i].events & EPOLLIN)
            ev |= SIM_IO_IN;
        if (evs[i].events & EPOLLOUT)
            ev |= SIM_IO_OUT;
        if (evs[i].events & (EPOLLERR | EPOLLHUP))
            ev |= SIM_IO_ERR | SIM_IO_IN; /* let the reader see EOF or the error */
        h->fn(h->ud, ev);
    }
    r->dispatching = FALSE;
    g_ptr_array_set_size(r->graveyard, 0);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs reactor_funcs = {
    NULL, NULL, reactor_dispatch, NULL, NULL, NULL,
};

SimReactor *sim_reactor_new(GMainContext *ctx)
{
    SimReactor *r = g_new0(SimReactor, 1);

    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (r->epfd < 0) {
        g_free(r);
        return NULL;
    }
    r->graveyard = g_ptr_array_new_with_free_func(g_free);
    r->source = g_source_new(&reactor_funcs, sizeof(ReactorSource));
    ((ReactorSource *)r->source)->reactor = r;
    g_source_set_name(r->source, "simvm-reactor");
    g_source_add_unix_fd(r->source, r->epfd, G_IO_IN);
    g_source_attach(r->source, ctx);
    return r;
}

void sim_reactor_free(SimReactor *r)
{
    if (!r)
        return;
    g_source_destroy(r->source);
    g_source_unref(r->source);
    close(r->epfd);
    g_ptr_array_free(r->graveyard, TRUE);
    g_free(r);
}

SimIoHandle *sim_reactor_add(SimReactor *r, int fd, unsigned events, SimIoFn fn, void *ud)
{
    SimIoHandle *h = g_new0(SimIoHandle, 1);
    struct epoll_event ev = { 0 };

    h->fd = fd;
    h->events = events;
    h->fn = fn;
    h->ud = ud;
    ev.events = to_epoll(events);
    ev.data.ptr = h;
    if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int saved = errno;
        g_free(h);
        errno = saved;
        return NULL;
    }
    return h;
}

void sim_reactor_modify(SimReactor *r, SimIoHandle *h, unsigned events)
{
    struct epoll_event ev = { 0 };

    if (h->dead || h->events == events)
        return;
    h->events = events;
    ev.events = to_epoll(events);
    ev.data.ptr = h;
    if (epoll_ctl(r->epfd, EPOLL_CTL_MOD, h->fd, &ev) < 0)
        g_debug("epoll_ctl(MOD, fd %d): %s", h->fd, g_strerror(errno));
}

void sim_reactor_remove(SimReactor *r, SimIoHandle *h)
{
    if (!h || h->dead)
        return;
    /* the fd may already be closed by the caller; then the kernel dropped it */
    (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, h->fd, NULL);
    h->dead = TRUE;
    if (r->dispatching)
        g_ptr_array_add(r->graveyard, h);
    else
        g_free(h);
}
