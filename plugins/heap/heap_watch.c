/* SPDX-License-Identifier: Apache-2.0
 *
 * heap_watch: heap collection only while someone looks, as DDMS did (it
 * asked only the selected client, when the user turned heap updates on).
 *
 * A VM "wants" collection while any of its heap views (heap.summary,
 * heap.segments, heap.histogram, heap.fragmentation, heap.bitmap, heap.map) has a
 * watcher (host->view_watchers > 0; a snapshot and a one-shot `ddmon view`
 * count), or while a command holds it (heap-bitmap waiting for segments).
 * One plugin timer ticks every HEAP_WATCH_TICK_MS and, per ready VM:
 *  - wanted and off: sends the "on" requests: HPIF(1 "now", so the summary
 *    is fresh at once) and HPIF(heap.hpif_when) when that is 2 or 3 (only
 *    HPIF(1) when it is 1), and HPSG(1 every GC, heap.what);
 *  - not wanted for heap.grace_ms while on: sends the "off" forms HPIF(0
 *    never) and HPSG(0 disable, heap.what) for what it switched on, so a
 *    flickering watch or a one-shot view does not toggle it constantly.
 * heap.always=1 keeps the old behaviour: "on" at DDM_VM_READY, never off,
 * no timer. Disabled chunk types are never requested.
 * A GC asked of a watched VM in the moment before the tick switched
 * segments on (a snapshot --gc through a server watches and asks for GCs at
 * once) would bring none: a tap on HPGC requests sees it, switches
 * collection on at once and asks for one more GC, after the HPSG.
 * Invariants: hpif_on/segments_on say what the VM was told last; a failed
 * "on" is retried at the next tick (logged once), a failed "off" too.
 * A tick walks every ready VM only when the watches changed since its last
 * walk (host->watch_generation, ABI 1.4; every tick on an older core);
 * otherwise only the VMs on hp->ticks (<ddmon/ticklist.h>): wanted at their last
 * update, or with collection to switch off after the grace (issue 16: an
 * idle tick touches no VM).
 * With hp->ticks empty the tick sleeps (ABI 1.7, DDM_TIMER_SLEEP): the
 * list holds every VM whose next tick has work without a change of the
 * watches: wanted (a watched view, a command's hold), collecting or with
 * HPIF/HPSG on (switched off after the grace), data to shed (data_came;
 * kept while an update collects, so an update that never ends is dropped
 * HEAP_UPDATE_STALL_MS after its last piece). A VM put on it outside the
 * tick (data came, a hold, a VM ready under a watch) goes through
 * ddm_tick_list_add, which wakes the sleeping tick
 * (ddm_tick_list_set_timer). A watch that begins or ends, or a view made
 * while a watch exists, moves the core's watch generation, which wakes it
 * for the full walk then due.
 * Non-goals: HPGC (heap-bitmap asks for its own GC; `ddmon gc` is vminfo's).
 */
#include "heap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int heap_watch_can_segments(heap_plugin *hp)
{
    const ddm_host *h = hp->host;
    return hp->opts.segments && h->chunk_enabled(hp->self, HEAP_CHUNK_HPSG) &&
           (hp->opts.what == 0 || h->chunk_enabled(hp->self, HEAP_CHUNK_HPSO));
}

static int send_one(heap_vm *hv, uint32_t type, const uint8_t *data, size_t len, const char *what)
{
    heap_plugin *hp = hv->hp;
    char label[128];
    int rc = hp->host->request(hp->self, hv->vm, type, data, len, 0, heap_on_request_reply, hp,
                               NULL);
    if (rc && !hv->on_failed_logged) {
        hp->host->log(hp->self, DDM_LOG_INFO, "cannot send %s to VM %s: %s (retrying)", what,
                      heap_vm_label(hp, hv->vm, label, sizeof label), strerror(-rc));
        hv->on_failed_logged = 1; /* once until a switch succeeds */
    }
    return rc;
}

