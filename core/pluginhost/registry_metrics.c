/* SPDX-License-Identifier: Apache-2.0
 *
 * Metric families plugins declare and the samples they set per VM (ABI
 * 1.3 ddm_host.register_metric and vm_metric), published as views so that
 * every frontend reads them as it reads the rest: the global table
 * "metrics.families" (name, type, unit, help, label, view, plugin) and each
 * VM's table "metrics" (name, label, value), both owned by "ddmon". The
 * metrics frontend (web/metrics.c) turns them into GET /metrics; `ddmon
 * view metrics` and the JSON API show them as they are.
 *
 * Families live in the registry (one record per declaring plugin, removed
 * with the plugin); samples in the VM (DdmVm.metrics: a list of DdmVmMetric
 * sorted by "FAMILY/PLUGIN", each one block, freed with the VM; a plugin's
 * are dropped when it unloads).
 * Two plugins may fill one family on one VM (threads and jvm both declare
 * threads): each keeps its own samples, merged when the view is published;
 * where both set the same label value, the plugin whose name sorts first
 * wins.
 */
#include "core/pluginhost/registry-private.h"

#include <string.h>

#include "core/views/text_cut.h"

/* One plugin's declaration of a family. */
typedef struct DdmMetricFamilyReg {
    ddm_plugin *plugin;
    char *name, *unit, *help, *label, *view;
    ddm_metric_type type;
} DdmMetricFamilyReg;

static void family_reg_free(gpointer p)
{
    DdmMetricFamilyReg *f = p;
    g_free(f->name);
    g_free(f->unit);
    g_free(f->help);
    g_free(f->label);
    g_free(f->view);
    g_free(f);
}


void ddm_registry_metrics_free(DdmRegistry *reg)
{
    g_clear_pointer(&reg->metric_families, g_ptr_array_unref);
}

static const ddm_column family_cols[] = {
    {"name", DDM_VAL_STR, NULL},  {"type", DDM_VAL_STR, NULL},  {"unit", DDM_VAL_STR, NULL},
    {"help", DDM_VAL_STR, NULL},  {"label", DDM_VAL_STR, NULL}, {"view", DDM_VAL_STR, NULL},
    {"plugin", DDM_VAL_STR, NULL},
};
static const ddm_column sample_cols[] = {
    {"name", DDM_VAL_STR, NULL}, {"label", DDM_VAL_STR, NULL}, {"value", DDM_VAL_DOUBLE, NULL}};

/* A view of ours (owner "ddmon") named @name for @vm_key, created with
 * @cols if missing; NULL if a plugin took the name or there is no store. */
static ddm_view *own_view(DdmRegistry *reg, const char *vm_key, const char *name, const char *title,
                          const ddm_column *cols, size_t n_cols)
{
    DdmViews *store = ddm_registry_views(reg);
    if (store == NULL)
        return NULL;
    ddm_view *view = ddm_views_lookup_made(store, name, vm_key); /* we make it here */
    if (view != NULL)
        return g_strcmp0(ddm_view_owner(view), "ddmon") == 0 ? view : NULL;
    view = ddm_views_create(store, "ddmon", vm_key, name, DDM_VIEW_TABLE, title);
    if (view != NULL)
        ddm_view_set_columns(view, cols, n_cols);
    return view;
}

/* The global "metrics.families" view: one row per declaration. */
static void publish_families(DdmRegistry *reg)
{
    ddm_view *view = own_view(reg, NULL, DDM_METRICS_FAMILIES_VIEW, "Metric families",
                              family_cols, G_N_ELEMENTS(family_cols));
    if (view == NULL)
        return;
    ddm_view_begin(view);
    for (guint i = 0; reg->metric_families && i < reg->metric_families->len; i++) {
        const DdmMetricFamilyReg *f = reg->metric_families->pdata[i];
        ddm_view_row(view);
        ddm_view_cell_str(view, f->name);
        ddm_view_cell_str(view, f->type == DDM_METRIC_COUNTER ? "counter" : "gauge");
        ddm_view_cell_str(view, f->unit);
        ddm_view_cell_str(view, f->help);
        ddm_view_cell_str(view, f->label);
        ddm_view_cell_str(view, f->view);
        ddm_view_cell_str(view, f->plugin->name);
    }
    ddm_view_commit(view);
}

/* @vm's "metrics" view: every family's samples, families sorted by name,
 * each (family, label) once. The view is made when somebody asks for it
 * (ddm_registry_metrics_make_view, the view store's maker) or watches it:
 * an idle VM's samples live in its list only (issue 16: a view, its
 * content and strings were ~400 bytes a VM); a made view follows every
 * change. */
