/* SPDX-License-Identifier: Apache-2.0
 *
 * View debugging on a simulated VM, as android.ddm.DdmHandleViewDebug:
 * VULW lists the windows; VURT (u4 op, lstr window) dumps the tree (op 1:
 * u4 skipChildren, u4 includeProperties, optional u4 useV2) or the theme
 * (op 3); VUOP (u4 op, lstr window, lstr view) captures a view as PNG (op
 * 1). An unknown window or view gets FAIL(-2), an unknown op FAIL(-1), a
 * short payload FAIL(-2) as the real handler's underflow does; op 2
 * (layers), v2 dumps and VUOP ops 2..5 are not simulated (FAIL(-1) with
 * a message that says so). What went out (sizes, sha256, the tree as
 * objects) is kept for the state file. --view-fault breaks one thing on
 * purpose: a dump's indentation or its DONE. line, VULW's count, the
 * capture's PNG, or every reply. See doc/ddmon-simvm.md.
 */
#include "viewdebug.h"

#include <string.h>

#include "view_model.h"

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)
#define ERR_INVALID_OP ((uint32_t)-1)
#define ERR_INVALID_PARAM ((uint32_t)-2)

struct SimViewDebug {
    SimViews *model;
    guint64 vulw, dumps, themes, captures, fails, unanswered;
    /* the last dump */
    gboolean dump_valid, dump_properties;
    int dump_window;
    gsize dump_bytes;
    char *dump_sha256;
    /* the last capture */
    gboolean capture_valid;
    int capture_window, capture_view;
    unsigned capture_width, capture_height;
    gsize capture_bytes;
    char *capture_sha256;
    /* the last theme dump */
    gboolean theme_valid;
    int theme_window;
    char *theme_sha256;
    /* the last FAIL */
    char *fail_chunk, *fail_message;
    int32_t fail_code;
};

void sim_viewdebug_free(SimViewDebug *vd)
{
    if (!vd)
        return;
    sim_views_free(vd->model);
    g_free(vd->dump_sha256);
    g_free(vd->capture_sha256);
    g_free(vd->theme_sha256);
    g_free(vd->fail_chunk);
    g_free(vd->fail_message);
    g_free(vd);
}

static SimViewDebug *state_of(SimVm *vm)
{
    if (!vm->viewdebug) {
        vm->viewdebug = g_new0(SimViewDebug, 1);
        vm->viewdebug->model = sim_views_new(vm->pid, vm->package_name, vm->world->cfg.seed);
    }
    return vm->viewdebug;
}

static void send_fail(SimConn *c, uint32_t id, uint32_t type, uint32_t code, const char *msg)
{
    SimViewDebug *vd = state_of(c->vm);
    char name[5];

    vd->fails++;
    g_free(vd->fail_chunk);
    g_free(vd->fail_message);
    vd->fail_chunk = g_strdup(ddm_chunk_name(type, name));
    vd->fail_message = g_strdup(msg);
    vd->fail_code = (int32_t)code;
    sim_conn_send_fail(c, id, code, msg);
    sim_world_state_changed(c->vm->world);
}

static int window_index(SimViewDebug *vd, const SimViewWindow *w)
{
    return (int)(w - vd->model->win);
}

static void send_bytes(SimConn *c, uint32_t id, uint32_t type, GBytes *bytes, char **sha_out)
{
    gsize len;
    const uint8_t *d = g_bytes_get_data(bytes, &len);

    g_free(*sha_out);
    *sha_out = g_compute_checksum_for_data(G_CHECKSUM_SHA256, d, len);
    sim_conn_send_reply(c, id, type, d, len);
}

/* --view-fault indent / no-done applied to a dump (transfer full in and out). */
static GBytes *broken_dump(GBytes *dump, SimViewFault fault)
{
    gsize len;
    const char *d = g_bytes_get_data(dump, &len);
    const char *nl = memchr(d, '\n', len);
    GString *s;

    if ((fault != SIM_VIEW_FAULT_INDENT && fault != SIM_VIEW_FAULT_NO_DONE) || !nl || len < 6)
        return dump;
    s = g_string_new_len(d, (gssize)len);
    if (fault == SIM_VIEW_FAULT_INDENT)
        g_string_insert(s, nl - d + 1, "   "); /* line 2 jumps from 0 to 4 spaces */
    else
        g_string_truncate(s, len - 6);         /* without "DONE.\n" */
    g_bytes_unref(dump);
    return g_string_free_to_bytes(s);
}

