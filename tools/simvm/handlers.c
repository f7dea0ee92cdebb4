/* SPDX-License-Identifier: Apache-2.0
 *
 * What a simulated VM answers. DDM requests (0xC7/1) are dispatched on the
 * first chunk's type, as Dalvik and ART do; plain JDWP gets
 * VirtualMachine.Version, IDSizes, Dispose and Exit here, the object model
 * a debugger browses (threads, classes, frames: jdwp_model.c) there, and
 * NOT_IMPLEMENTED otherwise. Any non-DDM command marks a
 * debugger as active, which ends WAIT.
 *
 * "Nothing to say" follows the mode: Dalvik sends an empty reply, ART's
 * adbconnection sends none (unknown types, THEN, HPIF, HPSG, HPGC, NHSG,
 * malformed chunk framing). Heap dumps (HPDS, HPDU) are hprof_dump.c's.
 * A known request whose payload is malformed
 * gets FAIL(1, reason) in both modes. A plain JVM answers every 0xC7
 * command with JDWP error 99.
 */
#include "simvm-private.h"

#include <string.h>

#include "core/wire/ddm.h"
#include "core/wire/jdwp.h"
#include "jdwp_model.h"
#include "profiling.h"
#include "viewdebug.h"

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)

#define HPROF_STREAMING_FEATURE "hprof-heap-dump-streaming"
#define HPROF_DEVICE_FEATURE "hprof-heap-dump"

static const char *const art_features[] = {
    "method-trace-profiling", "method-trace-profiling-streaming", "method-sample-profiling",
    "hprof-heap-dump", "hprof-heap-dump-streaming", "view-hierarchy", "support_boot_stages",
};
static const char *const dalvik_features[] = {
    "method-trace-profiling", "method-trace-profiling-streaming", "hprof-heap-dump",
    "hprof-heap-dump-streaming", "opengl-tracing", "view-hierarchy",
};

static uint8_t *take(ddm_writer *w, size_t *len)
{
    uint8_t *p = ddm_writer_take(w, len);
    if (!p)
        *len = 0;
    return p;
}

static const char *vm_ident(const SimVm *vm)
{
    return vm->mode == SIM_MODE_DALVIK ? "Dalvik v1.6.0" : "ART v2.1.0";
}

void sim_conn_send_apnm(SimConn *c)
{
    SimVm *vm = c->vm;
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 4096);
    ddm_write_lstr(&w, sim_vm_current_name(vm));
    ddm_write_u4(&w, (uint32_t)vm->user_id);
    ddm_write_lstr(&w, vm->package_name);
    p = take(&w, &len);
    sim_conn_send_event(c, T('A', 'P', 'N', 'M'), p, len);
    free(p);
}

static void handle_helo(SimConn *c, uint32_t id, ddm_reader *r)
{
    SimVm *vm = c->vm;
    unsigned tails = vm->world->cfg.helo_tails;
    ddm_writer w;
    uint8_t *p;
    size_t len;
    uint32_t server_version = ddm_read_u4(r);

    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, "Malformed HELO request");
        return;
    }
    g_debug("pid %u: HELO from server protocol %u", vm->pid, server_version);
    if (vm->waiting) {
        /* DdmHandleHello.handleHELO sends WAIT before it returns its reply */
        uint8_t reason = 0;
        sim_conn_send_event(c, T('W', 'A', 'I', 'T'), &reason, 1);
    }
    ddm_writer_init(&w, 65536);
    ddm_write_u4(&w, 1);
    ddm_write_u4(&w, vm->pid);
    ddm_write_u4(&w, (uint32_t)ddm_utf8_to_utf16be(vm_ident(vm), NULL, 0));
    ddm_write_u4(&w, (uint32_t)ddm_utf8_to_utf16be(sim_vm_current_name(vm), NULL, 0));
    ddm_write_str16(&w, vm_ident(vm));
    ddm_write_str16(&w, sim_vm_current_name(vm));
    if (tails >= 1)
        ddm_write_u4(&w, (uint32_t)vm->user_id);
    if (tails >= 2)
        ddm_write_lstr(&w, sim_vm_abi(vm));
    if (tails >= 3)
        ddm_write_lstr(&w, "CheckJNI=false");
    if (tails >= 4)
        ddm_write_u1(&w, vm->native_debuggable);
    if (tails >= 5)
        ddm_write_lstr(&w, vm->package_name);
    if (tails >= 6)
        ddm_write_u4(&w, T('A', '_', 'G', 'O'));
    p = take(&w, &len);
    sim_conn_send_reply(c, id, DDM_CHUNK_HELO, p, len);
    free(p);
}

