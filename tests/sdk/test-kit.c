/* SPDX-License-Identifier: Apache-2.0
 *
 * Tests of the fake host itself (sdk/testkit, <ddmon/testkit.h>), through a toy
 * plugin defined here: registration, delivery, requests exactly once, VM
 * gone teardown, timers, views, commands, config and log capture.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include <ddmon/testkit.h>

#define TOY_TYPE DDM_CHUNK('T', 'O', 'Y', '1')

typedef struct toy_state {
    const ddm_host *host;
    int chunks, taps, ready, gone, replies, timer_runs;
    ddm_reply_status last_status;
    ddm_view *table;
} toy_state;

static toy_state *g_toy;

static void toy_vm_data_free(void *p)
{
    free(p);
}

static int toy_chunk(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len, void *ud)
{
    toy_state *st = ud;
    static const ddm_column cols[] = {{"n", DDM_VAL_INT, "B"}, {"s", DDM_VAL_STR, NULL}};
    st->chunks++;
    if (!st->table) {
        st->table = st->host->view_new(self, vm, "toy", DDM_VIEW_TABLE, "Toy");
        st->host->view_set_columns(st->table, cols, 2);
    }
    st->host->view_begin(st->table);
    st->host->view_row(st->table);
    st->host->view_int(st->table, (int64_t)len);
    st->host->view_str(st->table, len ? "data" : NULL);
    st->host->view_commit(st->table);
    st->host->log(self, DDM_LOG_INFO, "toy chunk of %zu bytes origin %d", len, (int)ci->origin);
    return len && data[0] == 0xFF ? -EINVAL : DDM_OK;
}

static int toy_tap(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    g_toy->taps++;
    return DDM_OK;
}

static void toy_listener(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    toy_state *st = g_toy;
    if (ev == DDM_VM_READY) {
        st->ready++;
        st->host->vm_set_data(self, vm, malloc(16), toy_vm_data_free);
    } else if (ev == DDM_VM_GONE) {
        st->gone++;
        st->table = NULL;
    }
}

static void toy_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    g_toy->replies++;
    g_toy->last_status = reply->status;
    free(ud);
}

static int toy_timer(ddm_plugin *self, void *ud)
{
    g_toy->timer_runs++;
    return g_toy->timer_runs < 2;
}

static int toy_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    toy_state *st = g_toy;
    ddm_view *r;
    if (argc < 2)
        return -EINVAL;
    r = st->host->cmd_result(cmd, DDM_VIEW_RECORD, "Toy result");
    st->host->view_begin(r);
    st->host->view_field_str(r, "arg", argv[1]);
    st->host->view_field_int(r, "argc", argc);
    st->host->view_commit(r);
    st->host->cmd_finish(cmd, DDM_CMD_OK, "done");
    return 0;
}

/* toyvm SPEC: finds the VM as a command does (cmd_find_vm), says its key */
static int toyvm_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    ddm_vm *vm;
    if (argc < 2)
        return -EINVAL;
    vm = g_toy->host->cmd_find_vm(cmd, argv[1]);
    if (vm)
        g_toy->host->cmd_finish(cmd, DDM_CMD_OK, fake_vm_info(vm)->key);
    return 0;
}

static void toy_free(void *p)
{
    free(p);
    g_toy = NULL;
}

static int toy_init(ddm_plugin *self, const ddm_host *host)
{
    toy_state *st = calloc(1, sizeof *st);
    st->host = host;
    g_toy = st;
    host->set_data(self, st, toy_free);
    if (host->register_chunk(self, TOY_TYPE, toy_chunk, st, NULL) != 0)
        return -EINVAL;
    host->register_tap(self, 0, toy_tap, NULL, NULL);
    host->register_vm_listener(self, toy_listener, NULL, NULL);
    host->register_command(self, "toy", "toy ARG", "a toy", toy_cmd, NULL, NULL);
    host->register_command(self, "toyvm", "toyvm VM", "a toy's VM", toyvm_cmd, NULL, NULL);
    return 0;
}

