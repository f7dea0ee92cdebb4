/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's chunks: the chunk filter (fake_host_disable_chunk,
 * fake_host_only_chunks, chunk_enabled) and delivering a chunk to its taps
 * and owner (fake_host_deliver; replies reuse fh_run_taps/fh_run_owner).
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

int fh_run_owner(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                 size_t len)
{
    size_t i;
    char n[5];
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_OWNER && r->type == ci->type) {
            int rc = r->chunk_fn(&fh->plugin, vm, ci, data, len, r->ud);
            if (rc < 0)
                fh_logf(fh, DDM_LOG_DEBUG, "fake-host: handler for %s returned %d",
                        ddm_chunk_name(ci->type, n), rc);
            return rc;
        }
    }
    fh_logf(fh, DDM_LOG_DEBUG, "fake-host: unhandled chunk %s", ddm_chunk_name(ci->type, n));
    return DDM_DECLINED;
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
