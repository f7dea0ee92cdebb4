/* SPDX-License-Identifier: Apache-2.0
 *
 * The /metrics renderer (web/metrics.c) and its exposition writer
 * (web/metrics_text.c): escaping and caps of label values and HELP, the
 * two formats' differences (counter names, UNIT, info, # EOF), names and
 * families refused, duplicate series dropped, content negotiation, and
 * the render of hand-built views: VM labels on every series, plugin
 * families, and a VM's series gone with its views.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/views/text_cut.h"
#include "web/metrics.h"
#include "web/metrics_proc.h"

/* Text of one family with the given samples through a fresh writer. */
static char *one_family(DdmMetricsFormat fmt, const char *name, DdmMetricKind kind, const char *unit,
                        const char *help, const char *label, const char *value, double v)
{
    GString *out = g_string_new(NULL);
    DdmMetricsWriter *w = ddm_metrics_writer_new(out, fmt);
    assert_true(ddm_metrics_family(w, name, kind, unit, help));
    const char *names[1] = {label};
    const char *values[1] = {value};
    assert_true(ddm_metrics_sample(w, names, values, label ? 1 : 0, v));
    ddm_metrics_writer_finish(w);
    return g_string_free(out, FALSE);
}

static void test_label_escaping(void **state)
{
    (void)state;
    g_autofree char *t = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                    "h", "app", "a\\b\"c\nd", 1);
    assert_non_null(strstr(t, "ddmon_x{app=\"a\\\\b\\\"c\\nd\"} 1\n"));
    /* invalid UTF-8 is replaced, never passed on */
    g_autofree char *u = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                    "h", "app", "ok\xff\xfe", 1);
    const char *line = strstr(u, "ddmon_x{");
    assert_non_null(line);
    assert_true(g_utf8_validate(line, -1, NULL));
    assert_null(strstr(u, "\xff"));
}

static void test_label_value_cap(void **state)
{
    (void)state;
    /* 127 ASCII bytes then a 2-byte character across the 128-byte cap */
    GString *v = g_string_new(NULL);
    for (int i = 0; i < 127; i++)
        g_string_append_c(v, 'a');
    g_string_append(v, "\xc3\xa9");
    for (int i = 0; i < 300; i++)
        g_string_append_c(v, 'z');
    g_autofree char *t = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                    "h", "app", v->str, 1);
    g_string_free(v, TRUE);
    const char *open = strstr(t, "app=\"");
    assert_non_null(open);
    open += 5;
    const char *close = strchr(open, '"');
    assert_non_null(close);
    assert_int_equal(close - open, 127); /* the cut character is left out whole */
    assert_true(g_utf8_validate(open, close - open, NULL));
    assert_null(strchr(t, 'z'));
    /* an escaped value counts its bytes before escaping */
    GString *q = g_string_new(NULL);
    for (int i = 0; i < 200; i++)
        g_string_append_c(q, '"');
    g_autofree char *tq = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                     "h", "app", q->str, 1);
    g_string_free(q, TRUE);
    open = strstr(tq, "app=\"") + 5;
    assert_int_equal(strstr(open, "\"}") - open, 2 * DDM_METRICS_LABEL_VALUE_MAX);
}

static void test_help_escaping(void **state)
{
    (void)state;
    g_autofree char *p = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                    "a \"b\" c\\d\ne", NULL, NULL, 1);
    assert_non_null(strstr(p, "# HELP ddmon_x a \"b\" c\\\\d\\ne\n"));
    g_autofree char *o = one_family(DDM_METRICS_OPENMETRICS, "ddmon_x", DDM_METRIC_KIND_GAUGE, NULL,
                                    "a \"b\" c\\d\ne", NULL, NULL, 1);
    assert_non_null(strstr(o, "# HELP ddmon_x a \\\"b\\\" c\\\\d\\ne\n"));
}

