/* SPDX-License-Identifier: Apache-2.0
 *
 * The metrics renderer (metrics.h): the views' figures as Prometheus or
 * OpenMetrics text, through the exposition writer (metrics_text.c).
 */
#include "web/metrics.h"

#include <string.h>

/* ------------------------------------------------------- reading tables */

/* A committed table view as JSON, with its columns looked up by name. */
typedef struct Table {
    JsonNode *root;  /* owned */
    JsonArray *cols; /* borrowed from root */
    JsonArray *rows;
} Table;

static gboolean table_open(Table *t, ddm_view *v)
{
    memset(t, 0, sizeof *t);
    if (v == NULL || ddm_view_kind_of(v) != DDM_VIEW_TABLE)
        return FALSE;
    t->root = ddm_view_to_json(v, FALSE);
    JsonObject *o = t->root ? json_node_get_object(t->root) : NULL;
    if (o == NULL || !json_object_has_member(o, "columns") || !json_object_has_member(o, "rows")) {
        g_clear_pointer(&t->root, json_node_unref);
        return FALSE;
    }
    t->cols = json_object_get_array_member(o, "columns");
    t->rows = json_object_get_array_member(o, "rows");
    return t->cols != NULL && t->rows != NULL;
}

static void table_close(Table *t)
{
    g_clear_pointer(&t->root, json_node_unref);
}

static int table_col(const Table *t, const char *name)
{
    for (guint i = 0; i < json_array_get_length(t->cols); i++) {
        JsonObject *c = json_array_get_object_element(t->cols, i);
        if (c && g_strcmp0(json_object_get_string_member_with_default(c, "name", ""), name) == 0)
            return (int)i;
    }
    return -1;
}

static guint table_n_rows(const Table *t)
{
    return json_array_get_length(t->rows);
}

/* Cell @col of row @r as a string (numbers printed), or NULL for null/missing. */
static char *cell_str(const Table *t, guint r, int col)
{
    JsonArray *row = json_array_get_array_element(t->rows, r);
    if (row == NULL || col < 0 || (guint)col >= json_array_get_length(row))
        return NULL;
    JsonNode *n = json_array_get_element(row, (guint)col);
    if (n == NULL || JSON_NODE_TYPE(n) != JSON_NODE_VALUE)
        return NULL;
    GType vt = json_node_get_value_type(n);
    if (vt == G_TYPE_STRING)
        return g_strdup(json_node_get_string(n));
    if (vt == G_TYPE_INT64)
        return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n));
    if (vt == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(n) ? "true" : "false");
    return NULL;
}

/* Cell @col of row @r as a number; FALSE for null, strings or missing. */
static gboolean cell_num(const Table *t, guint r, int col, double *out)
{
    JsonArray *row = json_array_get_array_element(t->rows, r);
    if (row == NULL || col < 0 || (guint)col >= json_array_get_length(row))
        return FALSE;
    JsonNode *n = json_array_get_element(row, (guint)col);
    if (n == NULL || JSON_NODE_TYPE(n) != JSON_NODE_VALUE)
        return FALSE;
    GType vt = json_node_get_value_type(n);
    if (vt == G_TYPE_INT64)
        *out = (double)json_node_get_int(n);
    else if (vt == G_TYPE_DOUBLE)
        *out = json_node_get_double(n);
    else if (vt == G_TYPE_BOOLEAN)
        *out = json_node_get_boolean(n) ? 1.0 : 0.0;
    else
        return FALSE;
    return TRUE;
}

GPtrArray *ddm_metrics_family_views(DdmViews *views)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    Table t;
    if (!table_open(&t, ddm_views_lookup(views, DDM_METRICS_FAMILIES_VIEW, NULL)))
        return out;
    int c_view = table_col(&t, "view");
    for (guint r = 0; c_view >= 0 && r < table_n_rows(&t); r++) {
        char *name = cell_str(&t, r, c_view);
        if (name != NULL && !g_ptr_array_find_with_equal_func(out, name, g_str_equal, NULL))
            g_ptr_array_add(out, name);
        else
            g_free(name);
    }
    table_close(&t);
    return out;
}

/* ------------------------------------------------------------- the VMs */

/* One row of the "vms" view. */
typedef struct Vm {
    char *key, *serial, *pid, *app, *vm, *transport, *state;
    gboolean have_debugger;
    double debugger;
} Vm;

static void vm_clear(gpointer p)
{
    Vm *v = p;
    g_free(v->key);
    g_free(v->serial);
    g_free(v->pid);
    g_free(v->app);
    g_free(v->vm);
    g_free(v->transport);
    g_free(v->state);
}

