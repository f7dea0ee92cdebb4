/* SPDX-License-Identifier: Apache-2.0
 *
 * The VM list's rows: the "vms" view with the plugins' headlines ("info":
 * "heap: 41% of 8.0 MiB, threads: 12") split into the columns a person
 * looks for, and the text of each column. Pure. See model.h.
 */
#include <build-config.h>

#include <string.h>

#include "tui/model.h"
#include "core/wire/ctlproto.h"

static const char *const vm_titles[TUI_VMCOL_COUNT] = {
    "PID", "APP", "VM", "DEVICE", "STATE", "DEBUGGER", "THREADS", "HEAP", "NATIVE",
};

const char *tui_vm_column_title(TuiVmColumn c)
{
    return c < TUI_VMCOL_COUNT ? vm_titles[c] : "";
}

/* Fixed widths (no content known), the caps of content widths, and the
 * least APP and HEAP shrink to ("50% of 7.2 MiB" is 14) before DEBUGGER
 * goes. */
static const int vm_widths[TUI_VMCOL_COUNT] = {7, 22, 11, 10, 9, 12, 8, 20, 12};
static const int vm_caps[TUI_VMCOL_COUNT] = {8, 40, 26, 24, 12, 14, 8, 28, 12};
#define APP_EASE 24
#define APP_MIN 12
#define HEAP_MIN 14
#define DEVICE_MIN 8

guint tui_vm_layout(int width, const int want[TUI_VMCOL_COUNT], gboolean need_device, int w[TUI_VMCOL_COUNT])
{
    int total = 0;
    for (int c = 0; c < TUI_VMCOL_COUNT; c++) {
        w[c] = want != NULL ? CLAMP(want[c], 1, vm_caps[c]) : vm_widths[c];
        total += w[c] + 1;
    }
    /* a long app name first gives way down to 24; then on a narrow
     * terminal these go, in this order (DEVICE not when it tells rows
     * apart: it shrinks below instead) */
    if (total > width && w[TUI_VMCOL_APP] > APP_EASE) {
        int give = MIN(w[TUI_VMCOL_APP] - APP_EASE, total - width);
        w[TUI_VMCOL_APP] -= give;
        total -= give;
    }
    static const TuiVmColumn drop[] = {TUI_VMCOL_VM, TUI_VMCOL_DEVICE, TUI_VMCOL_NATIVE};
    for (gsize i = 0; i < G_N_ELEMENTS(drop) && total > width; i++) {
        if (drop[i] == TUI_VMCOL_DEVICE && need_device)
            continue;
        total -= w[drop[i]] + 1;
        w[drop[i]] = 0;
    }
    /* then the app name and the heap figure give way, the app name first
     * down to 16, then the heap, then the app name again, then a device
     * that stays */
    struct { TuiVmColumn c; int min; } shrink[] = {
        {TUI_VMCOL_APP, 16}, {TUI_VMCOL_HEAP, HEAP_MIN}, {TUI_VMCOL_APP, APP_MIN}, {TUI_VMCOL_DEVICE, DEVICE_MIN}};
    for (gsize i = 0; i < G_N_ELEMENTS(shrink) && total > width; i++) {
        int give = MIN(w[shrink[i].c] - shrink[i].min, total - width);
        if (give > 0 && w[shrink[i].c] > 0) {
            w[shrink[i].c] -= give;
            total -= give;
        }
    }
    if (total > width) { /* the debugger column too */
        total -= w[TUI_VMCOL_DEBUGGER] + 1;
        w[TUI_VMCOL_DEBUGGER] = 0;
    }
    if (total > width) { /* still too wide: the app name gives way */
        w[TUI_VMCOL_APP] = MAX(8, w[TUI_VMCOL_APP] - (total - width));
    } else {
        /* room to spare: the columns their cap cut get their content back
         * (the app name first), then the app name takes the rest */
        static const TuiVmColumn grow[] = {TUI_VMCOL_APP, TUI_VMCOL_DEVICE, TUI_VMCOL_VM, TUI_VMCOL_HEAP,
                                           TUI_VMCOL_DEBUGGER, TUI_VMCOL_STATE, TUI_VMCOL_THREADS,
                                           TUI_VMCOL_NATIVE, TUI_VMCOL_PID};
        for (gsize i = 0; want != NULL && i < G_N_ELEMENTS(grow) && total < width; i++) {
            TuiVmColumn c = grow[i];
            if (w[c] > 0 && want[c] > w[c]) {
                int give = MIN(want[c] - w[c], width - total);
                w[c] += give;
                total += give;
            }
        }
        w[TUI_VMCOL_APP] += width - total;
    }
    guint shown = 0;
    for (int c = 0; c < TUI_VMCOL_COUNT; c++)
        shown += w[c] > 0;
    return shown;
}

