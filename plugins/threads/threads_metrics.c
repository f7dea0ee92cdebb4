/* SPDX-License-Identifier: Apache-2.0
 *
 * The threads plugin's metric families (ABI 1.3 register_metric,
 * vm_metric): the VM's threads by state ("threads", a gauge) and the CPU
 * time its threads used by state ("thread_cpu_seconds_total", a counter).
 * A THST table gives each thread's utime + stime in clock ticks
 * (threads.hz a second, doc/protocol.md "THST"); the ticks a thread used
 * since the previous table are added to the state it is in now, so the
 * totals only grow, also when threads change state or exit. The first
 * table of a thread adds nothing (no previous sample). State names are the
 * threads view's; codes past THREADS_METRIC_STATES - 2 share "other", and
 * threads no THST listed yet count as "unknown". The samples exist while
 * the VM's table is kept (threads.c): a scrape counts as a look at every
 * VM's "threads" view (the families' view), so a scraped VM has its table.
 * When the table goes, so do its samples (a VM nobody looks at holds none:
 * ~530 bytes a VM, bench/vmmem.sh); the CPU totals stay in the plugin and
 * are published again, from where they were, with the next table (the
 * ticks between two THST need the per-thread list). They are made with the
 * first tick a thread used, and keep the VM's threads_vm from going back
 * to a count (threads_vm_settle): a counter never goes back; a VM whose
 * threads used no CPU between its tables has none to keep.
 */
#include <stdio.h>
#include <stdlib.h>

#include "threads.h"

static const ddm_metric_family threads_families[] = {
    {"threads", DDM_METRIC_GAUGE, NULL, "The VM's threads by state", "state", "threads"},
    {"thread_cpu_seconds_total", DDM_METRIC_COUNTER, "seconds",
     "CPU time (user + system) the VM's threads used, by the state they were in at each THST",
     "state", "threads"},
};

int threads_metrics_register(threads_plugin *pl)
{
    size_t i;
    if (!DDM_HOST_HAS(pl->host, register_metric))
        return 0; /* a core before 1.3: no /metrics */
    for (i = 0; i < sizeof threads_families / sizeof threads_families[0]; i++) {
        int rc = pl->host->register_metric(pl->self, &threads_families[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static unsigned state_slot(uint8_t status)
{
    return status < THREADS_METRIC_STATES - 1 ? status : THREADS_METRIC_STATES - 1;
}

static const char *slot_name(unsigned slot, char buf[16])
{
    return slot == THREADS_METRIC_STATES - 1 ? "other" : threads_state_name((uint8_t)slot, buf);
}

void threads_metrics_account(threads_vm *st)
{
    size_t i;
    for (i = 0; i < st->list.n; i++) {
        const thread_info *t = &st->list.v[i];
        if (t->has_stats != 1 || !t->has_cpu || !t->stats->delta_ticks)
            continue; /* nothing to add: no block for sums that are all 0 (a VM
                         whose threads used no CPU can go back to a count) */
        if (!st->cpu_ticks)
            st->cpu_ticks = calloc(THREADS_METRIC_STATES, sizeof *st->cpu_ticks);
        if (!st->cpu_ticks)
            return; /* out of memory: no CPU figures */
        st->cpu_ticks[state_slot(t->status)] += t->stats->delta_ticks;
    }
}

/* Set the VM's samples: @counts threads by state slot, @unknown without
 * a state, and the CPU totals. */
static void publish_counts(threads_vm *st, const size_t counts[THREADS_METRIC_STATES],
                           size_t unknown)
{
    const ddm_host *h = st->pl->host;
    ddm_metric_sample threads[THREADS_METRIC_STATES + 1], cpu[THREADS_METRIC_STATES];
    char names[THREADS_METRIC_STATES][16];
    size_t n_threads = 0, n_cpu = 0;
    unsigned s;
    int logged = st->c.metric_logged; /* kept in the count: once per VM */
    for (s = 0; s < THREADS_METRIC_STATES; s++) {
        int has_cpu = st->cpu_ticks && st->cpu_ticks[s];
        const char *name;
        if (!counts[s] && !has_cpu)
            continue; /* no series: no name (most slots, most of the time) */
        name = slot_name(s, names[s]);
        if (counts[s])
            threads[n_threads++] = (ddm_metric_sample){name, (double)counts[s]};
        if (has_cpu)
            cpu[n_cpu++] = (ddm_metric_sample){name, (double)st->cpu_ticks[s] / (double)st->pl->hz};
    }
    if (unknown)
        threads[n_threads++] = (ddm_metric_sample){"unknown", (double)unknown};
    ddm_vm_metric_logged(h, st->pl->self, st->vm, "threads", threads, n_threads, &logged);
    /* CPU sums come with the first CPU figure: before it there is no
     * series to set or remove (a VM whose table was never kept has none),
     * and the host's call is not free (half of this function's cost at
     * READY with 1,000 VMs) */
    if (st->cpu_ticks)
        ddm_vm_metric_logged(h, st->pl->self, st->vm, "thread_cpu_seconds_total", cpu, n_cpu,
                             &logged);
    st->c.metric_logged = logged != 0;
}

void threads_metrics_publish(threads_vm *st)
{
    size_t counts[THREADS_METRIC_STATES] = {0}, unknown = 0, i;
    if (!DDM_HOST_HAS(st->pl->host, vm_metric))
        return;
    for (i = 0; i < st->list.n; i++) {
        const thread_info *t = &st->list.v[i];
        if (t->has_stats)
            counts[state_slot(t->status)]++;
        else
            unknown++;
    }
    publish_counts(st, counts, unknown);
}

void threads_metrics_clear(threads_vm *st)
{
    const ddm_host *h = st->pl->host;
    int logged = st->c.metric_logged;
    if (!DDM_HOST_HAS(h, vm_metric))
        return;
    ddm_vm_metric_logged(h, st->pl->self, st->vm, "threads", NULL, 0, &logged);
    if (st->cpu_ticks)
        ddm_vm_metric_logged(h, st->pl->self, st->vm, "thread_cpu_seconds_total", NULL, 0,
                             &logged);
    st->c.metric_logged = logged != 0;
}