DDM_PLUGIN_DEFINE("toy", "1.0", "Apache-2.0", "harness self-test", toy_init, NULL);

/* ddm_vm_metric_logged: a failing vm_metric (a family the toy never
 * declared) logs one warning naming the VM and the family, not one per
 * update; a success logs nothing. */
static void test_vm_metric_logged(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h = fake_host_table(fh);
    ddm_vm_info info = {.pid = 42, .app_name = "com.example", .user_id = -1};
    ddm_metric_sample s = {NULL, 1};
    int logged = 0;
    ddm_vm *vm;
    (void)state;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    fake_host_log_clear(fh);
    assert_int_equal(ddm_vm_metric_logged(h, fake_host_plugin(fh), vm, "toy_undeclared", &s, 1,
                                          &logged),
                     -ENOENT);
    assert_int_equal(ddm_vm_metric_logged(h, fake_host_plugin(fh), vm, "toy_undeclared", &s, 1,
                                          &logged),
                     -ENOENT);
    assert_int_equal(logged, 1);
    assert_int_equal(fake_host_log_count(fh, DDM_LOG_WARNING), 1);
    assert_true(fake_host_log_contains(fh, fake_vm_info(vm)->key));
    assert_true(fake_host_log_contains(fh, "metric toy_undeclared not set"));
    fake_host_vm_event(fh, vm, DDM_VM_GONE);
    fake_host_free(fh);
}

static void test_registration_and_delivery(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info info = {.pid = 42, .app_name = "com.example", .user_id = -1};
    ddm_vm *vm;
    ddm_view *v;
    uint8_t bad = 0xFF;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    assert_true(fake_host_owns(fh, TOY_TYPE));
    assert_int_equal(fake_host_n_taps(fh, 0), 1);
    assert_true(fake_host_has_command(fh, "toy"));
    /* registration outside init is refused */
    assert_int_equal(fake_host_table(fh)->register_chunk(fake_host_plugin(fh), DDM_CHUNK('X', 'X', 'X', 'X'),
                                                         toy_chunk, NULL, NULL),
                     -EPERM);
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    assert_int_equal(g_toy->ready, 1);
    assert_int_equal(fake_host_deliver(fh, vm, TOY_TYPE, DDM_ORIGIN_EVENT, "abc", 3), DDM_OK);
    assert_int_equal(fake_host_deliver(fh, vm, TOY_TYPE, DDM_ORIGIN_EVENT, &bad, 1), -EINVAL);
    assert_int_equal(fake_host_deliver(fh, vm, DDM_CHUNK('N', 'O', 'N', 'E'), DDM_ORIGIN_EVENT, NULL, 0),
                     DDM_DECLINED);
    assert_int_equal(g_toy->taps, 3);
    v = fake_view_find(fh, vm, "toy");
    assert_non_null(v);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_cell_int(v, 0, "n"), 1);
    assert_string_equal(fake_view_cell_str(v, 0, "s"), "data");
    assert_string_equal(fake_view_col_unit(v, "n"), "B");
    assert_int_equal(fake_view_version(v), 2);
    assert_true(fake_host_log_contains(fh, "toy chunk of 3 bytes"));
    fake_host_vm_event(fh, vm, DDM_VM_GONE);
    assert_null(fake_view_find(fh, vm, "toy"));
    assert_int_equal(g_toy->gone, 1);
    fake_host_free(fh);
}

