/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of ddmon-simvm's view debugging: the model (tools/simvm/
 * view_model.c) read back by the viewdebug plugin's own decoders (two
 * readings of the ViewDebug text format must agree) and its PNG captures
 * read back by libpng; then the handlers (viewdebug.c) over a socketpair:
 * VULW, VURT dumps and theme, VUOP capture, the FAIL codes of the real
 * DdmHandleViewDebug (-2 bad window or view, -1 unknown op), and
 * --no-view-hierarchy (FEAT without the feature, requests unanswered).
 */
#include "build-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef HAVE_LIBPNG
#include <png.h>
#endif

#include "core/wire/ddm.h"
#include "plugins/viewdebug/vudecode.h"
#include "simvm-private.h"
#include "view_model.h"

#define T(a, b, c, d) DDM_CHUNK(a, b, c, d)

static void test_model_windows(void **state)
{
    SimViews *v = sim_views_new(4242, "com.example.app", 1);
    SimViews *again = sim_views_new(4242, "com.example.app", 1);
    SimViews *other = sim_views_new(4243, "com.example.app", 1);
    (void)state;
    assert_int_equal(v->n_windows, 2);
    assert_true(g_str_has_prefix(v->win[0].name,
                                 "com.example.app/com.example.app.MainActivity/android.view.ViewRootImpl@"));
    assert_true(g_str_has_prefix(v->win[1].name, "PopupWindow:"));
    assert_int_equal(v->win[0].n, 48);
    assert_int_equal(v->win[1].n, 3);
    /* deterministic for a pid and seed, different for another pid */
    assert_string_equal(v->win[0].name, again->win[0].name);
    assert_string_equal(v->win[0].nodes[7].hash, again->win[0].nodes[7].hash);
    assert_string_not_equal(v->win[0].name, other->win[0].name);
    assert_ptr_equal(sim_views_find_window(v, v->win[1].name), &v->win[1]);
    assert_null(sim_views_find_window(v, "nope"));
    sim_views_free(v);
    sim_views_free(again);
    sim_views_free(other);
}

/* The dump as the plugin parses it equals the model, node by node. */
static void check_dump(const SimViewWindow *w, gboolean props)
{
    g_autoptr(GBytes) b = sim_views_dump(w, props);
    gsize len;
    const uint8_t *d = g_bytes_get_data(b, &len);
    vd_tree t;
    char why[200] = "";

    if (vd_parse_tree(d, len, &t, why, sizeof why) != 0)
        fail_msg("the simulator's dump does not parse: %s", why);
    assert_int_equal(t.n_views, w->n);
    for (size_t i = 0; i < w->n; i++) {
        const SimViewNode *n = &w->nodes[i];
        assert_string_equal(t.views[i].cls, n->cls);
        assert_string_equal(t.views[i].hash, n->hash);
        assert_int_equal(t.views[i].depth, n->depth);
        assert_int_equal(t.views[i].parent, n->parent);
        if (props) {
            assert_string_equal(t.views[i].id, n->id);
            assert_int_equal(t.views[i].left, n->left);
            assert_int_equal(t.views[i].top, n->top);
            assert_int_equal(t.views[i].right, n->right);
            assert_int_equal(t.views[i].bottom, n->bottom);
            if (n->text)
                assert_string_equal(vd_view_prop(&t, &t.views[i], "text:mText"), n->text);
        } else {
            assert_null(t.views[i].id);
            assert_int_equal(t.views[i].n_props, 0);
        }
    }
    vd_tree_clear(&t);
}

static void test_model_dump(void **state)
{
    SimViews *v = sim_views_new(77, "com.example.app", 5);
    (void)state;
    for (size_t w = 0; w < v->n_windows; w++) {
        check_dump(&v->win[w], FALSE);
        check_dump(&v->win[w], TRUE);
    }
    /* the emoji title: 4 UTF-8 bytes, 2 UTF-16 units in the length */
    {
        g_autoptr(GBytes) b = sim_views_dump(&v->win[0], TRUE);
        const char *s = g_bytes_get_data(b, NULL);
        assert_non_null(strstr(s, "text:mText=15,Launch \xF0\x9F\x9A\x80 today "));
        assert_true(g_str_has_suffix(s, "\nDONE.\n"));
    }
    sim_views_free(v);
}

