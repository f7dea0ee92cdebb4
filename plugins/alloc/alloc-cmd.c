/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc commands: ddmon alloc VM start|stop|status|show [--by class|site|thread] [--top N]
 *   start   REAE(1), then REAQ: the VM answers requests in order, and ART's
 *   stop    adbconnection never answers REAE, so the REAQ that follows is
 *           what tells the command (and the headline) the new state.
 *           stop is REAE(0): on ART that discards the records.
 *   status  REAQ.
 *   show    REAL (never preceded by a disable), decoded into a table: the
 *           allocations, or grouped --by class, site or thread (count,
 *           bytes, sorted by bytes); --top N keeps the first N rows. The
 *           VM's views are refreshed from the same reply.
 * Ownership: a call (alloc_call) is the ud of its one request with a
 * callback that finishes the command, and is freed by that callback.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/plugin.h>

#include "../common/cmdutil.h"
#include "alloc.h"

#define USAGE "usage: alloc VM start|stop|status|show [--by class|site|thread] [--top N]"

typedef struct alloc_call {
    alloc_plugin *pl;
    ddm_cmd *cmd;
    int want;   /* REAQ after REAE: 0/1; plain status: -1 */
    alloc_by by;
    size_t top;
} alloc_call;

static const char *request_error_text(int rc)
{
    switch (rc) {
    case -ENOTCONN: return "the VM is not ready for DDM requests";
    case -EPERM: return "that chunk type is disabled (--chunks)";
    case -ENOSPC: return "too many requests pending for that VM";
    default: return "the request could not be sent";
    }
}

static void finish_not_sent(alloc_plugin *pl, ddm_cmd *cmd, const char *what, int rc)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s not sent: %s", what, request_error_text(rc));
    pl->host->cmd_finish(cmd, DDM_CMD_FAILED, msg);
}

/* Why a reply carried no usable chunk, for a message. */
static const char *reply_problem(const ddm_reply *reply, char *buf, size_t n)
{
    if (reply->status == DDM_REPLY_EMPTY)
        return "the VM sent an empty reply (not supported?)";
    return ddm_reply_describe(reply, buf, n);
}

/* ------------------------------------------------------- start/stop/status */

static void reae_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    alloc_plugin *pl = ud;
    char buf[256];
    (void)vm;
    /* Dalvik answers empty, ART not at all: the REAQ after it tells. */
    if (reply->status == DDM_REPLY_CHUNK || reply->status == DDM_REPLY_ERROR)
        pl->host->log(self, DDM_LOG_INFO, "REAE: %s", reply_problem(reply, buf, sizeof buf));
}

static void state_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    alloc_call *call = ud;
    alloc_plugin *pl = call->pl;
    const ddm_host *h = pl->host;
    char msg[320], buf[256];
    int on = -1;
    ddm_view *res;

    if (reply->status == DDM_REPLY_CHUNK && reply->type == ALLOC_CHUNK_REAQ)
        on = alloc_parse_reaq(reply->data, reply->len);
    if (on < 0) {
        snprintf(msg, sizeof msg, "REAQ: %s",
                 reply->status == DDM_REPLY_CHUNK && reply->type == ALLOC_CHUNK_REAQ
                     ? "empty REAQ reply" : reply_problem(reply, buf, sizeof buf));
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        free(call);
        return;
    }
    if (reply->status != DDM_REPLY_VM_GONE)
        alloc_set_enabled(pl, vm, on);
    res = h->cmd_result(call->cmd, DDM_VIEW_RECORD, "Allocation tracking");
    if (res) {
        h->view_begin(res);
        h->view_field_str(res, "vm", h->vm_info(vm)->key);
        h->view_field_int(res, "pid", h->vm_info(vm)->pid);
        h->view_field_bool(res, "enabled", on);
        h->view_commit(res);
    }
    if (call->want >= 0 && on != call->want) {
        snprintf(msg, sizeof msg, "allocation tracking is still %s after REAE %d",
                 on ? "on" : "off", call->want);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
    } else {
        snprintf(msg, sizeof msg, "allocation tracking %s", on ? "on" : "off");
        h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
    }
    free(call);
}

