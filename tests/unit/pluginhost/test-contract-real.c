/* SPDX-License-Identifier: Apache-2.0
 *
 * The contract scenarios (contract.c) on the real core: the plugin registry
 * and host table (core/pluginhost), a real VM table (core/session) whose
 * sessions talk JDWP over socketpairs to this test, which plays the VMs
 * (handshake, HELO, events, replies), and routing from sessions to plugins
 * as core/daemon does it. Time is real: timers and request timeouts run on
 * the GLib main loop, which pump() iterates.
 *
 * Also here, on the real core only: the test plugin host-has.so (built for
 * a 1.0 core with SDK 1.1) loaded by the loader from DDM_TEST_PLUGIN_DIR.
 */
#include "build-config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/config/config.h"
#include "core/pluginhost/loader.h"
#include "core/pluginhost/registry.h"
#include "core/pluginhost/registry-private.h" /* ddm_registry_set_view_linger_ms */
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/transport/target.h"
#include "core/views/views.h"
#include "core/wire/ddm.h"
#include "core/wire/jdwp.h"
#include "tests/harness/pair-target.h"

#include "contract.h"

/* ------------------------------------------------------ a VM on a socketpair */

typedef struct PairVm {
    DdmTarget *target;
    DdmVm *vm;          /* a reference, dropped at free_host */
    int peer;           /* the VM's end */
    GByteArray *in;     /* bytes from ddmon not yet consumed */
    uint32_t helo_id, feat_id, pid;
    char *app;
    uint32_t next_event_id;
} PairVm;

/* -------------------------------------------------------------- the host */

struct ct_host {
    DdmConfig *config;
    DdmViews *views;
    DdmMonitor *monitor;
    DdmRegistry *registry;
    GPtrArray *vms;     /* PairVm* */
    gboolean cmd_done;
    int progress_reports;   /* the last command's, as the client got them */
    guint64 progress_done, progress_total;
    char progress_unit[8];
    ddm_cmd_status cmd_status;
    char *cmd_message;
    JsonNode *cmd_result;
    guint vm_list_watch; /* r_watch_vm_list's watch of "vms", 0: none */
    guint declared_watch; /* r_watch_declared's, 0: none */
};

/* Session reports, routed as core/daemon routes them to plugins. */
static void on_vm_up(gpointer ud, DdmVm *vm)
{
    ct_host *h = ud;
    if (vm->state == DDM_VM_STATE_PLAIN) {
        ddm_registry_plain_vm_event(h->registry, vm, DDM_VM_READY);
    } else if (vm->state == DDM_VM_STATE_READY) {
        if (vm->was_plain)
            ddm_registry_plain_vm_event(h->registry, vm, DDM_VM_GONE);
        ddm_registry_vm_event(h->registry, vm, DDM_VM_READY);
    }
}

static void on_vm_changed(gpointer ud, DdmVm *vm)
{
    ct_host *h = ud;
    if (vm->state == DDM_VM_STATE_READY)
        ddm_registry_vm_event(h->registry, vm, DDM_VM_CHANGED);
    else if (vm->state == DDM_VM_STATE_PLAIN)
        ddm_registry_plain_vm_event(h->registry, vm, DDM_VM_CHANGED);
}

static gboolean on_vm_closed(gpointer ud, DdmVm *vm)
{
    ct_host *h = ud;
    if (vm->was_ready)
        ddm_registry_vm_event(h->registry, vm, DDM_VM_GONE);
    else if (vm->was_plain)
        ddm_registry_plain_vm_event(h->registry, vm, DDM_VM_GONE);
    ddm_views_destroy_vm(h->views, vm->target->key);
    return FALSE;
}

static void on_ddm_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    ct_host *h = ud;
    ddm_registry_dispatch(h->registry, vm, ci, data, len);
}

static void on_tap_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    ct_host *h = ud;
    ddm_registry_tap_request(h->registry, vm, ci, data, len);
}

/* Streamed events, routed as core/daemon routes them. */
static int on_stream_begin(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, guint64 declared)
{
    ct_host *h = ud;
    return ddm_registry_stream_begin(h->registry, vm, ci, declared);
}

static int on_stream_data(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                          size_t len)
{
    ct_host *h = ud;
    return ddm_registry_stream_data(h->registry, vm, ci, data, len);
}

static void on_stream_end(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, int status,
                          guint64 received)
{
    ct_host *h = ud;
    ddm_registry_stream_end(h->registry, vm, ci, status, received);
}

static const DdmSessionEvents events = {
    .stream_begin = on_stream_begin,
    .stream_data = on_stream_data,
    .stream_end = on_stream_end,
    .vm_up = on_vm_up,
    .vm_changed = on_vm_changed,
    .vm_closed = on_vm_closed,
    .ddm_chunk = on_ddm_chunk,
    .tap_chunk = on_tap_chunk,
};

static int r_pump(ct_host *h);

static PairVm *pair_of(ct_host *h, ddm_vm *vm)
{
    for (guint i = 0; i < h->vms->len; i++) {
        PairVm *pv = g_ptr_array_index(h->vms, i);
        if (pv->vm == vm)
            return pv;
    }
    fail_msg("not a VM of this host");
    return NULL;
}

/* Read @n bytes ddmon sent to @pv (pumping the loop meanwhile); FALSE if
 * none came within @ms. */
static gboolean peer_read(PairVm *pv, void *out, size_t n, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;
    while (pv->in->len < n) {
        struct pollfd pfd = {.fd = pv->peer, .events = POLLIN};
        g_main_context_iteration(NULL, FALSE);
        if (poll(&pfd, 1, 2) == 1) {
            uint8_t buf[4096];
            ssize_t got = read(pv->peer, buf, sizeof buf);
            if (got <= 0)
                return FALSE;
            g_byte_array_append(pv->in, buf, (guint)got);
        }
        if (g_get_monotonic_time() > end)
            return FALSE;
    }
    memcpy(out, pv->in->data, n);
    g_byte_array_remove_range(pv->in, 0, (guint)n);
    return TRUE;
}

static void peer_write(PairVm *pv, const void *p, size_t n)
{
    assert_int_equal(write(pv->peer, p, n), (ssize_t)n);
}

