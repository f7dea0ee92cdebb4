/* SPDX-License-Identifier: Apache-2.0
 *
 * TuiModel: the screens (VM list, a VM's detail with its tabs, help), the
 * cursors, the filter and sort of the list, the tabs from the open VM's
 * views, the current tab's content and the status line. Pure. See model.h.
 */
#include <build-config.h>

#include <stdarg.h>
#include <string.h>

#include "tui/model.h"
#include "core/wire/ctlproto.h"

TuiModel *tui_model_new(void)
{
    TuiModel *m = g_new0(TuiModel, 1);
    m->vms = g_ptr_array_new_with_free_func((GDestroyNotify)tui_vm_free);
    m->shown = g_ptr_array_new();
    m->tabs = g_ptr_array_new_with_free_func(g_free);
    m->commands = g_ptr_array_new_with_free_func(g_free);
    m->sort_col = TUI_VMCOL_PID;
    m->selected_port = -1;
    for (int c = 0; c < TUI_VMCOL_COUNT; c++)
        m->list_cols[m->n_list_cols++] = (TuiVmColumn)c;
    m->page_rows = 10;
    return m;
}

void tui_model_free(TuiModel *m)
{
    if (m == NULL)
        return;
    g_ptr_array_unref(m->shown);
    g_ptr_array_unref(m->vms);
    g_ptr_array_unref(m->tabs);
    g_ptr_array_unref(m->commands);
    tui_table_free(m->table);
    tui_table_free(m->popup);
    g_free(m->filter);
    g_free(m->selected_target);
    g_free(m->detail_vm);
    g_free(m->action_vm);
    g_free(m->action_row);
    g_free(m->trace_vm);
    g_free(m->status);
    g_free(m);
}

static int compare_vms(const TuiVm *a, const TuiVm *b, TuiVmColumn col)
{
    switch (col) {
    case TUI_VMCOL_PID:
        return (a->pid > b->pid) - (a->pid < b->pid);
    case TUI_VMCOL_DEBUGGER:
        return (a->debug_port > b->debug_port) - (a->debug_port < b->debug_port);
    case TUI_VMCOL_THREADS:
    case TUI_VMCOL_HEAP:
    case TUI_VMCOL_NATIVE: {
        /* figures start with their number and unit ("12", "41% of 8.0 MiB",
         * "402.8 KiB"): by the value, not the text */
        const char *fa = col == TUI_VMCOL_THREADS ? a->threads : col == TUI_VMCOL_HEAP ? a->heap : a->native;
        const char *fb = col == TUI_VMCOL_THREADS ? b->threads : col == TUI_VMCOL_HEAP ? b->heap : b->native;
        double x = tui_figure_value(fa), y = tui_figure_value(fb);
        return (x > y) - (x < y);
    }
    default: {
        g_autofree char *x = tui_vm_cell(a, col, 0);
        g_autofree char *y = tui_vm_cell(b, col, 0);
        return g_utf8_collate(x, y);
    }
    }
}

static int compare_shown(gconstpointer pa, gconstpointer pb, gpointer ud)
{
    const TuiModel *m = ud;
    const TuiVm *a = *(TuiVm *const *)pa, *b = *(TuiVm *const *)pb;
    int c = compare_vms(a, b, m->sort_col);
    if (c == 0)
        c = strcmp(a->key, b->key); /* stable across updates */
    return m->sort_desc ? -c : c;
}

static gboolean matches_filter(const TuiModel *m, const TuiVm *vm)
{
    if (m->filter == NULL || m->filter[0] == '\0')
        return TRUE;
    g_autofree char *app = g_utf8_casefold(vm->app != NULL ? vm->app : "", -1);
    g_autofree char *f = g_utf8_casefold(m->filter, -1);
    return strstr(app, f) != NULL;
}

/* Filter and sort m->vms into m->shown; the cursor goes to VM @keep_key
 * if shown, else stays at its index (clamped). */
static void refilter_keep(TuiModel *m, const char *keep_key)
{
    guint old_cursor = m->cursor;
    g_ptr_array_set_size(m->shown, 0);
    for (guint i = 0; i < m->vms->len; i++) {
        TuiVm *vm = g_ptr_array_index(m->vms, i);
        if (matches_filter(m, vm))
            g_ptr_array_add(m->shown, vm);
    }
    g_ptr_array_sort_with_data(m->shown, compare_shown, m);
    m->cursor = m->shown->len ? MIN(old_cursor, m->shown->len - 1) : 0;
    for (guint i = 0; keep_key != NULL && i < m->shown->len; i++)
        if (strcmp(((TuiVm *)g_ptr_array_index(m->shown, i))->key, keep_key) == 0)
            m->cursor = i;
}

