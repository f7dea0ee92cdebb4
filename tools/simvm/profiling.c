/* SPDX-License-Identifier: Apache-2.0
 *
 * Method tracing and sampling of a simulated VM (profiling.h).
 *
 *  MPSS u4 buffer, u4 flags              start tracing, streamed at the end
 *  SPSS u4 buffer, u4 flags, u4 interval start sampling, streamed at the end
 *  MPSE / SPSE (empty)                   stop: the trace (trace_gen.h) goes
 *                                        out as an MPSE event, as the socket
 *                                        drains, then the reply (nothing on
 *                                        ART, empty on Dalvik); with nothing
 *                                        running no event at all, as ART
 *  MPRS u4 buffer, u4 flags, lstr path   start tracing into a device file
 *  MPRE (empty)                          stop: the file is written (under
 *                                        --device-dir), MPRE u1 0; u1 1 if
 *                                        nothing ran
 *  MPRQ (empty)                          MPRQ u1: 0 off, 1 tracing, 2 sampling
 * Starts reply nothing (ART) or empty (Dalvik), FAIL(1, msg) when the
 * --trace mode does not offer them or a trace already runs.
 *
 * The trace's size grows with how long it ran: --trace-rate bytes of
 * records per second (default 64 KiB), at most the request's buffer size
 * (as the VM's trace buffer: cut to it, the header says
 * data-file-overflow=true), at least one iteration of the workload; its
 * clocks span the time it ran.
 * --trace-clock picks dual (default, version 3) or thread-cpu (version 2);
 * --trace-fault=truncate closes the connection halfway through the MPSE
 * event; --trace-fault=silent loses the trace: the stop finds nothing
 * running (as when the app stopped tracing itself), so no event comes. The ground truth of the last finished trace (its calls per method
 * and per thread, size and sha256) goes to the state file ("profiling").
 */
#include "profiling.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/wire/ddm.h"
#include "gen_stream.h"
#include "trace_gen.h"

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)
#define EVENT_HEAD_LEN (DDM_JDWP_HEADER_LEN + 8u)
#define DEFAULT_RATE 65536u

enum { KIND_OFF = 0, KIND_TRACING = 1, KIND_SAMPLING = 2 };

/** The last trace a VM finished sending or writing (ground truth). */
typedef struct SimTraceSent {
    gboolean valid;
    int kind;
    gboolean via_device;
    char *path;                  /* MPRS's device path */
    trace_gen_params params;
    trace_gen_truth truth;
    char sha256[65];
} SimTraceSent;

struct SimProfiling {
    int kind;                    /* KIND_*: what runs now (MPRQ) */
    gboolean to_device;          /* MPRS: ends with MPRE */
    char *device_path;
    uint32_t buffer;             /* the request's buffer size */
    uint32_t interval_us;
    gint64 started_ms;
    guint64 started, finished;   /* traces begun, finished */
    SimTraceSent last;
};

gboolean sim_profiling_parse_config(SimConfig *cfg, GError **error)
{
    if (cfg->trace_opt) {
        if (g_ascii_strcasecmp(cfg->trace_opt, "stream") == 0)
            cfg->trace_mode = SIM_TRACE_STREAM;
        else if (g_ascii_strcasecmp(cfg->trace_opt, "device") == 0)
            cfg->trace_mode = SIM_TRACE_DEVICE;
        else if (g_ascii_strcasecmp(cfg->trace_opt, "none") == 0)
            cfg->trace_mode = SIM_TRACE_NONE;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--trace must be stream, device or none");
            return FALSE;
        }
    }
    if (cfg->trace_clock_opt) {
        if (g_ascii_strcasecmp(cfg->trace_clock_opt, "dual") == 0)
            cfg->trace_single_clock = FALSE;
        else if (g_ascii_strcasecmp(cfg->trace_clock_opt, "thread-cpu") == 0)
            cfg->trace_single_clock = TRUE;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--trace-clock must be dual or thread-cpu");
            return FALSE;
        }
    }
    if (cfg->trace_fault_opt) {
        if (g_ascii_strcasecmp(cfg->trace_fault_opt, "none") == 0)
            cfg->trace_fault = SIM_TRACE_FAULT_NONE;
        else if (g_ascii_strcasecmp(cfg->trace_fault_opt, "truncate") == 0)
            cfg->trace_fault = SIM_TRACE_FAULT_TRUNCATE;
        else if (g_ascii_strcasecmp(cfg->trace_fault_opt, "silent") == 0)
            cfg->trace_fault = SIM_TRACE_FAULT_SILENT;
        else {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--trace-fault must be none, truncate or silent");
            return FALSE;
        }
    }
    if (cfg->trace_rate < 0 || (guint64)cfg->trace_rate > TRACE_GEN_MAX_BYTES) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--trace-rate must be 0 to %" G_GUINT64_FORMAT, (guint64)TRACE_GEN_MAX_BYTES);
        return FALSE;
    }
    return TRUE;
}

