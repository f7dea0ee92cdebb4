/* SPDX-License-Identifier: Apache-2.0
 *
 * fd watches on one epoll fd (see watch.h). Owns the epoll fd, its GSource,
 * one slot per fd number (the watches of that fd and what epoll has been
 * told) and the watches themselves, which are freed at the end of the
 * outermost dispatch once removed; and the socket round (watch.h) with its
 * timerfd, made at the first round.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/loop/timer.h"
#include "core/loop/watch.h"

#define EVENTS_PER_WAKEUP 256 /* more ready fds wait for the next wake-up (level-triggered) */
/* The socket round (ddm_watch_expect_more): how long, from the start of the
 * main context's dispatch, the watches may keep the other sources waiting,
 * and how many batches one round dispatches at most. */
#define ROUND_BUDGET_US 1000
#define ROUND_MAX_BATCHES 256
/* A watch whose hints came to nothing ROUND_MISSES_MAX times in a row (a
 * paced debugger: its next command comes 200 ms after the reply, not
 * within the round) has its hints ignored, but for one in ROUND_RETRY_EVERY
 * (its peer may have sped up): a round costs a timerfd arm and disarm and a
 * wait of the whole budget, for nothing. */
#define ROUND_MISSES_MAX 4
#define ROUND_RETRY_EVERY 32
#define ROUND_HINTERS 8 /* the watches that hinted in one batch, tracked */
/* A round whose budget ran out while work kept coming (two batches or more
 * in that budget) and no other source may be waiting goes on for another
 * budget, this many times at most. So what others_may_wait cannot see
 * waits for 32 budgets (plus the batch that overran the last) at most: a
 * source that only its check() says ready, and one attached or made ready
 * during the round (a g_timeout_add or g_idle_add from a callback: the
 * context's timeout is the one of its last prepare), which may then wait
 * one round more (review rR 4). Not fewer: a round that ends costs a
 * main-context iteration (bench/loopiter: ~1,800 Ir), which 15
 * extensions spread over ~13 Ir a packet of a ping-pong (under callgrind),
 * 31 over half that. */
#define ROUND_MAX_EXTENSIONS 31
/* The epoll data of the round's timerfd (never a packed fd: fds are < 2^31). */
#define ROUND_TIMER_MARK G_MAXUINT64
/* The context's descriptors others_may_wait polls at most (more: it yields). */
#define YIELD_POLL_MAX 32
/* loop.round_flags */
#define RF_EXPECT 1u /* a callback of this batch said an answer is near */
#define RF_FIRED 2u  /* the round's timerfd was seen (and disarmed, unless stale) */
#define ALWAYS (G_IO_HUP | G_IO_ERR)
#define POLLED (G_IO_IN | G_IO_PRI | G_IO_OUT)
#if defined(__GNUC__)
#define INLINE_HOT inline __attribute__((always_inline)) /* the per-packet path */
#else
#define INLINE_HOT inline
#endif

typedef struct Slot Slot;

struct DdmWatch {
    int fd;
    GIOCondition want;
    GUnixFDSourceFunc fn;
    gpointer ud;
    Slot *slot;           /* NULL for a fallback watch */
    GSource *fallback;    /* a g_unix_fd source when epoll refused the fd */
    DdmWatch *next;       /* in slot->watches */
    DdmWatch *next_dead;  /* in loop.dead once removed */
    gboolean removed;
    gboolean fallback_running; /* its callback runs (fallback_cb): not again inside it */
};

/* The watches of one fd number. Slots live as long as the loop: a stale
 * epoll event (an fd removed, closed and reused within one batch) is told
 * apart by the generation packed next to the fd in the event data. */
struct Slot {
    int fd;
    guint8 round_misses;  /* its hints' rounds that caught nothing, in a row (saturating) */
    guint8 round_ignored; /* its hints ignored since the last one tried */
    DdmWatch *watches;
    guint32 gen;          /* bumped whenever epoll forgets the fd */
    guint32 registered;   /* the events epoll has for this fd (when in_epoll) */
    gboolean in_epoll;
    gboolean suspended;   /* taken out of epoll during a nested dispatch */
};

/* A watch callback running: its frame lives on the stack of the dispatch
 * that called it, linked from loop.top (the innermost) outwards. Its slot
 * takes the callback's hints (ddm_watch_expect_more); a nested dispatch
 * takes every running slot out of epoll (suspend_running), so no watch of
 * a running slot gets an event until the callback returned. */
typedef struct Frame Frame;
struct Frame {
    Slot *slot;
    Frame *up;
};

typedef struct HookList {
    DdmBatchEnd *head, *tail;
} HookList;