static void test_counter_both_formats(void **state)
{
    (void)state;
    g_autofree char *p = one_family(DDM_METRICS_PROMETHEUS, "ddmon_cpu_seconds_total",
                                    DDM_METRIC_KIND_COUNTER, "seconds", "cpu", NULL, NULL, 1.5);
    assert_string_equal(p, "# HELP ddmon_cpu_seconds_total cpu\n"
                           "# TYPE ddmon_cpu_seconds_total counter\n"
                           "ddmon_cpu_seconds_total 1.5\n");
    g_autofree char *o = one_family(DDM_METRICS_OPENMETRICS, "ddmon_cpu_seconds_total",
                                    DDM_METRIC_KIND_COUNTER, "seconds", "cpu", NULL, NULL, 1.5);
    assert_string_equal(o, "# HELP ddmon_cpu_seconds cpu\n"
                           "# TYPE ddmon_cpu_seconds counter\n"
                           "# UNIT ddmon_cpu_seconds seconds\n"
                           "ddmon_cpu_seconds_total 1.5\n"
                           "# EOF\n");
    g_autofree char *i = one_family(DDM_METRICS_OPENMETRICS, "ddmon_vm_info", DDM_METRIC_KIND_INFO,
                                    NULL, "vm", "key", "k", 7);
    assert_string_equal(i, "# HELP ddmon_vm vm\n# TYPE ddmon_vm info\nddmon_vm_info{key=\"k\"} 1\n# EOF\n");
    g_autofree char *ip = one_family(DDM_METRICS_PROMETHEUS, "ddmon_vm_info", DDM_METRIC_KIND_INFO,
                                     NULL, "vm", "key", "k", 7);
    assert_string_equal(ip, "# HELP ddmon_vm_info vm\n# TYPE ddmon_vm_info gauge\nddmon_vm_info{key=\"k\"} 1\n");
}

static void test_values(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {{0, " 0\n"},       {-3, " -3\n"},      {1e12, " 1000000000000\n"},
                 {0.25, " 0.25\n"}, {1e300, " 1e+300\n"}, {INFINITY, " +Inf\n"},
                 {-INFINITY, " -Inf\n"}, {NAN, " NaN\n"}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *t = one_family(DDM_METRICS_PROMETHEUS, "ddmon_x", DDM_METRIC_KIND_GAUGE,
                                        NULL, "h", NULL, NULL, cases[i].v);
        g_autofree char *want = g_strconcat("ddmon_x", cases[i].text, NULL);
        if (strstr(t, want) == NULL)
            fail_msg("value %g written as:\n%s", cases[i].v, t);
    }
}

