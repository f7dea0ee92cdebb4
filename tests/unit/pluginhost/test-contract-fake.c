/* SPDX-License-Identifier: Apache-2.0
 *
 * The contract scenarios (contract.c) on the SDK's test kit: a ct_driver
 * over <ddmon/testkit.h>. Everything is synchronous here: pump fires the
 * timers once, expire_requests completes what is pending with TIMEOUT.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/testkit.h>

#include "contract.h"

struct ct_host {
    fake_host *fh;
    size_t taken;      /* requests handed to the scenario so far */
    size_t jdwp_taken; /* JDWP requests handed over so far (1.2) */
    ddm_cmd *last_cmd;
    ddm_vm *vms[16];   /* added so far, for server_stops (1.8) */
    size_t n_vms;
};

static ct_host *f_new(void)
{
    ct_host *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->fh = fake_host_new();
    return h;
}

static void f_free(ct_host *h)
{
    fake_host_free(h->fh);
    free(h);
}

static void f_set_option(ct_host *h, const char *key, const char *value)
{
    fake_host_set_config(h->fh, key, value);
}

static int f_load(ct_host *h, const ddm_plugin_desc *desc)
{
    return fake_host_load(h->fh, desc);
}

static ddm_vm *f_add_vm(ct_host *h, const char *key, uint32_t pid, const char *app)
{
    ddm_vm_info info;
    memset(&info, 0, sizeof info);
    info.key = key;
    info.pid = pid;
    info.app_name = app;
    info.ddm = 1;
    info.user_id = -1;
    info.native_debuggable = -1;
    ddm_vm *vm = fake_host_add_vm(h->fh, &info);
    assert_true(h->n_vms < sizeof h->vms / sizeof h->vms[0]);
    h->vms[h->n_vms++] = vm;
    return vm;
}

/* As the core: the hooks, then every VM goes (the kit's GONE ends the
 * pending requests with VM_GONE first). */
static void f_server_stops(ct_host *h)
{
    size_t i;
    (void)fake_host_stopping(h->fh);
    for (i = 0; i < h->n_vms; i++)
        if (!fake_vm_gone(h->vms[i]))
            fake_host_vm_event(h->fh, h->vms[i], DDM_VM_GONE);
}

static void f_vm_ready(ct_host *h, ddm_vm *vm)
{
    fake_host_vm_event(h->fh, vm, DDM_VM_READY);
}

static void f_vm_gone(ct_host *h, ddm_vm *vm)
{
    fake_host_vm_event(h->fh, vm, DDM_VM_GONE);
}

static void f_send_event(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len)
{
    (void)fake_host_deliver(h->fh, vm, type, DDM_ORIGIN_EVENT, data, len);
}

static int f_take_request(ct_host *h, ddm_vm *vm, uint32_t *type, uint32_t *id, uint8_t *buf,
                          size_t cap, size_t *len)
{
    while (h->taken < fake_host_n_requests(h->fh)) {
        const fake_request *rq = fake_host_request(h->fh, h->taken++);
        if (rq->vm != vm)
            continue;
        *type = rq->type;
        *id = (uint32_t)(h->taken - 1); /* the kit completes by index */
        *len = rq->len;
        if (rq->len)
            memcpy(buf, rq->data, rq->len < cap ? rq->len : cap);
        return 1;
    }
    return 0;
}

static void f_reply_chunk(ct_host *h, ddm_vm *vm, uint32_t id, uint32_t type, const void *data,
                          size_t len)
{
    (void)vm;
    fake_host_complete_chunk(h->fh, id, type, data, len);
}

static void f_expire_requests(ct_host *h)
{
    size_t i;
    for (i = 0; i < fake_host_n_requests(h->fh); i++)
        if (!fake_host_request(h->fh, i)->completed)
            fake_host_complete_status(h->fh, i, DDM_REPLY_TIMEOUT);
}

static int f_pump(ct_host *h)
{
    return fake_host_fire_timers(h->fh) > 0;
}

static void f_run_command(ct_host *h, int argc, const char *const *argv)
{
    h->last_cmd = fake_host_run_command(h->fh, argc, argv);
    assert_non_null(h->last_cmd);
}

static int f_cmd_done(ct_host *h, ddm_cmd_status *status, char *message, size_t cap)
{
    if (!h->last_cmd || !fake_cmd_finished(h->last_cmd))
        return 0;
    *status = fake_cmd_status(h->last_cmd);
    snprintf(message, cap, "%s", fake_cmd_message(h->last_cmd) ? fake_cmd_message(h->last_cmd) : "");
    return 1;
}

static int64_t f_cmd_result_int(ct_host *h, const char *key)
{
    ddm_view *v = h->last_cmd ? fake_cmd_result(h->last_cmd) : NULL;
    return v && fake_view_has_field(v, key) ? fake_view_field_int(v, key) : -1;
}