static struct {
    int epfd;
    GSource *source;
    GMainContext *context; /* the default one, which it is attached to */
    Slot **slots;         /* by fd number */
    guint nslots;
    DdmWatch *dead;       /* removed, to free when depth drops to 0 */
    guint depth;          /* nested dispatches now running */
    Frame *top;           /* the innermost watch callback running; NULL: none */
    guint live;
    guint64 wakeups, events; /* events: of dispatch_batch's wake-ups; each other
                                wake-up (dispatch_one's) had one */
    guint64 batch_wakeups;    /* dispatch_batch's */
    HookList hooks;       /* queued batch-end hooks (queued == 1) */
    HookList running;     /* taken by the hook run now going on (queued == 2) */
    guint round_flags;    /* RF_EXPECT, RF_FIRED: one word, so that the round asks
                             both with one test after a batch */
    int round_tfd;        /* the round's deadline, in the epoll set; -1: none (yet, or
                             timerfd failed: each wait then has its own timeout) */
    gboolean round_tfd_tried;
    gboolean round_timer_stale; /* seen but not disarmed yet: still ready in epoll */
    gboolean round_yield; /* the last round ran to its deadline or cap: the
                             next dispatch runs none, so the sources after
                             ours in the context get their turn first */
    guint round_budget_us;
    Slot *hinters[ROUND_HINTERS]; /* whose hints the round's next wait answers */
    guint nhinters;
    gboolean hinters_missed_before; /* one of them has round misses to forget if caught */
    guint64 round_batches, round_waits; /* batches a round dispatched; its waits */
    guint64 round_extensions; /* budgets rounds went on for (ROUND_MAX_EXTENSIONS) */
    gint64 prepared_us;   /* when the context last prepared our source: the instant its
                             timeout (g_main_context_query) counts from */
    /* What g_main_context_query said at a round's first extension, for its
     * later ones (others_may_wait): valid until the round ends or the
     * context prepares again (a nested iteration). */
    struct {
        gboolean valid;
        gboolean always; /* more descriptors than we look at, or timeout 0 */
        gint64 due_us;   /* when the context's timeout falls due; G_MAXINT64: none */
        guint nfds;      /* the context's descriptors but our epoll fd */
        GPollFD fds[YIELD_POLL_MAX];
    } others;
} loop = { .epfd = -1, .round_tfd = -1, .round_budget_us = ROUND_BUDGET_US };

static inline guint64 pack(int fd, guint32 gen)
{
    return (guint64)(guint32)fd | ((guint64)gen << 32);
}

static void slot_fall_back(Slot *s, int err);

/* The slot's fd is no longer the file it was (removed from epoll, closed
 * and its number reused, or handed to poll(2)): events packed with the old
 * generation are dropped, and the next user of the number starts with no
 * round misses or ignored hints of the old one's. */
static void slot_forget(Slot *s)
{
    s->gen++;
    s->round_misses = s->round_ignored = 0;
}

/* Tell epoll what the slot's watches want now. @force: issue the MOD even
 * when the union looks unchanged (a watch added next to others: the fd may
 * have been closed and its number reused, and only epoll_ctl can tell). */
static void slot_sync_full(Slot *s, gboolean force)
{
    int fd = s->fd;
    guint32 want = 0;
    gboolean any = FALSE;
    struct epoll_event ev;
    int op;

    if (!s->suspended)
        for (DdmWatch *w = s->watches; w; w = w->next)
            if (!w->removed && w->want) {
                want |= (guint32)(w->want & POLLED);
                any = TRUE;
            }
    if (any == s->in_epoll && (!any || (want == s->registered && !force)))
        return;
    memset(&ev, 0, sizeof ev);
    if (!any) {
        /* Out of epoll, not MOD to 0: epoll reports HUP and ERR whatever the
         * events, level-triggered, and nobody wants them. */
        if (epoll_ctl(loop.epfd, EPOLL_CTL_DEL, fd, &ev) < 0 && errno != EBADF && errno != ENOENT)
            g_warning("epoll_ctl(DEL, %d): %s", fd, g_strerror(errno));
        s->registered = 0;
        s->in_epoll = FALSE;
        slot_forget(s);
        return;
    }
    op = s->in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    ev.events = want; /* G_IO_IN/PRI/OUT are EPOLLIN/PRI/OUT on Linux; HUP/ERR always come */
    ev.data.u64 = pack(fd, s->gen);
    if (epoll_ctl(loop.epfd, op, fd, &ev) < 0) {
        if (op == EPOLL_CTL_MOD && errno == ENOENT) {
            /* the fd was closed and its number reused behind our back:
             * register it anew */
            op = EPOLL_CTL_ADD;
            slot_forget(s);
            ev.data.u64 = pack(fd, s->gen);
            if (epoll_ctl(loop.epfd, op, fd, &ev) == 0)
                goto registered;
        }
        if (op == EPOLL_CTL_ADD && (errno == EPERM || errno == ENOMEM || errno == ENOSPC)) {
            /* EPERM: epoll refuses this kind of file (regular files,
             * directories, /dev/null); ENOMEM, ENOSPC: out of memory or of
             * max_user_watches. poll(2) it, like GLib, rather than fail. */
            slot_fall_back(s, errno);
            return;
        }
        g_error("epoll_ctl(%s, %d): %s", op == EPOLL_CTL_ADD ? "ADD" : "MOD", fd,
                g_strerror(errno));
    }
registered:
    s->registered = want;
    s->in_epoll = TRUE;
}

static void slot_sync(Slot *s)
{
    slot_sync_full(s, FALSE);
}

static void free_dead(void)
{
    while (loop.dead) {
        DdmWatch *w = loop.dead;
        loop.dead = w->next_dead;
        g_free(w);
    }
}

/* Nested dispatch: the fds whose callbacks are running further out leave
 * epoll until those return, or they would wake every nested iteration. */
static void suspend_running(void)
{
    for (Frame *f = loop.top; f; f = f->up) {
        Slot *s = f->slot;
        if (!s->suspended) {
            s->suspended = TRUE;
            slot_sync(s);
        }
    }
}

/* Is a callback of slot @s running (further out: a nested dispatch asks)?
 * (Its slot is suspended then, so it gets no event; asked all the same.) */
static gboolean slot_running(const Slot *s)
{
    for (const Frame *f = loop.top; f; f = f->up)
        if (f->slot == s)
            return TRUE;
    return FALSE;
}

/* A callback of suspended slot @s returned: back into epoll unless another
 * of its callbacks still runs further out. */
static G_GNUC_NO_INLINE void slot_resume(Slot *s)
{
    if (slot_running(s))
        return;
    s->suspended = FALSE;
    slot_sync(s);
}

