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
 * ddm_registry_headline_records gives the made views and the VMs whose
 * figures are written straight from their tables
 * (ddm_registry_headline_write_figures, for jq_text.c), and, for a VM
 * whose labels a view would repair, a record made for that answer only.
 */
#include <string.h>

#include "core/pluginhost/registry-private.h"
#include "core/session/vm.h"
#include "core/views/jq.h"
#include "core/views/jq_text.h"
#include "core/views/views.h"

#define FIGURE_KEY_SIZE (DDM_HEADLINE_LABEL_MAX + 1 + DDM_HEADLINE_FIGURE_NAME_MAX + 1)

/* @key = "LABEL_NAME" without printf (~900 instructions a figure, every
 * VM's at each `ddmon --json vms`); both lengths are capped where they
 * are set (host.c), so the key fits. */
static void figure_key(char key[FIGURE_KEY_SIZE], const DdmVmFigures *l, const char *name)
{
    size_t label_len = strnlen(ddm_vm_figures_label(l), DDM_HEADLINE_LABEL_MAX);
    size_t name_len = strnlen(name, DDM_HEADLINE_FIGURE_NAME_MAX);
    memcpy(key, ddm_vm_figures_label(l), label_len);
    key[label_len] = '_';
    memcpy(key + label_len + 1, name, name_len);
    key[label_len + 1 + name_len] = '\0';
}

static void fill(ddm_view *view, const DdmVm *vm)
{
    char key[FIGURE_KEY_SIZE];
    ddm_view_begin(view);
    for (const DdmVmFigures *l = vm->headline_figures; l; l = l->next) { /* sorted by label */
        for (guint i = 0; i < l->n; i++) {
            DdmHeadlineFigure f;
            ddm_vm_figures_get(l, i, &f); /* vm_tables.c */
            figure_key(key, l, f.name);
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

/* TRUE when @vm's figures make a record whose keys are "LABEL_NAME" as
 * given: printable ASCII (a view would repair other bytes) and no key
 * twice (a view keeps the first key's place with the later value). */
static gboolean plain_figures(const DdmVm *vm)
{
    guint n = 0;
    for (const DdmVmFigures *l = vm->headline_figures; l; l = l->next) {
        for (const char *p = ddm_vm_figures_label(l); *p; p++)
            if (!g_ascii_isgraph(*p))
                return FALSE;
        if (strchr(ddm_vm_figures_label(l), '_') != NULL)
            return FALSE; /* "a_b"+"c" and "a"+"b_c" would be one key */
        for (guint i = 0; i < l->n; i++) { /* at most DDM_HEADLINE_FIGURES_MAX */
            DdmHeadlineFigure a, b;
            ddm_vm_figures_get(l, i, &a);
            for (guint j = i + 1; j < l->n; j++) {
                ddm_vm_figures_get(l, j, &b);
                if (strcmp(a.name, b.name) == 0)
                    return FALSE; /* one name twice: one field in a view */
            }
        }
        n += l->n;
    }
    return n > 0; /* none: an empty view, nothing to write either way */
}

void ddm_registry_headline_write_figures(GHashTable *figures, GHashTable *row_keys, gpointer ud)
{
    const GPtrArray *direct = ud;
    /* Most VMs have the same figure names: their jq keys are made once. */
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) keys = NULL;
    char key[FIGURE_KEY_SIZE];
    for (guint r = 0; direct != NULL && r < direct->len; r++) {
        const DdmVm *vm = direct->pdata[r];
        guint n = 0;
        gboolean same = keys != NULL;
        for (const DdmVmFigures *l = vm->headline_figures; l; l = l->next) {
            for (guint i = 0; i < l->n; i++, n++) {
                DdmHeadlineFigure f;
                ddm_vm_figures_get(l, i, &f);
                figure_key(key, l, f.name);
                if (same && (n >= names->len || strcmp(names->pdata[n], key) != 0))
                    same = FALSE;
                if (!same) {
                    g_ptr_array_set_size(names, n);
                    g_ptr_array_add(names, g_strdup(key));
                }
            }
        }
        if (!same || n != names->len) {
            g_ptr_array_set_size(names, n);
            g_ptr_array_add(names, NULL);
            g_strfreev(keys);
            keys = ddm_jq_keys((const char *const *)names->pdata, n);
            g_ptr_array_set_size(names, n);
        }
        GString *s = g_string_new(NULL);
        guint k = 0;
        for (const DdmVmFigures *l = vm->headline_figures; l; l = l->next) {
            for (guint i = 0; i < l->n; i++, k++) {
                DdmHeadlineFigure f;
                if (g_hash_table_contains(row_keys, keys[k]))
                    continue; /* the row's own member wins */
                ddm_vm_figures_get(l, i, &f);
                g_string_append_c(s, ',');
                ddm_json_text_string(s, keys[k]);
                g_string_append_c(s, ':');
                if (f.type == DDM_VAL_INT)
                    ddm_json_text_int(s, f.i);
                else
                    ddm_json_text_double(s, f.d);
            }
        }
        g_hash_table_replace(figures, vm->target->key, g_string_free(s, FALSE));
    }
}

GPtrArray *ddm_registry_headline_records(DdmRegistry *reg, GPtrArray **detached,
                                         GPtrArray **direct)
{
    GPtrArray *records = g_ptr_array_new();
    DdmViews *store = reg ? ddm_registry_views(reg) : NULL;
    *detached = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_view_free_detached);
    if (direct != NULL)
        *direct = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
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
        if (view == NULL && !taken && direct != NULL && plain_figures(vm)) {
            g_ptr_array_add(*direct, ddm_vm_ref(vm)); /* written from the table */
            continue;
        }
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
