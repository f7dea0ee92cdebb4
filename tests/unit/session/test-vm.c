/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the VM session state machine (core/session/vm*.c) over a
 * socketpair: the test plays the VM (writes the handshake echo and packets,
 * reads what ddmon sent) and drives the GMainLoop itself. A small test
 * monitor below stands in for core/session/monitor.c and records what the
 * session reports, so the session is tested alone: every state x packet kind,
 * handshake variants, HELO variants, events, unknown and late replies,
 * garbage, EOF in each state, and requests whose callbacks must run exactly
 * once (reply, JDWP error, timeout, VM gone) and never inside the call.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/wire/ddm.h"
#include "core/session/monitor.h"
#include "core/session/monitor-private.h"
#include "core/session/ratelog.h"
#include "core/session/vm.h"
#include "core/session/vm-private.h" /* DDM_VM_NAME_MAX */
#include "tests/harness/pair-target.h"

/* ------------------------------------------------------ the test monitor */

typedef struct Recorded {
    guint state_changes, identity_changes, closed, jdwp_from_vm, foreign, taps, drained;
    guint log_warnings, log_messages; /* from the session, see log_writer */
    DdmVmState last_old, last_new;
    GPtrArray *chunks;  /* RecChunk* */
    guint live_watches_at_close; /* core/loop watches alive when the VM said closed */
    gint64 closed_at_us;
} Recorded;

typedef struct RecChunk {
    ddm_chunk_info ci;
    GBytes *data;
} RecChunk;

static Recorded rec;

static void rec_chunk_free(gpointer p)
{
    RecChunk *c = p;
    g_bytes_unref(c->data);
    g_free(c);
}

/* The test's own monitor: monitor.c is not linked, so these are the only
 * definitions the session sees. Its struct is the real one
 * (monitor-private.h: the session reads its events table inline, vm_io.c);
 * the test sets config, events and read_budget (NULL: the readers have no
 * shared budget), nothing else. */
const DdmConfig *ddm_monitor_config(const DdmMonitor *mon)
{
    return mon->config;
}

DdmJdwpBudget *ddm_monitor_read_budget(DdmMonitor *mon)
{
    return mon->read_budget;
}

/* Whether the monitor is stopping (the server's last closes): set by a
 * test of the gentle close. */
static gboolean fx_stopping;

gboolean ddm_monitor_stopping(const DdmMonitor *mon)
{
    (void)mon;
    return fx_stopping;
}

/* Whether the monitor reports held VMs (the in-process snapshot): a
 * normal close is then logged at debug level. */
static gboolean fx_reports_held;

gboolean ddm_monitor_reports_held(const DdmMonitor *mon)
{
    (void)mon;
    return fx_reports_held;
}

/* What the daemon's plugins would do at DDM_VM_READY (NULL: nothing). */
static void (*at_ready)(DdmVm *vm);

void ddm_monitor_vm_state_changed(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state)
{
    (void)mon;
    rec.state_changes++;
    rec.last_old = old_state;
    rec.last_new = vm->state;
    if (at_ready && vm->state == DDM_VM_STATE_READY)
        at_ready(vm);
}

gboolean ddm_monitor_known_ddm(DdmMonitor *mon, const char *key)
{
    (void)mon;
    (void)key;
    return FALSE;
}

void ddm_monitor_note_ddm(DdmMonitor *mon, const char *key)
{
    (void)mon;
    (void)key;
}

void ddm_monitor_vm_identity_changed(DdmMonitor *mon, DdmVm *vm)
{
    (void)mon;
    (void)vm;
    rec.identity_changes++;
}

void ddm_monitor_vm_closed(DdmMonitor *mon, DdmVm *vm)
{
    (void)mon;
    assert_int_equal(vm->state, DDM_VM_STATE_CLOSED);
    assert_int_equal(ddm_correlate_count(vm->pending), 0);
    rec.closed++;
    rec.closed_at_us = g_get_monotonic_time();
    ddm_watch_stats(&rec.live_watches_at_close, NULL, NULL);
}

/* What the session reports straight to the events table. */
static void ev_ddm_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    RecChunk *c = g_new0(RecChunk, 1);
    (void)ud;
    (void)vm;
    c->ci = *ci;
    c->data = g_bytes_new(data, len);
    g_ptr_array_add(rec.chunks, c);
}

static void ev_tap_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    (void)ud;
    (void)vm;
    (void)ci;
    (void)data;
    (void)len;
    rec.taps++;
}

static void ev_jdwp_command(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    (void)ud;
    (void)vm;
    (void)pkt;
    rec.jdwp_from_vm++;
}

static void ev_output_drained(gpointer ud, DdmVm *vm)
{
    (void)ud;
    (void)vm;
    rec.drained++;
}

/* The foreign replies' ids and what the reader said meanwhile about more
 * whole packets read (ddm_jdwp_reader_has_packet: the relay batches its
 * writes on it), in order (test_vm_in_place_*; reset by them). */
static struct {
    guint n;
    uint32_t id[64];
    gboolean more[64];
    size_t pending[64];    /* the reader's bytes not yet handed out, meanwhile */
    uint32_t close_on;     /* the reply with this id closes the VM (0: none) */
} F;

static gboolean ev_foreign_reply(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    (void)ud;
    rec.foreign++;
    if (F.n < G_N_ELEMENTS(F.id)) {
        F.id[F.n] = pkt->header.id;
        F.more[F.n] = ddm_jdwp_reader_has_packet(vm->reader);
        F.pending[F.n] = ddm_jdwp_reader_pending(vm->reader);
        F.n++;
    }
    if (F.close_on && pkt->header.id == F.close_on)
        ddm_vm_close(vm, "the test's relay closes it");
    return FALSE;
}

/* The relay's fused path (DdmSessionEvents.reply_alone): the ids offered,
 * and whether it claims them. */
static struct {
    guint calls;
    uint32_t id;
    size_t len;
    gboolean claim;
} A;

static gboolean ev_reply_alone(gpointer ud, DdmVm *vm, uint8_t *bytes, size_t len)
{
    uint32_t be;
    (void)ud;
    (void)vm;
    memcpy(&be, bytes + 4, sizeof be);
    A.calls++;
    A.id = GUINT32_FROM_BE(be);
    A.len = len;
    return A.claim;
}

/* Replies offered cut-through (DdmSessionEvents.reply_head/part): what a
 * relay would hear. Claims replies with id 0x01000000 and up. */
static struct {
    guint heads, parts, lasts;
    guint64 bytes;
    uint32_t head_len;
} R;

static gboolean ev_reply_head(gpointer ud, DdmVm *vm, const DdmJdwpPacket *head)
{
    (void)ud;
    (void)vm;
    if (head->header.id < 0x01000000u || head->header.id >= 0x40000000u)
        return FALSE;
    R.heads++;
    R.head_len = (uint32_t)head->len;
    return TRUE;
}

static void ev_reply_part(gpointer ud, DdmVm *vm, const uint8_t *data, size_t len, gboolean last)
{
    (void)ud;
    (void)vm;
    for (size_t i = 0; i < len; i++)
        assert_int_equal(data[i], (uint8_t)(R.bytes + i));
    R.bytes += len;
    R.parts += len > 0;
    R.lasts += last;
}

/* Streamed DDM events (vm_stream.c): what the owner would hear. The bytes
 * are checked against pattern_byte() as they come, not kept. */
static struct {
    int take;                /* stream_begin's answer: 1, 0 (no owner) or a refusal */
    int data_rc;             /* stream_data's answer */
    guint begins, datas, ends;
    guint64 declared, bytes, received;
    guint64 mismatches;      /* bytes not equal to the pattern at their offset */
    int status;
    guint closed_at_end;     /* rec.closed when stream_end came */
    gsize max_reader_buffer; /* the reader's buffer size seen during data */
    gsize max_piece;         /* the largest data piece (bounded by one read's size) */
    uint32_t type, packet_id;
    gboolean close_later_on_data; /* stream_data calls ddm_vm_close_later */
    gint64 close_later_at_us;
} S;

static uint8_t pattern_byte(guint64 i)
{
    return (uint8_t)((i * 2654435761u) >> 13);
}

static int ev_stream_begin(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, guint64 declared)
{
    (void)ud;
    (void)vm;
    S.begins++;
    S.declared = declared;
    S.type = ci->type;
    S.packet_id = ci->packet_id;
    assert_int_equal(ci->origin, DDM_ORIGIN_EVENT);
    return S.take;
}

static int ev_stream_data(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                          size_t len)
{
    gsize bufsize = ddm_jdwp_reader_buffer_size(vm->reader);
    (void)ud;
    assert_int_equal(ci->type, S.type);
    assert_true(len > 0);
    S.datas++;
    for (size_t i = 0; i < len; i++)
        if (data[i] != pattern_byte(S.bytes + i))
            S.mismatches++;
    S.bytes += len;
    if (S.close_later_on_data && !S.close_later_at_us) {
        S.close_later_at_us = g_get_monotonic_time();
        ddm_vm_close_later(vm, g_strdup("test: closed later from stream_data"));
    }
    if (bufsize > S.max_reader_buffer)
        S.max_reader_buffer = bufsize;
    if (len > S.max_piece)
        S.max_piece = len;
    return S.data_rc;
}

static void ev_stream_end(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, int status,
                          guint64 received)
{
    (void)ud;
    (void)vm;
    assert_int_equal(ci->type, S.type);
    S.ends++;
    S.status = status;
    S.received = received;
    S.closed_at_end = rec.closed;
}

static const DdmSessionEvents test_events = {
    .stream_begin = ev_stream_begin,
    .stream_data = ev_stream_data,
    .stream_end = ev_stream_end,
    .ddm_chunk = ev_ddm_chunk,
    .tap_chunk = ev_tap_chunk,
    .jdwp_command = ev_jdwp_command,
    .foreign_reply = ev_foreign_reply,
    .reply_alone = ev_reply_alone,
    .output_drained = ev_output_drained,
    .reply_head = ev_reply_head,
    .reply_part = ev_reply_part,
};

const DdmSessionEvents *ddm_monitor_events(DdmMonitor *mon, gpointer *ud)
{
    (void)mon;
    if (ud)
        *ud = NULL;
    return &test_events;
}

/* Count the session's log lines by level (then print them as usual). */
static GLogWriterOutput log_writer(GLogLevelFlags level, const GLogField *fields, gsize n,
                                   gpointer ud)
{
    if (level & G_LOG_LEVEL_WARNING)
        rec.log_warnings++;
    else if (level & G_LOG_LEVEL_MESSAGE)
        rec.log_messages++;
    return g_log_writer_default(level, fields, n, ud);
}


/* ------------------------------------------------------------- fixture */

typedef struct Fx {
    DdmConfig config;
    DdmMonitor mon;
    DdmTarget *target;
    DdmVm *vm;
    int peer; /* the test's (VM's) end */
    GByteArray *in; /* bytes read from ddmon not yet consumed */
    guint reads;    /* reads of the peer's end that returned bytes (with SOCK_SEQPACKET:
                       the writes ddmon made, one record each) */
} Fx;

/* The next fixture's shared read budget (--max-buffers), 0 for none. */
static size_t fx_budget_limit;
/* The next fixture's --max-packet, 0 for the default 1 MiB. */
static size_t fx_max_packet;
/* The next fixture's socketpair type, 0 for SOCK_STREAM. */
static int fx_sock_type;
/* The next fixture's pair is TCP on loopback (port 0: the kernel's), not
 * a socketpair: what close() does with unread input is TCP's. */
static gboolean fx_tcp;

/* A connected TCP pair on 127.0.0.1: sv[0] ddmon's end, sv[1] the peer's. */
static void tcp_pair(int sv[2])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(sv[0] >= 0);
    assert_int_equal(connect(sv[0], (struct sockaddr *)&a, sizeof a), 0);
    sv[1] = accept(l, NULL, NULL);
    assert_true(sv[1] >= 0);
    close(l);
}
/* The next fixture's target may be any JVM (probed with Version first). */
static gboolean fx_any_jvm;
/* The next fixture's request timeout in ms, 0 for the default 2000. */
static unsigned fx_request_timeout_ms;

static Fx *fx_new(gboolean fail_connect)
{
    Fx *fx = g_new0(Fx, 1);
    int sv[2];

    memset(&rec, 0, sizeof rec);
    memset(&S, 0, sizeof S);
    ddm_ratelog_reset(); /* each test's VM has the same key: a fresh log budget */
    rec.chunks = g_ptr_array_new_with_free_func(rec_chunk_free);
    fx->config.connect_timeout_ms = 1000;
    fx->config.handshake_timeout_ms = 2000;
    fx->config.request_timeout_ms = fx_request_timeout_ms ? fx_request_timeout_ms : 2000;
    fx->config.tcp_version_probe = TRUE;
    fx->config.max_pending = 16;
    fx->config.max_packet = fx_max_packet ? fx_max_packet : 1 << 20;
    fx->config.max_stream = G_MAXUINT32;
    fx->config.max_inflate = 1 << 20;
    fx->config.max_write_queue = 1 << 20;
    fx->mon.config = &fx->config;
    fx->mon.events = &test_events; /* (what ddm_monitor_events below returns) */
    fx->mon.ud = NULL;
    if (fx_budget_limit)
        fx->mon.read_budget = ddm_jdwp_budget_new(fx_budget_limit);

    if (fx_tcp)
        tcp_pair(sv);
    else
        assert_int_equal(socketpair(AF_UNIX, (fx_sock_type ? fx_sock_type : SOCK_STREAM) | SOCK_CLOEXEC,
                                    0, sv), 0);
    fx->peer = sv[1];
    fx->target = fx_any_jvm ? test_pair_jvm_target_new("pair:1", sv[0])
                            : test_pair_target_new("pair:1", sv[0], fail_connect);
    fx->in = g_byte_array_new();
    return fx;
}

static void fx_free(Fx *fx)
{
    if (fx->vm) {
        ddm_vm_close(fx->vm, "test over");
        ddm_vm_unref(fx->vm);
    }
    /* Let deferred sources (connect idles) finish. */
    while (g_main_context_iteration(NULL, FALSE))
        ;
    ddm_target_unref(fx->target);
    if (fx->peer >= 0)
        close(fx->peer);
    ddm_jdwp_budget_free(fx->mon.read_budget);
    fx_budget_limit = 0;
    fx_max_packet = 0;
    fx_sock_type = 0;
    fx_tcp = FALSE;
    fx_stopping = FALSE;
    fx_reports_held = FALSE;
    fx_any_jvm = FALSE;
    fx_request_timeout_ms = 0;
    g_byte_array_unref(fx->in);
    g_ptr_array_unref(rec.chunks);
    rec.chunks = NULL;
    g_free(fx);
}

static gboolean flag_cb(gpointer p)
{
    *(gboolean *)p = TRUE;
    return G_SOURCE_REMOVE;
}

/* Run the main loop for @ms milliseconds. */
static void spin(guint ms)
{
    gboolean done = FALSE;
    guint id = g_timeout_add(ms, flag_cb, &done);
    while (!done)
        g_main_context_iteration(NULL, TRUE);
    (void)id;
}

/* Run the main loop until @vm is in @state (or 3 s pass). */
static void spin_until_state(DdmVm *vm, DdmVmState state)
{
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (vm->state != state && g_get_monotonic_time() < end) {
        gboolean done = FALSE;
        guint id = g_timeout_add(5, flag_cb, &done);
        while (!done && vm->state != state)
            g_main_context_iteration(NULL, TRUE);
        if (!done)
            g_source_remove(id);
    }
    assert_string_equal(ddm_vm_state_name(vm->state), ddm_vm_state_name(state));
}

static void peer_write(Fx *fx, const void *p, size_t n)
{
    assert_int_equal(write(fx->peer, p, n), (ssize_t)n);
}

/* Read @n bytes ddmon sent (pumping the loop meanwhile). */
static void peer_read(Fx *fx, void *out, size_t n)
{
    gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
    while (fx->in->len < n) {
        struct pollfd pfd = {.fd = fx->peer, .events = POLLIN};
        g_main_context_iteration(NULL, FALSE);
        if (poll(&pfd, 1, 5) == 1) {
            uint8_t buf[4096];
            ssize_t got = read(fx->peer, buf, sizeof buf);
            assert_true(got > 0);
            fx->reads++;
            g_byte_array_append(fx->in, buf, (guint)got);
        }
        assert_true(g_get_monotonic_time() < end);
    }
    memcpy(out, fx->in->data, n);
    g_byte_array_remove_range(fx->in, 0, (guint)n);
}

/* Nothing more from ddmon (after pumping the loop a bit). */
static void peer_expect_silence(Fx *fx)
{
    struct pollfd pfd = {.fd = fx->peer, .events = POLLIN};
    spin(20);
    assert_int_equal(fx->in->len, 0);
    assert_int_equal(poll(&pfd, 1, 0), 0);
}

/* Read one JDWP command packet ddmon sent; returns its chunk type, id and payload. */
static uint32_t peer_read_request(Fx *fx, uint32_t *id, GBytes **payload)
{
    uint8_t hdr[DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN];
    DdmJdwpHeader h;
    uint32_t type, clen;
    uint8_t *data;

    peer_read(fx, hdr, sizeof hdr);
    assert_true(ddm_jdwp_parse_header(hdr, sizeof hdr, &h));
    assert_int_equal(h.flags, 0);
    assert_int_equal(h.cmdset, 0xC7);
    assert_int_equal(h.cmd, 0x01);
    type = (uint32_t)hdr[11] << 24 | (uint32_t)hdr[12] << 16 | (uint32_t)hdr[13] << 8 | hdr[14];
    clen = (uint32_t)hdr[15] << 24 | (uint32_t)hdr[16] << 16 | (uint32_t)hdr[17] << 8 | hdr[18];
    assert_int_equal(h.length, sizeof hdr + clen);
    data = g_malloc(clen + 1);
    peer_read(fx, data, clen);
    if (id)
        *id = h.id;
    if (payload)
        *payload = g_bytes_new_take(data, clen);
    else
        g_free(data);
    return type;
}

