/* SPDX-License-Identifier: Apache-2.0
 *
 * Tests of the monitor hub with the real core (libddmcore.la): TCP targets
 * to an in-process fake VM (a listener on an ephemeral 127.0.0.1 port that
 * echoes the handshake and answers HELO/FEAT, or answers HELO with a JDWP
 * error, or sends garbage), one session per key, per-key backoff, the
 * "vms" and "plugins" views, VM resolution, headlines, local discovery
 * that never opens a second connection to a port in use, and --connect.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib-unix.h>

#include "core/wire/ddm.h"
#include "core/daemon/daemon.h"
#include "core/discovery/discovery.h"
#include "core/loop/heaptrim.h"
#include "core/session/monitor-private.h" /* the backoff table's entries */

/* ------------------------------------------------------------ fake VM */

/* FAKE_SILENT accepts and reads, but never answers (not even the handshake).
 * FAKE_HELD accepts and closes at once, as a VM another debugger holds
 * (with keep_first, it keeps its first connection: that debugger's), or a
 * port that is no VM. */
typedef enum { FAKE_DDM, FAKE_PLAIN, FAKE_GARBAGE, FAKE_SILENT, FAKE_HELD } FakeMode;

typedef struct FakeVm {
    int lfd;
    guint16 port;
    guint lwatch;
    FakeMode mode;
    uint32_t pid;
    const char *name;
    guint accepted;
    GPtrArray *conns; /* FakeConn* */
    gboolean keep_first; /* FAKE_HELD: keep the first connection open (held_fd) */
    int held_fd;
} FakeVm;

typedef struct FakeConn {
    FakeVm *vm;
    int fd;
    guint watch;
    DdmJdwpReader *reader;
    gboolean shook;
} FakeConn;

static void conn_free(gpointer p)
{
    FakeConn *c = p;
    if (c->watch)
        g_source_remove(c->watch);
    if (c->fd >= 0)
        close(c->fd);
    ddm_jdwp_reader_free(c->reader);
    g_free(c);
}

static void put_u4(GByteArray *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(b, x, 4);
}

static void put_str16(GByteArray *b, const char *ascii)
{
    for (const char *s = ascii; *s; s++) {
        uint8_t x[2] = {0, (uint8_t)*s};
        g_byte_array_append(b, x, 2);
    }
}

static void conn_send(FakeConn *c, const uint8_t *p, size_t n)
{
    (void)!write(c->fd, p, n);
}

static void conn_answer(FakeConn *c, const DdmJdwpPacket *pkt)
{
    DdmChunkIter it;
    DdmChunk ch;
    uint8_t *out;
    size_t len;

    if (c->vm->mode == FAKE_PLAIN) {
        out = ddm_jdwp_build_reply(pkt->header.id, 99, NULL, 0, &len);
    } else {
        GByteArray *b = g_byte_array_new();
        uint32_t type = 0;
        ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
        if (ddm_chunk_iter_next(&it, &ch) == DDM_CHUNK_OK && ch.type == DDM_CHUNK_HELO) {
            const char *ident = "FakeVM v1";
            put_u4(b, 1);
            put_u4(b, c->vm->pid);
            put_u4(b, (uint32_t)strlen(ident));
            put_u4(b, (uint32_t)strlen(c->vm->name));
            put_str16(b, ident);
            put_str16(b, c->vm->name);
            type = DDM_CHUNK_HELO;
        }
        out = ddm_chunk_build_reply(pkt->header.id, type, b->data, b->len, &len);
        g_byte_array_unref(b);
    }
    conn_send(c, out, len);
    g_free(out);
}

static gboolean conn_readable(gint fd, GIOCondition cond, gpointer ud)
{
    FakeConn *c = ud;
    uint8_t buf[4096];
    ssize_t got = read(fd, buf, sizeof buf);
    DdmJdwpPacket pkt;
    DdmJdwpResult r;
    (void)cond;

    if (got <= 0) {
        c->watch = 0;
        close(c->fd);
        c->fd = -1;
        return G_SOURCE_REMOVE;
    }
    if (c->vm->mode == FAKE_SILENT)
        return G_SOURCE_CONTINUE;
    if (c->vm->mode == FAKE_GARBAGE) {
        conn_send(c, (const uint8_t *)"HTTP/1.0 400 Bad Request\r\n\r\n", 28);
        return G_SOURCE_CONTINUE;
    }
    ddm_jdwp_reader_feed(c->reader, buf, (size_t)got);
    if (!c->shook) {
        /* The handshake is the first 14 bytes: echo them. */
        c->shook = TRUE;
        conn_send(c, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    }
    while ((r = ddm_jdwp_reader_next(c->reader, &pkt)) > 0)
        if (r == DDM_JDWP_PACKET)
            conn_answer(c, &pkt);
    return G_SOURCE_CONTINUE;
}

static gboolean fake_accept(gint fd, GIOCondition cond, gpointer ud)
{
    FakeVm *vm = ud;
    FakeConn *c;
    int cfd = accept(fd, NULL, NULL);
    (void)cond;

    if (cfd < 0)
        return G_SOURCE_CONTINUE;
    vm->accepted++;
    if (vm->mode == FAKE_HELD) {
        if (vm->keep_first && vm->held_fd < 0)
            vm->held_fd = cfd;
        else
            close(cfd);
        return G_SOURCE_CONTINUE;
    }
    c = g_new0(FakeConn, 1);
    c->vm = vm;
    c->fd = cfd;
    c->reader = ddm_jdwp_reader_new(0);
    ddm_jdwp_reader_expect_handshake(c->reader);
    c->watch = g_unix_fd_add(cfd, G_IO_IN | G_IO_HUP, conn_readable, c);
    g_ptr_array_add(vm->conns, c);
    return G_SOURCE_CONTINUE;
}

static FakeVm *fake_new(FakeMode mode, uint32_t pid, const char *name)
{
    FakeVm *vm = g_new0(FakeVm, 1);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;

    vm->mode = mode;
    vm->pid = pid;
    vm->name = name;
    vm->conns = g_ptr_array_new_with_free_func(conn_free);
    vm->held_fd = -1;
    vm->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(vm->lfd >= 0);
    assert_int_equal(bind(vm->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(vm->lfd, 16), 0);
    assert_int_equal(getsockname(vm->lfd, (struct sockaddr *)&sa, &salen), 0);
    vm->port = ntohs(sa.sin_port);
    vm->lwatch = g_unix_fd_add(vm->lfd, G_IO_IN, fake_accept, vm);
    return vm;
}

/* Close every connection (the VM "exits" but keeps listening). */
static void fake_drop_conns(FakeVm *vm)
{
    g_ptr_array_set_size(vm->conns, 0);
}

static void fake_free(FakeVm *vm)
{
    g_ptr_array_unref(vm->conns);
    g_source_remove(vm->lwatch);
    close(vm->lfd);
    if (vm->held_fd >= 0)
        close(vm->held_fd);
    g_free(vm);
}

/* A port with nothing listening (bound, then closed). */
static guint16 free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    guint16 port;

    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &salen), 0);
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* --------------------------------------------------------------- helpers */

static DdmConfig *test_config(void)
{
    DdmConfig *c = ddm_config_new();
    c->scan_local = FALSE;
    c->scan_adb = FALSE;
    c->use_env_plugin_path = FALSE;
    g_free(c->installed_plugin_dir);
    c->installed_plugin_dir = g_strdup("/nonexistent/ddmon-test-plugins");
    c->selected_port = 0;
    c->debug_port_base = (guint16)(30000 + getpid() % 20000);
    c->scan_interval_ms = 50;
    c->connect_timeout_ms = 1000;
    c->handshake_timeout_ms = 1000;
    c->request_timeout_ms = 1000;
    return c;
}

/* The VM table is tested inside a whole daemon, as it runs: what its
 * sessions report reaches the "vms" view and the relay through it. One
 * daemon at a time. */
static DdmDaemon *test_daemon;