void tui_model_refilter(TuiModel *m)
{
    const TuiVm *keep = tui_model_cursor_vm(m);
    g_autofree char *key = keep != NULL ? g_strdup(keep->key) : NULL;
    refilter_keep(m, key);
}

void tui_model_set_vms(TuiModel *m, JsonNode *view, gint64 now_us)
{
    const TuiVm *cur = tui_model_cursor_vm(m);
    g_autofree char *key = cur != NULL ? g_strdup(cur->key) : NULL;
    GPtrArray *vms = tui_vms_from_json(view, m->vms, now_us);
    g_ptr_array_set_size(m->shown, 0); /* it borrows from m->vms */
    g_ptr_array_unref(m->vms);
    m->vms = vms;
    m->vms_received_us = now_us;
    refilter_keep(m, key);
}

const TuiVm *tui_model_cursor_vm(const TuiModel *m)
{
    return m->cursor < m->shown->len ? g_ptr_array_index(m->shown, m->cursor) : NULL;
}

gint64 tui_model_target_port(const TuiModel *m, const TuiVm *vm)
{
    return vm != NULL && g_strcmp0(m->selected_target, vm->key) == 0 && m->selected_port > 0 ? m->selected_port : 0;
}

const TuiVm *tui_model_detail_vm(const TuiModel *m)
{
    for (guint i = 0; m->detail_vm != NULL && i < m->vms->len; i++) {
        const TuiVm *vm = g_ptr_array_index(m->vms, i);
        if (strcmp(vm->key, m->detail_vm) == 0)
            return vm;
    }
    return NULL;
}

const char *tui_model_tab_name(const TuiModel *m)
{
    return m->tab < m->tabs->len ? g_ptr_array_index(m->tabs, m->tab) : NULL;
}

static int compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

gboolean tui_model_set_tabs(TuiModel *m, const char *const *names, guint n)
{
    g_autofree char *current = g_strdup(tui_model_tab_name(m));
    g_ptr_array_set_size(m->tabs, 0);
    for (guint i = 0; i < n; i++)
        if (names[i] != NULL)
            g_ptr_array_add(m->tabs, g_strdup(names[i]));
    g_ptr_array_sort(m->tabs, compare_names);
    m->tab = 0;
    gboolean found = FALSE;
    for (guint i = 0; current != NULL && i < m->tabs->len; i++)
        if (strcmp(g_ptr_array_index(m->tabs, i), current) == 0) {
            m->tab = i;
            found = TRUE;
        }
    if (!found) {
        /* a first look at a VM opens the tab with a "state" column if one is
         * likely (the threads), else the first */
        for (guint i = 0; current == NULL && i < m->tabs->len; i++)
            if (strcmp(g_ptr_array_index(m->tabs, i), "threads") == 0)
                m->tab = i;
        tui_table_free(m->table);
        m->table = NULL;
        m->row_cursor = m->row_top = 0;
    }
    return g_strcmp0(current, tui_model_tab_name(m)) != 0;
}

void tui_model_set_view(TuiModel *m, JsonNode *view, gint64 now_us)
{
    TuiTable *t = tui_table_from_json(view, now_us);
    if (t == NULL)
        return;
    if (g_strcmp0(t->name, tui_model_tab_name(m)) != 0 || g_strcmp0(t->vm, m->detail_vm) != 0) {
        tui_table_free(t);
        return;
    }
    tui_table_track(t, m->table, now_us);
    tui_table_free(m->table);
    m->table = t;
    if (m->row_cursor >= t->rows->len)
        m->row_cursor = t->rows->len ? t->rows->len - 1 : 0;
}

void tui_model_view_removed(TuiModel *m, const char *name, const char *vm)
{
    if (m->table != NULL && g_strcmp0(m->table->name, name) == 0 && g_strcmp0(m->table->vm, vm) == 0) {
        tui_table_free(m->table);
        m->table = NULL;
    }
}

void tui_model_set_popup(TuiModel *m, JsonNode *view, gint64 now_us)
{
    tui_table_free(m->popup);
    m->popup = tui_table_from_json(view, now_us);
    m->popup_top = 0;
}

void tui_model_set_status(TuiModel *m, gint64 now_us, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_free(m->status);
    m->status = g_strdup_vprintf(fmt, ap);
    m->status_us = now_us;
    va_end(ap);
}

gboolean tui_model_has_command(const TuiModel *m, const char *name)
{
    for (guint i = 0; i < m->commands->len; i++)
        if (g_strcmp0(g_ptr_array_index(m->commands, i), name) == 0)
            return TRUE;
    return FALSE;
}

gboolean tui_model_rows_have_stacks(const TuiModel *m)
{
    return m->table != NULL && m->table->kind == TUI_KIND_TABLE && tui_table_column(m->table, "id") >= 0 &&
           m->table->state_col >= 0 && tui_model_has_command(m, "stack");
}