static void peer_send_reply_chunk(Fx *fx, uint32_t id, uint32_t type, const void *d, size_t n)
{
    size_t len;
    uint8_t *p = ddm_chunk_build_reply(id, type, d, n, &len);
    peer_write(fx, p, len);
    g_free(p);
}

static void peer_send_error(Fx *fx, uint32_t id, uint16_t error)
{
    size_t len;
    uint8_t *p = ddm_jdwp_build_reply(id, error, NULL, 0, &len);
    peer_write(fx, p, len);
    g_free(p);
}

static void peer_send_event(Fx *fx, uint32_t id, uint32_t type, const void *d, size_t n)
{
    size_t len;
    uint8_t *p = ddm_chunk_build_packet(id, type, d, n, &len);
    peer_write(fx, p, len);
    g_free(p);
}

/* ------------------------------------------------------- payload builders */

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

static void put_lstr(GByteArray *b, const char *ascii)
{
    put_u4(b, (uint32_t)strlen(ascii));
    put_str16(b, ascii);
}

/* A HELO reply payload; @tails: 0 minimal, 6 all, 7 all plus unknown bytes. */
static GByteArray *helo_payload(uint32_t pid, const char *ident, const char *app, int tails)
{
    GByteArray *b = g_byte_array_new();
    put_u4(b, 1);
    put_u4(b, pid);
    put_u4(b, (uint32_t)strlen(ident));
    put_u4(b, (uint32_t)strlen(app));
    put_str16(b, ident);
    put_str16(b, app);
    if (tails >= 1)
        put_u4(b, 10);
    if (tails >= 2)
        put_lstr(b, "64-bit (arm64)");
    if (tails >= 3)
        put_lstr(b, "CheckJNI=false");
    if (tails >= 4) {
        uint8_t one = 1;
        g_byte_array_append(b, &one, 1);
    }
    if (tails >= 5)
        put_lstr(b, "com.example.app");
    if (tails >= 6)
        put_u4(b, DDM_CHUNK('A', '_', 'G', 'O'));
    if (tails >= 7) {
        uint8_t junk[5] = {9, 9, 9, 9, 9};
        g_byte_array_append(b, junk, sizeof junk);
    }
    return b;
}

/* ---------------------------------------------------- session drivers */

/* Start a session and consume ddmon's handshake. */
static Fx *start(void)
{
    Fx *fx = fx_new(FALSE);
    uint8_t hs[DDM_JDWP_HANDSHAKE_LEN];

    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    assert_non_null(fx->vm);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_CONNECTING);
    spin_until_state(fx->vm, DDM_VM_STATE_HANDSHAKE);
    peer_read(fx, hs, sizeof hs);
    assert_memory_equal(hs, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    return fx;
}

/* Echo the handshake; read HELO and FEAT; return their ids. */
static void to_helo(Fx *fx, uint32_t *helo_id, uint32_t *feat_id)
{
    GBytes *payload;
    uint32_t id;

    peer_write(fx, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    spin_until_state(fx->vm, DDM_VM_STATE_HELO);
    assert_int_equal(peer_read_request(fx, &id, &payload), DDM_CHUNK_HELO);
    assert_int_equal(id, 0x40000000u);
    assert_int_equal(g_bytes_get_size(payload), 4);
    assert_memory_equal(g_bytes_get_data(payload, NULL), "\0\0\0\1", 4);
    g_bytes_unref(payload);
    if (helo_id)
        *helo_id = id;
    assert_int_equal(peer_read_request(fx, &id, &payload), DDM_CHUNK_FEAT);
    assert_int_equal(id, 0x40000001u);
    assert_int_equal(g_bytes_get_size(payload), 0);
    g_bytes_unref(payload);
    if (feat_id)
        *feat_id = id;
}

/* Answer the HELO @helo_id as a Dalvik VM, with @ask (NULL: none) run
 * at DDM_VM_READY as the plugins' first requests would be; returns at READY. */
static void answer_helo_asking(Fx *fx, uint32_t helo_id, void (*ask)(DdmVm *vm))
{
    GByteArray *h = helo_payload(4242, "Dalvik v1.6.0", "com.example", 6);
    at_ready = ask;
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, h->data, h->len);
    g_byte_array_unref(h);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    at_ready = NULL;
}

static Fx *start_ready(void)
{
    Fx *fx = start();
    uint32_t helo_id, feat_id;

    to_helo(fx, &helo_id, &feat_id);
    answer_helo_asking(fx, helo_id, NULL);
    peer_send_error(fx, feat_id, 99); /* no FEAT: keeps the table empty */
    spin(10);
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 0);
    return fx;
}

static Fx *start_plain(void)
{
    Fx *fx = start();
    uint32_t helo_id, feat_id;

    to_helo(fx, &helo_id, &feat_id);
    peer_send_error(fx, helo_id, 99);
    spin_until_state(fx->vm, DDM_VM_STATE_PLAIN);
    peer_send_error(fx, feat_id, 99);
    spin(10);
    return fx;
}

/* A reply callback recorder. */
typedef struct Calls {
    guint n;
    ddm_reply_status status[8];
    uint32_t type;
    uint16_t jdwp_error;
    uint32_t fail_code;
    char *fail_msg;
    GBytes *data;
    gboolean close_in_callback;
} Calls;

static void on_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    Calls *c = ud;
    assert_ptr_equal(self, (ddm_plugin *)0x1234);
    if (c->n < 8)
        c->status[c->n] = r->status;
    c->n++;
    c->type = r->type;
    c->jdwp_error = r->jdwp_error;
    c->fail_code = r->fail_code;
    g_free(c->fail_msg);
    c->fail_msg = g_strdup(r->fail_msg);
    if (c->data)
        g_bytes_unref(c->data);
    c->data = r->status == DDM_REPLY_CHUNK ? g_bytes_new(r->data, r->len) : NULL;
    if (c->close_in_callback)
        ddm_vm_close(vm, "closed by a callback");
}

static void calls_clear(Calls *c)
{
    g_free(c->fail_msg);
    if (c->data)
        g_bytes_unref(c->data);
    memset(c, 0, sizeof *c);
}

#define OWNER ((gpointer)0x1234)
#define T_TEST DDM_CHUNK('T', 'E', 'S', 'T')
#define T_APNM DDM_CHUNK('A', 'P', 'N', 'M')

/* ------------------------------------------------------------- handshake */

static void test_vm_handshake_ok(void **state)
{
    Fx *fx = start();
    (void)state;
    to_helo(fx, NULL, NULL);
    assert_true(fx->vm->was_connected);
    assert_int_equal(rec.closed, 0);
    fx_free(fx);
}

static void test_vm_handshake_wrong(void **state)
{
    Fx *fx = start();
    (void)state;
    peer_write(fx, "JDWP-Handshakx", 14);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_int_equal(rec.closed, 1);
    assert_non_null(strstr(fx->vm->close_reason, "handshake"));
    fx_free(fx);
}

static void test_vm_handshake_split(void **state)
{
    Fx *fx = start();
    uint32_t id;
    (void)state;
    peer_write(fx, "JDWP-", 5);
    spin(20);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HANDSHAKE);
    peer_write(fx, "Handshak", 8);
    spin(20);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HANDSHAKE);
    peer_write(fx, "e", 1);
    spin_until_state(fx->vm, DDM_VM_STATE_HELO);
    assert_int_equal(peer_read_request(fx, &id, NULL), DDM_CHUNK_HELO);
    fx_free(fx);
}

static void test_vm_packet_before_echo_discarded(void **state)
{
    Fx *fx = start();
    GByteArray *apnm = g_byte_array_new();
    (void)state;
    put_lstr(apnm, "early");
    peer_send_event(fx, 0x80000001u, T_APNM, apnm->data, apnm->len);
    g_byte_array_unref(apnm);
    peer_write(fx, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    spin_until_state(fx->vm, DDM_VM_STATE_HELO);
    assert_int_equal(rec.chunks->len, 0);
    assert_int_equal(peer_read_request(fx, NULL, NULL), DDM_CHUNK_HELO);
    fx_free(fx);
}

static void test_vm_handshake_timeout(void **state)
{
    Fx *fx = fx_new(FALSE);
    (void)state;
    fx->config.handshake_timeout_ms = 50;
    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "handshake"));
    fx_free(fx);
}

static void test_vm_connect_fails(void **state)
{
    Fx *fx = fx_new(TRUE);
    (void)state;
    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_false(fx->vm->was_connected);
    assert_int_equal(rec.closed, 1);
    assert_non_null(strstr(fx->vm->close_reason, "refused"));
    fx_free(fx);
}

static void test_vm_close_while_connecting(void **state)
{
    Fx *fx = fx_new(FALSE);
    (void)state;
    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    ddm_vm_close(fx->vm, "not wanted");
    assert_int_equal(rec.closed, 1);
    spin(20); /* the connect completes into a closed session: fd closed */
    assert_int_equal(fx->vm->fd, -1);
    fx_free(fx);
}

/* ------------------------------------------------------------------ HELO */

static void test_vm_helo_full_tails(void **state)
{
    Fx *fx = start();
    uint32_t helo_id;
    GByteArray *h = helo_payload(4242, "Dalvik v1.6.0", "com.example:svc", 7);
    const ddm_vm_info *i = &fx->vm->info;
    (void)state;

    to_helo(fx, &helo_id, NULL);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, h->data, h->len);
    g_byte_array_unref(h);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    assert_int_equal(rec.last_new, DDM_VM_STATE_READY);
    assert_int_equal(rec.last_old, DDM_VM_STATE_HELO);
    assert_int_equal(i->size, sizeof(ddm_vm_info));
    assert_int_equal(i->ddm, 1);
    assert_int_equal(i->pid, 4242);
    assert_int_equal(i->protocol_version, 1);
    assert_string_equal(i->key, "pair:1");
    assert_string_equal(i->transport, "pair");
    assert_string_equal(i->vm_ident, "Dalvik v1.6.0");
    assert_string_equal(i->app_name, "com.example:svc");
    assert_int_equal(i->user_id, 10);
    assert_string_equal(i->abi, "64-bit (arm64)");
    assert_string_equal(i->jvm_flags, "CheckJNI=false");
    assert_int_equal(i->native_debuggable, 1);
    assert_string_equal(i->package_name, "com.example.app");
    assert_int_equal(fx->vm->info.boot_stage, DDM_CHUNK('A', '_', 'G', 'O'));
    assert_true(fx->vm->was_ready);
    assert_null(fx->vm->rare); /* a DDM VM that did nothing rare holds no rare block */
    assert_null(ddm_vm_pid_note(fx->vm));
    assert_null(ddm_vm_suspend_owner(fx->vm));
    fx_free(fx);
}

static void test_vm_helo_minimal(void **state)
{
    Fx *fx = start();
    uint32_t helo_id;
    GByteArray *h = helo_payload(7, "ART", "", 0);
    const ddm_vm_info *i = &fx->vm->info;
    (void)state;

    to_helo(fx, &helo_id, NULL);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, h->data, h->len);
    g_byte_array_unref(h);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    assert_int_equal(i->pid, 7);
    assert_string_equal(i->app_name, "");
    assert_int_equal(i->user_id, -1);
    assert_null(i->abi);
    assert_null(i->jvm_flags);
    assert_int_equal(i->native_debuggable, -1);
    assert_null(i->package_name);
    fx_free(fx);
}

static void test_vm_helo_error_is_plain(void **state)
{
    Fx *fx = start_plain();
    Calls c = {0};
    (void)state;

    assert_int_equal(fx->vm->info.ddm, 0);
    assert_false(fx->vm->was_ready);
    /* No further DDM traffic: requests are refused, nothing is written. */
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, NULL),
                     -ENOTCONN);
    peer_expect_silence(fx);
    /* DDM events from a plain VM are dropped. */
    peer_send_event(fx, 0x10000001u, T_APNM, "\0\0\0\0", 4);
    spin(20);
    assert_int_equal(rec.chunks->len, 0);
    /* Still connected (a debugger may use it later). */
    assert_int_equal(fx->vm->state, DDM_VM_STATE_PLAIN);
    assert_int_equal(c.n, 0);
    fx_free(fx);
}

static void test_vm_helo_fail_chunk(void **state)
{
    Fx *fx = start();
    uint32_t helo_id;
    GByteArray *f = g_byte_array_new();
    (void)state;

    put_u4(f, 1);
    put_u4(f, 4);
    put_str16(f, "nope");
    to_helo(fx, &helo_id, NULL);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_FAIL, f->data, f->len);
    g_byte_array_unref(f);
    spin_until_state(fx->vm, DDM_VM_STATE_READY); /* it speaks DDM, nameless */
    assert_int_equal(fx->vm->info.ddm, 1);
    assert_null(fx->vm->info.app_name);
    fx_free(fx);
}

static void test_vm_helo_empty_reply(void **state)
{
    Fx *fx = start();
    uint32_t helo_id;
    (void)state;

    to_helo(fx, &helo_id, NULL);
    peer_send_reply_chunk(fx, helo_id, 0, NULL, 0);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    fx_free(fx);
}

static void test_vm_helo_malformed_closes(void **state)
{
    Fx *fx = start();
    uint32_t helo_id;
    (void)state;

    to_helo(fx, &helo_id, NULL);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, "\0\0\0\1\0\0", 6);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "HELO"));
    fx_free(fx);
}

static void test_vm_helo_timeout_is_plain(void **state)
{
    Fx *fx = fx_new(FALSE);
    uint8_t hs[DDM_JDWP_HANDSHAKE_LEN];
    (void)state;

    fx->config.request_timeout_ms = 400; /* long enough to see HELO state on a busy machine */
    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    spin_until_state(fx->vm, DDM_VM_STATE_HANDSHAKE);
    peer_read(fx, hs, sizeof hs);
    to_helo(fx, NULL, NULL);
    spin(20);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HELO); /* waits for the request timeout */
    spin_until_state(fx->vm, DDM_VM_STATE_PLAIN);
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 0);
    fx_free(fx);
}

/* A HELO answer after the timeout (a VM starting under load) still makes
 * the VM DDM-aware, with its identity. */
static void test_vm_late_helo_upgrades(void **state)
{
    Fx *fx = fx_new(FALSE);
    uint8_t hs[DDM_JDWP_HANDSHAKE_LEN];
    uint32_t helo_id = 0, feat_id = 0;
    GByteArray *h = helo_payload(1, "ART", "late.app", 1);
    (void)state;

    fx->config.request_timeout_ms = 200;
    fx->vm = ddm_vm_new(&fx->mon, fx->target);
    spin_until_state(fx->vm, DDM_VM_STATE_HANDSHAKE);
    peer_read(fx, hs, sizeof hs);
    to_helo(fx, &helo_id, &feat_id);
    spin_until_state(fx->vm, DDM_VM_STATE_PLAIN);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, h->data, h->len);
    g_byte_array_unref(h);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    assert_int_equal(fx->vm->info.ddm, 1);
    assert_string_equal(fx->vm->info.app_name, "late.app");
    fx_free(fx);
}

static void test_vm_feat(void **state)
{
    Fx *fx = start();
    uint32_t helo_id, feat_id;
    GByteArray *h = helo_payload(1, "ART", "app", 1);
    GByteArray *f = g_byte_array_new();
    guint before;
    (void)state;

    to_helo(fx, &helo_id, &feat_id);
    peer_send_reply_chunk(fx, helo_id, DDM_CHUNK_HELO, h->data, h->len);
    g_byte_array_unref(h);
    spin_until_state(fx->vm, DDM_VM_STATE_READY);
    before = rec.identity_changes;
    put_u4(f, 2);
    put_lstr(f, "hprof-heap-dump");
    put_lstr(f, "view-hierarchy");
    peer_send_reply_chunk(fx, feat_id, DDM_CHUNK_FEAT, f->data, f->len);
    g_byte_array_unref(f);
    spin(30);
    assert_int_equal(rec.identity_changes, before + 1);
    assert_int_equal(fx->vm->info.n_features, 2);
    assert_string_equal(fx->vm->info.features[0], "hprof-heap-dump");
    assert_string_equal(fx->vm->info.features[1], "view-hierarchy");
    fx_free(fx);
}

/* The shared FEAT set's hash is seeded (vm_ident.c): under the unseeded
 * DJB2 it used, "aB" and "b!" collide, and so do all 2^k strings of k such
 * blocks, so a hostile VM set made every FEAT walk every list in use. */
static guint djb2_with_nuls(const char *text, gsize len)
{
    guint h = 5381;
    for (gsize i = 0; i < len; i++)
        h = h * 33u + (guchar)text[i];
    return h;
}

