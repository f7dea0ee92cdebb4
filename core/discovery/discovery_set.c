/* SPDX-License-Identifier: Apache-2.0
 *
 * The set of discovery modules that follows the configuration (see
 * discovery.h): a mode switched on gets its module, a mode switched off
 * loses it, and with it the VMs it found.
 */
#include "core/discovery/discovery.h"

struct DdmDiscoverySet {
    DdmMonitor *monitor;
    const DdmConfig *config;
    DdmViews *views;
    GPtrArray *modules;      /* DdmDiscovery* */
};

/* Modules keep d->running themselves (start sets it, stop clears it). */
static void module_destroy(gpointer p)
{
    DdmDiscovery *d = p;
    if (d->running && d->ops->stop)
        d->ops->stop(d);
    if (d->ops->free)
        d->ops->free(d);
}

static DdmDiscovery *module_find(DdmDiscoverySet *set, const char *name)
{
    for (guint i = 0; i < set->modules->len; i++) {
        DdmDiscovery *d = g_ptr_array_index(set->modules, i);
        if (g_strcmp0(d->ops->name, name) == 0)
            return d;
    }
    return NULL;
}

static void module_add(DdmDiscoverySet *set, DdmDiscovery *d, gboolean start)
{
    if (!d)
        return;
    g_ptr_array_add(set->modules, d);
    if (start && !d->running && d->ops->start)
        d->ops->start(d);
}

DdmDiscoverySet *ddm_discovery_set_new(DdmMonitor *mon, const DdmConfig *config, DdmViews *views)
{
    DdmDiscoverySet *set;

    g_return_val_if_fail(mon != NULL && config != NULL, NULL);
    set = g_new0(DdmDiscoverySet, 1);
    set->monitor = mon;
    set->config = config;
    set->views = views;
    set->modules = g_ptr_array_new_with_free_func(module_destroy);
    return set;
}

void ddm_discovery_set_reconcile(DdmDiscoverySet *set, gboolean start)
{
    const DdmConfig *c;
    DdmDiscovery *d;

    g_return_if_fail(set != NULL);
    c = set->config;
    d = module_find(set, "local");
    if (c->scan_local && !d)
        module_add(set, ddm_discovery_local_new(set->monitor, c), start);
    else if (!c->scan_local && d)
        g_ptr_array_remove(set->modules, d);

    d = module_find(set, "adb");
    if (c->scan_adb && !d)
        module_add(set, ddm_discovery_adb_new(set->monitor, c, set->views), start);
    else if (!c->scan_adb && d)
        g_ptr_array_remove(set->modules, d);

    if (c->connect && c->connect->len && !module_find(set, "connect"))
        module_add(set, ddm_discovery_connect_new(set->monitor, c), start);
}

void ddm_discovery_set_start(DdmDiscoverySet *set)
{
    g_return_if_fail(set != NULL);
    for (guint i = 0; i < set->modules->len; i++) {
        DdmDiscovery *d = g_ptr_array_index(set->modules, i);
        if (!d->running && d->ops->start)
            d->ops->start(d);
    }
}

gboolean ddm_discovery_set_first_round_done(DdmDiscoverySet *set)
{
    g_return_val_if_fail(set != NULL, TRUE);
    for (guint i = 0; i < set->modules->len; i++) {
        DdmDiscovery *d = g_ptr_array_index(set->modules, i);
        if (d->running && d->ops->first_round_done && !d->ops->first_round_done(d))
            return FALSE;
    }
    return TRUE;
}

void ddm_discovery_set_free(DdmDiscoverySet *set)
{
    if (!set)
        return;
    g_ptr_array_unref(set->modules);
    g_free(set);
}
