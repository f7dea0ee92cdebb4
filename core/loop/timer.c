/* SPDX-License-Identifier: Apache-2.0
 *
 * The timer heap (see timer.h): a binary min-heap of DdmTimer pointers
 * ordered by (deadline, arming sequence), each timer holding its own index,
 * and the one GSource that fires it. Owns the heap array, the source and
 * the kept earliest deadline (timer.h); the timers belong to their owners.
 */
#include "core/loop/timer.h"

typedef struct TimerHeap {
    DdmTimer **v;      /* v[0] is the earliest */
    guint len, cap;
    guint64 next_seq;
    GSource *source;   /* prepare/check read v[0]->due_us */
    gint64 dispatch_now; /* now of the running dispatch, 0 outside one */
    gint64 last_now;     /* now of the latest dispatch to start (heap_now) */
} TimerHeap;

static TimerHeap heap;

/* heap.v[0]->due_us while heap.len, else G_MAXINT64 (timer.h): a place at
 * 0 is a new top or the top's new deadline */
gint64 ddm_timer_next_due_us_ = G_MAXINT64;

static inline gboolean earlier(const DdmTimer *a, const DdmTimer *b)
{
    return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

static inline void place(DdmTimer *t, guint i)
{
    heap.v[i] = t;
    t->index = i + 1;
    if (i == 0)
        ddm_timer_next_due_us_ = t->due_us;
}

static void sift_up(guint i)
{
    DdmTimer *t = heap.v[i];
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!earlier(t, heap.v[parent]))
            break;
        place(heap.v[parent], i);
        i = parent;
    }
    place(t, i);
}

static void sift_down(guint i)
{
    DdmTimer *t = heap.v[i];
    for (;;) {
        guint c = 2 * i + 1;
        if (c >= heap.len)
            break;
        if (c + 1 < heap.len && earlier(heap.v[c + 1], heap.v[c]))
            c++;
        if (!earlier(heap.v[c], t))
            break;
        place(heap.v[c], i);
        i = c;
    }
    place(t, i);
}

/* Take the entry at @i out of the heap. */
static void heap_remove_at(guint i)
{
    DdmTimer *gone = heap.v[i];
    gone->index = 0;
    heap.len--;
    if (i == heap.len) {
        if (i == 0)
            ddm_timer_next_due_us_ = G_MAXINT64;
        return;
    }
    place(heap.v[heap.len], i);
    if (i > 0 && earlier(heap.v[i], heap.v[(i - 1) / 2]))
        sift_up(i);
    else
        sift_down(i);
}

/* The poll timeout comes from the heap top at every iteration (prepare and
 * check), not from g_source_set_ready_time(): that wakes the context (an
 * eventfd write, and a read, and one more iteration) at every change of the
 * earliest deadline, which is most arming. Arming happens on the main thread,
 * so the next prepare always sees it. */
/* The heap's now from a clock reading @t: never at or before the latest
 * dispatch's now. A timer re-armed during a dispatch at or before its now
 * waits at that now + 1 us (ddm_timer_arm_at), "the next iteration"; an
 * iteration that starts within the same microsecond reads the same clock,
 * and would otherwise find it not due and, in a blocking iteration, sleep
 * a whole millisecond for it (the poll timeout is in ms). So any reading
 * after a dispatch counts as later than it: a timer fires at most 1 us
 * early, never a re-arm late. */
static inline gint64 heap_now(gint64 t)
{
    return t > heap.last_now ? t : heap.last_now + 1;
}

static gboolean timers_prepare(GSource *source, gint *timeout)
{
    gint64 wait;

    if (!heap.len) {
        *timeout = -1;
        return FALSE;
    }
    wait = heap.v[0]->due_us - heap_now(g_source_get_time(source));
    if (wait <= 0) {
        *timeout = 0;
        return TRUE;
    }
    /* rounded up: waking early would only poll again */
    wait = (wait + 999) / 1000;
    *timeout = wait > G_MAXINT ? G_MAXINT : (gint)wait;
    return FALSE;
}

static gboolean timers_check(GSource *source)
{
    return heap.len && heap.v[0]->due_us <= heap_now(g_source_get_time(source));
}

static gboolean timers_dispatch(GSource *source, GSourceFunc cb, gpointer ud)
{
    gint64 now = heap_now(g_get_monotonic_time());
    gint64 outer_now = heap.dispatch_now;
    guint64 started = heap.next_seq;
    (void)source;
    (void)cb;
    (void)ud;

    /* Only timers armed before this dispatch: a zero-delay re-arm waits for
     * the next iteration (ddm_timer_arm_at() also puts a deadline re-armed
     * during the dispatch after its now, so such a timer never sits at the
     * top in front of other due timers). Each is out of the heap before its
     * callback. */
    heap.dispatch_now = heap.last_now = now;
    while (heap.len && heap.v[0]->due_us <= now && heap.v[0]->seq < started) {
        DdmTimer *t = heap.v[0];
        heap_remove_at(0);
        t->fn(t, t->ud);
    }
    heap.dispatch_now = outer_now;
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs timer_funcs = {
    .prepare = timers_prepare,
    .check = timers_check,
    .dispatch = timers_dispatch,
};

static void ensure_source(void)
{
    if (heap.source)
        return;
    heap.source = g_source_new(&timer_funcs, sizeof(GSource));
    g_source_set_name(heap.source, "ddmon timers");
    /* A timer callback may run a nested main loop; other timers keep firing. */
    g_source_set_can_recurse(heap.source, TRUE);
    g_source_attach(heap.source, NULL);
}

void ddm_timer_init(DdmTimer *t, DdmTimerFn fn, gpointer ud)
{
    g_return_if_fail(t != NULL && fn != NULL);
    if (t->index && t->index <= heap.len && heap.v[t->index - 1] == t) {
        t->fn = fn; /* armed: only the callback changes */
        t->ud = ud;
        return;
    }
    *t = (DdmTimer){ .fn = fn, .ud = ud };
}

void ddm_timer_arm_at(DdmTimer *t, gint64 due_us)
{
    g_return_if_fail(t != NULL && t->fn != NULL);
    ensure_source();
    /* During a dispatch, a deadline at or before its now would stop the
     * dispatch loop at this timer (armed during it, so not fired) and hold
     * back the due timers behind it: it fires at the next iteration anyway. */
    if (heap.dispatch_now && due_us <= heap.dispatch_now)
        due_us = heap.dispatch_now + 1;
    t->due_us = due_us;
    t->seq = heap.next_seq++;
    if (t->index) {
        guint i = t->index - 1;
        if (i > 0 && earlier(t, heap.v[(i - 1) / 2]))
            sift_up(i);
        else
            sift_down(i);
    } else {
        if (heap.len == heap.cap) {
            heap.cap = heap.cap ? heap.cap * 2 : 64;
            heap.v = g_renew(DdmTimer *, heap.v, heap.cap);
        }
        place(t, heap.len++);
        sift_up(heap.len - 1);
    }
}

void ddm_timer_arm(DdmTimer *t, guint delay_ms)
{
    ddm_timer_arm_at(t, g_get_monotonic_time() + (gint64)delay_ms * 1000);
}

void ddm_timer_cancel(DdmTimer *t)
{
    if (!t || !t->index)
        return;
    g_return_if_fail(t->index <= heap.len && heap.v[t->index - 1] == t);
    heap_remove_at(t->index - 1);
}

gint64 ddm_timer_due(const DdmTimer *t)
{
    return t && t->index ? t->due_us : G_MAXINT64;
}

guint ddm_timer_count(void)
{
    return heap.len;
}
