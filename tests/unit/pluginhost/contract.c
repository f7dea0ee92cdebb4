/* SPDX-License-Identifier: Apache-2.0
 *
 * The contract scenarios (see contract.h): one plugin, "contract", whose
 * init and callbacks record what the host did, and one cmocka test per
 * promise of <ddmon/plugin.h>. Plain C and the SDK only: no glib, no core,
 * so the same file runs against the test kit and against the core.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/plugin.h>

#include "contract.h"

#define CT_OWN DDM_CHUNK('C', 'T', 'O', 'W')   /* owned by the plugin */
#define CT_REQ DDM_CHUNK('C', 'T', 'R', 'Q')   /* a request type it sends */
#define CT_REP DDM_CHUNK('C', 'T', 'R', 'P')   /* the answer's type */
#define CT_OTHER DDM_CHUNK('C', 'T', 'X', 'X') /* nobody's */
#define CT_STRM DDM_CHUNK('C', 'T', 'S', 'T')  /* owned as a stream (1.2) */

static const ct_driver *D;

/* Wait (pumping the driver) until @cond holds or 5 s pass, then assert it. */
#define CT_WAIT_FOR(h, cond)                                              \
    do {                                                                  \
        int ct_i_;                                                        \
        for (ct_i_ = 0; ct_i_ < 2500 && !(cond); ct_i_++)                 \
            if (!D->pump(h))                                              \
                break;                                                    \
        assert_true(cond);                                                \
    } while (0)

/* ------------------------------------------------------------ the plugin */

/* What the plugin does and saw; reset before each scenario. */
static struct {
    /* switches */
    int request_on_ready;   /* send CT_REQ "ab" (timeout below) with a callback */
    int request_to_owner;   /* send CT_OWN with no callback */
    unsigned timeout_ms;
    int views_on_ready;     /* publish ct.table (2 rows) and ct.rec */
    int want_timer;
    int dup_chunk;          /* claim CT_OWN twice in init */
    int dup_stream;         /* 1: claim CT_OWN as a stream too; 2: CT_STRM plainly too */
    int stream_begin_rc, stream_data_rc; /* what the stream ops answer */
    const uint8_t *stream_expect; /* the bytes a stream should carry, or NULL */
    int metrics;            /* declare metric families in init (1.3) */
    int declare_views;      /* declare ct.lazy in init (vm_view_declare, 1.6) */
    int rc_declare, rc_declare_dup, lazy_makes;
    ddm_vm *lazy_vm;          /* lazy_make's last VM and view */
    ddm_view *lazy_view;
    int lazy_made_at_ready;   /* the READY listener saw the VM's ct.lazy made */
    int unmake_views, rc_unmake, rc_unmake_dup, rc_unmake_undeclared, unmakes;
    int lazy_watchers_at_ready;
    int stop_hook;          /* register_stopping (1.8): CT_REQ "zz" to every ready VM */
    int stops, gone_at_stop, stop_req_rc;
    /* seen */
    ddm_plugin *self;
    const ddm_host *host;
    int inits, finis;
    char opt[64];
    int opt_set, full_key_set;
    int rc_reserved, rc_badname, rc_dup, rc_long;
    int ud_frees, data_frees, timer_ud_frees;
    int owned, taps, ready, gone, replies, timer_runs;
    ddm_chunk_origin last_origin;
    uint32_t last_request_type;
    size_t last_len;
    uint8_t last_data[16];
    ddm_reply_status last_status;
    uint32_t last_reply_type;
    uint8_t reply_data[16];
    size_t reply_len;
    int req_rc;
    int data_at_gone;       /* vm_get_data was still set inside the GONE listener */
    int s_begins, s_datas, s_ends, s_status, s_mismatches, stream_ud_frees, s_open;
    uint64_t s_declared, s_bytes, s_received;
    ddm_chunk_origin s_origin;
    int p_ready, p_changed, p_gone, p_not_plain; /* plain listener (1.2) */
    int p_debugger;                              /* info->debugger at the last event */
    int p_ud_frees;
    int j_replies;                               /* jdwp_request replies */
    ddm_reply_status j_status;
    uint16_t j_error;
    uint8_t j_data[32];
    size_t j_len;
    int m_rc[8];            /* register_metric results in init (1.3), see ct_init */
    char order[256];
} CT;

static void note(const char *what)
{
    size_t n = strlen(CT.order);
    snprintf(CT.order + n, sizeof CT.order - n, "%s;", what);
}

static void count_ud_free(void *p)
{
    CT.ud_frees++;
    free(p);
}

static void count_data_free(void *p)
{
    CT.data_frees++;
    note("free");
    free(p);
}

static void count_timer_ud_free(void *p)
{
    CT.timer_ud_frees++;
    free(p);
}

static int owner_fn(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                    size_t len, void *ud)
{
    (void)self;
    (void)vm;
    (void)ud;
    assert_true(len == 0 || data != NULL);
    CT.owned++;
    CT.last_origin = ci->origin;
    CT.last_request_type = ci->request_type;
    CT.last_len = len;
    memcpy(CT.last_data, data, len < sizeof CT.last_data ? len : sizeof CT.last_data);
    return DDM_OK;
}

static int tap_fn(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                  size_t len, void *ud)
{
    (void)self;
    (void)vm;
    (void)data;
    (void)len;
    (void)ud;
    if (ci->origin != DDM_ORIGIN_REQUEST)
        CT.taps++;
    return DDM_OK;
}

static void reply_fn(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    char buf[32];
    (void)self;
    (void)vm;
    (void)ud;
    CT.replies++;
    CT.last_status = r->status;
    CT.last_reply_type = r->type;
    CT.reply_len = r->len;
    if (r->status == DDM_REPLY_CHUNK)
        memcpy(CT.reply_data, r->data, r->len < sizeof CT.reply_data ? r->len : sizeof CT.reply_data);
    snprintf(buf, sizeof buf, "reply:%d", (int)r->status);
    note(buf);
}

static void count_stream_ud_free(void *p)
{
    CT.stream_ud_frees++;
    free(p);
}

static int s_begin(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, uint64_t declared,
                   void *ud)
{
    (void)self;
    (void)vm;
    (void)ud;
    assert_int_equal(ci->type, CT_STRM);
    assert_false(CT.s_open); /* one stream at a time */
    CT.s_begins++;
    CT.s_open = CT.stream_begin_rc >= 0;
    CT.s_declared = declared;
    CT.s_bytes = 0;
    CT.s_origin = ci->origin;
    note("sbegin");
    return CT.stream_begin_rc;
}

static int s_data(ddm_plugin *self, ddm_vm *vm, const uint8_t *data, size_t len, void *ud)
{
    size_t i;
    (void)self;
    (void)vm;
    (void)ud;
    assert_true(len > 0);
    assert_true(CT.s_open);
    assert_true(CT.s_bytes + len <= CT.s_declared);
    if (CT.stream_expect)
        for (i = 0; i < len; i++)
            if (data[i] != CT.stream_expect[CT.s_bytes + i])
                CT.s_mismatches++;
    CT.s_bytes += len;
    if (CT.s_datas++ == 0)
        note("sdata");
    return CT.stream_data_rc;
}

static void s_end(ddm_plugin *self, ddm_vm *vm, int status, uint64_t received, void *ud)
{
    char buf[32];
    (void)self;
    (void)vm;
    (void)ud;
    assert_true(CT.s_open); /* only after a begin that took it */
    CT.s_open = 0;
    CT.s_ends++;
    CT.s_status = status;
    CT.s_received = received;
    snprintf(buf, sizeof buf, "send:%d", status);
    note(buf);
}

static const ddm_stream_ops ct_stream_ops = {s_begin, s_data, s_end};

static void publish_views(ddm_plugin *self, ddm_vm *vm)
{
    const ddm_host *h = CT.host;
    static const ddm_column cols[] = {{"n", DDM_VAL_INT, NULL}};
    ddm_view *t = h->view_new(self, vm, "ct.table", DDM_VIEW_TABLE, "Contract table");
    ddm_view *r = h->view_new(self, NULL, "ct.rec", DDM_VIEW_RECORD, "Contract record");
    assert_non_null(t);
    assert_non_null(r);
    assert_int_equal(h->view_set_columns(t, cols, 1), 0);
    assert_int_equal(h->view_begin(t), 0);
    assert_int_equal(h->view_row(t), 0);
    assert_int_equal(h->view_int(t, 1), 0);
    assert_int_equal(h->view_row(t), 0);
    assert_int_equal(h->view_int(t, 2), 0);
    assert_int_equal(h->view_commit(t), 0);
    /* Begun and never committed: frontends keep the committed content. */
    assert_int_equal(h->view_begin(t), 0);
    assert_int_equal(h->view_row(t), 0);
    assert_int_equal(h->view_int(t, 3), 0);
    assert_int_equal(h->view_begin(r), 0);
    assert_int_equal(h->view_field_int(r, "k", 7), 0);
    assert_int_equal(h->view_commit(r), 0);
    /* A second view of the same name in the same scope is refused. */
    assert_null(h->view_new(self, vm, "ct.table", DDM_VIEW_TABLE, "again"));
}

