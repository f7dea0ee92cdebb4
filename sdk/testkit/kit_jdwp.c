/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's plain JVMs (ABI 1.2): the walk over them and jdwp_request
 * with the core's rules (core/pluginhost/host.c, core/session/vm_request.c):
 * the SDK's allow-list (ddm_jdwp_command_allowed, the list the core uses),
 * plain JVMs only, nothing while a debugger is attached, one thread held
 * suspended per VM; replies the test gives, each exactly once.
 */
#include "kit-private.h"

#define JDWP_SET_THREAD 11
#define JDWP_THREAD_SUSPEND 2
#define JDWP_THREAD_RESUME 3
#define JDWP_HEADER_LEN 11

/* As the core: the plain JVMs whose READY was delivered and whose GONE has
 * not begun, by index (VMs stay allocated until fake_host_free). */
size_t fh_foreach_plain_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud)
{
    fake_host *fh = host_of(self);
    size_t i, n = fh->vms.n, calls = 0;
    assert_non_null(fn);
    for (i = 0; i < n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!vm->ready || vm->gone || !vm->plain)
            continue;
        calls++;
        if (fn(self, vm, ud) != 0)
            break;
    }
    return calls;
}

static void release_held(ddm_vm *vm)
{
    free(vm->held_thread);
    vm->held_thread = NULL;
    vm->held_len = 0;
    vm->held = 0;
}

int fh_jdwp_request(ddm_plugin *self, ddm_vm *vm, uint8_t cmdset, uint8_t cmd, const void *data,
                    size_t len, unsigned timeout_ms, ddm_jdwp_reply_fn fn, void *ud)
{
    fake_host *fh = host_of(self);
    fake_jdwp_request *rq;
    int suspend = cmdset == JDWP_SET_THREAD && cmd == JDWP_THREAD_SUSPEND;
    int resume = cmdset == JDWP_SET_THREAD && cmd == JDWP_THREAD_RESUME;
    assert_non_null(vm);
    if (len && !data)
        fail_msg("fake-host: jdwp_request with len %zu and no data", len);
    if (!fn) {
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: jdwp_request without a reply function");
        return -EINVAL;
    }
    if (!ddm_jdwp_command_allowed(cmdset, cmd)) {
        fh_logf(fh, DDM_LOG_DEBUG, "fake-host: JDWP %u/%u refused: not on the read-only allow-list",
                (unsigned)cmdset, (unsigned)cmd);
        return -EPERM;
    }
    if (vm->gone || !vm->ready || !vm->plain)
        return -ENOTCONN;
    if (suspend && vm->held)
        return -EBUSY; /* one held thread per VM */
    if (resume) {
        /* only the thread this plugin holds */
        if (!vm->held || vm->held_len != len || (len && memcmp(vm->held_thread, data, len) != 0))
            return -EPERM;
    } else if (vm->info.debugger) {
        return -EBUSY;
    }
    if (len > DDM_REQUEST_MAX_PACKET - JDWP_HEADER_LEN)
        return -EMSGSIZE;
    if (fake_host_n_jdwp_pending(fh, vm) >= (int)DDM_REQUEST_MAX_PENDING ||
        fh->jdwp.n >= FH_MAX_ITEMS)
        return -ENOSPC;
    rq = xcalloc(1, sizeof *rq);
    rq->vm = vm;
    rq->cmdset = cmdset;
    rq->cmd = cmd;
    rq->data = exact_copy(data, len);
    rq->len = len;
    rq->timeout_ms = timeout_ms;
    rq->fn = fn;
    rq->ud = ud;
    rq->packet_id = 0x40000000u + fh->next_packet_id++;
    vec_push(&fh->jdwp, rq);
    if (suspend) {
        release_held(vm);
        vm->held = 1;
        vm->held_thread = exact_copy(data, len);
        vm->held_len = len;
    } else if (resume) {
        release_held(vm);
    }
    return 0;
}

static void jdwp_complete(fake_host *fh, fake_jdwp_request *rq, const ddm_jdwp_reply *reply)
{
    ddm_jdwp_reply r = *reply;
    uint8_t *copy = NULL;
    if (rq->completed)
        fail_msg("fake-host: JDWP request %08" PRIx32 " (%u/%u) completed twice", rq->packet_id,
                 (unsigned)rq->cmdset, (unsigned)rq->cmd);
    rq->completed = 1;
    if (r.status == DDM_REPLY_CHUNK) {
        copy = exact_copy(reply->data, reply->len);
        r.data = copy;
    } else {
        r.data = NULL;
        r.len = 0;
    }
    /* A Suspend that failed holds nothing. */
    if (r.status == DDM_REPLY_ERROR && rq->cmdset == JDWP_SET_THREAD &&
        rq->cmd == JDWP_THREAD_SUSPEND && rq->vm->held)
        release_held(rq->vm);
    rq->fn(&fh->plugin, rq->vm, &r, rq->ud);
    free(copy);
}

