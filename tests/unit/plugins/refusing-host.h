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

static int refused_metrics; /* vm_metric calls refused since refusing_host_of */

static int refuse_metric(ddm_plugin *self, ddm_vm *vm, const char *name,
                         const ddm_metric_sample *samples, size_t n)
{
    (void)self, (void)vm, (void)name, (void)samples, (void)n;
    refused_metrics++;
    return -EIO;
}

/* Static: a test that fails before it puts the kit's table back leaves
 * its plugin pointing at something that still exists at the teardown. */
static ddm_host refusing_host;

/* @base with a vm_metric that refuses (borrowed: the one copy, made again
 * at each call); the count starts at 0. */
static inline const ddm_host *refusing_host_of(const ddm_host *base)
{
    refusing_host = *base;
    refusing_host.vm_metric = refuse_metric;
    refused_metrics = 0;
    return &refusing_host;
}

#endif /* DDM_TEST_REFUSING_HOST_H */