static void listener(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    const ddm_host *h = CT.host;
    (void)ud;
    if (ev == DDM_VM_READY) {
        CT.ready++;
        note("ready");
        CT.lazy_made_at_ready = CT.lazy_vm == vm;
        CT.lazy_watchers_at_ready = CT.lazy_vm == vm ? h->view_watchers(CT.lazy_view) : -1;
        assert_int_equal(h->vm_set_data(self, vm, malloc(8), count_data_free), 0);
        if (CT.request_on_ready)
            CT.req_rc = h->request(self, vm, CT_REQ, "ab", 2, CT.timeout_ms, reply_fn, NULL, NULL);
        if (CT.request_to_owner)
            CT.req_rc = h->request(self, vm, CT_OWN, NULL, 0, CT.timeout_ms, NULL, NULL, NULL);
        if (CT.views_on_ready)
            publish_views(self, vm);
    } else if (ev == DDM_VM_GONE) {
        CT.gone++;
        CT.data_at_gone = h->vm_get_data(self, vm) != NULL;
        note("gone");
    }
}

static void count_plain_ud_free(void *p)
{
    CT.p_ud_frees++;
    free(p);
}

/* The plain JVM listener (1.2): only plain JVMs, info->ddm 0. */
static void plain_listener(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    const ddm_vm_info *info = CT.host->vm_info(vm);
    (void)self;
    (void)ud;
    if (!info || info->ddm)
        CT.p_not_plain++;
    CT.p_debugger = info ? info->debugger : -1;
    if (ev == DDM_VM_READY) {
        CT.p_ready++;
        note("pready");
    } else if (ev == DDM_VM_CHANGED) {
        CT.p_changed++;
    } else if (ev == DDM_VM_GONE) {
        CT.p_gone++;
        note("pgone");
    }
}

static void jdwp_reply_fn(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud)
{
    char buf[16];
    (void)self;
    (void)vm;
    (void)ud;
    CT.j_replies++;
    CT.j_status = r->status;
    CT.j_error = r->jdwp_error;
    CT.j_len = r->len;
    if (r->len)
        memcpy(CT.j_data, r->data, r->len < sizeof CT.j_data ? r->len : sizeof CT.j_data);
    snprintf(buf, sizeof buf, "jreply:%d", (int)r->status);
    note(buf);
}

static int count_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)self;
    (void)vm;
    ++*(int *)ud;
    return 0;
}

static int cmd_fn(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    const ddm_host *h = CT.host;
    ddm_view *res;
    int n = 0;
    (void)ud;
    (void)argv;
    if (argc > 2) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: ct-cmd [X]");
        return 0;
    }
    if (argc == 2)
        return -EIO; /* unfinished: the host finishes it as failed */
    res = h->cmd_result(cmd, DDM_VIEW_RECORD, "ct");
    assert_non_null(res);
    h->foreach_vm(self, count_vm, &n);
    h->view_begin(res);
    h->view_field_int(res, "argc", argc);
    h->view_field_int(res, "vms", n);
    h->view_commit(res);
    h->cmd_finish(cmd, DDM_CMD_OK, "done");
    return 0;
}

/* Three figures in a row, then done: the last must reach the client. */
static int prog_fn(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    const ddm_host *h = CT.host;
    (void)self;
    (void)argc;
    (void)argv;
    (void)ud;
    assert_int_equal(h->cmd_progress(cmd, 10, 100, "B"), 0);
    assert_int_equal(h->cmd_progress(cmd, 50, 100, "B"), 0);
    assert_int_equal(h->cmd_progress(cmd, 100, 100, "B"), 0);
    h->cmd_finish(cmd, DDM_CMD_OK, "done");
    return 0;
}

static int timer_fn(ddm_plugin *self, void *ud)
{
    (void)self;
    (void)ud;
    CT.timer_runs++;
    return CT.timer_runs < 2; /* twice, then stop */
}

/* Metric families (1.3): two good ones, then one refusal of each kind. */
static void ct_declare_metrics(ddm_plugin *self, const ddm_host *host)
{
    static const ddm_metric_family fams[] = {
        {"ct_items", DDM_METRIC_GAUGE, NULL, "items by kind", "kind", "ct.table"},
        {"ct_read_bytes_total", DDM_METRIC_COUNTER, "bytes", "bytes read", NULL, NULL},
        {"ct_items", DDM_METRIC_GAUGE, NULL, "again", "kind", NULL},             /* -EEXIST */
        {"ct_reads", DDM_METRIC_COUNTER, NULL, "no _total", NULL, NULL},         /* -EINVAL */
        {"ct_size_bytes", DDM_METRIC_GAUGE, "seconds", "unit not the suffix", NULL, NULL},
        {"ct_pid_items", DDM_METRIC_GAUGE, NULL, "a VM label of its own", "pid", NULL},
        {"vm_items", DDM_METRIC_GAUGE, NULL, "the core's prefix", NULL, NULL},   /* -EINVAL */
        {"ct_nohelp", DDM_METRIC_GAUGE, NULL, "", NULL, NULL},                   /* -EINVAL */
    };
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        CT.m_rc[i] = host->register_metric(self, &fams[i]);
}

static void lazy_make(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud);
static void lazy_unmake(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud);

static int stop_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)ud;
    CT.stop_req_rc = CT.host->request(self, vm, CT_REQ, "zz", 2, 0, reply_fn, NULL, NULL);
    return 0;
}

/* The stopping hook (1.8): no VM has gone yet; a last request to each. */
static void stopping_fn(ddm_plugin *self, void *ud)
{
    (void)ud;
    CT.stops++;
    CT.gone_at_stop = CT.gone;
    note("stopping");
    (void)CT.host->foreach_vm(self, stop_visit, NULL);
}

static int ct_init(ddm_plugin *self, const ddm_host *host)
{
    const char *v;
    int rc;
    char long_name[DDM_COMMAND_NAME_MAX + 2];
    CT.inits++;
    CT.self = self;
    CT.host = host;
    v = host->config_get(self, "interval");
    if (v) {
        CT.opt_set = 1;
        snprintf(CT.opt, sizeof CT.opt, "%s", v);
    }
    CT.full_key_set = host->config_get(self, "contract.interval") != NULL;
    if ((rc = host->register_chunk(self, CT_OWN, owner_fn, malloc(4), count_ud_free)) < 0)
        return rc;
    if (CT.dup_chunk)
        (void)host->register_chunk(self, CT_OWN, owner_fn, malloc(4), count_ud_free);
    if ((rc = host->register_tap(self, 0, tap_fn, malloc(4), count_ud_free)) < 0)
        return rc;
    if ((rc = host->register_vm_listener(self, listener, malloc(4), count_ud_free)) < 0)
        return rc;
    if ((rc = host->register_command(self, "ct-cmd", "ct-cmd [X]", "contract", cmd_fn, malloc(4),
                                     count_ud_free)) < 0)
        return rc;
    CT.rc_dup = host->register_command(self, "ct-cmd", "x", "x", cmd_fn, malloc(4), count_ud_free);
    CT.rc_reserved = host->register_command(self, "help", "x", "x", cmd_fn, malloc(4), count_ud_free);
    CT.rc_badname = host->register_command(self, "bad name", "x", "x", cmd_fn, malloc(4),
                                           count_ud_free);
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CT.rc_long = host->register_command(self, long_name, "x", "x", cmd_fn, malloc(4), count_ud_free);
    if (CT.want_timer && host->timer_add(self, 5, timer_fn, malloc(4), count_timer_ud_free) == 0)
        return -ENOMEM;
    if ((rc = host->register_chunk_stream(self, CT_STRM, &ct_stream_ops, malloc(4),
                                          count_stream_ud_free)) < 0)
        return rc;
    if (CT.dup_stream == 1)
        (void)host->register_chunk_stream(self, CT_OWN, &ct_stream_ops, malloc(4),
                                          count_stream_ud_free);
    if (CT.dup_stream == 2)
        (void)host->register_chunk(self, CT_STRM, owner_fn, malloc(4), count_stream_ud_free);
    if ((rc = host->register_command(self, "ct-prog", NULL, "progress", prog_fn, NULL, NULL)) < 0)
        return rc;
    if ((rc = host->register_plain_vm_listener(self, plain_listener, malloc(4), count_plain_ud_free)) < 0)
        return rc;
    if (CT.metrics)
        ct_declare_metrics(self, host);
    if (CT.declare_views) {
        CT.rc_declare = host->vm_view_declare(self, "ct.lazy", lazy_make, malloc(4), count_ud_free);
        CT.rc_declare_dup = host->vm_view_declare(self, "ct.lazy", lazy_make, malloc(4),
                                                  count_ud_free);
    }
    if (CT.stop_hook) {
        if ((rc = host->register_stopping(self, stopping_fn, malloc(4), count_ud_free)) < 0)
            return rc;
    }
    if (CT.unmake_views) {
        CT.rc_unmake = host->vm_view_unmake(self, "ct.lazy", lazy_unmake);
        CT.rc_unmake_dup = host->vm_view_unmake(self, "ct.lazy", lazy_unmake);
        CT.rc_unmake_undeclared = host->vm_view_unmake(self, "ct.nosuch", lazy_unmake);
    }
    return 0;
}

