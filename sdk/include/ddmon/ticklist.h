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
} ddm_tick_list;

/** The state that embeds node @n as member @member of type @type. */
#define DDM_TICK_OWNER(n, type, member) ((type *)(void *)((char *)(n) - offsetof(type, member)))

static inline void ddm_tick_list_add(ddm_tick_list *l, ddm_tick_node *n)
{
    if (n->on)
        return;
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