#define VM_LABELS 4
static const char *const vm_label_names[VM_LABELS] = {"key", "serial", "pid", "app"};

static void vm_labels(const Vm *v, const char **values)
{
    values[0] = v->key;
    values[1] = v->serial ? v->serial : "";
    values[2] = v->pid ? v->pid : "";
    values[3] = v->app ? v->app : "";
}

/* The "vms" view's rows, in its order (sorted by key). */
static GArray *read_vms(DdmViews *views)
{
    GArray *vms = g_array_new(FALSE, TRUE, sizeof(Vm));
    g_array_set_clear_func(vms, vm_clear);
    Table t;
    if (!table_open(&t, ddm_views_lookup(views, "vms", NULL)))
        return vms;
    int c_key = table_col(&t, "key"), c_pid = table_col(&t, "pid"), c_app = table_col(&t, "app");
    int c_dev = table_col(&t, "device"), c_state = table_col(&t, "state");
    int c_vm = table_col(&t, "vm"), c_tr = table_col(&t, "transport");
    int c_dbg = table_col(&t, "debugger");
    for (guint r = 0; r < table_n_rows(&t); r++) {
        Vm v = {0};
        v.key = cell_str(&t, r, c_key);
        if (v.key == NULL) {
            vm_clear(&v);
            continue;
        }
        v.pid = cell_str(&t, r, c_pid);
        v.app = cell_str(&t, r, c_app);
        v.serial = cell_str(&t, r, c_dev);
        v.state = cell_str(&t, r, c_state);
        v.vm = cell_str(&t, r, c_vm);
        v.transport = cell_str(&t, r, c_tr);
        v.have_debugger = cell_num(&t, r, c_dbg, &v.debugger);
        g_array_append_val(vms, v);
    }
    table_close(&t);
    return vms;
}

/* ----------------------------------------------------- plugin families */

typedef struct Family {
    char *name;   /* exposed: "ddmon_" + the declared name */
    DdmMetricKind kind;
    char *unit, *help, *label;
} Family;

static void family_clear(gpointer p)
{
    Family *f = p;
    g_free(f->name);
    g_free(f->unit);
    g_free(f->help);
    g_free(f->label);
}

static gint family_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const Family *)a)->name, ((const Family *)b)->name);
}

static GArray *read_families(DdmViews *views)
{
    GArray *fams = g_array_new(FALSE, TRUE, sizeof(Family));
    g_array_set_clear_func(fams, family_clear);
    Table t;
    if (!table_open(&t, ddm_views_lookup(views, DDM_METRICS_FAMILIES_VIEW, NULL)))
        return fams;
    int c_name = table_col(&t, "name"), c_type = table_col(&t, "type"), c_unit = table_col(&t, "unit");
    int c_help = table_col(&t, "help"), c_label = table_col(&t, "label");
    for (guint r = 0; r < table_n_rows(&t); r++) {
        g_autofree char *name = cell_str(&t, r, c_name);
        g_autofree char *type = cell_str(&t, r, c_type);
        if (name == NULL || type == NULL)
            continue;
        Family f = {0};
        f.name = g_strconcat("ddmon_", name, NULL);
        f.kind = strcmp(type, "counter") == 0 ? DDM_METRIC_KIND_COUNTER : DDM_METRIC_KIND_GAUGE;
        f.unit = cell_str(&t, r, c_unit);
        f.help = cell_str(&t, r, c_help);
        f.label = cell_str(&t, r, c_label);
        g_array_append_val(fams, f);
    }
    table_close(&t);
    g_array_sort(fams, family_cmp);
    return fams;
}

/* One sample a plugin set for a VM. */
typedef struct Sample {
    char *label; /* the family's label value, or NULL */
    double value;
} Sample;

static void sample_free(gpointer p)
{
    Sample *s = p;
    g_free(s->label);
    g_free(s);
}

/* VM @key's "metrics" view as declared name -> GPtrArray of Sample. (transfer full) */
static GHashTable *read_vm_samples(DdmViews *views, const char *key)
{
    GHashTable *by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                (GDestroyNotify)g_ptr_array_unref);
    Table t;
    if (!table_open(&t, ddm_views_lookup(views, DDM_METRICS_VM_VIEW, key)))
        return by_name;
    int c_name = table_col(&t, "name"), c_label = table_col(&t, "label"), c_value = table_col(&t, "value");
    for (guint r = 0; r < table_n_rows(&t); r++) {
        char *name = cell_str(&t, r, c_name);
        double value;
        if (name == NULL || !cell_num(&t, r, c_value, &value)) {
            g_free(name);
            continue;
        }
        GPtrArray *a = g_hash_table_lookup(by_name, name);
        if (a == NULL) {
            a = g_ptr_array_new_with_free_func(sample_free);
            g_hash_table_insert(by_name, name, a);
        } else {
            g_free(name);
        }
        Sample *s = g_new0(Sample, 1);
        s->label = cell_str(&t, r, c_label);
        s->value = value;
        g_ptr_array_add(a, s);
    }
    table_close(&t);
    return by_name;
}