static void test_requests_exactly_once(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm *vm;
    const ddm_host *h;
    ddm_plugin *p;
    uint8_t payload[2] = {1, 2};
    uint32_t id = 0;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    h = fake_host_table(fh);
    p = fake_host_plugin(fh);
    vm = fake_host_add_vm(fh, NULL);
    /* not ready yet */
    assert_int_equal(h->request(p, vm, TOY_TYPE, payload, 2, 0, toy_reply, NULL, NULL), -ENOTCONN);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    assert_int_equal(h->request(p, vm, TOY_TYPE, payload, 2, 500, toy_reply, malloc(4), &id), 0);
    assert_int_equal(id, fake_host_request(fh, 0)->packet_id);
    assert_int_equal(fake_host_request(fh, 0)->len, 2);
    assert_memory_equal(fake_host_request(fh, 0)->data, payload, 2);
    assert_int_equal(fake_host_request(fh, 0)->timeout_ms, 500);
    fake_host_disable_chunk(fh, TOY_TYPE);
    assert_false(h->chunk_enabled(p, TOY_TYPE));
    assert_int_equal(h->request(p, vm, TOY_TYPE, NULL, 0, 0, toy_reply, NULL, NULL), -EPERM);
    fake_host_complete_status(fh, 0, DDM_REPLY_TIMEOUT);
    assert_int_equal(g_toy->replies, 1);
    assert_int_equal(g_toy->last_status, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_host_n_pending(fh, NULL, 0), 0);
    /* a pending request ends with VM_GONE when the VM goes */
    fake_host_only_chunks(fh, NULL, 0);
    assert_false(h->chunk_enabled(p, TOY_TYPE));
    fake_host_only_chunks(fh, (const uint32_t[]){TOY_TYPE}, 1);
    assert_int_equal(h->request(p, vm, TOY_TYPE, NULL, 0, 0, toy_reply, malloc(4), NULL), 0);
    /* fn NULL: a chunk reply goes to the owner as REPLY */
    assert_int_equal(h->request(p, vm, TOY_TYPE, NULL, 0, 0, NULL, NULL, NULL), 0);
    fake_host_complete_chunk(fh, 2, TOY_TYPE, "xy", 2);
    assert_int_equal(g_toy->chunks, 1);
    fake_host_vm_event(fh, vm, DDM_VM_GONE);
    assert_int_equal(g_toy->replies, 2);
    assert_int_equal(g_toy->last_status, DDM_REPLY_VM_GONE);
    fake_host_free(fh);
}

