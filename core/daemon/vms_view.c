/* SPDX-License-Identifier: Apache-2.0
 *
 * The core view "vms": every VM a list should show (the monitor decides
 * which) with its relay port, whether a debugger is attached through it
 * ("debugger": ddm_vm_info.debugger, which the relay sets; a change
 * rebuilds the list) and the plugins' headlines, plus a row for
 * each known target retrying after an error, so a user sees why a VM is
 * missing. Rebuilt in a coalesced timeout at most every 100 ms: a VM that
 * floods events must not make the list rebuild per packet.
 */
#include "core/daemon/daemon.h"

#define VMS_VIEW_MIN_INTERVAL_MS 100

struct DdmVmsView {
    DdmMonitor *monitor;     /* borrowed */
    DdmRelay *relay;         /* borrowed, may be NULL */
    DdmViews *views;         /* borrowed: the store that holds the view */
    guint timer;             /* pending rebuild */
    gint64 refreshed_us;     /* last rebuild (rate limit) */
};

static const ddm_column vms_columns[] = {
    {"key", DDM_VAL_STR, NULL},
    {"pid", DDM_VAL_INT, NULL},
    {"app", DDM_VAL_STR, NULL},
    {"vm", DDM_VAL_STR, NULL},
    {"ddm", DDM_VAL_BOOL, NULL},
    {"transport", DDM_VAL_STR, NULL},
    {"device", DDM_VAL_STR, NULL},
    {"state", DDM_VAL_STR, NULL},
    {"debug port", DDM_VAL_INT, NULL},
    {"debugger", DDM_VAL_BOOL, NULL},
    {"info", DDM_VAL_STR, NULL},
};

/* "label: text" of every headline, sorted by label so the column is stable. (transfer full) */
static char *headline_text(DdmVm *vm)
{
    GString *s;
    GList *labels, *l;

    if (!vm->headlines || g_hash_table_size(vm->headlines) == 0)
        return NULL;
    s = g_string_new(NULL);
    labels = g_list_sort(g_hash_table_get_keys(vm->headlines), (GCompareFunc)g_strcmp0);
    for (l = labels; l; l = l->next) {
        if (s->len)
            g_string_append(s, ", ");
        g_string_append_printf(s, "%s: %s", (const char *)l->data,
                               (const char *)g_hash_table_lookup(vm->headlines, l->data));
    }
    g_list_free(labels);
    return g_string_free(s, FALSE);
}

static void add_retrying_row(const DdmTarget *t, const char *last_error, gpointer ud)
{
    ddm_view *view = ud;
    ddm_view_row(view);
    ddm_view_cell_str(view, t->key);
    if (t->pid_hint)
        ddm_view_cell_int(view, t->pid_hint);
    else
        ddm_view_cell_str(view, NULL);
    ddm_view_cell_str(view, NULL);  /* app */
    ddm_view_cell_str(view, NULL);  /* vm */
    ddm_view_cell_str(view, NULL);  /* ddm: unknown */
    ddm_view_cell_str(view, t->ops->transport);
    ddm_view_cell_str(view, t->device);
    ddm_view_cell_str(view, "retrying");
    ddm_view_cell_str(view, NULL);  /* debug port */
    ddm_view_cell_str(view, NULL);  /* debugger */
    ddm_view_cell_str(view, last_error);
}