static DdmMonitor *monitor_new(DdmConfig *c)
{
    GError *err = NULL;
    assert_null(test_daemon);
    test_daemon = ddm_daemon_new(c, &err);
    assert_null(err);
    assert_non_null(test_daemon);
    return ddm_daemon_monitor(test_daemon);
}

static void daemon_free(void)
{
    ddm_daemon_free(test_daemon);
    test_daemon = NULL;
}

static gboolean flag_cb(gpointer p)
{
    *(gboolean *)p = TRUE;
    return G_SOURCE_REMOVE;
}

static void spin(guint ms)
{
    gboolean done = FALSE;
    g_timeout_add(ms, flag_cb, &done);
    while (!done)
        g_main_context_iteration(NULL, TRUE);
}

typedef gboolean (*Pred)(gpointer);

/* Spin until @pred holds (3 s at most); returns its final value. */
static gboolean spin_until(Pred pred, gpointer ud)
{
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (!pred(ud) && g_get_monotonic_time() < end)
        spin(5);
    return pred(ud);
}

typedef struct KeyState {
    DdmMonitor *mon;
    const char *key;
    DdmVmState state;
} KeyState;

static gboolean key_in_state(gpointer p)
{
    KeyState *ks = p;
    DdmVm *vm = ddm_monitor_find_vm(ks->mon, ks->key);
    return vm && vm->state == ks->state;
}

static gboolean key_gone(gpointer p)
{
    KeyState *ks = p;
    return ddm_monitor_find_vm(ks->mon, ks->key) == NULL;
}

static void wait_state(DdmMonitor *mon, const char *key, DdmVmState state)
{
    KeyState ks = {mon, key, state};
    assert_true(spin_until(key_in_state, &ks));
}

static void wait_gone(DdmMonitor *mon, const char *key)
{
    KeyState ks = {mon, key, 0};
    assert_true(spin_until(key_gone, &ks));
}

/* The committed rows of a table view as JSON (transfer full). */
static JsonNode *view_json(DdmMonitor *mon, const char *name)
{
    ddm_view *v = ddm_views_lookup(ddm_daemon_views(test_daemon), name, NULL);
    assert_non_null(v);
    return ddm_view_to_json(v, FALSE);
}

/* The "vms" row for @key, or NULL. */
static JsonArray *vms_row(JsonNode *vms, const char *key)
{
    JsonArray *rows = json_object_get_array_member(json_node_get_object(vms), "rows");
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonArray *row = json_array_get_array_element(rows, i);
        if (g_strcmp0(json_array_get_string_element(row, 0), key) == 0)
            return row;
    }
    return NULL;
}

typedef struct RowWait {
    DdmMonitor *mon;
    const char *key;
    const char *state; /* NULL: wait for the row to disappear */
} RowWait;

static gboolean row_matches(gpointer p)
{
    RowWait *w = p;
    JsonNode *vms = view_json(w->mon, "vms");
    JsonArray *row = vms_row(vms, w->key);
    gboolean ok = w->state ? row && g_strcmp0(json_array_get_string_element(row, 7), w->state) == 0
                           : row == NULL;
    json_node_unref(vms);
    return ok;
}

static void wait_row(DdmMonitor *mon, const char *key, const char *state)
{
    RowWait w = {mon, key, state};
    assert_true(spin_until(row_matches, &w));
}

static char *key_of(guint16 port)
{
    return g_strdup_printf("127.0.0.1:%u", port);
}

/* ----------------------------------------------------------------- tests */

static void test_monitor_core_views(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    static const char *const vms_cols[] = {"key", "pid", "app", "vm", "ddm", "transport",
                                           "device", "state", "debug port", "debugger", "info"};
    JsonNode *n;
    JsonArray *cols;
    (void)state;

    n = view_json(mon, "vms");
    cols = json_object_get_array_member(json_node_get_object(n), "columns");
    assert_int_equal(json_array_get_length(cols), G_N_ELEMENTS(vms_cols));
    for (guint i = 0; i < G_N_ELEMENTS(vms_cols); i++)
        assert_string_equal(json_object_get_string_member(json_array_get_object_element(cols, i),
                                                          "name"),
                            vms_cols[i]);
    assert_int_equal(json_array_get_length(json_object_get_array_member(json_node_get_object(n),
                                                                         "rows")),
                     0);
    json_node_unref(n);
    n = view_json(mon, "plugins");
    cols = json_object_get_array_member(json_node_get_object(n), "columns");
    assert_string_equal(json_object_get_string_member(json_array_get_object_element(cols, 0),
                                                      "name"),
                        "name");
    json_node_unref(n);
    daemon_free();
}

/* The round every DDM_MONITOR_TRIM_S asks core/loop/heaptrim for a trim
 * (which then comes DDM_HEAP_TRIM_QUIET_MS later): with VMs coming and
 * going, the heap's free pages would otherwise stay resident. */
static void test_monitor_round_asks_for_a_trim(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    (void)state;

    ddm_heap_trim_reset();
    assert_true(ddm_heap_trim_due() == G_MAXINT64); /* nothing pending */
    gint64 before = g_get_monotonic_time();
    ddm_monitor_trim_round(mon);
    gint64 due = ddm_heap_trim_due();
    assert_true(due != G_MAXINT64);
    assert_true(due >= before + (gint64)DDM_HEAP_TRIM_QUIET_MS * 1000);
    ddm_heap_trim_reset();
    daemon_free();
}

static void test_monitor_ready_vm_listed(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_DDM, 4321, "com.example.one");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "test");
    char *key = key_of(fake->port);
    JsonNode *vms;
    JsonArray *row;
    DdmVm *vm;
    (void)state;

    assert_string_equal(t->key, key);
    assert_int_equal(ddm_target_tcp_port(t), fake->port);
    assert_true(ddm_monitor_offer_target(mon, t));
    assert_false(ddm_monitor_offer_target(mon, t)); /* one session per key */
    wait_state(mon, key, DDM_VM_STATE_READY);
    wait_row(mon, key, "ready");
    vms = view_json(mon, "vms");
    row = vms_row(vms, key);
    assert_int_equal(json_array_get_int_element(row, 1), 4321);
    assert_string_equal(json_array_get_string_element(row, 2), "com.example.one");
    assert_string_equal(json_array_get_string_element(row, 3), "FakeVM v1");
    assert_true(json_array_get_boolean_element(row, 4));
    assert_string_equal(json_array_get_string_element(row, 5), "tcp");
    json_node_unref(vms);

    vm = ddm_monitor_find_vm(mon, key);
    assert_ptr_equal(ddm_monitor_resolve_vm(mon, "4321"), vm);
    assert_ptr_equal(ddm_monitor_resolve_vm(mon, key), vm);
    assert_ptr_equal(ddm_monitor_resolve_vm(mon, "com.example.one"), vm);
    assert_null(ddm_monitor_resolve_vm(mon, "4322"));
    assert_null(ddm_monitor_resolve_vm(mon, "nope"));
    assert_int_equal(fake->accepted, 1);

    /* Renames show in the list. */
    ddm_vm_set_name(vm, "renamed", NULL, -1);
    {
        RowWait w = {mon, key, "ready"};
        gboolean renamed = FALSE;
        gint64 end = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
        while (!renamed && g_get_monotonic_time() < end) {
            spin(10);
            vms = view_json(mon, "vms");
            row = vms_row(vms, key);
            renamed = row && g_strcmp0(json_array_get_string_element(row, 2), "renamed") == 0;
            json_node_unref(vms);
        }
        assert_true(renamed);
        (void)w;
    }

    /* Headlines join into "info" (the table comes with the first, as the host makes it). */
    assert_int_equal(ddm_vm_headline_set(vm, "threads", "12"), 1);
    assert_int_equal(ddm_vm_headline_set(vm, "heap", "3 MB"), 1);
    ddm_monitor_vm_headline_changed(mon, vm);
    spin(150);
    vms = view_json(mon, "vms");
    row = vms_row(vms, key);
    assert_string_equal(json_array_get_string_element(row, 10), "heap: 3 MB, threads: 12");
    json_node_unref(vms);

    /* The VM exits: gone from the table and the view. */
    fake_drop_conns(fake);
    wait_gone(mon, key);
    wait_row(mon, key, NULL);
    /* A VM that went away normally may be found again at once. */
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);

    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* The server starts to stop (ddm_monitor_refuse_new, before the plugins'
 * stopping hooks): a VM found from then on gets no session, and a fast
 * retry starts none either; the VM connected before keeps running. */