/* --hprof: "device" drops streaming, "none" both heap-dump features. */
static gboolean feature_offered(const SimVm *vm, const char *feature)
{
    SimHprofMode m = vm->world->cfg.hprof_mode;

    int prof = sim_profiling_feature_offered(vm, feature);
    if (prof >= 0)
        return prof;
    if (strcmp(feature, HPROF_STREAMING_FEATURE) == 0)
        return m == SIM_HPROF_STREAM;
    if (strcmp(feature, HPROF_DEVICE_FEATURE) == 0)
        return m != SIM_HPROF_NONE;
    if (strcmp(feature, SIM_VIEW_HIERARCHY_FEATURE) == 0)
        return !vm->world->cfg.no_view_hierarchy;
    return TRUE;
}

static void handle_feat(SimConn *c, uint32_t id)
{
    gboolean art = c->vm->mode == SIM_MODE_ART;
    const char *const *f = art ? art_features : dalvik_features;
    size_t i, n = art ? G_N_ELEMENTS(art_features) : G_N_ELEMENTS(dalvik_features);
    uint32_t listed = 0;
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 4096);
    for (i = 0; i < n; i++)
        if (feature_offered(c->vm, f[i]))
            listed++;
    ddm_write_u4(&w, listed);
    for (i = 0; i < n; i++)
        if (feature_offered(c->vm, f[i]))
            ddm_write_lstr(&w, f[i]);
    p = take(&w, &len);
    sim_conn_send_reply(c, id, DDM_CHUNK_FEAT, p, len);
    free(p);
}

static void send_thread_name(SimConn *c, uint32_t type, const SimThread *t)
{
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 4096);
    sim_thread_write_name(&w, t);
    p = take(&w, &len);
    sim_conn_send_event(c, type, p, len);
    free(p);
}

static void handle_then(SimConn *c, uint32_t id, ddm_reader *r)
{
    uint8_t enable = ddm_read_u1(r);
    uint32_t i;

    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, "Malformed THEN request");
        return;
    }
    c->then_on = enable != 0;
    if (c->then_on) /* THCR for every live thread, before the (Dalvik) reply */
        for (i = 0; i < c->vm->threads.n; i++)
            send_thread_name(c, T('T', 'H', 'C', 'R'), &c->vm->threads.v[i]);
    sim_conn_reply_nothing(c, id);
    sim_world_state_changed(c->vm->world); /* "thread_events" */
}

void sim_conn_send_thst(SimConn *c, uint32_t reply_id, gboolean as_event)
{
    SimVm *vm = c->vm;
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 1 << 20);
    sim_threads_write_thst(&vm->threads, &w);
    p = take(&w, &len);
    if (!p) {
        if (!as_event)
            sim_conn_send_fail(c, reply_id, 1, "Can't build THST chunk");
        return;
    }
    if (as_event)
        sim_conn_send_event(c, T('T', 'H', 'S', 'T'), p, len);
    else
        sim_conn_send_reply(c, reply_id, T('T', 'H', 'S', 'T'), p, len);
    if (vm->thst_recent[SIM_THST_RECENT - 1])
        g_bytes_unref(vm->thst_recent[SIM_THST_RECENT - 1]);
    memmove(&vm->thst_recent[1], &vm->thst_recent[0], (SIM_THST_RECENT - 1) * sizeof vm->thst_recent[0]);
    vm->thst_recent[0] = g_bytes_new(p, len);
    free(p);
    sim_world_state_changed(vm->world);
}

static void handle_thst(SimConn *c, uint32_t id, ddm_reader *r)
{
    uint32_t interval;

    if (ddm_reader_remaining(r) == 0) {
        sim_conn_send_thst(c, id, FALSE);
        return;
    }
    /* the 2007 draft's form: u4 interval in ms, then periodic THST events
     * (doc/protocol.md, "THST") */
    interval = ddm_read_u4(r);
    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, "Malformed THST request");
        return;
    }
    c->thst_interval_ms = interval;
    c->next_thst_ms = sim_world_now_ms(c->vm->world) + interval;
    sim_conn_reply_nothing(c, id);
    if (interval)
        sim_conn_send_thst(c, 0, TRUE);
}