/* One DDM request ddmon sent: its type, id and payload (transfer full). */
static gboolean peer_read_request(PairVm *pv, uint32_t *type, uint32_t *id, GBytes **payload,
                                  int ms)
{
    uint8_t hdr[DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN];
    DdmJdwpHeader jh;
    uint32_t clen;
    uint8_t *data;
    if (!peer_read(pv, hdr, sizeof hdr, ms))
        return FALSE;
    assert_true(ddm_jdwp_parse_header(hdr, sizeof hdr, &jh));
    assert_int_equal(jh.cmdset, 0xC7);
    *type = (uint32_t)hdr[11] << 24 | (uint32_t)hdr[12] << 16 | (uint32_t)hdr[13] << 8 | hdr[14];
    clen = (uint32_t)hdr[15] << 24 | (uint32_t)hdr[16] << 16 | (uint32_t)hdr[17] << 8 | hdr[18];
    data = g_malloc(clen + 1);
    assert_true(peer_read(pv, data, clen, 3000));
    *id = jh.id;
    *payload = g_bytes_new_take(data, clen);
    return TRUE;
}

static void pump_until_state(DdmVm *vm, DdmVmState state)
{
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (vm->state != state && g_get_monotonic_time() < end)
        g_main_context_iteration(NULL, FALSE), g_usleep(500);
    assert_string_equal(ddm_vm_state_name(vm->state), ddm_vm_state_name(state));
}

static ct_host *r_new(void)
{
    ct_host *h = g_new0(ct_host, 1);
    h->config = ddm_config_new();
    h->config->tcp_version_probe = FALSE;
    h->views = ddm_views_new();
    h->monitor = ddm_monitor_new(h->config, &events, h);
    h->registry = ddm_registry_new(h->monitor, h->views, h->config);
    ddm_registry_set_view_linger_ms(h->registry, 1); /* r_linger_passes waits 50 ms */
    h->vms = g_ptr_array_new();
    return h;
}

static void r_free(ct_host *h)
{
    /* As at shutdown: the VMs close (plugins see GONE), then plugins unload. */
    ddm_monitor_stop(h->monitor, "test over");
    ddm_registry_free(h->registry);
    ddm_monitor_free(h->monitor);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    for (guint i = 0; i < h->vms->len; i++) {
        PairVm *pv = g_ptr_array_index(h->vms, i);
        ddm_vm_unref(pv->vm);
        ddm_target_unref(pv->target);
        close(pv->peer);
        g_byte_array_unref(pv->in);
        g_free(pv->app);
        g_free(pv);
    }
    g_ptr_array_unref(h->vms);
    ddm_views_free(h->views);
    ddm_config_free(h->config);
    g_free(h->cmd_message);
    if (h->cmd_result)
        json_node_unref(h->cmd_result);
    g_free(h);
}

static void r_set_option(ct_host *h, const char *key, const char *value)
{
    g_autofree char *spec = g_strdup_printf("%s=%s", key, value);
    assert_true(ddm_config_add_plugin_opt(h->config, spec, NULL));
}

static int r_load(ct_host *h, const ddm_plugin_desc *desc)
{
    ddm_plugin *p = ddm_registry_add(h->registry, desc->name, NULL);
    g_autoptr(GError) err = NULL;
    p->desc = desc;
    return ddm_registry_init_plugin(h->registry, p, &err) ? 0 : -1;
}