static void test_timers_config_commands(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h;
    ddm_plugin *p;
    ddm_cmd *cmd;
    ddm_vm *a, *b, *c;
    ddm_vm_info ia = {.pid = 7, .app_name = "same", .device = "emu"};
    ddm_vm_info ic = {.pid = 9, .app_name = "com.example.notes"};
    ddm_vm_info ib = {.pid = 8, .app_name = "same"};
    fake_host_set_config(fh, "toy.interval", "250");
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    h = fake_host_table(fh);
    p = fake_host_plugin(fh);
    assert_string_equal(h->config_get(p, "interval"), "250");
    assert_null(h->config_get(p, "toy.interval")); /* as the core: "toy.toy.interval" */
    assert_null(h->config_get(p, "other"));
    assert_true(h->timer_add(p, 100, toy_timer, NULL, NULL) > 0);
    assert_int_equal(fake_host_n_timers(fh), 1);
    assert_int_equal(fake_host_timer_interval(fh, 0), 100);
    assert_int_equal(fake_host_fire_timers(fh), 1);
    assert_int_equal(fake_host_fire_timers(fh), 1); /* returns 0: stops */
    assert_int_equal(fake_host_n_timers(fh), 0);
    assert_int_equal(fake_host_fire_timers(fh), 0);
    a = fake_host_add_vm(fh, &ia);
    b = fake_host_add_vm(fh, &ib);
    assert_ptr_equal(h->find_vm(p, "7"), a);
    assert_ptr_equal(h->find_vm(p, "emu:7"), a);
    assert_ptr_equal(h->find_vm(p, "8"), b);
    assert_null(h->find_vm(p, "same")); /* ambiguous */
    assert_null(h->find_vm(p, "9"));
    c = fake_host_add_vm(fh, &ic);
    assert_ptr_equal(h->find_vm(p, "notes"), c); /* a unique suffix (1.2) */
    assert_ptr_equal(h->find_vm(p, "example.notes"), c);
    assert_null(h->find_vm(p, "otes")); /* a suffix starts at a dot */
    cmd = fake_host_run_command(fh, 2, (const char *const[]){"toy", "x"});
    assert_non_null(cmd);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(cmd), "done");
    assert_string_equal(fake_view_field_str(fake_cmd_result(cmd), "arg"), "x");
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "argc"), 2);
    cmd = fake_host_run_command(fh, 1, (const char *const[]){"toy"});
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_null(fake_host_run_command(fh, 1, (const char *const[]){"nope"}));
    assert_int_equal(h->vm_headline(p, a, "x", "1"), 0);
    assert_string_equal(fake_host_headline(fh, a, "x"), "1");
    assert_int_equal(h->vm_headline(p, a, "x", NULL), 0);
    assert_null(fake_host_headline(fh, a, "x"));
    {   /* typed figures (1.2): "LABEL_NAME", replaced per label, checked as the core */
        double d = 0;
        ddm_headline_figure f[2] = {{"used_percent", DDM_VAL_DOUBLE, 0, 77.5},
                                    {"used_bytes", DDM_VAL_INT, 1234, 0}};
        assert_int_equal(h->vm_headline_figures(p, a, "heap", f, 2), 0);
        assert_true(fake_host_headline_figure(fh, a, "heap_used_percent", &d));
        assert_true(d == 77.5);
        assert_true(fake_host_headline_figure(fh, a, "heap_used_bytes", &d));
        assert_true(d == 1234);
        assert_int_equal(h->vm_headline_figures(p, a, "heap", f, 1), 0);
        assert_false(fake_host_headline_figure(fh, a, "heap_used_bytes", NULL));
        f[0].name = "Used %";
        assert_int_equal(h->vm_headline_figures(p, a, "heap", f, 1), -EINVAL);
        f[0].name = "x";
        f[0].type = DDM_VAL_STR;
        assert_int_equal(h->vm_headline_figures(p, a, "heap", f, 1), -EINVAL);
        assert_int_equal(h->vm_headline_figures(p, a, "heap", NULL, 0), 0);
        assert_false(fake_host_headline_figure(fh, a, "heap_used_percent", NULL));
    }
    assert_int_equal(h->vm_set_name(p, a, "renamed", "pkg", 10), 0);
    assert_string_equal(fake_vm_info(a)->app_name, "renamed");
    assert_int_equal(fake_vm_info(a)->user_id, 10);
    fake_host_free(fh);
}

/* As the core (vm_tables.c): a VM holds DDM_HEADLINE_LABELS_MAX headline
 * labels and as many figure labels, counted apart; a new label past them is
 * -ENOSPC, and changing or removing one never is. Another VM has its own. */