static int f_view_rows(ct_host *h, ddm_vm *vm, const char *name)
{
    ddm_view *v = fake_view_find(h->fh, vm, name);
    if (!v)
        return -1;
    return fake_view_kind(v) == DDM_VIEW_TABLE ? fake_view_n_rows(v) : 0;
}

static int f_view_field_int(ct_host *h, ddm_vm *vm, const char *name, const char *key,
                            int64_t *out)
{
    ddm_view *v = fake_view_find(h->fh, vm, name);
    if (!v || !fake_view_has_field(v, key))
        return -1;
    *out = fake_view_field_int(v, key);
    return 0;
}

static long f_view_field_len(ct_host *h, ddm_vm *vm, const char *name, const char *key)
{
    ddm_view *v = fake_view_find(h->fh, vm, name);
    const char *s = v ? fake_view_field_str(v, key) : NULL;
    return s ? (long)strlen(s) : -1;
}

/* As the core streams it: the kit's fake_host_stream has the same endings;
 * pieces of 64 KiB, as the session's reader hands them over at most. */
static void f_send_stream(ct_host *h, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                          int end_status)
{
    (void)fake_host_stream(h->fh, vm, type, data, len, 65536, end_status);
    if (end_status == -EPIPE)
        fake_host_vm_event(h->fh, vm, DDM_VM_GONE);
}

static int f_cmd_progress(ct_host *h, uint64_t *done, uint64_t *total, char *unit, size_t cap)
{
    if (!h->last_cmd || !fake_cmd_progress(h->last_cmd, done, total))
        return 0;
    snprintf(unit, cap, "%s", fake_cmd_progress_unit(h->last_cmd));
    return fake_cmd_progress_count(h->last_cmd);
}

/* A plain JVM (1.2): added and known at once, as the core makes it. */
static ddm_vm *f_add_plain_vm(ct_host *h, const char *key, uint32_t pid, const char *app)
{
    ddm_vm_info info;
    ddm_vm *vm;
    memset(&info, 0, sizeof info);
    info.key = key;
    info.pid = pid;
    info.app_name = app;
    info.user_id = -1;
    info.native_debuggable = -1;
    vm = fake_host_add_plain_vm(h->fh, &info);
    fake_host_vm_event(h->fh, vm, DDM_VM_READY);
    return vm;
}

static int f_take_jdwp(ct_host *h, ddm_vm *vm, uint8_t *cmdset, uint8_t *cmd, uint32_t *id,
                       uint8_t *buf, size_t cap, size_t *len)
{
    while (h->jdwp_taken < fake_host_n_jdwp_requests(h->fh)) {
        const fake_jdwp_request *rq = fake_host_jdwp_request(h->fh, h->jdwp_taken++);
        if (rq->vm != vm)
            continue;
        *cmdset = rq->cmdset;
        *cmd = rq->cmd;
        *id = (uint32_t)(h->jdwp_taken - 1); /* the kit completes by index */
        *len = rq->len;
        if (rq->len)
            memcpy(buf, rq->data, rq->len < cap ? rq->len : cap);
        return 1;
    }
    return 0;
}

static void f_reply_jdwp(ct_host *h, ddm_vm *vm, uint32_t id, uint16_t error, const void *data,
                         size_t len)
{
    (void)vm;
    fake_host_complete_jdwp(h->fh, id, error, data, len);
}

static void f_set_debugger(ct_host *h, ddm_vm *vm, int attached)
{
    fake_host_set_debugger(h->fh, vm, attached);
}

static int f_watch_begins(ct_host *h)
{
    return fake_host_watch_begins(h->fh);
}

static void f_watch_vm_list(ct_host *h, int on)
{
    fake_host_set_vm_list_watchers(h->fh, on ? 1 : 0);
}

/* The kit has no watch of one view before it exists: default watchers
 * count every view (made when the VM turns ready, testkit.h). */
static void f_watch_declared(ct_host *h, const char *name, const char *vm_key)
{
    (void)name;
    (void)vm_key;
    fake_host_set_default_watchers(h->fh, 1);
}

static void f_linger_passes(ct_host *h)
{
    (void)fake_host_unmake_unwatched(h->fh);
}

static const ct_driver fake_driver = {
    "fake",          f_new,           f_free,       f_set_option,     f_load,
    f_add_vm,        f_vm_ready,      f_vm_gone,    f_send_event,     f_take_request,
    f_reply_chunk,   f_expire_requests, f_pump,     f_run_command,    f_cmd_done,
    f_cmd_result_int, f_view_rows,    f_view_field_int, f_view_field_len, f_send_stream,
    f_cmd_progress,  f_add_plain_vm,  f_take_jdwp,  f_reply_jdwp,     f_set_debugger,
    f_watch_begins,  f_watch_vm_list, f_watch_declared, f_linger_passes, f_server_stops,
};

int main(void)
{
    return contract_run(&fake_driver, NULL, 0);
}