static void publish_vm(DdmRegistry *reg, DdmVm *vm, gboolean make)
{
    DdmViews *store = ddm_registry_views(reg);
    if (store == NULL)
        return;
    vm->metrics_set = 1;
    if (!make && ddm_views_lookup_made(store, DDM_METRICS_VM_VIEW, vm->target->key) == NULL &&
        ddm_views_watches_matching(store, DDM_METRICS_VM_VIEW, vm->target->key) == 0)
        return; /* not made, nobody watches: made from the list when asked */
    ddm_view *view = own_view(reg, vm->target->key, DDM_METRICS_VM_VIEW, "Metrics", sample_cols,
                              G_N_ELEMENTS(sample_cols));
    if (view == NULL)
        return;
    ddm_view_begin(view);
    if (vm->metrics != NULL) {
        g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (const DdmVmMetric *m = vm->metrics; m; m = m->next) { /* sorted by key */
            g_autofree char *family = g_strndup(m->key, strcspn(m->key, "/"));
            for (guint i = 0; i < m->n; i++) {
                char *series = g_strconcat(family, "\n", m->labels[i] ? m->labels[i] : "", NULL);
                if (!g_hash_table_add(seen, series))
                    continue; /* another plugin's, earlier in name order */
                ddm_view_row(view);
                ddm_view_cell_str(view, family);
                ddm_view_cell_str(view, m->labels[i]);
                ddm_view_cell_double(view, m->values[i]);
            }
        }
    }
    ddm_view_commit(view);
}

static DdmMetricFamilyReg *find_family(DdmRegistry *reg, const char *name, ddm_plugin *only)
{
    for (guint i = 0; reg->metric_families && i < reg->metric_families->len; i++) {
        DdmMetricFamilyReg *f = reg->metric_families->pdata[i];
        if (strcmp(f->name, name) == 0 && (only == NULL || f->plugin == only))
            return f;
    }
    return NULL;
}

int ddm_registry_register_metric(ddm_plugin *self, const ddm_metric_family *family)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    DdmRegistry *reg = self->registry;
    if (!ddm_registry_may_register(self, "register_metric"))
        return -EPERM;
    int rc = ddm_metric_family_check(family); /* the SDK's rules, header-only */
    if (rc != 0)
        return rc;
    guint mine = 0;
    for (guint i = 0; reg->metric_families && i < reg->metric_families->len; i++) {
        const DdmMetricFamilyReg *f = reg->metric_families->pdata[i];
        if (f->plugin == self)
            mine++;
        if (strcmp(f->name, family->name) != 0)
            continue;
        if (f->plugin == self)
            return -EEXIST;
        if (f->type != family->type || g_strcmp0(f->unit, family->unit) != 0 ||
            g_strcmp0(f->label, family->label) != 0) {
            g_warning("plugin %s: metric %s is plugin %s's, with another type, unit or label",
                      self->name, family->name, f->plugin->name);
            return -EEXIST;
        }
    }
    if (mine >= DDM_METRIC_FAMILIES_MAX)
        return -ENOSPC;
    if (reg->metric_families == NULL)
        reg->metric_families = g_ptr_array_new_with_free_func(family_reg_free);
    DdmMetricFamilyReg *f = g_new0(DdmMetricFamilyReg, 1);
    f->plugin = self;
    f->name = g_strdup(family->name);
    f->type = family->type;
    f->unit = g_strdup(family->unit);
    f->help = g_strdup(family->help);
    f->label = g_strdup(family->label);
    f->view = g_strdup(family->view);
    g_ptr_array_add(reg->metric_families, f);
    publish_families(reg);
    return 0;
}

static gboolean same_samples(const DdmVmMetric *a, const DdmVmMetric *b)
{
    if (a->n != b->n || a->plugin != b->plugin)
        return FALSE;
    for (guint i = 0; i < a->n; i++)
        if (g_strcmp0(a->labels[i], b->labels[i]) != 0 ||
            memcmp(&a->values[i], &b->values[i], sizeof(double)) != 0)
            return FALSE;
    return TRUE;
}

/* @plugin's samples of family @name as one block (vm.h's DdmVmMetric), the
 * labels cut to DDM_METRIC_LABEL_VALUE_MAX; NULL when a label is missing
 * or extra, or repeats. (transfer full: g_free) */
