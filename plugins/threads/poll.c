/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: when the table is kept, and the THST polls. Real VMs never push
 * THST; they answer an empty THST request with the whole table (ddmlib
 * polls from a UI timer).
 *  - The poll tick runs every min(threads.interval, 250) ms, and at once when
 *    a watch begins (ABI 1.5, timer_wake_on_watch). A VM whose "threads"
 *    view someone watches (view_watchers > 0; a snapshot, a one-shot view
 *    and a /metrics scrape count) gets its table kept (threads_table_on:
 *    THEN(1)) and a THST at once, then every threads.interval ms, with at
 *    most one poll in flight. threads.linger ms after its last watcher
 *    left, threads_table_off (THEN(0), the list and the view freed); a view
 *    a listing made (ABI 1.6) and nobody watches is freed as long after.
 *    The VMs whose table is kept, or whose view is made, are on
 *    pl->ticks; a tick walks every VM only when the watches changed since
 *    its last walk (<ddmon/ticklist.h>, ABI 1.4): an idle server's tick
 *    touches no VM (issue 16).
 *  - The look timer runs when a look begins (woken by the same watches, and
 *    by `ddmon vms`; its own period is an hour). At the first look at the
 *    VM list (ABI 1.6 vm_list_watchers goes from 0, as the look timer or
 *    the tick saw it, to more: a live view, the TUI, the web, a snapshot,
 *    a one-shot `ddmon vms` for a while), each VM whose view nobody
 *    watches and whose count is older than threads.interval gets one THST,
 *    so the VM list shows counts of that moment; the first look waits for
 *    those answers as for the polls. A later wake while the list stays
 *    watched (another `ddmon vms`, any fresh watch or one-shot view) sends
 *    at most THREADS_TRICKLE_MAX, to the oldest counts older than
 *    threads.interval, from the trickle's budget (below: at most
 *    THREADS_TRICKLE_MAX a period, wakes and trickle together): a
 *    script that loops `ddmon vms` over 10,000 VMs sends no flood. A look
 *    that does not show the VM list (`ddmon view heap.summary --vm X`)
 *    sends none. On a core before 1.6 a run without a watch change does
 *    nothing.
 *  - While the VM list is watched, the poll tick also refreshes the counts
 *    of VMs nobody looks at in a trickle (threads_trickle_once): once a
 *    second, at most THREADS_TRICKLE_MAX THSTs, to the VMs whose count is
 *    oldest and older than max(threads.interval, THREADS_TRICKLE_AGE_MS).
 *    With nobody watching the list, the tick asks one O(1) host question.
 *  - The poll tick sleeps (ABI 1.7, DDM_TIMER_SLEEP) when pl->ticks is
 *    empty and nobody watches the VM list (threads_poll_idle): every
 *    VM's work is then provably nil until something the core or this
 *    plugin wakes it for. A watched view's VM is on the list (polls), a
 *    kept table (full) stays on it until its linger ends, and a view a
 *    listing made is put on it by make_view (threads.c) to be freed after
 *    threads.linger: ddm_tick_list_add wakes the tick when it makes the
 *    list non-empty (ddm_tick_list_set_timer). Everything else that gives
 *    the tick work moves the core's watch generation, which wakes every
 *    sleeping timer: a watch of a view begins (a full walk is due) or
 *    ends, a view is made while a watch exists (a VM becoming ready under
 *    a wide watch), and the VM list becomes watched (the trickle; the
 *    core's "vms" view is watched like any view). The trickle's and a
 *    look's budget is kept in pl->last_capped, which sleeping leaves as
 *    is. On an older core DDM_TIMER_SLEEP is "keep": the tick runs as
 *    before.
 * The reply callbacks hold only the plugin (never per-VM state, which may
 * be gone); they find the VM's data again with host->vm_get_data: a
 * threads_count, or the threads_vm it heads (threads.h). A VM whose table
 * went and that has nothing else left is turned back into a count
 * (threads_vm_settle) by the tick that let it go, or by the last answer
 * that kept it. A THST
 * sent while THEN(1) was unanswered has its own callback, whose reply ends
 * THEN's wait (threads_then_passed: ART never answers THEN, but answers in
 * order); so a second THST may go while the READY one is in flight.
 */