static void test_vm_features_hash_seeded(void **state)
{
    static const guint32 seeds[] = {0, 1, 0x9E3779B9u, 0xFFFFFFFFu};
    enum { BLOCKS = 8, N = 1 << BLOCKS };
    char texts[N][2 * BLOCKS + 1];
    g_autoptr(GHashTable) full = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) slots = g_hash_table_new(g_direct_hash, g_direct_equal);
    (void)state;
    assert_int_equal(djb2_with_nuls("aB", 3), djb2_with_nuls("b!", 3)); /* the attack holds */
    for (gsize i = 0; i < G_N_ELEMENTS(seeds); i++)
        assert_int_not_equal(ddm_vm_features_hash_seeded(seeds[i], "aB", 3),
                             ddm_vm_features_hash_seeded(seeds[i], "b!", 3));
    assert_int_not_equal(ddm_vm_features_hash("aB", 3), ddm_vm_features_hash("b!", 3));
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < BLOCKS; k++)
            memcpy(&texts[i][2 * k], i >> k & 1 ? "b!" : "aB", 2);
        texts[i][2 * BLOCKS] = '\0';
        assert_int_equal(djb2_with_nuls(texts[i], sizeof texts[i]), djb2_with_nuls(texts[0], sizeof texts[0]));
        guint h = ddm_vm_features_hash(texts[i], sizeof texts[i]);
        g_hash_table_add(full, GUINT_TO_POINTER(h));
        g_hash_table_add(slots, GUINT_TO_POINTER(h & (N - 1)));
    }
    /* 256 random 32-bit hashes: a repeat has odds of ~1 in 65,000; in 256
     * slots they fill ~162 (all in one under DJB2) */
    assert_true(g_hash_table_size(full) >= N - 2);
    assert_true(g_hash_table_size(slots) >= N / 2);
    /* and the set still tells them apart and shares equal ones */
    guint base = ddm_vm_features_shared_count();
    char **a = ddm_vm_features_share(g_strsplit("aB", ",", -1));
    char **b = ddm_vm_features_share(g_strsplit("b!", ",", -1));
    char **c = ddm_vm_features_share(g_strsplit("b!", ",", -1));
    assert_ptr_not_equal(a, b);
    assert_ptr_equal(b, c);
    assert_int_equal(ddm_vm_features_shared_count(), base + 2);
    ddm_vm_features_release(a);
    ddm_vm_features_release(b);
    ddm_vm_features_release(c);
    assert_int_equal(ddm_vm_features_shared_count(), base);
}

/* A FEAT list keeps at most DDM_VM_FEATURES_MAX names, each at most
 * DDM_VM_NAME_MAX bytes (cut at a character boundary): a VM cannot make
 * ddmon hold (and hash, and compare) a packet's worth of names. */
static void test_vm_features_capped(void **state)
{
    guint n = DDM_VM_FEATURES_MAX + 44, got_n;
    gsize longest;
    char **in = g_new0(char *, n + 1);
    char **ok = g_strsplit("a,b", ",", -1);
    (void)state;
    for (guint i = 0; i < n; i++)
        in[i] = g_strdup_printf("f%u", i);
    g_free(in[1]);
    in[1] = g_strnfill(DDM_VM_NAME_MAX + 100, 'x');
    memcpy(in[1] + DDM_VM_NAME_MAX - 1, "\xc3\xa9", 2); /* a 2-byte character across the cut */
    assert_false(ddm_vm_features_over_cap(ok, &got_n, &longest));
    assert_int_equal(got_n, 2);
    assert_int_equal(longest, 1);
    assert_true(ddm_vm_features_over_cap(in, &got_n, &longest));
    assert_int_equal(got_n, n);
    assert_int_equal(longest, DDM_VM_NAME_MAX + 100);
    char **shared = ddm_vm_features_share(in);
    assert_int_equal(g_strv_length(shared), DDM_VM_FEATURES_MAX);
    assert_int_equal(strlen(shared[1]), DDM_VM_NAME_MAX - 1);
    assert_string_equal(shared[DDM_VM_FEATURES_MAX - 1], "f255");
    assert_false(ddm_vm_features_over_cap(shared, &got_n, &longest));
    ddm_vm_features_release(shared);
    g_strfreev(ok);
}

/* The identity text VMs have in common is held once (vm_ident.c): equal
 * FEAT lists are one vector, told apart by every byte (where one name
 * ends counts), and it goes with its last holder. */
static void test_vm_ident_shared(void **state)
{
    (void)state;
    guint base = ddm_vm_features_shared_count();
    char **a = ddm_vm_features_share(g_strsplit("hprof-heap-dump,view-hierarchy", ",", -1));
    char **b = ddm_vm_features_share(g_strsplit("hprof-heap-dump,view-hierarchy", ",", -1));
    char **c = ddm_vm_features_share(g_strsplit("hprof-heap-dum,pview-hierarchy", ",", -1));
    char **d = ddm_vm_features_share(g_strsplit("hprof-heap-dumpview-hierarchy", ",", -1));
    char **e = ddm_vm_features_share(g_new0(char *, 1));
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_ptr_not_equal(a, d);
    assert_ptr_not_equal(c, d);
    assert_int_equal(ddm_vm_features_shared_count(), base + 4);
    assert_int_equal(g_strv_length(a), 2);
    assert_string_equal(a[0], "hprof-heap-dump");
    assert_string_equal(a[1], "view-hierarchy");
    assert_null(a[2]);
    assert_string_equal(c[1], "pview-hierarchy");
    assert_int_equal(g_strv_length(d), 1);
    assert_int_equal(g_strv_length(e), 0);
    assert_null(ddm_vm_features_share(NULL));
    ddm_vm_features_release(a);
    assert_int_equal(ddm_vm_features_shared_count(), base + 4);
    assert_string_equal(b[1], "view-hierarchy"); /* b still holds it */
    ddm_vm_features_release(b);
    ddm_vm_features_release(c);
    ddm_vm_features_release(d);
    ddm_vm_features_release(e);
    ddm_vm_features_release(NULL);
    assert_int_equal(ddm_vm_features_shared_count(), base);

    char *x = ddm_vm_text_share("Dalvik v1.6.0", DDM_VM_TEXT_MAX);
    g_autofree char *copy = g_strdup("Dalvik v1.6.0");
    char *y = ddm_vm_text_share(copy, DDM_VM_TEXT_MAX);
    char *cut = ddm_vm_text_share("Dalvik v1.6.0", 6);
    assert_ptr_equal(x, y);
    assert_string_equal(cut, "Dalvik");
    assert_null(ddm_vm_text_share(NULL, DDM_VM_TEXT_MAX));
    ddm_vm_text_release(x);
    ddm_vm_text_release(y);
    ddm_vm_text_release(cut);
    ddm_vm_text_release(NULL);
}

/* The tables plugins fill through the host (vm_tables.c): headlines and
 * figure labels stay sorted, an equal set says "unchanged", a removal
 * unlinks, and a new label past DDM_VM_HEADLINES_MAX is refused; plugin
 * data is one entry a plugin, freed with its data. */
static int freed_data;
static void count_free(void *p)
{
    freed_data++;
    g_free(p);
}

static void test_vm_tables(void **state)
{
    DdmVm vm;
    DdmHeadlineFigure f[2];
    char label[16];
    (void)state;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(ddm_vm_headline_set(&vm, "threads", "14"), 1);
    assert_int_equal(ddm_vm_headline_set(&vm, "heap", "3 MB"), 1);
    assert_int_equal(ddm_vm_headline_set(&vm, "jvm", "x"), 1);
    assert_int_equal(ddm_vm_headline_set(&vm, "heap", "3 MB"), 0);
    assert_int_equal(ddm_vm_headline_set(&vm, "gone", NULL), 0);
    assert_string_equal(vm.headlines->label, "heap");
    assert_string_equal(vm.headlines->next->label, "jvm");
    assert_string_equal(vm.headlines->next->next->label, "threads");
    assert_int_equal(ddm_vm_headline_set(&vm, "jvm", NULL), 1);
    assert_null(ddm_vm_headline_get(&vm, "jvm"));
    assert_string_equal(ddm_vm_headline_get(&vm, "threads"), "14");
    assert_int_equal(ddm_vm_headline_set(&vm, "threads", "15"), 1);
    assert_string_equal(ddm_vm_headline_get(&vm, "threads"), "15");
    assert_int_equal(ddm_vm_headlines_count(&vm), 2);
    for (guint i = ddm_vm_headlines_count(&vm); i < DDM_VM_HEADLINES_MAX; i++) {
        g_snprintf(label, sizeof label, "l%02u", i);
        assert_int_equal(ddm_vm_headline_set(&vm, label, "v"), 1);
    }
    assert_int_equal(ddm_vm_headline_set(&vm, "one-more", "v"), -ENOSPC);
    assert_int_equal(ddm_vm_headline_set(&vm, "heap", "4 MB"), 1); /* a change still goes */

    memset(f, 0, sizeof f);
    g_strlcpy(f[0].name, "count", sizeof f[0].name);
    f[0].type = DDM_VAL_INT;
    f[0].i = 14;
    g_strlcpy(f[1].name, "daemon", sizeof f[1].name);
    f[1].type = DDM_VAL_INT;
    assert_int_equal(ddm_vm_figures_set(&vm, "threads", f, 2), 1);
    assert_int_equal(ddm_vm_figures_set(&vm, "threads", f, 2), 0);
    assert_int_equal(ddm_vm_figures_set(&vm, "alloc", f, 1), 1);
    assert_string_equal(ddm_vm_figures_label(vm.headline_figures), "alloc");
    assert_int_equal(vm.headline_figures->next->n, 2);
    f[0].i = 15;
    assert_int_equal(ddm_vm_figures_set(&vm, "threads", f, 2), 1);
    {
        DdmHeadlineFigure got;
        ddm_vm_figures_get(vm.headline_figures->next, 0, &got);
        assert_string_equal(got.name, "count");
        assert_int_equal(got.type, DDM_VAL_INT);
        assert_int_equal(got.i, 15);
        ddm_vm_figures_get(vm.headline_figures->next, 1, &got);
        assert_string_equal(got.name, "daemon");
        assert_int_equal(got.i, 0);
        /* one block of the label, the names and 9 bytes a value */
        assert_int_equal(vm.headline_figures->next->size,
                         strlen("threads") + 1 + strlen("count") + 1 + strlen("daemon") + 1 + 2 * 9);
        /* a double, and the member a type does not use is not compared */
        DdmHeadlineFigure d[1];
        memset(d, 0, sizeof d);
        g_strlcpy(d[0].name, "used_percent", sizeof d[0].name);
        d[0].type = DDM_VAL_DOUBLE;
        d[0].d = 42.5;
        assert_int_equal(ddm_vm_figures_set(&vm, "heap", d, 1), 1);
        d[0].i = 7;
        assert_int_equal(ddm_vm_figures_set(&vm, "heap", d, 1), 0);
        ddm_vm_figures_get(vm.headline_figures, 0, &got);
        assert_string_equal(ddm_vm_figures_label(vm.headline_figures), "alloc");
        ddm_vm_figures_get(vm.headline_figures->next, 0, &got);
        assert_string_equal(ddm_vm_figures_label(vm.headline_figures->next), "heap");
        assert_int_equal(got.type, DDM_VAL_DOUBLE);
        assert_true(got.d == 42.5);
        assert_int_equal(ddm_vm_figures_set(&vm, "heap", NULL, 0), 1);
    }
    assert_int_equal(ddm_vm_figures_set(&vm, "alloc", NULL, 0), 1);
    assert_int_equal(ddm_vm_figures_set(&vm, "alloc", NULL, 0), 0);
    assert_string_equal(ddm_vm_figures_label(vm.headline_figures), "threads");
    assert_null(vm.headline_figures->next);
    ddm_vm_headlines_clear(&vm);
    assert_null(vm.headlines);
    assert_null(vm.headline_figures);

    /* VMs with the same lists share one block each; a change to one VM's
     * leaves the other's as it was (ASan: the last VM frees a list) */
    DdmVm vm2;
    memset(&vm2, 0, sizeof vm2);
    for (int i = 0; i < 2; i++) {
        DdmVm *v = i ? &vm2 : &vm;
        assert_int_equal(ddm_vm_headline_set(v, "threads", "14"), 1);
        assert_int_equal(ddm_vm_headline_set(v, "alloc", "off"), 1);
        assert_int_equal(ddm_vm_figures_set(v, "threads", f, 2), 1);
    }
    assert_ptr_equal(vm.headlines, vm2.headlines);
    assert_ptr_equal(vm.headline_figures, vm2.headline_figures);
    assert_string_equal(vm.headlines->label, "alloc");
    assert_string_equal(vm.headlines->next->text, "14");
    assert_int_equal(ddm_vm_headline_set(&vm2, "threads", "15"), 1);
    assert_ptr_not_equal(vm.headlines, vm2.headlines);
    assert_string_equal(ddm_vm_headline_get(&vm, "threads"), "14");
    assert_string_equal(ddm_vm_headline_get(&vm2, "threads"), "15");
    assert_string_equal(ddm_vm_headline_get(&vm2, "alloc"), "off");
    assert_int_equal(ddm_vm_headline_set(&vm2, "threads", "14"), 1); /* the same list again */
    assert_ptr_equal(vm.headlines, vm2.headlines);
    f[0].i = 99;
    assert_int_equal(ddm_vm_figures_set(&vm2, "threads", f, 2), 1);
    assert_ptr_not_equal(vm.headline_figures, vm2.headline_figures);
    {
        DdmHeadlineFigure got;
        ddm_vm_figures_get(vm.headline_figures, 0, &got);
        assert_int_equal(got.i, 15);
        ddm_vm_figures_get(vm2.headline_figures, 0, &got);
        assert_int_equal(got.i, 99);
    }
    ddm_vm_headlines_clear(&vm);
    assert_string_equal(ddm_vm_headline_get(&vm2, "alloc"), "off"); /* vm2's still there */
    ddm_vm_headlines_clear(&vm2);

    int a = 1, b = 2;
    DdmVmPluginData *d1 = g_new0(DdmVmPluginData, 1), *d2 = g_new0(DdmVmPluginData, 1);
    d1->plugin = &a;
    d1->data = g_strdup("one");
    d1->data_free = count_free;
    d2->plugin = &b;
    d2->data = g_strdup("two");
    d2->data_free = count_free;
    d1->next = d2;
    vm.plugin_data = d1;
    assert_ptr_equal(ddm_vm_plugin_data_find(&vm, &b), d2);
    assert_ptr_equal(ddm_vm_plugin_data_take(&vm, &a), d1);
    assert_null(ddm_vm_plugin_data_find(&vm, &a));
    assert_ptr_equal(vm.plugin_data, d2);
    d1->next = NULL;
    freed_data = 0;
    ddm_vm_plugin_data_free_list(d1);
    ddm_vm_plugin_data_free_list(ddm_vm_plugin_data_take_all(&vm));
    assert_int_equal(freed_data, 2);
    assert_null(vm.plugin_data);
}

/* ---------------------------------------------------------------- events */

static void test_vm_ddm_event_dispatched(void **state)
{
    Fx *fx = start_ready();
    GByteArray *apnm = g_byte_array_new();
    RecChunk *c;
    size_t zlen;
    uint8_t *z;
    (void)state;

    put_lstr(apnm, "renamed");
    peer_send_event(fx, 0x80000002u, T_APNM, apnm->data, apnm->len);
    /* The same again, ZLIB-wrapped. */
    z = ddm_zlib_deflate(T_APNM, apnm->data, apnm->len, &zlen);
    peer_send_event(fx, 0x80000003u, DDM_CHUNK_ZLIB, z, zlen);
    g_free(z);
    spin(30);
    assert_int_equal(rec.chunks->len, 2);
    for (guint i = 0; i < 2; i++) {
        c = g_ptr_array_index(rec.chunks, i);
        assert_int_equal(c->ci.type, T_APNM);
        assert_int_equal(c->ci.origin, DDM_ORIGIN_EVENT);
        assert_int_equal(c->ci.packet_id, 0x80000002u + i);
        assert_int_equal(c->ci.request_type, 0);
        assert_int_equal(g_bytes_get_size(c->data), apnm->len);
        assert_memory_equal(g_bytes_get_data(c->data, NULL), apnm->data, apnm->len);
    }
    g_byte_array_unref(apnm);
    /* A bad ZLIB chunk is dropped, the session stays. */
    peer_send_event(fx, 0x80000004u, DDM_CHUNK_ZLIB, "\0\0\0\1\0\0\0\4xxxx", 12);
    spin(20);
    assert_int_equal(rec.chunks->len, 2);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
}

static void test_vm_event_in_helo_state(void **state)
{
    Fx *fx = start();
    (void)state;
    to_helo(fx, NULL, NULL);
    peer_send_event(fx, 0x80000001u, T_APNM, "\0\0\0\0", 4);
    spin(20);
    assert_int_equal(rec.chunks->len, 1); /* APNM may precede the HELO reply */
    fx_free(fx);
}

static void test_vm_jdwp_command_from_vm(void **state)
{
    Fx *fx = start_ready();
    size_t len;
    uint8_t *p = ddm_jdwp_build_command(0x10000005u, 64, 100, "\1\2\3", 3, &len);
    (void)state;
    peer_write(fx, p, len);
    g_free(p);
    spin(20);
    assert_int_equal(rec.jdwp_from_vm, 1);
    assert_int_equal(rec.chunks->len, 0);
    fx_free(fx);
}

/* Backpressure: a paused session reads nothing (packets wait in the
 * socket) and delivers them all, in order, once resumed. */
static void test_vm_pause_input(void **state)
{
    Fx *fx = start_ready();
    size_t len;
    uint8_t *p = ddm_jdwp_build_command(0x10000005u, 64, 100, "\1\2\3", 3, &len);
    (void)state;
    ddm_vm_pause_input(fx->vm, TRUE);
    ddm_vm_pause_input(fx->vm, TRUE); /* idempotent */
    peer_write(fx, p, len);
    peer_write(fx, p, len);
    spin(50);
    assert_int_equal(rec.jdwp_from_vm, 0);
    ddm_vm_pause_input(fx->vm, FALSE);
    spin(50);
    assert_int_equal(rec.jdwp_from_vm, 2);
    /* Paused, the VM's EOF goes unseen too; resumed, the session closes. */
    ddm_vm_pause_input(fx->vm, TRUE);
    close(fx->peer);
    fx->peer = -1;
    spin(50);
    assert_int_equal(rec.closed, 0);
    ddm_vm_pause_input(fx->vm, FALSE);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    g_free(p);
    fx_free(fx);
}

