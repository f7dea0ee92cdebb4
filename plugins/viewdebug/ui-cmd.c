/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: the results of `ui VM windows`, `ui VM dump` and `ui VM
 * theme`, decoded by vudecode.c from the VM's reply (borrowed for the
 * call) into the command's result table:
 *  - windows: index, window;
 *  - dump: one row a view in preorder (a view's subtree follows it):
 *    index, view (its CLASS@HASH indented by depth, for reading), class,
 *    hash, id, left, top, right, bottom (relative to the parent, as
 *    mLeft..; null without --properties), depth, parent (index; null for
 *    the root), children; with --properties also property and value: the
 *    view's own row has them null and one row per property follows it;
 *  - theme: attribute, value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewdebug.h"
#include "vudecode.h"

static const ddm_column k_windows_cols[] = {
    {"index", DDM_VAL_INT, NULL},
    {"window", DDM_VAL_STR, NULL},
};

static const ddm_column k_dump_cols[] = {
    {"index", DDM_VAL_INT, NULL},   {"view", DDM_VAL_STR, NULL},   {"class", DDM_VAL_STR, NULL},
    {"hash", DDM_VAL_STR, NULL},    {"id", DDM_VAL_STR, NULL},     {"left", DDM_VAL_INT, NULL},
    {"top", DDM_VAL_INT, NULL},     {"right", DDM_VAL_INT, NULL},  {"bottom", DDM_VAL_INT, NULL},
    {"depth", DDM_VAL_INT, NULL},   {"parent", DDM_VAL_INT, NULL}, {"children", DDM_VAL_INT, NULL},
    {"property", DDM_VAL_STR, NULL}, {"value", DDM_VAL_STR, NULL},
};
#define N_DUMP_COLS_PLAIN 12u
#define N_DUMP_COLS_PROPS 14u

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

static void cell_bound(const ddm_host *h, ddm_view *res, int64_t v)
{
    if (v == VD_NO_VALUE)
        h->view_str(res, NULL); /* a null cell */
    else
        h->view_int(res, v);
}

/* The view's own row; 0, or -E2BIG past the host's caps. */
static int view_row(const ddm_host *h, ddm_view *res, const vd_tree *t, size_t i, int props,
                    char *indent, size_t indent_cap)
{
    const vd_view *v = &t->views[i];
    size_t depth = v->depth < indent_cap - 1 ? v->depth : indent_cap - 1;
    char *label;
    int rc;

    if ((rc = h->view_row(res)) != 0)
        return rc;
    memset(indent, ' ', depth);
    indent[depth] = '\0';
    label = malloc(depth + strlen(v->cls) + strlen(v->hash) + 2);
    if (!label)
        return -ENOMEM;
    sprintf(label, "%s%s@%s", indent, v->cls, v->hash);
    h->view_int(res, (int64_t)i);
    h->view_str(res, label);
    free(label);
    h->view_str(res, v->cls);
    h->view_str(res, v->hash);
    h->view_str(res, v->id);
    cell_bound(h, res, v->left);
    cell_bound(h, res, v->top);
    cell_bound(h, res, v->right);
    cell_bound(h, res, v->bottom);
    h->view_int(res, v->depth);
    cell_bound(h, res, v->parent < 0 ? VD_NO_VALUE : v->parent);
    h->view_int(res, v->children);
    if (props) {
        h->view_str(res, NULL);
        h->view_str(res, NULL);
    }
    return 0;
}

/* One row a property, after its view's row. */
static int prop_rows(const ddm_host *h, ddm_view *res, const vd_tree *t, size_t i)
{
    const vd_view *v = &t->views[i];
    int rc;

    for (size_t p = 0; p < v->n_props; p++) {
        const vd_prop *pr = &t->props[v->first_prop + p];
        if ((rc = h->view_row(res)) != 0)
            return rc;
        h->view_int(res, (int64_t)i);
        h->view_str(res, "");
        h->view_str(res, v->cls);
        h->view_str(res, v->hash);
        h->view_str(res, v->id);
        for (int k = 0; k < 4; k++)
            h->view_str(res, NULL);
        h->view_int(res, v->depth);
        cell_bound(h, res, v->parent < 0 ? VD_NO_VALUE : v->parent);
        h->view_int(res, v->children);
        h->view_str(res, pr->name);
        h->view_str(res, pr->value);
    }
    return 0;
}

void vd_finish_dump(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    vd_tree t;
    ddm_view *res;
    char why[256], msg[768], indent[VD_MAX_DEPTH + 2];
    size_t shown = 0;
    int rc = 0;

    if (finish_unless(call, reply, VD_CHUNK_VURT))
        return;
    if (vd_parse_tree(reply->data, reply->len, &t, why, sizeof why) != 0) {
        finish_malformed(call, "view dump (VURT)", reply->len, why);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_TABLE, "View tree");
    if (res) {
        h->view_set_columns(res, k_dump_cols, call->properties ? N_DUMP_COLS_PROPS : N_DUMP_COLS_PLAIN);
        h->view_begin(res);
        for (size_t i = 0; i < t.n_views && rc == 0; i++) {
            rc = view_row(h, res, &t, i, call->properties, indent, sizeof indent);
            if (rc == 0 && call->properties)
                rc = prop_rows(h, res, &t, i);
            if (rc == 0)
                shown = i + 1;
        }
        h->view_commit(res);
    }
    if (rc != 0)
        snprintf(msg, sizeof msg, "%s: %zu views in %.300s; only the first %zu shown (too many rows)",
                 call->vm_name, t.n_views, call->window, shown);
    else
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