static void test_model_find_view(void **state)
{
    SimViews *v = sim_views_new(77, "com.example.app", 5);
    const SimViewWindow *w = &v->win[0];
    g_autofree char *spec = g_strdup_printf("%s@%s", w->nodes[12].cls, w->nodes[12].hash);
    g_autofree char *upper = g_ascii_strup(spec, -1);
    (void)state;
    assert_int_equal(sim_views_find_view(w, spec, "com.example.app"), 12);
    assert_int_equal(sim_views_find_view(w, "com.example.app:id/fab", "com.example.app"), 43);
    assert_string_equal(w->nodes[43].id, "id/fab");
    assert_int_equal(sim_views_find_view(w, "other.app:id/fab", "com.example.app"), -1);
    assert_int_equal(sim_views_find_view(w, "android.view.View@", "com.example.app"), -1);
    assert_int_equal(sim_views_find_view(w, "android.view.View@zz", "com.example.app"), -1);
    assert_int_equal(sim_views_find_view(w, upper, "com.example.app"), -1); /* class differs */
    sim_views_free(v);
}

static void test_model_theme(void **state)
{
    SimViews *v = sim_views_new(77, "com.example.app", 5);
    g_autoptr(GBytes) b = sim_views_theme(&v->win[0]);
    gsize len;
    const uint8_t *d = g_bytes_get_data(b, &len);
    vd_theme th;
    char why[160] = "";
    (void)state;
    assert_int_equal(vd_parse_theme(d, len, &th, why, sizeof why), 0);
    assert_int_equal(th.n, 11);
    assert_string_equal(th.names[0], "android:attr/colorPrimary");
    assert_string_equal(th.values[0], "#ff6200ee");
    vd_theme_clear(&th);
    sim_views_free(v);
}

#ifdef HAVE_LIBPNG
typedef struct png_src {
    const uint8_t *p;
    size_t n, off;
} png_src;

static void png_read_mem(png_structp png, png_bytep out, size_t len)
{
    png_src *s = png_get_io_ptr(png);
    if (len > s->n - s->off)
        png_error(png, "short");
    memcpy(out, s->p + s->off, len);
    s->off += len;
}

/* Decode the whole PNG; check its size and the colour of pixel (10, 20). */
static void check_png(GBytes *b, unsigned w, unsigned h, const uint8_t *expect_px)
{
    png_src src = {0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep row;

    src.p = g_bytes_get_data(b, &src.n);
    assert_int_equal(png_sig_cmp(src.p, 0, 8), 0);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng refused the capture");
    png_set_read_fn(png, &src, png_read_mem);
    png_read_info(png, info);
    assert_int_equal(png_get_image_width(png, info), w);
    assert_int_equal(png_get_image_height(png, info), h);
    assert_int_equal(png_get_color_type(png, info), PNG_COLOR_TYPE_RGB_ALPHA);
    row = g_malloc(png_get_rowbytes(png, info));
    for (unsigned y = 0; y < h; y++) {
        png_read_row(png, row, NULL);
        if (y == 20 && expect_px)
            assert_memory_equal(row + 10 * 4, expect_px, 4);
    }
    png_read_end(png, NULL);
    g_free(row);
    png_destroy_read_struct(&png, &info, NULL);
}

static void test_model_capture(void **state)
{
    SimViews *v = sim_views_new(77, "com.example.app", 5);
    const SimViewWindow *w = &v->win[0];
    const SimViewNode *n = &w->nodes[43]; /* the floating button, 147 x 147 */
    unsigned wd = 0, ht = 0;
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) png = sim_views_capture(w, 43, &wd, &ht, &error);
    g_autoptr(GBytes) again = sim_views_capture(w, 43, &wd, &ht, &error);
    g_autoptr(GBytes) stub = NULL;
    uint32_t h = (uint32_t)strtoul(n->hash, NULL, 16);
    /* (10, 20): inside the border; (10 + 20) / 24 is odd: the light stripe */
    uint8_t px[4] = {(uint8_t)((h >> 16 & 0xff) / 2 + 128), (uint8_t)((h >> 8 & 0xff) / 2 + 128),
                     (uint8_t)((h & 0xff) / 2 + 128), 0xff};
    (void)state;
    assert_non_null(png);
    assert_int_equal(wd, 147);
    assert_int_equal(ht, 147);
    check_png(png, 147, 147, px);
    assert_true(g_bytes_equal(png, again)); /* deterministic bytes */
    /* the zero-sized ViewStub: 1x1, as ViewDebug.capture */
    stub = sim_views_capture(w, 2, &wd, &ht, &error);
    assert_non_null(stub);
    assert_int_equal(wd, 1);
    check_png(stub, 1, 1, NULL);
    sim_views_free(v);
}
#endif

