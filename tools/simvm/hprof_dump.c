/* SPDX-License-Identifier: Apache-2.0
 *
 * Heap dumps of a simulated VM: HPDS and HPDU (doc/protocol.md), the
 * --hprof modes and --hprof-fault misbehaviours, and the ground truth of
 * the last dump (SimVm.hprof_sent).
 *
 * HPDS: the dump travels as a VM event (a 0xC7/1 command packet with one
 * HPDS chunk whose payload is the whole hprof file), streamed from the
 * generator (hprof_gen.h) as the socket drains, with its sha256 computed on
 * the way; then the empty reply. A second HPDS while one is streaming waits
 * behind it (the connection queues producers in order), as ART serializes
 * dumps. HPDU writes the file "on the device": only computed (for its
 * sha256), or written to --device-dir; then HPDU(u1 0). Both run from the
 * main loop; HPDU generates its whole file at once (a 2 MiB default is a
 * few milliseconds).
 */
#include "simvm-private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/wire/ddm.h"
#include "gen_stream.h"
#include "hprof_gen.h"

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)
#define LIE_LONG_EXTRA 1000u   /* bytes lie-long declares beyond what it sends (options.c) */
#define EVENT_HEAD_LEN (DDM_JDWP_HEADER_LEN + 8u)

uint32_t sim_hprof_seed(guint64 seed)
{
    return (uint32_t)(seed ^ (seed >> 32));
}

/* Each dump of a VM differs: (world seed, pid, dump number). */
static uint32_t dump_seed(SimVm *vm)
{
    return (uint32_t)sim_rng_mix(vm->world->cfg.seed, ((uint64_t)vm->pid << 32) | vm->hprof_sent.started++);
}

static void record_dump(SimVm *vm, gboolean via_hpdu, guint64 bytes, const char *sha256, const char *path,
                        SimHprofFault fault, uint32_t gen_seed)
{
    SimHprofSent *h = &vm->hprof_sent;

    h->gen_seed = gen_seed;
    g_free(h->package);
    h->package = g_strdup(vm->package_name);

    h->dumps++;
    h->valid = TRUE;
    h->via_hpdu = via_hpdu;
    h->bytes = bytes;
    g_strlcpy(h->sha256, sha256, sizeof h->sha256);
    g_free(h->path);
    h->path = g_strdup(path);
    h->fault = fault;
    sim_world_state_changed(vm->world);
}

/* ---- HPDS: one streamed dump ---- */

typedef struct HpdsJob {
    uint32_t reply_id;
    uint32_t gen_seed;             /* the generator's seed (ground truth) */
    SimHprofFault fault;
    hprof_gen *gen;
    GChecksum *sha;
    uint8_t head[EVENT_HEAD_LEN];  /* JDWP command header + chunk header */
    size_t head_pos;
    uint64_t body_limit;           /* body bytes to send (less than total when truncating) */
    gboolean body_done;            /* the body is handed over: recorded, fault applied */
    uint8_t tail[DDM_JDWP_HEADER_LEN]; /* the empty reply */
    size_t tail_pos;
} HpdsJob;

static void hpds_job_free(void *ud)
{
    HpdsJob *job = ud;

    hprof_gen_free(job->gen);
    g_checksum_free(job->sha);
    g_free(job);
}

static size_t copy_part(const uint8_t *src, size_t len, size_t *pos, uint8_t *buf, size_t cap)
{
    size_t n = MIN(len - *pos, cap);

    memcpy(buf, src + *pos, n);
    *pos += n;
    return n;
}

static SimProduceStatus hpds_produce(SimConn *c, void *ud, uint8_t *buf, size_t cap, size_t *len)
{
    HpdsJob *job = ud;
    size_t done = copy_part(job->head, sizeof job->head, &job->head_pos, buf, cap);

    SimGenSource src = sim_gen_hprof(job->gen);
    done += sim_gen_fill(&src, job->body_limit, job->sha, buf + done, cap - done);
    *len = done;
    if (hprof_gen_offset(job->gen) < job->body_limit)
        return SIM_PRODUCE_MORE;
    if (!job->body_done) {
        /* the body is handed over: what now depends on the fault */
        job->body_done = TRUE;
        switch (job->fault) {
        case SIM_HPROF_FAULT_TRUNCATE:
            g_message("pid %u: heap dump truncated after %" G_GUINT64_FORMAT " bytes (--hprof-fault)",
                      c->vm->pid, hprof_gen_offset(job->gen));
            return SIM_PRODUCE_CLOSE;
        case SIM_HPROF_FAULT_LIE_LONG:
            record_dump(c->vm, FALSE, hprof_gen_offset(job->gen), g_checksum_get_string(job->sha), NULL,
                        job->fault, job->gen_seed);
            g_message("pid %u: heap dump sent %u bytes short of its length; now silent (--hprof-fault)",
                      c->vm->pid, LIE_LONG_EXTRA);
            return SIM_PRODUCE_STALL;
        default:
            record_dump(c->vm, FALSE, hprof_gen_offset(job->gen), g_checksum_get_string(job->sha), NULL,
                        job->fault, job->gen_seed);
            break;
        }
    }
    done += copy_part(job->tail, sizeof job->tail, &job->tail_pos, buf + done, cap - done);
    *len = done;
    return job->tail_pos == sizeof job->tail ? SIM_PRODUCE_DONE : SIM_PRODUCE_MORE;
}