/* The drain notice: none while nothing waits; once, from the write watch,
 * after a queue the socket could not take at once has been written. */
static void test_vm_output_drained_notice(void **state)
{
    Fx *fx = start_ready();
    size_t len, sent = 0;
    uint8_t *p;
    (void)state;
    assert_int_equal(ddm_vm_out_queued(fx->vm), 0);
    assert_false(ddm_vm_notify_when_drained(fx->vm));
    static const uint8_t zeros[60000];
    p = ddm_jdwp_build_command(0x10000001u, 1, 1, zeros, sizeof zeros, &len);
    while (ddm_vm_out_queued(fx->vm) == 0 && sent < (16u << 20)) {
        assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), 0);
        sent += len;
    }
    assert_true(ddm_vm_out_queued(fx->vm) > 0); /* the socketpair is full */
    assert_true(ddm_vm_notify_when_drained(fx->vm));
    assert_int_equal(rec.drained, 0); /* never from inside a call */
    {
        /* The peer reads everything: the queue empties, one notice. */
        gint64 end = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
        size_t got = 0;
        uint8_t buf[65536];
        while (got < sent && g_get_monotonic_time() < end) {
            struct pollfd pfd = {.fd = fx->peer, .events = POLLIN};
            g_main_context_iteration(NULL, FALSE);
            if (poll(&pfd, 1, 1) == 1) {
                ssize_t n = read(fx->peer, buf, sizeof buf);
                assert_true(n > 0);
                got += (size_t)n;
            }
        }
        assert_int_equal(got, sent);
    }
    spin(20);
    assert_int_equal(ddm_vm_out_queued(fx->vm), 0);
    assert_int_equal(rec.drained, 1);
    g_free(p);
    fx_free(fx);
}

/* A write error on the out-watch (input paused, so the reader cannot see
 * the peer go first): the watch is removed before the fd is closed, so no
 * watch is alive when the VM reports closed (a socket that got the same fd
 * number would otherwise share the slot with it and could lose wake-ups). */
static void test_vm_write_error_removes_watch_before_close(void **state)
{
    Fx *fx = start_ready();
    size_t len, sent = 0;
    uint8_t *p;
    (void)state;
    ddm_vm_pause_input(fx->vm, TRUE);
    static const uint8_t zeros[60000];
    p = ddm_jdwp_build_command(0x10000001u, 1, 1, zeros, sizeof zeros, &len);
    while (ddm_vm_out_queued(fx->vm) == 0 && sent < (16u << 20)) {
        assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), 0);
        sent += len;
    }
    assert_true(ddm_vm_out_queued(fx->vm) > 0); /* an out-watch waits */
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "(write)"));
    assert_int_equal(rec.closed, 1);
    assert_int_equal(rec.live_watches_at_close, 0);
    g_free(p);
    fx_free(fx);
}

/* ddm_vm_requests_settled: a request the VM never answers (ART's THEN,
 * HPIF...) stops counting once the VM answered a later one; when nothing
 * later is in sight, a FEAT is sent as a fence (one at a time). */
static void test_vm_requests_settled_fence(void **state)
{
    Fx *fx = start_ready();
    Calls silent = {0}, answered = {0};
    uint32_t silent_id, answered_id, fence_id, again_id;
    (void)state;
    assert_true(ddm_vm_requests_settled(fx->vm)); /* nothing pending */

    /* one request the VM never answers: not settled, a FEAT goes out */
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &silent, NULL), 0);
    assert_int_equal(peer_read_request(fx, &silent_id, NULL), T_TEST);
    assert_false(ddm_vm_requests_settled(fx->vm));
    assert_int_equal(peer_read_request(fx, &fence_id, NULL), DDM_CHUNK_FEAT);
    assert_true(fence_id > silent_id);
    assert_false(ddm_vm_requests_settled(fx->vm)); /* the fence is in flight: no second one */
    peer_expect_silence(fx);
    /* the fence's answer supersedes the silent request */
    peer_send_error(fx, fence_id, 99);
    spin(20);
    assert_true(ddm_vm_requests_settled(fx->vm));
    assert_int_equal(silent.n, 0); /* still pending: it ends at its timeout, not here */
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 1);

    /* a newer request in flight counts again, until the VM answers it */
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &answered, NULL), 0);
    assert_int_equal(peer_read_request(fx, &answered_id, NULL), T_TEST);
    assert_false(ddm_vm_requests_settled(fx->vm));
    assert_int_equal(peer_read_request(fx, &again_id, NULL), DDM_CHUNK_FEAT);
    peer_send_reply_chunk(fx, answered_id, T_TEST, "ok", 2);
    spin(20);
    assert_int_equal(answered.n, 1);
    assert_false(ddm_vm_requests_settled(fx->vm)); /* the second fence is newer still */
    peer_send_error(fx, again_id, 99);
    spin(20);
    assert_true(ddm_vm_requests_settled(fx->vm));
    fx_free(fx);
    calls_clear(&silent);
    calls_clear(&answered);
}

/* A plain JVM's pending JDWP command (a plugin's poll) is not settled
 * until the JVM answers it: ddm_daemon_settled and the first look's set
 * rely on it. It returned TRUE for any state but READY, so a snapshot of a
 * plain JVM past the first look's cap could read a view before the
 * poll's answer. No DDM fence ever goes to a plain JVM. */
static guint plain_answers;

static void on_plain_reply(ddm_plugin *self, ddm_vm *vm, const ddm_jdwp_reply *r, void *ud)
{
    (void)self;
    (void)vm;
    (void)ud;
    assert_int_equal(r->status, DDM_REPLY_CHUNK);
    plain_answers++;
}

static void test_vm_requests_settled_plain(void **state)
{
    Fx *fx = start_plain();
    uint8_t hdr[DDM_JDWP_HEADER_LEN];
    DdmJdwpHeader h;
    size_t len;
    uint8_t *reply;
    (void)state;

    plain_answers = 0;
    assert_true(ddm_vm_requests_settled(fx->vm)); /* nothing pending */
    assert_int_equal(ddm_vm_jdwp_request(fx->vm, OWNER, 1, 1, NULL, 0, 0, on_plain_reply, NULL), 0);
    peer_read(fx, hdr, sizeof hdr);
    assert_true(ddm_jdwp_parse_header(hdr, sizeof hdr, &h));
    assert_int_equal(h.cmdset, 1);
    assert_false(ddm_vm_requests_settled(fx->vm));
    assert_false(ddm_vm_requests_settled(fx->vm));
    peer_expect_silence(fx); /* no FEAT fence to a plain JVM */
    reply = ddm_jdwp_build_reply(h.id, 0, "v", 1, &len);
    peer_write(fx, reply, len);
    g_free(reply);
    spin(20);
    assert_int_equal(plain_answers, 1);
    assert_true(ddm_vm_requests_settled(fx->vm));
    fx_free(fx);
}

/* A request sent at DDM_VM_READY (as the plugins' first ones): the FEAT
 * fence follows it at once, before anyone asks whether the VM's requests
 * are settled; when its answer comes they are, though the VM never
 * answers the request itself (ART's THEN). */
static Calls ready_silent;

static void ask_silently(DdmVm *vm)
{
    assert_int_equal(ddm_vm_request(vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &ready_silent, NULL), 0);
}

static void test_vm_fence_sent_at_ready(void **state)
{
    Fx *fx = start();
    uint32_t helo_id, feat_id, silent_id, fence_id;
    (void)state;

    to_helo(fx, &helo_id, &feat_id);
    answer_helo_asking(fx, helo_id, ask_silently);
    assert_int_equal(peer_read_request(fx, &silent_id, NULL), T_TEST);
    assert_int_equal(peer_read_request(fx, &fence_id, NULL), DDM_CHUNK_FEAT);
    assert_true(fence_id > silent_id);
    assert_false(ddm_vm_requests_settled(fx->vm)); /* in flight: no second fence */
    peer_expect_silence(fx);
    peer_send_error(fx, feat_id, 99);
    peer_send_error(fx, fence_id, 99);
    spin(20);
    assert_true(ddm_vm_requests_settled(fx->vm));
    assert_int_equal(ready_silent.n, 0); /* it ends at its timeout, not here */
    fx_free(fx);
    calls_clear(&ready_silent);

    /* Nothing asked at READY: no fence (start_ready checks the table is
     * empty once FEAT is answered), and the VM hears nothing more. */
    fx = start_ready();
    peer_expect_silence(fx);
    fx_free(fx);
}

/* The requests one event sends leave in one write (vm_io.c's gathering):
 * the handshake with HELO and FEAT; at READY the plugins' first requests
 * and the fence. A
 * SOCK_SEQPACKET pair keeps each write a record of its own, so the reads
 * count ddmon's writes (each record fits one read of peer_read's). */
static void ask_twice(DdmVm *vm)
{
    assert_int_equal(ddm_vm_request(vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &ready_silent, NULL), 0);
    assert_int_equal(ddm_vm_request(vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &ready_silent, NULL), 0);
}

static void test_vm_requests_of_one_event_in_one_write(void **state)
{
    uint32_t helo_id, feat_id, first_id, second_id, fence_id;
    (void)state;

    fx_sock_type = SOCK_SEQPACKET;
    Fx *fx = start();
    /* the handshake, HELO and FEAT, before the echo */
    assert_int_equal(fx->reads, 1);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HANDSHAKE);
    assert_true(fx->in->len > 0);
    guint reads = fx->reads;
    to_helo(fx, &helo_id, &feat_id);
    assert_int_equal(fx->reads - reads, 0);
    assert_int_equal(fx->in->len, 0);

    answer_helo_asking(fx, helo_id, ask_twice);
    reads = fx->reads;
    assert_int_equal(peer_read_request(fx, &first_id, NULL), T_TEST);
    assert_int_equal(peer_read_request(fx, &second_id, NULL), T_TEST);
    assert_int_equal(peer_read_request(fx, &fence_id, NULL), DDM_CHUNK_FEAT);
    assert_int_equal(fx->reads - reads, 1); /* both requests and the fence */
    assert_true(first_id < second_id && second_id < fence_id);
    assert_false(fx->vm->out_gathering);

    /* After the event, a request goes out at once, in a write of its own. */
    reads = fx->reads;
    ask_silently(fx->vm);
    assert_int_equal(peer_read_request(fx, &first_id, NULL), T_TEST);
    assert_int_equal(fx->reads - reads, 1);
    assert_int_equal(ddm_vm_out_queued(fx->vm), 0);
    fx_free(fx);
    calls_clear(&ready_silent);
}

/* Read one plain JDWP command ddmon sent (its data skipped); returns its
 * command set and command, and its id in @id. */
static unsigned peer_read_jdwp_command(Fx *fx, uint32_t *id)
{
    uint8_t hdr[DDM_JDWP_HEADER_LEN];
    DdmJdwpHeader h;

    peer_read(fx, hdr, sizeof hdr);
    assert_true(ddm_jdwp_parse_header(hdr, sizeof hdr, &h));
    assert_int_equal(h.flags, 0);
    if (h.length > sizeof hdr) {
        uint8_t *data = g_malloc(h.length - sizeof hdr);
        peer_read(fx, data, h.length - sizeof hdr);
        g_free(data);
    }
    *id = h.id;
    return (unsigned)h.cmdset << 8 | h.cmd;
}

static void put_jdwp_string(GByteArray *b, const char *s)
{
    put_u4(b, (uint32_t)strlen(s));
    g_byte_array_append(b, (const guint8 *)s, (guint)strlen(s));
}

/* The answer to VirtualMachine.Version @id from the VM @name described as
 * @desc, after the handshake echo when @echo, in one write. */
static void peer_send_version_echoing(Fx *fx, gboolean echo, uint32_t id, const char *desc,
                                      const char *name)
{
    GByteArray *b = g_byte_array_new(), *out = g_byte_array_new();
    size_t len;
    uint8_t *p;

    put_jdwp_string(b, desc);
    put_u4(b, 1); /* JDWP 1.8 */
    put_u4(b, 8);
    put_jdwp_string(b, "17.0.21");
    put_jdwp_string(b, name);
    p = ddm_jdwp_build_reply(id, 0, b->data, b->len, &len);
    if (echo)
        g_byte_array_append(out, (const guint8 *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    g_byte_array_append(out, p, (guint)len);
    peer_write(fx, out->data, out->len);
    g_free(p);
    g_byte_array_unref(b);
    g_byte_array_unref(out);
}

static void peer_send_version(Fx *fx, uint32_t id, const char *desc, const char *name)
{
    peer_send_version_echoing(fx, FALSE, id, desc, name);
}

static void peer_send_version_after_echo(Fx *fx, uint32_t id, const char *desc, const char *name)
{
    peer_send_version_echoing(fx, TRUE, id, desc, name);
}

/* The first requests go out with the handshake, before its echo (as
 * ddmlib's REAQ does): to a target that may be any JVM, the Version
 * probe alone. A VM that says it is Dalvik then gets HELO and FEAT; one
 * that does not is a plain JVM and hears no DDM. */
static void test_vm_probe_sent_with_the_handshake(void **state)
{
    uint32_t id, helo_id, feat_id;
    (void)state;

    fx_any_jvm = TRUE;
    fx_sock_type = SOCK_SEQPACKET; /* a read a write */
    Fx *fx = start();
    assert_int_equal(peer_read_jdwp_command(fx, &id),
                     DDM_JDWP_CMDSET_VM << 8 | DDM_JDWP_CMD_VM_VERSION);
    assert_int_equal(fx->reads, 1); /* in the handshake's write */
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HANDSHAKE);
    peer_expect_silence(fx); /* the probe alone */
    peer_write(fx, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    spin_until_state(fx->vm, DDM_VM_STATE_HELO);
    peer_expect_silence(fx); /* HELO waits for the answer */
    peer_send_version(fx, id, "Android Runtime 2.1.0", "Dalvik");
    assert_int_equal(peer_read_request(fx, &helo_id, NULL), DDM_CHUNK_HELO);
    assert_int_equal(peer_read_request(fx, &feat_id, NULL), DDM_CHUNK_FEAT);
    answer_helo_asking(fx, helo_id, NULL);
    assert_int_equal(fx->vm->info.pid, 4242);
    fx_free(fx);

    /* the echo and the answer in one read: a HotSpot JVM, plain */
    fx_any_jvm = TRUE;
    fx = start();
    assert_int_equal(peer_read_jdwp_command(fx, &id),
                     DDM_JDWP_CMDSET_VM << 8 | DDM_JDWP_CMD_VM_VERSION);
    peer_send_version_after_echo(fx, id,
                                 "Java Debug Wire Protocol (Reference Implementation) version 17.0",
                                 "OpenJDK 64-Bit Server VM");
    spin_until_state(fx->vm, DDM_VM_STATE_PLAIN);
    assert_string_equal(fx->vm->info.vm_ident, "OpenJDK 64-Bit Server VM 17.0.21");
    peer_expect_silence(fx);
    fx_free(fx);
}

/* The requests sent with the handshake do not time out while the echo is
 * awaited (the handshake deadline counts until then), and their own time
 * runs from the echo, not from when they were written. */
static void test_vm_first_requests_time_runs_from_the_echo(void **state)
{
    uint32_t helo_id, feat_id;
    gint64 echo_us, after_us, deadline_us;
    (void)state;

    fx_request_timeout_ms = 300; /* the handshake's: 2,000 */
    Fx *fx = start();
    spin(600); /* twice the requests' timeout, and no echo yet */
    assert_int_equal(fx->vm->state, DDM_VM_STATE_HANDSHAKE);
    to_helo(fx, &helo_id, &feat_id);
    answer_helo_asking(fx, helo_id, NULL); /* READY: the HELO was still pending */
    fx_free(fx);

    /* the deadlines once echoed: the request timeout after the echo (read
     * between echo_us and after_us), not after the handshake deadline */
    fx_request_timeout_ms = 300;
    fx = start();
    spin(600);
    echo_us = g_get_monotonic_time();
    to_helo(fx, &helo_id, &feat_id);
    after_us = g_get_monotonic_time();
    deadline_us = ddm_correlate_next_deadline(fx->vm->pending);
    assert_true(deadline_us >= echo_us + 300 * G_GINT64_CONSTANT(1000));
    assert_true(deadline_us <= after_us + 301 * G_GINT64_CONSTANT(1000));
    spin_until_state(fx->vm, DDM_VM_STATE_PLAIN); /* no HELO answer: it times out */
    fx_free(fx);
}

/* A drain notice asked for while requests are gathered (at READY): they
 * wait for the gathering's end, not for the socket, and the notice comes
 * from the loop once they are written, as ddm_vm_notify_when_drained
 * promises; before, it answered "empty, no call will come". */
static gboolean drain_asked;

static void ask_then_want_drain(DdmVm *vm)
{
    ask_silently(vm);
    drain_asked = ddm_vm_notify_when_drained(vm);
}

static void test_vm_drain_notice_asked_while_gathering(void **state)
{
    uint32_t helo_id, feat_id, silent_id, fence_id;
    (void)state;

    Fx *fx = start();
    to_helo(fx, &helo_id, &feat_id);
    drain_asked = FALSE;
    answer_helo_asking(fx, helo_id, ask_then_want_drain);
    assert_true(drain_asked);
    assert_int_equal(rec.drained, 0); /* never from inside a call */
    assert_int_equal(peer_read_request(fx, &silent_id, NULL), T_TEST);
    assert_int_equal(peer_read_request(fx, &fence_id, NULL), DDM_CHUNK_FEAT);
    spin(20);
    assert_int_equal(ddm_vm_out_queued(fx->vm), 0);
    assert_int_equal(rec.drained, 1);
    fx_free(fx);
    calls_clear(&ready_silent);
}

static void test_vm_unknown_reply_id(void **state)
{
    Fx *fx = start_ready();
    (void)state;
    peer_send_reply_chunk(fx, 0x12345678u, T_TEST, "x", 1);
    spin(20);
    assert_int_equal(rec.foreign, 1);
    assert_int_equal(rec.chunks->len, 0);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
}

/* The relay's fused path (vm_io.c, reply_alone): only for a VM with relay
 * state, a read holding one whole reply not ours (our pending requests
 * first) goes to reply_alone; claimed, it is counted and goes no further;
 * declined, or two in one read, the general path has it (foreign_reply). */
static void test_vm_reply_alone(void **state)
{
    Fx *fx = start_ready();
    Calls c = {0};
    uint32_t ours;
    int relay_state;
    (void)state;
    memset(&A, 0, sizeof A);
    /* no relay state: the general path */
    peer_send_reply_chunk(fx, 0x12345678u, T_TEST, "x", 1);
    spin(20);
    assert_int_equal(A.calls, 0);
    assert_int_equal(rec.foreign, 1);

    fx->vm->relay = &relay_state;
    A.claim = TRUE;
    guint64 in0 = fx->vm->packets_in;
    peer_send_reply_chunk(fx, 0x12345679u, T_TEST, "x", 1);
    spin(20);
    assert_int_equal(A.calls, 1);
    assert_int_equal(A.id, 0x12345679u);
    assert_int_equal(rec.foreign, 1);
    assert_int_equal(fx->vm->packets_in, in0 + 1);
    /* declined: nothing done there, the general path has it */
    A.claim = FALSE;
    peer_send_reply_chunk(fx, 0x1234567au, T_TEST, "x", 1);
    spin(20);
    assert_int_equal(A.calls, 2);
    assert_int_equal(rec.foreign, 2);
    /* the answer to our own request is never offered */
    A.claim = TRUE;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, NULL), 0);
    assert_int_equal(peer_read_request(fx, &ours, NULL), T_TEST);
    peer_send_reply_chunk(fx, ours, T_TEST, "y", 1);
    spin(20);
    assert_int_equal(A.calls, 2);
    assert_int_equal(c.n, 1);
    assert_int_equal(rec.foreign, 2);

    fx->vm->relay = NULL;
    memset(&A, 0, sizeof A);
    fx_free(fx);
    calls_clear(&c);
}