/* ------------------------------------------------------------ families */

static void write_vm_counts(DdmMetricsWriter *w, GArray *vms)
{
    /* "serial\nstate" -> count, sorted for a stable output */
    g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < vms->len; i++) {
        const Vm *v = &g_array_index(vms, Vm, i);
        char *k = g_strdup_printf("%s\n%s", v->serial ? v->serial : "", v->state ? v->state : "");
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, k));
        g_hash_table_replace(counts, k, GUINT_TO_POINTER(n + 1));
    }
    if (!ddm_metrics_family(w, "ddmon_vms", DDM_METRIC_KIND_GAUGE, NULL,
                            "VMs ddmon lists, by device serial (empty for this host) and state"))
        return;
    g_autoptr(GList) keys = g_list_sort(g_hash_table_get_keys(counts), (GCompareFunc)strcmp);
    for (GList *l = keys; l; l = l->next) {
        g_auto(GStrv) parts = g_strsplit(l->data, "\n", 2);
        const char *names[2] = {"serial", "state"};
        const char *values[2] = {parts[0], parts[1] ? parts[1] : ""};
        ddm_metrics_sample(w, names, values, 2,
                           (double)GPOINTER_TO_UINT(g_hash_table_lookup(counts, l->data)));
    }
}

static void write_vm_facts(DdmMetricsWriter *w, GArray *vms)
{
    const char *names[VM_LABELS + 2];
    const char *values[VM_LABELS + 2];
    memcpy(names, vm_label_names, sizeof vm_label_names);
    names[VM_LABELS] = "vm";
    names[VM_LABELS + 1] = "transport";
    if (ddm_metrics_family(w, "ddmon_vm_info", DDM_METRIC_KIND_INFO, NULL,
                           "One series per VM ddmon lists: its VM and transport"))
        for (guint i = 0; i < vms->len; i++) {
            const Vm *v = &g_array_index(vms, Vm, i);
            vm_labels(v, values);
            values[VM_LABELS] = v->vm ? v->vm : "";
            values[VM_LABELS + 1] = v->transport ? v->transport : "";
            ddm_metrics_sample(w, names, values, VM_LABELS + 2, 1);
        }
    if (ddm_metrics_family(w, "ddmon_vm_debugger_attached", DDM_METRIC_KIND_GAUGE, NULL,
                           "1 while a debugger is attached to the VM through ddmon"))
        for (guint i = 0; i < vms->len; i++) {
            const Vm *v = &g_array_index(vms, Vm, i);
            if (!v->have_debugger)
                continue;
            vm_labels(v, values);
            ddm_metrics_sample(w, names, values, VM_LABELS, v->debugger);
        }
}

static void write_vm_io(DdmMetricsWriter *w, GArray *vms, GHashTable *io)
{
    static const struct {
        const char *name, *unit, *help;
        gsize offset;
    } counters[] = {
        {"ddmon_vm_received_packets_total", NULL, "JDWP packets ddmon read from the VM on this connection",
         G_STRUCT_OFFSET(DdmMetricsVmIo, packets_in)},
        {"ddmon_vm_sent_packets_total", NULL, "JDWP packets ddmon wrote to the VM on this connection",
         G_STRUCT_OFFSET(DdmMetricsVmIo, packets_out)},
        {"ddmon_vm_received_bytes_total", "bytes", "Bytes ddmon read from the VM on this connection",
         G_STRUCT_OFFSET(DdmMetricsVmIo, bytes_in)},
        {"ddmon_vm_sent_bytes_total", "bytes", "Bytes ddmon wrote to the VM on this connection",
         G_STRUCT_OFFSET(DdmMetricsVmIo, bytes_out)},
    };
    const char *values[VM_LABELS];
    if (io == NULL)
        return;
    for (gsize c = 0; c < G_N_ELEMENTS(counters); c++) {
        if (!ddm_metrics_family(w, counters[c].name, DDM_METRIC_KIND_COUNTER, counters[c].unit,
                                counters[c].help))
            continue;
        for (guint i = 0; i < vms->len; i++) {
            const Vm *v = &g_array_index(vms, Vm, i);
            const DdmMetricsVmIo *x = g_hash_table_lookup(io, v->key);
            if (x == NULL)
                continue;
            vm_labels(v, values);
            ddm_metrics_sample(w, vm_label_names, values, VM_LABELS,
                               (double)G_STRUCT_MEMBER(guint64, x, counters[c].offset));
        }
    }
}

