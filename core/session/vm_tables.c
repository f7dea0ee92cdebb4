/* SPDX-License-Identifier: Apache-2.0
 *
 * The per-VM tables plugins fill through the host (vm.h): each plugin's
 * data, the headlines ("label" -> "text") and the headline figures (label
 * -> typed figures). A VM has a handful of entries in each, so each is a
 * singly linked list of one-block entries (headlines and figures sorted by
 * label, so the VM list and the "headline" view read them in order), not a
 * hash table: an idle VM with every plugin saved ~200 bytes and 3 blocks a
 * table, and a few blocks an entry. Bounded: one data entry a plugin (the
 * registry caps the plugins), DDM_VM_HEADLINES_MAX labels of each kind.
 */
#include <errno.h>
#include <string.h>

#include "core/session/vm.h"

DdmVmPluginData *ddm_vm_plugin_data_find(DdmVm *vm, gconstpointer plugin)
{
    for (DdmVmPluginData *d = vm->plugin_data; d; d = d->next)
        if (d->plugin == plugin)
            return d;
    return NULL;
}

DdmVmPluginData *ddm_vm_plugin_data_take(DdmVm *vm, gconstpointer plugin)
{
    for (DdmVmPluginData **at = &vm->plugin_data; *at; at = &(*at)->next)
        if ((*at)->plugin == plugin) {
            DdmVmPluginData *d = *at;
            *at = d->next;
            d->next = NULL;
            return d;
        }
    return NULL;
}

DdmVmPluginData *ddm_vm_plugin_data_take_all(DdmVm *vm)
{
    DdmVmPluginData *list = vm->plugin_data;
    vm->plugin_data = NULL;
    return list;
}

void ddm_vm_plugin_data_free_list(DdmVmPluginData *list)
{
    while (list) {
        DdmVmPluginData *d = list;
        list = d->next;
        if (d->data_free && d->data)
            d->data_free(d->data);
        g_free(d);
    }
}

/* The link where @label is or would go in the sorted list; *@found says
 * whether it is there. */
static DdmVmHeadline **headline_link(DdmVm *vm, const char *label, gboolean *found)
{
    DdmVmHeadline **at = &vm->headlines;
    int c = 1;
    while (*at && (c = strcmp((*at)->label, label)) < 0)
        at = &(*at)->next;
    *found = *at && c == 0;
    return at;
}

static DdmVmFigures **figures_link(DdmVm *vm, const char *label, gboolean *found)
{
    DdmVmFigures **at = &vm->headline_figures;
    int c = 1;
    while (*at && (c = strcmp(ddm_vm_figures_label(*at), label)) < 0)
        at = &(*at)->next;
    *found = *at && c == 0;
    return at;
}

/* The largest encoding: a label, DDM_HEADLINE_FIGURES_MAX names, values. */
#define FIGURES_DATA_MAX                                                              \
    (DDM_HEADLINE_LABEL_MAX + 1 +                                                     \
     DDM_HEADLINE_FIGURES_MAX * (DDM_HEADLINE_FIGURE_NAME_MAX + 1 + 1 + 8))

/* @label and @figs as DdmVmFigures.data into @buf (FIGURES_DATA_MAX bytes);
 * returns the size. */
static gsize figures_encode(char *buf, const char *label, const DdmHeadlineFigure *figs, guint n)
{
    gsize at = strnlen(label, DDM_HEADLINE_LABEL_MAX);
    memcpy(buf, label, at);
    buf[at++] = '\0';
    for (guint i = 0; i < n; i++) {
        gsize len = strnlen(figs[i].name, DDM_HEADLINE_FIGURE_NAME_MAX);
        memcpy(buf + at, figs[i].name, len);
        at += len;
        buf[at++] = '\0';
    }
    for (guint i = 0; i < n; i++) {
        buf[at] = (char)figs[i].type;
        if (figs[i].type == DDM_VAL_INT)
            memcpy(buf + at + 1, &figs[i].i, 8);
        else
            memcpy(buf + at + 1, &figs[i].d, 8);
        at += 9;
    }
    return at;
}