#include <errno.h>
#include <stdlib.h>

#include <ddmon/plugin.h>

#include "threads.h"

/* How long one THST may take before the next poll may try again. */
static unsigned thst_timeout_ms(const threads_plugin *pl)
{
    unsigned t = pl->interval_ms * 2;
    if (t < 2000)
        t = 2000;
    if (t > 30000)
        t = 30000;
    return t;
}

static void thst_answer(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud,
                        int after_then)
{
    threads_plugin *pl = ud;
    threads_count *c;
    threads_vm *st;
    if (reply->status == DDM_REPLY_VM_GONE)
        return; /* the VM's state is (being) freed */
    c = pl->host->vm_get_data(self, vm);
    if (!c)
        return;
    st = c->is_state ? (threads_vm *)(void *)c : NULL;
    if (c->thst_in_flight > 0)
        c->thst_in_flight--;
    if (!st)
        after_then = 0; /* its THEN is long over: the state went */
    if (after_then && st->then_thst_out > 0) {
        st->then_thst_out--;
        if (st->then_thst_stale > 0) { /* sent before the last table went: not this THEN's */
            st->then_thst_stale--;
            after_then = 0;
        }
    }
    switch (reply->status) {
    case DDM_REPLY_CHUNK:
        if (reply->type == THREADS_CHUNK_THST)
            (void)threads_handle_thst(pl, vm, c, reply->data, reply->len, 1);
        else if (reply->type == DDM_CHUNK_FAIL)
            pl->host->log(self, DDM_LOG_INFO, "THST refused by the VM: %s",
                          reply->fail_msg ? reply->fail_msg : "no message");
        else
            pl->host->log(self, DDM_LOG_INFO, "THST answered with another chunk type; ignored");
        break;
    case DDM_REPLY_ERROR:
        pl->host->log(self, DDM_LOG_INFO, "THST: JDWP error %u", (unsigned)reply->jdwp_error);
        break;
    default:
        pl->host->log(self, DDM_LOG_DEBUG, "THST: no table (reply status %d)", (int)reply->status);
        break;
    }
    /* after the table (published at once, pending events with it): a
     * rejected table or a FAIL still says THEN was handled */
    if (after_then && threads_reply_came(reply))
        threads_then_passed(st);
    if (st)
        (void)threads_vm_settle(st); /* the table went while this was out */
}

static void thst_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    thst_answer(self, vm, reply, ud, 0);
}

/* A THST sent after THEN(1), before THEN's answer. */
static void thst_then_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    thst_answer(self, vm, reply, ud, 1);
}

int threads_send_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c)
{
    threads_vm *st = c->is_state ? (threads_vm *)(void *)c : NULL;
    int after_then = st && st->then_in_flight;
    int rc;
    if (c->thst_in_flight == UINT8_MAX)
        return -ENOSPC;
    rc = pl->host->request(pl->self, vm, THREADS_CHUNK_THST, NULL, 0, thst_timeout_ms(pl),
                           after_then ? thst_then_reply : thst_reply, pl, NULL);
    if (rc == 0) {
        c->thst_in_flight++;
        c->last_thst = pl->now();
        if (after_then)
            st->then_thst_out++;
    }
    return rc;
}

/* The tick's period: short enough to notice a new watcher quickly. */
static unsigned tick_ms(const threads_plugin *pl)
{
    return pl->interval_ms && pl->interval_ms < THREADS_TICK_MS ? pl->interval_ms : THREADS_TICK_MS;
}

/* One tick's work for one VM (host->foreach_vm visits the ready ones). */
typedef struct poll_tick {
    threads_plugin *pl;
    double now, period, slack, linger;
    int polls; /* THST polls are on (threads.interval > 0, THST enabled) */
} poll_tick;