/* Call @w (of slot @s) for @hit: its frame on this stack while it runs.
 * @outermost: no callback runs (loop.top is NULL; a constant for the
 * socket round, which runs none). */
static INLINE_HOT void run_watch_in(Slot *s, DdmWatch *w, GIOCondition hit, gboolean outermost)
{
    Frame f = { .slot = s, .up = outermost ? NULL : loop.top };
    loop.top = &f;
    gboolean keep = w->fn(w->fd, hit, w->ud);
    loop.top = outermost ? NULL : f.up;
    if (G_UNLIKELY(!keep))
        ddm_watch_remove(w);
    if (G_UNLIKELY(s->suspended))
        slot_resume(s);
}

static INLINE_HOT void run_watch(Slot *s, DdmWatch *w, GIOCondition hit)
{
    run_watch_in(s, w, hit, FALSE);
}

static G_GNUC_NO_INLINE void call_watch(Slot *s, DdmWatch *w, GIOCondition hit)
{
    run_watch(s, w, hit);
}

static void hook_unlink(HookList *l, DdmBatchEnd *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        l->head = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        l->tail = h->prev;
    h->next = h->prev = NULL;
    h->queued = 0;
}

static void hook_append(HookList *l, DdmBatchEnd *h, guint8 mark)
{
    h->next = NULL;
    h->prev = l->tail;
    if (l->tail)
        l->tail->next = h;
    else
        l->head = h;
    l->tail = h;
    h->queued = mark;
}

/* Run the batch-end hooks queued so far (ddm_watch_at_batch_end), in
 * order. Those queued while they run wait for the next dispatch; a hook may
 * cancel or re-queue any hook, and free its owner. */
static void run_batch_end_hooks(void)
{
    while (loop.hooks.head) {
        DdmBatchEnd *h = loop.hooks.head;
        hook_unlink(&loop.hooks, h);
        hook_append(&loop.running, h, 2);
    }
    while (loop.running.head) {
        DdmBatchEnd *h = loop.running.head;
        hook_unlink(&loop.running, h);
        h->fn(h, h->ud);
    }
}

static gboolean epoll_prepare(GSource *source, gint *timeout)
{
    (void)source;
    /* the context computes its timeout at this prepare, before its poll
     * (others_may_wait) */
    loop.prepared_us = g_get_monotonic_time();
    loop.others.valid = FALSE; /* a new timeout, maybe new descriptors */
    if (loop.hooks.head) { /* queued outside a dispatch: run them next */
        *timeout = 0;
        return TRUE;
    }
    *timeout = -1;
    return FALSE;
}

static void round_timer_seen(void);

/* Call the watches of slot @s from @w on (to the end of its list, which
 * the callbacks may change: a removed watch keeps its next, an added one
 * is appended and called too) for @got, one event of the batch @mine
 * that found @s at generation @gen. */
static inline void call_watches_from(Slot *s, DdmWatch *w, guint32 gen, guint64 mine,
                                     GIOCondition got)
{
    for (; w; w = w->next) {
        GIOCondition hit;
        if (w->removed || !w->want || s->gen != gen || loop.wakeups != mine ||
            (loop.top && slot_running(s)))
            continue;
        hit = got & (w->want | ALWAYS);
        if (hit)
            call_watch(s, w, hit);
    }
}

/* Call the watches of the @n events in @evs (one epoll_wait's batch), then
 * the batch-end hooks. */
static void dispatch_batch(const struct epoll_event *evs, int n)
{
    loop.batch_wakeups++;
    loop.wakeups++;
    guint64 mine = loop.wakeups;
    /* A nested dispatch (from a callback) polled again: the rest of this
     * batch is stale, and what is still ready comes back (level-triggered). */
    for (int i = 0; i < n && loop.wakeups == mine; i++) {
        if (G_UNLIKELY(evs[i].data.u64 == ROUND_TIMER_MARK)) {
            /* (a nested dispatch's too: it did fire) */
            round_timer_seen();
            continue;
        }
        int fd = (int)(guint32)evs[i].data.u64;
        guint32 gen = (guint32)(evs[i].data.u64 >> 32);
        Slot *s = (guint)fd < loop.nslots ? loop.slots[fd] : NULL;
        GIOCondition got = (GIOCondition)evs[i].events;

        if (!s || s->gen != gen || !s->in_epoll)
            continue; /* forgotten since epoll_wait returned */
        loop.events++;
        call_watches_from(s, s->watches, gen, mine, got);
    }
    if (loop.hooks.head)
        run_batch_end_hooks();
}

/* The watches dispatch_one's callback added after its own (cold: kept out of
 * dispatch_one, whose values would otherwise live across the callback,
 * ~25 Ir a relayed packet). */
static G_GNUC_NO_INLINE void dispatch_one_rest(const struct epoll_event *ev, DdmWatch *from,
                                               guint64 mine)
{
    int fd = (int)(guint32)ev->data.u64;
    if ((guint)fd < loop.nslots && loop.slots[fd])
        call_watches_from(loop.slots[fd], from, (guint32)(ev->data.u64 >> 32), mine,
                          (GIOCondition)ev->events);
}