static void add_vm_row(DdmVmsView *vv, ddm_view *view, DdmVm *vm)
{
    guint16 port = vv->relay ? ddm_relay_port_of(vv->relay, vm) : 0;
    gboolean known = vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN;
    char *info = headline_text(vm);

    if (vm->pid_note && !vm->info.pid) { /* a plain JVM ddmon cannot see: say why, not "0" */
        char *both = info ? g_strdup_printf("%s; %s", vm->pid_note, info) : g_strdup(vm->pid_note);
        g_free(info);
        info = both;
    }

    ddm_view_row(view);
    ddm_view_cell_str(view, vm->target->key);
    if (vm->info.pid)
        ddm_view_cell_int(view, vm->info.pid);
    else
        ddm_view_cell_str(view, NULL);
    ddm_view_cell_str(view, vm->info.app_name);
    ddm_view_cell_str(view, vm->info.vm_ident);
    if (known)
        ddm_view_cell_bool(view, vm->info.ddm);
    else
        ddm_view_cell_str(view, NULL);
    ddm_view_cell_str(view, vm->info.transport);
    ddm_view_cell_str(view, vm->info.device);
    ddm_view_cell_str(view, ddm_vm_state_name(vm->state));
    if (port)
        ddm_view_cell_int(view, port);
    else
        ddm_view_cell_str(view, NULL);
    if (port || vm->info.debugger) /* attached through ddmon's relay */
        ddm_view_cell_bool(view, vm->info.debugger != 0);
    else
        ddm_view_cell_str(view, NULL);
    ddm_view_cell_str(view, info);
    g_free(info);
}

/* The view is looked up each time rather than held: the store owns it. */
static ddm_view *own_view(DdmVmsView *vv)
{
    ddm_view *v = ddm_views_lookup(vv->views, "vms", NULL);
    return v && g_strcmp0(ddm_view_owner(v), "ddmon") == 0 ? v : NULL;
}

static void rebuild(DdmVmsView *vv)
{
    ddm_view *view = own_view(vv);
    GPtrArray *vms;

    if (!view)
        return;
    vms = ddm_monitor_listed_vms(vv->monitor);
    ddm_view_begin(view);
    ddm_monitor_foreach_retrying(vv->monitor, add_retrying_row, view);
    for (guint i = 0; i < vms->len; i++)
        add_vm_row(vv, view, g_ptr_array_index(vms, i));
    ddm_view_commit(view);
    g_ptr_array_unref(vms);
}

static gboolean rebuild_cb(gpointer ud)
{
    DdmVmsView *vv = ud;
    vv->timer = 0;
    vv->refreshed_us = g_get_monotonic_time();
    rebuild(vv);
    return G_SOURCE_REMOVE;
}

DdmVmsView *ddm_vms_view_new(DdmViews *views, DdmMonitor *mon)
{
    DdmVmsView *vv;

    g_return_val_if_fail(views != NULL && mon != NULL, NULL);
    vv = g_new0(DdmVmsView, 1);
    vv->monitor = mon;
    vv->views = views;
    ddm_view *view = ddm_views_create(views, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
    if (view) {
        ddm_view_set_columns(view, vms_columns, G_N_ELEMENTS(vms_columns));
        ddm_view_begin(view);
        ddm_view_commit(view);
    }
    return vv;
}

void ddm_vms_view_set_relay(DdmVmsView *vv, DdmRelay *relay)
{
    g_return_if_fail(vv != NULL);
    vv->relay = relay;
}

/* Coalesce VM list changes: one rebuild per burst, at most every 100 ms. */
void ddm_vms_view_schedule(DdmVmsView *vv)
{
    gint64 since_ms;
    guint delay;

    if (!vv || vv->timer)
        return;
    since_ms = (g_get_monotonic_time() - vv->refreshed_us) / 1000;
    delay = since_ms >= VMS_VIEW_MIN_INTERVAL_MS ? 0 : (guint)(VMS_VIEW_MIN_INTERVAL_MS - since_ms);
    /* Default priority: at a lower one, a VM whose socket never runs dry
     * (a flood of events) would starve the list, and a VM that went away
     * would stay listed until the flood stopped. The rate limit above keeps
     * rebuilds cheap. */
    vv->timer = g_timeout_add(delay, rebuild_cb, vv);
}

gboolean ddm_vms_view_pending(const DdmVmsView *vv)
{
    return vv != NULL && vv->timer != 0;
}

void ddm_vms_view_free(DdmVmsView *vv)
{
    if (!vv)
        return;
    if (vv->timer)
        g_source_remove(vv->timer);
    g_free(vv); /* the view itself belongs to the store */
}