/* The watch's first read (vm_io.c, read_first) and what follows it when it
 * does not empty the socket (read_first_rest): a lone reply of exactly the
 * in-place read's 4,096 bytes fills the buffer and is still offered to
 * reply_alone, and the read after it (EAGAIN) ends the wakeup; a reply with
 * a second packet in the same read is no lone reply: both go the general
 * way, in order; the VM's end of file after a claimed reply closes it. */
static void test_vm_reply_alone_fills_the_read(void **state)
{
    Fx *fx = start_ready();
    int relay_state;
    static uint8_t body[4096 - 11];
    size_t len;
    (void)state;
    memset(&A, 0, sizeof A);
    memset(&F, 0, sizeof F);
    fx->vm->relay = &relay_state;
    A.claim = TRUE;
    guint64 in0 = fx->vm->packets_in, bytes0 = fx->vm->bytes_in;
    uint8_t *p = ddm_jdwp_build_reply(0x00500001u, 0, body, sizeof body, &len);
    assert_int_equal(len, 4096);
    peer_write(fx, p, len);
    spin(20);
    g_free(p);
    assert_int_equal(A.calls, 1);
    assert_int_equal(A.id, 0x00500001u);
    assert_int_equal(A.len, 4096);
    assert_int_equal(F.n, 0);
    assert_int_equal(fx->vm->packets_in, in0 + 1);
    assert_int_equal(fx->vm->bytes_in, bytes0 + 4096);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);

    /* two replies in one read: neither is alone */
    GByteArray *all = g_byte_array_new();
    for (uint32_t id = 0x00500002u; id <= 0x00500003u; id++) {
        p = ddm_jdwp_build_reply(id, 0, "abcd", 4, &len);
        g_byte_array_append(all, p, (guint)len);
        g_free(p);
    }
    peer_write(fx, all->data, all->len);
    spin(20);
    assert_int_equal(A.calls, 1);
    assert_int_equal(F.n, 2);
    assert_int_equal(F.id[0], 0x00500002u);
    assert_int_equal(F.id[1], 0x00500003u);
    assert_int_equal(fx->vm->packets_in, in0 + 3);
    g_byte_array_unref(all);

    /* a claimed reply, then the end of file */
    p = ddm_jdwp_build_reply(0x00500004u, 0, "x", 1, &len);
    peer_write(fx, p, len);
    g_free(p);
    spin(20);
    assert_int_equal(A.calls, 2);
    assert_int_equal(A.id, 0x00500004u);
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "closed by the VM"));

    fx->vm->relay = NULL;
    memset(&A, 0, sizeof A);
    fx_free(fx);
}

/* The in-place read path (vm_io.c, handle_in_place): the whole replies of
 * one read are classified where they were read, in order, the reader
 * saying "more" for all but the last; the part of a reply not yet whole
 * goes to the reader and comes out whole once its rest arrives. */
static void test_vm_in_place_replies(void **state)
{
    Fx *fx = start_ready();
    GByteArray *all = g_byte_array_new();
    size_t len4;
    (void)state;
    memset(&F, 0, sizeof F);
    for (uint32_t id = 0x00100001u; id <= 0x00100003u; id++) {
        size_t len;
        uint8_t *p = ddm_jdwp_build_reply(id, 0, "abcd", 4, &len);
        g_byte_array_append(all, p, (guint)len);
        g_free(p);
    }
    uint8_t *p4 = ddm_jdwp_build_reply(0x00100004u, 0, "0123456789", 10, &len4);
    g_byte_array_append(all, p4, 7); /* a reply's first 7 bytes */
    peer_write(fx, all->data, all->len);
    spin(20);
    assert_int_equal(F.n, 3);
    for (guint i = 0; i < 3; i++)
        assert_int_equal(F.id[i], 0x00100001u + i);
    assert_true(F.more[0]);
    assert_true(F.more[1]);
    assert_false(F.more[2]); /* the rest is not whole */
    /* classified where they were read (review rR 5): the reader was fed
     * nothing yet (through the reader, the replies after each and the 7
     * bytes are pending in it while it is classified) */
    for (guint i = 0; i < 3; i++)
        assert_int_equal(F.pending[i], 0);
    assert_false(ddm_jdwp_reader_has_packet(fx->vm->reader));
    peer_write(fx, p4 + 7, len4 - 7);
    spin(20);
    assert_int_equal(F.n, 4);
    assert_int_equal(F.id[3], 0x00100004u);
    assert_false(F.more[3]);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    g_free(p4);
    g_byte_array_unref(all);
    fx_free(fx);
}

/* One write of 50 replies of 100 bytes: one crosses the in-place read's
 * 4,096 bytes. Every one comes out once, in order, whole. */
static void test_vm_in_place_across_read(void **state)
{
    Fx *fx = start_ready();
    GByteArray *all = g_byte_array_new();
    uint8_t body[89];
    (void)state;
    memset(&F, 0, sizeof F);
    for (uint32_t i = 0; i < 50; i++) {
        size_t len;
        memset(body, (int)i, sizeof body);
        uint8_t *p = ddm_jdwp_build_reply(0x00200000u + i, 0, body, sizeof body, &len);
        assert_int_equal(len, 100);
        g_byte_array_append(all, p, (guint)len);
        g_free(p);
    }
    guint64 packets_before = fx->vm->packets_in;
    peer_write(fx, all->data, all->len);
    spin(30);
    assert_int_equal(F.n, 50);
    for (guint i = 0; i < 50; i++)
        assert_int_equal(F.id[i], 0x00200000u + i);
    assert_false(F.more[49]);
    assert_int_equal(fx->vm->packets_in - packets_before, 50);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    g_byte_array_unref(all);
    fx_free(fx);
}

/* The in-place path keeps --max-packet (review rR 5): a whole 100-byte
 * reply in one read, with a cap of 64, is the reader's to judge, which
 * closes the VM as the reader's own reads would, naming the value. */
static void test_vm_in_place_over_cap(void **state)
{
    Fx *fx;
    uint32_t helo_id;
    uint8_t body[89] = {0};
    size_t len;
    (void)state;
    fx_max_packet = 64;
    fx = start();
    to_helo(fx, &helo_id, NULL);
    memset(&F, 0, sizeof F);
    uint8_t *p = ddm_jdwp_build_reply(0x00300001u, 0, body, sizeof body, &len);
    assert_int_equal(len, 100);
    peer_write(fx, p, len);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "over the cap"));
    assert_non_null(strstr(fx->vm->close_reason, "declared length 100"));
    assert_int_equal(F.n, 0); /* never classified */
    g_free(p);
    fx_free(fx);
}

/* Two whole replies in one read, the first one's handling closes the VM:
 * the second is not classified (review rR 5; it is dropped with the
 * connection). */
static void test_vm_in_place_close_stops_the_read(void **state)
{
    Fx *fx = start_ready();
    GByteArray *all = g_byte_array_new();
    (void)state;
    memset(&F, 0, sizeof F);
    F.close_on = 0x00400001u;
    for (uint32_t id = 0x00400001u; id <= 0x00400002u; id++) {
        size_t len;
        uint8_t *p = ddm_jdwp_build_reply(id, 0, "abcd", 4, &len);
        g_byte_array_append(all, p, (guint)len);
        g_free(p);
    }
    peer_write(fx, all->data, all->len);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    spin(10);
    assert_int_equal(F.n, 1);
    assert_int_equal(F.id[0], 0x00400001u);
    assert_non_null(strstr(fx->vm->close_reason, "the test's relay closes it"));
    g_byte_array_unref(all);
    fx_free(fx);
}

/* -------------------------------------------------------------- garbage */

static void test_vm_garbage_length(void **state)
{
    Fx *fx = start_ready();
    const uint8_t bad[11] = {0, 0, 0, 5, 0, 0, 0, 1, 0, 0xC7, 1};
    Calls c = {0};
    (void)state;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, NULL), 0);
    rec.log_warnings = rec.log_messages = 0;
    peer_write(fx, bad, sizeof bad);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "bad JDWP packet"));
    /* the value it declared is in the reason (issue 15) */
    assert_non_null(strstr(fx->vm->close_reason, "declared length 5"));
    assert_true(fx->vm->violated); /* the monitor backs off */
    assert_int_equal(rec.log_warnings, 1); /* one line, naming the VM and the fault */
    assert_int_equal(rec.log_messages, 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.status[0], DDM_REPLY_VM_GONE);
    assert_int_equal(rec.closed, 1);
    fx_free(fx);
    calls_clear(&c);
}

/* A name a VM gives itself is cut to DDM_VM_NAME_MAX bytes at a character
 * boundary: an 8 MiB app name costs ddmon 256 bytes (issue 15, fault 3). */
static void test_vm_name_capped(void **state)
{
    Fx *fx = start_ready();
    gsize big = (gsize)8 << 20;
    char *name = g_malloc(big + 1);
    (void)state;

    memset(name, 'a', big);
    name[big] = '\0';
    /* a 2-byte character straddling the cap: cut before it */
    name[DDM_VM_NAME_MAX - 1] = (char)0xC3;
    name[DDM_VM_NAME_MAX] = (char)0xA9;
    ddm_vm_set_name(fx->vm, name, name, -1);
    assert_non_null(fx->vm->info.app_name);
    assert_int_equal(strlen(fx->vm->info.app_name), DDM_VM_NAME_MAX - 1);
    assert_int_equal(strlen(fx->vm->info.package_name), DDM_VM_NAME_MAX - 1);
    assert_true(g_utf8_validate(fx->vm->info.app_name, -1, NULL));
    assert_int_equal(memcmp(fx->vm->info.app_name, name, DDM_VM_NAME_MAX - 1), 0);
    /* a short name is kept whole */
    ddm_vm_set_name(fx->vm, "com.example.short", NULL, -1);
    assert_string_equal(fx->vm->info.app_name, "com.example.short");
    g_free(name);
    fx_free(fx);
}

static void test_vm_garbage_flags(void **state)
{
    Fx *fx = start_ready();
    const uint8_t bad[11] = {0, 0, 0, 11, 0, 0, 0, 1, 0x42, 0xC7, 1};
    (void)state;
    peer_write(fx, bad, sizeof bad);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    fx_free(fx);
}

static void test_vm_reply_chunk_overrun_is_bad(void **state)
{
    Fx *fx = start_ready();
    Calls c = {0};
    uint32_t id;
    /* A reply whose chunk claims 100 bytes but carries 2. */
    uint8_t pkt[11 + 10] = {0, 0, 0, 21, 0, 0, 0, 0, 0x80, 0, 0, 'T', 'E', 'S', 'T', 0, 0, 0, 100, 1, 2};
    (void)state;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, &id), 0);
    pkt[4] = (uint8_t)(id >> 24);
    pkt[5] = (uint8_t)(id >> 16);
    pkt[6] = (uint8_t)(id >> 8);
    pkt[7] = (uint8_t)id;
    peer_write(fx, pkt, sizeof pkt);
    spin(30);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.status[0], DDM_REPLY_BAD);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
    calls_clear(&c);
}

/* ------------------------------------------------------------------ EOF */

static void eof_in(Fx *fx)
{
    rec.log_warnings = rec.log_messages = 0;
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_int_equal(rec.log_warnings, 0); /* a VM that exits is no fault */
    assert_int_equal(rec.log_messages, 1);
    assert_int_equal(rec.closed, 1);
    assert_int_equal(rec.last_new, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "closed by the"));
    fx_free(fx);
}

static void test_vm_eof_handshake(void **state)
{
    (void)state;
    eof_in(start());
}

static void test_vm_eof_helo(void **state)
{
    Fx *fx = start();
    (void)state;
    to_helo(fx, NULL, NULL);
    eof_in(fx);
}

static void test_vm_eof_ready(void **state)
{
    (void)state;
    eof_in(start_ready());
}

static void test_vm_eof_plain(void **state)
{
    (void)state;
    eof_in(start_plain());
}

/* In a one-shot look (the monitor reports held VMs: the in-process
 * snapshot) a session's close is a debug line, not a message: no
 * "session closed" line among the snapshot's output, a warning still. */
static void test_vm_eof_quiet_when_reporting_held(void **state)
{
    (void)state;
    Fx *fx = start_ready();
    fx_reports_held = TRUE;
    rec.log_warnings = rec.log_messages = 0;
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_int_equal(rec.log_messages, 0);
    assert_int_equal(rec.log_warnings, 0);
    assert_non_null(strstr(fx->vm->close_reason, "closed by the"));
    fx_free(fx);
}

/* ------------------------------------------- every state x packet kind */

typedef enum { PK_DDM_EVENT, PK_JDWP_COMMAND, PK_UNKNOWN_REPLY, PK_GARBAGE, PK_EOF, PK_N } PacketKind;

typedef struct StateCase {
    DdmVmState state;
    /* per packet kind: the state after, and what the monitor saw */
    struct {
        DdmVmState after;
        guint chunks, jdwp, foreign;
    } expect[PK_N];
} StateCase;

#define CLOSED_ {DDM_VM_STATE_CLOSED, 0, 0, 0}
static const StateCase state_cases[] = {
    /* Before the echo every complete packet is discarded. */
    {DDM_VM_STATE_HANDSHAKE,
     {{DDM_VM_STATE_HANDSHAKE, 0, 0, 0}, {DDM_VM_STATE_HANDSHAKE, 0, 0, 0},
      {DDM_VM_STATE_HANDSHAKE, 0, 0, 0}, CLOSED_, CLOSED_}},
    /* Waiting for HELO: events (an early APNM) already count. */
    {DDM_VM_STATE_HELO,
     {{DDM_VM_STATE_HELO, 1, 0, 0}, {DDM_VM_STATE_HELO, 0, 1, 0}, {DDM_VM_STATE_HELO, 0, 0, 1},
      CLOSED_, CLOSED_}},
    {DDM_VM_STATE_READY,
     {{DDM_VM_STATE_READY, 1, 0, 0}, {DDM_VM_STATE_READY, 0, 1, 0},
      {DDM_VM_STATE_READY, 0, 0, 1}, CLOSED_, CLOSED_}},
    /* A plain JVM: no DDM, but JDWP traffic still goes to the relay. */
    {DDM_VM_STATE_PLAIN,
     {{DDM_VM_STATE_PLAIN, 0, 0, 0}, {DDM_VM_STATE_PLAIN, 0, 1, 0},
      {DDM_VM_STATE_PLAIN, 0, 0, 1}, CLOSED_, CLOSED_}},
};
#undef CLOSED_

static Fx *start_in(DdmVmState st)
{
    Fx *fx;
    switch (st) {
    case DDM_VM_STATE_HANDSHAKE:
        return start();
    case DDM_VM_STATE_HELO:
        fx = start();
        to_helo(fx, NULL, NULL);
        return fx;
    case DDM_VM_STATE_READY:
        return start_ready();
    case DDM_VM_STATE_PLAIN:
        return start_plain();
    default:
        fail();
    }
    return NULL;
}

static void send_kind(Fx *fx, PacketKind k)
{
    static const uint8_t garbage[11] = {0, 0, 0, 3, 0, 0, 0, 1, 0, 0xC7, 1};
    size_t len;
    uint8_t *p;

    switch (k) {
    case PK_DDM_EVENT:
        peer_send_event(fx, 0x80000001u, T_APNM, "\0\0\0\0", 4);
        break;
    case PK_JDWP_COMMAND:
        p = ddm_jdwp_build_command(0x10000001u, 64, 100, NULL, 0, &len); /* Event.Composite */
        peer_write(fx, p, len);
        g_free(p);
        break;
    case PK_UNKNOWN_REPLY:
        peer_send_error(fx, 0x00000007u, 0);
        break;
    case PK_GARBAGE:
        peer_write(fx, garbage, sizeof garbage);
        break;
    case PK_EOF:
        close(fx->peer);
        fx->peer = -1;
        break;
    default:
        fail();
    }
}