/* One epoll event (a ping-pong's every batch): the lone watch of its slot
 * is called without dispatch_batch's walk (bench/relay.sh: ~38 Ir less a
 * relayed packet), and the watches its callback added to the fd after it,
 * as dispatch_batch would; any other case (the round's timer, a stale or
 * forgotten fd, several watches on the fd, a nested dispatch) is
 * dispatch_batch's, which decides it the same way. What this one need not
 * ask: the round's timer's mark is no fd below nslots; the current
 * generation means the slot is in epoll (leaving it, or falling back to
 * poll(2), forgets the generation), so its lone watch wants something
 * (wanting nothing takes the slot out) and is not removed (a removed
 * watch leaves its slot's list); and with no callback running (loop.top)
 * none is running. @in_round: called by the socket round (a constant),
 * where no callback runs (that test is left out), for an event that may be
 * the round's timer's: then FALSE, and nothing done (its mark is the only
 * event of the round with no fd below nslots: slots are never freed);
 * else the hinters of the round's last batch are caught (hinters_caught)
 * before a callback runs. TRUE otherwise. */
static INLINE_HOT void hinters_caught(void);

static INLINE_HOT gboolean dispatch_one(const struct epoll_event *ev, gboolean in_round)
{
    guint64 data = ev->data.u64;
    guint fd = (guint32)data;
    Slot *s;
    DdmWatch *w;
    if (in_round) {
        if (G_UNLIKELY(fd >= loop.nslots))
            return FALSE;
        hinters_caught();
    }
    if (G_UNLIKELY((!in_round && fd >= loop.nslots) || !(s = loop.slots[fd]) ||
                   s->gen != (guint32)(data >> 32) || !(w = s->watches) || w->next ||
                   (!in_round && loop.top))) {
        dispatch_batch(ev, 1);
        return TRUE;
    }
    guint64 mine = ++loop.wakeups;
    GIOCondition hit = (GIOCondition)ev->events & (w->want | ALWAYS);
    if (G_LIKELY(hit))
        run_watch_in(s, w, hit, in_round);
    if (G_UNLIKELY(w->next != NULL))
        dispatch_one_rest(ev, w->next, mine);
    if (loop.hooks.head)
        run_batch_end_hooks();
    return TRUE;
}

/* The round's deadline is a timerfd in the epoll set, armed once a round,
 * so each wait of the round is an epoll_wait without a timeout: a timeout
 * arms a kernel timer at every wait, and one due within the scheduler tick
 * reprograms the clock device each time (bench/relay.sh measured it: more
 * system time and a slower round trip than glib's iteration it saves). */
static void round_timer_disarm(void);

static gboolean round_timer_arm(gint64 until_us)
{
    if (!loop.round_tfd_tried) {
        loop.round_tfd_tried = TRUE;
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ROUND_TIMER_MARK };
        if (tfd >= 0 && epoll_ctl(loop.epfd, EPOLL_CTL_ADD, tfd, &ev) == 0)
            loop.round_tfd = tfd;
        else if (tfd >= 0)
            close(tfd);
    }
    if (loop.round_tfd < 0)
        return FALSE;
    /* g_get_monotonic_time() is CLOCK_MONOTONIC in µs */
    struct itimerspec its = { .it_value = { .tv_sec = (time_t)(until_us / G_USEC_PER_SEC),
                                            .tv_nsec = (long)(until_us % G_USEC_PER_SEC) * 1000 } };
    loop.round_flags &= ~RF_FIRED;
    if (timerfd_settime(loop.round_tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
        if (loop.round_timer_stale) /* still ready: the waits without it would see it */
            round_timer_disarm();
        return FALSE;
    }
    loop.round_timer_stale = FALSE; /* a new setting clears the expiry */
    return TRUE;
}

/* Disarmed, it is never ready: a server between rounds never sees it. */
static void round_timer_disarm(void)
{
    struct itimerspec off = { 0 };
    (void)timerfd_settime(loop.round_tfd, 0, &off, NULL);
    loop.round_timer_stale = FALSE;
}

/* Its event came: disarmed at once (which clears it), or a nested main
 * loop run by a callback of the round would find the epoll fd ready at
 * every iteration until the round returns, and spin. So is one left
 * expired on purpose (round_timer_stale: the budget's end seen and the
 * re-arm not made yet) when its event comes again in a nested dispatch. */
static void round_timer_seen(void)
{
    if ((!(loop.round_flags & RF_FIRED) || loop.round_timer_stale) && loop.round_tfd >= 0)
        round_timer_disarm();
    loop.round_flags |= RF_FIRED;
}

/* The round's wait answered the hints of the last batch (something came),
 * or did not (nothing came before the deadline). Then a new batch. */
static INLINE_HOT void hinters_caught(void)
{
    /* (none of them had misses to forget, as a rule: no walk) */
    if (G_UNLIKELY(loop.hinters_missed_before)) {
        for (guint i = 0, n = loop.nhinters; i < n; i++) /* (n <= ROUND_HINTERS) */
            loop.hinters[i]->round_misses = 0;
        loop.hinters_missed_before = FALSE;
    }
    loop.nhinters = 0;
}

static void hinters_missed(void)
{
    for (guint i = 0, n = loop.nhinters; i < n; i++) {
        Slot *s = loop.hinters[i];
        if (s->round_misses < G_MAXUINT8)
            s->round_misses++;
    }
    loop.nhinters = 0;
    loop.hinters_missed_before = FALSE;
}

