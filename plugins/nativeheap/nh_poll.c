/* SPDX-License-Identifier: Apache-2.0
 *
 * nh_poll: NHGT and NHSG while someone looks. The NHGT views (nativeheap.summary,
 * nativeheap.allocations, nativeheap.backtraces) are otherwise empty until
 * `ddmon native-heap PID`. One timer per plugin ticks every NH_TICK_MS and
 * sends an empty NHGT to each ready VM one of whose NHGT views has a
 * watcher (host->view_watchers > 0; a snapshot and a one-shot `ddmon view`
 * count): at once when the watch begins, then at most every
 * nativeheap.interval ms while it lasts, with at most one polling NHGT in
 * flight per VM. Nothing is sent while nobody looks (NHGT makes the VM
 * copy its whole native allocation table), when NHGT is disabled, or with
 * nativeheap.interval=0 (then only the command asks).
 * The same tick switches native heap segments: NHSG(when 1 "every GC",
 * what 0) to each ready VM whose nativeheap.segments view has a watcher,
 * NHSG(0, 1) (ddmlib's "off" form) once nobody watched it for
 * nativeheap.grace_ms, so a flickering watch or a one-shot view does not
 * toggle it constantly; with nativeheap.always=1 "on" at once, never off.
 * Never with nativeheap.segments=0 or NHSG disabled. segments_on says
 * what the VM was told last; a failed switch (either way) is retried at
 * the next tick, logged once until one succeeds. A gone VM is told nothing.
 * The reply callback holds only the plugin, never per-VM state (which may
 * be gone); it finds the VM's state again with host->vm_get_data.
 * A VM that becomes ready gets its own check at once (nh_poll_vm), not a
 * walk of every VM: with N VMs starting, a walk per VM was O(N^2) (39% of
 * the CPU at N = 5,000, issue 16). A tick walks every VM only when the
 * watches changed since its last walk (host->watch_generation, ABI 1.4;
 * every tick on an older core); otherwise it visits only the VMs on
 * np->ticks (<ddmon/ticklist.h>): those watched at their last visit, and those with
 * segments to switch (on with always=1, off after the grace). An idle
 * server's tick then touches no VM at all.
 * With np->ticks empty the tick sleeps (ABI 1.7, DDM_TIMER_SLEEP): its
 * per-VM work is then nil until a wake. The list holds every VM whose
 * next tick has something to do without a change of the watches: a
 * watched one (NHGT polls, segments on), segments to switch off after
 * the grace or to retry on (always=1), and data nobody asked for to shed
 * (data_came; it stays while an update collects, so an update that never
 * ends is dropped NH_UPDATE_STALL_MS after its last piece, and until
 * its views went). What puts a VM on the list outside the tick (data
 * came, a VM ready under a watch: nh_poll_vm) goes through
 * ddm_tick_list_add, which wakes the sleeping tick (ddm_tick_list_set_timer).
 * Everything else moves the core's watch generation, which wakes it for
 * the full walk that is then due: a watch begins or ends, a view is made
 * while a watch exists. Not on the list (as before 1.7, checked only by
 * a full walk): a stalled update of a VM with nativeheap.always=1, whose
 * state stays with the VM anyway.
 */
#include "nativeheap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double nh_monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void poll_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    nh_plugin *np = ud;
    const ddm_host *h = np->host;
    nh_vm *nv;
    nhgt_info in;
    uint64_t allocs, bytes;
    char err[256], label[128];
    const char *why = NULL;

    if (reply->status == DDM_REPLY_VM_GONE)
        return; /* the VM's state is (being) freed */
    nv = h->vm_get_data(self, vm);
    if (!nv)
        return;
    nv->nhgt_in_flight = 0;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == NH_CHUNK_NHGT) {
        if (nhgt_parse(reply->data, reply->len, &in, err, sizeof err) != 0)
            h->log(self, DDM_LOG_WARNING, "VM %s sent a bad NHGT reply (%zu bytes): %s",
                   nh_vm_label(np, vm, label, sizeof label), reply->len, err);
        else if (nh_views_nhgt(nv, &in, &allocs, &bytes) != 0)
            h->log(self, DDM_LOG_WARNING, "VM %s: no memory for the NHGT views",
                   nh_vm_label(np, vm, label, sizeof label));
        return;
    }
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        why = reply->fail_msg ? reply->fail_msg : "refused, no message";
    else if (reply->status == DDM_REPLY_CHUNK)
        why = "answered with another chunk type";
    else if (reply->status == DDM_REPLY_EMPTY)
        why = "empty reply (not supported?)";
    else if (reply->status == DDM_REPLY_ERROR)
        why = "JDWP error";
    else if (reply->status == DDM_REPLY_TIMEOUT)
        why = "no reply in time";
    else
        why = "bad reply";
    /* It will be asked again every interval: say it once per VM. */
    h->log(self, nv->nhgt_fail_logged ? DDM_LOG_DEBUG : DDM_LOG_INFO,
           "VM %s: no native heap data from NHGT: %s", nh_vm_label(np, vm, label, sizeof label),
           why);
    nv->nhgt_fail_logged = 1;
    nh_vm_release_if_idle(nv); /* the NHGT outlived its views */
}