void sim_handle_hpds(SimConn *c, uint32_t id)
{
    SimVm *vm = c->vm;
    const SimConfig *cfg = &vm->world->cfg;
    uint64_t total = cfg->hprof_size, declared = total;
    uint32_t chunk_len;
    HpdsJob *job;
    DdmJdwpHeader h;

    if (cfg->hprof_mode != SIM_HPROF_STREAM) {
        sim_conn_send_fail(c, id, 1, "HPDS not supported");
        return;
    }
    if (cfg->hprof_fault == SIM_HPROF_FAULT_FAIL) {
        sim_conn_send_fail(c, id, 1, "heap dump failed");
        return;
    }
    job = g_new0(HpdsJob, 1);
    job->reply_id = id;
    job->fault = cfg->hprof_fault;
    job->gen_seed = dump_seed(vm);
    job->gen = hprof_gen_new(total, job->gen_seed, vm->package_name);
    if (!job->gen) {
        g_free(job);
        sim_conn_send_fail(c, id, 1, "heap dump failed");
        return;
    }
    job->sha = g_checksum_new(G_CHECKSUM_SHA256);
    job->body_limit = cfg->hprof_fault == SIM_HPROF_FAULT_TRUNCATE ? total / 2 : total;
    if (cfg->hprof_fault == SIM_HPROF_FAULT_LIE_LONG)
        declared = total + LIE_LONG_EXTRA; /* options.c keeps this within a u4 packet length */
    chunk_len = (uint32_t)declared;
    if (cfg->hprof_fault == SIM_HPROF_FAULT_LIE_SHORT)
        chunk_len = (uint32_t)(total / 2); /* less than the packet carries */
    memset(&h, 0, sizeof h);
    h.length = (uint32_t)(EVENT_HEAD_LEN + declared);
    h.id = sim_vm_next_event_id(vm);
    h.flags = 0;
    h.cmdset = DDM_JDWP_CMDSET;
    h.cmd = DDM_JDWP_CMD;
    ddm_jdwp_write_header(job->head, &h);
    ddm_put_u4(job->head + DDM_JDWP_HEADER_LEN, T('H', 'P', 'D', 'S'));
    ddm_put_u4(job->head + DDM_JDWP_HEADER_LEN + 4, chunk_len);
    memset(&h, 0, sizeof h);
    h.length = DDM_JDWP_HEADER_LEN;
    h.id = id;
    h.flags = DDM_JDWP_FLAG_REPLY;
    ddm_jdwp_write_header(job->tail, &h);
    g_debug("pid %u: HPDS: streaming %" G_GUINT64_FORMAT " bytes (fault %s)", vm->pid, total,
            sim_hprof_fault_name(job->fault));
    sim_conn_start_producer(c, hpds_produce, hpds_job_free, job);
}

/* ---- HPDU: a dump written on the device ---- */

gboolean sim_hprof_write_file(const char *path, guint64 size, uint32_t seed, const char *package,
                              char sha256[65], GError **error)
{
    hprof_gen *gen = hprof_gen_new(size, seed, package);
    gboolean ok;

    if (!gen) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no heap dump of %" G_GUINT64_FORMAT " bytes",
                    size);
        return FALSE;
    }
    SimGenSource src = sim_gen_hprof(gen);
    ok = sim_gen_write_file(&src, path, sha256, error);
    hprof_gen_free(gen);
    return ok;
}

static void send_hpdu_result(SimConn *c, uint32_t id, uint8_t result)
{
    sim_conn_send_reply(c, id, T('H', 'P', 'D', 'U'), &result, 1);
}

void sim_handle_hpdu(SimConn *c, uint32_t id, ddm_reader *payload)
{
    SimVm *vm = c->vm;
    const SimConfig *cfg = &vm->world->cfg;
    char *device_path, *local = NULL, *base;
    char sha[65];
    GError *err = NULL;

    if (cfg->hprof_mode == SIM_HPROF_NONE) {
        sim_conn_send_fail(c, id, 1, "HPDU not supported");
        return;
    }
    device_path = ddm_read_lstr(payload);
    if (!device_path || !ddm_reader_ok(payload) || !*device_path) {
        free(device_path);
        sim_conn_send_fail(c, id, 1, "Malformed HPDU request");
        return;
    }
    if (cfg->hprof_fault == SIM_HPROF_FAULT_FAIL) {
        send_hpdu_result(c, id, 0xFF);
        free(device_path);
        return;
    }
    if (cfg->device_dir) {
        base = g_path_get_basename(device_path);
        if (strcmp(base, "/") != 0 && strcmp(base, ".") != 0 && strcmp(base, "..") != 0)
            local = g_build_filename(cfg->device_dir, base, NULL);
        g_free(base);
        if (!local) {
            g_message("pid %u: HPDU path %s has no file name", vm->pid, device_path);
            send_hpdu_result(c, id, 0xFF);
            free(device_path);
            return;
        }
    }
    uint32_t gen_seed = dump_seed(vm);
    if (!sim_hprof_write_file(local, cfg->hprof_size, gen_seed, vm->package_name, sha, &err)) {
        g_message("pid %u: HPDU %s failed: %s", vm->pid, device_path, err->message);
        g_error_free(err);
        send_hpdu_result(c, id, 0xFF);
    } else {
        record_dump(vm, TRUE, cfg->hprof_size, sha, device_path, cfg->hprof_fault, gen_seed);
        send_hpdu_result(c, id, 0);
    }
    g_free(local);
    free(device_path);
}