static int poll_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const poll_tick *t = ud;
    threads_plugin *pl = t->pl;
    const ddm_host *h = pl->host;
    threads_vm *st = threads_vm_find(pl, vm);
    int rc, went_on = 0;
    (void)self;
    if (!st)
        return 0; /* a count only: no view, nothing kept */
    if (!st->view || h->view_watchers(st->view) <= 0) {
        int made = pl->lazy_view && st->view; /* 1.6: a view made, not watched */
        st->was_watched = 0;
        if ((st->full || made) && t->now - st->last_watched >= t->linger - t->slack) {
            if (st->full) {
                threads_table_off(st); /* frees a made view too */
            } else {
                h->view_free(st->view);
                st->view = NULL;
            }
            made = 0;
        }
        ddm_tick_list_keep(&pl->ticks, &st->tick, st->full || made);
        (void)threads_vm_settle(st); /* back to a count, unless something is left */
        return 0;
    }
    st->last_watched = t->now;
    if (!st->full) {
        threads_table_on(st); /* THEN(1): the THST below ends its wait */
        went_on = 1;
    }
    ddm_tick_list_add(&pl->ticks, &st->tick);
    if (!t->polls)
        return 0;
    /* one poll in flight; the first THST after THEN goes even if the
     * READY's (sent before THEN) is still out: its answer ends THEN's wait */
    if (st->c.thst_in_flight && !(went_on && st->then_in_flight))
        return 0;
    if (!went_on && st->was_watched && t->now - st->last_poll < t->period - t->slack)
        return 0;
    rc = threads_send_thst(pl, vm, &st->c);
    if (rc == 0) {
        st->was_watched = 1;
        st->last_poll = t->now;
    } else {
        h->log(pl->self, DDM_LOG_DEBUG, "THST not sent: error %d", rc);
    }
    return 0;
}

static void tick_init(poll_tick *t, threads_plugin *pl)
{
    t->pl = pl;
    t->now = pl->now();
    t->period = pl->interval_ms / 1000.0;
    t->linger = pl->linger_ms / 1000.0;
    t->slack = tick_ms(pl) / 2000.0; /* a tick that comes a little early still counts */
    t->polls = pl->interval_ms > 0 && pl->host->chunk_enabled(pl->self, THREADS_CHUNK_THST);
}

int threads_poll_vm_if_watched(threads_plugin *pl, ddm_vm *vm)
{
    poll_tick t;
    threads_vm *st = threads_vm_find(pl, vm);
    if (!st || !st->view || pl->host->view_watchers(st->view) <= 0)
        return 0;
    tick_init(&t, pl);
    poll_vm(pl->self, vm, &t);
    return 1;
}

void threads_poll_once(threads_plugin *pl)
{
    poll_tick t;
    tick_init(&t, pl);
    if (ddm_tick_list_full_walk(&pl->ticks, pl->host, pl->self)) {
        pl->host->foreach_vm(pl->self, poll_vm, &t);
        return;
    }
    for (ddm_tick_node *n = pl->ticks.head, *next; n; n = next) {
        next = n->next; /* poll_vm may take this one off the list */
        poll_vm(pl->self, DDM_TICK_OWNER(n, threads_vm, tick)->vm, &t);
    }
}

static int poll_timer_cb(ddm_plugin *self, void *ud)
{
    (void)self;
    threads_poll_once(ud);
    (void)threads_trickle_once(ud);
    return threads_poll_idle(ud) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

/* The look timer's visit: a fresh count for a VM nobody watches. */
static int look_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const poll_tick *t = ud;
    threads_plugin *pl = t->pl;
    const ddm_host *h = pl->host;
    threads_count *c = h->vm_get_data(self, vm);
    threads_vm *st = c && c->is_state ? (threads_vm *)(void *)c : NULL;
    if (!c || (st && st->full) || c->thst_in_flight)
        return 0; /* a kept table is the poll tick's */
    if (t->now - c->last_thst < t->period - t->slack)
        return 0; /* fresh enough */
    if (st && st->view && h->view_watchers(st->view) > 0)
        return 0; /* the poll tick keeps its table and polls it */
    if (threads_send_thst(pl, vm, c) != 0)
        h->log(pl->self, DDM_LOG_DEBUG, "THST for the count not sent");
    return 0;
}