static void handle_stkl(SimConn *c, uint32_t id, ddm_reader *r)
{
    uint32_t tid = ddm_read_u4(r);
    ddm_writer w;
    uint8_t *p;
    size_t len;

    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, "Malformed STKL request");
        return;
    }
    ddm_writer_init(&w, 1 << 20);
    if (sim_threads_write_stkl(&c->vm->threads, tid, &w) < 0) {
        ddm_writer_reset(&w);
        sim_conn_send_fail(c, id, 1, "Stack trace unavailable");
        return;
    }
    p = take(&w, &len);
    sim_conn_send_reply(c, id, T('S', 'T', 'K', 'L'), p, len);
    free(p);
}

void sim_conn_send_hpif(SimConn *c, uint8_t reason)
{
    SimVm *vm = c->vm;
    uint64_t now = (uint64_t)(g_get_real_time() / 1000);
    ddm_writer w;
    uint8_t *p;
    size_t len;
    unsigned i;

    ddm_writer_init(&w, 4096);
    ddm_write_u4(&w, vm->n_heaps);
    for (i = 0; i < vm->n_heaps; i++) {
        size_t at = w.len;
        SimHpifSent *s = &vm->hpif_sent[i];
        ddm_reader r;

        sim_heap_write_hpif(&w, &vm->heaps[i], now, reason);
        /* remember exactly what went out */
        ddm_reader_init(&r, w.data + at, w.len - at);
        (void)ddm_read_u4(&r);
        s->timestamp_ms = ddm_read_u8(&r);
        s->reason = ddm_read_u1(&r);
        s->max = ddm_read_u4(&r);
        s->size = ddm_read_u4(&r);
        s->allocated = ddm_read_u4(&r);
        s->objects = ddm_read_u4(&r);
        s->valid = ddm_reader_ok(&r);
    }
    p = take(&w, &len);
    sim_conn_send_event(c, T('H', 'P', 'I', 'F'), p, len);
    free(p);
    sim_world_state_changed(vm->world);
}

static void handle_hpif(SimConn *c, uint32_t id, ddm_reader *r)
{
    uint8_t when = ddm_read_u1(r);

    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, "Malformed HPIF request");
        return;
    }
    if (when > 3) {
        sim_conn_send_fail(c, id, 1, "Unsupported HPIF what");
        return;
    }
    if (when == 1)
        sim_conn_send_hpif(c, 1); /* "now" is an event too, not the reply */
    else
        c->hpif_when = when;
    sim_conn_reply_nothing(c, id);
}

typedef struct Piece {
    unsigned heap;
    GBytes *bytes;
} Piece;

typedef struct Collect {
    GArray *pieces;
    unsigned heap;
} Collect;

static void collect_piece(const uint8_t *piece, size_t len, void *ud)
{
    Collect *col = ud;
    Piece p = { col->heap, g_bytes_new(piece, len) };

    g_array_append_val(col->pieces, p);
}