/* A round ran to its deadline or cap: may a source of the context other than ours be waiting
 * for its turn? If so the next dispatch runs no round (round_yield). Asked
 * of the context itself instead of assumed, because the iteration a yield
 * costs is dearer than the packets it relays (bench/relay.sh: ~90 Ir per
 * relayed packet on the ping-pong): a descriptor of another source
 * (libsoup's sockets, GLib's wake-up fd, which other threads write, and
 * GLib's unix signals in the CLI; the server's signals come through our
 * own epoll set, server/server.c) is ready now (one poll(2) with a zero
 * timeout, our epoll fd left out), or a timeout of the context (GLib's, or our timers') is due by
 * now (the timeout computed at the context's last prepare, counted from
 * that prepare, loop.prepared_us: not from the dispatch's start, which
 * comes after the poll the context slept in, review rR 1), or the context cannot tell (more descriptors than we look
 * at, or a source was ready at prepare: timeout 0). A source that becomes
 * ready without either (a source whose check() alone says so) is not
 * seen: it waits for the round after, as all did before the yield.
 * The context's answer is asked once a round for its extensions (the
 * first asks, the later ones poll the same descriptors again: ~95 Ir an
 * extension less under callgrind, ~275 -> ~180), not @fresh: its timeout changes only
 * at a prepare (which forgets the answer: a nested iteration), its
 * descriptors when a source is attached or removed. So a source attached
 * during the round is not seen by the round's later extensions, as its
 * timeout was not before (watch.h: up to 32 budgets): the yield question at
 * the round's end asks afresh. A descriptor closed meanwhile polls as
 * POLLNVAL: a yield. */
static gboolean others_may_wait(gint64 now_us /* 0: not read yet */, gboolean fresh)
{
    if (fresh || !loop.others.valid) {
        gint timeout = -1;
        GPollFD fds[YIELD_POLL_MAX];
        gint n = g_main_context_query(loop.context, G_MAXINT, &timeout, fds, YIELD_POLL_MAX);
        guint k = 0;
        loop.others.always = n > YIELD_POLL_MAX || timeout == 0;
        loop.others.due_us =
            timeout > 0 ? loop.prepared_us + (gint64)timeout * 1000 : G_MAXINT64;
        if (!loop.others.always)
            for (gint i = 0; i < n; i++)
                if (fds[i].fd != loop.epfd)
                    loop.others.fds[k++] = fds[i];
        loop.others.nfds = k;
        loop.others.valid = TRUE;
    }
    if (loop.others.always)
        return TRUE;
    if (loop.others.due_us != G_MAXINT64 &&
        loop.others.due_us <= (now_us ? now_us : g_get_monotonic_time()))
        return TRUE;
    if (!loop.others.nfds)
        return FALSE;
    gint r;
    do
        r = g_poll(loop.others.fds, loop.others.nfds, 0);
    while (r < 0 && errno == EINTR);
    return r != 0; /* an error: yield, as before */
}

/* A socket round's state (socket_round; round_go_on moves it on). */
typedef struct Round {
    gint64 deadline;  /* the budget's end */
    gint64 until;     /* the wait's end: MIN(deadline, the earliest DdmTimer's) */
    gint64 now;       /* the clock, when last read */
    gint64 recheck;   /* after a batch, the clock is read if the earliest DdmTimer
                         is due by this (until - 1 with a timerfd; always without) */
    int wait_ms;      /* the waits' epoll_wait timeout: -1 with a timerfd */
    gboolean timed;   /* the timerfd holds until */
    guint waits;      /* so far (the cap: ROUND_MAX_BATCHES), when a helper asks
                         (socket_round counts them in a register) */
    guint empty;      /* waits that dispatched no batch */
    guint seg_start;  /* the batches (waits - empty) when the budget was last (re)armed */
    guint extensions;
} Round;

/* (Re-)arm the round's timerfd for r->until, or (none, or it failed) let
 * each wait have a timeout until then, in whole ms, rounded up (a round may
 * then end up to 1 ms late; not epoll_pwait2's ns: it needs glibc 2.35 and
 * Linux 5.11, and a seccomp filter may refuse it; this path is the rare
 * one anyway). r->now must be fresh. */
static void round_set_until(Round *r)
{
    r->timed = round_timer_arm(r->until);
    r->recheck = r->timed ? r->until - 1 : G_MAXINT64;
    r->wait_ms = r->timed ? -1 : (int)((r->until - r->now + 999) / 1000);
}

/* The round's budget ran out (its timerfd came, or without one the clock
 * says so) while work kept coming (the caller checked: during a batch that
 * hinted, or during a wait), after two batches or more of this budget's
 * (a stream of exchanges, not one exchange waiting on a slow answer or one
 * long batch, review rR 2). Nobody else waiting (no DdmTimer due or due
 * before the budget's end, and others_may_wait says no), the round goes on
 * for another budget instead of a trip through the context, whose
 * iteration costs more than a dozen packets under valgrind
 * (bench/relay.sh); ROUND_MAX_EXTENSIONS times at most, and the batch cap
 * still holds. TRUE (the deadline, r->now and the timerfd moved on) if it
 * goes on: r->now is the time the new budget counts from, for the wait
 * without a timerfd (review rR 3). */
static gboolean round_go_on(Round *r)
{
    if (r->waits - r->empty - r->seg_start < 2 || r->extensions >= ROUND_MAX_EXTENSIONS ||
        r->until < r->deadline)
        return FALSE;
    gint64 t = g_get_monotonic_time();
    if (ddm_timer_next_due() <= t || others_may_wait(t, FALSE))
        return FALSE;
    r->extensions++;
    loop.round_extensions++;
    r->now = t;
    r->deadline = t + loop.round_budget_us;
    r->until = MIN(r->deadline, ddm_timer_next_due());
    r->seg_start = r->waits - r->empty;
    round_set_until(r);
    return TRUE;
}

/* What the round does after a batch. */
enum { ROUND_WAIT, ROUND_END, ROUND_END_IDLE };

/* After a batch whose callbacks did not all go as a ping-pong's do (the
 * budget's end came, or no callback hinted): the rules in the order the
 * round has always asked them. */