static void test_monitor_refuse_new(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *old = fake_new(FAKE_DDM, 4321, "com.example.old");
    FakeVm *late = fake_new(FAKE_DDM, 4322, "com.example.late");
    DdmTarget *to = ddm_target_tcp_new("127.0.0.1", old->port, "test");
    DdmTarget *tl = ddm_target_tcp_new("127.0.0.1", late->port, "test");
    char *ko = key_of(old->port), *kl = key_of(late->port);
    gboolean offered, late_found, stopping, old_ready, old_back, reoffered;
    guint late_accepted, old_accepted;
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, to));
    wait_state(mon, ko, DDM_VM_STATE_READY);
    ddm_monitor_refuse_new(mon);
    ddm_monitor_refuse_new(mon); /* idempotent */
    offered = ddm_monitor_offer_target(mon, tl);
    ddm_monitor_retry_fast(mon, kl);
    spin(100);
    late_found = ddm_monitor_find_vm(mon, kl) != NULL;
    late_accepted = late->accepted;
    stopping = ddm_monitor_stopping(mon); /* not stopped: the old VM runs on */
    DdmVm *vm = ddm_monitor_find_vm(mon, ko);
    old_ready = vm != NULL && vm->state == DDM_VM_STATE_READY;
    /* it leaves: neither the relay's fast retry (as after a debugger
     * detached) nor the next scan's offer starts a session again */
    fake_drop_conns(old);
    wait_gone(mon, ko);
    ddm_monitor_retry_fast(mon, ko);
    reoffered = ddm_monitor_offer_target(mon, to);
    spin(300);
    old_back = ddm_monitor_find_vm(mon, ko) != NULL;
    old_accepted = old->accepted;

    /* freed before the asserts: a failure leaves nothing to the next test */
    ddm_target_unref(to);
    ddm_target_unref(tl);
    daemon_free();
    fake_free(old);
    fake_free(late);
    g_free(ko);
    g_free(kl);
    assert_false(offered);
    assert_false(late_found);
    assert_int_equal(late_accepted, 0);
    assert_false(stopping);
    assert_true(old_ready);
    assert_false(reoffered);
    assert_false(old_back);
    assert_int_equal(old_accepted, 1);
}

static void test_monitor_plain_vm(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_PLAIN, 0, "");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "test");
    char *key = key_of(fake->port);
    JsonNode *vms;
    JsonArray *row;
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_PLAIN);
    wait_row(mon, key, "plain");
    vms = view_json(mon, "vms");
    row = vms_row(vms, key);
    assert_false(json_array_get_boolean_element(row, 4));
    /* The fake JVM runs in this process: ddmon finds its pid from /proc
     * (core/transport/local_proc.c), as it finds a real JVM's. */
    if (g_file_test("/proc/net/tcp", G_FILE_TEST_EXISTS))
        assert_int_equal(json_array_get_int_element(row, 1), getpid());
    json_node_unref(vms);
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

static void test_monitor_backoff_refused(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    guint16 port = free_port();
    DdmTarget *explicit = ddm_target_tcp_new("127.0.0.1", port, "connect");
    char *key = key_of(port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, explicit));
    wait_gone(mon, key);
    /* An explicit target that failed waits for its backoff, listed with the reason. */
    assert_false(ddm_monitor_offer_target(mon, explicit));
    wait_row(mon, key, "retrying");
    {
        JsonNode *vms = view_json(mon, "vms");
        JsonArray *row = vms_row(vms, key);
        assert_non_null(strstr(json_array_get_string_element(row, 10), "refused"));
        json_node_unref(vms);
    }
    spin(1100);
    assert_true(ddm_monitor_offer_target(mon, explicit));
    wait_gone(mon, key);
    assert_false(ddm_monitor_offer_target(mon, explicit));
    spin(1100); /* doubled: 2 s now */
    assert_false(ddm_monitor_offer_target(mon, explicit));
    ddm_target_unref(explicit);
    daemon_free();
    g_free(key);
}

static void test_monitor_scan_refused_is_free(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    guint16 port = free_port();
    DdmTarget *scanned = ddm_target_tcp_new("127.0.0.1", port, "local");
    scanned->speculative = TRUE; /* as the port scan makes them */
    char *key = key_of(port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, scanned));
    assert_false(g_hash_table_contains(mon->backoff, key)); /* review rD 2: an offer keeps nothing */
    wait_gone(mon, key);
    assert_false(g_hash_table_contains(mon->backoff, key)); /* nor does its refused connect */
    assert_true(ddm_monitor_offer_target(mon, scanned)); /* the scan period paces it */
    wait_gone(mon, key);
    spin(150);
    assert_int_equal(g_hash_table_size(mon->backoff), 0);
    {
        JsonNode *vms = view_json(mon, "vms");
        assert_null(vms_row(vms, key)); /* a port without a VM is not listed */
        json_node_unref(vms);
    }
    ddm_target_unref(scanned);
    daemon_free();
    g_free(key);
}

static void test_monitor_backoff_not_jdwp(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_GARBAGE, 0, "");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "local");
    t->speculative = TRUE; /* as the port scan makes them */
    char *key = key_of(fake->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, t));
    spin(20);
    {
        /* Not a VM: never listed, not even while connecting. */
        JsonNode *vms = view_json(mon, "vms");
        assert_null(vms_row(vms, key));
        json_node_unref(vms);
    }
    wait_gone(mon, key);
    assert_false(ddm_monitor_offer_target(mon, t)); /* a web server on 8000: back off */
    /* After the backoff, a real VM on that port is found and the backoff resets. */
    fake->mode = FAKE_DDM;
    fake->name = "late";
    fake->pid = 5;
    spin(1100);
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* The debugger that holds @vm (FAKE_HELD, keep_first): a connection of
 * ours, which @vm keeps. Returns its fd (the caller closes it). */
static int hold_fake(FakeVm *vm)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons(vm->port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    vm->keep_first = TRUE;
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    while (vm->held_fd < 0)
        g_main_context_iteration(NULL, TRUE);
    return fd;
}

/* A VM another debugger holds closes the connection during the handshake,
 * and that debugger's connection to its port is established on this host.
 * A server lists such a scanned port not at all (not known to be a VM)
 * and a named target as "busy", saying why and that it is retried; with
 * report_held (the in-process snapshot) the scanned port too, and back as
 * before once it is off. A port that accepts and closes at once with
 * nobody connected to it is no VM held: a named one is "retrying" with
 * the plain reason, a scanned one is never listed. */