static int nhgt_watched(const nh_vm *nv)
{
    const ddm_host *h = nv->np->host;
    ddm_view *const views[] = { nv->summary, nv->allocations, nv->backtraces };
    size_t i;
    for (i = 0; i < sizeof views / sizeof views[0]; i++)
        if (views[i] && h->view_watchers(views[i]) > 0)
            return 1;
    return 0;
}

static void poll_nhgt(nh_plugin *np, nh_vm *nv, double now)
{
    const ddm_host *h = np->host;
    double period = np->opts.interval_ms / 1000.0;
    double slack = NH_TICK_MS / 2000.0; /* a tick that comes a little early still counts */
    int rc;

    if (!nv->ready || !nhgt_watched(nv)) {
        nv->was_watched = 0;
        return;
    }
    if (nv->nhgt_in_flight)
        return;
    if (nv->was_watched && now - nv->last_nhgt < period - slack)
        return;
    rc = h->request(np->self, nv->vm, NH_CHUNK_NHGT, NULL, 0, np->opts.timeout_ms, poll_reply,
                    np, NULL);
    if (rc == 0) {
        nv->nhgt_in_flight = 1;
        nv->was_watched = 1;
        nv->last_nhgt = now;
    } else {
        h->log(np->self, DDM_LOG_DEBUG, "NHGT not sent: error %d", rc);
    }
}

static int segments_switchable(nh_plugin *np)
{
    return np->opts.segments && np->host->chunk_enabled(np->self, NH_CHUNK_NHSG);
}

/* Tell the VM NHSG(1, 0) (on) or NHSG(0, 1) (off); segments_on follows
 * only a request that went out. */
static void switch_segments(nh_vm *nv, int on)
{
    nh_plugin *np = nv->np;
    const ddm_host *h = np->host;
    static const uint8_t req_on[2] = { 1, 0 }, req_off[2] = { 0, 1 };
    char label[128];
    int rc = h->request(np->self, nv->vm, NH_CHUNK_NHSG, on ? req_on : req_off, 2, 0,
                        nh_on_request_reply, np, NULL);
    if (rc) {
        h->log(np->self, nv->seg_fail_logged ? DDM_LOG_DEBUG : DDM_LOG_INFO,
               "cannot send NHSG(%s) to VM %s: %s (retrying)", on ? "1, 0" : "0, 1",
               nh_vm_label(np, nv->vm, label, sizeof label), strerror(-rc));
        nv->seg_fail_logged = 1;
        return;
    }
    nv->seg_fail_logged = 0;
    nv->segments_on = on;
    if (!on)
        h->log(np->self, DDM_LOG_DEBUG, "VM %s: nobody watches its native heap segments: NHSG off",
               nh_vm_label(np, nv->vm, label, sizeof label));
}

static void update_segments(nh_plugin *np, nh_vm *nv, double now)
{
    if (!nv->ready)
        return;
    if (np->opts.always) {
        if (!nv->segments_on)
            switch_segments(nv, 1);
        return;
    }
    if (nv->segments && np->host->view_watchers(nv->segments) > 0) {
        nv->seg_last_wanted = now;
        if (!nv->segments_on)
            switch_segments(nv, 1);
    } else if (nv->segments_on && (now - nv->seg_last_wanted) * 1000.0 >= (double)np->opts.grace_ms) {
        switch_segments(nv, 0);
    }
}

/* ------------------------------------------------------------ the tick list */

void nh_poll_forget(nh_plugin *np, nh_vm *nv)
{
    ddm_tick_list_del(&np->ticks, &nv->tick);
}

/* Whether the next tick must visit @nv even if no watch changes. */
static int needs_tick(const nh_plugin *np, const nh_vm *nv)
{
    if (nv->data_came)
        return 1; /* to free what nobody asked for once idle */
    if (!nv->ready)
        return 0;
    if (nv->tick_watched)
        return 1;
    return np->opts.always ? !nv->segments_on : nv->segments_on;
}