void sim_conn_send_segments(SimConn *c, gboolean native)
{
    SimVm *vm = c->vm;
    SimHeap *heaps[SIM_MAX_HEAPS];
    SimSegStats stats[SIM_MAX_HEAPS];
    unsigned n = 0, i;
    uint32_t start = native ? T('N', 'H', 'S', 'T') : T('H', 'P', 'S', 'T');
    uint32_t end = native ? T('N', 'H', 'E', 'N') : T('H', 'P', 'E', 'N');
    uint32_t seg = native ? T('N', 'H', 'S', 'G')
                          : (c->hpsg_what == 1 ? T('H', 'P', 'S', 'O') : T('H', 'P', 'S', 'G'));
    Collect col;
    SimRng rng;
    uint8_t idbuf[4];

    if (native)
        heaps[n++] = &vm->native;
    else
        for (i = 0; i < vm->n_heaps && i < SIM_MAX_HEAPS; i++)
            heaps[n++] = &vm->heaps[i];
    if (n == 0)
        return;
    col.pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
    for (i = 0; i < n; i++) {
        col.heap = i;
        sim_heap_encode_segments(heaps[i], vm->world->cfg.seg_chunk_max, collect_piece, &col, &stats[i]);
    }
    /* deliberately out of order, heaps interleaved: a decoder must sort by address */
    sim_rng_seed(&rng, sim_rng_mix(vm->pid, ((uint64_t)heaps[0]->generation << 8) | native));
    for (i = col.pieces->len; i > 1; i--) {
        guint j = sim_rng_below(&rng, i);
        Piece tmp = g_array_index(col.pieces, Piece, i - 1);
        g_array_index(col.pieces, Piece, i - 1) = g_array_index(col.pieces, Piece, j);
        g_array_index(col.pieces, Piece, j) = tmp;
    }
    if (col.pieces->len > 1 && g_array_index(col.pieces, Piece, 0).heap == 0 &&
        g_array_index(col.pieces, Piece, 1).heap == 0) {
        /* make sure at least the first two are swapped relative to address order */
        Piece a = g_array_index(col.pieces, Piece, 0), b = g_array_index(col.pieces, Piece, 1);
        gsize al, bl;
        const uint8_t *ad = g_bytes_get_data(a.bytes, &al), *bd = g_bytes_get_data(b.bytes, &bl);
        if (al >= 9 && bl >= 9 && memcmp(ad + 5, bd + 5, 4) < 0) {
            g_array_index(col.pieces, Piece, 0) = b;
            g_array_index(col.pieces, Piece, 1) = a;
        }
    }
    for (i = 0; i < n; i++) {
        ddm_put_u4(idbuf, heaps[i]->heap_id);
        sim_conn_send_event(c, start, idbuf, 4);
    }
    for (i = 0; i < col.pieces->len; i++) {
        Piece *p = &g_array_index(col.pieces, Piece, i);
        gsize len;
        const uint8_t *d = g_bytes_get_data(p->bytes, &len);
        sim_conn_send_event(c, seg, d, len);
        g_bytes_unref(p->bytes);
    }
    for (i = 0; i < n; i++) {
        ddm_put_u4(idbuf, heaps[i]->heap_id);
        sim_conn_send_event(c, end, idbuf, 4);
    }
    g_array_free(col.pieces, TRUE);
    if (native) {
        vm->native_seg_sent = stats[0];
        vm->native_seg_sent_valid = TRUE;
    } else {
        for (i = 0; i < n; i++) {
            vm->seg_sent[i] = stats[i];
            vm->seg_sent_valid[i] = TRUE;
            vm->seg_sent_generation[i] = heaps[i]->generation;
        }
    }
    sim_world_state_changed(vm->world);
}

static void handle_segments_request(SimConn *c, uint32_t id, ddm_reader *r, gboolean native)
{
    uint8_t when = ddm_read_u1(r), what = ddm_read_u1(r);

    if (!ddm_reader_ok(r)) {
        sim_conn_send_fail(c, id, 1, native ? "Malformed NHSG request" : "Malformed HPSG request");
        return;
    }
    if (when > 1 || what > 1) {
        sim_conn_send_fail(c, id, 1, native ? "Unsupported NHSG when/what" : "Unsupported HPSG when/what");
        return;
    }
    if (native) {
        c->nhsg_when = when;
        c->nhsg_what = what;
    } else {
        c->hpsg_when = when;
        c->hpsg_what = what;
    }
    sim_conn_reply_nothing(c, id);
}

static void handle_nhgt(SimConn *c, uint32_t id)
{
    SimVm *vm = c->vm;
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 16 << 20);
    sim_native_write_nhgt(&w, vm->native.seed, vm->native_generation, vm->world->cfg.nhgt_version,
                          vm->world->cfg.ptr_size, &vm->nhgt_sent);
    p = take(&w, &len);
    if (!p) {
        sim_conn_send_fail(c, id, 1, "Something went wrong");
        return;
    }
    vm->nhgt_sent_valid = TRUE;
    sim_conn_send_reply(c, id, T('N', 'H', 'G', 'T'), p, len);
    free(p);
    sim_world_state_changed(vm->world);
}

static void handle_real(SimConn *c, uint32_t id)
{
    ddm_writer w;
    uint8_t *p;
    size_t len;

    ddm_writer_init(&w, 1 << 20);
    sim_alloc_write_real(&c->vm->alloc, &w);
    p = take(&w, &len);
    if (!p) {
        sim_conn_send_fail(c, id, 1, "Can't build REAL chunk");
        return;
    }
    sim_conn_send_reply(c, id, T('R', 'E', 'A', 'L'), p, len);
    free(p);
}

