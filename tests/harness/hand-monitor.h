/* SPDX-License-Identifier: Apache-2.0
 *
 * The parts a plugin-host test builds by hand, without a daemon: a config,
 * a view store, a real VM table whose rows are VMs the test makes itself
 * (so the table does not own them), and a registry over the three.
 */
#ifndef DDM_TEST_HAND_MONITOR_H
#define DDM_TEST_HAND_MONITOR_H

#include "core/config/config.h"
#include "core/pluginhost/registry.h"
#include "core/session/monitor-private.h"
#include "core/views/views.h"

typedef struct TestParts {
    DdmConfig *config;       /* owned */
    DdmViews *views;         /* owned */
    DdmMonitor *monitor;     /* owned; its table borrows the test's VMs */
    DdmRegistry *registry;   /* owned */
} TestParts;

/* A real, empty VM table whose rows the test inserts and removes (key and
 * VM borrowed). (transfer full) */
static inline DdmMonitor *test_monitor_new(const DdmConfig *config)
{
    DdmMonitor *mon = ddm_monitor_new(config, NULL, NULL);
    g_hash_table_unref(mon->vms);
    mon->vms = g_hash_table_new(g_str_hash, g_str_equal);
    return mon;
}

/* Forget the test's VMs (they are the test's to free), then free the table. */
static inline void test_monitor_free(DdmMonitor *mon)
{
    g_hash_table_remove_all(mon->vms);
    ddm_monitor_free(mon);
}

#endif /* DDM_TEST_HAND_MONITOR_H */