/* vm_view_declare's make: ct.lazy, one row of 5. */
static void lazy_make(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    static const ddm_column col = {"n", DDM_VAL_INT, NULL};
    ddm_view *v = CT.host->view_new(self, vm, name, DDM_VIEW_TABLE, "lazy");
    (void)ud;
    CT.lazy_makes++;
    assert_non_null(v);
    CT.lazy_vm = vm;
    CT.lazy_view = v;
    CT.host->view_set_columns(v, &col, 1);
    CT.host->view_begin(v);
    CT.host->view_row(v);
    CT.host->view_int(v, 5);
    CT.host->view_commit(v);
}

/* vm_view_unmake's: the view lazy_make made goes. */
static void lazy_unmake(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    (void)self;
    (void)ud;
    CT.unmakes++;
    assert_string_equal(name, "ct.lazy");
    assert_ptr_equal(vm, CT.lazy_vm);
    CT.host->view_free(CT.lazy_view);
    CT.lazy_view = NULL;
    CT.lazy_vm = NULL;
}

static void ct_fini(ddm_plugin *self)
{
    (void)self;
    CT.finis++;
}

static const ddm_plugin_desc ct_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR, (uint32_t)sizeof(ddm_plugin_desc),
    "contract", "1.0", "Apache-2.0", "the host contract", ct_init, ct_fini};

/* ------------------------------------------------------------- fixture */

static int setup(void **state)
{
    memset(&CT, 0, sizeof CT);
    CT.timeout_ms = 60000;
    *state = D->new_host();
    return 0;
}

static int teardown(void **state)
{
    D->free_host(*state);
    return 0;
}

static ddm_vm *ready_vm(ct_host *h, const char *key, uint32_t pid)
{
    ddm_vm *vm = D->add_vm(h, key, pid, "app");
    int before = CT.ready;
    D->vm_ready(h, vm);
    CT_WAIT_FOR(h, CT.ready == before + 1);
    return vm;
}

/* ----------------------------------------------------------- scenarios */

/* The server stops (1.8): the stopping hook runs once, before any VM goes,
 * and what it sends reaches the VM before its connection closes; the
 * request then ends with VM_GONE, and the listener hears GONE after the
 * hook. */
static void ct_stopping(void **state)
{
    ct_host *h = *state;
    ddm_vm *a, *b;
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    CT.stop_hook = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    a = ready_vm(h, "ct:1", 101);
    b = ready_vm(h, "ct:2", 102);
    D->server_stops(h);
    assert_int_equal(CT.stops, 1);
    assert_int_equal(CT.gone_at_stop, 0);
    assert_int_equal(CT.stop_req_rc, 0);
    assert_true(D->take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, CT_REQ);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "zz", 2);
    assert_true(D->take_request(h, b, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, CT_REQ);
    assert_memory_equal(buf, "zz", 2);
    CT_WAIT_FOR(h, CT.gone == 2);
    CT_WAIT_FOR(h, CT.replies == 2);
    assert_int_equal(CT.last_status, DDM_REPLY_VM_GONE);
    assert_string_equal(CT.order, "ready;ready;stopping;reply:4;gone;free;reply:4;gone;free;");
}

/* config_get(KEY) is the option PLUGIN.KEY, and only that. */
static void ct_options(void **state)
{
    ct_host *h = *state;
    D->set_option(h, "contract.interval", "250");
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.inits, 1);
    assert_true(CT.opt_set);
    assert_string_equal(CT.opt, "250");
    assert_false(CT.full_key_set); /* would be "contract.contract.interval" */
}

/* Command names: one owner, not the core's, the core's syntax; refused
 * registrations free their ud at once (rule 3). */
static void ct_command_names(void **state)
{
    ct_host *h = *state;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.rc_dup, -EEXIST);
    assert_int_equal(CT.rc_reserved, -EEXIST);
    assert_int_equal(CT.rc_badname, -EINVAL);
    assert_int_equal(CT.rc_long, -EINVAL);
    assert_int_equal(CT.ud_frees, 4);
}

/* Registration only in init: later -EPERM, and the ud is freed. */
static void ct_register_outside_init(void **state)
{
    ct_host *h = *state;
    int before;
    assert_int_equal(D->load(h, &ct_desc), 0);
    before = CT.ud_frees;
    assert_int_equal(CT.host->register_tap(CT.self, 0, tap_fn, malloc(4), count_ud_free), -EPERM);
    assert_int_equal(CT.ud_frees, before + 1);
    assert_int_equal(CT.host->register_chunk(CT.self, CT_OTHER, owner_fn, malloc(4), count_ud_free),
                     -EPERM);
    assert_int_equal(CT.ud_frees, before + 2);
}

/* A second claim on a type refuses the plugin, even when init ignores it;
 * everything it registered is undone, each ud freed once. init itself
 * succeeded, so fini runs. */
static void ct_chunk_conflict_refuses(void **state)
{
    ct_host *h = *state;
    CT.dup_chunk = 1;
    assert_int_not_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.finis, 1);
    assert_int_equal(CT.ud_frees, 4 + 4 + 1); /* 4 kept + 4 refused commands + the dup */
}

/* Events of an owned type reach the owner (after the taps); other types
 * only the taps. */
static void ct_chunk_dispatch(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    int taps;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    taps = CT.taps; /* the core shows taps its own HELO exchange too */
    D->send_event(h, vm, CT_OWN, "abc", 3);
    CT_WAIT_FOR(h, CT.owned == 1);
    assert_int_equal(CT.last_origin, DDM_ORIGIN_EVENT);
    assert_int_equal(CT.last_len, 3);
    assert_memory_equal(CT.last_data, "abc", 3);
    assert_int_equal(CT.taps, taps + 1);
    D->send_event(h, vm, CT_OTHER, "z", 1);
    CT_WAIT_FOR(h, CT.taps == taps + 2);
    assert_int_equal(CT.owned, 1);
}

/* A request goes out as sent and its callback runs exactly once, later. */
static void ct_request_reply(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    int i;
    CT.request_on_ready = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    assert_int_equal(CT.req_rc, 0);
    assert_int_equal(CT.replies, 0); /* never from inside request() */
    assert_true(D->take_request(h, vm, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, CT_REQ);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "ab", 2);
    D->reply_chunk(h, vm, id, CT_REP, "xyz", 3);
    CT_WAIT_FOR(h, CT.replies == 1);
    assert_int_equal(CT.last_status, DDM_REPLY_CHUNK);
    assert_int_equal(CT.last_reply_type, CT_REP);
    assert_int_equal(CT.reply_len, 3);
    assert_memory_equal(CT.reply_data, "xyz", 3);
    for (i = 0; i < 5; i++)
        D->pump(h);
    assert_int_equal(CT.replies, 1);
}