static G_GNUC_NO_INLINE int round_after_odd_batch(Round *r)
{
    if (loop.round_flags & RF_FIRED) {
        if ((loop.round_flags & RF_EXPECT) && round_go_on(r))
            return r->waits < ROUND_MAX_BATCHES ? ROUND_WAIT : ROUND_END;
        return ROUND_END;
    }
    /* no hint: the round ends, at its deadline or cap (a yield may
     * follow) if a timer fell due or the cap was reached, as the round
     * asks those before the hint; else for want of work (ROUND_END_IDLE) */
    if (ddm_timer_next_due() <= r->recheck) {
        r->now = g_get_monotonic_time();
        if (MIN(ddm_timer_next_due(), r->until) <= r->now)
            return ROUND_END;
    }
    return r->waits < ROUND_MAX_BATCHES ? ROUND_END_IDLE : ROUND_END;
}

/* A DdmTimer armed by the batch may be due before the round's end, or
 * (without a timerfd) the budget ended: the clock says. */
static G_GNUC_NO_INLINE int round_check_due(Round *r)
{
    gint64 due = ddm_timer_next_due();
    r->now = g_get_monotonic_time();
    if (MIN(due, r->until) <= r->now) {
        /* without a timerfd the budget's end is seen here, not as an
         * event: the same rule as with one */
        if (!r->timed && (loop.round_flags & RF_EXPECT) && round_go_on(r))
            return ROUND_WAIT;
        return ROUND_END;
    }
    if (due < r->until) {
        r->until = due;
        if (r->timed) {
            round_set_until(r);
            return ROUND_WAIT;
        }
    }
    if (!r->timed)
        r->wait_ms = (int)((r->until - r->now + 999) / 1000);
    return ROUND_WAIT;
}

/* The socket round: a callback said an answer is near (a relayed command's
 * reply, a debugger's next command): wait for it on the epoll fd and
 * dispatch it here, instead of going back through the main context (whose
 * iteration costs more than the packet). Bounded: it ends when no callback
 * of the last batch said so again, when nothing came in time, at the next
 * timer's deadline, ROUND_MAX_BATCHES batches, or once round_budget_us
 * have passed since the context started this dispatch (@started_us). A
 * round that ran to its deadline or cap right after a dispatched batch
 * (work kept coming to its end) sets round_yield if another source may be
 * waiting (others_may_wait): the next dispatch runs no round, so the
 * context's other sources, which the context dispatches after ours when
 * both are ready, wait for one round at most. The waits' and batches'
 * counts go to the statistics at the round's end. */
static void socket_round(struct epoll_event *evs, gint64 started_us)
{
    Round r = { .deadline = started_us + loop.round_budget_us };
    r.now = g_get_monotonic_time();
    r.until = MIN(r.deadline, ddm_timer_next_due());
    gboolean to_the_end = TRUE; /* ended at its deadline or cap */
    loop.others.valid = FALSE;  /* the context's answer is asked afresh once a round */
    if (r.until <= r.now) {
        /* never waited: nothing ran to its end, so nothing to yield for (a
         * yield set here would go stale until the next hinted dispatch) */
        loop.round_flags &= ~RF_EXPECT;
        loop.round_yield = FALSE;
        return;
    }
    round_set_until(&r);
    guint waits = 0;
    /* Here round_flags is RF_EXPECT (the hint that started the round; not
     * RF_FIRED: round_timer_arm cleared it, and without a timerfd it is
     * never set). Each wait starts with none: the batch's callbacks set
     * RF_EXPECT again, the timer's event RF_FIRED, and what is left after
     * the batch decides (round_after_odd_batch). */
    for (;;) {
        loop.round_flags = 0;
        waits++;
        int n;
    wait:
        n = epoll_wait(loop.epfd, evs, EVENTS_PER_WAKEUP, r.wait_ms);
        if (G_LIKELY(n == 1) && G_LIKELY(dispatch_one(evs, TRUE))) {
            /* a ping-pong's every batch (not the timer's event alone) */
        } else if (n == 2 && (evs[0].data.u64 == ROUND_TIMER_MARK ||
                              evs[1].data.u64 == ROUND_TIMER_MARK)) {
            /* One packet and the budget's end (under callgrind, ~1 batch in
             * 20 of a ping-pong): the packet as above, not dispatch_batch's
             * walk, and the timerfd left expired, as when its event comes
             * alone: round_go_on's re-arm clears it (one timerfd_settime,
             * not two) or the round's end disarms it. A nested dispatch in
             * the callback, which would find it ready, disarms it
             * (round_timer_seen: stale). */
            if (!(loop.round_flags & RF_FIRED)) {
                loop.round_flags |= RF_FIRED;
                loop.round_timer_stale = TRUE;
            }
            (void)dispatch_one(&evs[evs[0].data.u64 == ROUND_TIMER_MARK], TRUE);
        } else if (n < 0) {
            if (errno == EINTR)
                goto wait;
            r.empty++;
            to_the_end = FALSE;
            break;
        } else if (n <= 1) {
            /* The budget's end alone (or, without a timerfd, nothing in
             * time): not disarmed here (no callback runs
             * before round_go_on re-arms it, which clears the expiry, or
             * the round ends and disarms it): one timerfd_settime per
             * extension, not two. */
            r.empty++;
            r.waits = waits;
            if (n && !(loop.round_flags & RF_FIRED)) {
                loop.round_flags |= RF_FIRED;
                loop.round_timer_stale = TRUE;
            }
            if (round_go_on(&r)) {
                /* the budget ran out while the next answer of a stream of
                 * exchanges (two batches or more in this budget) was
                 * awaited: wait on for it. Not for one exchange waiting on
                 * a slow answer (a VM building a long reply for ms): that
                 * wait is glib's, without a timerfd and a poll every
                 * budget. */
                if (waits >= ROUND_MAX_BATCHES)
                    break;
                continue;
            }
            hinters_missed(); /* nothing in time */
            to_the_end = FALSE; /* no work kept coming: no one to yield to */
            break;
        } else {
            hinters_caught();
            dispatch_batch(evs, n);
        }
        int next = ROUND_WAIT;
        if (G_UNLIKELY(loop.round_flags != RF_EXPECT)) {
            r.waits = waits;
            next = round_after_odd_batch(&r);
        } else if (G_UNLIKELY(ddm_timer_next_due() <= r.recheck)) {
            r.waits = waits;
            next = round_check_due(&r);
        }
        if (G_UNLIKELY(next != ROUND_WAIT) || G_UNLIKELY(waits >= ROUND_MAX_BATCHES)) {
            if (next == ROUND_END_IDLE)
                to_the_end = FALSE;
            break;
        }
    }
    if (loop.round_tfd >= 0 && (!(loop.round_flags & RF_FIRED) || loop.round_timer_stale))
        round_timer_disarm();
    loop.round_waits += waits;
    loop.round_batches += waits - r.empty;
    loop.round_yield = to_the_end && others_may_wait(0, TRUE);
    loop.round_flags = 0;
}