static void test_headline_label_cap(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h;
    ddm_plugin *p;
    ddm_vm *a, *b;
    ddm_headline_figure f[2] = {{"n", DDM_VAL_INT, 1, 0}, {"m", DDM_VAL_INT, 2, 0}};
    char label[16];
    unsigned i;
    double d = 0;
    (void)state;

    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    h = fake_host_table(fh);
    p = fake_host_plugin(fh);
    a = fake_host_add_vm(fh, NULL);
    b = fake_host_add_vm(fh, NULL);
    fake_host_vm_event(fh, a, DDM_VM_READY);
    fake_host_vm_event(fh, b, DDM_VM_READY);
    for (i = 0; i < DDM_HEADLINE_LABELS_MAX; i++) {
        snprintf(label, sizeof label, "l%u", i);
        assert_int_equal(h->vm_headline(p, a, label, "x"), 0);
        /* two figures a label: the cap counts labels, not figures */
        assert_int_equal(h->vm_headline_figures(p, a, label, f, 2), 0);
    }
    assert_int_equal(h->vm_headline(p, a, "one_more", "x"), -ENOSPC);
    assert_null(fake_host_headline(fh, a, "one_more"));
    assert_int_equal(h->vm_headline_figures(p, a, "one_more", f, 1), -ENOSPC);
    assert_false(fake_host_headline_figure(fh, a, "one_more_n", NULL));
    /* bad figures are still -EINVAL first, as the core checks them first */
    f[1].type = DDM_VAL_STR;
    assert_int_equal(h->vm_headline_figures(p, a, "one_more", f, 2), -EINVAL);
    f[1].type = DDM_VAL_INT;
    /* removing an absent label at the cap is no error */
    assert_int_equal(h->vm_headline(p, a, "one_more", NULL), 0);
    assert_int_equal(h->vm_headline_figures(p, a, "one_more", NULL, 0), 0);
    /* a label held changes, at the cap */
    assert_int_equal(h->vm_headline(p, a, "l5", "changed"), 0);
    assert_string_equal(fake_host_headline(fh, a, "l5"), "changed");
    f[0].i = 42;
    assert_int_equal(h->vm_headline_figures(p, a, "l5", f, 1), 0);
    assert_true(fake_host_headline_figure(fh, a, "l5_n", &d));
    assert_true(d == 42);
    assert_false(fake_host_headline_figure(fh, a, "l5_m", NULL));
    /* the other VM has a cap of its own */
    assert_int_equal(h->vm_headline(p, b, "one_more", "x"), 0);
    assert_int_equal(h->vm_headline_figures(p, b, "one_more", f, 1), 0);
    /* one headline label removed frees one place, for headlines only */
    assert_int_equal(h->vm_headline(p, a, "l0", NULL), 0);
    assert_int_equal(h->vm_headline_figures(p, a, "one_more", f, 1), -ENOSPC);
    assert_int_equal(h->vm_headline(p, a, "one_more", "x"), 0);
    assert_int_equal(h->vm_headline(p, a, "two_more", "x"), -ENOSPC);
    /* and a figure label removed frees one for figures */
    assert_int_equal(h->vm_headline_figures(p, a, "l0", NULL, 0), 0);
    assert_int_equal(h->vm_headline_figures(p, a, "one_more", f, 1), 0);
    assert_true(fake_host_headline_figure(fh, a, "one_more_n", NULL));
    assert_int_equal(h->vm_headline_figures(p, a, "two_more", f, 1), -ENOSPC);
    fake_host_free(fh);
}

static void test_view_misuse_counted(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h;
    ddm_plugin *p;
    ddm_view *v;
    static const ddm_column cols[] = {{"n", DDM_VAL_INT, NULL}};
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    h = fake_host_table(fh);
    p = fake_host_plugin(fh);
    v = h->view_new(p, NULL, "g", DDM_VIEW_TABLE, "G");
    assert_non_null(v);
    assert_null(h->view_new(p, NULL, "g", DDM_VIEW_TABLE, "G"));
    h->view_set_columns(v, cols, 1);
    fake_host_expect_view_errors(fh);
    assert_int_equal(h->view_row(v), -EPROTO);
    h->view_begin(v);
    h->view_row(v);
    assert_int_equal(h->view_str(v, "wrong"), -EINVAL);
    assert_int_equal(h->view_str(v, NULL), 0); /* null is fine anywhere */
    assert_int_equal(h->view_int(v, 1), -EINVAL);
    assert_int_equal(h->view_commit(v), 0);
    assert_true(fake_view_cell_is_null(v, 0, "n"));
    assert_int_equal(fake_host_view_errors(fh), 3);
    fake_view_set_watchers(v, 2);
    assert_int_equal(h->view_watchers(v), 2);
    h->view_free(v);
    assert_null(fake_view_find(fh, NULL, "g"));
    fake_host_free(fh);
}

/* ------------------------------------------------ plain JVMs (ABI 1.2) */