static void test_families_refused(void **state)
{
    (void)state;
    GString *out = g_string_new(NULL);
    DdmMetricsWriter *w = ddm_metrics_writer_new(out, DDM_METRICS_OPENMETRICS);
    const char *names[2] = {"a", "a"};
    const char *values[2] = {"1", "2"};
    assert_false(ddm_metrics_family(w, "9x", DDM_METRIC_KIND_GAUGE, NULL, "h"));
    assert_false(ddm_metrics_family(w, "x-y", DDM_METRIC_KIND_GAUGE, NULL, "h"));
    assert_false(ddm_metrics_family(w, "", DDM_METRIC_KIND_GAUGE, NULL, "h"));
    assert_false(ddm_metrics_family(w, "x_count", DDM_METRIC_KIND_COUNTER, NULL, "h"));
    assert_false(ddm_metrics_family(w, "_total", DDM_METRIC_KIND_COUNTER, NULL, "h"));
    assert_false(ddm_metrics_family(w, "x_total", DDM_METRIC_KIND_GAUGE, NULL, "h"));
    assert_false(ddm_metrics_family(w, "x_bytes", DDM_METRIC_KIND_GAUGE, "seconds", "h"));
    assert_false(ddm_metrics_family(w, "x_info", DDM_METRIC_KIND_INFO, "bytes", "h"));
    assert_false(ddm_metrics_sample(w, NULL, NULL, 0, 1)); /* no family */
    assert_true(ddm_metrics_family(w, "x_bytes", DDM_METRIC_KIND_GAUGE, "bytes", "h"));
    assert_false(ddm_metrics_sample(w, names, values, 2, 1));      /* label twice */
    names[1] = "__b";
    assert_false(ddm_metrics_sample(w, names, values, 2, 1));      /* reserved label */
    names[1] = "b:c";
    assert_false(ddm_metrics_sample(w, names, values, 2, 1));      /* ':' in a label */
    names[1] = "b";
    assert_true(ddm_metrics_sample(w, names, values, 2, 1));
    assert_false(ddm_metrics_sample(w, names, values, 2, 2));      /* same series again */
    assert_true(ddm_metrics_family(w, "empty_bytes", DDM_METRIC_KIND_GAUGE, "bytes", "h"));
    assert_false(ddm_metrics_family(w, "x_bytes", DDM_METRIC_KIND_GAUGE, "bytes", "h")); /* again */
    assert_false(ddm_metrics_sample(w, names, values, 2, 3));
    assert_int_equal(ddm_metrics_writer_samples(w), 1);
    ddm_metrics_writer_finish(w);
    assert_string_equal(out->str, "# HELP x_bytes h\n# TYPE x_bytes gauge\n# UNIT x_bytes bytes\n"
                                  "x_bytes{a=\"1\",b=\"2\"} 1\n# EOF\n");
    g_string_free(out, TRUE);
}