static void handle_vurt(SimConn *c, uint32_t id, uint32_t op, const SimViewWindow *w, ddm_reader *r)
{
    SimViewDebug *vd = state_of(c->vm);
    g_autoptr(GBytes) bytes = NULL;
    char msg[96];

    if (op == 1) {
        uint32_t skip = ddm_read_u4(r), props = ddm_read_u4(r);
        gboolean v2 = ddm_reader_remaining(r) >= 4 && ddm_read_u4(r) > 0;
        if (!ddm_reader_ok(r)) {
            send_fail(c, id, T('V', 'U', 'R', 'T'), ERR_INVALID_PARAM, "Malformed VURT request");
            return;
        }
        if (v2 || skip) {
            send_fail(c, id, T('V', 'U', 'R', 'T'), ERR_INVALID_OP,
                      v2 ? "v2 view dumps are not simulated" : "skipChildren is not simulated");
            return;
        }
        bytes = broken_dump(sim_views_dump(w, props > 0), c->vm->world->cfg.view_fault);
        vd->dumps++;
        vd->dump_valid = TRUE;
        vd->dump_properties = props > 0;
        vd->dump_window = window_index(vd, w);
        vd->dump_bytes = g_bytes_get_size(bytes);
        send_bytes(c, id, T('V', 'U', 'R', 'T'), bytes, &vd->dump_sha256);
    } else if (op == 3) {
        bytes = sim_views_theme(w);
        vd->themes++;
        vd->theme_valid = TRUE;
        vd->theme_window = window_index(vd, w);
        send_bytes(c, id, T('V', 'U', 'R', 'T'), bytes, &vd->theme_sha256);
    } else {
        snprintf(msg, sizeof msg, "Unknown view root operation: %u%s", op,
                 op == 2 ? " (layer capture is not simulated)" : "");
        send_fail(c, id, T('V', 'U', 'R', 'T'), ERR_INVALID_OP, msg);
        return;
    }
    sim_world_state_changed(c->vm->world);
}

static void handle_vuop(SimConn *c, uint32_t id, uint32_t op, const SimViewWindow *w, ddm_reader *r)
{
    SimVm *vm = c->vm;
    SimViewDebug *vd = state_of(vm);
    g_autofree char *view = ddm_read_lstr(r);
    g_autoptr(GBytes) png = NULL;
    g_autoptr(GError) error = NULL;
    unsigned width = 0, height = 0;
    int i = view ? sim_views_find_view(w, view, vm->package_name) : -1;
    char msg[96];

    if (i < 0) {
        send_fail(c, id, T('V', 'U', 'O', 'P'), ERR_INVALID_PARAM, "Invalid target view");
        return;
    }
    if (op != 1) {
        snprintf(msg, sizeof msg, "Unknown view operation: %u%s", op,
                 op >= 2 && op <= 5 ? " (not simulated)" : "");
        send_fail(c, id, T('V', 'U', 'O', 'P'), ERR_INVALID_OP, msg);
        return;
    }
    if (vm->world->cfg.view_fault == SIM_VIEW_FAULT_NOT_PNG)
        png = g_bytes_new_static("GIF89a\x01\x00\x01\x00\x80\x00\x00", 13);
    else
        png = sim_views_capture(w, i, &width, &height, &error);
    if (!png) {
        send_fail(c, id, T('V', 'U', 'O', 'P'), 1, error->message);
        return;
    }
    vd->captures++;
    vd->capture_valid = TRUE;
    vd->capture_window = window_index(vd, w);
    vd->capture_view = i;
    vd->capture_width = width;
    vd->capture_height = height;
    vd->capture_bytes = g_bytes_get_size(png);
    send_bytes(c, id, T('V', 'U', 'O', 'P'), png, &vd->capture_sha256);
    sim_world_state_changed(vm->world);
}

void sim_handle_viewdebug(SimConn *c, uint32_t id, uint32_t type, ddm_reader *body)
{
    SimVm *vm = c->vm;
    SimViewDebug *vd;
    g_autofree char *root = NULL;
    const SimViewWindow *w;
    uint32_t op;

    if (vm->world->cfg.no_view_hierarchy) {
        sim_conn_reply_nothing(c, id); /* no handler registered for VU* */
        return;
    }
    if (vm->world->cfg.view_fault == SIM_VIEW_FAULT_SILENT) {
        state_of(vm)->unanswered++; /* counted, never answered: the client must time out */
        sim_world_state_changed(vm->world);
        return;
    }
    vd = state_of(vm);
    if (type == T('V', 'U', 'L', 'W')) {
        ddm_writer wr;
        uint8_t *p;
        size_t len;
        ddm_writer_init(&wr, 1 << 20);
        sim_views_write_vulw(vd->model, &wr);
        if (vm->world->cfg.view_fault == SIM_VIEW_FAULT_HUGE_VULW && wr.len >= 4)
            ddm_writer_patch_u4(&wr, 0, 0xFFFFFFFFu); /* the names stay: far fewer bytes than claimed */
        p = ddm_writer_take(&wr, &len);
        vd->vulw++;
        sim_conn_send_reply(c, id, type, p, p ? len : 0);
        free(p);
        sim_world_state_changed(vm->world);
        return;
    }
    op = ddm_read_u4(body);
    root = ddm_read_lstr(body);
    w = ddm_reader_ok(body) && root ? sim_views_find_window(vd->model, root) : NULL;
    if (!w) { /* the root comes first, as in DdmHandleViewDebug.handleChunk */
        send_fail(c, id, type, ERR_INVALID_PARAM, "Invalid View Root");
        return;
    }
    if (type == T('V', 'U', 'R', 'T'))
        handle_vurt(c, id, op, w, body);
    else
        handle_vuop(c, id, op, w, body);
}