static void test_vm_every_state_x_packet_kind(void **state)
{
    (void)state;
    for (guint c = 0; c < G_N_ELEMENTS(state_cases); c++) {
        for (int k = 0; k < PK_N; k++) {
            Fx *fx = start_in(state_cases[c].state);
            guint chunks0 = rec.chunks->len, jdwp0 = rec.jdwp_from_vm, foreign0 = rec.foreign;

            send_kind(fx, (PacketKind)k);
            if (state_cases[c].expect[k].after == DDM_VM_STATE_CLOSED)
                spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
            else
                spin(30);
            if (fx->vm->state != state_cases[c].expect[k].after ||
                rec.chunks->len - chunks0 != state_cases[c].expect[k].chunks ||
                rec.jdwp_from_vm - jdwp0 != state_cases[c].expect[k].jdwp ||
                rec.foreign - foreign0 != state_cases[c].expect[k].foreign)
                fail_msg("state %s, packet kind %d: now %s, chunks %u, jdwp %u, foreign %u",
                         ddm_vm_state_name(state_cases[c].state), k,
                         ddm_vm_state_name(fx->vm->state), rec.chunks->len - chunks0,
                         rec.jdwp_from_vm - jdwp0, rec.foreign - foreign0);
            fx_free(fx);
        }
    }
}

/* ------------------------------------------------------------- requests */

static void test_vm_request_reply(void **state)
{
    Fx *fx = start_ready();
    Calls c = {0};
    uint32_t id = 0, got_id;
    GBytes *payload;
    guint taps;
    (void)state;

    taps = rec.taps;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, "abc", 3, 0, on_reply, &c, &id), 0);
    assert_int_equal(c.n, 0); /* never from inside the call */
    assert_int_equal(rec.taps, taps + 1);
    assert_true(id >= 0x40000000u);
    assert_int_equal(peer_read_request(fx, &got_id, &payload), T_TEST);
    assert_int_equal(got_id, id);
    assert_int_equal(g_bytes_get_size(payload), 3);
    assert_memory_equal(g_bytes_get_data(payload, NULL), "abc", 3);
    g_bytes_unref(payload);
    peer_send_reply_chunk(fx, id, T_TEST, "xyz!", 4);
    spin(30);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(c.type, T_TEST);
    assert_int_equal(g_bytes_get_size(c.data), 4);
    assert_memory_equal(g_bytes_get_data(c.data, NULL), "xyz!", 4);
    /* A duplicate reply is unknown now: no second call. */
    peer_send_reply_chunk(fx, id, T_TEST, "xyz!", 4);
    spin(20);
    assert_int_equal(c.n, 1);
    assert_int_equal(rec.foreign, 1);
    fx_free(fx);
    assert_int_equal(c.n, 1);
    calls_clear(&c);
}

/* A reply with several chunks (the draft allows it): the first answers the
 * request, the others go to their owners as reply chunks; a chunk that runs
 * past the packet ends the walk without harm. */
static void test_vm_reply_several_chunks(void **state)
{
    Fx *fx = start_ready();
    Calls c = {0};
    uint32_t id = 0, got_id;
    GBytes *payload;
    GByteArray *b = g_byte_array_new();
    size_t len;
    uint8_t *pkt;
    (void)state;

    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, &id), 0);
    assert_int_equal(peer_read_request(fx, &got_id, &payload), T_TEST);
    g_bytes_unref(payload);
    put_u4(b, T_TEST);
    put_u4(b, 2);
    g_byte_array_append(b, (const guint8 *)"ab", 2);
    put_u4(b, DDM_CHUNK('S', 'E', 'C', 'O'));
    put_u4(b, 3);
    g_byte_array_append(b, (const guint8 *)"cde", 3);
    put_u4(b, DDM_CHUNK('O', 'V', 'E', 'R'));
    put_u4(b, 99); /* runs past the packet */
    g_byte_array_append(b, (const guint8 *)"f", 1);
    pkt = ddm_jdwp_build_reply(id, 0, b->data, b->len, &len);
    peer_write(fx, pkt, len);
    spin(30);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.type, T_TEST);
    assert_int_equal(g_bytes_get_size(c.data), 2);
    assert_int_equal(rec.chunks->len, 1);
    {
        RecChunk *rc = g_ptr_array_index(rec.chunks, 0);
        assert_int_equal(rc->ci.type, DDM_CHUNK('S', 'E', 'C', 'O'));
        assert_int_equal(rc->ci.origin, DDM_ORIGIN_REPLY);
        assert_int_equal(rc->ci.request_type, T_TEST);
        assert_int_equal(g_bytes_get_size(rc->data), 3);
        assert_memory_equal(g_bytes_get_data(rc->data, NULL), "cde", 3);
    }
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    g_free(pkt);
    g_byte_array_unref(b);
    fx_free(fx);
    calls_clear(&c);
}

static void test_vm_request_reply_kinds(void **state)
{
    Fx *fx = start_ready();
    Calls err = {0}, empty = {0}, fail = {0}, zlib = {0};
    uint32_t id_err, id_empty, id_fail, id_zlib;
    GByteArray *f = g_byte_array_new();
    uint8_t *z;
    size_t zlen;
    (void)state;

    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &err, &id_err), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &empty, &id_empty), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &fail, &id_fail), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &zlib, &id_zlib), 0);
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 4);

    /* Answered out of order. */
    put_u4(f, 1);
    put_u4(f, 5);
    put_str16(f, "no go");
    peer_send_reply_chunk(fx, id_fail, DDM_CHUNK_FAIL, f->data, f->len);
    g_byte_array_unref(f);
    z = ddm_zlib_deflate(T_TEST, "inflated!", 9, &zlen);
    peer_send_reply_chunk(fx, id_zlib, DDM_CHUNK_ZLIB, z, zlen);
    g_free(z);
    peer_send_error(fx, id_err, 41);
    peer_send_reply_chunk(fx, id_empty, 0, NULL, 0);
    spin(40);

    assert_int_equal(err.n, 1);
    assert_int_equal(err.status[0], DDM_REPLY_ERROR);
    assert_int_equal(err.jdwp_error, 41);
    assert_int_equal(empty.n, 1);
    assert_int_equal(empty.status[0], DDM_REPLY_EMPTY);
    assert_int_equal(fail.n, 1);
    assert_int_equal(fail.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(fail.type, DDM_CHUNK_FAIL);
    assert_int_equal(fail.fail_code, 1);
    assert_string_equal(fail.fail_msg, "no go");
    assert_int_equal(zlib.n, 1);
    assert_int_equal(zlib.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(zlib.type, T_TEST);
    assert_memory_equal(g_bytes_get_data(zlib.data, NULL), "inflated!", 9);
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 0);
    fx_free(fx);
    calls_clear(&err);
    calls_clear(&empty);
    calls_clear(&fail);
    calls_clear(&zlib);
}

static void test_vm_request_timeout_then_late(void **state)
{
    Fx *fx = start_ready();
    Calls fast = {0}, slow = {0};
    uint32_t id_fast, id_slow;
    (void)state;

    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 500, on_reply, &slow, &id_slow), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 30, on_reply, &fast, &id_fast), 0);
    spin(80);
    assert_int_equal(fast.n, 1);
    assert_int_equal(fast.status[0], DDM_REPLY_TIMEOUT);
    assert_int_equal(slow.n, 0);
    /* The late reply is dropped (not delivered twice). */
    peer_send_reply_chunk(fx, id_fast, T_TEST, "late", 4);
    spin(20);
    assert_int_equal(fast.n, 1);
    assert_true(ddm_correlate_was_expired(fx->vm->pending, id_fast));
    spin(500);
    assert_int_equal(slow.n, 1);
    assert_int_equal(slow.status[0], DDM_REPLY_TIMEOUT);
    fx_free(fx);
    assert_int_equal(fast.n, 1);
    assert_int_equal(slow.n, 1);
    calls_clear(&fast);
    calls_clear(&slow);
}

/* The main loop stalls past a deadline while the reply already waits in
 * the socket: the reply wins, no timeout. */
static void test_vm_reply_waiting_at_deadline(void **state)
{
    Fx *fx = start_ready();
    Calls c[12] = {{0}};
    uint32_t ids[12];
    (void)state;

    for (int i = 0; i < 12; i++)
        assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 20, on_reply, &c[i], &ids[i]), 0);
    for (int i = 0; i < 12; i++)
        peer_send_reply_chunk(fx, ids[i], T_TEST, "ok", 2);
    g_usleep(60 * 1000); /* a busy main loop: every deadline passes */
    spin(30);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(c[i].n, 1);
        assert_int_equal(c[i].status[0], DDM_REPLY_CHUNK);
        calls_clear(&c[i]);
    }
    fx_free(fx);
}

static void test_vm_close_while_pending(void **state)
{
    Fx *fx = start_ready();
    Calls c[3] = {{0}};
    (void)state;

    for (int i = 0; i < 3; i++)
        assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c[i], NULL), 0);
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].n, 1);
        assert_int_equal(c[i].status[0], DDM_REPLY_VM_GONE);
    }
    /* Requests on a closed VM are refused. */
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c[0], NULL),
                     -ENOTCONN);
    fx_free(fx);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].n, 1);
        calls_clear(&c[i]);
    }
}

static void test_vm_callback_closes_vm(void **state)
{
    Fx *fx = start_ready();
    Calls first = {0}, second = {0};
    uint32_t id1;
    (void)state;

    first.close_in_callback = TRUE;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &first, &id1), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &second, NULL), 0);
    /* Two replies in one write: the second must not reach a closed session. */
    peer_send_reply_chunk(fx, id1, T_TEST, "1", 1);
    peer_send_event(fx, 0x80000009u, T_APNM, "\0\0\0\0", 4);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    spin(20);
    assert_int_equal(first.n, 1);
    assert_int_equal(first.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(second.n, 1);
    assert_int_equal(second.status[0], DDM_REPLY_VM_GONE);
    assert_int_equal(rec.chunks->len, 0);
    assert_int_equal(rec.closed, 1);
    fx_free(fx);
    calls_clear(&first);
    calls_clear(&second);
}

static void test_vm_pending_cap(void **state)
{
    Fx *fx = start_ready();
    Calls c[5] = {{0}};
    int n_ok = 0;
    (void)state;

    fx->config.max_pending = 16; /* the table was built with this cap */
    for (int i = 0; i < 16; i++)
        if (ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c[i % 5], NULL) == 0)
            n_ok++;
    assert_int_equal(n_ok, 16);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c[0], NULL),
                     -ENOSPC);
    spin(10);
    for (int i = 0; i < 5; i++)
        assert_int_equal(c[i].n, 0);
    fx_free(fx);
    {
        guint total = 0;
        for (int i = 0; i < 5; i++) {
            total += c[i].n;
            calls_clear(&c[i]);
        }
        assert_int_equal(total, 16); /* the 17th never gets a call */
    }
}

static void test_vm_request_errors(void **state)
{
    Fx *fx = start_ready();
    Calls c = {0};
    (void)state;

    fx->config.max_packet = 64;
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, "0123456789012345678901234567890123456789012345678901234567890123", 64, 0, on_reply, &c, NULL),
                     -EMSGSIZE);
    fx->config.max_packet = 1 << 20;
    spin(10);
    assert_int_equal(c.n, 0);
    fx_free(fx);
    assert_int_equal(c.n, 0);
    calls_clear(&c);
}

/* Without a callback the reply goes to the type's owner as a REPLY chunk. */
static void test_vm_request_without_callback(void **state)
{
    Fx *fx = start_ready();
    uint32_t id;
    RecChunk *rc;
    (void)state;

    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, NULL, NULL, &id), 0);
    peer_send_reply_chunk(fx, id, DDM_CHUNK('T', 'E', 'S', 'R'), "r", 1);
    spin(30);
    assert_int_equal(rec.chunks->len, 1);
    rc = g_ptr_array_index(rec.chunks, 0);
    assert_int_equal(rc->ci.type, DDM_CHUNK('T', 'E', 'S', 'R'));
    assert_int_equal(rc->ci.origin, DDM_ORIGIN_REPLY);
    assert_int_equal(rc->ci.request_type, T_TEST);
    assert_int_equal(rc->ci.packet_id, id);
    fx_free(fx);
}

static void test_vm_cancel_owner(void **state)
{
    Fx *fx = start_ready();
    Calls mine = {0}, other = {0};
    uint32_t id_other;
    (void)state;

    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &mine, NULL), 0);
    assert_int_equal(ddm_vm_request(fx->vm, NULL, T_TEST, NULL, 0, 0, NULL, NULL, &id_other), 0);
    ddm_vm_cancel_owner(fx->vm, OWNER);
    assert_int_equal(mine.n, 1);
    assert_int_equal(mine.status[0], DDM_REPLY_VM_GONE);
    assert_int_equal(ddm_correlate_count(fx->vm->pending), 1);
    assert_true(ddm_correlate_contains(fx->vm->pending, id_other));
    fx_free(fx);
    assert_int_equal(mine.n, 1);
    calls_clear(&mine);
    calls_clear(&other);
}

static void test_vm_set_name(void **state)
{
    Fx *fx = start_ready();
    guint before = rec.identity_changes;
    (void)state;

    ddm_vm_set_name(fx->vm, "new.name", NULL, -1);
    assert_string_equal(fx->vm->info.app_name, "new.name");
    assert_string_equal(fx->vm->info.package_name, "com.example.app"); /* unchanged */
    assert_int_equal(rec.identity_changes, before + 1);
    ddm_vm_set_name(fx->vm, "new.name", NULL, -1); /* no change, no notice */
    assert_int_equal(rec.identity_changes, before + 1);
    ddm_vm_set_name(fx->vm, NULL, "pkg", 11);
    assert_string_equal(fx->vm->info.package_name, "pkg");
    assert_int_equal(fx->vm->info.user_id, 11);
    assert_int_equal(rec.identity_changes, before + 2);
    fx_free(fx);
}

static void test_vm_send_packet(void **state)
{
    Fx *fx = start_plain();
    size_t len;
    uint8_t *p = ddm_jdwp_build_command(5, 1, 1, NULL, 0, &len);
    uint8_t got[DDM_JDWP_HEADER_LEN];
    (void)state;

    assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), 0);
    peer_read(fx, got, sizeof got);
    assert_memory_equal(got, p, len);
    fx->config.max_write_queue = 4;
    assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), -ENOBUFS);
    fx->config.max_write_queue = 1 << 20;
    ddm_vm_close(fx->vm, "done");
    assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), -ENOTCONN);
    g_free(p);
    fx_free(fx);
}

/* send(2) on one socket (counted_fd) counted: this definition is the one
 * the session's code linked into this binary calls (vm_io.c). */
static int counted_fd = -1;
static unsigned counted_sends;

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (fd == counted_fd)
        counted_sends++;
    return sendto(fd, buf, n, flags, NULL, 0);
}

/* The send path with nothing waiting (one send() from the caller's bytes,
 * every relayed command) until the socket takes a packet only in part
 * (packets larger than a socket buffer's half, so the kernel cuts them):
 * the peer then reads every packet whole and in order, each once (the rest
 * of the cut one queued, never sent twice, nothing lost), each packet cost
 * one send() (the cut one's rest is not sent again at once), and the
 * counters count each packet and byte once. */
static void test_vm_send_packet_cut_by_full_socket(void **state)
{
    Fx *fx = start_plain();
    enum { BODY = 300001 }; /* odd: the socket's cut falls inside a packet */
    uint8_t *body = g_malloc(BODY), *got = g_malloc(DDM_JDWP_HEADER_LEN + BODY);
    size_t len = 0, n = 0;
    (void)state;
    guint64 pkts0 = fx->vm->packets_out, bytes0 = fx->vm->bytes_out;
    for (size_t k = 0; k < BODY; k++)
        body[k] = (uint8_t)(k * 13);
    counted_fd = fx->vm->fd;
    while (ddm_vm_out_queued(fx->vm) == 0 && n < 200) {
        uint8_t *p = ddm_jdwp_build_command(0x10000000u + (uint32_t)n, 1, 1, body, BODY, &len);
        unsigned sends0 = counted_sends;
        assert_int_equal(ddm_vm_send_packet(fx->vm, p, len), 0);
        /* one send() a packet, the cut one too: no second call that the
         * full socket would refuse (the out-watch sends the rest) */
        assert_int_equal(counted_sends - sends0, 1);
        g_free(p);
        n++;
    }
    counted_fd = -1;
    assert_true(ddm_vm_out_queued(fx->vm) > 0); /* the last one was cut */
    assert_true(ddm_vm_out_queued(fx->vm) < len); /* in part: the socket took some of it */
    assert_int_equal(fx->vm->packets_out - pkts0, n);
    assert_int_equal(fx->vm->bytes_out - bytes0 + ddm_vm_out_queued(fx->vm), n * len);
    for (size_t i = 0; i < n; i++) {
        DdmJdwpHeader h;
        peer_read(fx, got, DDM_JDWP_HEADER_LEN + BODY);
        assert_true(ddm_jdwp_parse_header(got, DDM_JDWP_HEADER_LEN + BODY, &h));
        assert_int_equal(h.length, len);
        assert_int_equal(h.id, 0x10000000u + (uint32_t)i);
        assert_memory_equal(got + DDM_JDWP_HEADER_LEN, body, BODY);
    }
    spin(20);
    assert_int_equal(ddm_vm_out_queued(fx->vm), 0);
    assert_int_equal(fx->vm->bytes_out - bytes0, n * len);
    g_free(body);
    g_free(got);
    fx_free(fx);
}