static gboolean epoll_dispatch(GSource *source, GSourceFunc cb, gpointer ud)
{
    struct epoll_event evs[EVENTS_PER_WAKEUP];
    int n;
    (void)cb;
    (void)ud;

    if (loop.depth > 0)
        suspend_running();
    else
        loop.round_flags &= ~RF_EXPECT; /* a hint from outside a batch (a timer) counts for nothing */
    loop.depth++;
    if (loop.depth == 1) {
        loop.nhinters = 0;
        loop.hinters_missed_before = FALSE;
    }
    do
        n = epoll_wait(loop.epfd, evs, EVENTS_PER_WAKEUP, 0);
    while (n < 0 && errno == EINTR);
    if (n == 1)
        dispatch_one(evs, FALSE);
    else
        dispatch_batch(evs, n > 0 ? n : 0);
    if (loop.depth == 1) {
        if ((loop.round_flags & RF_EXPECT) && !loop.round_yield)
            socket_round(evs, g_source_get_time(source));
        else {
            loop.round_yield = FALSE;
            loop.round_flags &= ~RF_EXPECT;
        }
    }
    loop.depth--;
    if (!loop.depth)
        free_dead();
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs epoll_funcs = {
    .prepare = epoll_prepare,
    .dispatch = epoll_dispatch,
};

static void ensure_loop(void)
{
    if (loop.source)
        return;
    loop.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop.epfd < 0)
        g_error("epoll_create1: %s", g_strerror(errno));
    loop.source = g_source_new(&epoll_funcs, sizeof(GSource));
    g_source_set_name(loop.source, "ddmon fd watches (epoll)");
    g_source_add_unix_fd(loop.source, loop.epfd, G_IO_IN);
    /* GLib blocks a non-recursive source while it dispatches, which takes its
     * fd out of the poll set and puts it back: two context writes and a
     * wake-up per dispatch. Recursion is handled per watch above instead. */
    g_source_set_can_recurse(loop.source, TRUE);
    g_source_attach(loop.source, NULL);
    loop.context = g_main_context_default();
}

static Slot *slot_for(int fd)
{
    if ((guint)fd >= loop.nslots) {
        guint n = MAX(loop.nslots * 2, 64u);
        while (n <= (guint)fd)
            n *= 2;
        loop.slots = g_renew(Slot *, loop.slots, n);
        memset(loop.slots + loop.nslots, 0, (n - loop.nslots) * sizeof(Slot *));
        loop.nslots = n;
    }
    if (!loop.slots[fd]) {
        loop.slots[fd] = g_new0(Slot, 1);
        loop.slots[fd]->fd = fd;
    }
    return loop.slots[fd];
}

/* ------------------------------------------------ fallback (regular files) */

static void fallback_detach(DdmWatch *w);

static gboolean fallback_cb(gint fd, GIOCondition cond, gpointer ud)
{
    DdmWatch *w = ud;
    GSource *dispatching = g_main_current_source();
    gboolean keep;

    /* GLib does not recurse into this source, but a callback that changed
     * its conditions (a new source) and then runs the loop would be called
     * again by the new one: a watch is never called while its callback
     * runs (watch.h), so that one waits. */
    if (w->fallback_running)
        return G_SOURCE_CONTINUE;
    loop.depth++;
    w->fallback_running = TRUE;
    keep = w->fn(fd, cond & (w->want | ALWAYS), w->ud);
    w->fallback_running = FALSE;
    loop.depth--;
    if (!keep && !w->removed) {
        if (w->fallback == dispatching) {
            /* GLib destroys this source when we return FALSE: drop our ref */
            g_source_unref(w->fallback);
            w->fallback = NULL;
        } else {
            /* the callback changed the conditions (ddm_watch_set_cond):
             * w->fallback is a new source (or none), which must go too */
            fallback_detach(w);
        }
        ddm_watch_remove(w);
    }
    if (!loop.depth)
        free_dead();
    return keep;
}

static void fallback_attach(DdmWatch *w)
{
    if (!w->want)
        return;
    w->fallback = g_unix_fd_source_new(w->fd, w->want);
    g_source_set_callback(w->fallback, (GSourceFunc)(void (*)(void))fallback_cb, w, NULL);
    g_source_attach(w->fallback, NULL);
}

static void fallback_detach(DdmWatch *w)
{
    if (w->fallback) {
        g_source_destroy(w->fallback);
        g_source_unref(w->fallback);
        w->fallback = NULL;
    }
}

/* epoll refused the slot's fd (slot_sync): its watches become fallback
 * watches, each with a g_unix_fd source. */