/* The window's nodes from @i on, as nested objects. */
static size_t add_node(JsonBuilder *b, const SimViewWindow *w, size_t i)
{
    const SimViewNode *n = &w->nodes[i];
    size_t j = i + 1;

    json_builder_begin_object(b);
    json_builder_set_member_name(b, "class");
    json_builder_add_string_value(b, n->cls);
    json_builder_set_member_name(b, "hash");
    json_builder_add_string_value(b, n->hash);
    json_builder_set_member_name(b, "id");
    json_builder_add_string_value(b, n->id);
    json_builder_set_member_name(b, "left");
    json_builder_add_int_value(b, n->left);
    json_builder_set_member_name(b, "top");
    json_builder_add_int_value(b, n->top);
    json_builder_set_member_name(b, "right");
    json_builder_add_int_value(b, n->right);
    json_builder_set_member_name(b, "bottom");
    json_builder_add_int_value(b, n->bottom);
    if (n->text) {
        json_builder_set_member_name(b, "text");
        json_builder_add_string_value(b, n->text);
    }
    json_builder_set_member_name(b, "children");
    json_builder_begin_array(b);
    while (j < w->n && w->nodes[j].depth > n->depth)
        j = add_node(b, w, j);
    json_builder_end_array(b);
    json_builder_end_object(b);
    return j;
}

void sim_viewdebug_add_state(JsonBuilder *b, SimVm *vm)
{
    SimViewDebug *vd = vm->viewdebug;

    if (!vd) {
        json_builder_add_null_value(b);
        return;
    }
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "windows");
    json_builder_begin_array(b);
    for (size_t i = 0; i < vd->model->n_windows; i++)
        json_builder_add_string_value(b, vd->model->win[i].name);
    json_builder_end_array(b);
    sim_json_member_int(b, "vulw", (gint64)vd->vulw);
    sim_json_member_int(b, "dumps", (gint64)vd->dumps);
    sim_json_member_int(b, "themes", (gint64)vd->themes);
    sim_json_member_int(b, "captures", (gint64)vd->captures);
    sim_json_member_int(b, "fails", (gint64)vd->fails);
    sim_json_member_int(b, "unanswered", (gint64)vd->unanswered);
    json_builder_set_member_name(b, "last_dump");
    if (vd->dump_valid) {
        const SimViewWindow *w = &vd->model->win[vd->dump_window];
        json_builder_begin_object(b);
        sim_json_member_str(b, "window", w->name);
        json_builder_set_member_name(b, "properties");
        json_builder_add_boolean_value(b, vd->dump_properties);
        sim_json_member_int(b, "bytes", (gint64)vd->dump_bytes);
        sim_json_member_str(b, "sha256", vd->dump_sha256);
        sim_json_member_int(b, "views", (gint64)w->n);
        json_builder_set_member_name(b, "tree");
        add_node(b, w, 0);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_set_member_name(b, "last_capture");
    if (vd->capture_valid) {
        const SimViewWindow *w = &vd->model->win[vd->capture_window];
        const SimViewNode *n = &w->nodes[vd->capture_view];
        g_autofree char *view = g_strdup_printf("%s@%s", n->cls, n->hash);
        json_builder_begin_object(b);
        sim_json_member_str(b, "window", w->name);
        sim_json_member_str(b, "view", view);
        sim_json_member_int(b, "width", vd->capture_width);
        sim_json_member_int(b, "height", vd->capture_height);
        sim_json_member_int(b, "bytes", (gint64)vd->capture_bytes);
        sim_json_member_str(b, "sha256", vd->capture_sha256);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_set_member_name(b, "last_theme");
    if (vd->theme_valid) {
        json_builder_begin_object(b);
        sim_json_member_str(b, "window", vd->model->win[vd->theme_window].name);
        sim_json_member_str(b, "sha256", vd->theme_sha256);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_set_member_name(b, "last_fail");
    if (vd->fail_chunk) {
        json_builder_begin_object(b);
        sim_json_member_str(b, "chunk", vd->fail_chunk);
        sim_json_member_int(b, "code", vd->fail_code);
        sim_json_member_str(b, "message", vd->fail_message);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
}
