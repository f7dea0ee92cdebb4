/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: the per-VM thread list. An array sorted by VM thread id (binary
 * search), never longer than l->max (THREADS_MAX). THCR/THNM name threads
 * ("announced"); THST tables bring state, tid, CPU ticks and the daemon
 * flag. CPU % of one thread = delta(utime + stime) / hz / delta(wall) × 100
 * between two consecutive tables that both list it; the first table, a
 * tick counter that went backwards (tid reuse) or a zero time step give no
 * figure. Owns the names (malloc'd). No host calls.
 */
#include <stdlib.h>
#include <string.h>

#include "threads.h"

void thread_list_init(thread_list *l)
{
    memset(l, 0, sizeof *l);
    l->max = THREADS_MAX;
}

void thread_list_clear(thread_list *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Index of @id, or of where it would go (*found says which). */
static size_t lower_bound(const thread_list *l, uint32_t id, int *found)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < l->n && l->v[lo].id == id;
    return lo;
}

thread_info *thread_list_find(thread_list *l, uint32_t id)
{
    int found;
    size_t i = lower_bound(l, id, &found);
    return found ? &l->v[i] : NULL;
}

thread_info *thread_list_get(thread_list *l, uint32_t id)
{
    int found;
    size_t i = lower_bound(l, id, &found);
    if (found)
        return &l->v[i];
    if (l->n >= l->max)
        return NULL;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        thread_info *nv;
        if (ncap > l->max)
            ncap = l->max;
        nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof *l->v);
    memset(&l->v[i], 0, sizeof *l->v);
    l->v[i].id = id;
    l->n++;
    return &l->v[i];
}

int thread_list_remove(thread_list *l, uint32_t id)
{
    int found;
    size_t i = lower_bound(l, id, &found);
    if (!found)
        return 0;
    free(l->v[i].name);
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
    l->n--;
    return 1;
}

thread_info *thread_list_name(thread_list *l, uint32_t id, char *name)
{
    thread_info *t = thread_list_get(l, id);
    if (!t) {
        free(name);
        return NULL;
    }
    free(t->name);
    t->name = name;
    t->announced = 1;
    return t;
}

/* CPU % from the previous sample of @t to (@ticks, @now). */
static void update_cpu(thread_info *t, uint64_t ticks, double now, unsigned hz)
{
    double dt = now - t->prev_wall;
    t->has_cpu = 0;
    if (t->has_prev && ticks >= t->prev_ticks && dt > 0 && hz > 0) {
        t->cpu = (double)(ticks - t->prev_ticks) / (double)hz / dt * 100.0;
        t->has_cpu = 1;
    }
    t->has_prev = 1;
    t->prev_ticks = ticks;
    t->prev_wall = now;
}

size_t thread_list_apply_thst(thread_list *l, const thst_table *t, double now, unsigned hz)
{
    size_t i, dropped = 0;

    for (i = 0; i < l->n; i++)
        l->v[i].has_stats = -1; /* mark: not yet seen in this table (set to 1 when seen) */
    for (i = 0; i < t->n; i++) {
        const thst_entry *e = &t->e[i];
        thread_info *ti = thread_list_get(l, e->id);
        if (!ti) {
            dropped++;
            continue;
        }
        ti->has_stats = 1;
        ti->form = t->form;
        ti->status = e->status;
        ti->suspended = e->suspended;
        if (t->form == THST_FORM_REAL) {
            ti->tid = e->tid;
            ti->utime = e->utime;
            ti->stime = e->stime;
            ti->daemon = e->daemon;
            update_cpu(ti, (uint64_t)e->utime + e->stime, now, hz);
        } else {
            ti->has_prev = ti->has_cpu = 0;
        }
    }
    /* threads this table did not list */
    for (i = l->n; i > 0; i--) {
        thread_info *ti = &l->v[i - 1];
        if (ti->has_stats == 1)
            continue;
        if (ti->announced) {
            ti->has_stats = 0;
            ti->has_prev = ti->has_cpu = 0;
        } else {
            thread_list_remove(l, ti->id);
        }
    }
    return dropped;
}