int sim_profiling_feature_offered(const SimVm *vm, const char *feature)
{
    int mode = vm->world->cfg.trace_mode;
    if (strcmp(feature, "method-trace-profiling") == 0)
        return mode != SIM_TRACE_NONE;
    if (strcmp(feature, "method-trace-profiling-streaming") == 0 ||
        strcmp(feature, "method-sample-profiling") == 0)
        return mode == SIM_TRACE_STREAM;
    return -1;
}

void sim_profiling_free(struct SimProfiling *p)
{
    if (!p)
        return;
    g_free(p->device_path);
    g_free(p->last.path);
    g_free(p);
}

static struct SimProfiling *state(SimVm *vm)
{
    if (!vm->profiling)
        vm->profiling = g_new0(struct SimProfiling, 1);
    return vm->profiling;
}

/* Each trace differs: (world seed, pid, trace number). */
static uint32_t trace_seed(SimVm *vm, guint64 n)
{
    return (uint32_t)sim_rng_mix(vm->world->cfg.seed ^ 0x7472616365ull, ((uint64_t)vm->pid << 32) | n);
}

/* The generator's params for the trace that runs now, stopping now. */
static trace_gen_params params_now(SimVm *vm)
{
    struct SimProfiling *p = state(vm);
    const SimConfig *cfg = &vm->world->cfg;
    gint64 ran_ms = MAX(sim_world_now_ms(vm->world) - p->started_ms, 1);
    guint64 rate = cfg->trace_rate > 0 ? (guint64)cfg->trace_rate : DEFAULT_RATE;
    trace_gen_params tp;

    memset(&tp, 0, sizeof tp);
    tp.sampling = p->kind == KIND_SAMPLING;
    tp.dual = !cfg->trace_single_clock;
    tp.seed = trace_seed(vm, p->started - 1);
    tp.bytes = rate * (guint64)ran_ms / 1000u;
    if (p->buffer > 0 && tp.bytes > p->buffer) {
        tp.bytes = p->buffer; /* the VM's trace buffer is full: ART says so */
        tp.overflow = 1;
    }
    tp.duration_usec = (guint64)ran_ms * 1000u; /* its times span the time it ran */
    if (tp.bytes > TRACE_GEN_MAX_BYTES)
        tp.bytes = TRACE_GEN_MAX_BYTES;
    tp.interval_us = p->interval_us;
    tp.pid = vm->pid;
    tp.start_usec = (uint64_t)g_get_real_time() - (uint64_t)ran_ms * 1000u;
    return tp;
}

static void record_trace(SimVm *vm, const trace_gen_params *tp, const trace_gen_truth *truth,
                         const char *sha256, const char *path, int kind)
{
    struct SimProfiling *p = state(vm);
    p->finished++;
    p->last.valid = TRUE;
    p->last.kind = kind;
    p->last.via_device = path != NULL;
    g_free(p->last.path);
    p->last.path = g_strdup(path);
    p->last.params = *tp;
    p->last.truth = *truth;
    g_strlcpy(p->last.sha256, sha256, sizeof p->last.sha256);
    sim_world_state_changed(vm->world);
}