static void test_monitor_held_busy(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fs = fake_new(FAKE_HELD, 0, ""), *fn = fake_new(FAKE_HELD, 0, "");
    FakeVm *xs = fake_new(FAKE_HELD, 0, ""), *xn = fake_new(FAKE_HELD, 0, "");
    int hs = hold_fake(fs), hn = hold_fake(fn);
    DdmTarget *ts = ddm_target_tcp_new("127.0.0.1", fs->port, "local");
    DdmTarget *tn = ddm_target_tcp_new("127.0.0.1", fn->port, "connect");
    DdmTarget *txs = ddm_target_tcp_new("127.0.0.1", xs->port, "local");
    DdmTarget *txn = ddm_target_tcp_new("127.0.0.1", xn->port, "connect");
    ts->speculative = TRUE; /* as the port scan makes them */
    txs->speculative = TRUE;
    char *ks = key_of(fs->port), *kn = key_of(fn->port);
    char *kxs = key_of(xs->port), *kxn = key_of(xn->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, ts));
    assert_true(ddm_monitor_offer_target(mon, tn));
    assert_true(ddm_monitor_offer_target(mon, txs));
    assert_true(ddm_monitor_offer_target(mon, txn));
    wait_gone(mon, ks);
    wait_gone(mon, kn);
    wait_gone(mon, kxs);
    wait_gone(mon, kxn);
    wait_row(mon, kn, "busy");
    wait_row(mon, kxn, "retrying");
    spin(150);
    {
        JsonNode *vms = view_json(mon, "vms");
        JsonArray *row = vms_row(vms, kn);
        assert_null(vms_row(vms, ks));
        assert_null(vms_row(vms, kxs));
        assert_non_null(strstr(json_array_get_string_element(row, 10),
                               "another debugger holds it (a VM takes one at a time; retried "
                               "until it is free): "));
        row = vms_row(vms, kxn);
        assert_null(strstr(json_array_get_string_element(row, 10), "another debugger"));
        json_node_unref(vms);
    }
    assert_false(ddm_monitor_held(mon, ks)); /* not listed */
    assert_true(ddm_monitor_held(mon, kn));
    assert_false(ddm_monitor_held(mon, kxn));

    ddm_monitor_report_held(mon, TRUE);
    wait_row(mon, ks, "busy");
    wait_row(mon, kn, "busy");
    assert_true(ddm_monitor_held(mon, ks));
    {
        JsonNode *vms = view_json(mon, "vms");
        JsonArray *row = vms_row(vms, ks);
        assert_non_null(strstr(json_array_get_string_element(row, 10), "another debugger holds it"));
        assert_true(json_array_get_null_element(row, 1)); /* no pid */
        json_node_unref(vms);
    }
    /* the ports nobody holds: not held in a one-shot look either */
    wait_row(mon, kxs, NULL);
    wait_row(mon, kxn, "retrying");
    assert_false(ddm_monitor_held(mon, kxs));

    ddm_monitor_report_held(mon, FALSE);
    wait_row(mon, ks, NULL);
    wait_row(mon, kn, "busy");
    ddm_target_unref(ts);
    ddm_target_unref(tn);
    ddm_target_unref(txs);
    ddm_target_unref(txn);
    daemon_free();
    close(hs);
    close(hn);
    fake_free(fs);
    fake_free(fn);
    fake_free(xs);
    fake_free(xn);
    g_free(ks);
    g_free(kn);
    g_free(kxs);
    g_free(kxn);
}

/* A VM that is up holds no backoff entry (its session holds the target)
 * and is not yet in the known-DDM set; once it went away normally its key
 * has an entry again, with its target, so the relay's fast retry still
 * finds it, and is known as DDM (its next session skips the probe). */
static void test_monitor_ready_vm_no_backoff_entry(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_DDM, 77, "com.example.entry");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "test");
    char *key = key_of(fake->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, t));
    assert_null(g_hash_table_lookup(mon->backoff, key)); /* an offer makes none (review rD 2) */
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_null(g_hash_table_lookup(mon->backoff, key));
    assert_false(g_hash_table_contains(mon->known_ddm, key)); /* noted at its end */
    gpointer orig = NULL, v = NULL; /* the table's key is the VM's own target key */
    assert_true(g_hash_table_lookup_extended(mon->vms, key, &orig, &v));
    assert_ptr_equal(orig, ((DdmVm *)v)->target->key);
    fake_drop_conns(fake);
    wait_gone(mon, key);
    assert_true(ddm_monitor_known_ddm(mon, key)); /* it spoke DDM: no probe next time */
    assert_non_null(g_hash_table_lookup(mon->backoff, key));
    assert_int_equal(ddm_monitor_backoff_until(mon, key), 0); /* a good session: no delay */
    ddm_monitor_retry_fast(mon, key); /* only the entry knows the target now */
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_null(g_hash_table_lookup(mon->backoff, key));
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* A fast retry asked for a key the monitor neither holds a session for
 * nor remembers a target of (a debugger on a port of no VM) makes no
 * backoff entry: nothing would ever start or remove it. */
static void test_monitor_retry_fast_unknown_key(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    char *key = key_of(free_port());
    (void)state;

    ddm_monitor_retry_fast(mon, key);
    gboolean made = g_hash_table_contains(mon->backoff, key);
    guint n = g_hash_table_size(mon->backoff);
    daemon_free(); /* before the asserts: a failure leaves nothing to the next test */
    g_free(key);
    assert_false(made);
    assert_int_equal(n, 0);
}

/* A VM that breaks the protocol after it is up is not retried at every
 * scan: 2 s, then 4 s (issue 15, fault 6); a session that ends without a
 * violation resets the backoff. The scan's own pacing is not involved:
 * each offer stands for one scan. */
static void test_monitor_violator_backs_off(void **state)
{
    static const uint8_t bad[11] = {0, 0, 0, 5, 0, 0, 0, 1, 0x80, 0, 0};
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_DDM, 4242, "com.example.bad");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "local");
    t->speculative = TRUE; /* as the port scan makes them */
    char *key = key_of(fake->port);
    (void)state;

    for (int round = 0; round < 2; round++) {
        assert_true(ddm_monitor_offer_target(mon, t));
        wait_state(mon, key, DDM_VM_STATE_READY);
        conn_send(g_ptr_array_index(fake->conns, fake->conns->len - 1), bad, sizeof bad);
        wait_gone(mon, key);
        assert_false(ddm_monitor_offer_target(mon, t)); /* not at the next scan */
        spin(1500);
        assert_false(ddm_monitor_offer_target(mon, t)); /* 2 s, then 4 s */
        if (round == 0)
            spin(700);
    }
    spin(1500);
    assert_false(ddm_monitor_offer_target(mon, t)); /* doubled: 4 s */
    spin(1200);
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);
    /* a good session: it ends without a violation, the next scan may retry */
    fake_drop_conns(fake);
    wait_gone(mon, key);
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_int_equal(fake->accepted, 4);
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

static void test_monitor_local_discovery(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *fake = fake_new(FAKE_DDM, 77, "scanned");
    guint16 empty = free_port();
    DdmPortRange r1 = {fake->port, fake->port}, r2 = {empty, empty};
    DdmMonitor *mon;
    char *key = key_of(fake->port);
    (void)state;

    c->scan_local = TRUE;
    g_array_set_size(c->scan_ranges, 0);
    g_array_append_val(c->scan_ranges, r1);
    g_array_append_val(c->scan_ranges, r2);
    mon = monitor_new(c);
    ddm_daemon_start(test_daemon);
    wait_state(mon, key, DDM_VM_STATE_READY);
    spin(300); /* several scan periods */
    assert_int_equal(fake->accepted, 1); /* never a second connection */
    {
        GPtrArray *all = ddm_monitor_list_vms(mon);
        assert_true(all->len >= 1);
        g_ptr_array_unref(all);
    }

    /* The VM exits and a new one takes the port: found within a period. */
    fake_drop_conns(fake);
    fake->name = "successor";
    {
        gint64 end = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
        DdmVm *vm = NULL;
        while (g_get_monotonic_time() < end) {
            spin(10);
            vm = ddm_monitor_find_vm(mon, key);
            if (vm && vm->state == DDM_VM_STATE_READY &&
                g_strcmp0(vm->info.app_name, "successor") == 0)
                break;
        }
        assert_non_null(vm);
        assert_string_equal(vm->info.app_name, "successor");
    }
    assert_int_equal(fake->accepted, 2);

    /* Switching the scan off drops its VMs. */
    assert_true(ddm_daemon_set_scan(test_daemon, "none", NULL));
    assert_null(ddm_monitor_find_vm(mon, key));
    daemon_free();
    fake_free(fake);
    g_free(key);
}

