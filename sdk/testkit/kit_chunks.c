/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's chunks: the chunk filter (fake_host_disable_chunk,
 * fake_host_only_chunks, chunk_enabled), delivering a chunk to its taps
 * and owner (fake_host_deliver; replies reuse fh_run_taps/fh_run_owner),
 * and streams (1.2): a whole chunk to a stream owner is begin, one data,
 * end, as in the core's registry; fake_host_stream plays a streamed event
 * as core/session/vm_stream.c hands it over (pieces, the -EPROTO, -EPIPE
 * and -EFBIG endings).
 */
#include "kit-private.h"

static int type_in(ptrvec *a, uint32_t type)
{
    size_t i;
    for (i = 0; i < a->n; i++)
        if (*(uint32_t *)a->v[i] == type)
            return 1;
    return 0;
}

static void type_push(ptrvec *a, uint32_t type)
{
    uint32_t *p = xcalloc(1, sizeof *p);
    *p = type;
    vec_push(a, p);
}

void fh_types_clear(ptrvec *a)
{
    size_t i;
    for (i = 0; i < a->n; i++)
        free(a->v[i]);
    vec_clear(a);
}

int fh_type_enabled(fake_host *fh, uint32_t type)
{
    if (fh->only_mode && !type_in(&fh->enabled, type))
        return 0;
    return !type_in(&fh->disabled, type);
}

void fake_host_disable_chunk(fake_host *fh, uint32_t type)
{
    if (!type_in(&fh->disabled, type))
        type_push(&fh->disabled, type);
}

void fake_host_only_chunks(fake_host *fh, const uint32_t *types, size_t n)
{
    size_t i;
    fh_types_clear(&fh->enabled);
    fh_types_clear(&fh->disabled);
    fh->only_mode = 1;
    for (i = 0; i < n; i++)
        type_push(&fh->enabled, types[i]);
}

int fh_chunk_enabled(ddm_plugin *self, uint32_t type)
{
    return fh_type_enabled(host_of(self), type);
}
/* --------------------------------------------------------------- chunks */

void fh_run_taps(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                 size_t len)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_TAP && (r->type == 0 || r->type == ci->type))
            (void)r->chunk_fn(&fh->plugin, vm, ci, data, len, r->ud);
    }
}

/* A chunk that came whole, to a stream owner: a stream of one piece (as
 * the core's registry: begin; unless it refused, one data call if there
 * are bytes, then end with data's error or 0 and the bytes handed over). */
static int run_stream_whole(fake_host *fh, fh_reg *r, ddm_vm *vm, const ddm_chunk_info *ci,
                            const uint8_t *data, size_t len)
{
    int rc = r->stream.begin(&fh->plugin, vm, ci, (uint64_t)len, r->ud);
    int drc = 0;
    if (rc < 0)
        return DDM_DECLINED; /* refused: the plugin's choice, not a failure */
    if (len > 0)
        drc = r->stream.data(&fh->plugin, vm, data, len, r->ud);
    r->stream.end(&fh->plugin, vm, drc < 0 ? drc : 0, (uint64_t)len, r->ud);
    return drc < 0 ? drc : DDM_OK;
}

int fh_run_owner(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                 size_t len)
{
    char n[5];
    fh_reg *r = fh_find_owner(fh, ci->type);
    int rc;
    if (!r) {
        fh_logf(fh, DDM_LOG_DEBUG, "fake-host: unhandled chunk %s", ddm_chunk_name(ci->type, n));
        return DDM_DECLINED;
    }
    if (r->kind == FH_REG_STREAM)
        rc = run_stream_whole(fh, r, vm, ci, data ? data : (const uint8_t *)"", len);
    else
        rc = r->chunk_fn(&fh->plugin, vm, ci, data, len, r->ud);
    if (rc < 0)
        fh_logf(fh, DDM_LOG_DEBUG, "fake-host: handler for %s returned %d",
                ddm_chunk_name(ci->type, n), rc);
    return rc;
}

int fake_host_deliver(fake_host *fh, ddm_vm *vm, uint32_t type, ddm_chunk_origin origin,
                      const void *data, size_t len)
{
    ddm_chunk_info ci;
    uint8_t *copy = exact_copy(data, len);
    int rc;
    assert_non_null(vm);
    assert_false(vm->gone);
    memset(&ci, 0, sizeof ci);
    ci.type = type;
    ci.packet_id = 0x10000000u + fh->next_event_id++;
    ci.origin = origin;
    fh_run_taps(fh, vm, &ci, copy, len);
    rc = fh_run_owner(fh, vm, &ci, copy, len);
    free(copy);
    return rc;
}

/* -------------------------------------------------------------- streams */

int fake_host_stream(fake_host *fh, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                     size_t piece, int end_status)
{
    const uint8_t *bytes = data;
    ddm_chunk_info ci;
    fh_reg *r;
    size_t arrive, off = 0;
    int rc;
    char n[5];

    assert_non_null(vm);
    assert_false(vm->gone);
    assert_true(len == 0 || data != NULL);
    if (end_status > 0)
        fail_msg("fake-host: fake_host_stream: end_status %d is not 0 or a negative errno",
                 end_status);
    r = fh_find_owner(fh, type);
    if (!r || r->kind != FH_REG_STREAM || !fh_type_enabled(fh, type)) {
        /* the core streams only to a stream owner of an enabled type */
        fh_logf(fh, DDM_LOG_DEBUG, "fake-host: stream %s: no stream owner",
                ddm_chunk_name(type, n));
        return DDM_DECLINED;
    }
    memset(&ci, 0, sizeof ci);
    ci.type = type;
    ci.packet_id = 0x10000000u + fh->next_event_id++;
    ci.origin = DDM_ORIGIN_EVENT;
    rc = r->stream.begin(&fh->plugin, vm, &ci, (uint64_t)len, r->ud);
    if (rc < 0)
        return rc; /* refused: its bytes are skipped, nothing more is called */
    if (end_status == -EFBIG) {
        /* past --max-stream: the owner hears the end at once, no data */
        r->stream.end(&fh->plugin, vm, -EFBIG, 0, r->ud);
        return -EFBIG;
    }
    arrive = end_status ? len / 2 : len;
    if (piece == 0)
        piece = arrive ? arrive : 1;
    while (off < arrive) {
        size_t k = arrive - off < piece ? arrive - off : piece;
        uint8_t *copy = exact_copy(bytes + off, k); /* ASan sees an over-read */
        rc = r->stream.data(&fh->plugin, vm, copy, k, r->ud);
        free(copy);
        off += k;
        if (rc < 0) {
            /* the plugin stops it: end follows at once with its error */
            r->stream.end(&fh->plugin, vm, rc, (uint64_t)off, r->ud);
            return rc;
        }
    }
    r->stream.end(&fh->plugin, vm, end_status, (uint64_t)off, r->ud);
    return end_status;
}
