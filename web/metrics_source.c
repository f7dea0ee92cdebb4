/* SPDX-License-Identifier: Apache-2.0
 *
 * GET /metrics over a running daemon (metrics_source.h): render, and keep
 * the views the metric families report on watched while Prometheus
 * scrapes.
 */
#include <build-config.h> /* PACKAGE_VERSION */

#include "web/metrics_source.h"

#include "core/session/vm.h"
#include "core/views/interest.h"
#include "web/metrics.h"
#include "web/metrics_proc.h"

struct DdmMetricsSource {
    DdmDaemon *daemon;          /* borrowed */
    DdmViewInterest *interest;  /* the families' views, DDM_METRICS_INTEREST_SECONDS after a scrape */
    guint64 scrapes;
};

DdmMetricsSource *ddm_metrics_source_new(DdmDaemon *daemon)
{
    DdmMetricsSource *src = g_new0(DdmMetricsSource, 1);
    src->daemon = daemon;
    /* At most one per family a plugin may declare, with room to spare. */
    src->interest = ddm_view_interest_new(ddm_daemon_views(daemon), DDM_METRICS_INTEREST_SECONDS,
                                          1024);
    return src;
}

void ddm_metrics_source_free(DdmMetricsSource *src)
{
    if (src == NULL)
        return;
    ddm_view_interest_free(src->interest);
    g_free(src);
}

/* Watch every view a declared family reports on (column "view" of the
 * families view), every VM's, until the interest expires. */
static void note_interest(DdmMetricsSource *src)
{
    g_autoptr(GPtrArray) names = ddm_metrics_family_views(ddm_daemon_views(src->daemon));
    for (guint i = 0; i < names->len; i++)
        ddm_view_interest_note(src->interest, names->pdata[i], NULL);
}

char *ddm_metrics_source_scrape(DdmMetricsSource *src, const char *accept, gsize *len,
                                const char **content_type)
{
    DdmMetricsFormat fmt = ddm_metrics_negotiate(accept);
    DdmMetricsProcess proc;
    gboolean have_proc = ddm_metrics_process_read(&proc);
    g_autoptr(GPtrArray) vms = ddm_monitor_list_vms(ddm_daemon_monitor(src->daemon));
    g_autoptr(GHashTable) io = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        DdmMetricsVmIo *x = g_new0(DdmMetricsVmIo, 1);
        x->packets_in = vm->packets_in;
        x->packets_out = vm->packets_out;
        x->bytes_in = vm->bytes_in;
        x->bytes_out = vm->bytes_out;
        g_hash_table_replace(io, vm->target->key, x); /* key borrowed: vms holds the VM */
    }
    DdmMetricsInput in = {.process = have_proc ? &proc : NULL, .vm_io = io, .version = PACKAGE_VERSION};
    src->scrapes++;
    note_interest(src);
    if (content_type)
        *content_type = ddm_metrics_content_type(fmt);
    return ddm_metrics_render(ddm_daemon_views(src->daemon), &in, fmt, len);
}

guint64 ddm_metrics_source_scrapes(const DdmMetricsSource *src)
{
    return src->scrapes;
}
