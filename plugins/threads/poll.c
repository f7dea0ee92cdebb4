/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: THST polling. Real VMs never push THST; they answer an empty
 * THST request with the table (ddmlib polls from a UI timer). One timer
 * per plugin ticks every min(threads.interval, 250) ms and sends THST to
 * each VM whose "threads" view someone watches (host->view_watchers > 0, a
 * snapshot counts): at once when the watch begins, then every
 * threads.interval ms, with at most one THST in flight per VM. Nothing is
 * sent while nobody looks, or when THST is disabled.
 * The reply callback holds only the plugin (never per-VM state, which may
 * be gone); it finds the VM's state again with host->vm_get_data. A reply
 * to a THST sent while THEN was unanswered ends THEN's wait
 * (threads_then_passed: ART never answers THEN, but answers in order).
 * A tick walks every VM only when the watches changed since its last walk
 * (<ddmon/ticklist.h>, ABI 1.4); otherwise only the VMs watched at their
 * last visit: an idle server's tick touches no VM (issue 16).
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

static void thst_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st;
    if (reply->status == DDM_REPLY_VM_GONE)
        return; /* the VM's state is (being) freed */
    st = pl->host->vm_get_data(self, vm);
    if (!st)
        return;
    st->thst_in_flight = 0;
    int after_then = st->thst_after_then;
    switch (reply->status) {
    case DDM_REPLY_CHUNK:
        if (reply->type == THREADS_CHUNK_THST)
            (void)threads_handle_thst(st, reply->data, reply->len, 1);
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
}

/* The timer's period: short enough to notice a new watcher quickly. */
static unsigned tick_ms(const threads_plugin *pl)
{
    return pl->interval_ms < THREADS_TICK_MS ? pl->interval_ms : THREADS_TICK_MS;
}

/* One tick's work for one VM (host->foreach_vm visits the ready ones). */
typedef struct poll_tick {
    threads_plugin *pl;
    double now, period, slack;
} poll_tick;

static int poll_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const poll_tick *t = ud;
    threads_plugin *pl = t->pl;
    const ddm_host *h = pl->host;
    threads_vm *st = h->vm_get_data(self, vm);
    int rc;
    if (!st)
        return 0;
    if (!st->view || h->view_watchers(st->view) <= 0) {
        st->was_watched = 0;
        ddm_tick_list_del(&pl->ticks, &st->tick);
        return 0;
    }
    ddm_tick_list_add(&pl->ticks, &st->tick);
    if (st->thst_in_flight)
        return 0;
    if (st->was_watched && t->now - st->last_poll < t->period - t->slack)
        return 0;
    rc = h->request(pl->self, st->vm, THREADS_CHUNK_THST, NULL, 0, thst_timeout_ms(pl), thst_reply,
                    pl, NULL);
    if (rc == 0) {
        st->thst_in_flight = 1;
        st->thst_after_then = st->then_in_flight;
        st->was_watched = 1;
        st->last_poll = t->now;
    } else {
        h->log(pl->self, DDM_LOG_DEBUG, "THST not sent: error %d", rc);
    }
    return 0;
}

void threads_poll_once(threads_plugin *pl)
{
    poll_tick t;
    if (!pl->host->chunk_enabled(pl->self, THREADS_CHUNK_THST))
        return;
    t.pl = pl;
    t.now = pl->now();
    t.period = pl->interval_ms / 1000.0;
    t.slack = tick_ms(pl) / 2000.0; /* a tick that comes a little early still counts */
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
    threads_poll_once(ud);
    return 1;
}

int threads_poll_start(threads_plugin *pl)
{
    if (!pl->interval_ms) {
        pl->host->log(pl->self, DDM_LOG_INFO, "threads.interval is 0: THST polling is off");
        return 0;
    }
    pl->poll_timer = pl->host->timer_add(pl->self, tick_ms(pl), poll_timer_cb, pl, NULL);
    if (!pl->poll_timer) {
        pl->host->log(pl->self, DDM_LOG_WARNING, "cannot start the THST poll timer");
        return -ENOMEM;
    }
    /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
    (void)ddm_tick_wake_on_watch(pl->host, pl->self, pl->poll_timer);
    return 0;
}