void ddm_vm_figures_get(const DdmVmFigures *f, guint i, DdmHeadlineFigure *out)
{
    const char *p = f->data + strlen(f->data) + 1, *name = p;

    memset(out, 0, sizeof *out);
    g_return_if_fail(i < f->n);
    for (guint k = 0; k < f->n; k++) { /* the names, then the values */
        if (k == i)
            name = p;
        p += strlen(p) + 1;
    }
    g_strlcpy(out->name, name, sizeof out->name);
    p += (gsize)i * 9;
    out->type = (ddm_value_type)(guchar)p[0];
    if (out->type == DDM_VAL_INT)
        memcpy(&out->i, p + 1, 8);
    else
        memcpy(&out->d, p + 1, 8);
}

const char *ddm_vm_headline_get(const DdmVm *vm, const char *label)
{
    for (const DdmVmHeadline *h = vm->headlines; h; h = h->next)
        if (strcmp(h->label, label) == 0)
            return h->text;
    return NULL;
}

guint ddm_vm_headlines_count(const DdmVm *vm)
{
    guint n = 0;
    for (const DdmVmHeadline *h = vm->headlines; h; h = h->next)
        n++;
    return n;
}

int ddm_vm_headline_set(DdmVm *vm, const char *label, const char *text)
{
    gboolean found;
    DdmVmHeadline **at = headline_link(vm, label, &found);
    DdmVmHeadline *cur = found ? *at : NULL;

    if (g_strcmp0(cur ? cur->text : NULL, text) == 0)
        return 0;
    if (!cur && ddm_vm_headlines_count(vm) >= DDM_VM_HEADLINES_MAX)
        return -ENOSPC;
    if (text) {
        gsize ll = strlen(label) + 1, tl = strlen(text) + 1;
        DdmVmHeadline *h = g_malloc(sizeof *h + ll + tl);
        memcpy(h->label, label, ll);
        h->text = memcpy(h->label + ll, text, tl);
        h->next = cur ? cur->next : *at;
        *at = h;
    } else {
        *at = cur->next;
    }
    g_free(cur);
    return 1;
}

int ddm_vm_figures_set(DdmVm *vm, const char *label, const DdmHeadlineFigure *figs, guint n)
{
    gboolean found;
    DdmVmFigures **at = figures_link(vm, label, &found);
    DdmVmFigures *cur = found ? *at : NULL;
    guint count = 0;
    char data[FIGURES_DATA_MAX];
    gsize size;

    g_return_val_if_fail(strlen(label) <= DDM_HEADLINE_LABEL_MAX, -EMSGSIZE);
    g_return_val_if_fail(n <= DDM_HEADLINE_FIGURES_MAX, -EINVAL);
    size = figures_encode(data, label, figs, n);
    if (cur && cur->n == n && cur->size == size && memcmp(cur->data, data, size) == 0)
        return 0;
    if (!cur && n == 0)
        return 0;
    if (!cur) {
        for (DdmVmFigures *f = vm->headline_figures; f; f = f->next)
            count++;
        if (count >= DDM_VM_HEADLINES_MAX)
            return -ENOSPC;
    }
    if (n > 0) {
        DdmVmFigures *f = g_malloc(offsetof(DdmVmFigures, data) + size);
        f->size = (guint16)size;
        f->n = (guint8)n;
        memcpy(f->data, data, size);
        f->next = cur ? cur->next : *at;
        *at = f;
    } else {
        *at = cur->next;
    }
    g_free(cur);
    return 1;
}

void ddm_vm_headlines_clear(DdmVm *vm)
{
    while (vm->headlines) {
        DdmVmHeadline *h = vm->headlines;
        vm->headlines = h->next;
        g_free(h);
    }
    while (vm->headline_figures) {
        DdmVmFigures *f = vm->headline_figures;
        vm->headline_figures = f->next;
        g_free(f);
    }
}
