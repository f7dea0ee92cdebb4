/* SPDX-License-Identifier: Apache-2.0
 *
 * The nativeheap plugin's metric families (ABI 1.3 register_metric,
 * vm_metric): the native heap in use, the figure of the "native"
 * headline (the allocations NHGT listed, or the native segments of NHSG
 * while NHGT has given none), and how many allocations NHGT listed. They
 * report on nativeheap.summary, so a scrape makes the plugin poll NHGT as
 * a watch does.
 */
#include "nativeheap.h"

static const ddm_metric_family nh_families[] = {
    {"native_heap_bytes", DDM_METRIC_GAUGE, "bytes",
     "Native heap in use: the allocations NHGT lists, else the native segments of NHSG", NULL,
     "nativeheap.summary"},
    {"native_heap_allocations", DDM_METRIC_GAUGE, NULL, "Native allocations NHGT lists", NULL,
     "nativeheap.summary"},
};

int nh_metrics_register(nh_plugin *np)
{
    size_t i;
    if (!DDM_HOST_HAS(np->host, register_metric))
        return 0; /* a core before 1.3: no /metrics */
    for (i = 0; i < sizeof nh_families / sizeof nh_families[0]; i++) {
        int rc = np->host->register_metric(np->self, &nh_families[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void nh_metrics_publish(nh_vm *nv, uint64_t bytes, int64_t allocations)
{
    const ddm_host *h = nv->np->host;
    ddm_metric_sample b = {NULL, (double)bytes}, a = {NULL, (double)allocations};
    if (!DDM_HOST_HAS(h, vm_metric))
        return;
    ddm_vm_metric_logged(h, nv->np->self, nv->vm, "native_heap_bytes", &b, 1, &nv->metric_logged);
    ddm_vm_metric_logged(h, nv->np->self, nv->vm, "native_heap_allocations", &a,
                         allocations >= 0 ? 1 : 0, &nv->metric_logged);
}
