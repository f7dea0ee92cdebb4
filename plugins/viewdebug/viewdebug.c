/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: the plugin's registration, the `ui` command's arguments, the
 * requests (VULW, VURT, VUOP) and the reply dispatch; the replies are
 * turned into results by ui-cmd.c and capture.c. See viewdebug.h.
 */
#include "viewdebug.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

#include "../common/cmdutil.h"
#include "vudecode.h"

#define USAGE "usage: ui VM windows | ui VM dump WINDOW [--properties] | ui VM theme WINDOW | " \
              "ui VM capture WINDOW VIEW [FILE.png]"


ddm_cmd_status vd_describe_failure(const ui_call *call, const ddm_reply *reply, char *buf, size_t n)
{
    char why[256], tname[5];

    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL) {
        /* DdmHandleViewDebug's codes are negative Java ints */
        int32_t code = (int32_t)reply->fail_code;
        const char *what = code == VD_ERR_INVALID_PARAM ? ": no such window or view"
                           : code == VD_ERR_INVALID_OP  ? ": the VM does not support this operation"
                           : code == VD_ERR_EXCEPTION   ? ": the operation failed in the app"
                                                        : "";
        snprintf(buf, n, "%s: the VM said: %s (code %d%s)", call->vm_name,
                 reply->fail_msg && *reply->fail_msg ? reply->fail_msg : "no message", (int)code, what);
        return code == VD_ERR_INVALID_PARAM ? DDM_CMD_NOT_FOUND : DDM_CMD_FAILED;
    }
    if (reply->status == DDM_REPLY_CHUNK) {
        snprintf(buf, n, "%s: unexpected reply chunk %s", call->vm_name,
                 ddm_chunk_name(reply->type, tname));
        return DDM_CMD_FAILED;
    }
    snprintf(buf, n, "%s: %s", call->vm_name, ddm_reply_describe(reply, why, sizeof why));
    return DDM_CMD_FAILED;
}

static int send_request(ui_call *call, ddm_vm *vm);
static void request_failed(ui_call *call, int rc);
static int resolve_window(ui_call *call, const ddm_reply *reply);

static void on_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    ui_call *call = ud;
    int rc;
    (void)self;
    if (call->resolving) {
        call->resolving = 0;
        if (resolve_window(call, reply) != 0) {
            vd_capture_abandon(call);
            free(call);
            return;
        }
        if ((rc = send_request(call, vm)) != 0) {
            request_failed(call, rc);
            free(call);
        }
        return; /* the call goes on with the op's own request */
    }
    switch (call->op) {
    case VD_OP_WINDOWS:
        vd_finish_windows(call, reply);
        break;
    case VD_OP_DUMP:
        vd_finish_dump(call, reply);
        break;
    case VD_OP_THEME:
        vd_finish_theme(call, reply);
        break;
    case VD_OP_CAPTURE:
        vd_finish_capture(call, reply);
        break;
    }
    free(call);
}

/* Send @call's request to @vm: the VULW that resolves a selector first,
 * else the op's own. 0, or the negative errno of request(). */
static int send_request(ui_call *call, ddm_vm *vm)
{
    const ddm_host *h = call->pl->host;
    ddm_writer w;
    uint32_t type;
    uint8_t *payload;
    size_t len;
    int rc;

    ddm_writer_init(&w, 1 << 20);
    switch (call->resolving ? VD_OP_WINDOWS : call->op) {
    case VD_OP_WINDOWS:
        type = VD_CHUNK_VULW;
        ddm_write_u4(&w, 1); /* ignored by the VM; ddmlib sends it */
        break;
    case VD_OP_DUMP:
        type = VD_CHUNK_VURT;
        ddm_write_u4(&w, 1);
        ddm_write_lstr(&w, call->window);
        ddm_write_u4(&w, 0);                /* skipChildren */
        ddm_write_u4(&w, (uint32_t)call->properties);
        ddm_write_u4(&w, 0);                /* useV2: the text dump */
        break;
    case VD_OP_THEME:
        type = VD_CHUNK_VURT;
        ddm_write_u4(&w, 3);
        ddm_write_lstr(&w, call->window);
        break;
    case VD_OP_CAPTURE:
    default:
        type = VD_CHUNK_VUOP;
        ddm_write_u4(&w, 1);
        ddm_write_lstr(&w, call->window);
        ddm_write_lstr(&w, call->view);
        break;
    }
    payload = ddm_writer_take(&w, &len);
    if (!payload)
        return -ENOMEM;
    rc = h->request(call->pl->self, vm, type, payload, len, call->pl->timeout_ms, on_reply, call, NULL);
    free(payload);
    return rc;
}