static gboolean start(SimConn *c, uint32_t id, int kind, gboolean to_device, uint32_t buffer,
                      uint32_t interval_us, char *device_path)
{
    SimVm *vm = c->vm;
    struct SimProfiling *p = state(vm);
    int mode = vm->world->cfg.trace_mode;

    if (mode == SIM_TRACE_NONE || (!to_device && mode != SIM_TRACE_STREAM)) {
        g_free(device_path);
        sim_conn_send_fail(c, id, 1, kind == KIND_SAMPLING ? "method sampling is not supported"
                                                           : "method tracing is not supported");
        return FALSE;
    }
    if (p->kind != KIND_OFF) {
        g_free(device_path);
        sim_conn_send_fail(c, id, 1, "Trace already in progress");
        return FALSE;
    }
    p->kind = kind;
    p->to_device = to_device;
    g_free(p->device_path);
    p->device_path = device_path;
    p->buffer = buffer;
    p->interval_us = interval_us ? interval_us : 1000;
    p->started_ms = sim_world_now_ms(vm->world);
    p->started++;
    g_debug("pid %u: %s started%s", vm->pid, kind == KIND_SAMPLING ? "sampling" : "tracing",
            to_device ? " (device file)" : "");
    sim_world_state_changed(vm->world);
    sim_conn_reply_nothing(c, id);
    return TRUE;
}

/* ---- MPSE: the trace streamed in one event ---- */

typedef struct MpseJob {
    SimVm *vm;
    int kind;
    trace_gen *gen;
    trace_gen_params params;
    GChecksum *sha;
    uint8_t head[EVENT_HEAD_LEN];
    size_t head_pos;
    uint64_t body_limit;
    gboolean truncate;
} MpseJob;

static void mpse_job_free(void *ud)
{
    MpseJob *job = ud;
    trace_gen_free(job->gen);
    g_checksum_free(job->sha);
    g_free(job);
}

static SimProduceStatus mpse_produce(SimConn *c, void *ud, uint8_t *buf, size_t cap, size_t *len)
{
    MpseJob *job = ud;
    size_t done = 0;

    if (job->head_pos < sizeof job->head) {
        size_t n = MIN(sizeof job->head - job->head_pos, cap);
        memcpy(buf, job->head + job->head_pos, n);
        job->head_pos += n;
        done = n;
    }
    SimGenSource src = sim_gen_trace(job->gen);
    done += sim_gen_fill(&src, job->body_limit, job->sha, buf + done, cap - done);
    *len = done;
    if (trace_gen_offset(job->gen) < job->body_limit)
        return SIM_PRODUCE_MORE;
    if (job->truncate) {
        g_message("pid %u: method trace truncated after %" G_GUINT64_FORMAT " bytes (--trace-fault)",
                  c->vm->pid, trace_gen_offset(job->gen));
        return SIM_PRODUCE_CLOSE;
    }
    record_trace(c->vm, &job->params, trace_gen_truth_of(job->gen), g_checksum_get_string(job->sha),
                 NULL, job->kind);
    return SIM_PRODUCE_DONE;
}