gboolean tui_vm_want_widths(GPtrArray *vms, int want[TUI_VMCOL_COUNT])
{
    for (int c = 0; c < TUI_VMCOL_COUNT; c++)
        want[c] = (int)strlen(vm_titles[c]) + 1; /* the sort mark */
    const char *device = NULL;
    gboolean devices = FALSE;
    for (guint i = 0; vms != NULL && i < vms->len; i++) {
        const TuiVm *vm = g_ptr_array_index(vms, i);
        for (int c = 0; c < TUI_VMCOL_COUNT; c++) {
            g_autofree char *cell = tui_vm_cell(vm, (TuiVmColumn)c, c == TUI_VMCOL_DEBUGGER ? 65535 : 0);
            int len = (int)g_utf8_strlen(cell, -1);
            if (c == TUI_VMCOL_HEAP && vm->heap != NULL)
                len += 6; /* " (12m)": its age when it is old */
            want[c] = MAX(want[c], len);
        }
        const char *d = vm->device != NULL ? vm->device : "local";
        if (device != NULL && strcmp(device, d) != 0)
            devices = TRUE;
        device = d;
    }
    return devices;
}

void tui_vm_free(TuiVm *vm)
{
    if (vm == NULL)
        return;
    g_free(vm->key);
    g_free(vm->app);
    g_free(vm->vm);
    g_free(vm->device);
    g_free(vm->state);
    g_free(vm->threads);
    g_free(vm->heap);
    g_free(vm->native);
    g_free(vm->info);
    g_free(vm);
}

char *tui_vm_cell(const TuiVm *vm, TuiVmColumn c, gint64 selected_port)
{
    switch (c) {
    case TUI_VMCOL_PID:
        return vm->pid > 0 ? g_strdup_printf("%" G_GINT64_FORMAT, vm->pid) : g_strdup("-");
    case TUI_VMCOL_APP:
        /* no app name yet (a target not connected): its key tells it apart */
        return g_strdup(vm->app != NULL ? vm->app : vm->key);
    case TUI_VMCOL_VM:
        return g_strdup(vm->vm != NULL ? vm->vm : "-");
    case TUI_VMCOL_DEVICE:
        return g_strdup(vm->device != NULL ? vm->device : "local");
    case TUI_VMCOL_STATE:
        return g_strdup(vm->state != NULL ? vm->state : "-");
    case TUI_VMCOL_DEBUGGER: {
        /* "27400*": a debugger is attached (through that port or the
         * selected-VM port, shown after it: "27400* 8700") */
        g_autofree char *sel = selected_port > 0 ? g_strdup_printf("%" G_GINT64_FORMAT, selected_port) : NULL;
        if (vm->debug_port <= 0)
            return g_strdup_printf("%s%s", sel != NULL ? sel : "-", vm->debugger ? "*" : "");
        return g_strdup_printf("%" G_GINT64_FORMAT "%s%s%s", vm->debug_port, vm->debugger ? "*" : "",
                               sel != NULL ? " " : "", sel != NULL ? sel : "");
    }
    case TUI_VMCOL_THREADS:
        return g_strdup(vm->threads != NULL ? vm->threads : "-");
    case TUI_VMCOL_HEAP:
        return g_strdup(vm->heap != NULL ? vm->heap : "-");
    case TUI_VMCOL_NATIVE:
        return g_strdup(vm->native != NULL ? vm->native : "-");
    case TUI_VMCOL_COUNT:
        break;
    }
    return g_strdup("");
}

double tui_figure_value(const char *text)
{
    if (text == NULL)
        return -1;
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text)
        return -1;
    while (*end == ' ')
        end++;
    static const struct { const char *unit; double scale; } units[] = {
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(units); i++) {
        gsize n = strlen(units[i].unit);
        if (strncmp(end, units[i].unit, n) == 0 && !g_ascii_isalpha(end[n]))
            return v * units[i].scale;
    }
    return v; /* "B", "%", a count */
}