/* The VM list's watchers (1.6), or -1 when the core cannot say. */
static int vm_list_watchers(const threads_plugin *pl)
{
    const ddm_host *h = pl->host;
    if (!DDM_HOST_HAS(h, vm_list_watchers) || !h->vm_list_watchers)
        return -1;
    return h->vm_list_watchers(pl->self);
}

int threads_poll_idle(threads_plugin *pl)
{
    return ddm_tick_list_idle(&pl->ticks) && vm_list_watchers(pl) == 0;
}

/* The VMs nobody looks at with the oldest counts, at most
 * THREADS_TRICKLE_MAX, sorted oldest first (for the trickle, and for a
 * look while the list was already watched). */
typedef struct trickle_pick {
    threads_plugin *pl;
    double now, age;
    size_t n;
    ddm_vm *vm[THREADS_TRICKLE_MAX];
    threads_count *v[THREADS_TRICKLE_MAX]; /* each vm's data (nothing sent while picking) */
} trickle_pick;

static int trickle_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    trickle_pick *p = ud;
    const ddm_host *h = p->pl->host;
    threads_count *c = h->vm_get_data(self, vm);
    threads_vm *st = c && c->is_state ? (threads_vm *)(void *)c : NULL;
    size_t i;
    if (!c || (st && st->full) || c->thst_in_flight || p->now - c->last_thst < p->age)
        return 0;
    if (st && st->view && h->view_watchers(st->view) > 0)
        return 0; /* the poll tick's */
    if (p->n == THREADS_TRICKLE_MAX && c->last_thst >= p->v[p->n - 1]->last_thst)
        return 0;
    i = p->n < THREADS_TRICKLE_MAX ? p->n++ : p->n - 1;
    for (; i > 0 && p->v[i - 1]->last_thst > c->last_thst; i--) {
        p->v[i] = p->v[i - 1];
        p->vm[i] = p->vm[i - 1];
    }
    p->v[i] = c;
    p->vm[i] = vm;
    return 0;
}

/* A THST to the (at most THREADS_TRICKLE_MAX) VMs nobody looks at whose
 * count is oldest and at least @age seconds old; the THSTs sent. */
static int send_to_oldest(threads_plugin *pl, double now, double age)
{
    trickle_pick p;
    int sent = 0;
    p.pl = pl;
    p.now = now;
    p.age = age;
    p.n = 0;
    pl->host->foreach_vm(pl->self, trickle_vm, &p);
    for (size_t i = 0; i < p.n; i++)
        if (threads_send_thst(pl, p.vm[i], p.v[i]) == 0)
            sent++;
    return sent;
}

/* A period of THREADS_TRICKLE_PERIOD_MS, less half a tick (a tick that
 * comes a little early still counts). */
static double trickle_period(const threads_plugin *pl)
{
    return THREADS_TRICKLE_PERIOD_MS / 1000.0 - tick_ms(pl) / 2000.0;
}

/* send_to_oldest from the budget the tick's trickle and a later look at
 * the watched list share: at most THREADS_TRICKLE_MAX THSTs a period for
 * both together, however often `ddmon vms` wakes the look. The THSTs sent. */
static int send_capped(threads_plugin *pl, double now, double age)
{
    int sent;
    if (pl->last_capped > 0 && now - pl->last_capped < trickle_period(pl))
        return 0;
    sent = send_to_oldest(pl, now, age);
    if (sent > 0)
        pl->last_capped = now;
    return sent;
}

