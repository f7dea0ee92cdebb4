/* SPDX-License-Identifier: Apache-2.0
 *
 * vminfo commands:
 *   ddmon exit PID [STATUS]  send EXIT (u4 status, default 1 as ddmlib's
 *                            Client.kill); the VM halts and drops the
 *                            connection without replying, so the command
 *                            finishes as soon as the request is sent.
 *   ddmon gc PID             send HPGC and wait for its end: an empty or a
 *                            chunk reply, or the timeout (ART never replies)
 *                            mean OK; a JDWP error or a FAIL chunk mean FAILED.
 * A VM is named as host->cmd_find_vm understands it ("PID", "SERIAL:PID",
 * key, app name or a unique suffix of one), with the core's message.
 * Ownership: a gc request's ud (gc_call) is freed by its reply callback,
 * which the host calls exactly once; the ddm_cmd stays valid until finished.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "vminfo.h"

typedef struct gc_call {
    vminfo_plugin *pl;
    ddm_cmd *cmd;
} gc_call;

/* Resolve argv[1] or finish @cmd with NOT_FOUND (the core's message) and
 * return NULL. */
static ddm_vm *resolve_vm(vminfo_plugin *pl, ddm_cmd *cmd, const char *spec)
{
    return pl->host->cmd_find_vm(cmd, spec);
}

/* A one-line reason for a failed request() call. */
static const char *request_error_text(int rc)
{
    switch (rc) {
    case -ENOTCONN: return "the VM is not ready for DDM requests";
    case -EPERM: return "that chunk type is disabled (--chunks)";
    case -ENOSPC: return "too many requests pending for that VM";
    default: return "the request could not be sent";
    }
}

/* --------------------------------------------------------------- exit */

static void exit_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    vminfo_plugin *pl = ud;
    /* The command finished when EXIT was sent; this only ends the request. */
    pl->host->log(self, DDM_LOG_DEBUG, "EXIT request ended with status %d", (int)reply->status);
}

static int parse_status(const char *s, uint32_t *out)
{
    char *end;
    long long v;
    if (!s || !*s)
        return -1;
    v = strtoll(s, &end, 0);
    if (*end || v < INT32_MIN || v > (long long)UINT32_MAX)
        return -1;
    *out = (uint32_t)v; /* negative statuses wrap, as Java's int would */
    return 0;
}

static int cmd_exit(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    vminfo_plugin *pl = ud;
    const ddm_host *h = pl->host;
    uint32_t status = 1;
    uint8_t payload[4];
    char msg[160];
    ddm_vm *vm;
    int rc;

    if (argc < 2 || argc > 3 || (argc == 3 && parse_status(argv[2], &status) != 0)) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: exit PID [STATUS]");
        return 0;
    }
    if (!(vm = resolve_vm(pl, cmd, argv[1])))
        return 0;
    ddm_put_u4(payload, status);
    rc = h->request(self, vm, VMINFO_CHUNK_EXIT, payload, sizeof payload, VMINFO_EXIT_TIMEOUT_MS,
                    exit_reply, pl, NULL);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "EXIT not sent: %s", request_error_text(rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    snprintf(msg, sizeof msg, "EXIT %" PRId32 " sent to %s (the VM halts without replying)",
             (int32_t)status, h->vm_info(vm)->key ? h->vm_info(vm)->key : argv[1]);
    h->log(self, DDM_LOG_MESSAGE, "%s", msg);
    h->cmd_finish(cmd, DDM_CMD_OK, msg);
    return 0;
}

/* ----------------------------------------------------------------- gc */

static void gc_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    gc_call *call = ud;
    const ddm_host *h = call->pl->host;
    char msg[512];

    switch (reply->status) {
    case DDM_REPLY_EMPTY:
        h->cmd_finish(call->cmd, DDM_CMD_OK, "GC done");
        break;
    case DDM_REPLY_CHUNK:
        if (reply->type == DDM_CHUNK_FAIL) {
            snprintf(msg, sizeof msg, "GC failed: the VM said: %s (code %" PRIu32 ")",
                     reply->fail_msg && *reply->fail_msg ? reply->fail_msg : "no message",
                     reply->fail_code);
            h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        } else {
            h->cmd_finish(call->cmd, DDM_CMD_OK, "GC done");
        }
        break;
    case DDM_REPLY_TIMEOUT:
        h->cmd_finish(call->cmd, DDM_CMD_OK, "GC requested (no reply from VM, normal on ART)");
        break;
    case DDM_REPLY_ERROR:
        snprintf(msg, sizeof msg, "GC failed: JDWP error %u", (unsigned)reply->jdwp_error);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        break;
    case DDM_REPLY_VM_GONE:
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, "GC failed: the VM went away");
        break;
    default:
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, "GC failed: the VM's reply was malformed");
        break;
    }
    free(call);
}

static int cmd_gc(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    vminfo_plugin *pl = ud;
    const ddm_host *h = pl->host;
    gc_call *call;
    char msg[160];
    ddm_vm *vm;
    int rc;

    if (argc != 2) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "usage: gc PID");
        return 0;
    }
    if (!(vm = resolve_vm(pl, cmd, argv[1])))
        return 0;
    call = calloc(1, sizeof *call);
    if (!call)
        return -ENOMEM;
    call->pl = pl;
    call->cmd = cmd;
    rc = h->request(self, vm, VMINFO_CHUNK_HPGC, NULL, 0, pl->gc_timeout_ms, gc_reply, call, NULL);
    if (rc != 0) {
        free(call);
        snprintf(msg, sizeof msg, "HPGC not sent: %s", request_error_text(rc));
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
    }
    return 0;
}

int vminfo_commands_register(vminfo_plugin *pl)
{
    int rc = pl->host->register_command(pl->self, "exit", "exit PID [STATUS]",
                                        "halt a VM (DDM EXIT; status defaults to 1)", cmd_exit,
                                        pl, NULL);
    if (rc != 0)
        return rc;
    return pl->host->register_command(pl->self, "gc", "gc PID",
                                      "ask a VM to collect garbage (DDM HPGC)", cmd_gc, pl, NULL);
}