/* A session up to HELO: handshake echoed, HELO and FEAT read (unanswered). */
static ddm_vm *r_add_vm(ct_host *h, const char *key, uint32_t pid, const char *app)
{
    PairVm *pv = g_new0(PairVm, 1);
    int sv[2];
    uint8_t hs[DDM_JDWP_HANDSHAKE_LEN];
    uint32_t type;
    GBytes *payload;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pv->peer = sv[1];
    pv->in = g_byte_array_new();
    pv->pid = pid;
    pv->app = g_strdup(app);
    pv->next_event_id = 0x80000001u;
    pv->target = test_pair_target_new(key, sv[0], FALSE);
    g_ptr_array_add(h->vms, pv);

    assert_true(ddm_monitor_offer_target(h->monitor, pv->target));
    pv->vm = ddm_monitor_find_vm(h->monitor, key);
    assert_non_null(pv->vm);
    ddm_vm_ref(pv->vm);
    pump_until_state(pv->vm, DDM_VM_STATE_HANDSHAKE);
    assert_true(peer_read(pv, hs, sizeof hs, 3000));
    assert_memory_equal(hs, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    peer_write(pv, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    pump_until_state(pv->vm, DDM_VM_STATE_HELO);
    assert_true(peer_read_request(pv, &type, &pv->helo_id, &payload, 3000));
    assert_int_equal(type, DDM_CHUNK_HELO);
    g_bytes_unref(payload);
    assert_true(peer_read_request(pv, &type, &pv->feat_id, &payload, 3000));
    assert_int_equal(type, DDM_CHUNK_FEAT);
    g_bytes_unref(payload);
    return pv->vm;
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

/* Answer HELO (minimal form) and refuse FEAT: the VM becomes READY. */
static void r_vm_ready(ct_host *h, ddm_vm *vm)
{
    PairVm *pv = pair_of(h, vm);
    const char *ident = "Dalvik v1.6.0";
    GByteArray *b = g_byte_array_new();
    size_t len;
    uint8_t *pkt;
    put_u4(b, 1);
    put_u4(b, pv->pid);
    put_u4(b, (uint32_t)strlen(ident));
    put_u4(b, (uint32_t)strlen(pv->app));
    put_str16(b, ident);
    put_str16(b, pv->app);
    pkt = ddm_chunk_build_reply(pv->helo_id, DDM_CHUNK_HELO, b->data, b->len, &len);
    peer_write(pv, pkt, len);
    g_free(pkt);
    g_byte_array_unref(b);
    pump_until_state(vm, DDM_VM_STATE_READY);
    pkt = ddm_jdwp_build_reply(pv->feat_id, 99, NULL, 0, &len);
    peer_write(pv, pkt, len);
    g_free(pkt);
    /* The core's own FEAT is answered: the plugin has the pending table. */
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (ddm_correlate_contains(vm->pending, pv->feat_id) && g_get_monotonic_time() < end)
        r_pump(h);
    assert_false(ddm_correlate_contains(vm->pending, pv->feat_id));
}

static void r_vm_gone(ct_host *h, ddm_vm *vm)
{
    ddm_monitor_forget_target(h->monitor, pair_of(h, vm)->target->key, "gone (test)");
}

static void r_send_event(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len)
{
    PairVm *pv = pair_of(h, vm);
    size_t n;
    uint8_t *pkt = ddm_chunk_build_packet(pv->next_event_id++, type, data, len, &n);
    peer_write(pv, pkt, n);
    g_free(pkt);
}

static int r_take_request(ct_host *h, ddm_vm *vm, uint32_t *type, uint32_t *id, uint8_t *buf,
                          size_t cap, size_t *len)
{
    PairVm *pv = pair_of(h, vm);
    GBytes *payload;
    gsize n;
    const void *d;
    if (!peer_read_request(pv, type, id, &payload, 2000))
        return 0;
    d = g_bytes_get_data(payload, &n);
    *len = n;
    if (n)
        memcpy(buf, d, MIN(n, cap));
    g_bytes_unref(payload);
    return 1;
}

static void r_reply_chunk(ct_host *h, ddm_vm *vm, uint32_t id, uint32_t type, const void *data,
                          size_t len)
{
    PairVm *pv = pair_of(h, vm);
    size_t n;
    uint8_t *pkt = ddm_chunk_build_reply(id, type, data, len, &n);
    peer_write(pv, pkt, n);
    g_free(pkt);
}

static void r_expire_requests(ct_host *h)
{
    (void)h; /* real time: the session's deadline fires while we pump */
}

static int r_pump(ct_host *h)
{
    (void)h;
    g_main_context_iteration(NULL, FALSE);
    g_usleep(1000);
    return 1;
}

static void cmd_done_fn(ddm_cmd_status status, const char *message, ddm_view *result, gpointer ud)
{
    ct_host *h = ud;
    h->cmd_done = TRUE;
    h->cmd_status = status;
    g_free(h->cmd_message);
    h->cmd_message = g_strdup(message ? message : "");
    if (h->cmd_result)
        json_node_unref(h->cmd_result);
    h->cmd_result = result ? ddm_view_to_json(result, FALSE) : NULL;
}

static void cmd_progress_fn(guint64 done, guint64 total, const char *unit, gpointer ud)
{
    ct_host *h = ud;
    assert_false(h->cmd_done); /* never after the end */
    h->progress_reports++;
    h->progress_done = done;
    h->progress_total = total;
    g_strlcpy(h->progress_unit, unit, sizeof h->progress_unit);
}

static void r_run_command(ct_host *h, int argc, const char *const *argv)
{
    h->cmd_done = FALSE;
    h->progress_reports = 0;
    assert_true(ddm_registry_run_command_progress(h->registry, argc, argv, NULL, NULL, cmd_done_fn,
                                                  cmd_progress_fn, h));
}

static int r_cmd_progress(ct_host *h, uint64_t *done, uint64_t *total, char *unit, size_t cap)
{
    *done = h->progress_done;
    *total = h->progress_total;
    g_strlcpy(unit, h->progress_unit, cap);
    return h->progress_reports;
}

/* Write while the loop runs: the session reads as we write. */
static void peer_write_pumped(PairVm *pv, const void *p, size_t n)
{
    const uint8_t *b = p;
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (n > 0) {
        ssize_t w = send(pv->peer, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else {
            assert_true(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
        }
        g_main_context_iteration(NULL, FALSE);
        assert_true(g_get_monotonic_time() < end);
    }
}

/* The event's head, its bytes as the driver contract says, and for
 * -EFBIG a --max-stream below @len while the head is offered. */
static void r_send_stream(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                          int end_status)
{
    PairVm *pv = pair_of(h, vm);
    gboolean half = end_status == -EPROTO || end_status == -EPIPE;
    size_t sent = half ? len / 2 : len;
    uint32_t plen = (uint32_t)(DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN +
                               (end_status == -EPROTO ? sent : len));
    uint32_t id = pv->next_event_id++;
    guint64 cap = h->config->max_stream;
    guint64 in0 = vm->bytes_in, streamed0 = vm->bytes_streamed;
    GByteArray *b = g_byte_array_new();
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    put_u4(b, plen);
    put_u4(b, id);
    g_byte_array_append(b, (const uint8_t *)"\0\xC7\x01", 3);
    put_u4(b, type);
    put_u4(b, (uint32_t)len);
    if (end_status == -EFBIG)
        h->config->max_stream = len - 1;
    peer_write_pumped(pv, b->data, b->len);
    g_byte_array_unref(b);
    peer_write_pumped(pv, data, sent);
    if (end_status == -EPIPE) {
        /* every byte sent has reached the owner: then the VM goes */
        while (vm->bytes_streamed - streamed0 < sent && g_get_monotonic_time() < end)
            r_pump(h);
        assert_int_equal(vm->bytes_streamed - streamed0, sent);
        r_vm_gone(h, vm);
        return;
    }
    /* the whole packet read and its stream over */
    while ((vm->bytes_in - in0 < plen || vm->stream) && g_get_monotonic_time() < end)
        r_pump(h);
    assert_true(vm->bytes_in - in0 >= plen);
    assert_null(vm->stream);
    h->config->max_stream = cap;
}

static int r_cmd_done(ct_host *h, ddm_cmd_status *status, char *message, size_t cap)
{
    if (!h->cmd_done)
        return 0;
    *status = h->cmd_status;
    g_strlcpy(message, h->cmd_message, cap);
    return 1;
}

/* Field @key of a record view's JSON, or NULL. */
static JsonObject *json_field(JsonNode *view, const char *key)
{
    JsonArray *fields;
    if (!view || !json_object_has_member(json_node_get_object(view), "fields"))
        return NULL;
    fields = json_object_get_array_member(json_node_get_object(view), "fields");
    for (guint i = 0; i < json_array_get_length(fields); i++) {
        JsonObject *f = json_array_get_object_element(fields, i);
        if (g_strcmp0(json_object_get_string_member(f, "key"), key) == 0)
            return f;
    }
    return NULL;
}

static int64_t r_cmd_result_int(ct_host *h, const char *key)
{
    JsonObject *f = json_field(h->cmd_result, key);
    return f ? json_object_get_int_member(f, "value") : -1;
}

static JsonNode *view_json(ct_host *h, ddm_vm *vm, const char *name)
{
    ddm_view *v = ddm_views_lookup(h->views, name, vm ? pair_of(h, vm)->target->key : NULL);
    return v ? ddm_view_to_json(v, FALSE) : NULL;
}

static int r_view_rows(ct_host *h, ddm_vm *vm, const char *name)
{
    g_autoptr(JsonNode) j = view_json(h, vm, name);
    JsonObject *o;
    if (!j)
        return -1;
    o = json_node_get_object(j);
    return json_object_has_member(o, "rows")
               ? (int)json_array_get_length(json_object_get_array_member(o, "rows"))
               : 0;
}

static int r_view_field_int(ct_host *h, ddm_vm *vm, const char *name, const char *key,
                            int64_t *out)
{
    g_autoptr(JsonNode) j = view_json(h, vm, name);
    JsonObject *f = json_field(j, key);
    if (!f)
        return -1;
    *out = json_object_get_int_member(f, "value");
    return 0;
}

static long r_view_field_len(ct_host *h, ddm_vm *vm, const char *name, const char *key)
{
    g_autoptr(JsonNode) j = view_json(h, vm, name);
    JsonObject *f = json_field(j, key);
    const char *s = f ? json_object_get_string_member(f, "value") : NULL;
    return s ? (long)strlen(s) : -1;
}

/* A plain JVM: HELO (and FEAT) answered with a JDWP error, as HotSpot
 * answers a command set it does not know. */
static ddm_vm *r_add_plain_vm(ct_host *h, const char *key, uint32_t pid, const char *app)
{
    ddm_vm *vm = r_add_vm(h, key, pid, app);
    PairVm *pv = pair_of(h, vm);
    size_t len;
    uint8_t *pkt = ddm_jdwp_build_reply(pv->helo_id, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0, &len);
    peer_write(pv, pkt, len);
    g_free(pkt);
    pkt = ddm_jdwp_build_reply(pv->feat_id, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0, &len);
    peer_write(pv, pkt, len);
    g_free(pkt);
    pump_until_state(vm, DDM_VM_STATE_PLAIN);
    return vm;
}

/* The next JDWP command from ddmon: its header and data. */
static int r_take_jdwp(ct_host *h, ddm_vm *vm, uint8_t *cmdset, uint8_t *cmd, uint32_t *id,
                       uint8_t *buf, size_t cap, size_t *len)
{
    PairVm *pv = pair_of(h, vm);
    uint8_t hdr[DDM_JDWP_HEADER_LEN];
    DdmJdwpHeader jh;
    size_t n;
    g_autofree uint8_t *data = NULL;
    if (!peer_read(pv, hdr, sizeof hdr, 500))
        return 0;
    assert_true(ddm_jdwp_parse_header(hdr, sizeof hdr, &jh));
    assert_int_equal(jh.flags, 0);
    n = jh.length - DDM_JDWP_HEADER_LEN;
    data = g_malloc(n + 1);
    assert_true(peer_read(pv, data, n, 3000));
    *cmdset = jh.cmdset;
    *cmd = jh.cmd;
    *id = jh.id;
    *len = n;
    if (n)
        memcpy(buf, data, MIN(n, cap));
    return 1;
}

static void r_reply_jdwp(ct_host *h, ddm_vm *vm, uint32_t id, uint16_t error, const void *data,
                         size_t len)
{
    PairVm *pv = pair_of(h, vm);
    size_t n;
    uint8_t *pkt = ddm_jdwp_build_reply(id, error, error ? NULL : data, error ? 0 : len, &n);
    peer_write(pv, pkt, n);
    g_free(pkt);
}

/* As the relay does when a debugger attaches or leaves. */
static void r_set_debugger(ct_host *h, ddm_vm *vm, int attached)
{
    vm->info.debugger = attached ? 1 : 0;
    ddm_monitor_vm_identity_changed(h->monitor, vm);
}

/* As the control server does when a watch makes views watched that nobody watched. */
static int r_watch_begins(ct_host *h)
{
    return (int)ddm_registry_wake_watch_timers(h->registry);
}

/* As a frontend's watch of the VM list (the daemon publishes "vms"). */
static void r_watch_vm_list(ct_host *h, int on)
{
    if (on && h->vm_list_watch == 0) {
        if (ddm_views_lookup_made(h->views, "vms", NULL) == NULL)
            (void)ddm_views_create(h->views, "ddmon", NULL, "vms", DDM_VIEW_TABLE, "Virtual machines");
        h->vm_list_watch = ddm_views_watch(h->views, "vms", NULL);
    } else if (!on && h->vm_list_watch != 0) {
        ddm_views_unwatch(h->views, h->vm_list_watch);
        h->vm_list_watch = 0;
    }
}

/* As a frontend's watch of one view of a VM (ddmon watch NAME --vm KEY). */
static void r_watch_declared(ct_host *h, const char *name, const char *vm_key)
{
    if (h->declared_watch != 0)
        ddm_views_unwatch(h->views, h->declared_watch);
    h->declared_watch = ddm_views_watch(h->views, name, vm_key);
}

/* The core's timer at the linger's end (1 ms here, set in r_new). */
static void r_linger_passes(ct_host *h)
{
    gint64 until = g_get_monotonic_time() + 50 * 1000;
    while (g_get_monotonic_time() < until)
        r_pump(h);
}

/* The daemon's order at a stop (ddm_daemon_free): the hooks, the bounded
 * flush, then the monitor closes every VM (gently: it is stopping). */
static void r_server_stops(ct_host *h)
{
    ddm_registry_stopping(h->registry);
    ddm_monitor_flush_output(h->monitor, DDM_STOPPING_FLUSH_MS);
    ddm_monitor_stop(h->monitor, "ddmon is stopping");
}

static const ct_driver real_driver = {
    "real",           r_new,           r_free,       r_set_option,     r_load,
    r_add_vm,         r_vm_ready,      r_vm_gone,    r_send_event,     r_take_request,
    r_reply_chunk,    r_expire_requests, r_pump,     r_run_command,    r_cmd_done,
    r_cmd_result_int, r_view_rows,     r_view_field_int, r_view_field_len, r_send_stream,
    r_cmd_progress,   r_add_plain_vm,  r_take_jdwp,  r_reply_jdwp,     r_set_debugger,
    r_watch_begins,   r_watch_vm_list, r_watch_declared, r_linger_passes, r_server_stops,
};

/* ----------------------------------------------- host-has.so, on the core */

static void ct_real_host_has(void **state)
{
    ct_host *h = r_new();
    const char *dir = g_getenv("DDM_TEST_PLUGIN_DIR");
    static const char *const argv[] = {"host-has"};
    ddm_plugin *p;
    g_autofree char *path = NULL;
    g_autoptr(GError) err = NULL;
    ddm_cmd_status st;
    char msg[64];
    (void)state;
    if (!dir) {
        r_free(h);
        skip();
    }
    path = g_build_filename(dir, "host-has.so", NULL);
    (void)r_add_vm(h, "hh:1", 1, "a");
    r_vm_ready(h, ((PairVm *)g_ptr_array_index(h->vms, 0))->vm);
    assert_true(ddm_loader_load_file(h->registry, path, &p, &err));
    assert_non_null(p);
    assert_null(err);
    assert_int_equal(p->status, DDM_PLUGIN_LOADED);
    assert_int_equal(p->abi_minor, 0); /* DDM_ABI_MINOR_REQUIRED: loads into 1.0 cores too */
    r_run_command(h, 1, argv);
    assert_true(r_cmd_done(h, &st, msg, sizeof msg));
    assert_int_equal(st, DDM_CMD_OK);
    assert_string_equal(msg, "1.1 host");
    assert_int_equal(r_cmd_result_int(h, "abi_minor"), DDM_CORE_ABI_MINOR);
    assert_int_equal(r_cmd_result_int(h, "vms"), 1);
    r_free(h);
}

/* ------------------------------------- a first look's polls, on the core */

/* A plugin whose hour-long poll tick asks every ready VM for FLKQ, woken
 * when a watch begins (ABI 1.5). */
#define FL_REQ 0x464c4b51u /* "FLKQ" */
static const ddm_host *fl_host;
static unsigned fl_interval_ms = 3600000; /* the next fl_init's tick */
static uint32_t fl_timer;                 /* the last fl_init's */

static int fl_ask(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)ud;
    (void)fl_host->request(self, vm, FL_REQ, NULL, 0, 0, NULL, NULL, NULL);
    return 0;
}

static int fl_tick(ddm_plugin *self, void *ud)
{
    (void)ud;
    fl_host->foreach_vm(self, fl_ask, NULL);
    return 1;
}

static int fl_init(ddm_plugin *self, const ddm_host *host)
{
    uint32_t id;
    fl_host = host;
    id = host->timer_add(self, fl_interval_ms, fl_tick, NULL, NULL);
    fl_timer = id;
    return id && host->timer_wake_on_watch(self, id, 1) == 0 ? 0 : -ENOMEM;
}

static const ddm_plugin_desc fl_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR, (uint32_t)sizeof(ddm_plugin_desc),
    "firstlook", "1.0", "Apache-2.0", "polls when a watch begins", fl_init, NULL};
static const ddm_plugin_desc fl_often_desc = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR, (uint32_t)sizeof(ddm_plugin_desc),
    "firstlook-often", "1.0", "Apache-2.0", "polls every 20 ms", fl_init, NULL};

/* Answer every request @vm's peer has had (FLKQ, and the FEAT fences
 * ddm_vm_requests_settled sends) until none comes for a while. */
static void fl_answer_all(ct_host *h, ddm_vm *vm)
{
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    PairVm *pv = pair_of(h, vm);
    GBytes *payload;
    (void)buf;
    (void)len;
    while (peer_read_request(pv, &type, &id, &payload, 200)) {
        g_bytes_unref(payload);
        r_reply_chunk(h, vm, id, type, NULL, 0);
    }
}

static gboolean fl_settled_soon(ct_host *h)
{
    for (int i = 0; i < 500; i++) {
        if (ddm_registry_first_look_settled(h->registry))
            return TRUE;
        r_pump(h);
    }
    return FALSE;
}

/* Two ready VMs, a ("PREFIX:1", pid @pid) and b ("PREFIX:2", pid @pid + 1),
 * and the firstlook plugin loaded. */
static void fl_two_vms(ct_host *h, const char *prefix, uint32_t pid, ddm_vm **a, ddm_vm **b)
{
    g_autofree char *ka = g_strdup_printf("%s:1", prefix);
    g_autofree char *kb = g_strdup_printf("%s:2", prefix);
    *a = r_add_vm(h, ka, pid, "a");
    *b = r_add_vm(h, kb, pid + 1, "b");
    r_vm_ready(h, *a);
    r_vm_ready(h, *b);
    assert_int_equal(r_load(h, &fl_desc), 0);
}

/* ddm_registry_first_look_settled: FALSE while a VM that a woken tick asked
 * has a request in flight, TRUE once they are answered or the VM is gone;
 * a tick that ran at its interval (not woken) counts for nothing. */
static void ct_real_first_look(void **state)
{
    ct_host *h = r_new();
    ddm_vm *a, *b;
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    (void)state;
    fl_two_vms(h, "fl", 11, &a, &b);
    assert_true(ddm_registry_first_look_settled(h->registry)); /* nothing asked yet */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(ddm_registry_watch_wakes_pending(h->registry));
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, FL_REQ);
    assert_false(ddm_registry_watch_wakes_pending(h->registry));
    assert_false(ddm_registry_first_look_settled(h->registry)); /* a and b: FLKQ in flight */
    r_reply_chunk(h, a, id, FL_REQ, NULL, 0);
    fl_answer_all(h, a);
    assert_false(ddm_registry_first_look_settled(h->registry)); /* b still */
    fl_answer_all(h, b);
    assert_true(fl_settled_soon(h));
    /* Again, and b goes away with its request unanswered. */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    r_vm_gone(h, b);
    assert_int_equal(ddm_registry_first_look_n_vms(h->registry), 1); /* b's went with b */
    assert_false(ddm_registry_first_look_settled(h->registry)); /* a's FLKQ */
    fl_answer_all(h, a);
    assert_true(fl_settled_soon(h));
    /* A first look the frontend stopped waiting for holds no VM. */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(ddm_registry_first_look_n_vms(h->registry), 1);
    ddm_registry_first_look_end(h->registry);
    assert_int_equal(ddm_registry_first_look_n_vms(h->registry), 0);
    assert_true(ddm_registry_first_look_settled(h->registry));
    fl_answer_all(h, a);
    /* A tick at its interval, run by the loop (not woken), is not a first
     * look: its request leaves the first look settled. */
    fl_interval_ms = 20;
    assert_int_equal(r_load(h, &fl_often_desc), 0);
    fl_interval_ms = 3600000;
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(type, FL_REQ);
    assert_int_equal(ddm_registry_first_look_n_vms(h->registry), 0);
    assert_true(ddm_registry_first_look_settled(h->registry));
    /* stop it (fl_answer_all answers until the requests stop coming) */
    fl_host->timer_remove(ddm_registry_find_plugin(h->registry, "firstlook-often"), fl_timer);
    fl_answer_all(h, a);
    /* Woken, a timer's run is one. */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_false(ddm_registry_first_look_settled(h->registry));
    fl_answer_all(h, a);
    assert_true(fl_settled_soon(h));
    r_free(h);
}

/* TRUE once a look need not wait for @vm, whose peer answers what it is
 * asked meanwhile (the FEAT fences ddm_vm_requests_settled sends). */
static gboolean fl_vm_settled_soon(ct_host *h, ddm_vm *vm)
{
    uint32_t type, id;
    GBytes *payload;
    for (int i = 0; i < 500; i++) {
        if (ddm_registry_look_vm_settled(h->registry, vm))
            return TRUE;
        if (peer_read_request(pair_of(h, vm), &type, &id, &payload, 1)) {
            g_bytes_unref(payload);
            r_reply_chunk(h, vm, id, type, NULL, 0);
        }
        r_pump(h);
    }
    return FALSE;
}

/* The lateness clock the late-VM tests move by hand (fl_late_host). */
static gint64 fl_now_us;
static gint64 fl_clock(void)
{
    return fl_now_us;
}

#define FL_LATE_US ((gint64)DDM_FIRST_LOOK_MS * 1000)
#define FL_FORGET_US (30 * G_USEC_PER_SEC)

/* fl_two_vms, with the registry's lateness on fl_clock (recording at most
 * @cap VMs; 0: the default). */
static ct_host *fl_late_host(const char *prefix, uint32_t pid, guint cap, ddm_vm **a, ddm_vm **b)
{
    ct_host *h = r_new();
    fl_two_vms(h, prefix, pid, a, b);
    fl_now_us = 1000 * G_USEC_PER_SEC;
    ddm_registry_set_look_clock(h->registry, fl_clock, cap);
    return h;
}

/* A first look in which a answers everything and b nothing: b's FLKQ is
 * left in flight. */
static void fl_look_b_silent(ct_host *h, ddm_vm *a)
{
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    fl_answer_all(h, a);
    assert_true(fl_vm_settled_soon(h, a));
}

/* ddm_registry_look_vm_settled: a VM that leaves a look's request
 * unanswered for DDM_FIRST_LOOK_MS is late, and the next look does not
 * wait for it (it waited until its cap before: one hung VM held up every
 * look); once it answers, a look waits for it again. */
static void ct_real_first_look_late(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("late", 21, 0, &a, &b);
    /* A first look: b never answers. */
    fl_look_b_silent(h, a);
    assert_false(ddm_registry_first_look_settled(h->registry)); /* b's FLKQ */
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_LATE_US - 1;
    assert_false(ddm_registry_first_look_settled(h->registry)); /* not late yet */
    fl_now_us += 1;
    assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* late */
    assert_true(ddm_registry_first_look_settled(h->registry));
    ddm_registry_first_look_end(h->registry);
    /* The next look waits for a, not for b. */
    fl_now_us += G_USEC_PER_SEC;
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_int_equal(ddm_registry_first_look_n_vms(h->registry), 2);
    assert_false(ddm_registry_first_look_settled(h->registry)); /* a's FLKQ */
    assert_true(fl_vm_settled_soon(h, a));
    assert_true(ddm_registry_first_look_settled(h->registry)); /* b is late */
    ddm_registry_first_look_end(h->registry);
    /* b answers everything: a look waits for it again. */
    fl_answer_all(h, b);
    assert_true(fl_vm_settled_soon(h, b));
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    fl_answer_all(h, a);
    assert_false(ddm_registry_first_look_settled(h->registry)); /* b's new FLKQ */
    fl_now_us += FL_LATE_US - 1;
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    assert_true(fl_vm_settled_soon(h, a));
    assert_true(fl_vm_settled_soon(h, b));
    assert_true(ddm_registry_first_look_settled(h->registry));
    r_free(h);
}

/* Review rD 3: a look waits only for the sessions that existed when it
 * began (ddm_registry_look_vm_settled_since): one the monitor began later
 * (a wide scan's next slice) does not hold it, whatever its state. */
static void ct_real_first_look_since(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = r_new();
    gint64 before = g_get_monotonic_time();
    fl_two_vms(h, "since", 41, &a, &b);
    /* the monitor stamps each session as it begins it */
    assert_true(a->started_us >= before);
    assert_true(b->started_us >= a->started_us);
    assert_true(b->started_us <= g_get_monotonic_time());
    fl_look_b_silent(h, a); /* b's FLKQ in flight, unanswered */
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    /* a look begun when b began, or later: b is waited for */
    assert_false(ddm_registry_look_vm_settled_since(h->registry, b, b->started_us));
    assert_false(ddm_registry_look_vm_settled_since(h->registry, b, G_MAXINT64));
    /* a look begun before b: b is not */
    assert_true(ddm_registry_look_vm_settled_since(h->registry, b, b->started_us - 1));
    assert_true(ddm_registry_look_vm_settled_since(h->registry, a, a->started_us - 1));
    r_free(h);
}

/* Review rL 1: a late READY VM whose requests all timed out unanswered
 * (nothing in flight: a look need not wait for it) is still late for the
 * next look that asks it something. It was forgotten there before, and
 * that look waited DDM_FIRST_LOOK_MS again. */
static void ct_real_first_look_late_after_timeouts(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("tmo", 31, 0, &a, &b);
    h->config->request_timeout_ms = 100; /* b's FLKQ and FEAT fence time out soon */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_false(ddm_registry_look_vm_settled(h->registry, b)); /* its FLKQ in flight */
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* late */
    fl_answer_all(h, a);
    ddm_registry_first_look_end(h->registry);
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (ddm_correlate_count(b->pending) > 0 && g_get_monotonic_time() < end)
        r_pump(h);
    assert_int_equal(ddm_correlate_count(b->pending), 0); /* timed out, unanswered */
    h->config->request_timeout_ms = 0;
    /* A look of a's views 5 s later asks about b: nothing in flight. */
    fl_now_us += 5 * G_USEC_PER_SEC;
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    /* The next look asks b again: late at once, not DDM_FIRST_LOOK_MS again. */
    fl_now_us += G_USEC_PER_SEC;
    fl_look_b_silent(h, a);
    assert_false(ddm_vm_requests_settled(b)); /* its new FLKQ */
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    assert_true(ddm_registry_first_look_settled(h->registry));
    ddm_registry_first_look_end(h->registry);
    /* Once it answers, it is waited for again. */
    fl_answer_all(h, b);
    assert_true(fl_vm_settled_soon(h, b));
    fl_look_b_silent(h, a);
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    r_free(h);
}

/* A late VM whose requests timed out is forgotten 30 s after the last look
 * that found it waited for, however often looks asked about it idle since
 * (looks at other VMs' views are no sign that it still hangs): the next
 * look that asks it something waits for it again. */
static void ct_real_first_look_late_idle_forgotten(void **state)
{
    ddm_vm *a, *b;
    uint32_t type, id;
    uint8_t buf[16];
    size_t len;
    (void)state;
    ct_host *h = fl_late_host("idle", 81, 0, &a, &b);
    h->config->request_timeout_ms = 100;
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(r_take_request(h, a, &type, &id, buf, sizeof buf, &len));
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* late, found waited for */
    fl_answer_all(h, a);
    ddm_registry_first_look_end(h->registry);
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (ddm_correlate_count(b->pending) > 0 && g_get_monotonic_time() < end)
        r_pump(h);
    assert_int_equal(ddm_correlate_count(b->pending), 0);
    h->config->request_timeout_ms = 0;
    for (int i = 0; i < 3; i++) { /* looks at other views, every 10 s */
        fl_now_us += 10 * G_USEC_PER_SEC - 1;
        assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* idle */
    }
    fl_now_us += 3; /* 30 s since a look found it waited for */
    fl_look_b_silent(h, a);
    assert_false(ddm_registry_look_vm_settled(h->registry, b)); /* waited for again */
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    r_free(h);
}

/* Review rL 2: a late VM no look found waited for in 30 s is forgotten, even
 * with no first look ending in between (a watching snapshot's looks, through
 * ddm_daemon_look_settled): the next look waits for it again. Before, an
 * entry only went at a first look's end, and counted however old. */
static void ct_real_first_look_late_forgotten(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("forget", 41, 0, &a, &b);
    fl_look_b_silent(h, a);
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* late */
    /* asked within 30 s: still late, and seen again */
    fl_now_us += FL_FORGET_US - 1;
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_FORGET_US - 1;
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    /* not asked for 30 s: its FLKQ still in flight, it gets a look's time again */
    fl_now_us += FL_FORGET_US;
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_LATE_US - 1;
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += 1;
    assert_true(ddm_registry_look_vm_settled(h->registry, b));
    r_free(h);
}

/* A VM that answers one request but leaves another in flight answered
 * something: it gets a look's whole time again from that answer, and is
 * late once that has passed with nothing more answered. */
static void ct_real_first_look_late_partial(void **state)
{
    ddm_vm *a, *b;
    uint32_t type, id, id1;
    uint8_t buf[16];
    size_t len;
    (void)state;
    ct_host *h = fl_late_host("part", 51, 0, &a, &b);
    ddm_plugin *p = ddm_registry_find_plugin(h->registry, "firstlook");
    fl_look_b_silent(h, a);
    assert_int_equal(fl_host->request(p, b, FL_REQ, NULL, 0, 0, NULL, NULL, NULL), 0); /* a 2nd */
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += FL_LATE_US - 1000;
    assert_true(r_take_request(h, b, &type, &id1, buf, sizeof buf, &len)); /* the first FLKQ */
    assert_int_equal(type, FL_REQ);
    r_reply_chunk(h, b, id1, FL_REQ, NULL, 0);
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (b->answered_id != id1 && g_get_monotonic_time() < end)
        r_pump(h);
    assert_int_equal(b->answered_id, id1);
    assert_false(ddm_registry_look_vm_settled(h->registry, b)); /* the 2nd FLKQ, anew */
    fl_now_us += 1000;
    assert_false(ddm_registry_look_vm_settled(h->registry, b)); /* late from the 1st: no */
    fl_now_us += FL_LATE_US - 1001;
    assert_false(ddm_registry_look_vm_settled(h->registry, b));
    fl_now_us += 1;
    assert_true(ddm_registry_look_vm_settled(h->registry, b)); /* late */
    (void)id;
    r_free(h);
}

/* Lateness goes with the target key, not the session: a port that stays
 * in HELO is late for its next session at once (it closed: a look that
 * asks about the closed session does not forget that); a session of the
 * key that answers is waited for again. */
static void ct_real_first_look_late_key_reused(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("reuse", 61, 0, &a, &b);
    ddm_vm *c = r_add_vm(h, "reuse:3", 63, "c"); /* in HELO, unanswered */
    assert_false(ddm_registry_look_vm_settled(h->registry, c));
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, c)); /* late */
    r_vm_gone(h, c);
    pump_until_state(c, DDM_VM_STATE_CLOSED);
    assert_true(ddm_registry_look_vm_settled(h->registry, c)); /* closed */
    fl_now_us += G_USEC_PER_SEC;
    ddm_vm *c2 = r_add_vm(h, "reuse:3", 64, "c");
    assert_true(c2 != c);
    assert_true(ddm_registry_look_vm_settled(h->registry, c2)); /* as late as the last */
    r_vm_ready(h, c2);
    assert_true(ddm_registry_look_vm_settled(h->registry, c2)); /* it answered */
    r_vm_gone(h, c2);
    pump_until_state(c2, DDM_VM_STATE_CLOSED);
    ddm_vm *c3 = r_add_vm(h, "reuse:3", 65, "c");
    assert_false(ddm_registry_look_vm_settled(h->registry, c3)); /* waited for */
    r_free(h);
}