static void test_negotiate(void **state)
{
    (void)state;
    assert_int_equal(ddm_metrics_negotiate(NULL), DDM_METRICS_PROMETHEUS);
    assert_int_equal(ddm_metrics_negotiate("*/*"), DDM_METRICS_PROMETHEUS);
    assert_int_equal(ddm_metrics_negotiate("text/plain;version=0.0.4"), DDM_METRICS_PROMETHEUS);
    /* what Prometheus 2.x sends */
    assert_int_equal(ddm_metrics_negotiate("application/openmetrics-text;version=1.0.0,"
                                           "application/openmetrics-text;version=0.0.1;q=0.75,"
                                           "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     DDM_METRICS_OPENMETRICS);
    assert_int_equal(ddm_metrics_negotiate("application/openmetrics-text"), DDM_METRICS_OPENMETRICS);
    assert_int_equal(ddm_metrics_negotiate("text/plain, application/openmetrics-text; q=0"),
                     DDM_METRICS_PROMETHEUS);
    assert_int_equal(ddm_metrics_negotiate("application/openmetrics-text; version=2.0.0"),
                     DDM_METRICS_PROMETHEUS);
    assert_string_equal(ddm_metrics_content_type(DDM_METRICS_OPENMETRICS),
                        "application/openmetrics-text; version=1.0.0; charset=utf-8");
    assert_string_equal(ddm_metrics_content_type(DDM_METRICS_PROMETHEUS),
                        "text/plain; version=0.0.4; charset=utf-8");
}

/* ------------------------------------------------------ views to text */

static const ddm_column vms_cols[] = {
    {"key", DDM_VAL_STR, NULL},      {"pid", DDM_VAL_INT, NULL},     {"app", DDM_VAL_STR, NULL},
    {"vm", DDM_VAL_STR, NULL},       {"ddm", DDM_VAL_BOOL, NULL},    {"transport", DDM_VAL_STR, NULL},
    {"device", DDM_VAL_STR, NULL},   {"state", DDM_VAL_STR, NULL},   {"debug port", DDM_VAL_INT, NULL},
    {"debugger", DDM_VAL_BOOL, NULL}, {"info", DDM_VAL_STR, NULL},
};

typedef struct VmRow {
    const char *key;
    int pid;
    const char *app, *device, *state;
    gboolean debugger;
} VmRow;

static void set_vms(ddm_view *v, const VmRow *rows, int n)
{
    ddm_view_begin(v);
    for (int i = 0; i < n; i++) {
        ddm_view_row(v);
        ddm_view_cell_str(v, rows[i].key);
        ddm_view_cell_int(v, rows[i].pid);
        ddm_view_cell_str(v, rows[i].app);
        ddm_view_cell_str(v, "ART v2.1.0");
        ddm_view_cell_bool(v, 1);
        ddm_view_cell_str(v, rows[i].device ? "adb" : "tcp");
        ddm_view_cell_str(v, rows[i].device);
        ddm_view_cell_str(v, rows[i].state);
        ddm_view_cell_int(v, 8600 + i);
        ddm_view_cell_bool(v, rows[i].debugger);
        ddm_view_cell_str(v, NULL);
    }
    ddm_view_commit(v);
}

static void add_vm_metrics(DdmViews *views, const char *key, int threads_runnable, double heap1)
{
    static const ddm_column cols[] = {
        {"name", DDM_VAL_STR, NULL}, {"label", DDM_VAL_STR, NULL}, {"value", DDM_VAL_DOUBLE, NULL}};
    ddm_view *v = ddm_views_lookup(views, DDM_METRICS_VM_VIEW, key);
    if (v == NULL) {
        v = ddm_views_create(views, "ddmon", key, DDM_METRICS_VM_VIEW, DDM_VIEW_TABLE, "Metrics");
        ddm_view_set_columns(v, cols, 3);
    }
    ddm_view_begin(v);
    ddm_view_row(v);
    ddm_view_cell_str(v, "threads");
    ddm_view_cell_str(v, "runnable");
    ddm_view_cell_double(v, threads_runnable);
    ddm_view_row(v);
    ddm_view_cell_str(v, "threads");
    ddm_view_cell_str(v, "sleeping");
    ddm_view_cell_double(v, 3);
    ddm_view_row(v);
    ddm_view_cell_str(v, "heap_size_bytes");
    ddm_view_cell_str(v, "1");
    ddm_view_cell_double(v, heap1);
    ddm_view_row(v);
    ddm_view_cell_str(v, "not_declared");
    ddm_view_cell_str(v, NULL);
    ddm_view_cell_double(v, 5);
    ddm_view_commit(v);
}

static void add_families(DdmViews *views)
{
    static const ddm_column cols[] = {
        {"name", DDM_VAL_STR, NULL},  {"type", DDM_VAL_STR, NULL},  {"unit", DDM_VAL_STR, NULL},
        {"help", DDM_VAL_STR, NULL},  {"label", DDM_VAL_STR, NULL}, {"view", DDM_VAL_STR, NULL},
        {"plugin", DDM_VAL_STR, NULL},
    };
    static const char *const rows[][6] = {
        {"threads", "gauge", NULL, "Threads by state", "state", "threads"},
        {"heap_size_bytes", "gauge", "bytes", "Heap size", "heap", "heap.summary"},
        {"vm_info", "gauge", NULL, "a plugin's family that takes a core name", NULL, NULL},
    };
    ddm_view *v = ddm_views_create(views, "ddmon", NULL, DDM_METRICS_FAMILIES_VIEW, DDM_VIEW_TABLE,
                                   "Metric families");
    ddm_view_set_columns(v, cols, 7);
    ddm_view_begin(v);
    for (gsize i = 0; i < G_N_ELEMENTS(rows); i++) {
        ddm_view_row(v);
        for (int c = 0; c < 6; c++)
            ddm_view_cell_str(v, rows[i][c]);
        ddm_view_cell_str(v, "test");
    }
    ddm_view_commit(v);
}

/* The views a scrape counts as looked at: each family's "view", once. */
static void test_family_views(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    g_autoptr(GPtrArray) none = ddm_metrics_family_views(views);
    assert_int_equal(none->len, 0);
    add_families(views);
    g_autoptr(GPtrArray) names = ddm_metrics_family_views(views);
    assert_int_equal(names->len, 2); /* the third family names no view */
    assert_string_equal(names->pdata[0], "threads");
    assert_string_equal(names->pdata[1], "heap.summary");
    ddm_views_free(views);
}

static void test_render_views(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    ddm_view *vms = ddm_views_create(views, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "VMs");
    ddm_view_set_columns(vms, vms_cols, G_N_ELEMENTS(vms_cols));
    VmRow rows[] = {
        {"127.0.0.1:8001", 101, "com.example.a", NULL, "ready", FALSE},
        {"emulator-5554:202", 202, "com.example.\"b\"", "emulator-5554", "ready", TRUE},
        {"emulator-5554:303", 303, NULL, "emulator-5554", "retrying", FALSE},
    };
    set_vms(vms, rows, 3);
    add_families(views);
    add_vm_metrics(views, "127.0.0.1:8001", 4, 8388608);
    add_vm_metrics(views, "emulator-5554:202", 7, 1024);
    DdmMetricsProcess proc = {.cpu_seconds = 1.25, .resident_bytes = 4096, .open_fds = 9};
    DdmMetricsVmIo io = {.packets_in = 5, .packets_out = 6, .bytes_in = 700, .bytes_out = 80};
    g_autoptr(GHashTable) vm_io = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(vm_io, (gpointer) "127.0.0.1:8001", &io);
    DdmMetricsInput in = {.process = &proc, .vm_io = vm_io, .version = "9.9"};

    g_autofree char *t = ddm_metrics_render(views, &in, DDM_METRICS_PROMETHEUS, NULL);
    const char *want[] = {
        "ddmon_build_info{version=\"9.9\",plugin_abi=\"",
        "# TYPE ddmon_vms gauge\n",
        "ddmon_vms{serial=\"\",state=\"ready\"} 1\n",
        "ddmon_vms{serial=\"emulator-5554\",state=\"ready\"} 1\n",
        "ddmon_vms{serial=\"emulator-5554\",state=\"retrying\"} 1\n",
        "ddmon_vm_info{key=\"127.0.0.1:8001\",serial=\"\",pid=\"101\",app=\"com.example.a\","
        "vm=\"ART v2.1.0\",transport=\"tcp\"} 1\n",
        "ddmon_vm_debugger_attached{key=\"emulator-5554:202\",serial=\"emulator-5554\",pid=\"202\","
        "app=\"com.example.\\\"b\\\"\"} 1\n",
        "ddmon_vm_debugger_attached{key=\"127.0.0.1:8001\",serial=\"\",pid=\"101\",app=\"com.example.a\"} 0\n",
        "# TYPE ddmon_vm_received_bytes_total counter\n",
        "ddmon_vm_received_bytes_total{key=\"127.0.0.1:8001\",serial=\"\",pid=\"101\",app=\"com.example.a\"} 700\n",
        "# HELP ddmon_threads Threads by state\n# TYPE ddmon_threads gauge\n",
        "ddmon_threads{key=\"127.0.0.1:8001\",serial=\"\",pid=\"101\",app=\"com.example.a\",state=\"runnable\"} 4\n",
        "ddmon_threads{key=\"emulator-5554:202\",serial=\"emulator-5554\",pid=\"202\","
        "app=\"com.example.\\\"b\\\"\",state=\"runnable\"} 7\n",
        "ddmon_heap_size_bytes{key=\"127.0.0.1:8001\",serial=\"\",pid=\"101\",app=\"com.example.a\",heap=\"1\"} 8388608\n",
        "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.25\n",
        "process_open_fds 9\n",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(want); i++)
        if (strstr(t, want[i]) == NULL)
            fail_msg("missing %s in:\n%s", want[i], t);
    assert_null(strstr(t, "not_declared"));            /* samples of no declared family */
    assert_null(strstr(t, "a plugin's family"));       /* a core name is not a plugin's */
    assert_null(strstr(t, "# EOF"));
    /* every family's samples together: one TYPE line each */
    const char *first = strstr(t, "# TYPE ddmon_threads ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "# TYPE ddmon_threads "));

    /* The VM 127.0.0.1:8001 goes: its views go with it, the list loses its row. */
    ddm_views_destroy_vm(views, "127.0.0.1:8001");
    set_vms(vms, rows + 1, 2);
    g_autofree char *t2 = ddm_metrics_render(views, &in, DDM_METRICS_OPENMETRICS, NULL);
    assert_null(strstr(t2, "127.0.0.1:8001"));
    assert_null(strstr(t2, "com.example.a\""));
    assert_non_null(strstr(t2, "ddmon_threads{key=\"emulator-5554:202\""));
    assert_non_null(strstr(t2, "ddmon_vms{serial=\"emulator-5554\",state=\"ready\"} 1\n"));
    assert_null(strstr(t2, "ddmon_vms{serial=\"\""));
    assert_non_null(strstr(t2, "# TYPE ddmon_vm info\n"));
    assert_true(g_str_has_suffix(t2, "\n# EOF\n"));
    /* a family whose samples all went leaves no header either */
    assert_null(strstr(t2, "ddmon_vm_received_bytes"));
    ddm_views_free(views);
}

static void test_render_empty(void **state)
{
    (void)state;
    DdmViews *views = ddm_views_new();
    gsize len = 0;
    g_autofree char *p = ddm_metrics_render(views, NULL, DDM_METRICS_PROMETHEUS, &len);
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    g_autofree char *o = ddm_metrics_render(views, NULL, DDM_METRICS_OPENMETRICS, &len);
    assert_string_equal(o, "# EOF\n");
    ddm_views_free(views);
}

static void test_process_read(void **state)
{
    (void)state;
    DdmMetricsProcess p;
    if (!ddm_metrics_process_read(&p))
        skip();
    assert_true(p.resident_bytes > 0);
    assert_true(p.virtual_bytes >= p.resident_bytes);
    assert_true(p.open_fds >= 3);
    assert_true(p.start_time_seconds > 1.5e9 && p.start_time_seconds <= (double)time(NULL) + 1);
    assert_true(p.cpu_seconds >= 0);
}

/* core/views/text_cut.c: the one cut both the registry and the writer use. */
static void test_utf8_cut(void **state)
{
    (void)state;
    g_autofree char *a = ddm_utf8_cut(NULL, 4);
    assert_string_equal(a, "");
    g_autofree char *b = ddm_utf8_cut("abcdef", 4);
    assert_string_equal(b, "abcd");
    g_autofree char *c = ddm_utf8_cut("ab\xc3\xa9", 3); /* é would need bytes 3-4 */
    assert_string_equal(c, "ab");
    g_autofree char *d = ddm_utf8_cut("ab\xc3\xa9", 4);
    assert_string_equal(d, "ab\xc3\xa9");
    g_autofree char *e = ddm_utf8_cut("a\xf0\x9f\x98\x80z", 4); /* a 4-byte character */
    assert_string_equal(e, "a");
    g_autofree char *f = ddm_utf8_cut("a\xff" "b", 16); /* invalid: replaced, then cut */
    assert_true(g_utf8_validate(f, -1, NULL));
    assert_non_null(strstr(f, "b"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_views),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_label_escaping),   cmocka_unit_test(test_label_value_cap),
        cmocka_unit_test(test_help_escaping),    cmocka_unit_test(test_counter_both_formats),
        cmocka_unit_test(test_values),           cmocka_unit_test(test_families_refused),
        cmocka_unit_test(test_negotiate),        cmocka_unit_test(test_render_views),
        cmocka_unit_test(test_render_empty),     cmocka_unit_test(test_process_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