/* ------------------------------------------------------ streamed events */

#define T_HPDS DDM_CHUNK('H', 'P', 'D', 'S')

/* Write @n bytes while the main loop runs (ddmon reads as we write, so a
 * packet larger than the socket buffer gets through). FALSE once the
 * session closed its end. */
static gboolean peer_write_pumped(Fx *fx, const void *p, size_t n)
{
    const uint8_t *b = p;
    gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    while (n > 0) {
        ssize_t w = send(fx->peer, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return FALSE;
        }
        g_main_context_iteration(NULL, FALSE);
        assert_true(g_get_monotonic_time() < end);
    }
    return TRUE;
}

/* The 19 bytes before a DDM event's payload: JDWP header (length 19 +
 * @carried) and the chunk header declaring @declared bytes. */
static void event_head(uint8_t out[19], uint32_t id, uint32_t type, uint32_t declared,
                       uint32_t carried)
{
    uint32_t len = 19 + carried;
    uint8_t h[19] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len,
                     (uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id,
                     0, 0xC7, 0x01,
                     (uint8_t)(type >> 24), (uint8_t)(type >> 16), (uint8_t)(type >> 8), (uint8_t)type,
                     (uint8_t)(declared >> 24), (uint8_t)(declared >> 16), (uint8_t)(declared >> 8),
                     (uint8_t)declared};
    memcpy(out, h, sizeof h);
}

/* Write the pattern's bytes [@from, @to) in pieces of @piece, pausing
 * @pause_ms between pieces (main loop running). */
static gboolean peer_write_pattern(Fx *fx, guint64 from, guint64 to, size_t piece, guint pause_ms)
{
    uint8_t *buf = g_malloc(piece);
    gboolean ok = TRUE;
    while (from < to && ok) {
        size_t k = (size_t)MIN((guint64)piece, to - from);
        for (size_t i = 0; i < k; i++)
            buf[i] = pattern_byte(from + i);
        ok = peer_write_pumped(fx, buf, k);
        from += k;
        if (pause_ms)
            spin(pause_ms);
    }
    g_free(buf);
    return ok;
}

/* Run the loop until @cond or 3 s. */
#define SPIN_UNTIL(cond)                                                        \
    do {                                                                        \
        gint64 spin_end_ = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;         \
        while (!(cond) && g_get_monotonic_time() < spin_end_)                   \
            spin(2);                                                            \
        assert_true(cond);                                                      \
    } while (0)

/* A 5 MiB event with a stream owner: in pieces, byte-exact, end 0; the
 * reader's buffer never grows for it; the next packet parses; max_packet
 * (1 MiB here) does not apply to a stream. */
static void test_vm_stream_large_event(void **state)
{
    Fx *fx = start_ready();
    const guint32 size = 5u << 20;
    uint8_t head[19];
    gsize initial = ddm_jdwp_reader_buffer_size(fx->vm->reader);
    GByteArray *apnm = g_byte_array_new();
    (void)state;
    S.take = 1;
    event_head(head, 0x80000010u, T_HPDS, size, size);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, size, 100000, 0));
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.begins, 1);
    assert_int_equal(S.type, T_HPDS);
    assert_int_equal(S.packet_id, 0x80000010u);
    assert_int_equal(S.declared, size);
    assert_int_equal(S.bytes, size);
    assert_int_equal(S.mismatches, 0);
    assert_true(S.datas > 1);
    assert_int_equal(S.status, 0);
    assert_int_equal(S.received, size);
    assert_true(S.max_reader_buffer <= 256 * 1024);
    assert_null(fx->vm->stream);
    assert_int_equal(fx->vm->bytes_streamed, size);
    assert_int_equal(rec.chunks->len, 0); /* not also dispatched whole */
    /* The next packet parses. */
    put_lstr(apnm, "next");
    peer_send_event(fx, 0x80000011u, T_APNM, apnm->data, apnm->len);
    SPIN_UNTIL(rec.chunks->len == 1);
    assert_int_equal(((RecChunk *)g_ptr_array_index(rec.chunks, 0))->ci.packet_id, 0x80000011u);
    /* the stream's larger reads (vm_io.c) left no larger buffer behind: with
     * no budget here, the next read took it back to its first size */
    assert_int_equal(ddm_jdwp_reader_buffer_size(fx->vm->reader), initial);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    assert_int_equal(S.ends, 1);
    g_byte_array_unref(apnm);
    fx_free(fx);
}

/* Put the head of a streamed HPDS event declaring @declared bytes and the
 * pattern's bytes [0, @n) in the socket at once (a send buffer large
 * enough for them), so that the session's reads can fill whatever they ask. */
static void peer_put_stream_burst(Fx *fx, uint32_t id, guint32 declared, size_t n)
{
    int sndbuf = 2 << 20; /* (doubled by the kernel) */
    uint8_t head[19];
    uint8_t *buf = g_malloc(n);
    assert_int_equal(setsockopt(fx->peer, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    event_head(head, id, T_HPDS, declared, declared);
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern_byte(i);
    assert_int_equal(send(fx->peer, head, sizeof head, MSG_DONTWAIT | MSG_NOSIGNAL), sizeof head);
    for (size_t off = 0; off < n;) { /* (pieces: one skb per send) */
        size_t k = MIN(n - off, (size_t)65536);
        assert_int_equal(send(fx->peer, buf + off, k, MSG_DONTWAIT | MSG_NOSIGNAL), (ssize_t)k);
        off += k;
    }
    g_free(buf);
}

/* With a shared budget that has room, a long stream's reads grow to 256 KiB
 * (vm_io.c: read_want), and the 256 KiB buffer is the budget's spare once
 * the packet is over; nothing stays charged to the budget. */
static void test_vm_stream_budget_large_reads(void **state)
{
    fx_budget_limit = 4u << 20;
    Fx *fx = start_ready();
    const guint32 size = 1536u << 10;
    DdmJdwpBudget *b = fx->mon.read_budget;
    (void)state;
    S.take = 1;
    peer_put_stream_burst(fx, 0x80000012u, size, size);
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.bytes, size);
    assert_int_equal(S.mismatches, 0);
    assert_int_equal(S.max_piece, 256u << 10);
    assert_int_equal(S.max_reader_buffer, 256u << 10);
    spin(10);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 256u << 10);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_int_equal(ddm_jdwp_reader_buffer_size(fx->vm->reader), 0);
    fx_free(fx);
}

/* One wakeup takes at most READ_BYTES_PER_WAKEUP (1 MiB, vm_io.c) even
 * with 256 KiB reads: its last read is cut to what is left of that share
 * (review rB 5: it was checked before a read, so a wakeup took 1,088 KiB). */
static void test_vm_stream_wakeup_share(void **state)
{
    fx_budget_limit = 4u << 20;
    Fx *fx = start_ready();
    const guint32 size = 3u << 20;
    (void)state;
    S.take = 1;
    peer_put_stream_burst(fx, 0x80000015u, size, size);
    guint64 before = fx->vm->bytes_in;
    ddm_vm_io_read_input(fx->vm); /* one wakeup, the socket full */
    assert_int_equal(fx->vm->bytes_in - before, 1u << 20);
    assert_int_equal(S.max_piece, 256u << 10); /* (its reads were large) */
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.bytes, size);
    assert_int_equal(S.mismatches, 0);
    fx_free(fx);
}

/* With less than 256 KiB left in the budget, the reads stay at 64 KiB and
 * the stream still completes. */
static void test_vm_stream_budget_tight_small_reads(void **state)
{
    fx_budget_limit = 200u << 10;
    Fx *fx = start_ready();
    const guint32 size = 1u << 20;
    (void)state;
    S.take = 1;
    peer_put_stream_burst(fx, 0x80000013u, size, size);
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.bytes, size);
    assert_int_equal(S.mismatches, 0);
    assert_true(S.max_piece <= 64u << 10);
    assert_true(S.max_reader_buffer <= 64u << 10);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    assert_true(ddm_jdwp_budget_used(fx->mon.read_budget) <= 200u << 10);
    fx_free(fx);
}

/* A VM that trickles a long streamed packet (review rB 1): once its socket
 * is empty, the reader holds no large buffer (the 256 KiB one of its burst
 * went to the spare), so nothing is charged to the shared budget between
 * its bytes, and another VM's large packet still fits. */
static void test_vm_stream_trickle_holds_nothing(void **state)
{
    fx_budget_limit = 512u << 10;
    Fx *fx = start_ready();
    DdmJdwpBudget *b = fx->mon.read_budget;
    const size_t burst = 1u << 20;
    (void)state;
    S.take = 1;
    peer_put_stream_burst(fx, 0x80000014u, 1u << 30, burst);
    SPIN_UNTIL(S.bytes == burst);
    spin(10);
    assert_int_equal(S.max_reader_buffer, 256u << 10); /* the burst's reads were large */
    assert_int_equal(ddm_jdwp_reader_buffer_size(fx->vm->reader), 0);
    assert_int_equal(ddm_jdwp_budget_used(b), 0);
    assert_int_equal(ddm_jdwp_budget_spare_size(b), 256u << 10);
    for (int i = 0; i < 3; i++) { /* the trickle: a byte at a time */
        uint8_t one = pattern_byte(burst + (guint64)i);
        assert_int_equal(send(fx->peer, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL), 1);
        SPIN_UNTIL(S.bytes == burst + (guint64)i + 1);
        assert_int_equal(ddm_jdwp_budget_used(b), 0);
        assert_int_equal(ddm_jdwp_reader_buffer_size(fx->vm->reader), 0);
    }
    assert_int_equal(S.mismatches, 0);
    {
        /* another peer's 400 KB packet fits in what is left (512 KiB) */
        DdmJdwpReader *other = ddm_jdwp_reader_new(1u << 20);
        size_t avail = 0;
        ddm_jdwp_reader_set_budget(other, b);
        uint8_t *p = ddm_jdwp_reader_space(other, 64u << 10, &avail);
        assert_non_null(p);
        uint8_t hdr[11] = {0, 6, 0x1a, 0x80, 0, 0, 0, 1, 0, 0xC7, 0x01}; /* 400,000 bytes */
        memcpy(p, hdr, sizeof hdr);
        ddm_jdwp_reader_commit(other, sizeof hdr);
        assert_int_equal(ddm_jdwp_reader_next(other, NULL), DDM_JDWP_NEED_MORE);
        p = ddm_jdwp_reader_space(other, 400000 - sizeof hdr, &avail);
        assert_non_null(p);
        assert_true(avail >= 400000 - sizeof hdr);
        ddm_jdwp_reader_set_budget(other, NULL);
        ddm_jdwp_reader_free(other);
    }
    fx_free(fx);
}

/* The chunk declares more than the packet carries: -EPROTO with what
 * arrived; the connection stays in step (the packet's own length rules). */
static void test_vm_stream_declares_more_than_carried(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    S.take = 1;
    event_head(head, 0x80000020u, T_HPDS, 300000, 200000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 200000, 65536, 0));
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.status, -EPROTO);
    assert_int_equal(S.received, 200000);
    assert_int_equal(S.bytes, 200000);
    assert_int_equal(S.mismatches, 0);
    peer_send_event(fx, 0x80000021u, T_APNM, "\0\0\0\0", 4);
    SPIN_UNTIL(rec.chunks->len == 1);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    assert_int_equal(S.ends, 1);
    fx_free(fx);
}

/* The packet carries more than the chunk declares: the owner gets exactly
 * the declared bytes, the rest is skipped, the next packet parses. */
static void test_vm_stream_carries_more_than_declared(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    S.take = 1;
    event_head(head, 0x80000030u, T_HPDS, 200000, 250000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 250000, 65536, 0));
    peer_send_event(fx, 0x80000031u, T_APNM, "\0\0\0\0", 4);
    SPIN_UNTIL(rec.chunks->len == 1);
    assert_int_equal(S.ends, 1);
    assert_int_equal(S.status, 0);
    assert_int_equal(S.received, 200000);
    assert_int_equal(S.bytes, 200000);
    assert_int_equal(S.mismatches, 0);
    assert_int_equal(((RecChunk *)g_ptr_array_index(rec.chunks, 0))->ci.packet_id, 0x80000031u);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
}

/* The VM goes away mid-stream: -EPIPE once, with what arrived, before the
 * session reports its close. */
static void test_vm_stream_peer_closes(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    S.take = 1;
    event_head(head, 0x80000040u, T_HPDS, 1000000, 1000000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 300000, 65536, 0));
    SPIN_UNTIL(S.bytes == 300000);
    assert_int_equal(S.ends, 0);
    close(fx->peer);
    fx->peer = -1;
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_int_equal(rec.closed, 1);
    assert_int_equal(S.ends, 1);
    assert_int_equal(S.status, -EPIPE);
    assert_int_equal(S.received, 300000);
    assert_int_equal(S.closed_at_end, 0); /* the owner heard first */
    assert_null(fx->vm->stream);
    fx_free(fx); /* closing again reports nothing more */
    assert_int_equal(S.ends, 1);
}

/* Declared past max_stream: -EFBIG at once (no data), its bytes skipped,
 * and the VM stays connected and answers the next request. */
static void test_vm_stream_past_max_stream(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    Calls c = {0};
    uint32_t id;
    (void)state;
    fx->config.max_stream = 100000;
    S.take = 1;
    event_head(head, 0x80000050u, T_HPDS, 300000, 300000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 1000, 1000, 0));
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.begins, 1);
    assert_int_equal(S.declared, 300000);
    assert_int_equal(S.status, -EFBIG);
    assert_int_equal(S.received, 0);
    assert_true(peer_write_pattern(fx, 1000, 300000, 65536, 0));
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, &id), 0);
    assert_int_equal(peer_read_request(fx, NULL, NULL), T_TEST);
    peer_send_reply_chunk(fx, id, T_TEST, "ok", 2);
    SPIN_UNTIL(c.n == 1);
    assert_int_equal(c.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(S.datas, 0);
    assert_int_equal(S.ends, 1);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    calls_clear(&c);
    fx_free(fx);
}

/* The owner refuses at begin: its bytes are skipped, no end, the next
 * packet parses. */
static void test_vm_stream_refused(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    S.take = -ENOSPC;
    event_head(head, 0x80000060u, T_HPDS, 300000, 300000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 300000, 65536, 0));
    peer_send_event(fx, 0x80000061u, T_APNM, "\0\0\0\0", 4);
    SPIN_UNTIL(rec.chunks->len == 1);
    assert_int_equal(S.begins, 1);
    assert_int_equal(S.datas, 0);
    assert_int_equal(S.ends, 0);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
}

/* A request pending while a stream runs longer than the request's timeout
 * does not time out (its reply queues behind the packet); the reply that
 * follows the stream is delivered. The request is made once the stream has
 * begun, so its 150 ms deadline falls inside the stream however slow the
 * machine (the stream's pieces come 40 ms apart, ~1.3 s in all); the
 * stall limit (the config's request timeout) is far above any pause a
 * loaded machine puts between two pieces. No assertion depends on the
 * machine being fast. */
static void test_vm_stream_request_waits(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    Calls c = {0};
    uint32_t id;
    const guint32 size = 1u << 20;
    gint64 asked;
    (void)state;
    fx->config.request_timeout_ms = 60000; /* the stall limit: never reached here */
    S.take = 1;
    event_head(head, 0x80000070u, T_HPDS, size, size);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 32768, 32768, 0));
    SPIN_UNTIL(fx->vm->stream != NULL);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 150, on_reply, &c, &id), 0);
    asked = g_get_monotonic_time();
    assert_int_equal(peer_read_request(fx, NULL, NULL), T_TEST);
    assert_true(peer_write_pattern(fx, 32768, size, 32768, 40));
    SPIN_UNTIL(S.ends == 1);
    /* (31 pauses of 40 ms at least: the deadline passed during the stream) */
    assert_true(g_get_monotonic_time() - asked > 150 * 1000);
    assert_int_equal(S.status, 0);
    assert_int_equal(S.mismatches, 0);
    assert_int_equal(c.n, 0);
    peer_send_reply_chunk(fx, id, T_TEST, "late", 4);
    SPIN_UNTIL(c.n == 1);
    assert_int_equal(c.status[0], DDM_REPLY_CHUNK);
    assert_int_equal(g_bytes_get_size(c.data), 4);
    spin(20);
    assert_int_equal(c.n, 1);
    calls_clear(&c);
    fx_free(fx);
}

/* ddmon itself stops reading (relay backpressure: ddm_vm_pause_input)
 * in the middle of a stream for longer than the request timeout: that is
 * no stall of the VM's, and the stream goes on when reading resumes. */
static void test_vm_stream_paused_is_no_stall(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    fx->config.request_timeout_ms = 200;
    S.take = 1;
    event_head(head, 0x80000090u, T_HPDS, 400000, 400000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 100000, 50000, 0));
    SPIN_UNTIL(S.bytes == 100000);
    ddm_vm_pause_input(fx->vm, TRUE);
    spin(1500);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    assert_int_equal(S.ends, 0);
    ddm_vm_pause_input(fx->vm, FALSE);
    assert_true(peer_write_pattern(fx, 100000, 400000, 65536, 0));
    SPIN_UNTIL(S.ends == 1);
    assert_int_equal(S.status, 0);
    assert_int_equal(S.received, 400000);
    assert_int_equal(S.mismatches, 0);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);
    fx_free(fx);
}

/* A VM that stops sending mid-packet for the request timeout: the owner
 * hears -ETIMEDOUT with what came, then the VM is closed. */
