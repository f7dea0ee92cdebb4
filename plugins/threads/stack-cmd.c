/* SPDX-License-Identifier: Apache-2.0
 *
 * threads: `ddmon stack PID THREAD_ID` sends STKL (u4 thread id) and
 * answers with the frames as a table (thread, frame, class, method, file,
 * line: the number, null when unknown; native: a native method's frame);
 * the same table is published
 * as the VM's "stack" view (the last stack asked for). A FAIL reply
 * finishes the command as FAILED with the VM's message; a plain JVM is
 * refused at once, pointing at jvm-stack (JDWP's way to its stacks).
 * Ownership: stack_call (the request's ud) is freed by the reply callback,
 * called exactly once; the ddm_cmd stays valid until cmd_finish.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "../common/cmdutil.h"
#include "threads.h"

static const ddm_column k_stack_columns[] = {
    {"thread", DDM_VAL_INT, NULL}, {"frame", DDM_VAL_INT, NULL}, {"class", DDM_VAL_STR, NULL},
    {"method", DDM_VAL_STR, NULL}, {"file", DDM_VAL_STR, NULL},  {"line", DDM_VAL_INT, NULL},
    {"native", DDM_VAL_BOOL, NULL},
};
#define N_STACK_COLUMNS (sizeof k_stack_columns / sizeof k_stack_columns[0])

typedef struct stack_call {
    threads_plugin *pl;
    ddm_cmd *cmd;
    uint32_t thread_id;
    int after_then; /* sent while THEN was unanswered: its reply ends that wait */
} stack_call;

static void fill_stack(const ddm_host *h, ddm_view *v, const stkl_trace *t)
{
    uint32_t i;
    h->view_begin(v);
    for (i = 0; i < t->n; i++) {
        const stkl_frame *f = &t->frames[i];
        h->view_row(v);
        h->view_int(v, t->thread_id);
        h->view_int(v, i);
        h->view_str(v, f->class_name);
        h->view_str(v, f->method);
        h->view_str(v, f->file);
        if (f->line >= 0)
            h->view_int(v, f->line);
        else
            h->view_str(v, NULL); /* -1 unknown, -2 native: null, native says which */
        h->view_bool(v, f->line == -2);
    }
    h->view_commit(v);
}

static void publish_stack_view(threads_plugin *pl, ddm_vm *vm, const stkl_trace *t)
{
    const ddm_host *h = pl->host;
    threads_vm *st = threads_vm_state(pl, vm);
    if (!st)
        return;
    if (!st->stack_view) {
        st->stack_view = h->view_new(pl->self, vm, "stack", DDM_VIEW_TABLE, "Stack of a thread");
        if (!st->stack_view) {
            (void)threads_vm_settle(st);
            return;
        }
        h->view_set_columns(st->stack_view, k_stack_columns, N_STACK_COLUMNS);
    }
    fill_stack(h, st->stack_view, t);
}

static void on_stkl_chunk(stack_call *call, ddm_vm *vm, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    stkl_trace t;
    char why[128], msg[192];
    ddm_view *res;
    int rc = threads_parse_stkl(reply->data, reply->len, &t, why, sizeof why);
    if (rc != 0) {
        h->log(call->pl->self, DDM_LOG_WARNING, "STKL reply of %zu bytes rejected: %s",
               reply->len, rc == -ENOMEM ? "out of memory" : why);
        snprintf(msg, sizeof msg, "malformed STKL reply: %s",
                 rc == -ENOMEM ? "out of memory" : why);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return;
    }
    if (t.thread_id != call->thread_id)
        h->log(call->pl->self, DDM_LOG_INFO,
               "STKL asked for thread %" PRIu32 ", reply names %" PRIu32, call->thread_id,
               t.thread_id);
    res = h->cmd_result(call->cmd, DDM_VIEW_TABLE, "Stack");
    if (res) {
        h->view_set_columns(res, k_stack_columns, N_STACK_COLUMNS);
        fill_stack(h, res, &t);
    }
    publish_stack_view(call->pl, vm, &t);
    snprintf(msg, sizeof msg, "thread %" PRIu32 ": %" PRIu32 " frame%s", t.thread_id, t.n,
             t.n == 1 ? "" : "s");
    threads_stkl_clear(&t);
    h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
}

static void stkl_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    stack_call *call = ud;
    const ddm_host *h = call->pl->host;
    char msg[512], tname[5];

    if (reply->status == DDM_REPLY_CHUNK && reply->type == THREADS_CHUNK_STKL) {
        on_stkl_chunk(call, vm, reply);
    } else if (reply->status == DDM_REPLY_CHUNK && reply->type != DDM_CHUNK_FAIL) {
        snprintf(msg, sizeof msg, "unexpected reply chunk %s", ddm_chunk_name(reply->type, tname));
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
    } else if (reply->status == DDM_REPLY_EMPTY) {
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, "the VM sent no stack (no such thread?)");
    } else {
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, ddm_reply_describe(reply, msg, sizeof msg));
    }
    if (call->after_then && threads_reply_came(reply)) {
        threads_vm *st = threads_vm_find(call->pl, vm);
        if (st) {
            threads_then_passed(st);
            (void)threads_vm_settle(st); /* the table went before this answer */
        }
    }
    (void)self;
    free(call);
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long long v;
    if (!s || !*s || *s == '-')
        return -1;
    v = strtoull(s, &end, 0);
    if (*end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int cmd_stack(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    threads_plugin *pl = ud;
    const ddm_host *h = pl->host;
    threads_vm *st;
    stack_call *call;
    uint32_t id;
    uint8_t payload[4];
    char msg[256];
    ddm_vm *vm;
    int rc;

    if (argc != 3 || parse_u32(argv[2], &id) != 0) {
        h->cmd_finish(cmd, DDM_CMD_USAGE,
                      "usage: stack PID THREAD_ID (the VM thread id of the threads view)");
        return 0;
    }
    vm = h->cmd_find_vm(cmd, argv[1]);
    if (!vm)
        return 0; /* finished, with the core's message */
    if (plugin_vm_is_plain(h, self, vm)) { /* no STKL: said as what it is, and the way */
        snprintf(msg, sizeof msg,
                 PLUGIN_PLAIN_JVM_FMT "; its stacks: ddmon jvm-stack %.60s THREAD --suspend",
                 argv[1], "stack", argv[1]);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    st = threads_vm_find(pl, vm);
    if (st && st->list.n > 0 && !thread_list_find(&st->list, id)) {
        snprintf(msg, sizeof msg, "VM %s has no thread %" PRIu32 " (see its threads view)",
                 argv[1], id);
        h->cmd_finish(cmd, DDM_CMD_NOT_FOUND, msg);
        return 0;
    }
    call = calloc(1, sizeof *call);
    if (!call)
        return -ENOMEM;
    call->pl = pl;
    call->cmd = cmd;
    call->thread_id = id;
    call->after_then = st && st->then_in_flight;
    ddm_put_u4(payload, id);
    rc = h->request(self, vm, THREADS_CHUNK_STKL, payload, sizeof payload, 0, stkl_reply, call,
                    NULL);
    if (rc != 0) {
        free(call);
        snprintf(msg, sizeof msg, "STKL not sent: %s",
                 rc == -EPERM ? "STKL is disabled (--chunks)" :
                 rc == -ENOTCONN ? "the VM is not ready for DDM requests" : "request failed");
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
    }
    return 0;
}

int threads_stack_register(threads_plugin *pl)
{
    return pl->host->register_command(pl->self, "stack", "stack PID THREAD_ID",
                                      "show the stack of one thread (DDM STKL)", cmd_stack, pl,
                                      NULL);
}