/* Send the "on" requests; collecting = 1 once every one of them went out. */
static void collect_on(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    const ddm_host *h = hp->host;
    int failed = 0;

    if (hp->opts.hpif_when && h->chunk_enabled(hp->self, HEAP_CHUNK_HPIF) && !hv->hpif_on) {
        uint8_t when = (uint8_t)hp->opts.hpif_when;
        static const uint8_t now = 1;
        /* "Now" first: an idle VM may not collect for minutes, and the
         * summary should not stay empty (or stale) until it does. */
        if (send_one(hv, HEAP_CHUNK_HPIF, &now, 1, "HPIF(now)"))
            failed = 1;
        else if (when >= 2 && send_one(hv, HEAP_CHUNK_HPIF, &when, 1, "HPIF"))
            failed = 1;
        else if (when >= 2)
            hv->hpif_on = 1;
    }
    if (heap_watch_can_segments(hp) && !hv->segments_on) {
        uint8_t req[2] = { 1, (uint8_t)hp->opts.what };
        if (send_one(hv, HEAP_CHUNK_HPSG, req, 2, "HPSG"))
            failed = 1;
        else
            hv->segments_on = 1;
    }
    if (!failed)
        hv->on_failed_logged = 0;
    hv->collecting = !failed;
}

/* Send the "off" forms for what collect_on switched on. Not collecting
 * from here on, even if a send fails: what is still on is retried by the
 * next update (hpif_on / segments_on), and a new watcher switches on
 * whatever is off again (collect_on). */
static void collect_off(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    char label[128];
    int failed = 0;

    hv->collecting = 0;

    if (hv->hpif_on) {
        static const uint8_t never = 0;
        if (send_one(hv, HEAP_CHUNK_HPIF, &never, 1, "HPIF(0)"))
            failed = 1;
        else
            hv->hpif_on = 0;
    }
    if (hv->segments_on) {
        uint8_t req[2] = { 0, (uint8_t)hp->opts.what };
        if (send_one(hv, HEAP_CHUNK_HPSG, req, 2, "HPSG(0)"))
            failed = 1;
        else
            hv->segments_on = 0;
    }
    if (!failed) {
        hv->on_failed_logged = 0;
        hp->host->log(hp->self, DDM_LOG_DEBUG, "VM %s: nobody watches its heap views: collection off",
                      heap_vm_label(hp, hv->vm, label, sizeof label));
    }
}

static int wanted(const heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    ddm_view *const views[] = { hv->summary, hv->segments, hv->histogram, hv->frag, hv->bitmap, hv->map };
    size_t i;
    if (hv->holds)
        return 1;
    for (i = 0; i < sizeof views / sizeof views[0]; i++)
        if (views[i] && h->view_watchers(views[i]) > 0)
            return 1;
    return 0;
}

void heap_watch_forget(heap_vm *hv)
{
    ddm_tick_list_del(&hv->hp->ticks, &hv->tick);
}

/* On the tick list while the next tick has something to look at: a
 * collection to follow, or data to shed once idle. */
static void update_tick_list(heap_vm *hv)
{
    ddm_tick_list_keep(&hv->hp->ticks, &hv->tick,
                       hv->data_came ||
                           (hv->ready && !hv->hp->opts.always &&
                            (hv->tick_wanted || hv->collecting || hv->hpif_on || hv->segments_on)));
}

void heap_watch_data_came(heap_vm *hv)
{
    if (hv->data_came || !hv->hp->lazy_views || hv->hp->opts.always)
        return; /* before 1.6 or with heap.always the state stays with the VM */
    hv->data_came = 1;
    update_tick_list(hv);
}

void heap_watch_data_shed(heap_vm *hv)
{
    hv->data_came = 0;
    update_tick_list(hv);
}

void heap_watch_update(heap_vm *hv)
{
    heap_plugin *hp = hv->hp;
    double now;
    if (!hv->ready) {
        update_tick_list(hv);
        return;
    }
    heap_views_map(hv, 0); /* a watcher that came after the last update */
    heap_views_bitmap(hv, 0);
    if (hp->opts.always) {
        if (!hv->collecting)
            collect_on(hv);
        return;
    }
    now = hp->now();
    hv->tick_wanted = wanted(hv);
    if (hv->tick_wanted) {
        hv->last_wanted = now;
        if (!hv->collecting)
            collect_on(hv);
    } else if ((hv->collecting || hv->hpif_on || hv->segments_on) &&
               (now - hv->last_wanted) * 1000.0 >= (double)hp->opts.grace_ms) {
        collect_off(hv);
    }
    update_tick_list(hv);
}