static void stop_streamed(SimConn *c, uint32_t id)
{
    SimVm *vm = c->vm;
    struct SimProfiling *p = state(vm);
    MpseJob *job;
    DdmJdwpHeader h;
    uint64_t total;

    if (p->kind != KIND_OFF && !p->to_device && vm->world->cfg.trace_fault == SIM_TRACE_FAULT_SILENT) {
        g_message("pid %u: the trace is lost: the stop finds nothing running (--trace-fault)", vm->pid);
        p->kind = KIND_OFF;
        sim_world_state_changed(vm->world);
    }
    if (p->kind == KIND_OFF || p->to_device) {
        /* ART: "Trace stop requested, but no trace currently running"; no event */
        g_debug("pid %u: MPSE/SPSE with no streamed trace running", vm->pid);
        sim_conn_reply_nothing(c, id);
        return;
    }
    job = g_new0(MpseJob, 1);
    job->vm = vm;
    job->kind = p->kind;
    job->params = params_now(vm);
    job->gen = trace_gen_new(&job->params);
    p->kind = KIND_OFF;
    sim_world_state_changed(vm->world);
    if (!job->gen) {
        g_free(job);
        sim_conn_send_fail(c, id, 1, "trace failed");
        return;
    }
    job->sha = g_checksum_new(G_CHECKSUM_SHA256);
    total = trace_gen_truth_of(job->gen)->size;
    job->truncate = vm->world->cfg.trace_fault == SIM_TRACE_FAULT_TRUNCATE;
    job->body_limit = job->truncate ? total / 2 : total;
    memset(&h, 0, sizeof h);
    h.length = (uint32_t)(EVENT_HEAD_LEN + total);
    h.id = sim_vm_next_event_id(vm);
    h.cmdset = DDM_JDWP_CMDSET;
    h.cmd = DDM_JDWP_CMD;
    ddm_jdwp_write_header(job->head, &h);
    ddm_put_u4(job->head + DDM_JDWP_HEADER_LEN, T('M', 'P', 'S', 'E'));
    ddm_put_u4(job->head + DDM_JDWP_HEADER_LEN + 4, (uint32_t)total);
    g_debug("pid %u: MPSE: streaming %" G_GUINT64_FORMAT " bytes", vm->pid, total);
    sim_conn_start_producer(c, mpse_produce, mpse_job_free, job);
    sim_conn_reply_nothing(c, id); /* queued behind the event, as ART sends it first */
}

/* ---- MPRE: the trace written on the device ---- */

static gboolean write_trace_file(const char *local, const trace_gen_params *tp, trace_gen_truth *truth,
                                 char sha256[65], GError **error)
{
    trace_gen *gen = trace_gen_new(tp);
    gboolean ok;

    if (!gen) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no trace of that size");
        return FALSE;
    }
    SimGenSource src = sim_gen_trace(gen);
    ok = sim_gen_write_file(&src, local, sha256, error);
    *truth = *trace_gen_truth_of(gen);
    trace_gen_free(gen);
    return ok;
}

static void send_mpre(SimConn *c, uint32_t id, uint8_t result)
{
    sim_conn_send_reply(c, id, T('M', 'P', 'R', 'E'), &result, 1);
}

static void stop_device(SimConn *c, uint32_t id)
{
    SimVm *vm = c->vm;
    struct SimProfiling *p = state(vm);
    const char *dir = vm->world->cfg.device_dir;
    char *local = NULL, sha[65];
    trace_gen_params tp;
    trace_gen_truth truth;
    GError *err = NULL;

    if (p->kind == KIND_OFF || !p->to_device) {
        send_mpre(c, id, 1);
        return;
    }
    tp = params_now(vm);
    p->kind = KIND_OFF;
    if (dir) {
        char *base = g_path_get_basename(p->device_path);
        if (strcmp(base, "/") != 0 && strcmp(base, ".") != 0 && strcmp(base, "..") != 0)
            local = g_build_filename(dir, base, NULL);
        g_free(base);
    }
    if (!write_trace_file(local, &tp, &truth, sha, &err)) {
        g_message("pid %u: MPRE %s failed: %s", vm->pid, p->device_path, err->message);
        g_error_free(err);
        send_mpre(c, id, 1);
    } else {
        record_trace(vm, &tp, &truth, sha, p->device_path, KIND_TRACING);
        send_mpre(c, id, 0);
    }
    sim_world_state_changed(vm->world);
    g_free(local);
}

