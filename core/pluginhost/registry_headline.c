/* SPDX-License-Identifier: Apache-2.0
 *
 * The core's per-VM record view "headline" (owner "ddmon"): every label's
 * headline figures (ABI 1.2 ddm_host.vm_headline_figures), labels sorted,
 * one field "LABEL_NAME" a figure. The figures live in the VM's table
 * (DdmVm.headline_figures, core/session/vm_tables.c); the view is made from
 * it when somebody asks for it (a lookup, a list or a watch: the view
 * store's maker, registry_views.c) and then follows every change. An idle
 * VM nobody looks at holds no view (issue 16: a view, its content and its
 * strings were ~500 bytes a VM, and `ddmon --json vms` looked at every
 * VM's).
 *
 * `ddmon --json vms` reads the figures without making views:
 * ddm_registry_headline_records gives the made views and, for the other
 * VMs, records made for that answer only, which the caller frees.
 */
#include <string.h>

#include "core/pluginhost/registry-private.h"
#include "core/session/vm.h"
#include "core/views/views.h"

static void fill(ddm_view *view, const DdmVm *vm)
{
    char key[DDM_HEADLINE_LABEL_MAX + 1 + DDM_HEADLINE_FIGURE_NAME_MAX + 1];
    ddm_view_begin(view);
    for (const DdmVmFigures *l = vm->headline_figures; l; l = l->next) { /* sorted by label */
        /* "LABEL_NAME" without printf (~900 instructions a figure, every
         * VM's at each `ddmon --json vms`); both lengths are capped where
         * they are set (host.c), so the key fits */
        size_t label_len = strnlen(ddm_vm_figures_label(l), DDM_HEADLINE_LABEL_MAX);
        memcpy(key, ddm_vm_figures_label(l), label_len);
        key[label_len] = '_';
        for (guint i = 0; i < l->n; i++) {
            DdmHeadlineFigure f;
            ddm_vm_figures_get(l, i, &f); /* vm_tables.c */
            size_t name_len = strnlen(f.name, DDM_HEADLINE_FIGURE_NAME_MAX);
            memcpy(key + label_len + 1, f.name, name_len);
            key[label_len + 1 + name_len] = '\0';
            if (f.type == DDM_VAL_INT)
                ddm_view_field_int(view, key, f.i);
            else
                ddm_view_field_double(view, key, f.d);
        }
    }
    ddm_view_commit(view);
}

/* @vm's view of ours if made; NULL with *taken TRUE if a plugin made one of that name. */
static ddm_view *made_view(DdmViews *store, const DdmVm *vm, gboolean *taken)
{
    ddm_view *view = ddm_views_lookup_made(store, DDM_HEADLINE_VIEW, vm->target->key);
    *taken = view != NULL && g_strcmp0(ddm_view_owner(view), "ddmon") != 0;
    return *taken ? NULL : view;
}

void ddm_registry_headline_publish(DdmRegistry *reg, DdmVm *vm, gboolean make)
{
    DdmViews *store = reg ? ddm_registry_views(reg) : NULL;
    gboolean taken;
    if (store == NULL || !ddm_vm_is_valid(vm) || vm->target == NULL)
        return;
    vm->headline_set = 1;
    ddm_view *view = made_view(store, vm, &taken);
    if (taken)
        return; /* a plugin took the name: no figures view for this VM */
    if (view == NULL) {
        if (!make && ddm_views_watches_matching(store, DDM_HEADLINE_VIEW, vm->target->key) == 0)
            return; /* nobody asks: made from the table when asked */
        view = ddm_views_create(store, "ddmon", vm->target->key, DDM_HEADLINE_VIEW,
                                DDM_VIEW_RECORD, "Headline figures");
        if (view == NULL)
            return;
    }
    fill(view, vm);
}

void ddm_registry_headline_make_view(DdmRegistry *reg, DdmVm *vm)
{
    if (!ddm_vm_is_valid(vm) || vm->target == NULL || !vm->headline_set ||
        vm->state == DDM_VM_STATE_CLOSED)
        return;
    ddm_registry_headline_publish(reg, vm, TRUE);
}

GPtrArray *ddm_registry_headline_records(DdmRegistry *reg, GPtrArray **detached)
{
    GPtrArray *records = g_ptr_array_new();
    DdmViews *store = reg ? ddm_registry_views(reg) : NULL;
    *detached = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_view_free_detached);
    if (store == NULL)
        return records;
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = vms->pdata[i];
        gboolean taken;
        if (!ddm_vm_is_valid(vm) || vm->target == NULL || !vm->headline_set ||
            vm->state == DDM_VM_STATE_CLOSED)
            continue;
        ddm_view *view = made_view(store, vm, &taken);
        if (view == NULL && !taken) {
            view = ddm_view_new_detached_vm("ddmon", vm->target->key, DDM_HEADLINE_VIEW,
                                            DDM_VIEW_RECORD, "Headline figures");
            if (view == NULL)
                continue;
            fill(view, vm);
            g_ptr_array_add(*detached, view);
        }
        if (view != NULL)
            g_ptr_array_add(records, view);
    }
    return records;
}