static void handle_ddm(SimConn *c, const DdmJdwpPacket *pkt)
{
    SimVm *vm = c->vm;
    uint32_t id = pkt->header.id, type, len;
    ddm_reader r, body;
    char name[5];
    uint8_t u1;

    c->ddm_seen = TRUE;
    ddm_reader_init(&r, pkt->data, pkt->data_len);
    type = ddm_read_u4(&r);
    len = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r) || len > ddm_reader_remaining(&r)) {
        g_message("pid %u: malformed DDM chunk framing (%zu payload bytes); ignoring it", vm->pid,
                  pkt->data_len);
        sim_conn_reply_nothing(c, id);
        return;
    }
    ddm_reader_init(&body, ddm_read_bytes(&r, len), len);
    g_debug("pid %u: request %s id 0x%08x, %u bytes", vm->pid, ddm_chunk_name(type, name), id, len);

    switch (type) {
    case DDM_CHUNK_HELO:
        handle_helo(c, id, &body);
        break;
    case DDM_CHUNK_FEAT:
        handle_feat(c, id);
        break;
    case T('T', 'H', 'E', 'N'):
        handle_then(c, id, &body);
        break;
    case T('T', 'H', 'S', 'T'):
        handle_thst(c, id, &body);
        break;
    case T('S', 'T', 'K', 'L'):
        handle_stkl(c, id, &body);
        break;
    case T('H', 'P', 'I', 'F'):
        handle_hpif(c, id, &body);
        break;
    case T('H', 'P', 'G', 'C'):
        sim_vm_gc(vm);
        sim_conn_reply_nothing(c, id);
        break;
    case T('H', 'P', 'S', 'G'):
        handle_segments_request(c, id, &body, FALSE);
        break;
    case T('N', 'H', 'S', 'G'):
        handle_segments_request(c, id, &body, TRUE);
        break;
    case T('N', 'H', 'G', 'T'):
        handle_nhgt(c, id);
        break;
    case T('R', 'E', 'A', 'E'):
        u1 = ddm_read_u1(&body);
        if (!ddm_reader_ok(&body)) {
            sim_conn_send_fail(c, id, 1, "Malformed REAE request");
            break;
        }
        sim_alloc_set_enabled(&vm->alloc, u1 != 0); /* 0 discards the records, as ART */
        sim_world_state_changed(vm->world);
        sim_conn_reply_nothing(c, id);
        break;
    case T('R', 'E', 'A', 'Q'):
        u1 = (uint8_t)vm->alloc.enabled;
        sim_conn_send_reply(c, id, T('R', 'E', 'A', 'Q'), &u1, 1);
        break;
    case T('R', 'E', 'A', 'L'):
        handle_real(c, id);
        break;
    case T('H', 'P', 'D', 'S'):
        sim_handle_hpds(c, id);
        break;
    case T('H', 'P', 'D', 'U'):
        sim_handle_hpdu(c, id, &body);
        break;
    case T('V', 'U', 'L', 'W'):
    case T('V', 'U', 'R', 'T'):
    case T('V', 'U', 'O', 'P'):
        sim_handle_viewdebug(c, id, type, &body);
        break;
    case T('D', 'B', 'G', 'D'): /* --dbgd=ack: the draft's DBGD chunk; else nothing to say
                                 * (dalvik: an empty reply, art: none) */
        if (vm->world->cfg.dbgd_ack)
            sim_conn_send_reply(c, id, T('D', 'B', 'G', 'D'), NULL, 0);
        else
            sim_conn_reply_nothing(c, id);
        break;
    case T('E', 'X', 'I', 'T'): {
        uint32_t status = ddm_read_u4(&body);
        if (!ddm_reader_ok(&body)) {
            sim_conn_send_fail(c, id, 1, "Malformed EXIT request");
            break;
        }
        sim_vm_exit(vm, status); /* Runtime.halt(): no reply, the connection drops */
        break;
    }
    default:
        if (sim_profiling_handle(c, id, type, &body)) /* MPRS MPRE MPSS MPSE SPSS SPSE MPRQ */
            break;
        g_debug("pid %u: no handler for %s", vm->pid, name);
        sim_conn_reply_nothing(c, id);
        break;
    }
}