/* The table of late VMs holds at most its cap: a VM past it is waited for
 * as every VM was before (never late); the entries no look found waited for in
 * 30 s make room when a new one comes. */
static void ct_real_first_look_late_cap(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("cap", 71, 1, &a, &b);
    ddm_vm *c = r_add_vm(h, "cap:3", 73, "c");
    ddm_vm *d = r_add_vm(h, "cap:4", 74, "d");
    assert_false(ddm_registry_look_vm_settled(h->registry, c)); /* recorded */
    assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* past the cap */
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, c));
    assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* never late */
    fl_now_us += FL_FORGET_US - 1;
    assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* c seen < 30 s ago */
    fl_now_us += 1;
    assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* c forgotten: d recorded */
    assert_false(ddm_registry_look_vm_settled(h->registry, c)); /* past the cap now */
    fl_now_us += FL_LATE_US;
    assert_true(ddm_registry_look_vm_settled(h->registry, d));
    assert_false(ddm_registry_look_vm_settled(h->registry, c));
    r_free(h);
}

/* A full lateness table of VMs all seen within 30 s is not swept for
 * every VM a look asks about past the cap (a start-up of 10,000 VMs asked
 * each poll: one sweep of 4,096 entries a VM), only once one of its
 * entries can be forgotten. */