/* Without a callback, the answer goes to the type's owner as a reply. */
static void ct_request_to_owner(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    CT.request_to_owner = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    assert_int_equal(CT.req_rc, 0);
    assert_true(D->take_request(h, vm, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, CT_OWN);
    assert_int_equal(len, 0);
    D->reply_chunk(h, vm, id, CT_OWN, "r", 1);
    CT_WAIT_FOR(h, CT.owned == 1);
    assert_int_equal(CT.last_origin, DDM_ORIGIN_REPLY);
    assert_int_equal(CT.last_request_type, CT_OWN);
    assert_int_equal(CT.last_len, 1);
}

/* Not ready: -ENOTCONN and no callback; the ud stays the caller's. */
static void ct_request_not_ready(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    int i;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = D->add_vm(h, "ct:1", 101, "app");
    assert_int_equal(CT.host->request(CT.self, vm, CT_REQ, NULL, 0, 0, reply_fn, NULL, NULL),
                     -ENOTCONN);
    for (i = 0; i < 5; i++)
        D->pump(h);
    assert_int_equal(CT.replies, 0);
}

/* A request nobody answers ends with DDM_REPLY_TIMEOUT, once. */
static void ct_request_timeout(void **state)
{
    ct_host *h = *state;
    int i;
    CT.request_on_ready = 1;
    CT.timeout_ms = 30;
    assert_int_equal(D->load(h, &ct_desc), 0);
    (void)ready_vm(h, "ct:1", 101);
    assert_int_equal(CT.req_rc, 0);
    D->expire_requests(h);
    CT_WAIT_FOR(h, CT.replies == 1);
    assert_int_equal(CT.last_status, DDM_REPLY_TIMEOUT);
    for (i = 0; i < 5; i++)
        D->pump(h);
    assert_int_equal(CT.replies, 1);
}

/* VM gone: pending requests end with VM_GONE, then the GONE listener runs
 * with the per-VM data still there, then the data is freed; the VM's views
 * go, global ones stay; foreach_vm no longer visits it. */
static void ct_vm_gone(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    int n = 0;
    CT.request_on_ready = 1;
    CT.views_on_ready = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    assert_int_equal(D->view_rows(h, vm, "ct.table"), 2);
    D->vm_gone(h, vm);
    CT_WAIT_FOR(h, CT.gone == 1 && CT.data_frees == 1);
    assert_string_equal(CT.order, "ready;reply:4;gone;free;");
    assert_true(CT.data_at_gone);
    assert_int_equal(CT.replies, 1);
    assert_int_equal(CT.last_status, DDM_REPLY_VM_GONE);
    assert_int_equal(D->view_rows(h, vm, "ct.table"), -1);
    assert_int_equal(D->view_rows(h, NULL, "ct.rec"), 0);
    assert_int_equal(CT.host->foreach_vm(CT.self, count_vm, &n), 0);
    assert_int_equal(n, 0);
}

/* Views: what was committed is what frontends see. */
static void ct_views(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    int64_t k = 0;
    CT.views_on_ready = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    assert_int_equal(D->view_rows(h, vm, "ct.table"), 2); /* the third is not committed */
    assert_int_equal(D->view_field_int(h, NULL, "ct.rec", "k", &k), 0);
    assert_int_equal(k, 7);
    assert_int_equal(D->view_rows(h, NULL, "ct.table"), -1); /* per VM, not global */
}

/* ABI 1.6: a declared per-VM view is made by the plugin's make callback
 * when somebody looks for it, once per VM, and not before; one name per
 * plugin; only in init. */
static void ct_declared_views(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm, *other;
    int frees;
    CT.declare_views = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.rc_declare, 0);
    assert_int_equal(CT.rc_declare_dup, -EEXIST);
    vm = ready_vm(h, "ct:1", 101);
    other = ready_vm(h, "ct:2", 102);
    assert_int_equal(CT.lazy_makes, 0); /* ready, nobody looked */
    assert_int_equal(D->view_rows(h, vm, "ct.lazy"), 1);
    assert_int_equal(CT.lazy_makes, 1);
    assert_int_equal(D->view_rows(h, vm, "ct.lazy"), 1);
    assert_int_equal(CT.lazy_makes, 1); /* made once */
    assert_int_equal(D->view_rows(h, NULL, "ct.lazy"), -1); /* per VM, never global */
    assert_int_equal(D->view_rows(h, vm, "ct.other"), -1);
    assert_int_equal(CT.lazy_makes, 1);
    assert_int_equal(D->view_rows(h, other, "ct.lazy"), 1);
    assert_int_equal(CT.lazy_makes, 2);
    frees = CT.ud_frees;
    assert_int_equal(CT.host->vm_view_declare(CT.self, "ct.late", lazy_make, malloc(4),
                                              count_ud_free),
                     -EPERM);
    assert_int_equal(CT.ud_frees, frees + 1); /* the ud went at once */
    assert_int_equal(CT.host->vm_view_declare(CT.self, "", lazy_make, NULL, NULL), -EINVAL);

    /* A watch that counts a VM's declared view before the VM is ready: the
     * view is made when the VM turns ready, before its READY listeners run,
     * so a plugin sees its watcher at once (registry_dispatch.c). */
    {
        ddm_vm *late = D->add_vm(h, "ct:3", 103, "app");
        int before = CT.ready;
        D->watch_declared(h, "ct.lazy", "ct:3");
        CT.lazy_made_at_ready = 0;
        D->vm_ready(h, late);
        CT_WAIT_FOR(h, CT.ready == before + 1);
        assert_int_equal(CT.lazy_made_at_ready, 1);
        assert_true(CT.lazy_watchers_at_ready >= 1);
        assert_ptr_equal(CT.lazy_vm, late);
    }
}

/* ABI 1.6: a declared view the host made on demand (a look) and nobody
 * watches is taken back once its linger is over (vm_view_unmake): the
 * plugin frees it, the next look makes it again, the same. */
static void ct_declared_views_unmake(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    CT.declare_views = 1;
    CT.unmake_views = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.rc_unmake, 0);
    assert_int_equal(CT.rc_unmake_dup, -EEXIST);
    assert_int_equal(CT.rc_unmake_undeclared, -EINVAL);
    assert_int_equal(CT.host->vm_view_unmake(CT.self, "ct.lazy", lazy_unmake), -EPERM);
    vm = ready_vm(h, "ct:1", 101);
    assert_int_equal(CT.unmakes, 0); /* nothing made, nothing to take back */
    assert_int_equal(D->view_rows(h, vm, "ct.lazy"), 1);
    assert_int_equal(CT.lazy_makes, 1);
    D->linger_passes(h);
    assert_int_equal(CT.unmakes, 1);
    assert_null(CT.lazy_view);
    D->linger_passes(h);
    assert_int_equal(CT.unmakes, 1); /* once */
    assert_int_equal(D->view_rows(h, vm, "ct.lazy"), 1); /* made again, the same */
    assert_int_equal(CT.lazy_makes, 2);
    D->watch_declared(h, "ct.lazy", "ct:1");
    D->linger_passes(h);
    assert_int_equal(CT.unmakes, 1); /* watched: it stays */
    assert_non_null(CT.lazy_view);
}

/* ABI 1.6: a view of a name declared with an unmake that the plugin made
 * itself (data came: view_new outside any make) is taken back after the
 * linger too, and once made again that way, again (review rU 1). */
static void ct_declared_views_unmake_any_way(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    CT.declare_views = 1;
    CT.unmake_views = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    for (int round = 1; round <= 2; round++) {
        lazy_make(CT.self, vm, "ct.lazy", NULL); /* the plugin's own data path */
        assert_non_null(CT.lazy_view);
        D->linger_passes(h);
        assert_int_equal(CT.unmakes, round);
        assert_null(CT.lazy_view);
    }
    assert_int_equal(D->view_rows(h, vm, "ct.lazy"), 1); /* a look makes it again */
    assert_int_equal(CT.lazy_makes, 3);
}

/* The limits of <ddmon/plugin.h> hold, with the errors it names. */
static void ct_limits(void **state)
{
    ct_host *h = *state;
    const ddm_host *x;
    ddm_vm *vm;
    ddm_view *rec, *tab, *blob;
    ddm_column *cols;
    char *big;
    char label[DDM_HEADLINE_LABEL_MAX + 2];
    unsigned i;
    int rc = 0;
    assert_int_equal(D->load(h, &ct_desc), 0);
    x = CT.host;
    vm = ready_vm(h, "ct:1", 101);

    /* Strings: cut to DDM_VIEW_MAX_STRING bytes and kept, -E2BIG. */
    rec = x->view_new(CT.self, vm, "ct.limits", DDM_VIEW_RECORD, "limits");
    big = malloc(DDM_VIEW_MAX_STRING + 100);
    memset(big, 'x', DDM_VIEW_MAX_STRING + 99);
    big[DDM_VIEW_MAX_STRING + 99] = '\0';
    assert_int_equal(x->view_begin(rec), 0);
    assert_int_equal(x->view_field_str(rec, "s", big), -E2BIG);
    assert_int_equal(x->view_commit(rec), 0);
    assert_int_equal(D->view_field_len(h, vm, "ct.limits", "s"), (long)DDM_VIEW_MAX_STRING);

    /* Columns: more than DDM_VIEW_MAX_COLUMNS refused. */
    tab = x->view_new(CT.self, vm, "ct.cols", DDM_VIEW_TABLE, "cols");
    cols = calloc(DDM_VIEW_MAX_COLUMNS + 1, sizeof *cols);
    for (i = 0; i <= DDM_VIEW_MAX_COLUMNS; i++) {
        cols[i].name = "c";
        cols[i].type = DDM_VAL_INT;
    }
    assert_int_equal(x->view_set_columns(tab, cols, DDM_VIEW_MAX_COLUMNS + 1), -EINVAL);
    assert_int_equal(x->view_set_columns(tab, cols, 1), 0);

    /* Rows: the one past DDM_VIEW_MAX_ROWS is dropped, -E2BIG. */
    assert_int_equal(x->view_begin(tab), 0);
    for (i = 0; i < DDM_VIEW_MAX_ROWS && rc == 0; i++) {
        rc = x->view_row(tab);
        if (rc == 0)
            rc = x->view_int(tab, (int64_t)i);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(x->view_row(tab), -E2BIG);
    assert_int_equal(x->view_int(tab, 0), -E2BIG);
    assert_int_equal(x->view_commit(tab), 0);
    assert_int_equal(D->view_rows(h, vm, "ct.cols"), (int)DDM_VIEW_MAX_ROWS);

    /* Blobs: bigger than DDM_VIEW_MAX_BLOB refused before a byte is read. */
    blob = x->view_new(CT.self, vm, "ct.blob", DDM_VIEW_BLOB, "blob");
    assert_int_equal(x->view_begin(blob), 0);
    assert_int_equal(x->view_blob(blob, "application/octet-stream", big, DDM_VIEW_MAX_BLOB + 1),
                     -EFBIG);
    assert_int_equal(x->view_blob(blob, "application/octet-stream", big, 4), 0);
    assert_int_equal(x->view_commit(blob), 0);

    /* Headlines. */
    memset(label, 'l', sizeof label - 1);
    label[sizeof label - 1] = '\0';
    assert_int_equal(x->vm_headline(CT.self, vm, label, "1"), -EMSGSIZE);
    label[DDM_HEADLINE_LABEL_MAX] = '\0';
    assert_int_equal(x->vm_headline(CT.self, vm, label, "1"), 0);
    big[DDM_HEADLINE_TEXT_MAX + 1] = '\0';
    assert_int_equal(x->vm_headline(CT.self, vm, "t", big), -EMSGSIZE);
    big[DDM_HEADLINE_TEXT_MAX] = '\0';
    assert_int_equal(x->vm_headline(CT.self, vm, "t", big), 0);

    /* Requests: a payload that cannot fit DDM_REQUEST_MAX_PACKET, refused
     * before a byte is read; then DDM_REQUEST_MAX_PENDING per VM. */
    assert_int_equal(x->request(CT.self, vm, CT_REQ, big, DDM_REQUEST_MAX_PACKET, 0, reply_fn,
                                NULL, NULL),
                     -EMSGSIZE);
    for (i = 0; i < DDM_REQUEST_MAX_PENDING; i++) {
        rc = x->request(CT.self, vm, CT_REQ, NULL, 0, 0, reply_fn, NULL, NULL);
        if (rc != 0)
            fail_msg("request %u of %u: %d", i + 1, DDM_REQUEST_MAX_PENDING, rc);
    }
    assert_int_equal(x->request(CT.self, vm, CT_REQ, NULL, 0, 0, reply_fn, NULL, NULL), -ENOSPC);
    free(cols);
    free(big);
}

/* A VM holds DDM_HEADLINE_LABELS_MAX headline labels and as many figure
 * labels: a new one past them is -ENOSPC; changing or removing one is not. */
static void ct_headline_label_cap(void **state)
{
    ct_host *h = *state;
    const ddm_host *x;
    ddm_vm *vm, *other;
    ddm_headline_figure f[1] = {{"n", DDM_VAL_INT, 1, 0}};
    char label[16];
    unsigned i;
    assert_int_equal(D->load(h, &ct_desc), 0);
    x = CT.host;
    vm = ready_vm(h, "ct:1", 101);
    other = ready_vm(h, "ct:2", 102);
    for (i = 0; i < DDM_HEADLINE_LABELS_MAX; i++) {
        snprintf(label, sizeof label, "l%u", i);
        assert_int_equal(x->vm_headline(CT.self, vm, label, "x"), 0);
        assert_int_equal(x->vm_headline_figures(CT.self, vm, label, f, 1), 0);
    }
    assert_int_equal(x->vm_headline(CT.self, vm, "past", "x"), -ENOSPC);
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "past", f, 1), -ENOSPC);
    assert_int_equal(x->vm_headline(CT.self, vm, "past", NULL), 0);
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "past", NULL, 0), 0);
    assert_int_equal(x->vm_headline(CT.self, vm, "l3", "y"), 0);
    f[0].i = 2;
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "l3", f, 1), 0);
    assert_int_equal(x->vm_headline(CT.self, other, "past", "x"), 0);
    assert_int_equal(x->vm_headline_figures(CT.self, other, "past", f, 1), 0);
    assert_int_equal(x->vm_headline(CT.self, vm, "l0", NULL), 0);
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "past", f, 1), -ENOSPC);
    assert_int_equal(x->vm_headline(CT.self, vm, "past", "x"), 0);
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "l0", NULL, 0), 0);
    assert_int_equal(x->vm_headline_figures(CT.self, vm, "past", f, 1), 0);
}