void nh_poll_data_came(nh_plugin *np, nh_vm *nv)
{
    if (nv->data_came || !np->lazy_views || np->opts.always)
        return; /* before 1.6 or with nativeheap.always the state stays with the VM */
    nv->data_came = 1;
    ddm_tick_list_add(&np->ticks, &nv->tick);
}

void nh_poll_data_shed(nh_plugin *np, nh_vm *nv)
{
    nv->data_came = 0;
    ddm_tick_list_keep(&np->ticks, &nv->tick, needs_tick(np, nv));
}

/* One tick's work, for each ready VM (host->foreach_vm). */
typedef struct nh_tick {
    nh_plugin *np;
    int nhgt, nhsg;
    double now;
} nh_tick;

static int poll_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const nh_tick *t = ud;
    nh_vm *nv = t->np->host->vm_get_data(self, vm);
    if (!nv)
        return 0;
    nv->tick_watched = nv->ready && ((t->nhgt && nhgt_watched(nv)) ||
                                     (t->nhsg && nv->segments &&
                                      t->np->host->view_watchers(nv->segments) > 0));
    if (t->nhgt)
        poll_nhgt(t->np, nv, t->now);
    if (t->nhsg)
        update_segments(t->np, nv, t->now);
    ddm_tick_list_keep(&t->np->ticks, &nv->tick, needs_tick(t->np, nv));
    nh_vm_drop_stalled(nv);    /* an update that never ends is not kept */
    nh_vm_release_if_idle(nv); /* NHSG off after its views went */
    return 0;
}

/* Fill @t; whether the tick has anything to send (NHGT or NHSG). */
static int tick_prepare(nh_plugin *np, nh_tick *t)
{
    t->np = np;
    t->nhgt = np->opts.interval_ms && np->host->chunk_enabled(np->self, NH_CHUNK_NHGT);
    t->nhsg = segments_switchable(np);
    t->now = np->now();
    return t->nhgt || t->nhsg;
}

/* poll_vm for a VM of foreach_vm's walk: known READY (state made by data
 * of a VM ready then has ready 0 until here or its make callback). */
static int poll_ready_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    const nh_tick *t = ud;
    nh_vm *nv = t->np->host->vm_get_data(self, vm);
    if (nv)
        nv->ready = 1;
    return poll_vm(self, vm, ud);
}

void nh_poll_once(nh_plugin *np)
{
    nh_tick t;
    ddm_tick_node *n, *next;
    /* With nothing to send (NHGT and NHSG off) the list still holds the VMs
     * whose data came: their stalled updates drop and their data goes once
     * idle, or the tick would keep for them forever (review rI 3). */
    if (tick_prepare(np, &t) && ddm_tick_list_full_walk(&np->ticks, np->host, np->self)) {
        np->host->foreach_vm(np->self, poll_ready_vm, &t);
        return;
    }
    for (n = np->ticks.head; n; n = next) {
        next = n->next; /* poll_vm may take this one off the list */
        poll_vm(np->self, DDM_TICK_OWNER(n, nh_vm, tick)->vm, &t);
    }
}

void nh_poll_vm(nh_plugin *np, ddm_vm *vm)
{
    nh_tick t;
    if (tick_prepare(np, &t))
        poll_vm(np->self, vm, &t);
}

static int poll_timer_cb(ddm_plugin *self, void *ud)
{
    nh_plugin *np = ud;
    (void)self;
    nh_poll_once(np);
    return ddm_tick_list_idle(&np->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

int nh_poll_start(nh_plugin *np)
{
    int nhsg = segments_switchable(np); /* the tick also retries a failed always=1 "on" */
    if (!np->opts.interval_ms)
        np->host->log(np->self, DDM_LOG_INFO,
                      "nativeheap.interval is 0: NHGT only on 'ddmon native-heap'");
    if (np->opts.always && segments_switchable(np))
        np->host->log(np->self, DDM_LOG_INFO,
                      "nativeheap.always=1: native heap segments on for every VM, watched or not");
    if (!np->opts.interval_ms && !nhsg)
        return 0;
    np->poll_timer = np->host->timer_add(np->self, NH_TICK_MS, poll_timer_cb, np, NULL);
    if (!np->poll_timer) {
        np->host->log(np->self, DDM_LOG_WARNING, "cannot start the native heap poll timer");
        return -ENOMEM;
    }
    /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
    (void)ddm_tick_wake_on_watch(np->host, np->self, np->poll_timer);
    /* a VM put on the list between ticks wakes the tick if it sleeps (1.7) */
    ddm_tick_list_set_timer(&np->ticks, np->host, np->self, np->poll_timer);
    return 0;
}