void fh_jdwp_vm_gone(fake_host *fh, ddm_vm *vm)
{
    size_t i;
    for (i = 0; i < fh->jdwp.n; i++) {
        fake_jdwp_request *rq = fh->jdwp.v[i];
        if (rq->vm == vm && !rq->completed) {
            ddm_jdwp_reply r;
            memset(&r, 0, sizeof r);
            r.status = DDM_REPLY_VM_GONE;
            jdwp_complete(fh, rq, &r);
        }
    }
    release_held(vm);
}

void fh_jdwp_free_all(fake_host *fh)
{
    size_t i;
    for (i = 0; i < fh->jdwp.n; i++) {
        fake_jdwp_request *rq = fh->jdwp.v[i];
        free(rq->data);
        free(rq);
    }
    vec_clear(&fh->jdwp);
    for (i = 0; i < fh->vms.n; i++)
        release_held(fh->vms.v[i]);
}

size_t fake_host_n_jdwp_requests(fake_host *fh)
{
    return fh->jdwp.n;
}

const fake_jdwp_request *fake_host_jdwp_request(fake_host *fh, size_t idx)
{
    return idx < fh->jdwp.n ? fh->jdwp.v[idx] : NULL;
}

int fake_host_find_jdwp_request(fake_host *fh, ddm_vm *vm, uint8_t cmdset, uint8_t cmd,
                                size_t from)
{
    size_t i;
    for (i = from; i < fh->jdwp.n; i++) {
        fake_jdwp_request *rq = fh->jdwp.v[i];
        if (rq->cmdset == cmdset && rq->cmd == cmd && (!vm || rq->vm == vm))
            return (int)i;
    }
    return -1;
}

int fake_host_n_jdwp_pending(fake_host *fh, ddm_vm *vm)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->jdwp.n; i++) {
        fake_jdwp_request *rq = fh->jdwp.v[i];
        if (!rq->completed && (!vm || rq->vm == vm))
            n++;
    }
    return n;
}

static fake_jdwp_request *jdwp_at(fake_host *fh, size_t idx)
{
    if (idx >= fh->jdwp.n)
        fail_msg("fake-host: no JDWP request %zu (have %zu)", idx, fh->jdwp.n);
    return fh->jdwp.v[idx];
}

void fake_host_complete_jdwp(fake_host *fh, size_t idx, uint16_t error, const void *data,
                             size_t len)
{
    ddm_jdwp_reply r;
    fake_jdwp_request *rq = jdwp_at(fh, idx);
    memset(&r, 0, sizeof r);
    if (error) {
        r.status = DDM_REPLY_ERROR;
        r.jdwp_error = error;
    } else {
        if (len && !data)
            fail_msg("fake-host: JDWP reply with len %zu and no data", len);
        r.status = DDM_REPLY_CHUNK;
        r.data = data;
        r.len = len;
    }
    jdwp_complete(fh, rq, &r);
}

void fake_host_complete_jdwp_status(fake_host *fh, size_t idx, ddm_reply_status status)
{
    ddm_jdwp_reply r;
    fake_jdwp_request *rq = jdwp_at(fh, idx);
    if (status == DDM_REPLY_CHUNK || status == DDM_REPLY_EMPTY) {
        fake_host_complete_jdwp(fh, idx, 0, NULL, 0);
        return;
    }
    memset(&r, 0, sizeof r);
    r.status = status;
    if (status == DDM_REPLY_ERROR)
        r.jdwp_error = 99;
    jdwp_complete(fh, rq, &r);
}

const uint8_t *fake_host_jdwp_held(fake_host *fh, ddm_vm *vm, size_t *len)
{
    (void)fh;
    assert_non_null(vm);
    if (len)
        *len = vm->held ? vm->held_len : 0;
    if (!vm->held)
        return NULL;
    /* a 0-byte id is held too: return a non-NULL pointer for it */
    return vm->held_thread ? vm->held_thread : (const uint8_t *)"";
}