static int send_reaq(alloc_plugin *pl, ddm_vm *vm, alloc_call *call)
{
    int rc = pl->host->request(pl->self, vm, ALLOC_CHUNK_REAQ, NULL, 0, ALLOC_REAQ_TIMEOUT_MS,
                               state_reply, call, NULL);
    if (rc != 0) {
        finish_not_sent(pl, call->cmd, "REAQ", rc);
        free(call);
    }
    return 0;
}

static int do_switch(alloc_plugin *pl, ddm_vm *vm, alloc_call *call, int on)
{
    uint8_t b = (uint8_t)on;
    int rc = pl->host->request(pl->self, vm, ALLOC_CHUNK_REAE, &b, 1, ALLOC_REAE_TIMEOUT_MS,
                               reae_reply, pl, NULL);
    if (rc != 0) {
        finish_not_sent(pl, call->cmd, "REAE", rc);
        free(call);
        return 0;
    }
    call->want = on;
    return send_reaq(pl, vm, call);
}

/* ------------------------------------------------------------------- show */

static const char *by_title(alloc_by by)
{
    switch (by) {
    case ALLOC_BY_CLASS: return "Allocations by class";
    case ALLOC_BY_SITE: return "Allocations by site";
    case ALLOC_BY_THREAD: return "Allocations by thread";
    default: return "Allocations";
    }
}

static void real_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    alloc_call *call = ud;
    alloc_plugin *pl = call->pl;
    const ddm_host *h = pl->host;
    alloc_vm *av = NULL;
    alloc_rows rows;
    char why[256], msg[400];
    ddm_view *res;
    int rc, decoded = 0;

    (void)self;
    if (reply->status == DDM_REPLY_VM_GONE)
        snprintf(msg, sizeof msg, "REAL: the VM went away");
    else if (reply->status != DDM_REPLY_CHUNK || reply->type != ALLOC_CHUNK_REAL)
        snprintf(msg, sizeof msg, "REAL: %s", reply_problem(reply, why, sizeof why));
    else if (!(av = alloc_vm_state(pl, vm))) /* made again if it went back to REAQ's answer */
        snprintf(msg, sizeof msg, "REAL: out of memory");
    else if ((rc = alloc_handle_real(av, reply->data, reply->len, 1, &rows, why, sizeof why)) != 0)
        snprintf(msg, sizeof msg, "the VM's allocation table (REAL, %zu bytes) is malformed: %s",
                 reply->len, why);
    else
        decoded = 1;
    if (!decoded) {
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        if (av)
            (void)alloc_vm_settle(av);
        free(call);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_TABLE, by_title(call->by));
    rc = res ? alloc_fill_view(h, res, &rows, call->by, call->top, 1) : -ENOMEM;
    snprintf(msg, sizeof msg, "%zu allocation%s recorded%s", rows.n, rows.n == 1 ? "" : "s",
             av->enabled == 0 ? " (tracking is off)" : "");
    alloc_rows_clear(&rows);
    h->cmd_finish(call->cmd, rc == 0 ? DDM_CMD_OK : DDM_CMD_FAILED, rc == 0 ? msg : "out of memory");
    (void)alloc_vm_settle(av); /* keeps it while the views it made are there */
    free(call);
}