static DdmVmMetric *vm_metric_new(ddm_plugin *plugin, const char *name, gboolean labelled,
                                  const ddm_metric_sample *samples, size_t n)
{
    g_autofree char *key = g_strdup_printf("%s/%s", name, plugin->name);
    g_autoptr(GPtrArray) cut = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    gsize text = strlen(key) + 1;
    for (size_t i = 0; i < n; i++) {
        char *label = NULL;
        if (labelled != (samples[i].label != NULL))
            return NULL;
        if (samples[i].label) {
            label = ddm_utf8_cut(samples[i].label, DDM_METRIC_LABEL_VALUE_MAX);
            if (!g_hash_table_add(seen, label)) {
                g_free(label);
                return NULL;
            }
            text += strlen(label) + 1;
        }
        g_ptr_array_add(cut, label);
    }
    G_STATIC_ASSERT(sizeof(DdmVmMetric) % sizeof(double) == 0);
    DdmVmMetric *m = g_malloc0(sizeof *m + n * (sizeof(double) + sizeof(char *)) + text);
    char *p = (char *)(m + 1) + n * (sizeof(double) + sizeof(char *));
    m->plugin = plugin;
    m->n = (guint)n;
    m->values = (double *)(void *)(m + 1);
    m->labels = (const char **)(void *)(m->values + n);
    m->key = memcpy(p, key, strlen(key) + 1);
    p += strlen(key) + 1;
    for (size_t i = 0; i < n; i++) {
        const char *label = cut->pdata[i];
        m->values[i] = samples[i].value;
        if (label) {
            m->labels[i] = memcpy(p, label, strlen(label) + 1);
            p += strlen(label) + 1;
        }
    }
    return m;
}

int ddm_registry_vm_metric(ddm_plugin *self, ddm_vm *vm, const char *name,
                           const ddm_metric_sample *samples, size_t n)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(name != NULL, -EINVAL);
    if (!ddm_plugin_is_active(self))
        return -EPERM;
    const DdmMetricFamilyReg *f = find_family(self->registry, name, self);
    if (f == NULL)
        return -ENOENT;
    if (n > DDM_METRIC_SAMPLES_MAX)
        return -E2BIG;
    if (n > 0 && samples == NULL)
        return -EINVAL;
    if (f->label == NULL && n > 1)
        return -EINVAL; /* one series per VM without a label */
    DdmVmMetric *m = vm_metric_new(self, name, f->label != NULL, samples, n);
    if (m == NULL)
        return -EINVAL;
    /* the list is sorted by key: find @m's place (a VM has a handful) */
    DdmVmMetric **at = &vm->metrics;
    while (*at && strcmp((*at)->key, m->key) < 0)
        at = &(*at)->next;
    DdmVmMetric *cur = *at && strcmp((*at)->key, m->key) == 0 ? *at : NULL;
    if (n == 0) {
        g_free(m);
        if (cur == NULL)
            return 0;
        *at = cur->next;
        g_free(cur);
    } else if (cur != NULL && same_samples(cur, m)) {
        g_free(m);
        return 0; /* unchanged: no new version of the view */
    } else if (cur != NULL) {
        m->next = cur->next;
        *at = m;
        g_free(cur);
    } else {
        m->next = *at;
        *at = m;
    }
    publish_vm(self->registry, vm, FALSE);
    return 0;
}

void ddm_registry_metrics_make_view(DdmRegistry *reg, DdmVm *vm)
{
    DdmViews *store = ddm_registry_views(reg);
    if (store == NULL || !ddm_vm_is_valid(vm) || vm->target == NULL || !vm->metrics_set ||
        vm->state == DDM_VM_STATE_CLOSED)
        return;
    if (ddm_views_lookup_made(store, DDM_METRICS_VM_VIEW, vm->target->key) == NULL)
        publish_vm(reg, vm, TRUE);
}

void ddm_registry_drop_metrics_of(DdmRegistry *reg, ddm_plugin *p)
{
    gboolean had = FALSE;
    for (guint i = 0; reg->metric_families && i < reg->metric_families->len;) {
        const DdmMetricFamilyReg *f = reg->metric_families->pdata[i];
        if (f->plugin == p) {
            g_ptr_array_remove_index(reg->metric_families, i);
            had = TRUE;
        } else {
            i++;
        }
    }
    if (!had)
        return;
    publish_families(reg);
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(reg);
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        gboolean changed = FALSE;
        for (DdmVmMetric **at = &vm->metrics; *at;) {
            DdmVmMetric *m = *at;
            if (m->plugin == p) {
                *at = m->next;
                g_free(m);
                changed = TRUE;
            } else {
                at = &m->next;
            }
        }
        if (changed && ddm_vm_is_valid(vm) && vm->target != NULL)
            publish_vm(reg, vm, FALSE);
    }
}