gboolean sim_profiling_handle(SimConn *c, uint32_t id, uint32_t type, ddm_reader *body)
{
    uint32_t buffer, flags, interval;
    uint8_t mode;
    char *path;

    switch (type) {
    case T('M', 'P', 'S', 'S'):
    case T('S', 'P', 'S', 'S'):
        buffer = ddm_read_u4(body);
        flags = ddm_read_u4(body);
        interval = type == T('S', 'P', 'S', 'S') ? ddm_read_u4(body) : 0;
        (void)flags;
        if (!ddm_reader_ok(body)) {
            sim_conn_send_fail(c, id, 1, "Malformed profiling start request");
            return TRUE;
        }
        start(c, id, type == T('S', 'P', 'S', 'S') ? KIND_SAMPLING : KIND_TRACING, FALSE, buffer,
              interval, NULL);
        return TRUE;
    case T('M', 'P', 'R', 'S'):
        buffer = ddm_read_u4(body);
        flags = ddm_read_u4(body);
        path = ddm_read_lstr(body);
        if (!path || !ddm_reader_ok(body) || !*path) {
            free(path);
            sim_conn_send_fail(c, id, 1, "Malformed MPRS request");
            return TRUE;
        }
        start(c, id, KIND_TRACING, TRUE, buffer, 0, g_strdup(path));
        free(path);
        return TRUE;
    case T('M', 'P', 'S', 'E'):
    case T('S', 'P', 'S', 'E'):
        stop_streamed(c, id);
        return TRUE;
    case T('M', 'P', 'R', 'E'):
        stop_device(c, id);
        return TRUE;
    case T('M', 'P', 'R', 'Q'):
        mode = (uint8_t)(c->vm->profiling ? c->vm->profiling->kind : KIND_OFF);
        sim_conn_send_reply(c, id, T('M', 'P', 'R', 'Q'), &mode, 1);
        return TRUE;
    default:
        return FALSE;
    }
}

static const char *kind_name(int kind)
{
    return kind == KIND_TRACING ? "tracing" : kind == KIND_SAMPLING ? "sampling" : "off";
}

void sim_profiling_add_state(JsonBuilder *b, const SimVm *vm)
{
    const struct SimProfiling *p = vm->profiling;

    json_builder_begin_object(b);
    json_builder_set_member_name(b, "mode");
    json_builder_add_string_value(b, kind_name(p ? p->kind : KIND_OFF));
    json_builder_set_member_name(b, "traces");
    json_builder_add_int_value(b, p ? (gint64)p->finished : 0);
    json_builder_set_member_name(b, "last");
    if (!p || !p->last.valid) {
        json_builder_add_null_value(b);
        json_builder_end_object(b);
        return;
    }
    const SimTraceSent *l = &p->last;
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, kind_name(l->kind));
    json_builder_set_member_name(b, "via");
    json_builder_add_string_value(b, l->via_device ? "device" : "stream");
    json_builder_set_member_name(b, "path");
    if (l->path)
        json_builder_add_string_value(b, l->path);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "clock");
    json_builder_add_string_value(b, l->params.dual ? "dual" : "thread-cpu");
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, l->params.dual ? 3 : 2);
    json_builder_set_member_name(b, "bytes");
    json_builder_add_int_value(b, (gint64)l->truth.size);
    json_builder_set_member_name(b, "sha256");
    json_builder_add_string_value(b, l->sha256);
    json_builder_set_member_name(b, "records");
    json_builder_add_int_value(b, (gint64)l->truth.records);
    json_builder_set_member_name(b, "iterations");
    json_builder_add_int_value(b, (gint64)l->truth.iterations);
    json_builder_set_member_name(b, "interval_us");
    json_builder_add_int_value(b, l->params.sampling ? l->params.interval_us : 0);
    json_builder_set_member_name(b, "gen_seed");
    json_builder_add_int_value(b, l->params.seed);
    /* calls per method, keyed "class.name" as trace-summary shows them */
    json_builder_set_member_name(b, "calls");
    json_builder_begin_object(b);
    for (unsigned i = 0; i < TRACE_GEN_METHODS; i++) {
        char *key = g_strdup_printf("%s.%s", trace_gen_method_class(i), trace_gen_method_name(i));
        json_builder_set_member_name(b, key);
        json_builder_add_int_value(b, (gint64)l->truth.calls[i]);
        g_free(key);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "thread_calls");
    json_builder_begin_object(b);
    for (unsigned i = 0; i < TRACE_GEN_THREADS; i++) {
        json_builder_set_member_name(b, trace_gen_thread_name(i));
        json_builder_add_int_value(b, (gint64)l->truth.thread_calls[i]);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
    json_builder_end_object(b);
}
