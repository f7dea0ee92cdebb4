/* SPDX-License-Identifier: Apache-2.0
 *
 * GET /metrics: ddmon's figures for Prometheus (doc/monitoring.md).
 *
 * The metrics frontend knows no plugin by name. It reads views, as every
 * frontend does:
 *  - the core's "vms" view: VMs per device and state (ddmon_vms), one
 *    ddmon_vm_info per VM, ddmon_vm_debugger_attached;
 *  - the global "metrics.families" view, where the core lists the metric
 *    families plugins declared (ABI 1.3 ddm_host.register_metric: name,
 *    type, unit, help, the family's own label, the view it reports on);
 *  - each VM's "metrics" view, where the core keeps the samples a plugin
 *    set for that VM (ddm_host.vm_metric): a VM that goes away takes its
 *    views, so its series go with it.
 * Every per-VM sample carries the labels key, serial (the device, "" for a
 * VM on this host), pid and app. What no view holds comes in
 * DdmMetricsInput: ddmon's own process figures and each VM's packet and
 * byte counters, which the caller reads (metrics_source.c).
 *
 * ddm_metrics_render is a pure function of its arguments, so the unit
 * tests (tests/unit/web/test-metrics.c) build views by hand.
 */
#ifndef DDM_METRICS_H
#define DDM_METRICS_H

#include <glib.h>

#include "core/pluginhost/registry.h" /* DDM_METRICS_FAMILIES_VIEW, DDM_METRICS_VM_VIEW */
#include "core/views/views.h"
#include "web/metrics_text.h"

/** ddmon's own process (from /proc/self; metrics_source.c). */
typedef struct DdmMetricsProcess {
    double cpu_seconds;          /* user + system */
    double resident_bytes;
    double virtual_bytes;
    double open_fds;
    double max_fds;              /* RLIMIT_NOFILE soft limit */
    double start_time_seconds;   /* since the Unix epoch */
} DdmMetricsProcess;

/** The core's transport counters of one VM. */
typedef struct DdmMetricsVmIo {
    guint64 packets_in, packets_out, bytes_in, bytes_out;
} DdmMetricsVmIo;

/** What the views do not hold; every member may be NULL. (all borrowed) */
typedef struct DdmMetricsInput {
    const DdmMetricsProcess *process;
    GHashTable *vm_io;           /* VM key -> DdmMetricsVmIo* */
    const char *version;         /* ddmon's version, for ddmon_build_info */
} DdmMetricsInput;

/** The distinct names in the "view" column of the families view: the views
 *  a scrape counts as a look at (metrics_source.c). (transfer full: a
 *  GPtrArray of owned strings, in the families' order) */
GPtrArray *ddm_metrics_family_views(DdmViews *views);
/** The exposition of everything in @views (and @in) in @fmt.
 *  (transfer full; NUL-terminated, its length in *@len when not NULL) */
char *ddm_metrics_render(DdmViews *views, const DdmMetricsInput *in, DdmMetricsFormat fmt,
                         gsize *len);

#endif /* DDM_METRICS_H */
