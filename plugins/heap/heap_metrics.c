/* SPDX-License-Identifier: Apache-2.0
 *
 * The heap plugin's metric families (ABI 1.3 register_metric, vm_metric):
 * per heap the HPIF figures heap.summary shows (max, size, allocated
 * bytes, objects), labelled "heap" with the heap id, and the GCs the VM
 * reported. GET /metrics serves them as ddmon_heap_*; they report on
 * heap.summary, so a scrape switches HPIF "every GC" on as a watch does.
 */
#include "heap.h"

static const ddm_metric_family heap_families[] = {
    {"heap_max_bytes", DDM_METRIC_GAUGE, "bytes", "The most the VM lets the heap grow to (HPIF)",
     "heap", "heap.summary"},
    {"heap_size_bytes", DDM_METRIC_GAUGE, "bytes", "The heap's size now (HPIF)", "heap",
     "heap.summary"},
    {"heap_allocated_bytes", DDM_METRIC_GAUGE, "bytes", "Bytes allocated in the heap (HPIF)",
     "heap", "heap.summary"},
    {"heap_objects", DDM_METRIC_GAUGE, NULL, "Objects allocated in the heap (HPIF)", "heap",
     "heap.summary"},
    {"heap_gcs_total", DDM_METRIC_COUNTER, NULL,
     "GCs the VM reported (an HPIF at each GC) while heap updates were on (watched or scraped)",
     NULL, "heap.summary"},
};

int heap_metrics_register(heap_plugin *hp)
{
    const ddm_host *h = hp->host;
    size_t i;
    if (!DDM_HOST_HAS(h, register_metric))
        return 0; /* a core before 1.3: no /metrics */
    for (i = 0; i < sizeof heap_families / sizeof heap_families[0]; i++) {
        int rc = h->register_metric(hp->self, &heap_families[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void heap_metrics_publish(heap_vm *hv)
{
    const ddm_host *h = hv->hp->host;
    ddm_metric_sample s[4][HPIF_MAX_HEAPS];
    char ids[HPIF_MAX_HEAPS][12];
    ddm_metric_sample gcs = {NULL, (double)hv->gcs};
    size_t i, n = hv->info->n < HPIF_MAX_HEAPS ? hv->info->n : HPIF_MAX_HEAPS;
    if (!DDM_HOST_HAS(h, vm_metric))
        return;
    for (i = 0; i < n; i++) {
        const hpif_entry *e = &hv->info->heaps[i];
        snprintf(ids[i], sizeof ids[i], "%u", (unsigned)e->heap_id);
        s[0][i] = (ddm_metric_sample){ids[i], (double)e->max_bytes};
        s[1][i] = (ddm_metric_sample){ids[i], (double)e->size_bytes};
        s[2][i] = (ddm_metric_sample){ids[i], (double)e->allocated_bytes};
        s[3][i] = (ddm_metric_sample){ids[i], (double)e->allocated_objects};
    }
    for (i = 0; i < 4; i++)
        ddm_vm_metric_logged(h, hv->hp->self, hv->vm, heap_families[i].name, s[i], n,
                             &hv->metric_logged);
    ddm_vm_metric_logged(h, hv->hp->self, hv->vm, "heap_gcs_total", &gcs, 1, &hv->metric_logged);
}
