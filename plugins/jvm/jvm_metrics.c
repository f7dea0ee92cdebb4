/* SPDX-License-Identifier: Apache-2.0
 *
 * The jvm plugin's metric family (ABI 1.3 register_metric, vm_metric):
 * a plain JVM's threads by JDWP status, in the family the threads plugin
 * declares for DDM VMs ("threads", label "state": the same type and
 * label, so the core lets both declare it and GET /metrics has one
 * ddmon_threads for every VM). The states are JDWP's (ThreadReference
 * Status: zombie, running, sleeping, monitor, wait; unknown: not asked
 * yet), as the jvm plugin's threads view shows them.
 */
#include "jvm.h"

static const ddm_metric_family jvm_threads_family = {
    "threads", DDM_METRIC_GAUGE, NULL, "The VM's threads by state", "state", "threads"};

int jvm_metrics_register(jvm_plugin *pl)
{
    if (!DDM_HOST_HAS(pl->host, register_metric))
        return 0; /* a core before 1.3: no /metrics */
    return pl->host->register_metric(pl->self, &jvm_threads_family);
}

void jvm_metrics_publish(jvm_vm *st)
{
    static const char *const names[] = {"zombie", "running", "sleeping", "monitor", "wait", "unknown"};
    const ddm_host *h = st->pl->host;
    size_t counts[6] = {0}, i, n = 0;
    ddm_metric_sample s[6];
    if (!DDM_HOST_HAS(h, vm_metric))
        return;
    for (i = 0; i < st->n_threads; i++) {
        const jvm_thread *t = &st->threads[i];
        int32_t code = t->has_status ? t->status : -1;
        counts[code >= 0 && code <= 4 ? (size_t)code : 5]++;
    }
    for (i = 0; i < 6; i++)
        if (counts[i])
            s[n++] = (ddm_metric_sample){names[i], (double)counts[i]};
    ddm_vm_metric_logged(h, st->pl->self, st->vm, "threads", s, n, &st->metric_logged);
}