static void test_monitor_connect_discovery(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *fake = fake_new(FAKE_DDM, 88, "explicit");
    DdmMonitor *mon;
    char *key = key_of(fake->port);
    (void)state;

    g_ptr_array_add(c->connect, g_strdup_printf("127.0.0.1:%u", fake->port));
    g_ptr_array_add(c->connect, g_strdup("not-a-target"));
    mon = monitor_new(c);
    ddm_daemon_start(test_daemon);
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_string_equal(ddm_monitor_find_vm(mon, key)->target->origin, "connect");
    /* forget_target closes it; the connect module offers it again. */
    ddm_monitor_forget_target(mon, key, "test");
    assert_null(ddm_monitor_find_vm(mon, key));
    wait_state(mon, key, DDM_VM_STATE_READY);
    ddm_monitor_forget_origin(mon, "connect");
    assert_null(ddm_monitor_find_vm(mon, key));
    daemon_free();
    fake_free(fake);
    g_free(key);
}

static void test_monitor_resolve_ambiguous(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *a = fake_new(FAKE_DDM, 100, "same");
    FakeVm *b = fake_new(FAKE_DDM, 100, "same");
    DdmTarget *ta = ddm_target_tcp_new("127.0.0.1", a->port, "test");
    DdmTarget *tb = ddm_target_tcp_new("127.0.0.1", b->port, "test");
    char *ka = key_of(a->port), *kb = key_of(b->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, ta));
    wait_state(mon, ka, DDM_VM_STATE_READY);
    spin(5); /* b connects strictly later */
    assert_true(ddm_monitor_offer_target(mon, tb));
    wait_state(mon, kb, DDM_VM_STATE_READY);
    assert_null(ddm_monitor_resolve_vm(mon, "100"));
    assert_null(ddm_monitor_resolve_vm(mon, "same"));
    assert_non_null(ddm_monitor_resolve_vm(mon, ka));
    {
        /* Both have pid 100: the message offers what names one, the keys. */
        char *error = NULL;
        char *want = g_strdup_printf("'same' matches 2 VMs: %s (same, pid 100), %s (same, pid 100); "
                                     "their pids do not tell them apart: name one by key",
                                     strcmp(ka, kb) < 0 ? ka : kb, strcmp(ka, kb) < 0 ? kb : ka);
        assert_null(ddm_monitor_resolve_vm_or_error(mon, "same", &error));
        assert_string_equal(error, want);
        g_free(error);
        g_free(want);
    }
    {
        /* The newest of several (what the selected-VM port follows). */
        guint n = 0;
        assert_ptr_equal(ddm_monitor_resolve_vm_newest(mon, "same", &n), ddm_monitor_find_vm(mon, kb));
        assert_int_equal(n, 2);
        assert_ptr_equal(ddm_monitor_resolve_vm_newest(mon, ka, &n), ddm_monitor_find_vm(mon, ka));
        assert_int_equal(n, 1);
        assert_null(ddm_monitor_resolve_vm_newest(mon, "other", &n));
        assert_int_equal(n, 0);
    }
    ddm_target_unref(ta);
    ddm_target_unref(tb);
    daemon_free();
    fake_free(a);
    fake_free(b);
    g_free(ka);
    g_free(kb);
}

/* A host name: resolved asynchronously, every address tried in turn
 * ("localhost" may give ::1 first while the VM listens on 127.0.0.1). */
static void test_monitor_host_name_target(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_DDM, 9, "named");
    DdmTarget *t = ddm_target_tcp_new("localhost", fake->port, "connect");
    char *key = g_strdup_printf("localhost:%u", fake->port);
    (void)state;

    assert_string_equal(t->key, key);
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* A target forgotten while its TCP connect is in flight: the connect is
 * cancelled, its socket closed, nothing leaks (ASan) or fires late. */
static void test_monitor_forget_while_connecting(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *fake = fake_new(FAKE_DDM, 3, "x");
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", fake->port, "connect");
    char *key = key_of(fake->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, t));
    assert_int_equal(ddm_monitor_find_vm(mon, key)->state, DDM_VM_STATE_CONNECTING);
    ddm_monitor_forget_target(mon, key, "not wanted");
    assert_null(ddm_monitor_find_vm(mon, key));
    spin(100);
    assert_null(ddm_monitor_find_vm(mon, key));
    /* Forgotten means no backoff: it may be offered again at once. */
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_READY);
    ddm_target_unref(t);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* A VM the user named (--connect) is listed while its first connection is
 * still in flight; a scanned port is not. */
static void test_monitor_named_target_listed_while_connecting(void **state)
{
    DdmMonitor *mon = monitor_new(test_config());
    FakeVm *named = fake_new(FAKE_SILENT, 0, "");
    FakeVm *scanned = fake_new(FAKE_SILENT, 0, "");
    DdmTarget *tn = ddm_target_tcp_new("127.0.0.1", named->port, "connect");
    DdmTarget *ts = ddm_target_tcp_new("127.0.0.1", scanned->port, "local");
    ts->speculative = TRUE; /* as the port scan makes them */
    char *kn = key_of(named->port), *ks = key_of(scanned->port);
    (void)state;

    assert_true(ddm_monitor_offer_target(mon, tn));
    assert_true(ddm_monitor_offer_target(mon, ts));
    wait_row(mon, kn, "handshake");
    {
        JsonNode *vms = view_json(mon, "vms");
        JsonArray *row = vms_row(vms, kn);
        assert_string_equal(json_array_get_string_element(row, 5), "tcp");
        assert_true(json_array_get_null_element(row, 4)); /* DDM: not known yet */
        assert_null(vms_row(vms, ks));
        json_node_unref(vms);
    }
    /* The handshake times out: the named target is then listed as retrying. */
    wait_row(mon, kn, "retrying");
    ddm_target_unref(tn);
    ddm_target_unref(ts);
    daemon_free();
    fake_free(named);
    fake_free(scanned);
    g_free(kn);
    g_free(ks);
}

/* ------------------------------------------------------ the local scan */

/* The scan's ranges: each of @ports alone. */
static void set_ranges(DdmConfig *c, const guint16 *ports, guint n)
{
    g_array_set_size(c->scan_ranges, 0);
    for (guint i = 0; i < n; i++) {
        DdmPortRange r = {ports[i], ports[i]};
        g_array_append_val(c->scan_ranges, r);
    }
}

/* A local scan module of its own over the daemon's config (whose
 * scan_local is off: the daemon runs none), started. */
static DdmDiscovery *scan_start(void)
{
    DdmDiscovery *d = ddm_discovery_local_new(ddm_daemon_monitor(test_daemon),
                                              ddm_daemon_config(test_daemon));
    d->ops->start(d);
    return d;
}

static void scan_free(DdmDiscovery *d)
{
    d->ops->stop(d);
    d->ops->free(d);
}

static DdmLocalScanStats scan_stats(DdmDiscovery *d)
{
    DdmLocalScanStats st;
    ddm_discovery_local_stats(d, &st);
    return st;
}

typedef struct ScansWait {
    DdmDiscovery *d;
    guint scans;
} ScansWait;

static gboolean scans_done(gpointer p)
{
    ScansWait *w = p;
    return scan_stats(w->d).scans >= w->scans && scan_stats(w->d).slices > 0;
}

/* Spin until @n more scans have started, the last one over (a scan of a
 * few ports takes one slice). */
static void wait_scans(DdmDiscovery *d, guint n)
{
    ScansWait w = {d, scan_stats(d).scans + n};
    assert_true(spin_until(scans_done, &w));
}

typedef struct AcceptWait {
    FakeVm *fake;
    guint n;
} AcceptWait;

static gboolean accepted_n(gpointer p)
{
    AcceptWait *w = p;
    return w->fake->accepted >= w->n;
}

static void wait_accepted(FakeVm *fake, guint n)
{
    AcceptWait w = {fake, n};
    assert_true(spin_until(accepted_n, &w));
}

/* A scan does nothing per connected port: it visits only the ports
 * without a session; a port whose session ended is tried at the next scan. */