/* Timers run on their own until the callback returns 0; the ud goes once. */
static void ct_timers(void **state)
{
    ct_host *h = *state;
    int i;
    CT.want_timer = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    CT_WAIT_FOR(h, CT.timer_runs == 2 && CT.timer_ud_frees == 1);
    for (i = 0; i < 20; i++)
        D->pump(h);
    assert_int_equal(CT.timer_runs, 2);
    assert_int_equal(CT.timer_ud_frees, 1);
}

/* Commands: the result record and status reach the client; an unfinished
 * command whose handler failed is finished as failed by the host. */
static void ct_commands(void **state)
{
    ct_host *h = *state;
    ddm_cmd_status st;
    char msg[64];
    static const char *const ok_argv[] = {"ct-cmd"};
    static const char *const fail_argv[] = {"ct-cmd", "x"};
    static const char *const usage_argv[] = {"ct-cmd", "x", "y"};
    assert_int_equal(D->load(h, &ct_desc), 0);
    (void)ready_vm(h, "ct:1", 101);
    D->run_command(h, 1, ok_argv);
    CT_WAIT_FOR(h, D->cmd_done(h, &st, msg, sizeof msg));
    assert_int_equal(st, DDM_CMD_OK);
    assert_string_equal(msg, "done");
    assert_int_equal(D->cmd_result_int(h, "argc"), 1);
    assert_int_equal(D->cmd_result_int(h, "vms"), 1);
    D->run_command(h, 2, fail_argv);
    CT_WAIT_FOR(h, D->cmd_done(h, &st, msg, sizeof msg));
    assert_int_equal(st, DDM_CMD_FAILED);
    D->run_command(h, 3, usage_argv);
    CT_WAIT_FOR(h, D->cmd_done(h, &st, msg, sizeof msg));
    assert_int_equal(st, DDM_CMD_USAGE);
}

static int count_run(ddm_plugin *self, void *ud)
{
    (void)self;
    ++*(int *)ud;
    return 1;
}

/* timer_wake_on_watch (1.5): when a watch begins, the timers that opted in
 * run at once (not at their hour-long interval) and the others do not;
 * after opting out, a watch wakes nothing; an id that is not a live timer
 * of the plugin is -ENOENT. */
static void ct_wake_on_watch(void **state)
{
    ct_host *h = *state;
    int woken = 0, other = 0;
    uint32_t a, b;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, timer_wake_on_watch));
    a = CT.host->timer_add(CT.self, 3600000, count_run, &woken, NULL);
    b = CT.host->timer_add(CT.self, 3600000, count_run, &other, NULL);
    assert_true(a != 0 && b != 0);
    assert_int_equal(D->watch_begins(h), 0); /* nobody opted in yet */
    assert_int_equal(CT.host->timer_wake_on_watch(CT.self, a, 1), 0);
    assert_int_equal(CT.host->timer_wake_on_watch(CT.self, a ^ b ^ 0x7777u, 1), -ENOENT);
    assert_int_equal(D->watch_begins(h), 1);
    CT_WAIT_FOR(h, woken == 1);
    assert_int_equal(other, 0);
    assert_int_equal(D->watch_begins(h), 1); /* every watch, not just the first */
    CT_WAIT_FOR(h, woken == 2);
    assert_int_equal(CT.host->timer_wake_on_watch(CT.self, a, 0), 0);
    assert_int_equal(D->watch_begins(h), 0);
    CT.host->timer_remove(CT.self, a);
    assert_int_equal(CT.host->timer_wake_on_watch(CT.self, a, 1), -ENOENT);
    CT.host->timer_remove(CT.self, b);
}

/* A timer that sleeps (1.7): it counts its runs and returns what
 * sleep_rc says; with wake_self it wakes itself during its run. */
typedef struct sleeper {
    int runs, rc, wake_self, ud_frees;
    uint32_t id;
    ct_host *watch_in_run; /* set: its next run begins a watch of the VM list (once) */
} sleeper;

static int sleeper_run(ddm_plugin *self, void *ud)
{
    sleeper *s = ud;
    s->runs++;
    if (s->wake_self)
        assert_int_equal(CT.host->timer_wake(self, s->id), 0);
    if (s->watch_in_run) {
        D->watch_vm_list(s->watch_in_run, 1);
        s->watch_in_run = NULL;
    }
    return s->rc;
}

static void sleeper_free(void *ud)
{
    ((sleeper *)ud)->ud_frees++;
}

/* Pump a while; the runs of @s must not change. */
static void assert_stays_asleep(ct_host *h, const sleeper *s)
{
    int before = s->runs;
    for (int i = 0; i < 30; i++)
        D->pump(h);
    assert_int_equal(s->runs, before);
}

/* DDM_TIMER_SLEEP (1.7): the timer stays but runs no more until woken: by
 * timer_wake, by a watch that begins or ends (the VM list's too), by a
 * view made while a watch exists (not without one), at once by a watch
 * that begins if it opted in with timer_wake_on_watch; a wake during its
 * own run keeps it ticking; a sleeping timer is removed like any
 * (its ud goes once); an unknown id is -ENOENT. */