static void ct_real_first_look_late_full_not_swept(void **state)
{
    ddm_vm *a, *b;
    (void)state;
    ct_host *h = fl_late_host("fullsw", 81, 1, &a, &b);
    ddm_vm *c = r_add_vm(h, "fullsw:3", 83, "c");
    ddm_vm *d = r_add_vm(h, "fullsw:4", 84, "d");
    assert_false(ddm_registry_look_vm_settled(h->registry, c)); /* recorded: full */
    guint before = ddm_registry_n_look_lag_sweeps(h->registry);
    for (int i = 0; i < 100; i++) {
        assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* past the cap */
        fl_now_us += G_USEC_PER_SEC / 10;
    }
    /* 10 s: c cannot be forgotten yet, so no sweep at all */
    assert_int_equal(ddm_registry_n_look_lag_sweeps(h->registry), before);
    fl_now_us += FL_FORGET_US;
    assert_false(ddm_registry_look_vm_settled(h->registry, d)); /* c forgotten: d recorded */
    assert_int_equal(ddm_registry_n_look_lag_sweeps(h->registry), before + 1);
    for (int i = 0; i < 10; i++)
        assert_false(ddm_registry_look_vm_settled(h->registry, c)); /* past the cap now */
    assert_int_equal(ddm_registry_n_look_lag_sweeps(h->registry), before + 1);
    r_free(h);
}