int threads_trickle_once(threads_plugin *pl)
{
    const ddm_host *h = pl->host;
    double now = pl->now();
    int list_watchers = vm_list_watchers(pl);
    if (list_watchers == 0)
        pl->list_look_due = 1; /* the next look at the list is a first one */
    if (list_watchers <= 0 || !pl->interval_ms ||
        now - pl->last_trickle < trickle_period(pl) ||
        !h->chunk_enabled(pl->self, THREADS_CHUNK_THST))
        return 0;
    pl->last_trickle = now;
    return send_capped(pl, now,
                          (pl->interval_ms > THREADS_TRICKLE_AGE_MS ? pl->interval_ms
                                                                    : THREADS_TRICKLE_AGE_MS) /
                              1000.0);
}

void threads_look_once(threads_plugin *pl)
{
    const ddm_host *h = pl->host;
    poll_tick t = {0};
    int list_watchers = vm_list_watchers(pl), first = 1;
    if (list_watchers == 0) {
        pl->list_look_due = 1;
        return; /* a look that shows no VM list: no counts to refresh */
    }
    if (list_watchers < 0 && DDM_HOST_HAS(h, watch_generation) && h->watch_generation) {
        uint64_t gen = h->watch_generation(pl->self);
        if (gen == pl->look_gen)
            return; /* not woken by a look: its hourly run */
        pl->look_gen = gen;
    }
    if (list_watchers > 0) { /* only a first look at the list asks every VM */
        first = pl->list_look_due;
        pl->list_look_due = 0;
    }
    if (!pl->interval_ms || !h->chunk_enabled(pl->self, THREADS_CHUNK_THST))
        return;
    t.pl = pl;
    t.now = pl->now();
    t.period = pl->interval_ms / 1000.0;
    t.slack = tick_ms(pl) / 2000.0;
    if (first) {
        h->foreach_vm(pl->self, look_vm, &t);
    } else {
        /* the list was watched already: another wake sends no flood, and
         * shares the trickle's budget (a script looping `ddmon vms` sends
         * at most THREADS_TRICKLE_MAX a period, wakes and tick together) */
        (void)send_capped(pl, t.now, t.period - t.slack);
    }
}

static int look_timer_cb(ddm_plugin *self, void *ud)
{
    (void)self;
    threads_look_once(ud);
    return 1;
}

int threads_poll_start(threads_plugin *pl)
{
    const ddm_host *h = pl->host;
    if (!h->chunk_enabled(pl->self, THREADS_CHUNK_THCR) &&
        !h->chunk_enabled(pl->self, THREADS_CHUNK_THST))
        return 0; /* no view: nothing to keep */
    if (!pl->interval_ms)
        h->log(pl->self, DDM_LOG_INFO, "threads.interval is 0: THST polling is off");
    pl->poll_timer = h->timer_add(pl->self, tick_ms(pl), poll_timer_cb, pl, NULL);
    if (!pl->poll_timer) {
        h->log(pl->self, DDM_LOG_WARNING, "cannot start the threads poll timer");
        return -ENOMEM;
    }
    /* a first look at a view nobody watched gets its table at once (ABI 1.5) */
    (void)ddm_tick_wake_on_watch(h, pl->self, pl->poll_timer);
    /* a VM put on the list between ticks wakes the tick if it sleeps (1.7) */
    ddm_tick_list_set_timer(&pl->ticks, h, pl->self, pl->poll_timer);
    if (!pl->interval_ms || !h->chunk_enabled(pl->self, THREADS_CHUNK_THST))
        return 0; /* no counts to refresh */
    pl->look_timer = h->timer_add(pl->self, THREADS_LOOK_TIMER_MS, look_timer_cb, pl, NULL);
    if (!pl->look_timer)
        return 0; /* the counts stay as of READY and the polls */
    if (DDM_HOST_HAS(h, watch_generation) && h->watch_generation)
        pl->look_gen = h->watch_generation(pl->self);
    pl->list_look_due = 1;
    if (ddm_tick_wake_on_watch(h, pl->self, pl->look_timer) != 0) { /* a core before 1.5 */
        h->timer_remove(pl->self, pl->look_timer);
        pl->look_timer = 0;
    }
    return 0;
}