static void test_local_scan_skips_connected(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *vm[3];
    guint16 ports[4];
    char *keys[3];
    DdmMonitor *mon;
    DdmDiscovery *d;
    DdmLocalScanStats st;
    (void)state;

    for (guint i = 0; i < 3; i++) {
        vm[i] = fake_new(FAKE_DDM, 10 + i, "scanned");
        ports[i] = vm[i]->port;
        keys[i] = key_of(vm[i]->port);
    }
    ports[3] = free_port(); /* nothing listens there */
    set_ranges(c, ports, 4);
    mon = monitor_new(c);
    d = scan_start();
    assert_true(d->ops->first_round_done(d)); /* four ports: one slice at start */
    for (guint i = 0; i < 3; i++)
        wait_state(mon, keys[i], DDM_VM_STATE_READY);
    wait_scans(d, 3);
    st = scan_stats(d);
    assert_in_range(st.held, 3, 4); /* the empty port's connect may be in flight */
    assert_int_equal(st.visits, 1); /* the empty port alone */
    assert_int_equal(st.offers, 1); /* ... still tried at every scan */
    for (guint i = 0; i < 3; i++)
        assert_int_equal(vm[i]->accepted, 1); /* never a second connection */

    /* One VM's session ends: the next scan finds the port again. */
    fake_drop_conns(vm[1]);
    wait_accepted(vm[1], 2);
    wait_state(mon, keys[1], DDM_VM_STATE_READY);
    wait_scans(d, 3);
    st = scan_stats(d);
    assert_in_range(st.held, 3, 4);
    assert_int_equal(st.visits, 1);
    assert_int_equal(vm[0]->accepted, 1);
    assert_int_equal(vm[1]->accepted, 2);
    assert_int_equal(vm[2]->accepted, 1);

    scan_free(d);
    daemon_free();
    for (guint i = 0; i < 3; i++) {
        fake_free(vm[i]);
        g_free(keys[i]);
    }
}

/* A session of another target object for a scanned key (--connect, a fast
 * retry) holds the port too, before the scan starts or while it runs; when
 * it ends the scan takes the port back. */
static void test_local_scan_other_target_holds_port(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *a = fake_new(FAKE_DDM, 21, "a"), *b = fake_new(FAKE_DDM, 22, "b");
    guint16 ports[2] = {a->port, b->port};
    DdmTarget *ta = ddm_target_tcp_new("127.0.0.1", a->port, "connect");
    DdmTarget *tb = ddm_target_tcp_new("127.0.0.1", b->port, "connect");
    char *ka = key_of(a->port), *kb = key_of(b->port);
    DdmMonitor *mon;
    DdmDiscovery *d;
    (void)state;

    set_ranges(c, ports, 2);
    mon = monitor_new(c);
    assert_true(ddm_monitor_offer_target(mon, ta)); /* before the scan starts */
    d = scan_start();
    wait_state(mon, ka, DDM_VM_STATE_READY);
    wait_state(mon, kb, DDM_VM_STATE_READY);
    wait_scans(d, 3);
    assert_int_equal(scan_stats(d).visits, 0);
    assert_int_equal(scan_stats(d).held, 2);
    assert_int_equal(a->accepted, 1);
    assert_string_equal(ddm_monitor_find_vm(mon, ka)->target->origin, "connect");

    /* While it runs: b's scanned session gives way to a named one. */
    ddm_monitor_forget_target(mon, kb, "test");
    assert_true(ddm_monitor_offer_target(mon, tb));
    wait_state(mon, kb, DDM_VM_STATE_READY);
    wait_scans(d, 3);
    assert_int_equal(scan_stats(d).visits, 0);
    assert_int_equal(b->accepted, 2);
    assert_string_equal(ddm_monitor_find_vm(mon, kb)->target->origin, "connect");

    /* The named session ends: the scan's next round takes the port. */
    ddm_monitor_forget_target(mon, kb, "test");
    wait_accepted(b, 3);
    wait_state(mon, kb, DDM_VM_STATE_READY);
    assert_string_equal(ddm_monitor_find_vm(mon, kb)->target->origin, "local");
    assert_int_equal(a->accepted, 1);

    scan_free(d);
    ddm_target_unref(ta);
    ddm_target_unref(tb);
    daemon_free();
    fake_free(a);
    fake_free(b);
    g_free(ka);
    g_free(kb);
}

/* A scan of one port where a web server (not a VM) answers, once its
 * first connect went and left the port in backoff: what the two backoff
 * tests below start from. @interval_ms: the scan's (0: the default). */
typedef struct ParkedWeb {
    FakeVm *web;
    char *key;
    DdmMonitor *mon;
    DdmDiscovery *d;
} ParkedWeb;

static ParkedWeb parked_web_start(guint interval_ms)
{
    DdmConfig *c = test_config();
    ParkedWeb p;
    p.web = fake_new(FAKE_GARBAGE, 0, "");
    guint16 port = p.web->port;
    p.key = key_of(port);
    if (interval_ms)
        c->scan_interval_ms = interval_ms;
    set_ranges(c, &port, 1);
    p.mon = monitor_new(c);
    p.d = scan_start();
    wait_accepted(p.web, 1);
    wait_gone(p.mon, p.key);
    return p;
}

static void parked_web_free(ParkedWeb *p)
{
    scan_free(p->d);
    daemon_free();
    fake_free(p->web);
    g_free(p->key);
}

/* A port in backoff (not a VM: a web server on 8000) is parked, not looked
 * at by every scan, and tried again once its backoff is over. */
static void test_local_scan_parks_backoff(void **state)
{
    (void)state;
    ParkedWeb p = parked_web_start(0);
    gint64 t0 = g_get_monotonic_time();
    wait_scans(p.d, 3);
    assert_int_equal(scan_stats(p.d).visits, 0); /* parked: its 1 s backoff */
    assert_int_equal(scan_stats(p.d).held, 0);
    assert_int_equal(p.web->accepted, 1);
    wait_accepted(p.web, 2); /* after the backoff, never before it */
    assert_true(g_get_monotonic_time() - t0 >= 800 * 1000);
    parked_web_free(&p);
}

