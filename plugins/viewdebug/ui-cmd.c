/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: the results of `ui VM windows`, `ui VM dump` and `ui VM
 * theme`, decoded by vudecode.c from the VM's reply (borrowed for the
 * call) into the command's result:
 *  - windows: index, window;
 *  - dump: the nested tree as an application/json blob (vujson.h), which
 *    ddmon prints as an indented outline and embeds in --json;
 *  - theme: attribute, value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewdebug.h"
#include "vudecode.h"
#include "vujson.h"

static const ddm_column k_windows_cols[] = {
    {"index", DDM_VAL_INT, NULL},
    {"window", DDM_VAL_STR, NULL},
};

static const ddm_column k_theme_cols[] = {
    {"attribute", DDM_VAL_STR, NULL},
    {"value", DDM_VAL_STR, NULL},
};

/* Anything but the expected chunk: finish with the reason; 1 if finished. */
static int finish_unless(ui_call *call, const ddm_reply *reply, uint32_t want)
{
    char msg[768];
    ddm_cmd_status st;

    if (reply->status == DDM_REPLY_CHUNK && reply->type == want)
        return 0;
    st = vd_describe_failure(call, reply, msg, sizeof msg);
    call->pl->host->cmd_finish(call->cmd, st, msg);
    return 1;
}

static void finish_malformed(ui_call *call, const char *what, size_t len, const char *why)
{
    const ddm_host *h = call->pl->host;
    char msg[512];

    h->log(call->pl->self, DDM_LOG_WARNING, "%s: %s of %zu bytes rejected: %s", call->vm_name, what,
           len, why);
    snprintf(msg, sizeof msg, "%s: the %s cannot be read: %s", call->vm_name, what, why);
    h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
}

void vd_finish_windows(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    vd_windows w;
    ddm_view *res;
    char why[256], msg[128];

    if (finish_unless(call, reply, VD_CHUNK_VULW))
        return;
    if (vd_parse_vulw(reply->data, reply->len, &w, why, sizeof why) != 0) {
        finish_malformed(call, "window list (VULW)", reply->len, why);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_TABLE, "Windows");
    if (res) {
        h->view_set_columns(res, k_windows_cols, 2);
        h->view_begin(res);
        for (size_t i = 0; i < w.n; i++) {
            h->view_row(res);
            h->view_int(res, (int64_t)i);
            h->view_str(res, w.names[i]);
        }
        h->view_commit(res);
    }
    snprintf(msg, sizeof msg, "%s: %zu window%s", call->vm_name, w.n, w.n == 1 ? "" : "s");
    vd_windows_clear(&w);
    h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
}

void vd_finish_dump(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    vd_tree t;
    ddm_view *res;
    char why[256], msg[768];
    char *doc;
    size_t len = 0;

    if (finish_unless(call, reply, VD_CHUNK_VURT))
        return;
    if (vd_parse_tree(reply->data, reply->len, &t, why, sizeof why) != 0) {
        finish_malformed(call, "view dump (VURT)", reply->len, why);
        return;
    }
    doc = vd_tree_json(&t, call->window, call->properties, DDM_VIEW_MAX_BLOB, &len);
    if (!doc) {
        snprintf(msg, sizeof msg, "%s: the view tree of %zu views in %.300s %s", call->vm_name,
                 t.n_views, call->window,
                 errno == EFBIG ? "is larger than a result may be" : "does not fit in memory");
        vd_tree_clear(&t);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_BLOB, "View tree");
    if (res) {
        h->view_begin(res);
        h->view_blob(res, VD_JSON_MEDIA_TYPE, doc, len);
        h->view_commit(res);
    }
    free(doc);
    snprintf(msg, sizeof msg, "%s: %zu view%s in %.300s%s", call->vm_name, t.n_views,
             t.n_views == 1 ? "" : "s", call->window,
             call->properties ? "" : " (bounds and ids with --properties)");
    vd_tree_clear(&t);
    h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
}

void vd_finish_theme(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    vd_theme th;
    ddm_view *res;
    char why[256], msg[768];

    if (finish_unless(call, reply, VD_CHUNK_VURT))
        return;
    if (vd_parse_theme(reply->data, reply->len, &th, why, sizeof why) != 0) {
        finish_malformed(call, "theme dump (VURT)", reply->len, why);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_TABLE, "Theme");
    if (res) {
        h->view_set_columns(res, k_theme_cols, 2);
        h->view_begin(res);
        for (size_t i = 0; i < th.n; i++) {
            if (h->view_row(res) != 0)
                break;
            h->view_str(res, th.names[i]);
            h->view_str(res, th.values[i]);
        }
        h->view_commit(res);
    }
    snprintf(msg, sizeof msg, "%s: %zu theme attribute%s of %.300s", call->vm_name, th.n,
             th.n == 1 ? "" : "s", call->window);
    vd_theme_clear(&th);
    h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
}