static void write_plugin_families(DdmMetricsWriter *w, DdmViews *views, GArray *vms)
{
    g_autoptr(GArray) fams = read_families(views);
    if (fams->len == 0)
        return;
    /* Each VM's samples, read once: name -> samples. */
    GPtrArray *per_vm = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
    for (guint i = 0; i < vms->len; i++)
        g_ptr_array_add(per_vm, read_vm_samples(views, g_array_index(vms, Vm, i).key));
    const char *names[VM_LABELS + 1];
    const char *values[VM_LABELS + 1];
    memcpy(names, vm_label_names, sizeof vm_label_names);
    for (guint f = 0; f < fams->len; f++) {
        const Family *fam = &g_array_index(fams, Family, f);
        guint n = VM_LABELS;
        const char *declared = fam->name + strlen("ddmon_");
        if (fam->label != NULL) {
            names[VM_LABELS] = fam->label;
            n++;
        }
        if (!ddm_metrics_family(w, fam->name, fam->kind, fam->unit, fam->help))
            continue;
        for (guint i = 0; i < vms->len; i++) {
            GPtrArray *samples = g_hash_table_lookup(per_vm->pdata[i], declared);
            if (samples == NULL)
                continue;
            vm_labels(&g_array_index(vms, Vm, i), values);
            for (guint s = 0; s < samples->len; s++) {
                const Sample *x = samples->pdata[s];
                values[VM_LABELS] = x->label ? x->label : "";
                ddm_metrics_sample(w, names, values, n, x->value);
            }
        }
    }
    g_ptr_array_unref(per_vm);
}

static void write_process(DdmMetricsWriter *w, const DdmMetricsProcess *p)
{
    if (p == NULL)
        return;
    if (ddm_metrics_family(w, "process_cpu_seconds_total", DDM_METRIC_KIND_COUNTER, "seconds",
                           "User and system CPU time ddmon spent"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->cpu_seconds);
    if (ddm_metrics_family(w, "process_resident_memory_bytes", DDM_METRIC_KIND_GAUGE, "bytes",
                           "ddmon's resident memory"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->resident_bytes);
    if (ddm_metrics_family(w, "process_virtual_memory_bytes", DDM_METRIC_KIND_GAUGE, "bytes",
                           "ddmon's virtual memory"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->virtual_bytes);
    if (ddm_metrics_family(w, "process_open_fds", DDM_METRIC_KIND_GAUGE, NULL,
                           "File descriptors ddmon has open"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->open_fds);
    if (ddm_metrics_family(w, "process_max_fds", DDM_METRIC_KIND_GAUGE, NULL,
                           "ddmon's limit of open file descriptors"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->max_fds);
    if (ddm_metrics_family(w, "process_start_time_seconds", DDM_METRIC_KIND_GAUGE, "seconds",
                           "When ddmon started, in seconds since the Unix epoch"))
        ddm_metrics_sample(w, NULL, NULL, 0, p->start_time_seconds);
}

char *ddm_metrics_render(DdmViews *views, const DdmMetricsInput *in, DdmMetricsFormat fmt,
                         gsize *len)
{
    static const DdmMetricsInput none = {0};
    GString *out = g_string_sized_new(4096);
    DdmMetricsWriter *w = ddm_metrics_writer_new(out, fmt);
    g_autoptr(GArray) vms = read_vms(views);
    if (in == NULL)
        in = &none;
    if (in->version &&
        ddm_metrics_family(w, "ddmon_build_info", DDM_METRIC_KIND_INFO, NULL, "ddmon's version")) {
        const char *names[2] = {"version", "plugin_abi"};
        const char *values[2] = {in->version, G_STRINGIFY(DDM_ABI_MAJOR) "." G_STRINGIFY(DDM_ABI_MINOR)};
        ddm_metrics_sample(w, names, values, 2, 1);
    }
    write_vm_counts(w, vms);
    write_vm_facts(w, vms);
    write_vm_io(w, vms, in->vm_io);
    write_plugin_families(w, views, vms);
    write_process(w, in->process);
    ddm_metrics_writer_finish(w);
    if (len)
        *len = out->len;
    return g_string_free(out, FALSE);
}