/* ddmon's own listening ports are never connected, and are once they are not. */
static void test_local_scan_skips_own_ports(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *fake = fake_new(FAKE_DDM, 31, "mine");
    guint16 port = fake->port;
    char *key = key_of(fake->port);
    DdmMonitor *mon;
    DdmDiscovery *d;
    (void)state;

    set_ranges(c, &port, 1);
    mon = monitor_new(c);
    ddm_monitor_own_port(mon, port, TRUE);
    d = scan_start();
    wait_scans(d, 3);
    assert_int_equal(fake->accepted, 0);
    assert_int_equal(scan_stats(d).offers, 0);
    ddm_monitor_own_port(mon, port, FALSE);
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_int_equal(fake->accepted, 1);
    scan_free(d);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

typedef struct RoundsWait {
    DdmDiscovery *d;
    guint rounds;
} RoundsWait;

static gboolean rounds_reached(gpointer p)
{
    RoundsWait *w = p;
    return ddm_discovery_connect_rounds(w->d) >= w->rounds;
}

/* --connect offers its targets again only while one has no session: a
 * server whose named VMs are all up does not wake every second for them;
 * one whose session ends is offered again within a second. */
static void test_connect_idle_while_connected(void **state)
{
    DdmConfig *c = test_config();
    FakeVm *fake = fake_new(FAKE_DDM, 41, "named");
    char *key = key_of(fake->port);
    DdmMonitor *mon;
    DdmDiscovery *d;
    guint rounds;
    (void)state;

    g_ptr_array_add(c->connect, g_strdup_printf("127.0.0.1:%u", fake->port));
    mon = monitor_new(c);
    d = ddm_discovery_connect_new(mon, ddm_daemon_config(test_daemon));
    d->ops->start(d);
    wait_state(mon, key, DDM_VM_STATE_READY);
    rounds = ddm_discovery_connect_rounds(d);
    assert_int_equal(rounds, 1);
    spin(2200); /* two periods */
    assert_int_equal(ddm_discovery_connect_rounds(d), rounds);
    assert_int_equal(fake->accepted, 1);

    /* The session ends: the next round offers it again. */
    fake_drop_conns(fake);
    {
        RoundsWait w = {d, rounds + 1};
        assert_true(spin_until(rounds_reached, &w));
    }
    wait_state(mon, key, DDM_VM_STATE_READY);
    assert_int_equal(fake->accepted, 2);
    d->ops->stop(d);
    d->ops->free(d);
    daemon_free();
    fake_free(fake);
    g_free(key);
}

/* A port bound and not listening: a connect to it is refused, and no
 * other test (they share one network namespace in a parallel make check)
 * can listen there while the descriptor, returned, is open. */
static int refusing_port(guint16 *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t salen = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &salen), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A port that accepts (the kernel's backlog) and never answers the
 * handshake: its session sits in the handshake until its timeout. The
 * listening descriptor is returned; the port in *port. */
static int silent_listener(guint16 *port)
{
    int fd = refusing_port(port); /* bound: listening, it accepts */

    assert_int_equal(listen(fd, 16), 0);
    return fd;
}

static gboolean first_round_over(gpointer p)
{
    DdmDiscovery *d = p;
    return d->ops->first_round_done(d);
}

/* Review rD 1: a scan keeps at most its cap of sessions connecting or in
 * their handshake: ports that accept and never answer held one descriptor
 * each until their handshake timeout, all at once. At the cap the scan
 * pauses, and goes on as they time out; its round is done after the last. */
static void test_local_scan_caps_in_flight(void **state)
{
    enum { N = 12, CAP = 4 };
    DdmConfig *c = test_config();
    guint16 ports[N];
    int fds[N];
    DdmDiscovery *d;
    DdmLocalScanStats st;
    (void)state;

    c->handshake_timeout_ms = 150;
    c->scan_interval_ms = 60000; /* one round in this test */
    for (guint i = 0; i < N; i++)
        fds[i] = silent_listener(&ports[i]);
    set_ranges(c, ports, N);
    monitor_new(c);
    d = ddm_discovery_local_new(ddm_daemon_monitor(test_daemon), ddm_daemon_config(test_daemon));
    ddm_discovery_local_set_max_in_flight(d, CAP);
    d->ops->start(d);
    st = scan_stats(d);
    assert_int_equal(st.in_flight, CAP); /* the first slice stopped at the cap */
    assert_int_equal(st.offers, CAP);
    assert_int_equal(st.pauses, 1);
    assert_false(d->ops->first_round_done(d));
    assert_true(spin_until(first_round_over, d));
    st = scan_stats(d);
    assert_int_equal(st.scans, 1);
    assert_int_equal(st.offers, N); /* every port tried, CAP at a time */
    assert_int_equal(st.in_flight_max, CAP);
    assert_true(st.pauses >= N / CAP - 1);
    assert_true(st.in_flight <= CAP);
    scan_free(d);
    daemon_free();
    for (guint i = 0; i < N; i++)
        close(fds[i]);
}

/* The cap follows the descriptor limit: a quarter of RLIMIT_NOFILE's soft
 * limit, between 64 and 4,096 (at 512, 10,000 VMs that answer at once
 * were started 512 at a time). */
static void test_local_scan_in_flight_cap_follows_descriptor_limit(void **state)
{
    struct rlimit was, lower;
    DdmDiscovery *d;
    (void)state;

    assert_int_equal(ddm_discovery_local_in_flight_cap(0), 64);
    assert_int_equal(ddm_discovery_local_in_flight_cap(100), 64);
    assert_int_equal(ddm_discovery_local_in_flight_cap(259), 64);
    assert_int_equal(ddm_discovery_local_in_flight_cap(260), 65);
    assert_int_equal(ddm_discovery_local_in_flight_cap(1024), 256);
    assert_int_equal(ddm_discovery_local_in_flight_cap(8192), 2048);
    assert_int_equal(ddm_discovery_local_in_flight_cap(20000), 4096);
    assert_int_equal(ddm_discovery_local_in_flight_cap(G_MAXUINT64), 4096);

    /* a new scan takes it from the limit in force */
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < 4096) {
        print_message("hard descriptor limit %llu: the scan's own cap is not checked\n",
                      (unsigned long long)was.rlim_max);
        return;
    }
    lower = was;
    lower.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &lower), 0);
    monitor_new(test_config());
    d = ddm_discovery_local_new(ddm_daemon_monitor(test_daemon), ddm_daemon_config(test_daemon));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_int_equal(scan_stats(d).in_flight_cap, 1024);
    ddm_discovery_local_set_max_in_flight(d, 3);
    assert_int_equal(scan_stats(d).in_flight_cap, 3);
    scan_free(d);
    daemon_free();
}

typedef struct OffersWait {
    DdmDiscovery *d;
    guint n;
} OffersWait;

static gboolean offered_n(gpointer p)
{
    OffersWait *w = p;
    /* and the last ones past their handshake: the round is done as soon as
     * the last slice offered them (review rZ 5) */
    return scan_stats(w->d).offers >= w->n && w->d->ops->first_round_done(w->d) &&
           scan_stats(w->d).in_flight == 0;
}

/* Review rF 3: a session that gets past its handshake (DDM_KEY_ANSWERED)
 * frees its slot in the cap at once: 6 answering VMs, cap 2, a handshake
 * timeout of a minute. Without that word, the two first stay READY, hold
 * their slots for good and the scan pauses forever. */
static void test_local_scan_answered_frees_slot(void **state)
{
    enum { N = 6, CAP = 2 };
    DdmConfig *c = test_config();
    FakeVm *fakes[N];
    guint16 ports[N];
    DdmDiscovery *d;
    DdmLocalScanStats st;
    (void)state;

    for (guint i = 0; i < N; i++) {
        fakes[i] = fake_new(FAKE_DDM, 100 + i, "answering");
        ports[i] = fakes[i]->port;
    }
    c->handshake_timeout_ms = 60000;
    c->scan_interval_ms = 60000; /* one round in this test */
    set_ranges(c, ports, N);
    monitor_new(c);
    d = ddm_discovery_local_new(ddm_daemon_monitor(test_daemon), ddm_daemon_config(test_daemon));
    ddm_discovery_local_set_max_in_flight(d, CAP);
    d->ops->start(d);
    assert_int_equal(scan_stats(d).offers, CAP);
    OffersWait w = {d, N};
    assert_true(spin_until(offered_n, &w));
    st = scan_stats(d);
    assert_int_equal(st.offers, N);
    assert_int_equal(st.in_flight, 0);
    assert_true(st.in_flight_max <= CAP);
    assert_true(d->ops->first_round_done(d));
    scan_free(d);
    daemon_free();
    for (guint i = 0; i < N; i++)
        fake_free(fakes[i]);
}

/* Review rD 9: a range wider than one slice's offers (256) is scanned over
 * several loop iterations; the first round is done only after the last
 * slice. The ports are ones this test holds bound and not listening
 * (review rF 4): a scan of consecutive ephemeral ports could take another
 * test's single-client VM or bump its accept counter. */
static void test_local_scan_slices(void **state)
{
    enum { N = 600 };
    DdmConfig *c = test_config();
    guint16 ports[N];
    int fds[N];
    DdmDiscovery *d;
    DdmLocalScanStats st;
    (void)state;

    for (guint i = 0; i < N; i++)
        fds[i] = refusing_port(&ports[i]);
    set_ranges(c, ports, N);
    c->scan_interval_ms = 60000; /* one round in this test */
    c->connect_timeout_ms = 500;
    c->handshake_timeout_ms = 200;
    monitor_new(c);
    d = scan_start();
    st = scan_stats(d);
    assert_int_equal(st.slices, 1); /* one slice at start, the rest later */
    assert_true(st.offers <= 256);
    assert_false(d->ops->first_round_done(d));
    assert_true(spin_until(first_round_over, d));
    st = scan_stats(d);
    assert_int_equal(st.scans, 1);
    assert_true(st.slices >= 3); /* 600 ports, at most 256 offers a slice */
    assert_int_equal(st.visits, st.offers); /* none parked, none held before */
    assert_int_equal(st.visits, N);
    scan_free(d);
    daemon_free();
    for (guint i = 0; i < N; i++)
        close(fds[i]);
}