void heap_watch_ready(heap_vm *hv)
{
    hv->ready = 1;
    heap_watch_update(hv);
}

void heap_watch_hold(heap_vm *hv)
{
    hv->holds++;
    heap_watch_update(hv);
}

void heap_watch_release(heap_vm *hv)
{
    if (hv->holds)
        hv->holds--;
    hv->last_wanted = hv->hp->now();
}

/* Tap: an HPGC request went out to @vm (from vminfo's gc, a snapshot --gc,
 * a debugger through the relay does not pass here). */
static int on_hpgc_request(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv;
    char label[128];
    int rc;
    (void)self, (void)data, (void)len;
    if (ci->origin != DDM_ORIGIN_REQUEST)
        return DDM_OK;
    hv = hp->host->vm_get_data(hp->self, vm);
    if (!hv || !hv->ready || hv->segments_on || !heap_watch_can_segments(hp) || !wanted(hv))
        return DDM_OK;
    heap_watch_update(hv);
    if (!hv->segments_on)
        return DDM_OK;
    /* This GC went out before HPSG: ask for another one, after it. */
    rc = hp->host->request(hp->self, vm, HEAP_CHUNK_HPGC, NULL, 0, HEAP_BITMAP_GC_TIMEOUT_MS,
                           heap_on_request_reply, hp, NULL);
    hp->host->log(hp->self, DDM_LOG_INFO,
                  "VM %s: a GC was asked as its heap views began to be watched, before heap "
                  "segments were on: %s",
                  heap_vm_label(hp, vm, label, sizeof label),
                  rc ? "cannot ask for another GC" : "asked for another GC");
    return DDM_OK;
}

static int tick_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    heap_plugin *hp = ud;
    heap_vm *hv = hp->host->vm_get_data(self, vm);
    if (hv) {
        hv->ready = 1; /* foreach_vm walks the ready VMs (state made by data
                          of a VM ready then, views made with that data) */
        heap_watch_update(hv);
        heap_vm_drop_stalled(hv);    /* an update that never ends is not kept */
        heap_vm_release_if_idle(hv); /* collection off after its views went */
    }
    return 0;
}

static int on_tick(ddm_plugin *self, void *ud)
{
    heap_plugin *hp = ud;
    ddm_tick_node *n, *next;
    if (ddm_tick_list_full_walk(&hp->ticks, hp->host, self)) {
        hp->host->foreach_vm(self, tick_vm, hp);
        return ddm_tick_list_idle(&hp->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
    }
    for (n = hp->ticks.head; n; n = next) {
        heap_vm *hv = DDM_TICK_OWNER(n, heap_vm, tick);
        next = n->next; /* the update may take this one off the list, or free it */
        heap_watch_update(hv);
        heap_vm_drop_stalled(hv);    /* an update that never ends is not kept */
        heap_vm_release_if_idle(hv); /* collection off after its views went */
    }
    return ddm_tick_list_idle(&hp->ticks) ? DDM_TIMER_SLEEP : DDM_TIMER_KEEP;
}

int heap_watch_start(heap_plugin *hp)
{
    int rc;
    if (hp->opts.always) {
        hp->host->log(hp->self, DDM_LOG_INFO,
                      "heap.always=1: heap collection on for every VM, watched or not");
        return 0;
    }
    rc = hp->host->register_tap(hp->self, HEAP_CHUNK_HPGC, on_hpgc_request, hp, NULL);
    if (rc)
        return rc;
    hp->watch_timer = hp->host->timer_add(hp->self, HEAP_WATCH_TICK_MS, on_tick, hp, NULL);
    if (!hp->watch_timer) {
        hp->host->log(hp->self, DDM_LOG_WARNING, "cannot start the heap watch timer");
        return -ENOMEM;
    }
    /* a first look at a view nobody watched gets a poll at once (ABI 1.5) */
    (void)ddm_tick_wake_on_watch(hp->host, hp->self, hp->watch_timer);
    /* a VM put on the list between ticks wakes the tick if it sleeps (1.7) */
    ddm_tick_list_set_timer(&hp->ticks, hp->host, hp->self, hp->watch_timer);
    return 0;
}