/* request() refused: finish @call with why (the .part goes). */
static void request_failed(ui_call *call, int rc)
{
    char msg[256];

    snprintf(msg, sizeof msg, "%s: the request was not sent: %s", call->vm_name,
             rc == -EPERM      ? "the chunk type is disabled (--chunks)"
             : rc == -ENOTCONN ? "the VM is not ready for DDM requests"
                               : strerror(-rc));
    vd_capture_abandon(call);
    call->pl->host->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* The VULW answering a selector: the window it names into call->window.
 * 0, or -1 when @call was finished (no such window, several, a bad reply). */
static int resolve_window(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    char msg[1024], why[256];
    vd_windows wins;
    size_t hit = 0, hits = 0;
    int rc = 0;

    if (!(reply->status == DDM_REPLY_CHUNK && reply->type == VD_CHUNK_VULW)) {
        ddm_cmd_status st = vd_describe_failure(call, reply, msg, sizeof msg);
        h->cmd_finish(call->cmd, st, msg);
        return -1;
    }
    if (vd_parse_vulw(reply->data, reply->len, &wins, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "%s: the window list (VULW) cannot be read: %s", call->vm_name, why);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    if (all_digits(call->window)) {
        unsigned long i = strtoul(call->window, NULL, 10);
        if (i < wins.n) {
            hit = (size_t)i;
            hits = 1;
        }
    } else {
        for (size_t i = 0; i < wins.n; i++)
            if (strstr(wins.names[i], call->window)) {
                if (hits++ == 0)
                    hit = i;
            }
    }
    if (hits == 1 && strlen(wins.names[hit]) < sizeof call->window) {
        snprintf(call->window, sizeof call->window, "%s", wins.names[hit]);
    } else {
        if (hits == 0)
            snprintf(msg, sizeof msg, "%s has %zu window%s, and none is '%.200s' (see: ui %s windows)",
                     call->vm_name, wins.n, wins.n == 1 ? "" : "s", call->window, call->vm_spec);
        else if (hits > 1)
            snprintf(msg, sizeof msg, "'%.200s' is part of %zu window names of %s: give more of one "
                     "(see: ui %s windows)", call->window, hits, call->vm_name, call->vm_spec);
        else
            snprintf(msg, sizeof msg, "%s: the window name is too long", call->vm_name);
        h->cmd_finish(call->cmd, hits == 1 ? DDM_CMD_FAILED : DDM_CMD_NOT_FOUND, msg);
        rc = -1;
    }
    vd_windows_clear(&wins);
    return rc;
}

/* A reply that came after its request timed out: nobody waits for it. */
static int on_late(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    vd_plugin *pl = ud;
    char tname[5];
    int *logged = pl->host->vm_get_data(self, vm);
    (void)data;
    if (logged) /* once per VM: a VM cannot flood the log */
        return DDM_OK;
    logged = calloc(1, sizeof *logged);
    if (!logged || pl->host->vm_set_data(self, vm, logged, free) != 0)
        return DDM_OK; /* the set frees it on failure; without memory: silence */
    *logged = 1;
    pl->host->log(self, DDM_LOG_INFO,
                  "%s: %s of %zu bytes after its request timed out; dropped (logged once)",
                  pl->host->vm_info(vm)->key, ddm_chunk_name(ci->type, tname), len);
    return DDM_OK;
}

/* Absolute @path for the client (its cwd), or a name under ddmon's
 * --out-dir when @path is NULL. 0, or -1 (finished). */
static int output_path(ui_call *call, const char *path)
{
    const ddm_host *h = call->pl->host;
    const char *base = NULL;
    char name[256];
    int len;

    if (!path) {
        base = DDM_HOST_HAS(h, cmd_out_dir) && h->cmd_out_dir ? h->cmd_out_dir(call->cmd) : NULL;
        if (!base) {
            h->cmd_finish(call->cmd, DDM_CMD_USAGE,
                          "capture needs FILE.png (or ddmon --out-dir DIR); " USAGE);
            return -1;
        }
        /* CLASS@HASH as a file name: only safe characters */
        plugin_safe_file_name(call->view, "@", "view", name, sizeof name - 4);
        len = snprintf(call->path, sizeof call->path, "%s/%s.png", base, name);
    } else {
        len = plugin_client_path(h, call->cmd, path, call->path, sizeof call->path,
                                 sizeof call->path - 1) == 0 ? 0 : -1;
    }
    if (len < 0 || (size_t)len >= sizeof call->path) {
        h->cmd_finish(call->cmd, DDM_CMD_USAGE, "the file name is too long");
        return -1;
    }
    return 0;
}

static int cmd_ui(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    vd_plugin *pl = ud;
    const ddm_host *h = pl->host;
    const ddm_vm_info *info;
    ui_call *call;
    ddm_vm *vm;
    char msg[768];
    int rc;

    if (argc < 3) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, USAGE);
        return 0;
    }
    call = calloc(1, sizeof *call);
    if (!call)
        return -ENOMEM;
    call->pl = pl;
    call->cmd = cmd;
    call->fd = -1;
    if (strcmp(argv[2], "windows") == 0 && argc == 3) {
        call->op = VD_OP_WINDOWS;
    } else if (strcmp(argv[2], "dump") == 0 && (argc == 4 || argc == 5)) {
        call->op = VD_OP_DUMP;
        if (argc == 5) {
            if (strcmp(argv[4], "--properties") != 0 && strcmp(argv[4], "-p") != 0) {
                free(call);
                h->cmd_finish(cmd, DDM_CMD_USAGE, USAGE);
                return 0;
            }
            call->properties = 1;
        }
    } else if (strcmp(argv[2], "theme") == 0 && argc == 4) {
        call->op = VD_OP_THEME;
    } else if (strcmp(argv[2], "capture") == 0 && (argc == 5 || argc == 6)) {
        call->op = VD_OP_CAPTURE;
    } else {
        free(call);
        h->cmd_finish(cmd, DDM_CMD_USAGE, USAGE);
        return 0;
    }
    if (argc >= 4 && (strlen(argv[3]) >= sizeof call->window ||
                      (call->op == VD_OP_CAPTURE && strlen(argv[4]) >= sizeof call->view))) {
        free(call);
        h->cmd_finish(cmd, DDM_CMD_USAGE, "the window or view name is too long");
        return 0;
    }
    if (argc >= 4) {
        snprintf(call->window, sizeof call->window, "%s", argv[3]);
        call->resolving = strchr(call->window, '/') == NULL; /* a selector */
    }
    if (call->op == VD_OP_CAPTURE)
        snprintf(call->view, sizeof call->view, "%s", argv[4]);

    snprintf(call->vm_spec, sizeof call->vm_spec, "%s", argv[1]);
    vm = h->cmd_find_vm(cmd, argv[1]);
    if (!vm) {
        free(call);
        return 0; /* finished, with the core's message */
    }
    if (plugin_refuse_plain_jvm(h, self, cmd, vm, argv[1], "ui")) {
        free(call);
        return 0;
    }
    info = h->vm_info(vm);
    if (info->pid)
        snprintf(call->vm_name, sizeof call->vm_name, "pid %u", (unsigned)info->pid);
    else
        snprintf(call->vm_name, sizeof call->vm_name, "%s", info->key);
    if (!plugin_has_feature(info, VD_FEATURE)) {
        snprintf(msg, sizeof msg,
                 "%s has no view debugging: its FEAT list does not name %s%s", call->vm_name,
                 VD_FEATURE, info->n_features ? "" : " (it sent no features yet)");
        free(call);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (call->op == VD_OP_CAPTURE &&
        (output_path(call, argc == 6 ? argv[5] : NULL) < 0 || vd_capture_prepare(call) < 0)) {
        free(call);
        return 0; /* finished */
    }

    rc = send_request(call, vm);
    if (rc != 0) {
        request_failed(call, rc);
        free(call);
    }
    return 0;
}

static int vd_init(ddm_plugin *self, const ddm_host *host)
{
    vd_plugin *pl;
    int rc;

    if (!DDM_HOST_HAS(host, cmd_find_vm)) {
        host->log(self, DDM_LOG_WARNING, "needs a ddmon core with plugin ABI 1.2");
        return -ENOTSUP;
    }
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return -ENOMEM;
    pl->host = host;
    pl->self = self;
    host->set_data(self, pl, free);
    pl->timeout_ms = (unsigned)ddm_config_uint(host, self, "timeout_ms", 0, DDM_REQUEST_TIMEOUT_MAX_MS, 0);
    if ((rc = host->register_chunk(self, VD_CHUNK_VULW, on_late, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, VD_CHUNK_VURT, on_late, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, VD_CHUNK_VUOP, on_late, pl, NULL)) != 0)
        return rc;
    return host->register_command(self, "ui", "ui VM windows|dump|theme|capture ...",
                                  "an app's windows and view tree, theme and view captures "
                                  "(VULW/VURT/VUOP)",
                                  cmd_ui, pl, NULL);
}

DDM_PLUGIN_DEFINE("viewdebug", "1.0.0", "Apache-2.0",
                  "view hierarchy: windows, view tree, theme and view captures", vd_init, NULL);