static void ct_timer_sleep(void **state)
{
    ct_host *h = *state;
    sleeper s = {0, DDM_TIMER_SLEEP, 0, 0, 0};
    ddm_vm *vm;
    ddm_view *v;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, timer_wake));
    vm = ready_vm(h, "ct:1", 101);
    s.id = CT.host->timer_add(CT.self, 1, sleeper_run, &s, sleeper_free);
    assert_true(s.id != 0);
    CT_WAIT_FOR(h, s.runs == 1);
    assert_stays_asleep(h, &s);
    /* an explicit wake: one run, then asleep again */
    assert_int_equal(CT.host->timer_wake(CT.self, s.id), 0);
    CT_WAIT_FOR(h, s.runs == 2);
    assert_stays_asleep(h, &s);
    assert_int_equal(CT.host->timer_wake(CT.self, s.id ^ 0x7777u), -ENOENT);
    /* a view made while nobody watches anything wakes nothing */
    v = CT.host->view_new(CT.self, vm, "ct.sleep", DDM_VIEW_TABLE, "sleep");
    assert_non_null(v);
    assert_stays_asleep(h, &s);
    /* a watch of the VM list begins: the watches changed */
    D->watch_vm_list(h, 1);
    CT_WAIT_FOR(h, s.runs == 3);
    assert_stays_asleep(h, &s);
    /* a view made while a watch exists */
    CT.host->view_free(v);
    v = CT.host->view_new(CT.self, vm, "ct.sleep", DDM_VIEW_TABLE, "sleep");
    assert_non_null(v);
    CT_WAIT_FOR(h, s.runs == 4);
    assert_stays_asleep(h, &s);
    /* the watch ends */
    D->watch_vm_list(h, 0);
    CT_WAIT_FOR(h, s.runs == 5);
    assert_stays_asleep(h, &s);
    /* a wake during its own run: that run's sleep is a keep */
    s.wake_self = 1;
    assert_int_equal(CT.host->timer_wake(CT.self, s.id), 0);
    CT_WAIT_FOR(h, s.runs >= 7);
    s.wake_self = 0;
    int runs = s.runs;
    CT_WAIT_FOR(h, s.runs == runs + 1); /* this run (no self-wake) sleeps */
    assert_stays_asleep(h, &s);
    /* a watch that begins during its own run (review rI 1): that run's
     * sleep is a keep, the next run comes without a wake */
    s.watch_in_run = h;
    assert_int_equal(CT.host->timer_wake(CT.self, s.id), 0);
    CT_WAIT_FOR(h, s.runs == runs + 2);
    CT_WAIT_FOR(h, s.runs == runs + 3);
    assert_stays_asleep(h, &s);
    D->watch_vm_list(h, 0);
    CT_WAIT_FOR(h, s.runs == runs + 4);
    assert_stays_asleep(h, &s);
    /* opted in to wake on a watch: a watch that begins runs it */
    assert_int_equal(CT.host->timer_wake_on_watch(CT.self, s.id, 1), 0);
    runs = s.runs;
    assert_true(D->watch_begins(h) >= 1);
    CT_WAIT_FOR(h, s.runs == runs + 1);
    assert_stays_asleep(h, &s);
    /* keep: it ticks again on its own */
    s.rc = DDM_TIMER_KEEP;
    assert_int_equal(CT.host->timer_wake(CT.self, s.id), 0);
    CT_WAIT_FOR(h, s.runs >= runs + 4);
    /* asleep, then removed: its ud goes once, the id is gone */
    s.rc = DDM_TIMER_SLEEP;
    runs = s.runs;
    CT_WAIT_FOR(h, s.runs > runs);
    assert_stays_asleep(h, &s);
    assert_int_equal(s.ud_frees, 0);
    CT.host->timer_remove(CT.self, s.id);
    assert_int_equal(s.ud_frees, 1);
    assert_int_equal(CT.host->timer_wake(CT.self, s.id), -ENOENT);
    CT.host->view_free(v);
}

/* vm_list_watchers (1.6): 0 until a frontend watches the VM list, the
 * number of those watches while they last; a watch of other views does not
 * count. */
static void ct_vm_list_watchers(void **state)
{
    ct_host *h = *state;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, vm_list_watchers));
    assert_int_equal(CT.host->vm_list_watchers(CT.self), 0);
    (void)D->watch_begins(h); /* some other view's watch */
    assert_int_equal(CT.host->vm_list_watchers(CT.self), 0);
    D->watch_vm_list(h, 1);
    assert_int_equal(CT.host->vm_list_watchers(CT.self), 1);
    D->watch_vm_list(h, 0);
    assert_int_equal(CT.host->vm_list_watchers(CT.self), 0);
}

typedef struct visit {
    ddm_vm *seen[8];
    int n, stop_after;
} visit;

static int visit_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    visit *v = ud;
    (void)self;
    if (v->n < 8)
        v->seen[v->n] = vm;
    v->n++;
    return v->stop_after && v->n >= v->stop_after;
}

/* foreach_vm (1.1): the ready DDM VMs only; a visitor may stop it. */
static void ct_foreach_vm(void **state)
{
    ct_host *h = *state;
    ddm_vm *a, *b, *c;
    visit v;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, foreach_vm));
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_vm(CT.self, visit_vm, &v), 0);
    a = ready_vm(h, "ct:1", 101);
    b = D->add_vm(h, "ct:2", 102, "app"); /* connected, not ready */
    c = ready_vm(h, "ct:3", 103);
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_vm(CT.self, visit_vm, &v), 2);
    assert_int_equal(v.n, 2);
    assert_true((v.seen[0] == a && v.seen[1] == c) || (v.seen[0] == c && v.seen[1] == a));
    assert_true(v.seen[0] != b && v.seen[1] != b);
    memset(&v, 0, sizeof v);
    v.stop_after = 1;
    assert_int_equal(CT.host->foreach_vm(CT.self, visit_vm, &v), 1);
    D->vm_gone(h, c);
    CT_WAIT_FOR(h, CT.gone == 1);
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_vm(CT.self, visit_vm, &v), 1);
    assert_ptr_equal(v.seen[0], a);
}

/* ------------------------------------------------- streams, progress (1.2) */

/* register_chunk_stream follows register_chunk: only in init (-EPERM
 * later, ud freed); its ud is freed once at unload. */
static void ct_stream_register(void **state)
{
    ct_host *h = *state;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, register_chunk_stream));
    assert_int_equal(CT.host->register_chunk_stream(CT.self, CT_OTHER, &ct_stream_ops, malloc(4),
                                                    count_stream_ud_free),
                     -EPERM);
    assert_int_equal(CT.stream_ud_frees, 1);
}

/* One owner per type, plain or stream, both ways round: the plugin is
 * refused, everything undone, each ud freed once. */
static void ct_stream_conflict_refuses(void **state)
{
    ct_host *h = *state;
    ct_host *h2;
    CT.dup_stream = 1; /* CT_OWN is owned plainly; claimed again as a stream */
    assert_int_not_equal(D->load(h, &ct_desc), 0);
    assert_int_equal(CT.finis, 1);
    assert_int_equal(CT.stream_ud_frees, 2); /* CT_STRM's, and the refused claim's */
    memset(&CT, 0, sizeof CT);
    CT.timeout_ms = 60000;
    CT.dup_stream = 2; /* CT_STRM is a stream; claimed again plainly */
    h2 = D->new_host();
    assert_int_not_equal(D->load(h2, &ct_desc), 0);
    assert_int_equal(CT.finis, 1);
    assert_int_equal(CT.stream_ud_frees, 2);
    D->free_host(h2);
}

/* A chunk of a stream owner's type that arrives whole: begin (declared =
 * its length), one data, end(0); taps see it as any whole chunk. */
static void ct_stream_whole_chunk(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    int taps;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    taps = CT.taps;
    CT.stream_expect = (const uint8_t *)"abcdef";
    CT.order[0] = '\0';
    D->send_event(h, vm, CT_STRM, "abcdef", 6);
    CT_WAIT_FOR(h, CT.s_ends == 1);
    assert_string_equal(CT.order, "sbegin;sdata;send:0;");
    assert_int_equal(CT.s_origin, DDM_ORIGIN_EVENT);
    assert_int_equal(CT.s_declared, 6);
    assert_int_equal(CT.s_bytes, 6);
    assert_int_equal(CT.s_received, 6);
    assert_int_equal(CT.s_mismatches, 0);
    assert_int_equal(CT.taps, taps + 1);
    assert_int_equal(CT.owned, 0);
}

#define CT_STREAM_LEN (512u * 1024u)

static uint8_t *stream_bytes(void)
{
    uint8_t *b = malloc(CT_STREAM_LEN);
    uint32_t i;
    assert_non_null(b);
    for (i = 0; i < CT_STREAM_LEN; i++)
        b[i] = (uint8_t)((i * 2654435761u) >> 11);
    CT.stream_expect = b;
    return b;
}

/* A large event: in pieces, byte-exact, end(0, all); taps do not see it. */
static void ct_stream_pieces(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    int taps;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    taps = CT.taps;
    b = stream_bytes();
    CT.order[0] = '\0';
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, 0);
    CT_WAIT_FOR(h, CT.s_ends == 1);
    assert_string_equal(CT.order, "sbegin;sdata;send:0;");
    assert_int_equal(CT.s_declared, CT_STREAM_LEN);
    assert_int_equal(CT.s_bytes, CT_STREAM_LEN);
    assert_int_equal(CT.s_received, CT_STREAM_LEN);
    assert_int_equal(CT.s_mismatches, 0);
    assert_true(CT.s_datas > 1);
    assert_int_equal(CT.taps, taps);
    free(b);
}

/* The packet ends before the declared length: -EPROTO with what came. */
static void ct_stream_cut_short(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    b = stream_bytes();
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, -EPROTO);
    CT_WAIT_FOR(h, CT.s_ends == 1);
    assert_int_equal(CT.s_status, -EPROTO);
    assert_int_equal(CT.s_declared, CT_STREAM_LEN);
    assert_int_equal(CT.s_received, CT_STREAM_LEN / 2);
    assert_int_equal(CT.s_bytes, CT_STREAM_LEN / 2);
    assert_int_equal(CT.s_mismatches, 0);
    free(b);
}

/* The VM goes away mid-stream: -EPIPE with what came, before GONE. */
static void ct_stream_vm_gone(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    b = stream_bytes();
    CT.order[0] = '\0';
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, -EPIPE);
    CT_WAIT_FOR(h, CT.gone == 1 && CT.s_ends == 1);
    assert_string_equal(CT.order, "sbegin;sdata;send:-32;gone;free;");
    assert_int_equal(CT.s_status, -EPIPE);
    assert_int_equal(CT.s_received, CT_STREAM_LEN / 2);
    assert_int_equal(CT.s_mismatches, 0);
    free(b);
}

