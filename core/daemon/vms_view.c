/* SPDX-License-Identifier: Apache-2.0
 *
 * The core view "vms": every VM a list should show (the monitor decides
 * which) with its relay port, whether a debugger is attached through it
 * ("debugger": ddm_vm_info.debugger, which the relay sets; a change
 * rebuilds the list) and the plugins' headlines, plus a row for
 * each known target retrying after an error, so a user sees why a VM is
 * missing (with its fixed debugger port, which listens meanwhile); one
 * whose last session says another debugger holds the VM
 * (ddm_monitor_held) is "busy" instead, and still retried; with the
 * monitor's report_held (the in-process snapshot) scanned ports too.
 * Published by a coalescing core/loop timer at most every 100 ms
 * plus 20 us a row: a VM that floods events must not make the list rebuild
 * per packet, and every publication still copies every row into the new
 * content, even those it does not write again: with 10,000 rows the list
 * is published at most every 300 ms. Readers that answer with the list
 * flush it first (ddm_daemon_vm_list_fresh), so only watchers see it that
 * late. Incremental (issue 16): the monitor names the target whose row may
 * have changed; only those rows are written again (~2,500 instructions
 * each), the others are copied as they are from the view's committed
 * content, which is the one copy of the list (vms_rows.h), so N VMs
 * starting cost O(N log N) row work, not O(N^2). A
 * change without a key (a discovery mode switched off), a view committed
 * by someone else meanwhile, rows the view's caps dropped or a key the
 * view could not store as it is (not UTF-8, too long: it would not be
 * found again) rebuild every row.
 */
#include "core/daemon/daemon.h"

#include "core/daemon/vms_rows.h"
#include "core/loop/timer.h"

#include <string.h>

#define VMS_VIEW_MIN_INTERVAL_MS 100
#define VMS_VIEW_ROWS_PER_EXTRA_MS 50 /* 20 us a row */

struct DdmVmsView {
    DdmMonitor *monitor;     /* borrowed */
    DdmRelay *relay;         /* borrowed, may be NULL */
    DdmViews *views;         /* borrowed: the store that holds the view */
    DdmTimer timer;          /* core/loop: armed while a rebuild is pending */
    gint64 refreshed_us;     /* last rebuild (rate limit) */
    GHashTable *dirty;       /* keys (owned) whose rows may have changed */
    gboolean all_dirty;      /* every row may have changed */
    gboolean odd_keys;       /* a key was not stored as it is: rebuild every row */
    DdmVmsRowsKept kept;     /* the view's rows (vms_rows.h: group 0 the retrying
                                targets, 1 the VMs) as the last publication left them */
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

    if (!vm->headlines)
        return NULL;
    s = g_string_new(NULL);
    for (const DdmVmHeadline *h = vm->headlines; h; h = h->next) { /* sorted by label */
        if (s->len)
            g_string_append(s, ", ");
        g_string_append_printf(s, "%s: %s", h->label, h->text);
    }
    return g_string_free(s, FALSE);
}

static void write_retrying_row(DdmVmsView *vv, ddm_view *view, const DdmTarget *t, const char *last_error)
{
    /* a fixed port (--connect HOST:PORT=DEBUGPORT) listens while its VM is
     * down, holding the debuggers that come: show it */
    guint16 port = vv->relay ? ddm_relay_fixed_port(vv->relay, t->key) : 0;

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
    gboolean held = ddm_monitor_held(vv->monitor, t->key);
    ddm_view_cell_str(view, held ? "busy" : "retrying");
    if (port) {
        ddm_view_cell_int(view, port);
        ddm_view_cell_bool(view, FALSE); /* held ones are not attached */
    } else {
        ddm_view_cell_str(view, NULL);  /* debug port */
        ddm_view_cell_str(view, NULL);  /* debugger */
    }
    if (held) {
        g_autofree char *why = g_strdup_printf(
            "another debugger holds it (a VM takes one at a time%s): %s",
            ddm_monitor_reports_held(vv->monitor) ? "" : "; retried until it is free", last_error);
        ddm_view_cell_str(view, why);
    } else {
        ddm_view_cell_str(view, last_error);
    }
}