/* ------------------------------------------------- the handlers, on a socket */

typedef struct Fx {
    SimConfig cfg;
    SimWorld *w;
    SimVm *vm;
    int fd;
    DdmJdwpReader *r;
} Fx;

typedef struct Reply {
    gboolean got;
    uint32_t type;
    GByteArray *data;
} Reply;

static void pump(int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(1000);
}

static void send_chunk(Fx *f, uint32_t id, uint32_t type, const void *data, size_t len)
{
    size_t plen;
    uint8_t *pkt = ddm_chunk_build_packet(id, type, data, len, &plen);

    assert_int_equal(write(f->fd, pkt, plen), (ssize_t)plen);
    g_free(pkt);
}

/* Wait up to @ms for the reply to @id (events are skipped). */
static Reply wait_reply(Fx *f, uint32_t id, int ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;
    Reply rep = {0};

    while (!rep.got && g_get_monotonic_time() < end) {
        struct pollfd p = {f->fd, POLLIN, 0};
        DdmJdwpPacket pkt;
        DdmJdwpResult res;
        g_main_context_iteration(NULL, FALSE);
        if (poll(&p, 1, 1) == 1) {
            size_t avail;
            uint8_t *space = ddm_jdwp_reader_space(f->r, 65536, &avail);
            ssize_t n = read(f->fd, space, avail);
            assert_true(n > 0);
            ddm_jdwp_reader_commit(f->r, (size_t)n);
        }
        while ((res = ddm_jdwp_reader_next(f->r, &pkt)) != DDM_JDWP_NEED_MORE) {
            assert_true(res > 0);
            if (res != DDM_JDWP_PACKET || !ddm_jdwp_is_reply(&pkt.header) || pkt.header.id != id)
                continue;
            rep.got = TRUE;
            if (pkt.data_len >= 8) {
                rep.type = (uint32_t)pkt.data[0] << 24 | (uint32_t)pkt.data[1] << 16 |
                           (uint32_t)pkt.data[2] << 8 | pkt.data[3];
                rep.data = g_byte_array_new();
                g_byte_array_append(rep.data, pkt.data + 8, (guint)(pkt.data_len - 8));
            }
        }
    }
    return rep;
}

static Fx *fx_new_fault(gboolean no_views, SimViewFault fault)
{
    Fx *f = g_new0(Fx, 1);
    GError *err = NULL;
    GArray *pids;
    int sv[2];
    Reply r;

    sim_config_init(&f->cfg);
    f->cfg.no_tcp = TRUE;
    f->cfg.thread_activity_ms = 0;
    f->cfg.no_view_hierarchy = no_views;
    f->cfg.view_fault = fault;
    f->w = sim_world_new(&f->cfg);
    assert_true(sim_world_start(f->w, &err));
    pids = sim_world_list_pids(f->w);
    f->vm = sim_world_find_pid(f->w, g_array_index(pids, uint32_t, 0));
    g_array_unref(pids);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    f->fd = sv[0];
    sim_vm_serve_fd(f->vm, sv[1]);
    f->r = ddm_jdwp_reader_new(64 << 20);
    ddm_jdwp_reader_expect_handshake(f->r);
    assert_int_equal(write(f->fd, DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN), DDM_JDWP_HANDSHAKE_LEN);
    r = wait_reply(f, 0, 30); /* reads the echo */
    (void)r;
    return f;
}

static Fx *fx_new(gboolean no_views)
{
    return fx_new_fault(no_views, SIM_VIEW_FAULT_NONE);
}

static void fx_free(Fx *f)
{
    close(f->fd);
    ddm_jdwp_reader_free(f->r);
    sim_world_free(f->w);
    sim_config_clear(&f->cfg);
    pump(5);
    g_free(f);
}

static void reply_clear(Reply *r)
{
    if (r->data)
        g_byte_array_unref(r->data);
}

/* A request "u4 op, lstr window[, lstr view]" (op < 0: none). */
static GByteArray *vu_request(int op, const char *window, const char *view)
{
    ddm_writer w;
    size_t len;
    uint8_t *p;
    GByteArray *a = g_byte_array_new();

    ddm_writer_init(&w, 1 << 16);
    if (op >= 0)
        ddm_write_u4(&w, (uint32_t)op);
    ddm_write_lstr(&w, window);
    if (view)
        ddm_write_lstr(&w, view);
    p = ddm_writer_take(&w, &len);
    g_byte_array_append(a, p, (guint)len);
    free(p);
    return a;
}

