/* SPDX-License-Identifier: Apache-2.0
 *
 * The shared accept loop (listener.h): a listener's watch, its batch of
 * accepts, and its pause after an accept error (the timer that resumes the
 * watch and tries at once, and the backoff that doubles while each try
 * fails again), the pause's state made at the first error.
 */
#include "core/loop/listener.h"

#include <errno.h>

#include "core/loop/timer.h"
#include "core/loop/watch.h"

/* Made at the listener's first accept error, freed with the listener: most
 * listeners (a VM's debugger port each) never see one. */
typedef struct Pause {
    DdmTimer resume;       /* armed while paused */
    guint next_ms;         /* the pause the next error gets */
    int fd;                /* the listening fd, for the try when the pause ends */
} Pause;

struct DdmListener {
    DdmWatch *watch;       /* on the listening fd; dormant while paused */
    Pause *pause;          /* NULL until the first accept error */
    const DdmListenerOps *ops; /* borrowed (static) */
    gpointer ud;
    gboolean *freed;       /* set while a batch runs: ddm_listener_free marks it */
};

static gboolean accept_batch(DdmListener *l, int fd);

/* The pause is over: watch again, and try now (the wake-up after the
 * pause), so that a queue found empty ends the errors' backoff even when
 * nothing connects for hours (no wake-up would come to find it). */
static void on_resume(DdmTimer *t, gpointer ud)
{
    (void)t;
    DdmListener *l = ud;
    ddm_watch_set_cond(l->watch, G_IO_IN);
    accept_batch(l, l->pause->fd);
}

/* After an error: the watch dormant (no spin on a listener that stays
 * readable) until the timer; the next error waits twice as long. */
static guint pause_watch(DdmListener *l, int fd)
{
    Pause *p = l->pause;
    if (p == NULL) {
        p = l->pause = g_new0(Pause, 1);
        p->next_ms = DDM_LISTENER_PAUSE_MIN_MS;
        p->fd = fd;
        ddm_timer_init(&p->resume, on_resume, l);
    }
    guint ms = p->next_ms;
    p->next_ms = MIN(ms * 2, DDM_LISTENER_PAUSE_MAX_MS);
    ddm_watch_set_cond(l->watch, 0);
    ddm_timer_arm(&p->resume, ms);
    return ms;
}

/* Up to DDM_ACCEPT_BATCH connections, from the watch or the end of a
 * pause. TRUE when a callback freed the listener. */
static gboolean accept_batch(DdmListener *l, int fd)
{
    gboolean freed = FALSE;
    l->freed = &freed;
    /* At most DDM_ACCEPT_BATCH a call: a connect flood leaves the loop's
     * other watches their turn (the rest wait, still readable). */
    for (int i = 0; i < DDM_ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int c;
        DdmAcceptResult r = ddm_accept(fd, (struct sockaddr *)&ss, &sl, &c);
        if (r != DDM_ACCEPT_ERROR && r != DDM_ACCEPT_SHED && l->pause != NULL)
            l->pause->next_ms = DDM_LISTENER_PAUSE_MIN_MS; /* accepted or none pending:
                                                            * the errors are over */
        if (r == DDM_ACCEPT_AGAIN)
            break;
        if (r == DDM_ACCEPT_OK) {
            if (sl > sizeof ss)
                sl = 0; /* truncated: no address rather than half of one */
            l->ops->on_accept(c, (struct sockaddr *)&ss, sl, l->ud);
            if (freed)
                return TRUE;
            continue;
        }
        int err = errno;
        guint ms = r == DDM_ACCEPT_ERROR ? pause_watch(l, fd) : 0;
        l->ops->on_trouble(r, err, ms, l->ud);
        if (freed)
            return TRUE;
        break; /* shed: the next wake-up; error: after the pause */
    }
    l->freed = NULL;
    return FALSE;
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer ud)
{
    (void)cond;
    /* freed: the watch went with it */
    return accept_batch(ud, fd) ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

DdmListener *ddm_listener_new(int fd, const DdmListenerOps *ops, gpointer ud)
{
    g_return_val_if_fail(fd >= 0 && ops != NULL && ops->on_accept != NULL &&
                             ops->on_trouble != NULL,
                         NULL);
    ddm_accept_reserve(); /* while descriptors are free (accept.h) */
    DdmListener *l = g_new0(DdmListener, 1);
    l->ops = ops;
    l->ud = ud;
    l->watch = ddm_watch_add(fd, G_IO_IN, on_readable, l);
    return l;
}

void ddm_listener_free(DdmListener *l)
{
    if (l == NULL)
        return;
    if (l->freed)
        *l->freed = TRUE;
    if (l->pause != NULL) {
        ddm_timer_cancel(&l->pause->resume);
        g_free(l->pause);
    }
    ddm_watch_remove(l->watch);
    g_free(l);
}

gboolean ddm_listener_paused(const DdmListener *l)
{
    return l->pause != NULL && ddm_timer_armed(&l->pause->resume);
}