typedef struct plain_state {
    int ready, changed, gone, ddm_events, replies, visits;
    ddm_reply_status last_status;
    uint16_t last_error;
    size_t last_len;
} plain_state;

static plain_state g_plain;

static void plain_listener(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    (void)self;
    (void)ud;
    assert_int_equal(fake_vm_info(vm)->ddm, 0);
    if (ev == DDM_VM_READY)
        g_plain.ready++;
    else if (ev == DDM_VM_CHANGED)
        g_plain.changed++;
    else
        g_plain.gone++;
}

static void ddm_listener(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    (void)self;
    (void)vm;
    (void)ev;
    (void)ud;
    g_plain.ddm_events++;
}

static void plain_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud)
{
    (void)self;
    (void)vm;
    (void)ud;
    g_plain.replies++;
    g_plain.last_status = r->status;
    g_plain.last_error = r->jdwp_error;
    g_plain.last_len = r->len;
}

static int plain_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)self;
    (void)vm;
    (void)ud;
    g_plain.visits++;
    return 0;
}

static int plain_init(ddm_plugin *self, const ddm_host *host)
{
    if (!DDM_HOST_HAS(host, register_plain_vm_listener))
        return host->register_vm_listener(self, ddm_listener, NULL, NULL);
    assert_int_equal(host->register_vm_listener(self, ddm_listener, NULL, NULL), 0);
    return host->register_plain_vm_listener(self, plain_listener, NULL, NULL);
}

static const ddm_plugin_desc plain_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, 1, sizeof(ddm_plugin_desc),
    "plain", "1", "Apache-2.0", "plain JVM toy", plain_init, NULL};

/* cmd_find_vm with a name several VMs share: the core's message, which
 * lists them (key, app, pid) by key, the first ten and how many more, then
 * how to name one; by key only when their pids do not tell them apart. */
static void test_cmd_find_vm_ambiguous_lists(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm_info ia = {.key = "k:b", .pid = 7, .app_name = "same"};
    ddm_vm_info ib = {.key = "k:a", .pid = 8, .app_name = "same"};
    ddm_vm_info in = {.app_name = "many"};
    ddm_cmd *cmd;
    const char *m;
    int i;
    (void)state;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    fake_host_add_vm(fh, &ia);
    fake_host_add_vm(fh, &ib);
    cmd = fake_host_run_command(fh, 2, (const char *const[]){"toyvm", "same"});
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_string_equal(fake_cmd_message(cmd), "'same' matches 2 VMs: k:a (same, pid 8), "
                                               "k:b (same, pid 7); name one by pid or key");
    cmd = fake_host_run_command(fh, 2, (const char *const[]){"toyvm", "7"});
    assert_string_equal(fake_cmd_message(cmd), "k:b");
    cmd = fake_host_run_command(fh, 2, (const char *const[]){"toyvm", "other"});
    assert_string_equal(fake_cmd_message(cmd), "no VM matches 'other' (try 'ddmon vms')");
    for (i = 0; i < 12; i++) { /* fake:3 .. fake:14, all pid 0 */
        fake_host_add_vm(fh, &in);
    }
    cmd = fake_host_run_command(fh, 2, (const char *const[]){"toyvm", "many"});
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    m = fake_cmd_message(cmd);
    assert_non_null(strstr(m, "'many' matches 12 VMs: fake:10 (many, pid 0), fake:11 "));
    assert_null(strstr(m, "fake:8 ")); /* the 11th and 12th by key: fake:8, fake:9 */
    assert_non_null(strstr(m, "fake:7 (many, pid 0), and 2 more; their pids do not tell "
                              "them apart: name one by key"));
    fake_host_free(fh);
}