static void expect_fail(Reply *r, int32_t code, const char *msg)
{
    ddm_reader rd;
    g_autofree char *m = NULL;

    assert_true(r->got);
    assert_int_equal(r->type, DDM_CHUNK_FAIL);
    ddm_reader_init(&rd, r->data->data, r->data->len);
    assert_int_equal((int32_t)ddm_read_u4(&rd), code);
    m = ddm_read_lstr(&rd);
    assert_non_null(m);
    assert_string_equal(m, msg);
}

static void test_handlers(void **state)
{
    Fx *f = fx_new(FALSE);
    vd_windows wins;
    char why[160] = "";
    GByteArray *req;
    Reply r;
    uint8_t one[4] = {0, 0, 0, 1};
    (void)state;

    send_chunk(f, 1, T('V', 'U', 'L', 'W'), one, 4);
    r = wait_reply(f, 1, 500);
    assert_true(r.got);
    assert_int_equal(r.type, T('V', 'U', 'L', 'W'));
    assert_int_equal(vd_parse_vulw(r.data->data, r.data->len, &wins, why, sizeof why), 0);
    assert_int_equal(wins.n, 2);
    {
        g_autofree char *prefix = g_strdup_printf("%s/%s.MainActivity/android.view.ViewRootImpl@",
                                                  sim_vm_package_name(f->vm), sim_vm_package_name(f->vm));
        assert_true(g_str_has_prefix(wins.names[0], prefix));
    }
    reply_clear(&r);

    /* a dump with properties */
    req = vu_request(1, wins.names[0], NULL);
    {
        uint8_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 1}; /* skipChildren 0, includeProperties 1 */
        g_byte_array_append(req, tail, 8);
    }
    send_chunk(f, 2, T('V', 'U', 'R', 'T'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 2, 1000);
    assert_true(r.got);
    assert_int_equal(r.type, T('V', 'U', 'R', 'T'));
    {
        vd_tree t;
        assert_int_equal(vd_parse_tree(r.data->data, r.data->len, &t, why, sizeof why), 0);
        assert_int_equal(t.n_views, 48);
        assert_int_equal(t.views[0].right, 1080);
        vd_tree_clear(&t);
    }
    reply_clear(&r);

    /* the theme */
    req = vu_request(3, wins.names[1], NULL);
    send_chunk(f, 3, T('V', 'U', 'R', 'T'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 3, 1000);
    assert_int_equal(r.type, T('V', 'U', 'R', 'T'));
    assert_true(r.data->len > 6);
    assert_memory_equal(r.data->data + r.data->len - 6, "DONE.\n", 6);
    reply_clear(&r);

    /* unknown window, unknown op, unknown view, layers */
    req = vu_request(1, "no.such/window", NULL);
    send_chunk(f, 4, T('V', 'U', 'R', 'T'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 4, 1000);
    expect_fail(&r, -2, "Invalid View Root");
    reply_clear(&r);
    req = vu_request(9, wins.names[0], NULL);
    send_chunk(f, 5, T('V', 'U', 'R', 'T'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 5, 1000);
    expect_fail(&r, -1, "Unknown view root operation: 9");
    reply_clear(&r);
    req = vu_request(1, wins.names[0], "android.view.View@1");
    send_chunk(f, 6, T('V', 'U', 'O', 'P'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 6, 1000);
    expect_fail(&r, -2, "Invalid target view");
    reply_clear(&r);
    req = vu_request(1, wins.names[0], "com.example.app:id/nothing");
    send_chunk(f, 7, T('V', 'U', 'O', 'P'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 7, 1000);
    expect_fail(&r, -2, "Invalid target view");
    reply_clear(&r);

#ifdef HAVE_LIBPNG
    /* a capture by resource name: the PNG of that view's size */
    {
        g_autofree char *pkg_spec = g_strdup_printf("%s:id/refresh", sim_vm_package_name(f->vm));
        req = vu_request(1, wins.names[0], pkg_spec);
    }
    send_chunk(f, 8, T('V', 'U', 'O', 'P'), req->data, req->len);
    g_byte_array_unref(req);
    r = wait_reply(f, 8, 2000);
    assert_true(r.got);
    assert_int_equal(r.type, T('V', 'U', 'O', 'P'));
    {
        g_autoptr(GBytes) b = g_bytes_new(r.data->data, r.data->len);
        check_png(b, 378, 126, NULL);
    }
    reply_clear(&r);
#endif
    vd_windows_clear(&wins);
    fx_free(f);
}

static void test_no_view_hierarchy(void **state)
{
    Fx *f = fx_new(TRUE);
    uint8_t one[4] = {0, 0, 0, 1};
    Reply r;
    ddm_reader rd;
    uint32_t n;
    (void)state;
    send_chunk(f, 1, DDM_CHUNK_FEAT, NULL, 0);
    r = wait_reply(f, 1, 500);
    assert_true(r.got);
    ddm_reader_init(&rd, r.data->data, r.data->len);
    n = ddm_read_u4(&rd);
    assert_true(n > 0);
    for (uint32_t i = 0; i < n; i++) {
        g_autofree char *feat = ddm_read_lstr(&rd);
        assert_non_null(feat);
        assert_string_not_equal(feat, "view-hierarchy");
    }
    reply_clear(&r);
    send_chunk(f, 2, T('V', 'U', 'L', 'W'), one, 4);
    r = wait_reply(f, 2, 200);
    assert_false(r.got); /* ART: no handler, no reply */
    fx_free(f);
}

/* VULW, then a dump with properties, under @fault: the replies as sent. */
static void test_faults(void **state)
{
    uint8_t one[4] = {0, 0, 0, 1};
    char why[200];
    (void)state;
    for (int fault = SIM_VIEW_FAULT_INDENT; fault <= SIM_VIEW_FAULT_SILENT; fault++) {
        Fx *f = fx_new_fault(FALSE, (SimViewFault)fault);
        Reply r;
        vd_windows wins;
        GByteArray *req;
        g_autofree char *window = NULL;

        send_chunk(f, 1, T('V', 'U', 'L', 'W'), one, 4);
        r = wait_reply(f, 1, fault == SIM_VIEW_FAULT_SILENT ? 200 : 1000);
        if (fault == SIM_VIEW_FAULT_SILENT) {
            assert_false(r.got);
            {
                g_autofree char *json = sim_state_to_json(f->w);
                assert_non_null(strstr(json, "\"unanswered\" : 1"));
            }
            fx_free(f);
            continue;
        }
        assert_true(r.got);
        if (fault == SIM_VIEW_FAULT_HUGE_VULW) {
            assert_int_equal(vd_parse_vulw(r.data->data, r.data->len, &wins, why, sizeof why), -1);
            assert_non_null(strstr(why, "4294967295 windows"));
            reply_clear(&r);
            fx_free(f);
            continue;
        }
        assert_int_equal(vd_parse_vulw(r.data->data, r.data->len, &wins, why, sizeof why), 0);
        window = g_strdup(wins.names[0]);
        vd_windows_clear(&wins);
        reply_clear(&r);
        if (fault == SIM_VIEW_FAULT_NOT_PNG) {
            g_autofree char *spec = g_strdup_printf("%s:id/fab", sim_vm_package_name(f->vm));
            req = vu_request(1, window, spec);
            send_chunk(f, 2, T('V', 'U', 'O', 'P'), req->data, req->len);
            g_byte_array_unref(req);
            r = wait_reply(f, 2, 1000);
            assert_int_equal(r.type, T('V', 'U', 'O', 'P'));
            assert_memory_equal(r.data->data, "GIF89a", 6);
        } else {
            vd_tree t;
            uint8_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 1};
            req = vu_request(1, window, NULL);
            g_byte_array_append(req, tail, 8);
            send_chunk(f, 2, T('V', 'U', 'R', 'T'), req->data, req->len);
            g_byte_array_unref(req);
            r = wait_reply(f, 2, 1000);
            assert_int_equal(r.type, T('V', 'U', 'R', 'T'));
            assert_int_equal(vd_parse_tree(r.data->data, r.data->len, &t, why, sizeof why), -1);
            assert_non_null(strstr(why, fault == SIM_VIEW_FAULT_INDENT ? "line 2: indentation jumps from 0 to 4"
                                                                       : "no DONE. line"));
        }
        reply_clear(&r);
        fx_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_windows),
        cmocka_unit_test(test_model_dump),
        cmocka_unit_test(test_model_find_view),
        cmocka_unit_test(test_model_theme),
#ifdef HAVE_LIBPNG
        cmocka_unit_test(test_model_capture),
#endif
        cmocka_unit_test(test_handlers),
        cmocka_unit_test(test_no_view_hierarchy),
        cmocka_unit_test(test_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
