/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/ticklist.h>: periodic ticks that touch only the VMs somebody
 * watches (header-only; ABI 1.4's ddm_host.watch_generation).
 *
 * A plugin that polls a VM only while one of its views has watchers used
 * to walk every VM on every tick (foreach_vm + view_watchers): O(N) per
 * tick with nobody looking. With a ddm_tick_list the tick walks every VM
 * only when ddm_tick_list_full_walk says the watches changed since its
 * last walk; otherwise it visits only the VMs on the list: those the
 * plugin put there because they were watched at their last visit, or have
 * something left to switch off. Each per-VM state embeds a ddm_tick_node;
 * the plugin takes a VM off the list at DDM_VM_GONE (before the core frees
 * the state) and wherever the VM has nothing left for the tick.
 *
 *     if (ddm_tick_list_full_walk(&pl->ticks, host, self))
 *         host->foreach_vm(self, visit, pl);      // visit adds or removes
 *     else
 *         for (n = pl->ticks.head; n; n = next) { next = n->next; visit_state(DDM_TICK_OWNER(n, my_vm, tick)); }
 *
 * On a core older than 1.4 every tick is a full walk (the old behaviour).
 *
 * Since 1.5 the tick can also run as soon as a watch begins
 * (ddm_tick_wake_on_watch, once after timer_add): the watch bumped the
 * generation, so that run is a full walk that polls the newly watched VMs.
 *
 * Since 1.7 a tick that has nothing to do sleeps: it returns
 * DDM_TIMER_SLEEP when its list is empty and nothing else of the plugin's
 * needs it (ddm_tick_list_idle), and the core arms it again when the
 * watches change (what moves the generation: a full walk is due then). A
 * VM the plugin puts on the list between ticks (data came, a view made
 * that must go after a linger) must wake it: bind the timer once with
 * ddm_tick_list_set_timer and ddm_tick_list_add does, when it makes the
 * list non-empty (ddm_timer_wake; nothing on an older core, where the
 * tick never sleeps).
 */
#ifndef DDMON_TICKLIST_H
#define DDMON_TICKLIST_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>

typedef struct ddm_tick_node {
    struct ddm_tick_node *prev, *next;
    int on; /**< on a list */
} ddm_tick_node;

typedef struct ddm_tick_list {
    ddm_tick_node *head;
    uint64_t gen;  /**< watch_generation at the last full walk */
    int gen_known; /**< gen was read */
    /* 1.7, ddm_tick_list_set_timer: the tick ddm_tick_list_add wakes */
    const ddm_host *host;
    ddm_plugin *self;
    uint32_t timer; /**< 0: none */
} ddm_tick_list;

/** Wake the plugin's timer @id if it sleeps (ABI 1.7's timer_wake): 0,
 *  -ENOSYS on an older core (where no timer sleeps: DDM_TIMER_SLEEP is
 *  "keep" there), or timer_wake's error. Since: 1.7 */
static inline int ddm_timer_wake(const ddm_host *h, ddm_plugin *self, uint32_t id)
{
    if (!DDM_HOST_HAS(h, timer_wake) || !h->timer_wake)
        return -ENOSYS;
    return h->timer_wake(self, id);
}

/** The tick (timer @id, from timer_add) that visits @l: ddm_tick_list_add
 *  wakes it when it makes the list non-empty. Since: 1.7 */
static inline void ddm_tick_list_set_timer(ddm_tick_list *l, const ddm_host *h, ddm_plugin *self,
                                           uint32_t id)
{
    l->host = h;
    l->self = self;
    l->timer = id;
}

/** 1 if no VM is on @l: with nothing else pending, its tick may return
 *  DDM_TIMER_SLEEP. Since: 1.7 */
static inline int ddm_tick_list_idle(const ddm_tick_list *l)
{
    return l->head == NULL;
}

/** The state that embeds node @n as member @member of type @type. */
#define DDM_TICK_OWNER(n, type, member) ((type *)(void *)((char *)(n) - offsetof(type, member)))

static inline void ddm_tick_list_add(ddm_tick_list *l, ddm_tick_node *n)
{
    if (n->on)
        return;
    if (l->head == NULL && l->timer) /* the tick may sleep: it has work now */
        (void)ddm_timer_wake(l->host, l->self, l->timer);
    n->prev = NULL;
    n->next = l->head;
    if (l->head)
        l->head->prev = n;
    l->head = n;
    n->on = 1;
}

static inline void ddm_tick_list_del(ddm_tick_list *l, ddm_tick_node *n)
{
    if (!n->on)
        return;
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    n->prev = n->next = NULL;
    n->on = 0;
}

/** On the list if @want, else off it. */
static inline void ddm_tick_list_keep(ddm_tick_list *l, ddm_tick_node *n, int want)
{
    if (want)
        ddm_tick_list_add(l, n);
    else
        ddm_tick_list_del(l, n);
}

/** 1 if this tick must walk every VM: the watches changed since the last
 *  full walk (or this is the first), or the core cannot tell (< 1.4). */
static inline int ddm_tick_list_full_walk(ddm_tick_list *l, const ddm_host *h, ddm_plugin *self)
{
    uint64_t gen;
    if (!DDM_HOST_HAS(h, watch_generation) || !h->watch_generation)
        return 1;
    gen = h->watch_generation(self);
    if (l->gen_known && gen == l->gen)
        return 0;
    l->gen = gen;
    l->gen_known = 1;
    return 1;
}

/** Have timer @id (the tick) run as soon as a frontend begins to watch or
 *  ask for views (ABI 1.5's timer_wake_on_watch): the first look at a view
 *  nobody watched then has the data of a poll without waiting for the
 *  tick. 0, or -ENOSYS on a core older than 1.5 (the tick then just comes
 *  at its interval), or timer_wake_on_watch's error. */
static inline int ddm_tick_wake_on_watch(const ddm_host *h, ddm_plugin *self, uint32_t id)
{
    if (!DDM_HOST_HAS(h, timer_wake_on_watch) || !h->timer_wake_on_watch)
        return -ENOSYS;
    return h->timer_wake_on_watch(self, id, 1);
}

#endif /* DDMON_TICKLIST_H */