static void write_jdwp_string(ddm_writer *w, const char *s)
{
    size_t n = strlen(s);

    ddm_write_u4(w, (uint32_t)n); /* JDWP strings: u4 byte count, modified UTF-8 */
    ddm_write_bytes(w, s, n);
}

static void handle_jdwp(SimConn *c, const DdmJdwpPacket *pkt)
{
    SimVm *vm = c->vm;
    const DdmJdwpHeader *h = &pkt->header;
    ddm_writer w;
    uint8_t *p;
    size_t len;
    int i;

    if (!vm->debugger_active) {
        vm->debugger_active = TRUE;
        if (vm->waiting)
            g_message("pid %u: debugger active; no longer waiting", vm->pid);
        vm->waiting = FALSE;
        sim_world_state_changed(vm->world);
    }
    if (sim_jdwp_handle(c, pkt)) /* threads, groups, classes, frames, event requests */
        return;
    if (h->cmdset != 1) {
        sim_conn_send_jdwp_reply(c, h->id, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0);
        return;
    }
    ddm_writer_init(&w, 4096);
    switch (h->cmd) {
    case 1: /* VirtualMachine.Version */
        if (vm->mode == SIM_MODE_JVM) {
            write_jdwp_string(&w, "Java Debug Wire Protocol (Reference Implementation) version 17.0\n"
                                  "JVM Debug Interface version 17.0\n"
                                  "JVM version 17.0.13 (OpenJDK 64-Bit Server VM, mixed mode, sharing)");
            ddm_write_u4(&w, 17);
            ddm_write_u4(&w, 0);
            write_jdwp_string(&w, "17.0.13");
            write_jdwp_string(&w, "OpenJDK 64-Bit Server VM");
        } else if (vm->mode == SIM_MODE_DALVIK) {
            write_jdwp_string(&w, "Android DalvikVM 1.6.0");
            ddm_write_u4(&w, 1);
            ddm_write_u4(&w, 5);
            write_jdwp_string(&w, "1.5.0");
            write_jdwp_string(&w, "DalvikVM");
        } else {
            write_jdwp_string(&w, "Android Runtime 2.1.0");
            ddm_write_u4(&w, 1);
            ddm_write_u4(&w, 6);
            write_jdwp_string(&w, "2.1.0");
            write_jdwp_string(&w, "Dalvik");
        }
        break;
    case 7: /* VirtualMachine.IDSizes: 8 for all five */
        for (i = 0; i < 5; i++)
            ddm_write_u4(&w, 8);
        break;
    case 6: /* VirtualMachine.Dispose: empty reply, then close (OpenJDK) */
        c->close_after_flush = TRUE;
        break;
    case 10: { /* VirtualMachine.Exit (i4 exit code): reply, then go away */
        ddm_reader er;
        uint32_t code;
        ddm_reader_init(&er, pkt->data, pkt->data_len);
        code = ddm_read_u4(&er);
        ddm_writer_reset(&w);
        sim_conn_send_jdwp_reply(c, h->id, 0, NULL, 0);
        sim_conn_flush(c); /* OpenJDK answers before it exits */
        sim_vm_exit(vm, code);
        return;
    }
    default:
        ddm_writer_reset(&w);
        sim_conn_send_jdwp_reply(c, h->id, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0);
        return;
    }
    p = take(&w, &len);
    sim_conn_send_jdwp_reply(c, h->id, 0, p, len);
    free(p);
}

void sim_handle_packet(SimConn *c, const DdmJdwpPacket *pkt)
{
    const DdmJdwpHeader *h = &pkt->header;

    if (ddm_jdwp_is_reply(h)) {
        g_debug("pid %u: ignoring a reply (id 0x%08x) from the client", c->vm->pid, h->id);
        return;
    }
    if (h->cmdset == DDM_JDWP_CMDSET) {
        if (c->vm->mode == SIM_MODE_JVM || h->cmd != DDM_JDWP_CMD) {
            sim_conn_send_jdwp_reply(c, h->id, DDM_JDWP_ERROR_NOT_IMPLEMENTED, NULL, 0);
            return;
        }
        handle_ddm(c, pkt);
        return;
    }
    handle_jdwp(c, pkt);
}