/* Past the user's cap: begin (told the size), then end(-EFBIG, 0) at once
 * with no data. */
static void ct_stream_past_cap(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    b = stream_bytes();
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, -EFBIG);
    CT_WAIT_FOR(h, CT.s_ends == 1);
    assert_int_equal(CT.s_declared, CT_STREAM_LEN);
    assert_int_equal(CT.s_status, -EFBIG);
    assert_int_equal(CT.s_received, 0);
    assert_int_equal(CT.s_datas, 0);
    free(b);
}

/* begin refuses: nothing more, streamed or whole. */
static void ct_stream_refused(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    int i;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    b = stream_bytes();
    CT.stream_begin_rc = -ENOSPC;
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, 0);
    CT_WAIT_FOR(h, CT.s_begins == 1);
    D->send_event(h, vm, CT_STRM, "ab", 2);
    CT_WAIT_FOR(h, CT.s_begins == 2);
    for (i = 0; i < 20; i++)
        D->pump(h);
    assert_int_equal(CT.s_datas, 0);
    assert_int_equal(CT.s_ends, 0);
    free(b);
}

/* data fails: end follows at once with its error and the bytes handed
 * over (the failing piece included); no more data. */
static void ct_stream_data_error(void **state)
{
    ct_host *h = *state;
    ddm_vm *vm;
    uint8_t *b;
    int i;
    assert_int_equal(D->load(h, &ct_desc), 0);
    vm = ready_vm(h, "ct:1", 101);
    b = stream_bytes();
    CT.stream_data_rc = -EIO;
    D->send_stream(h, vm, CT_STRM, b, CT_STREAM_LEN, 0);
    CT_WAIT_FOR(h, CT.s_ends == 1);
    for (i = 0; i < 20; i++)
        D->pump(h);
    assert_int_equal(CT.s_ends, 1);
    assert_int_equal(CT.s_status, -EIO);
    assert_int_equal(CT.s_datas, 1);
    assert_true(CT.s_received > 0 && CT.s_received < CT_STREAM_LEN);
    assert_int_equal(CT.s_received, CT.s_bytes);
    free(b);
}

/* cmd_progress: the last figures reach the client before the command
 * ends, whatever the host passes on in between. */
static void ct_progress(void **state)
{
    ct_host *h = *state;
    static const char *const argv[] = {"ct-prog"};
    ddm_cmd_status st;
    char msg[64], unit[8];
    uint64_t done = 0, total = 0;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, cmd_progress));
    D->run_command(h, 1, argv);
    CT_WAIT_FOR(h, D->cmd_done(h, &st, msg, sizeof msg));
    assert_int_equal(st, DDM_CMD_OK);
    assert_true(D->cmd_progress(h, &done, &total, unit, sizeof unit) >= 1);
    assert_int_equal(done, 100);
    assert_int_equal(total, 100);
    assert_string_equal(unit, "B");
}

/* ------------------------------------------------ plain JVMs (ABI 1.2) */

/* A plain JVM known to the plain listeners; its READY has come. */
static ddm_vm *plain_vm(ct_host *h, const char *key, uint32_t pid)
{
    int before = CT.p_ready;
    ddm_vm *vm = D->add_plain_vm(h, key, pid, "Main");
    CT_WAIT_FOR(h, CT.p_ready == before + 1);
    return vm;
}

/* The JDWP command the plugin sent last to @vm (it must be @cmdset/@cmd). */
static uint32_t take_jdwp(ct_host *h, ddm_vm *vm, uint8_t cmdset, uint8_t cmd, size_t want_len)
{
    uint8_t set = 0, c = 0, buf[64];
    uint32_t id = 0;
    size_t len = 0;
    assert_true(D->take_jdwp(h, vm, &set, &c, &id, buf, sizeof buf, &len));
    assert_int_equal(set, cmdset);
    assert_int_equal(c, cmd);
    assert_int_equal(len, want_len);
    return id;
}

/* register_plain_vm_listener hears plain JVMs only, register_vm_listener
 * never does; only in init; foreach_plain_vm and foreach_vm keep apart. */
static void ct_plain_listener(void **state)
{
    ct_host *h = *state;
    ddm_vm *dvm, *jvm, *jvm2;
    visit v;
    assert_int_equal(D->load(h, &ct_desc), 0);
    assert_true(DDM_HOST_HAS(CT.host, register_plain_vm_listener));
    assert_int_equal(CT.host->register_plain_vm_listener(CT.self, plain_listener, malloc(4),
                                                         count_plain_ud_free),
                     -EPERM);
    assert_int_equal(CT.p_ud_frees, 1);
    dvm = ready_vm(h, "ct:1", 101);
    assert_int_equal(CT.p_ready, 0); /* a DDM VM: the plain listener hears nothing */
    jvm = plain_vm(h, "ct:2", 102);
    jvm2 = plain_vm(h, "ct:3", 103);
    assert_int_equal(CT.ready, 1);   /* the DDM listener never hears of plain JVMs */
    assert_int_equal(CT.p_ready, 2);
    assert_int_equal(CT.p_not_plain, 0);
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_plain_vm(CT.self, visit_vm, &v), 2);
    assert_true((v.seen[0] == jvm && v.seen[1] == jvm2) || (v.seen[0] == jvm2 && v.seen[1] == jvm));
    memset(&v, 0, sizeof v);
    v.stop_after = 1;
    assert_int_equal(CT.host->foreach_plain_vm(CT.self, visit_vm, &v), 1);
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_vm(CT.self, visit_vm, &v), 1);
    assert_ptr_equal(v.seen[0], dvm);
    D->vm_gone(h, jvm);
    CT_WAIT_FOR(h, CT.p_gone == 1);
    assert_int_equal(CT.gone, 0);
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_plain_vm(CT.self, visit_vm, &v), 1);
    assert_ptr_equal(v.seen[0], jvm2);
    D->vm_gone(h, dvm);
    CT_WAIT_FOR(h, CT.gone == 1);
    assert_int_equal(CT.p_gone, 1);
    assert_int_equal(CT.p_not_plain, 0);
}

/* jdwp_request refuses, before anything is sent: off the allow-list
 * -EPERM (even on a DDM VM), a DDM VM -ENOTCONN, a debugger -EBUSY. */
static void ct_jdwp_refusals(void **state)
{
    ct_host *h = *state;
    const ddm_host *H;
    ddm_vm *dvm, *jvm;
    const uint8_t tid[8] = {0, 0, 0, 0, 0, 0, 0, 7};
    uint8_t set, cmd, buf[8];
    uint32_t id;
    size_t len;
    assert_int_equal(D->load(h, &ct_desc), 0);
    H = CT.host;
    dvm = ready_vm(h, "ct:1", 101);
    jvm = plain_vm(h, "ct:2", 102);
    /* VirtualMachine.Dispose, .Suspend, .Exit; StackFrame.SetValues; the vendor set */
    assert_int_equal(H->jdwp_request(CT.self, jvm, 1, 6, NULL, 0, 0, jdwp_reply_fn, NULL), -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 1, 8, NULL, 0, 0, jdwp_reply_fn, NULL), -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 1, 10, "\0\0\0\0", 4, 0, jdwp_reply_fn, NULL),
                     -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 16, 2, NULL, 0, 0, jdwp_reply_fn, NULL), -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 0xC7, 1, NULL, 0, 0, jdwp_reply_fn, NULL),
                     -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, dvm, 1, 6, NULL, 0, 0, jdwp_reply_fn, NULL), -EPERM);
    /* allowed, but not to a DDM VM */
    assert_int_equal(H->jdwp_request(CT.self, dvm, 1, 1, NULL, 0, 0, jdwp_reply_fn, NULL),
                     -ENOTCONN);
    /* a Resume of a thread nobody holds */
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 3, tid, 8, 0, jdwp_reply_fn, NULL), -EPERM);
    /* a debugger attached: ddmon leaves the VM to it */
    D->set_debugger(h, jvm, 1);
    CT_WAIT_FOR(h, CT.p_changed == 1);
    assert_int_equal(CT.p_debugger, 1);
    assert_int_equal(H->vm_info(jvm)->debugger, 1);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 1, 1, NULL, 0, 0, jdwp_reply_fn, NULL), -EBUSY);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 2, tid, 8, 0, jdwp_reply_fn, NULL), -EBUSY);
    D->set_debugger(h, jvm, 0);
    CT_WAIT_FOR(h, CT.p_changed == 2);
    assert_int_equal(CT.p_debugger, 0);
    assert_int_equal(CT.ready, 1);
    assert_int_equal(CT.j_replies, 0);
    /* nothing reached the VM */
    assert_false(D->take_jdwp(h, jvm, &set, &cmd, &id, buf, sizeof buf, &len));
}

/* A reply (data or JDWP error) reaches the callback exactly once, never
 * from inside jdwp_request. */