/* Review rF 1: a cold server's first look waits for the sessions its
 * first discovery round begins, even those begun after the look's request
 * (a scan wider than one slice begins the rest at later iterations). 400
 * ports this test holds bound, the highest one listening and silent: it is
 * in the second slice, begun after the look began, and stays in its
 * handshake; the look is not settled until its handshake times out. */
static void test_first_look_waits_first_round(void **state)
{
    enum { N = 400 };
    DdmConfig *c = test_config();
    guint16 ports[N];
    int fds[N];
    DdmMonitor *mon;
    char *key;
    gint64 since, end;
    (void)state;

    for (guint i = 0; i < N; i++)
        fds[i] = refusing_port(&ports[i]);
    /* the descriptors in port order, the highest one listening */
    for (guint i = 0; i < N; i++)
        for (guint j = i + 1; j < N; j++)
            if (ports[j] < ports[i]) {
                guint16 p = ports[i];
                int f = fds[i];
                ports[i] = ports[j], fds[i] = fds[j];
                ports[j] = p, fds[j] = f;
            }
    assert_int_equal(listen(fds[N - 1], 16), 0);
    key = key_of(ports[N - 1]);
    set_ranges(c, ports, N);
    c->scan_local = TRUE;
    c->scan_interval_ms = 60000; /* one round in this test */
    c->handshake_timeout_ms = 700;
    mon = monitor_new(c);
    ddm_daemon_start(test_daemon); /* the first slice: 256 refused ports */
    since = g_get_monotonic_time(); /* the request comes in */
    assert_false(ddm_daemon_look_settled_since(test_daemon, since));
    wait_state(mon, key, DDM_VM_STATE_HANDSHAKE);
    /* the round is done; its last session, begun after the request, is
     * still in its handshake: waited for */
    end = g_get_monotonic_time() + 300 * 1000;
    while (g_get_monotonic_time() < end) {
        if (ddm_monitor_find_vm(mon, key))
            assert_false(ddm_daemon_look_settled_since(test_daemon, since));
        spin(5);
    }
    wait_gone(mon, key); /* its handshake timed out */
    assert_true(ddm_daemon_look_settled_since(test_daemon, since));
    daemon_free();
    for (guint i = 0; i < N; i++)
        close(fds[i]);
    g_free(key);
}

/* Review rZ 3 and 1: a --scan that starts no module (the same spec again)
 * is no first round: a look that began before a session still waits only
 * for the sessions begun before it, not for one begun after its request
 * (a silent listener, in its handshake for the whole test). */
static void test_first_look_same_scan_moves_nothing(void **state)
{
    DdmConfig *c = test_config();
    guint16 port, silent_port;
    int fd = refusing_port(&port);
    int silent = refusing_port(&silent_port);
    DdmMonitor *mon;
    gint64 since, end;
    char *key = key_of(silent_port);
    (void)state;

    assert_int_equal(listen(silent, 16), 0);
    set_ranges(c, &port, 1); /* the scan: one refused port */
    c->scan_local = TRUE;
    c->scan_interval_ms = 60000;
    c->handshake_timeout_ms = 5000;
    mon = monitor_new(c);
    ddm_daemon_start(test_daemon); /* one slice: the round is done at once */
    end = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
    while (!ddm_daemon_look_settled_since(test_daemon, g_get_monotonic_time()) &&
           g_get_monotonic_time() < end)
        spin(5); /* the refused port's session ends */
    since = g_get_monotonic_time(); /* the request comes in */
    DdmTarget *t = ddm_target_tcp_new("127.0.0.1", silent_port, "test");
    assert_true(ddm_monitor_offer_target(mon, t));
    wait_state(mon, key, DDM_VM_STATE_HANDSHAKE);
    assert_true(ddm_daemon_set_scan(test_daemon, "local", NULL)); /* starts nothing */
    for (int i = 0; i < 3; i++) { /* the stamp came before 'since', or none */
        assert_true(ddm_daemon_look_settled_since(test_daemon, since));
        spin(5);
    }
    assert_non_null(ddm_monitor_find_vm(mon, key)); /* still in its handshake */
    daemon_free();
    ddm_target_unref(t);
    close(fd);
    close(silent);
    g_free(key);
}

/* Review rD 9 (792a767): stopping the scan forgets its ports' backoffs and
 * a start rebuilds its ports: a port parked for its backoff is tried again
 * at once, not at the backoff's end. */
static void test_local_scan_restart_unparks(void **state)
{
    (void)state;
    ParkedWeb p = parked_web_start(50);
    wait_scans(p.d, 2);
    assert_int_equal(scan_stats(p.d).visits, 0); /* parked: its backoff */
    assert_true(ddm_monitor_backoff_until(p.mon, p.key) > g_get_monotonic_time());
    p.d->ops->stop(p.d);
    assert_int_equal(ddm_monitor_backoff_until(p.mon, p.key), 0); /* forgotten */
    p.d->ops->start(p.d);
    /* tried again at once: offered by the start itself (no upper bound on
     * the time to the accept, which a loaded machine could pass) */
    assert_int_equal(scan_stats(p.d).offers, 1);
    wait_accepted(p.web, 2);
    parked_web_free(&p);
}

/* The scan makes a port's key without a target (review rD 2): the same
 * key a target has, and the host it compares the monitor's word with. */
static void test_target_tcp_key(void **state)
{
    DdmTarget *t4 = ddm_target_tcp_new("127.0.0.1", 8000, "local");
    DdmTarget *t6 = ddm_target_tcp_new("::1", 8001, "local");
    g_autofree char *k4 = ddm_target_tcp_key("127.0.0.1", 8000);
    g_autofree char *k6 = ddm_target_tcp_key("::1", 8001);
    (void)state;

    assert_string_equal(k4, "127.0.0.1:8000");
    assert_string_equal(k6, "[::1]:8001");
    assert_string_equal(t4->key, k4);
    assert_string_equal(t6->key, k6);
    assert_string_equal(ddm_target_tcp_host(t6), "::1");
    ddm_target_unref(t4);
    ddm_target_unref(t6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monitor_core_views),
        cmocka_unit_test(test_monitor_round_asks_for_a_trim),
        cmocka_unit_test(test_monitor_ready_vm_listed),
        cmocka_unit_test(test_monitor_plain_vm),
        cmocka_unit_test(test_monitor_refuse_new),
        cmocka_unit_test(test_monitor_backoff_refused),
        cmocka_unit_test(test_monitor_scan_refused_is_free),
        cmocka_unit_test(test_monitor_backoff_not_jdwp),
        cmocka_unit_test(test_monitor_held_busy),
        cmocka_unit_test(test_monitor_ready_vm_no_backoff_entry),
        cmocka_unit_test(test_monitor_retry_fast_unknown_key),
        cmocka_unit_test(test_monitor_violator_backs_off),
        cmocka_unit_test(test_monitor_local_discovery),
        cmocka_unit_test(test_monitor_connect_discovery),
        cmocka_unit_test(test_monitor_resolve_ambiguous),
        cmocka_unit_test(test_monitor_host_name_target),
        cmocka_unit_test(test_monitor_forget_while_connecting),
        cmocka_unit_test(test_monitor_named_target_listed_while_connecting),
        cmocka_unit_test(test_local_scan_skips_connected),
        cmocka_unit_test(test_local_scan_other_target_holds_port),
        cmocka_unit_test(test_local_scan_parks_backoff),
        cmocka_unit_test(test_local_scan_skips_own_ports),
        cmocka_unit_test(test_connect_idle_while_connected),
        cmocka_unit_test(test_local_scan_caps_in_flight),
        cmocka_unit_test(test_local_scan_in_flight_cap_follows_descriptor_limit),
        cmocka_unit_test(test_local_scan_answered_frees_slot),
        cmocka_unit_test(test_local_scan_slices),
        cmocka_unit_test(test_first_look_waits_first_round),
        cmocka_unit_test(test_first_look_same_scan_moves_nothing),
        cmocka_unit_test(test_local_scan_restart_unparks),
        cmocka_unit_test(test_target_tcp_key),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests_name("monitor", tests, NULL, NULL);
}