char *tui_trace_file_name(const TuiVm *vm)
{
    char *name = g_strdup(vm->app != NULL && vm->app[0] != '\0' ? vm->app : vm->key);
    for (char *p = name; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
            *p = '_';
    if (name[0] == '.') /* no hidden file, no ".." */
        name[0] = '_';
    char *file = vm->pid > 0 ? g_strdup_printf("%s-%" G_GINT64_FORMAT ".trace", name, vm->pid)
                             : g_strdup_printf("%s.trace", name);
    g_free(name);
    return file;
}

/* Split "[NOTE; ]label: text, label: text" into the VM's figures (the VM
 * list puts a note such as "pid unknown: ..." in front, after "; "). */
static void split_info(TuiVm *vm, const char *info)
{
    if (info == NULL)
        return;
    GString *rest = g_string_new(NULL);
    const char *semi = strstr(info, "; ");
    if (semi != NULL) {
        g_string_append_len(rest, info, semi - info);
        info = semi + 2;
    }
    g_auto(GStrv) parts = g_strsplit(info, ", ", -1);
    for (guint i = 0; parts[i] != NULL; i++) {
        const char *colon = strstr(parts[i], ": ");
        g_autofree char *label = colon ? g_strndup(parts[i], (gsize)(colon - parts[i])) : NULL;
        const char *text = colon ? colon + 2 : NULL;
        if (g_strcmp0(label, "threads") == 0)
            g_free(vm->threads), vm->threads = g_strdup(text);
        else if (g_strcmp0(label, "heap") == 0)
            g_free(vm->heap), vm->heap = g_strdup(text);
        else if (g_strcmp0(label, "native") == 0 || g_strcmp0(label, "nativeheap") == 0)
            g_free(vm->native), vm->native = g_strdup(text);
        else
            g_string_append_printf(rest, "%s%s", rest->len ? ", " : "", parts[i]);
    }
    vm->info = rest->len ? g_string_free(rest, FALSE) : (g_string_free(rest, TRUE), NULL);
}

static const char *cell_str(JsonArray *row, int i)
{
    if (i < 0 || (guint)i >= json_array_get_length(row))
        return NULL;
    JsonNode *n = json_array_get_element(row, (guint)i);
    return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n)
                                                                                   : NULL;
}

static gint64 cell_int(JsonArray *row, int i)
{
    if (i < 0 || (guint)i >= json_array_get_length(row))
        return 0;
    JsonNode *n = json_array_get_element(row, (guint)i);
    return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64 ? json_node_get_int(n) : 0;
}

static gboolean cell_bool(JsonArray *row, int i)
{
    if (i < 0 || (guint)i >= json_array_get_length(row))
        return FALSE;
    JsonNode *n = json_array_get_element(row, (guint)i);
    return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_BOOLEAN && json_node_get_boolean(n);
}

GPtrArray *tui_vms_from_json(JsonNode *view, GPtrArray *old, gint64 now_us)
{
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)tui_vm_free);
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return out;
    JsonObject *o = json_node_get_object(view);
    JsonNode *cn = json_object_get_member(o, "columns");
    JsonNode *rn = json_object_get_member(o, "rows");
    if (cn == NULL || rn == NULL || !JSON_NODE_HOLDS_ARRAY(cn) || !JSON_NODE_HOLDS_ARRAY(rn))
        return out;
    static const char *const names[] = {"key", "pid", "app", "vm", "device", "state", "debug port", "info", "debugger"};
    int idx[G_N_ELEMENTS(names)];
    JsonArray *cols = json_node_get_array(cn);
    for (guint k = 0; k < G_N_ELEMENTS(names); k++) {
        idx[k] = -1;
        for (guint i = 0; i < json_array_get_length(cols); i++) {
            JsonNode *c = json_array_get_element(cols, i);
            if (JSON_NODE_HOLDS_OBJECT(c) &&
                g_strcmp0(ddm_json_get_string(json_node_get_object(c), "name"), names[k]) == 0)
                idx[k] = (int)i;
        }
    }
    JsonArray *rows = json_node_get_array(rn);
    for (guint r = 0; r < json_array_get_length(rows); r++) {
        JsonNode *rowj = json_array_get_element(rows, r);
        if (!JSON_NODE_HOLDS_ARRAY(rowj))
            continue;
        JsonArray *row = json_node_get_array(rowj);
        const char *key = cell_str(row, idx[0]);
        if (key == NULL)
            continue;
        TuiVm *vm = g_new0(TuiVm, 1);
        vm->key = g_strdup(key);
        vm->pid = cell_int(row, idx[1]);
        vm->app = g_strdup(cell_str(row, idx[2]));
        vm->vm = g_strdup(cell_str(row, idx[3]));
        vm->device = g_strdup(cell_str(row, idx[4]));
        vm->state = g_strdup(cell_str(row, idx[5]));
        vm->debug_port = cell_int(row, idx[6]);
        split_info(vm, cell_str(row, idx[7]));
        vm->debugger = cell_bool(row, idx[8]);
        vm->heap_since_us = now_us;
        for (guint i = 0; old != NULL && i < old->len; i++) {
            TuiVm *was = g_ptr_array_index(old, i);
            if (strcmp(was->key, vm->key) == 0 && g_strcmp0(was->heap, vm->heap) == 0)
                vm->heap_since_us = was->heap_since_us;
        }
        g_ptr_array_add(out, vm);
    }
    return out;
}
