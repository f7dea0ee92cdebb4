/* SPDX-License-Identifier: Apache-2.0
 *
 * The monitor's fields, for core/session/ only: everyone else uses the
 * questions monitor.h asks.
 */
#ifndef DDM_MONITOR_PRIVATE_H
#define DDM_MONITOR_PRIVATE_H

#include "core/session/monitor.h"
#include "core/session/portset.h"

struct DdmMonitor {
    const DdmConfig *config;        /* borrowed */
    const DdmSessionEvents *events; /* borrowed; never NULL (an empty table) */
    gpointer ud;                    /* for events */
    GHashTable *vms;                /* key -> DdmVm* (one reference each); the key is
                                     * borrowed: vm->target->key (one session per key,
                                     * start_session only when it is absent, vm->target
                                     * never reassigned) */
    GHashTable *backoff;            /* key -> DdmBackoff*: when a target may be tried
                                     * again; made by a session's outcome or a fast
                                     * retry, none for an offer or a live clean VM */
    GHashTable *known_ddm;          /* keys whose session answered HELO, noted when it
                                     * ended: reconnects skip the Version probe */
    DdmJdwpBudget *read_budget;     /* every peer's packet buffers together (--max-buffers) */
    DdmPortSet own_ports;           /* TCP ports ddmon listens on, counted (portset.h) */
    guint trim_timer;               /* every DDM_MONITOR_TRIM_S: idle VMs' read buffers go back */
    GArray *key_watchers;           /* DdmKeyWatcher: told as keys get and lose their session */
    gboolean stopping;
    gboolean refuse_new;            /* ddm_monitor_refuse_new: no session starts (the server stops) */
    gboolean report_held;           /* ddm_monitor_report_held: "busy" rows, scanned ports too */
};

#endif /* DDM_MONITOR_PRIVATE_H */