static void slot_fall_back(Slot *s, int err)
{
    static gboolean warned;

    if (err != EPERM && !warned) {
        warned = TRUE;
        g_warning("epoll_ctl(ADD, %d): %s; watching it with poll(2) (warned once)", s->fd,
                  g_strerror(err));
    }
    for (DdmWatch *w = s->watches; w; w = w->next) {
        w->slot = NULL;
        fallback_attach(w);
    }
    s->watches = NULL;
    s->registered = 0;
    s->in_epoll = FALSE;
    slot_forget(s); /* a dispatch walking this slot's list stops */
}

/* ------------------------------------------------------------------ API */

DdmWatch *ddm_watch_add(int fd, GIOCondition cond, GUnixFDSourceFunc fn, gpointer ud)
{
    DdmWatch *w;
    Slot *s;

    g_return_val_if_fail(fd >= 0 && fn != NULL, NULL);
    ensure_loop();
    w = g_new0(DdmWatch, 1);
    w->fd = fd;
    w->want = cond & (POLLED | ALWAYS);
    w->fn = fn;
    w->ud = ud;
    loop.live++;
    s = slot_for(fd);
    w->slot = s;
    /* Appended: watches of one fd run in the order they were added, as
     * GLib's sources of equal priority do (the read watch before the
     * out-watch, so a reset connection is reported by its reader). */
    DdmWatch **tail = &s->watches;
    while (*tail)
        tail = &(*tail)->next;
    gboolean others = s->watches != NULL;
    *tail = w;
    /* With other watches there, MOD even when the union is unchanged: if
     * the fd was closed (and its number reused) before those watches were
     * removed, epoll has forgotten it, and ENOENT says so. If epoll refuses
     * the fd (EPERM: regular files, /dev/null), slot_sync() turns the
     * slot's watches into fallback watches (w->slot becomes NULL). */
    slot_sync_full(s, others);
    return w;
}

void ddm_watch_remove(DdmWatch *w)
{
    if (!w || w->removed)
        return;
    w->removed = TRUE;
    loop.live--;
    if (w->slot) {
        Slot *s = w->slot;
        for (DdmWatch **pp = &s->watches; *pp; pp = &(*pp)->next)
            if (*pp == w) {
                /* w->next stays valid for a dispatch walking this list */
                *pp = w->next;
                break;
            }
        slot_sync(s);
    } else {
        fallback_detach(w);
    }
    if (loop.depth)
        w->next_dead = loop.dead, loop.dead = w;
    else
        g_free(w);
}

void ddm_watch_set_cond(DdmWatch *w, GIOCondition cond)
{
    g_return_if_fail(w != NULL && !w->removed);
    cond &= POLLED | ALWAYS;
    if (cond == w->want)
        return;
    w->want = cond;
    if (w->slot) {
        slot_sync(w->slot);
    } else {
        fallback_detach(w);
        fallback_attach(w);
    }
}

void ddm_watch_at_batch_end(DdmBatchEnd *h, DdmBatchEndFn fn, gpointer ud)
{
    g_return_if_fail(h != NULL && fn != NULL);
    h->fn = fn;
    h->ud = ud;
    if (h->queued)
        return; /* already waiting (it runs after the caller): once a batch */
    ensure_loop();
    hook_append(&loop.hooks, h, 1);
}

void ddm_watch_batch_end_cancel(DdmBatchEnd *h)
{
    if (!h || !h->queued)
        return;
    hook_unlink(h->queued == 1 ? &loop.hooks : &loop.running, h);
}

GIOCondition ddm_watch_get_cond(const DdmWatch *w)
{
    g_return_val_if_fail(w != NULL, 0);
    return w->want;
}

void ddm_watch_expect_more(void)
{
    /* the hint of the innermost watch callback running (none: a timer's,
     * which counts for nothing anyway) */
    Frame *f = loop.top;
    if (f) {
        Slot *s = f->slot;
        if (G_UNLIKELY(s->round_misses)) {
            if (s->round_misses >= ROUND_MISSES_MAX) {
                if (++s->round_ignored < ROUND_RETRY_EVERY)
                    return;
                s->round_ignored = 0; /* try once more */
            }
            loop.hinters_missed_before = TRUE; /* a catch has misses to forget */
        }
        /* Once a batch among the hinters (the list is emptied before each
         * batch): the watches of one fd run one after the other in a
         * batch, so a slot listed already is the last one listed. A nested
         * dispatch's batch may come in between, so a slot may then be
         * listed twice: its misses count twice, its catch the same. */
        guint n = loop.nhinters;
        if (G_LIKELY(n == 0)) {
            loop.hinters[0] = s;
            loop.nhinters = 1;
        } else if (loop.hinters[n - 1] != s && n < ROUND_HINTERS) {
            loop.hinters[n] = s;
            loop.nhinters = n + 1;
        }
    }
    loop.round_flags |= RF_EXPECT;
}

void ddm_watch_set_round_budget(guint us)
{
    loop.round_budget_us = us;
    loop.round_yield = FALSE; /* a fresh start: the next dispatch may run a round */
}

guint64 ddm_watch_round_extensions(void)
{
    return loop.round_extensions;
}

void ddm_watch_round_stats(guint64 *batches, guint64 *waits)
{
    if (batches)
        *batches = loop.round_batches;
    if (waits)
        *waits = loop.round_waits;
}

void ddm_watch_stats(guint *live, guint64 *wakeups, guint64 *events)
{
    if (live)
        *live = loop.live;
    if (wakeups)
        *wakeups = loop.wakeups;
    if (events)
        *events = loop.events + (loop.wakeups - loop.batch_wakeups);
}
