/* SPDX-License-Identifier: Apache-2.0
 *
 * A plugin test's host that refuses every vm_metric (a core that dropped
 * the family, say): a copy of the test kit's table with vm_metric
 * replaced, for the plugin's state to point at, and the refusals counted.
 * The plugins' tests of ddm_vm_metric_logged's once-per-VM flag share it.
 * Header-only (static), as segdecode_ref.h; include after <ddmon/plugin.h>.
 */
#ifndef DDM_TEST_REFUSING_HOST_H
#define DDM_TEST_REFUSING_HOST_H

#include <errno.h>

static int refused_metrics; /* vm_metric calls refused since refusing_host_init */

static int refuse_metric(ddm_plugin *self, ddm_vm *vm, const char *name,
                         const ddm_metric_sample *samples, size_t n)
{
    (void)self, (void)vm, (void)name, (void)samples, (void)n;
    refused_metrics++;
    return -EIO;
}

/* *@copy: @base with a vm_metric that refuses; the count starts at 0. */
static inline void refusing_host_init(ddm_host *copy, const ddm_host *base)
{
    *copy = *base;
    copy->vm_metric = refuse_metric;
    refused_metrics = 0;
}

#endif /* DDM_TEST_REFUSING_HOST_H */