static void ct_jdwp_reply(void **state)
{
    ct_host *h = *state;
    const ddm_host *H;
    ddm_vm *jvm;
    uint32_t id;
    int i;
    const uint8_t sizes[20] = {0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8};
    const uint8_t tid[8] = {0, 0, 0, 0, 0, 0, 0, 7};
    assert_int_equal(D->load(h, &ct_desc), 0);
    H = CT.host;
    jvm = plain_vm(h, "ct:2", 102);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 1, 7, NULL, 0, 0, jdwp_reply_fn, NULL), 0);
    assert_int_equal(CT.j_replies, 0);
    id = take_jdwp(h, jvm, 1, 7, 0);
    D->reply_jdwp(h, jvm, id, 0, sizes, sizeof sizes);
    CT_WAIT_FOR(h, CT.j_replies == 1);
    assert_int_equal(CT.j_status, DDM_REPLY_CHUNK);
    assert_int_equal(CT.j_len, sizeof sizes);
    assert_memory_equal(CT.j_data, sizes, sizeof sizes);
    /* ThreadReference.Name of a thread that died: INVALID_THREAD */
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 1, tid, 8, 0, jdwp_reply_fn, NULL), 0);
    id = take_jdwp(h, jvm, 11, 1, 8);
    D->reply_jdwp(h, jvm, id, 10, NULL, 0);
    CT_WAIT_FOR(h, CT.j_replies == 2);
    assert_int_equal(CT.j_status, DDM_REPLY_ERROR);
    assert_int_equal(CT.j_error, 10);
    assert_int_equal(CT.j_len, 0);
    for (i = 0; i < 20; i++)
        (void)D->pump(h);
    assert_int_equal(CT.j_replies, 2);
    assert_string_equal(CT.order, "pready;jreply:0;jreply:2;");
}

/* One thread held suspended per VM: a second Suspend -EBUSY; Resume only
 * of that thread (also while a debugger is attached); a Suspend the VM
 * refuses holds nothing. */
static void ct_jdwp_one_suspended(void **state)
{
    ct_host *h = *state;
    const ddm_host *H;
    ddm_vm *jvm;
    uint32_t id;
    const uint8_t t1[8] = {0, 0, 0, 0, 0, 0, 0, 1}, t2[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    assert_int_equal(D->load(h, &ct_desc), 0);
    H = CT.host;
    jvm = plain_vm(h, "ct:2", 102);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 2, t1, 8, 0, jdwp_reply_fn, NULL), 0);
    id = take_jdwp(h, jvm, 11, 2, 8);
    D->reply_jdwp(h, jvm, id, 0, NULL, 0);
    CT_WAIT_FOR(h, CT.j_replies == 1);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 2, t2, 8, 0, jdwp_reply_fn, NULL), -EBUSY);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 3, t2, 8, 0, jdwp_reply_fn, NULL), -EPERM);
    D->set_debugger(h, jvm, 1);
    CT_WAIT_FOR(h, CT.p_changed == 1);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 6, t1, 8, 0, jdwp_reply_fn, NULL), -EBUSY);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 3, t1, 8, 0, jdwp_reply_fn, NULL), 0);
    id = take_jdwp(h, jvm, 11, 3, 8);
    D->reply_jdwp(h, jvm, id, 0, NULL, 0);
    CT_WAIT_FOR(h, CT.j_replies == 2);
    D->set_debugger(h, jvm, 0);
    CT_WAIT_FOR(h, CT.p_changed == 2);
    /* released: t1 cannot be resumed twice, t2 may be suspended now */
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 3, t1, 8, 0, jdwp_reply_fn, NULL), -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 2, t2, 8, 0, jdwp_reply_fn, NULL), 0);
    id = take_jdwp(h, jvm, 11, 2, 8);
    D->reply_jdwp(h, jvm, id, 10, NULL, 0); /* INVALID_THREAD: nothing is held */
    CT_WAIT_FOR(h, CT.j_replies == 3);
    assert_int_equal(CT.j_status, DDM_REPLY_ERROR);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 3, t2, 8, 0, jdwp_reply_fn, NULL), -EPERM);
    assert_int_equal(H->jdwp_request(CT.self, jvm, 11, 2, t1, 8, 0, jdwp_reply_fn, NULL), 0);
    id = take_jdwp(h, jvm, 11, 2, 8);
    D->reply_jdwp(h, jvm, id, 0, NULL, 0);
    CT_WAIT_FOR(h, CT.j_replies == 4);
}

/* The JVM goes with a request pending: its callback runs once with
 * DDM_REPLY_VM_GONE, before the plain listener's DDM_VM_GONE. */
static void ct_jdwp_vm_gone(void **state)
{
    ct_host *h = *state;
    ddm_vm *jvm;
    visit v;
    assert_int_equal(D->load(h, &ct_desc), 0);
    jvm = plain_vm(h, "ct:2", 102);
    assert_int_equal(CT.host->jdwp_request(CT.self, jvm, 1, 4, NULL, 0, 0, jdwp_reply_fn, NULL),
                     0);
    (void)take_jdwp(h, jvm, 1, 4, 0);
    D->vm_gone(h, jvm);
    CT_WAIT_FOR(h, CT.p_gone == 1);
    assert_int_equal(CT.j_replies, 1);
    assert_int_equal(CT.j_status, DDM_REPLY_VM_GONE);
    assert_string_equal(CT.order, "pready;jreply:4;pgone;");
    memset(&v, 0, sizeof v);
    assert_int_equal(CT.host->foreach_plain_vm(CT.self, visit_vm, &v), 0);
}

/* Metrics (1.3): families declared in init only, with the SDK's rules;
 * a VM's samples replaced whole, refused as the header says. */
static void ct_metrics(void **state)
{
    ct_host *h = *state;
    const ddm_host *x;
    ddm_vm *vm;
    ddm_metric_sample s[DDM_METRIC_SAMPLES_MAX + 1];
    static const ddm_metric_family late = {"ct_late", DDM_METRIC_GAUGE, NULL, "late", NULL, NULL};
    char help[DDM_METRIC_HELP_MAX + 2];
    ddm_metric_family long_help = {"ct_long", DDM_METRIC_GAUGE, NULL, help, NULL, NULL};
    CT.metrics = 1;
    assert_int_equal(D->load(h, &ct_desc), 0);
    x = CT.host;
    assert_int_equal(CT.m_rc[0], 0);
    assert_int_equal(CT.m_rc[1], 0);
    assert_int_equal(CT.m_rc[2], -EEXIST);
    assert_int_equal(CT.m_rc[3], -EINVAL);
    assert_int_equal(CT.m_rc[4], -EINVAL);
    assert_int_equal(CT.m_rc[5], -EINVAL);
    assert_int_equal(CT.m_rc[6], -EINVAL);
    assert_int_equal(CT.m_rc[7], -EINVAL);
    memset(help, 'h', sizeof help - 1);
    help[sizeof help - 1] = '\0';
    assert_int_equal(ddm_metric_family_check(&long_help), -EMSGSIZE);
    assert_int_equal(x->register_metric(CT.self, &late), -EPERM); /* after init */
    vm = ready_vm(h, "ct:1", 101);
    memset(s, 0, sizeof s);
    s[0].label = "a";
    s[0].value = 1;
    s[1].label = "b";
    s[1].value = 2.5;
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", s, 2), 0);
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", s, 2), 0); /* unchanged */
    if (strcmp(D->name, "real") == 0) { /* the core publishes them as views */
        assert_int_equal(D->view_rows(h, NULL, "metrics.families"), 2);
        assert_int_equal(D->view_rows(h, vm, "metrics"), 2);
    }
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_late", s, 1), -ENOENT);
    s[1].label = "a";
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", s, 2), -EINVAL); /* "a" twice */
    s[1].label = NULL;
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", s, 2), -EINVAL); /* no label */
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_read_bytes_total", s + 1, 1), 0);
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_read_bytes_total", s + 1, 2), -EINVAL);
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_read_bytes_total", s, 1), -EINVAL); /* a label */
    for (int i = 0; i <= (int)DDM_METRIC_SAMPLES_MAX; i++)
        s[i].label = "same"; /* the count is checked first */
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", s, DDM_METRIC_SAMPLES_MAX + 1), -E2BIG);
    assert_int_equal(x->vm_metric(CT.self, vm, "ct_items", NULL, 0), 0); /* removed */
    if (strcmp(D->name, "real") == 0)
        assert_int_equal(D->view_rows(h, vm, "metrics"), 1); /* ct_read_bytes_total's */
}

int contract_run(const ct_driver *drv, const struct CMUnitTest *extra, size_t n_extra)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ct_options, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_command_names, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_register_outside_init, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_chunk_conflict_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_chunk_dispatch, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_request_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_request_to_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_request_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_request_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_vm_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_views, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_declared_views, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_declared_views_unmake, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_declared_views_unmake_any_way, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_headline_label_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_timers, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_wake_on_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_timer_sleep, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_vm_list_watchers, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_foreach_vm, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_register, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_conflict_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_whole_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_cut_short, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_vm_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_past_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stream_data_error, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_plain_listener, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_jdwp_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_jdwp_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_jdwp_one_suspended, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_jdwp_vm_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(ct_stopping, setup, teardown),
    };
    size_t n = sizeof tests / sizeof tests[0];
    struct CMUnitTest *all = calloc(n + n_extra, sizeof *all);
    char name[64];
    int rc;
    assert_non_null(all);
    memcpy(all, tests, sizeof tests);
    if (n_extra)
        memcpy(all + n, extra, n_extra * sizeof *extra);
    D = drv;
    snprintf(name, sizeof name, "contract-%s", drv->name);
    rc = _cmocka_run_group_tests(name, all, n + n_extra, NULL, NULL);
    free(all);
    return rc;
}
