/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's timers: adding and removing them, and firing them by hand
 * (no real time passes): all of them, or those that run when a watch
 * begins (ABI 1.5, fake_host_watch_begins). As the core (ABI 1.7), a
 * callback that returns DDM_TIMER_SLEEP leaves its timer asleep: firing
 * skips it until something wakes it (a move of the watch generation that
 * may count for a watch, a watch that begins, host->timer_wake); a wake
 * during its own run makes that run's sleep a keep. On a kit set to an
 * older ABI (fake_host_set_abi_minor < 7) DDM_TIMER_SLEEP is "keep".
 */
#include "kit-private.h"

void fh_timer_free(fh_timer *t)
{
    if (t->ud_free)
        t->ud_free(t->ud);
    free(t);
}

uint32_t fh_timer_add(ddm_plugin *self, unsigned interval_ms, ddm_timer_fn fn, void *ud,
                      ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_timer *t;
    /* As the core: an interval of 0 means "as often as possible" (1 ms). */
    if (!fn || fh->timers.n >= FH_MAX_ITEMS) {
        if (ud_free)
            ud_free(ud);
        return 0;
    }
    t = xcalloc(1, sizeof *t);
    t->id = ++fh->next_timer_id;
    t->interval = interval_ms ? interval_ms : 1;
    t->fn = fn;
    t->ud = ud;
    t->ud_free = ud_free;
    t->active = 1;
    vec_push(&fh->timers, t);
    return t->id;
}

void fh_timer_remove(ddm_plugin *self, uint32_t id)
{
    fake_host *fh = host_of(self);
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->id == id && t->active) {
            t->active = 0;
            if (!t->firing) {
                vec_remove_at(&fh->timers, i);
                fh_timer_free(t);
            }
            return;
        }
    }
}

int fh_timer_wake_on_watch(ddm_plugin *self, uint32_t id, int on)
{
    fake_host *fh = host_of(self);
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->id == id && t->active) {
            t->wake_on_watch = on != 0;
            return 0;
        }
    }
    return -ENOENT;
}

int fh_timer_wake(ddm_plugin *self, uint32_t id)
{
    fake_host *fh = host_of(self);
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->id == id && t->active) {
            if (t->firing)
                t->wake_asked = 1;
            t->sleeping = 0;
            return 0;
        }
    }
    return -ENOENT;
}

void fh_watch_gen_bump(fake_host *fh, int watches)
{
    size_t i;
    fh->watch_gen++;
    if (!watches)
        return;
    fh->watch_moves++;
    for (i = 0; i < fh->timers.n; i++)
        ((fh_timer *)fh->timers.v[i])->sleeping = 0;
}

int fake_host_timer_sleeping(fake_host *fh, uint32_t id)
{
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->id == id && t->active)
            return t->sleeping;
    }
    return -1;
}

int fake_host_n_timers_sleeping(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->active && t->sleeping)
            n++;
    }
    return n;
}

int fake_host_n_timers(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->timers.n; i++)
        if (((fh_timer *)fh->timers.v[i])->active)
            n++;
    return n;
}

unsigned fake_host_timer_interval(fake_host *fh, int idx)
{
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->active && idx-- == 0)
            return t->interval;
    }
    return 0;
}

/* Run the active timers that @only_woken selects (all that do not sleep,
 * or those that opted in to run when a watch begins: that wakes them)
 * once each, in creation order. */
static int fire_timers(fake_host *fh, int only_woken)
{
    uint32_t last = fh->next_timer_id; /* timers added while firing wait */
    int ran = 0;
    size_t i = 0;
    while (i < fh->timers.n) {
        fh_timer *t = fh->timers.v[i];
        if (t->active && t->id <= last && (only_woken ? t->wake_on_watch : !t->sleeping)) {
            int rc;
            uint64_t moves = fh->watch_moves; /* as the core's watch_gen before the run */
            t->sleeping = 0;
            t->wake_asked = 0;
            t->firing = 1;
            rc = t->fn(&fh->plugin, t->ud);
            t->firing = 0;
            ran++;
            if (rc == DDM_TIMER_STOP)
                t->active = 0;
            else if (rc == DDM_TIMER_SLEEP && fh->host.abi_minor >= 7 && !t->wake_asked &&
                     fh->watch_moves == moves) /* else the watches moved during the run: one more */
                t->sleeping = 1;
        }
        /* the list may have changed: find t again */
        for (i = 0; i < fh->timers.n && fh->timers.v[i] != t; i++)
            ;
        if (i < fh->timers.n && !t->active) {
            vec_remove_at(&fh->timers, i);
            fh_timer_free(t);
        } else {
            i++;
        }
    }
    return ran;
}

int fake_host_fire_timers(fake_host *fh)
{
    return fire_timers(fh, 0);
}

int fake_host_watch_begins(fake_host *fh)
{
    fh_watch_gen_bump(fh, 1);
    return fire_timers(fh, 1);
}