static void test_plain_jvms(void **state)
{
    fake_host *fh = fake_host_new();
    const ddm_host *h = fake_host_table(fh);
    ddm_plugin *p = fake_host_plugin(fh);
    const uint8_t t1[8] = {0, 0, 0, 0, 0, 0, 0, 1}, t2[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    const uint8_t *held;
    size_t n;
    ddm_vm *jvm, *dvm;
    (void)state;
    memset(&g_plain, 0, sizeof g_plain);
    assert_int_equal(fake_host_load(fh, &plain_desc), 0);
    assert_int_equal(fake_host_n_plain_vm_listeners(fh), 1);
    assert_int_equal(fake_host_n_vm_listeners(fh), 1);
    /* outside init: refused as every registration */
    assert_int_equal(h->register_plain_vm_listener(p, plain_listener, NULL, NULL), -EPERM);

    jvm = fake_host_add_plain_vm(fh, &(ddm_vm_info){.pid = 7, .app_name = "Main", .ddm = 1});
    dvm = fake_host_add_vm(fh, NULL);
    assert_int_equal(fake_vm_info(jvm)->ddm, 0);
    /* not known yet */
    assert_int_equal(h->jdwp_request(p, jvm, 1, 1, NULL, 0, 0, plain_reply, NULL), -ENOTCONN);
    fake_host_vm_event(fh, jvm, DDM_VM_READY);
    fake_host_vm_event(fh, dvm, DDM_VM_READY);
    assert_int_equal(g_plain.ready, 1);
    assert_int_equal(g_plain.ddm_events, 1);
    assert_int_equal(h->foreach_plain_vm(p, plain_visit, NULL), 1);
    assert_int_equal(h->foreach_vm(p, plain_visit, NULL), 1);
    assert_int_equal(h->request(p, jvm, TOY_TYPE, NULL, 0, 0, NULL, NULL, NULL), -ENOTCONN);

    /* the allow-list, and DDM VMs */
    assert_int_equal(h->jdwp_request(p, jvm, 1, 6, NULL, 0, 0, plain_reply, NULL), -EPERM);
    assert_int_equal(h->jdwp_request(p, jvm, 0xC7, 1, NULL, 0, 0, plain_reply, NULL), -EPERM);
    assert_int_equal(h->jdwp_request(p, jvm, 1, 4, NULL, 0, 0, NULL, NULL), -EINVAL);
    assert_int_equal(h->jdwp_request(p, dvm, 1, 1, NULL, 0, 0, plain_reply, NULL), -ENOTCONN);
    assert_int_equal(fake_host_n_jdwp_requests(fh), 0);

    /* a reply, exactly once */
    assert_int_equal(h->jdwp_request(p, jvm, 1, 4, NULL, 0, 0, plain_reply, NULL), 0);
    assert_int_equal(fake_host_find_jdwp_request(fh, jvm, 1, 4, 0), 0);
    assert_int_equal(fake_host_n_jdwp_pending(fh, jvm), 1);
    fake_host_complete_jdwp(fh, 0, 0, "\0\0\0\0", 4);
    assert_int_equal(g_plain.replies, 1);
    assert_int_equal(g_plain.last_status, DDM_REPLY_CHUNK);
    assert_int_equal(g_plain.last_len, 4);
    assert_true(fake_host_jdwp_request(fh, 0)->completed);

    /* one held thread: a second Suspend -EBUSY, Resume only of that one */
    assert_int_equal(h->jdwp_request(p, jvm, 11, 3, t1, 8, 0, plain_reply, NULL), -EPERM);
    assert_int_equal(h->jdwp_request(p, jvm, 11, 2, t1, 8, 0, plain_reply, NULL), 0);
    held = fake_host_jdwp_held(fh, jvm, &n);
    assert_non_null(held);
    assert_int_equal(n, 8);
    assert_memory_equal(held, t1, 8);
    assert_int_equal(h->jdwp_request(p, jvm, 11, 2, t2, 8, 0, plain_reply, NULL), -EBUSY);
    assert_int_equal(h->jdwp_request(p, jvm, 11, 3, t2, 8, 0, plain_reply, NULL), -EPERM);
    /* a debugger: nothing but the held thread's Resume */
    fake_host_set_debugger(fh, jvm, 1);
    assert_int_equal(g_plain.changed, 1);
    assert_int_equal(g_plain.ddm_events, 1);
    assert_int_equal(fake_vm_info(jvm)->debugger, 1);
    assert_int_equal(h->jdwp_request(p, jvm, 1, 1, NULL, 0, 0, plain_reply, NULL), -EBUSY);
    assert_int_equal(h->jdwp_request(p, jvm, 11, 3, t1, 8, 0, plain_reply, NULL), 0);
    assert_null(fake_host_jdwp_held(fh, jvm, &n));
    assert_int_equal(n, 0);
    fake_host_set_debugger(fh, jvm, 0);
    assert_int_equal(g_plain.changed, 2);

    /* a Suspend the VM refuses holds nothing */
    assert_int_equal(h->jdwp_request(p, jvm, 11, 2, t2, 8, 0, plain_reply, NULL), 0);
    assert_non_null(fake_host_jdwp_held(fh, jvm, NULL));
    assert_int_equal(fake_host_n_jdwp_requests(fh), 4); /* AllThreads, Suspend, Resume, Suspend */
    assert_int_equal(fake_host_find_jdwp_request(fh, jvm, 11, 2, 2), 3);
    fake_host_complete_jdwp(fh, 1, 0, NULL, 0);
    fake_host_complete_jdwp(fh, 2, 0, NULL, 0);
    fake_host_complete_jdwp(fh, 3, 10, NULL, 0); /* INVALID_THREAD */
    assert_int_equal(g_plain.last_status, DDM_REPLY_ERROR);
    assert_int_equal(g_plain.last_error, 10);
    assert_null(fake_host_jdwp_held(fh, jvm, NULL));

    /* the VM goes: pending requests end with VM_GONE, then the listener */
    assert_int_equal(h->jdwp_request(p, jvm, 11, 1, t1, 8, 0, plain_reply, NULL), 0);
    n = (size_t)g_plain.replies;
    fake_host_vm_event(fh, jvm, DDM_VM_GONE);
    assert_int_equal(g_plain.replies, (int)n + 1);
    assert_int_equal(g_plain.last_status, DDM_REPLY_VM_GONE);
    assert_int_equal(g_plain.gone, 1);
    assert_int_equal(g_plain.ddm_events, 1);
    assert_int_equal(h->foreach_plain_vm(p, plain_visit, NULL), 0);
    assert_int_equal(fake_host_n_jdwp_pending(fh, NULL), 0);
    fake_host_free(fh);

    /* a 1.1 core: none of the three */
    fh = fake_host_new();
    fake_host_set_abi_minor(fh, 1);
    h = fake_host_table(fh);
    assert_false(DDM_HOST_HAS(h, register_plain_vm_listener));
    assert_false(DDM_HOST_HAS(h, foreach_plain_vm));
    assert_false(DDM_HOST_HAS(h, jdwp_request));
    assert_null(h->register_plain_vm_listener);
    assert_null(h->foreach_plain_vm);
    assert_null(h->jdwp_request);
    assert_int_equal(fake_host_load(fh, &plain_desc), 0);
    assert_int_equal(fake_host_n_plain_vm_listeners(fh), 0);
    fake_host_free(fh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registration_and_delivery),
        cmocka_unit_test(test_vm_metric_logged),
        cmocka_unit_test(test_requests_exactly_once),
        cmocka_unit_test(test_timers_config_commands),
        cmocka_unit_test(test_headline_label_cap),
        cmocka_unit_test(test_view_misuse_counted),
        cmocka_unit_test(test_cmd_find_vm_ambiguous_lists),
        cmocka_unit_test(test_plain_jvms),
    };
    return cmocka_run_group_tests_name("fake-host", tests, NULL, NULL);
}