static void test_vm_stream_stall_closes(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    (void)state;
    fx->config.request_timeout_ms = 200;
    S.take = 1;
    event_head(head, 0x800000a0u, T_HPDS, 400000, 400000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 100000, 50000, 0));
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_int_equal(S.ends, 1);
    assert_int_equal(S.status, -ETIMEDOUT);
    assert_int_equal(S.received, 100000);
    assert_int_equal(S.closed_at_end, 0);
    assert_int_equal(rec.closed, 1);
    fx_free(fx);
    assert_int_equal(S.ends, 1);
}

/* While a packet streams, the deadline timer reads what waits (after a
 * stall of the loop) and looks for a stall every second. A close scheduled
 * by that read (ddm_vm_close_later, from the owner's stream_data) happens
 * at the next iteration, not a second later: the stall re-arm must not
 * overwrite it. */
/* With reply heads offered, a long reply that has not arrived whole goes to
 * reply_head, then its body to reply_part as it arrives, then the end; one
 * not claimed (ddmon's own id) is read whole and answered as usual. */
static void test_vm_reply_cut_through(void **state)
{
    (void)state;
    Fx *fx = start_ready();
    memset(&R, 0, sizeof R);
    ddm_jdwp_reader_offer_reply_heads(fx->vm->reader, TRUE);
    enum { BODY = 200000 };
    uint8_t *pkt = g_malloc(DDM_JDWP_HEADER_LEN + BODY);
    DdmJdwpHeader h = {.length = DDM_JDWP_HEADER_LEN + BODY, .id = 0x01000005u,
                       .flags = DDM_JDWP_FLAG_REPLY};
    ddm_jdwp_write_header(pkt, &h);
    for (size_t i = 0; i < BODY; i++)
        pkt[DDM_JDWP_HEADER_LEN + i] = (uint8_t)i;
    peer_write(fx, pkt, 5000);
    spin(20);
    assert_int_equal(R.heads, 1);
    assert_int_equal(R.head_len, DDM_JDWP_HEADER_LEN + BODY);
    assert_int_equal(R.lasts, 0);
    for (size_t at = 5000; at < DDM_JDWP_HEADER_LEN + BODY; at += 50000) {
        size_t n = MIN((size_t)50000, DDM_JDWP_HEADER_LEN + BODY - at);
        peer_write(fx, pkt + at, n);
        spin(10);
    }
    spin(20);
    assert_int_equal(R.bytes, BODY);
    assert_int_equal(R.lasts, 1);
    assert_true(R.parts >= 2);
    assert_false(fx->vm->reply_streaming);

    /* ddmon's own request: its long reply is not claimed, its callback gets it whole */
    Calls c = {0};
    uint32_t id;
    GBytes *big = g_bytes_new_take(g_malloc0(100000), 100000);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, NULL), 0);
    assert_int_equal(peer_read_request(fx, &id, NULL), T_TEST);
    size_t len;
    uint8_t *rp = ddm_chunk_build_reply(id, T_TEST, g_bytes_get_data(big, NULL), 100000, &len);
    peer_write(fx, rp, 3000);
    spin(10);
    peer_write(fx, rp + 3000, len - 3000);
    for (int i = 0; i < 100 && c.n == 0; i++)
        spin(10);
    assert_int_equal(c.n, 1);
    assert_int_equal(R.heads, 1);
    assert_int_equal(g_bytes_get_size(c.data), 100000);
    g_free(rp);
    g_bytes_unref(big);
    g_free(pkt);
    calls_clear(&c);
    fx_free(fx);
}

/* A packet sent in parts (the relay's cut-through): every other packet for
 * the VM, ddmon's own requests included, waits until its last byte is
 * queued; a second one cannot start meanwhile; one cut short closes the VM. */
static void test_vm_send_parts_hold_others(void **state)
{
    (void)state;
    Fx *fx = start_ready();
    Calls c = {0};
    uint8_t hdr[DDM_JDWP_HEADER_LEN], small[DDM_JDWP_HEADER_LEN], got[32];
    DdmJdwpHeader h = {.length = DDM_JDWP_HEADER_LEN + 6, .id = 0x01000001u, .cmdset = 1, .cmd = 1};
    ddm_jdwp_write_header(hdr, &h);
    h.length = DDM_JDWP_HEADER_LEN;
    h.id = 0x01000002u;
    ddm_jdwp_write_header(small, &h);

    assert_int_equal(ddm_vm_send_part_begin(fx->vm, hdr, sizeof hdr, sizeof hdr + 6), 0);
    assert_int_equal(ddm_vm_send_part_begin(fx->vm, hdr, sizeof hdr, sizeof hdr + 6), -EBUSY);
    assert_int_equal(ddm_vm_send_packet(fx->vm, small, sizeof small), 0);
    assert_int_equal(ddm_vm_request(fx->vm, OWNER, T_TEST, NULL, 0, 0, on_reply, &c, NULL), 0);
    peer_read(fx, got, sizeof hdr);
    assert_memory_equal(got, hdr, sizeof hdr);
    peer_expect_silence(fx); /* the rest waits for the packet's body */
    assert_int_equal(ddm_vm_send_part(fx->vm, (const uint8_t *)"abc", 3), 0);
    peer_read(fx, got, 3);
    assert_memory_equal(got, "abc", 3);
    peer_expect_silence(fx);
    assert_int_equal(ddm_vm_send_part(fx->vm, (const uint8_t *)"def", 3), 0);
    peer_read(fx, got, 3);
    assert_memory_equal(got, "def", 3);
    peer_read(fx, got, sizeof small); /* then what waited, in order */
    assert_memory_equal(got, small, sizeof small);
    assert_int_equal(peer_read_request(fx, NULL, NULL), T_TEST);

    /* cut short: the VM's connection carries half a packet and is closed */
    h.length = 100;
    ddm_jdwp_write_header(hdr, &h);
    assert_int_equal(ddm_vm_send_part_begin(fx->vm, hdr, sizeof hdr, 100), 0);
    assert_int_equal(ddm_vm_send_part(fx->vm, (const uint8_t *)"0123456789", 10), 0);
    ddm_vm_send_part_abort(fx->vm);
    assert_int_not_equal(fx->vm->state, DDM_VM_STATE_CLOSED); /* not from in there */
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "cut short"));
    calls_clear(&c);
    fx_free(fx);
}

static void test_vm_stream_close_later_in_deadline_read(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    uint8_t more[10000];
    gint64 due;
    (void)state;
    fx->config.request_timeout_ms = 10000;
    S.take = 1;
    event_head(head, 0x800000b0u, T_HPDS, 400000, 400000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 100000, 50000, 0));
    SPIN_UNTIL(S.bytes == 100000);
    assert_true(ddm_timer_armed(&fx->vm->deadline));
    /* The next bytes arrive while the loop is stalled, and the deadline
     * fires before the read watch runs: the timer's callback is called
     * here as its dispatch would (disarmed first), so that the deadline's
     * read, not the watch's, takes the bytes, whatever the sources' order. */
    for (size_t i = 0; i < sizeof more; i++)
        more[i] = pattern_byte(100000 + i);
    assert_int_equal(write(fx->peer, more, sizeof more), (ssize_t)sizeof more);
    S.close_later_on_data = TRUE;
    DdmTimer *deadline = &fx->vm->deadline;
    ddm_timer_cancel(deadline);
    deadline->fn(deadline, deadline->ud);
    assert_true(S.close_later_at_us > 0); /* the deadline's read took them */
    assert_non_null(fx->vm->rare); /* the deferred reason waits in the rare block */
    assert_non_null(strstr(fx->vm->rare->deferred_close_reason, "closed later from stream_data"));
    due = ddm_timer_due(deadline);
    assert_true(due <= g_get_monotonic_time()); /* the close, next iteration */
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_true(S.close_later_at_us > 0);
    assert_true(rec.closed_at_us - S.close_later_at_us < 500000);
    assert_non_null(strstr(fx->vm->close_reason, "closed later from stream_data"));
    fx_free(fx);
}

/* No stream owner: as before streams existed. Under max_packet the event
 * is buffered and dispatched whole; past it the VM is closed. */
static void test_vm_stream_no_owner(void **state)
{
    Fx *fx = start_ready();
    uint8_t head[19];
    RecChunk *rc;
    (void)state;
    S.take = 0;
    event_head(head, 0x80000080u, T_HPDS, 300000, 300000);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    assert_true(peer_write_pattern(fx, 0, 300000, 65536, 0));
    SPIN_UNTIL(rec.chunks->len == 1);
    assert_int_equal(S.begins, 1); /* asked, and nobody wanted it */
    assert_int_equal(S.datas, 0);
    assert_int_equal(S.ends, 0);
    rc = g_ptr_array_index(rec.chunks, 0);
    assert_int_equal(rc->ci.type, T_HPDS);
    assert_int_equal(g_bytes_get_size(rc->data), 300000);
    for (guint64 i = 0; i < 300000; i++)
        if (((const uint8_t *)g_bytes_get_data(rc->data, NULL))[i] != pattern_byte(i))
            fail_msg("byte %" G_GUINT64_FORMAT " differs", i);
    assert_int_equal(fx->vm->state, DDM_VM_STATE_READY);

    /* 2 MiB > max_packet (1 MiB), no owner: closed, as ever. */
    event_head(head, 0x80000081u, T_HPDS, 2u << 20, 2u << 20);
    assert_true(peer_write_pumped(fx, head, sizeof head));
    (void)peer_write_pattern(fx, 0, 2u << 20, 65536, 0);
    spin_until_state(fx->vm, DDM_VM_STATE_CLOSED);
    assert_non_null(strstr(fx->vm->close_reason, "bad JDWP packet"));
    assert_int_equal(S.ends, 0);
    assert_int_equal(rec.chunks->len, 1);
    fx_free(fx);
}

/* The server's last close of a VM (the monitor stopping: ABI 1.8's
 * stopping hooks wrote their last requests just before) delivers what was
 * written even when the VM sent bytes nobody read: close() with unread
 * input sends a reset instead of a FIN, and the peer's kernel then drops
 * what it had not read (its read fails with ECONNRESET). The gentle close
 * (shutdown, drain, close) is what makes the request arrive: this test
 * fails with a plain close() (checked). Over TCP: a socketpair has no
 * reset. */
static void test_vm_stopping_close_delivers_last_request(void **state)
{
    (void)state;
    fx_tcp = TRUE;
    Fx *fx = start_ready();
    /* what ddmon sent so far is read (the test reads only what follows) */
    for (;;) {
        uint8_t buf[4096];
        if (recv(fx->peer, buf, sizeof buf, MSG_DONTWAIT) <= 0)
            break;
    }
    /* the VM says something ddmon does not read (the loop is not run) */
    uint8_t junk[64];
    memset(junk, 'j', sizeof junk);
    peer_write(fx, junk, sizeof junk);
    int unread = 0;
    for (int i = 0; i < 200 && unread < (int)sizeof junk; i++) {
        assert_int_equal(ioctl(fx->vm->fd, FIONREAD, &unread), 0);
        if (unread < (int)sizeof junk)
            g_usleep(1000);
    }
    assert_int_equal(unread, (int)sizeof junk);
    /* the last request (a stopping hook's), then the server's close */
    gsize len;
    g_autofree uint8_t *pkt = ddm_jdwp_build_command(0x4000abcdu, 0xc7, 1, (const uint8_t *)"LAST", 4, &len);
    assert_int_equal(ddm_vm_send_packet(fx->vm, pkt, len), 0);
    fx_stopping = TRUE;
    ddm_vm_close(fx->vm, "ddmon is stopping");
    /* the peer reads the request whole, then the end of the stream */
    GByteArray *got = g_byte_array_new();
    int err = 0;
    for (;;) {
        struct pollfd pfd = {.fd = fx->peer, .events = POLLIN};
        assert_int_equal(poll(&pfd, 1, 3000), 1);
        uint8_t buf[256];
        ssize_t n = read(fx->peer, buf, sizeof buf);
        if (n < 0) {
            err = errno;
            break;
        }
        if (n == 0)
            break;
        g_byte_array_append(got, buf, (guint)n);
    }
    assert_int_equal(err, 0); /* not ECONNRESET */
    assert_int_equal(got->len, len);
    assert_memory_equal(got->data, pkt, len);
    g_byte_array_unref(got);
    fx_free(fx);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* the test's writes to a closed session must not kill it */
    g_log_set_writer_func(log_writer, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_stopping_close_delivers_last_request),
        cmocka_unit_test(test_vm_handshake_ok),
        cmocka_unit_test(test_vm_handshake_wrong),
        cmocka_unit_test(test_vm_handshake_split),
        cmocka_unit_test(test_vm_packet_before_echo_discarded),
        cmocka_unit_test(test_vm_handshake_timeout),
        cmocka_unit_test(test_vm_connect_fails),
        cmocka_unit_test(test_vm_close_while_connecting),
        cmocka_unit_test(test_vm_helo_full_tails),
        cmocka_unit_test(test_vm_helo_minimal),
        cmocka_unit_test(test_vm_helo_error_is_plain),
        cmocka_unit_test(test_vm_helo_fail_chunk),
        cmocka_unit_test(test_vm_helo_empty_reply),
        cmocka_unit_test(test_vm_helo_malformed_closes),
        cmocka_unit_test(test_vm_helo_timeout_is_plain),
        cmocka_unit_test(test_vm_late_helo_upgrades),
        cmocka_unit_test(test_vm_feat),
        cmocka_unit_test(test_vm_ident_shared),
        cmocka_unit_test(test_vm_features_hash_seeded),
        cmocka_unit_test(test_vm_features_capped),
        cmocka_unit_test(test_vm_tables),
        cmocka_unit_test(test_vm_ddm_event_dispatched),
        cmocka_unit_test(test_vm_event_in_helo_state),
        cmocka_unit_test(test_vm_jdwp_command_from_vm),
        cmocka_unit_test(test_vm_reply_alone),
        cmocka_unit_test(test_vm_reply_alone_fills_the_read),
        cmocka_unit_test(test_vm_in_place_replies),
        cmocka_unit_test(test_vm_in_place_across_read),
        cmocka_unit_test(test_vm_in_place_over_cap),
        cmocka_unit_test(test_vm_in_place_close_stops_the_read),
        cmocka_unit_test(test_vm_pause_input),
        cmocka_unit_test(test_vm_reply_several_chunks),
        cmocka_unit_test(test_vm_output_drained_notice),
        cmocka_unit_test(test_vm_write_error_removes_watch_before_close),
        cmocka_unit_test(test_vm_unknown_reply_id),
        cmocka_unit_test(test_vm_requests_settled_fence),
        cmocka_unit_test(test_vm_requests_settled_plain),
        cmocka_unit_test(test_vm_fence_sent_at_ready),
        cmocka_unit_test(test_vm_requests_of_one_event_in_one_write),
        cmocka_unit_test(test_vm_probe_sent_with_the_handshake),
        cmocka_unit_test(test_vm_first_requests_time_runs_from_the_echo),
        cmocka_unit_test(test_vm_drain_notice_asked_while_gathering),
        cmocka_unit_test(test_vm_garbage_length),
        cmocka_unit_test(test_vm_name_capped),
        cmocka_unit_test(test_vm_garbage_flags),
        cmocka_unit_test(test_vm_reply_chunk_overrun_is_bad),
        cmocka_unit_test(test_vm_eof_handshake),
        cmocka_unit_test(test_vm_eof_helo),
        cmocka_unit_test(test_vm_eof_ready),
        cmocka_unit_test(test_vm_eof_plain),
        cmocka_unit_test(test_vm_eof_quiet_when_reporting_held),
        cmocka_unit_test(test_vm_every_state_x_packet_kind),
        cmocka_unit_test(test_vm_request_reply),
        cmocka_unit_test(test_vm_request_reply_kinds),
        cmocka_unit_test(test_vm_request_timeout_then_late),
        cmocka_unit_test(test_vm_reply_waiting_at_deadline),
        cmocka_unit_test(test_vm_close_while_pending),
        cmocka_unit_test(test_vm_callback_closes_vm),
        cmocka_unit_test(test_vm_pending_cap),
        cmocka_unit_test(test_vm_request_errors),
        cmocka_unit_test(test_vm_request_without_callback),
        cmocka_unit_test(test_vm_cancel_owner),
        cmocka_unit_test(test_vm_set_name),
        cmocka_unit_test(test_vm_send_packet),
        cmocka_unit_test(test_vm_send_packet_cut_by_full_socket),
        cmocka_unit_test(test_vm_stream_large_event),
        cmocka_unit_test(test_vm_stream_declares_more_than_carried),
        cmocka_unit_test(test_vm_stream_carries_more_than_declared),
        cmocka_unit_test(test_vm_stream_peer_closes),
        cmocka_unit_test(test_vm_stream_past_max_stream),
        cmocka_unit_test(test_vm_stream_refused),
        cmocka_unit_test(test_vm_stream_request_waits),
        cmocka_unit_test(test_vm_stream_no_owner),
        cmocka_unit_test(test_vm_stream_paused_is_no_stall),
        cmocka_unit_test(test_vm_stream_stall_closes),
        cmocka_unit_test(test_vm_stream_close_later_in_deadline_read),
        cmocka_unit_test(test_vm_send_parts_hold_others),
        cmocka_unit_test(test_vm_reply_cut_through),
        cmocka_unit_test(test_vm_stream_budget_large_reads),
        cmocka_unit_test(test_vm_stream_budget_tight_small_reads),
        cmocka_unit_test(test_vm_stream_wakeup_share),
        cmocka_unit_test(test_vm_stream_trickle_holds_nothing),
    };
    return cmocka_run_group_tests_name("vm", tests, NULL, NULL);
}