/* -1 with what was wrong in @why (one line, before the usage) on a bad option. */
static int parse_show_opts(int argc, const char *const *argv, alloc_call *call, char *why,
                           size_t n_why)
{
    int i;
    for (i = 3; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strncmp(a, "--by=", 5))
            v = a + 5;
        else if (!strcmp(a, "--by") && i + 1 < argc)
            v = argv[++i];
        if (v) {
            if (!strcmp(v, "class"))
                call->by = ALLOC_BY_CLASS;
            else if (!strcmp(v, "site"))
                call->by = ALLOC_BY_SITE;
            else if (!strcmp(v, "thread"))
                call->by = ALLOC_BY_THREAD;
            else {
                snprintf(why, n_why, "--by: class, site or thread, not '%.60s'", v);
                return -1;
            }
            continue;
        }
        if (!strncmp(a, "--top=", 6))
            v = a + 6;
        else if (!strcmp(a, "--top") && i + 1 < argc)
            v = argv[++i];
        if (v) {
            char *end;
            unsigned long n;
            errno = 0;
            n = *v && *v != '-' ? strtoul(v, &end, 10) : 0;
            if (!*v || *v == '-' || errno || *end || n == 0 || n > DDM_VIEW_MAX_ROWS) {
                snprintf(why, n_why, "--top: 1 to %u rows, not '%.60s'", (unsigned)DDM_VIEW_MAX_ROWS,
                         v);
                return -1;
            }
            call->top = n;
            continue;
        }
        if (!strcmp(a, "--by") || !strcmp(a, "--top"))
            snprintf(why, n_why, "%s needs a value", a); /* the last word */
        else
            snprintf(why, n_why, "alloc show takes --by and --top, not '%.60s'", a);
        return -1;
    }
    return 0;
}

static int cmd_alloc(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    alloc_plugin *pl = ud;
    const ddm_host *h = pl->host;
    alloc_call *call;
    const char *op;
    ddm_vm *vm;
    char why[256];
    int rc;

    if (argc < 3) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, USAGE);
        return 0;
    }
    op = argv[2];
    if (strcmp(op, "start") && strcmp(op, "stop") && strcmp(op, "status") && strcmp(op, "show")) {
        snprintf(why, sizeof why, "alloc: start, stop, status or show, not '%.60s'\n" USAGE, op);
        h->cmd_finish(cmd, DDM_CMD_USAGE, why);
        return 0;
    }
    if (!(call = calloc(1, sizeof *call)))
        return -ENOMEM;
    call->pl = pl;
    call->cmd = cmd;
    call->want = -1;
    if (strcmp(op, "show") && argc != 3)
        snprintf(why, sizeof why, "alloc %s takes nothing more, not '%.60s'", op, argv[3]);
    if ((strcmp(op, "show") && argc != 3) ||
        (!strcmp(op, "show") && parse_show_opts(argc, argv, call, why, sizeof why))) {
        char msg[sizeof why + sizeof USAGE + 1];
        snprintf(msg, sizeof msg, "%s\n%s", why, USAGE);
        free(call);
        h->cmd_finish(cmd, DDM_CMD_USAGE, msg);
        return 0;
    }
    if (!(vm = h->cmd_find_vm(cmd, argv[1])) || /* finished, with the core's message */
        plugin_refuse_plain_jvm(h, self, cmd, vm, argv[1], "alloc")) {
        free(call);
        return 0;
    }
    if (!strcmp(op, "start"))
        return do_switch(pl, vm, call, 1);
    if (!strcmp(op, "stop"))
        return do_switch(pl, vm, call, 0);
    if (!strcmp(op, "status"))
        return send_reaq(pl, vm, call);
    rc = h->request(self, vm, ALLOC_CHUNK_REAL, NULL, 0, 0, real_reply, call, NULL);
    if (rc != 0) {
        finish_not_sent(pl, cmd, "REAL", rc);
        free(call);
    }
    return 0;
}

int alloc_commands_register(alloc_plugin *pl)
{
    return pl->host->register_command(
        pl->self, "alloc", "alloc VM start|stop|status|show [--by class|site|thread] [--top N]",
        "allocation tracker: switch it (REAE), ask it (REAQ), show recent allocations (REAL)",
        cmd_alloc, pl, NULL);
}
