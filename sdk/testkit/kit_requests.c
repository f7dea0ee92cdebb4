/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's requests: what the plugin sends, the replies, failures and
 * timeouts a test completes them with (each at most once), injected errors
 * and the client's working directory.
 */
#include "kit-private.h"

int fh_request(ddm_plugin *self, ddm_vm *vm, uint32_t type, const void *data, size_t len,
               unsigned timeout_ms, ddm_reply_fn fn, void *ud, uint32_t *id_out)
{
    fake_host *fh = host_of(self);
    fake_request *rq;
    ddm_chunk_info ci;
    assert_non_null(vm);
    if (len && !data)
        fail_msg("fake-host: request with len %zu and no data", len);
    if (fh->request_error && (!fh->request_error_type || fh->request_error_type == type))
        return fh->request_error;
    if (vm->gone || !vm->ready || !vm->info.ddm)
        return -ENOTCONN;
    /* As the core: --chunks governs owned types; request-only types pass. */
    if (!fh_type_enabled(fh, type) && fake_host_owns(fh, type))
        return -EPERM;
    /* The core's default bounds: the packet (19 header bytes and the
     * payload) and the pending requests per VM. */
    if (len > DDM_REQUEST_MAX_PACKET - 19)
        return -EMSGSIZE;
    if (fake_host_n_pending(fh, vm, 0) >= (int)DDM_REQUEST_MAX_PENDING ||
        fh->requests.n >= FH_MAX_ITEMS)
        return -ENOSPC;
    rq = xcalloc(1, sizeof *rq);
    rq->vm = vm;
    rq->type = type;
    rq->data = exact_copy(data, len);
    rq->len = len;
    rq->timeout_ms = timeout_ms;
    rq->fn = fn;
    rq->ud = ud;
    rq->packet_id = 0x40000000u + fh->next_packet_id++;
    vec_push(&fh->requests, rq);
    if (id_out)
        *id_out = rq->packet_id;
    memset(&ci, 0, sizeof ci);
    ci.type = type;
    ci.packet_id = rq->packet_id;
    ci.origin = DDM_ORIGIN_REQUEST;
    fh_run_taps(fh, vm, &ci, rq->data, len);
    return 0;
}

size_t fake_host_n_requests(fake_host *fh)
{
    return fh->requests.n;
}

const fake_request *fake_host_request(fake_host *fh, size_t idx)
{
    return idx < fh->requests.n ? fh->requests.v[idx] : NULL;
}

int fake_host_find_request(fake_host *fh, ddm_vm *vm, uint32_t type, size_t from)
{
    size_t i;
    for (i = from; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (rq->type == type && (!vm || rq->vm == vm))
            return (int)i;
    }
    return -1;
}

int fake_host_n_pending(fake_host *fh, ddm_vm *vm, uint32_t type)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (!rq->completed && (!type || rq->type == type) && (!vm || rq->vm == vm))
            n++;
    }
    return n;
}

void fh_complete(fake_host *fh, fake_request *rq, const ddm_reply *reply)
{
    ddm_reply r = *reply;
    uint8_t *copy = NULL;
    char *msg = NULL;
    if (rq->completed)
        fail_msg("fake-host: request %08" PRIx32 " completed twice", rq->packet_id);
    rq->completed = 1;
    if (r.status == DDM_REPLY_CHUNK) {
        copy = exact_copy(reply->data, reply->len);
        r.data = copy;
        msg = xstrdup(reply->fail_msg);
        r.fail_msg = msg;
    } else {
        r.data = NULL;
        r.len = 0;
    }
    if (rq->fn) {
        rq->fn(&fh->plugin, rq->vm, &r, rq->ud);
    } else if (r.status == DDM_REPLY_CHUNK && !rq->vm->gone) {
        ddm_chunk_info ci;
        memset(&ci, 0, sizeof ci);
        ci.type = r.type;
        ci.packet_id = rq->packet_id;
        ci.origin = DDM_ORIGIN_REPLY;
        ci.request_type = rq->type;
        fh_run_taps(fh, rq->vm, &ci, copy, r.len);
        (void)fh_run_owner(fh, rq->vm, &ci, copy, r.len);
    }
    free(copy);
    free(msg);
}

void fake_host_complete_request(fake_host *fh, size_t idx, const ddm_reply *reply)
{
    if (idx >= fh->requests.n)
        fail_msg("fake-host: no request %zu (have %zu)", idx, fh->requests.n);
    assert_non_null(reply);
    fh_complete(fh, fh->requests.v[idx], reply);
}

void fake_host_complete_chunk(fake_host *fh, size_t idx, uint32_t type, const void *data,
                              size_t len)
{
    ddm_reply r;
    memset(&r, 0, sizeof r);
    r.status = DDM_REPLY_CHUNK;
    r.type = type;
    r.data = data;
    r.len = len;
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_complete_status(fake_host *fh, size_t idx, ddm_reply_status status)
{
    ddm_reply r;
    memset(&r, 0, sizeof r);
    r.status = status;
    if (status == DDM_REPLY_ERROR)
        r.jdwp_error = 99; /* INVALID_METHODID... any non-zero code */
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_complete_fail(fake_host *fh, size_t idx, uint32_t code, const char *msg)
{
    /* build the FAIL payload as the wire has it: u4 code, u4 units, str16 */
    uint8_t buf[512];
    size_t units = msg ? ddm_utf8_to_utf16be(msg, NULL, 0) : 0;
    ddm_reply r;
    assert_true(units * 2 + 8 <= sizeof buf);
    ddm_put_u4(buf, code);
    ddm_put_u4(buf + 4, (uint32_t)units);
    if (msg)
        ddm_utf8_to_utf16be(msg, buf + 8, units * 2);
    memset(&r, 0, sizeof r);
    r.status = DDM_REPLY_CHUNK;
    r.type = DDM_CHUNK_FAIL;
    r.data = buf;
    r.len = 8 + units * 2;
    r.fail_code = code;
    r.fail_msg = msg;
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_set_client_cwd(fake_host *fh, const char *dir)
{
    free(fh->client_cwd);
    fh->client_cwd = dir ? strdup(dir) : NULL;
}

void fake_host_set_request_error(fake_host *fh, int err)
{
    fh->request_error = err;
    fh->request_error_type = 0;
}

void fake_host_set_request_error_for(fake_host *fh, uint32_t type, int err)
{
    fh->request_error = err;
    fh->request_error_type = type;
}