/* The wakes a watch left pending are counted: a woken timer that opts out,
 * or goes, before it runs is pending no more; timers that did not opt in
 * (per-VM, per-call ones) are not woken. */
static void ct_real_wake_count(void **state)
{
    ct_host *h = r_new();
    (void)state;
    assert_int_equal(r_load(h, &fl_desc), 0);
    ddm_plugin *p = ddm_registry_find_plugin(h->registry, "firstlook");
    uint32_t woken = fl_timer;
    for (int i = 0; i < 8; i++) /* not opted in */
        assert_true(fl_host->timer_add(p, 3600000, fl_tick, NULL, NULL) != 0);
    assert_false(ddm_registry_watch_wakes_pending(h->registry));
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(ddm_registry_watch_wakes_pending(h->registry));
    assert_true(ddm_registry_polls_on_watch(h->registry, "firstlook"));
    assert_int_equal(fl_host->timer_wake_on_watch(p, woken, 0), 0);
    assert_false(ddm_registry_watch_wakes_pending(h->registry));
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 0);
    /* timers, none opted in: a first look waits for its tick */
    assert_false(ddm_registry_polls_on_watch(h->registry, "firstlook"));
    assert_int_equal(fl_host->timer_wake_on_watch(p, woken, 1), 0);
    assert_int_equal(fl_host->timer_wake_on_watch(p, woken, 1), 0); /* twice: one entry */
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 1);
    assert_true(ddm_registry_watch_wakes_pending(h->registry));
    assert_true(ddm_registry_polls_on_watch(h->registry, "firstlook"));
    fl_host->timer_remove(p, woken);
    assert_false(ddm_registry_watch_wakes_pending(h->registry));
    assert_int_equal(ddm_registry_wake_watch_timers(h->registry), 0);
    assert_false(ddm_registry_polls_on_watch(h->registry, "firstlook"));
    r_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ct_real_host_has),
        cmocka_unit_test(ct_real_first_look),
        cmocka_unit_test(ct_real_first_look_late),
        cmocka_unit_test(ct_real_first_look_since),
        cmocka_unit_test(ct_real_first_look_late_after_timeouts),
        cmocka_unit_test(ct_real_first_look_late_idle_forgotten),
        cmocka_unit_test(ct_real_first_look_late_forgotten),
        cmocka_unit_test(ct_real_first_look_late_partial),
        cmocka_unit_test(ct_real_first_look_late_key_reused),
        cmocka_unit_test(ct_real_first_look_late_cap),
        cmocka_unit_test(ct_real_first_look_late_full_not_swept),
        cmocka_unit_test(ct_real_wake_count),
    };
    return contract_run(&real_driver, tests, sizeof tests / sizeof tests[0]);
}