static void write_vm_row(DdmVmsView *vv, ddm_view *view, DdmVm *vm)
{
    guint16 port = vv->relay ? ddm_relay_port_of(vv->relay, vm) : 0;
    gboolean known = vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN;
    char *info = headline_text(vm);

    if (ddm_vm_pid_note(vm) && !vm->info.pid) { /* a plain JVM ddmon cannot see: say why, not "0" */
        char *both = info ? g_strdup_printf("%s; %s", ddm_vm_pid_note(vm), info) : g_strdup(ddm_vm_pid_note(vm));
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

/* vms_rows.h's writer: the row of @key as the monitor lists it now (the
 * plan named it because it is listed that way); FALSE, no row, if it is
 * not (a VM not found, a target no longer retrying). */
static gboolean write_row(ddm_view *view, guint group, const char *key, gpointer ud)
{
    DdmVmsView *vv = ud;
    const DdmTarget *t = NULL;
    const char *last_error = NULL;

    /* the view stores strings valid and cut: such a key would not be found again */
    if (strlen(key) > DDM_VIEW_MAX_STRING || !g_utf8_validate(key, -1, NULL))
        vv->odd_keys = TRUE;
    if (group == 1) {
        DdmVm *vm = ddm_monitor_find_vm(vv->monitor, key);
        if (!vm) /* not expected: the plan took the key from the monitor just now */
            return FALSE;
        write_vm_row(vv, view, vm);
    } else if (ddm_monitor_retrying(vv->monitor, key, &t, &last_error))
        write_retrying_row(vv, view, t, last_error);
    else
        return FALSE;
    return TRUE;
}

/* The view is looked up each time rather than held: the store owns it. */
static ddm_view *own_view(DdmVmsView *vv)
{
    ddm_view *v = ddm_views_lookup(vv->views, "vms", NULL);
    return v && g_strcmp0(ddm_view_owner(v), "ddmon") == 0 ? v : NULL;
}

static void add_retrying_key(const DdmTarget *t, const char *last_error, gpointer ud)
{
    (void)last_error;
    g_ptr_array_add(ud, t->key);
}

/* Publish the rows the monitor lists now: those of the dirty keys written
 * again and the others copied from the view, or every row written again. */
static void rebuild(DdmVmsView *vv)
{
    ddm_view *view = own_view(vv);
    DdmVmsRowsPlan plan = {.write = {g_ptr_array_new(), g_ptr_array_new()}};
    GPtrArray *vms = NULL;
    GHashTableIter it;
    gpointer key;

    plan.keep = view && !vv->all_dirty && !vv->odd_keys && ddm_vms_rows_still_kept(&vv->kept, view);
    if (plan.keep) {
        plan.replaced = vv->dirty;
        g_hash_table_iter_init(&it, vv->dirty);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
            DdmVm *vm = ddm_monitor_find_vm(vv->monitor, key);
            const DdmTarget *t;
            const char *last_error;
            /* a key is listed one way at most */
            if (vm && ddm_monitor_vm_listed(vv->monitor, vm))
                g_ptr_array_add(plan.write[1], key);
            else if (ddm_monitor_retrying(vv->monitor, key, &t, &last_error))
                g_ptr_array_add(plan.write[0], key);
        }
    } else if (view) {
        vv->odd_keys = FALSE;
        ddm_monitor_foreach_retrying(vv->monitor, add_retrying_key, plan.write[0]);
        vms = ddm_monitor_listed_vms(vv->monitor);
        for (guint i = 0; i < vms->len; i++)
            g_ptr_array_add(plan.write[1], ((DdmVm *)g_ptr_array_index(vms, i))->target->key);
    }
    if (view)
        ddm_vms_rows_publish(view, &plan, write_row, vv, &vv->kept);
    else /* nothing is kept: the next publication writes every row */
        vv->kept.version = 0;
    vv->all_dirty = FALSE;
    g_hash_table_remove_all(vv->dirty);
    if (vms)
        g_ptr_array_unref(vms);
    g_ptr_array_unref(plan.write[0]);
    g_ptr_array_unref(plan.write[1]);
}

static void rebuild_fire(DdmTimer *t, gpointer ud)
{
    DdmVmsView *vv = ud;
    (void)t;
    vv->refreshed_us = g_get_monotonic_time();
    rebuild(vv);
}

DdmVmsView *ddm_vms_view_new(DdmViews *views, DdmMonitor *mon)
{
    DdmVmsView *vv;

    g_return_val_if_fail(views != NULL && mon != NULL, NULL);
    vv = g_new0(DdmVmsView, 1);
    vv->monitor = mon;
    vv->views = views;
    vv->dirty = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    ddm_timer_init(&vv->timer, rebuild_fire, vv);
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
    vv->all_dirty = TRUE; /* the port column of every row */
}

/* Coalesce VM list changes: one rebuild per burst, at most every 100 ms,
 * of the rows named since the last one. */
void ddm_vms_view_schedule(DdmVmsView *vv, const char *key)
{
    gint64 since_ms;
    guint delay;

    if (!vv)
        return;
    if (!key)
        vv->all_dirty = TRUE;
    else if (!vv->all_dirty && !g_hash_table_contains(vv->dirty, key))
        g_hash_table_add(vv->dirty, g_strdup(key));
    if (ddm_timer_armed(&vv->timer))
        return;
    since_ms = (g_get_monotonic_time() - vv->refreshed_us) / 1000;
    gint64 interval = VMS_VIEW_MIN_INTERVAL_MS + vv->kept.n_rows / VMS_VIEW_ROWS_PER_EXTRA_MS;
    delay = since_ms >= interval ? 0 : (guint)(interval - since_ms);
    /* core/loop's timers run at the default priority: at a lower one, a VM
     * whose socket never runs dry (a flood of events) would starve the
     * list, and a VM that went away would stay listed until the flood
     * stopped. The rate limit above keeps rebuilds cheap. */
    ddm_timer_arm(&vv->timer, delay);
}

void ddm_vms_view_flush(DdmVmsView *vv)
{
    if (vv == NULL || !ddm_timer_armed(&vv->timer))
        return;
    ddm_timer_cancel(&vv->timer);
    rebuild_fire(&vv->timer, vv);
}

void ddm_vms_view_free(DdmVmsView *vv)
{
    if (!vv)
        return;
    ddm_timer_cancel(&vv->timer);
    g_hash_table_destroy(vv->dirty);
    g_free(vv); /* the view itself belongs to the store */
}
