/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the alloc plugin (plugins/alloc/ sources compiled in):
 * the REAL decoder on valid tables with every header, entry and frame
 * length (the known ones and longer), and on every bad input (each
 * truncation, offsets and counts past the end, string indices out of
 * range, huge counts and string lengths); descriptor names, frame texts
 * and grouping; then the plugin through the test kit: REAQ at ready and
 * the headline, the alloc command (start, stop, status, show with --by
 * and --top, usage, unknown VM, bad REAL), REAL only while watched, and
 * the server stopping (ABI 1.8): REAE(0) where tracking is on, only there.
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

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>
#include <ddmon/testkit.h>

#include "plugins/alloc/alloc.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

/* ------------------------------------------------------- REAL builder */

typedef struct tframe {
    uint16_t c, m, f;
    int16_t line;
} tframe;

typedef struct tentry {
    uint32_t size;
    uint16_t tid, cls;
    uint8_t depth;
    tframe fr[3];
} tentry;

static const char *const k_cls[] = {"Ljava/lang/String;", "[I", "Lcom/ex/Foo$Bar;"};
static const char *const k_meth[] = {"<init>", "run", "make"};
static const char *const k_files[] = {"String.java", "Foo.java", ""};

static const tentry k_entries[] = {
    {32, 1, 0, 2, {{0, 0, 0, 120}, {2, 1, 1, -1}}},
    {400, 7, 1, 1, {{2, 2, 1, 55}}},
    {24, 1, 0, 0, {{0}}},
    {16, 9, 2, 3, {{2, 2, 2, -2}, {1, 1, 1, 3}, {0, 0, 0, 9}}},
    {400, 7, 1, 1, {{2, 2, 1, 55}}},
};
#define N_ENTRIES (sizeof k_entries / sizeof k_entries[0])

static void pad(ddm_writer *w, unsigned n)
{
    while (n--)
        ddm_write_u1(w, 0xEE);
}

/* A REAL with lengths @hl/@el/@fl (extra bytes are 0xEE). */
static uint8_t *build_real(unsigned hl, unsigned el, unsigned fl, const tentry *e, size_t n,
                           size_t nc, size_t nm, size_t nf, size_t *len)
{
    ddm_writer w;
    size_t i, d;
    ddm_writer_init(&w, 0);
    ddm_write_u1(&w, (uint8_t)hl);
    ddm_write_u1(&w, (uint8_t)el);
    ddm_write_u1(&w, (uint8_t)fl);
    ddm_write_u2(&w, (uint16_t)n);
    ddm_write_u4(&w, 0);
    ddm_write_u2(&w, (uint16_t)nc);
    ddm_write_u2(&w, (uint16_t)nm);
    ddm_write_u2(&w, (uint16_t)nf);
    pad(&w, hl > 15 ? hl - 15 : 0);
    for (i = 0; i < n; i++) {
        ddm_write_u4(&w, e[i].size);
        ddm_write_u2(&w, e[i].tid);
        ddm_write_u2(&w, e[i].cls);
        ddm_write_u1(&w, e[i].depth);
        pad(&w, el > 9 ? el - 9 : 0);
        for (d = 0; d < e[i].depth; d++) {
            ddm_write_u2(&w, e[i].fr[d].c);
            ddm_write_u2(&w, e[i].fr[d].m);
            ddm_write_u2(&w, e[i].fr[d].f);
            ddm_write_u2(&w, (uint16_t)e[i].fr[d].line);
            pad(&w, fl > 8 ? fl - 8 : 0);
        }
    }
    ddm_writer_patch_u4(&w, 5, (uint32_t)w.len);
    for (i = 0; i < nc; i++)
        ddm_write_lstr(&w, k_cls[i]);
    for (i = 0; i < nm; i++)
        ddm_write_lstr(&w, k_meth[i]);
    for (i = 0; i < nf; i++)
        ddm_write_lstr(&w, k_files[i]);
    return ddm_writer_take(&w, len);
}

static uint8_t *std_real(size_t *len)
{
    return build_real(15, 9, 8, k_entries, N_ENTRIES, 3, 3, 3, len);
}

/* Decode a copy in an exact-size buffer (so ASan sees an over-read). */
static int parse(const uint8_t *data, size_t len, alloc_table *t, char *why)
{
    uint8_t *copy = malloc(len ? len : 1);
    int rc;
    memcpy(copy, data, len);
    rc = alloc_parse_real(copy, len, t, why, 256);
    free(copy);
    return rc;
}

static void expect_bad(const uint8_t *data, size_t len, const char *reason_part)
{
    alloc_table t;
    char why[256];
    int rc = parse(data, len, &t, why);
    if (rc != -EBADMSG)
        fail_msg("expected -EBADMSG for %zu bytes, got %d", len, rc);
    assert_non_null(strstr(why, reason_part));
    assert_int_equal(t.n, 0);
    assert_null(t.e);
    assert_null(t.classes);
}

static void check_std(const alloc_table *t)
{
    size_t i, d;
    assert_int_equal(t->n, N_ENTRIES);
    assert_int_equal(t->n_classes, 3);
    assert_int_equal(t->n_methods, 3);
    assert_int_equal(t->n_files, 3);
    assert_int_equal(t->n_frames, 7);
    for (i = 0; i < 3; i++) {
        assert_string_equal(t->classes[i], k_cls[i]);
        assert_string_equal(t->methods[i], k_meth[i]);
        assert_string_equal(t->files[i], k_files[i]);
    }
    for (i = 0; i < N_ENTRIES; i++) {
        assert_int_equal(t->e[i].size, k_entries[i].size);
        assert_int_equal(t->e[i].tid, k_entries[i].tid);
        assert_int_equal(t->e[i].cls, k_entries[i].cls);
        assert_int_equal(t->e[i].depth, k_entries[i].depth);
        for (d = 0; d < k_entries[i].depth; d++) {
            const alloc_frame *f = &t->f[t->e[i].first + d];
            assert_int_equal(f->cls, k_entries[i].fr[d].c);
            assert_int_equal(f->method, k_entries[i].fr[d].m);
            assert_int_equal(f->file, k_entries[i].fr[d].f);
            assert_int_equal(f->line, k_entries[i].fr[d].line);
        }
    }
}

/* --------------------------------------------------------- decoder tests */

static void test_real_valid(void **state)
{
    size_t len;
    uint8_t *p = std_real(&len);
    alloc_table t;
    char why[256];
    (void)state;
    assert_int_equal(parse(p, len, &t, why), 0);
    assert_int_equal(t.header_len, 15);
    assert_int_equal(t.entry_len, 9);
    assert_int_equal(t.frame_len, 8);
    check_std(&t);
    alloc_real_clear(&t);
    free(p);
}

static void test_real_empty(void **state)
{
    size_t len;
    uint8_t *p = build_real(15, 9, 8, NULL, 0, 0, 0, 0, &len);
    alloc_table t;
    char why[256];
    (void)state;
    assert_int_equal(len, 15);
    assert_int_equal(parse(p, len, &t, why), 0);
    assert_int_equal(t.n, 0);
    alloc_real_clear(&t);
    free(p);
}

static void test_real_length_variants(void **state)
{
    static const unsigned v[][3] = {
        {15, 9, 8}, {16, 9, 8}, {40, 9, 8}, {255, 9, 8}, {15, 10, 8}, {15, 255, 8},
        {15, 9, 9}, {15, 9, 255}, {31, 17, 12}, {255, 255, 255},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t len;
        uint8_t *p = build_real(v[i][0], v[i][1], v[i][2], k_entries, N_ENTRIES, 3, 3, 3, &len);
        alloc_table t;
        char why[256];
        if (parse(p, len, &t, why) != 0)
            fail_msg("lengths %u/%u/%u rejected: %s", v[i][0], v[i][1], v[i][2], why);
        assert_int_equal(t.header_len, v[i][0]);
        assert_int_equal(t.entry_len, v[i][1]);
        assert_int_equal(t.frame_len, v[i][2]);
        check_std(&t);
        alloc_real_clear(&t);
        free(p);
    }
}

static void test_real_short_lengths(void **state)
{
    static const unsigned v[][3] = {{14, 9, 8}, {0, 9, 8}, {15, 8, 8}, {15, 0, 8}, {15, 9, 7}, {15, 9, 0}};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t len;
        uint8_t *p = build_real(v[i][0] < 15 ? 15 : v[i][0], v[i][1] < 9 ? 9 : v[i][1],
                                v[i][2] < 8 ? 8 : v[i][2], k_entries, N_ENTRIES, 3, 3, 3, &len);
        p[0] = (uint8_t)v[i][0];
        p[1] = (uint8_t)v[i][1];
        p[2] = (uint8_t)v[i][2];
        expect_bad(p, len, "below the known");
        free(p);
    }
}

static void test_real_every_truncation(void **state)
{
    size_t len, cut;
    uint8_t *p = std_real(&len);
    (void)state;
    for (cut = 0; cut < len; cut++) {
        alloc_table t;
        char why[256];
        int rc = parse(p, cut, &t, why);
        if (rc != -EBADMSG)
            fail_msg("a REAL cut to %zu of %zu bytes was not rejected (%d)", cut, len, rc);
        assert_true(strlen(why) > 0);
    }
    free(p);
}

static void test_real_offsets(void **state)
{
    size_t len;
    uint8_t *p = std_real(&len);
    (void)state;
    ddm_put_u4(p + 5, 14); /* inside the header */
    expect_bad(p, len, "string table offset");
    ddm_put_u4(p + 5, (uint32_t)len + 1); /* past the end */
    expect_bad(p, len, "string table offset");
    ddm_put_u4(p + 5, 0xFFFFFFFFu);
    expect_bad(p, len, "string table offset");
    ddm_put_u4(p + 5, 15 + 9 * N_ENTRIES); /* room for the entry headers, not their frames */
    expect_bad(p, len, "runs past the string table");
    free(p);
}

static void test_real_counts(void **state)
{
    size_t len;
    uint8_t *p = std_real(&len), *q;
    (void)state;
    q = malloc(len);
    /* entry count: huge, and one more than there is */
    memcpy(q, p, len);
    q[3] = 0xFF;
    q[4] = 0xFF;
    expect_bad(q, len, "do not fit");
    memcpy(q, p, len);
    q[4] = N_ENTRIES + 1;
    expect_bad(q, len, "runs past the string table");
    /* a depth beyond the entries region: the last entry (depth 1 at the end) */
    memcpy(q, p, len);
    {
        uint32_t off = (uint32_t)q[5] << 24 | (uint32_t)q[6] << 16 | (uint32_t)q[7] << 8 | q[8];
        q[off - 8 - 1] = 200; /* the last entry's depth byte */
        expect_bad(q, len, "runs past the string table");
    }
    /* string counts: huge, and one more than there is */
    memcpy(q, p, len);
    q[9] = 0xFF;
    q[10] = 0xFF;
    expect_bad(q, len, "names do not fit");
    memcpy(q, p, len);
    q[14] = 4; /* 4 file names, 3 present */
    expect_bad(q, len, "file name 3 of 4");
    free(q);
    free(p);
}

static void test_real_string_length(void **state)
{
    size_t len;
    uint8_t *p = std_real(&len);
    uint32_t off = (uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8];
    (void)state;
    ddm_put_u4(p + off, 0x7FFFFFFFu);
    expect_bad(p, len, "class name 0 of 3");
    ddm_put_u4(p + off, 0xFFFFFFFFu);
    expect_bad(p, len, "runs past the end");
    free(p);
}

static void test_real_bad_indices(void **state)
{
    tentry e[1];
    size_t len;
    uint8_t *p;
    (void)state;
    memset(e, 0, sizeof e);
    e[0].size = 8;
    e[0].cls = 3; /* 3 class names */
    p = build_real(15, 9, 8, e, 1, 3, 3, 3, &len);
    expect_bad(p, len, "class index 3 out of range");
    free(p);
    e[0].cls = 0;
    e[0].depth = 1;
    e[0].fr[0].c = 9;
    p = build_real(15, 9, 8, e, 1, 3, 3, 3, &len);
    expect_bad(p, len, "string index out of range");
    free(p);
    e[0].fr[0].c = 0;
    e[0].fr[0].m = 3;
    p = build_real(15, 9, 8, e, 1, 3, 3, 3, &len);
    expect_bad(p, len, "method 3 of 3");
    free(p);
    e[0].fr[0].m = 0;
    e[0].fr[0].f = 0xFFFF;
    p = build_real(15, 9, 8, e, 1, 3, 3, 3, &len);
    expect_bad(p, len, "file 65535 of 3");
    free(p);
    /* no strings at all, yet an entry */
    e[0].depth = 0;
    p = build_real(15, 9, 8, e, 1, 0, 0, 0, &len);
    expect_bad(p, len, "class index 0 out of range (0 class names)");
    free(p);
}

static void test_names(void **state)
{
    static const char *const v[][2] = {
        {"Ljava/lang/String;", "java.lang.String"}, {"[I", "int[]"}, {"[[J", "long[][]"},
        {"[Ljava/lang/Object;", "java.lang.Object[]"}, {"Lcom/ex/Foo$Bar;", "com.ex.Foo$Bar"},
        {"Z", "boolean"}, {"V", "V"}, {"java.lang.Thread", "java.lang.Thread"}, {"", ""},
        {"[", "["}, {"L;", "L;"}, {"[Q", "[Q"},
    };
    size_t i;
    char *s;
    (void)state;
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        s = alloc_descriptor_to_name(v[i][0]);
        assert_string_equal(s, v[i][1]);
        free(s);
    }
    s = alloc_frame_text("a.B", "run", "B.java", 12);
    assert_string_equal(s, "a.B.run(B.java:12)");
    free(s);
    s = alloc_frame_text("a.B", "run", "B.java", -1);
    assert_string_equal(s, "a.B.run(B.java)");
    free(s);
    s = alloc_frame_text("a.B", "run", "B.java", -2);
    assert_string_equal(s, "a.B.run(Native Method)");
    free(s);
    s = alloc_frame_text("a.B", "run", "", -1);
    assert_string_equal(s, "a.B.run(Unknown Source)");
    free(s);
    s = alloc_frame_text("a.B", "run", "", 7);
    assert_string_equal(s, "a.B.run(Unknown Source:7)");
    free(s);
}

static void test_groups(void **state)
{
    size_t len;
    uint8_t *p = std_real(&len);
    alloc_table t;
    alloc_rows rows;
    alloc_group *g;
    char why[256];
    long n;
    (void)state;
    assert_int_equal(parse(p, len, &t, why), 0);
    assert_int_equal(alloc_rows_build(&t, &rows), 0);
    alloc_real_clear(&t);
    free(p);
    assert_int_equal(rows.n, N_ENTRIES);
    assert_string_equal(rows.r[0].cls, "java.lang.String");
    assert_string_equal(rows.r[0].site, "java.lang.String.<init>(String.java:120)");
    assert_string_equal(rows.r[1].site, "com.ex.Foo$Bar.make(Foo.java:55)");
    assert_null(rows.r[2].site);
    assert_string_equal(rows.r[3].site, "com.ex.Foo$Bar.make(Native Method)");

    n = alloc_group_rows(&rows, ALLOC_BY_CLASS, &g);
    assert_int_equal(n, 3);
    assert_string_equal(g[0].key, "int[]");
    assert_int_equal(g[0].count, 2);
    assert_int_equal(g[0].bytes, 800);
    assert_string_equal(g[1].key, "java.lang.String");
    assert_int_equal(g[1].bytes, 56);
    assert_string_equal(g[2].key, "com.ex.Foo$Bar");
    free(g);

    n = alloc_group_rows(&rows, ALLOC_BY_SITE, &g);
    assert_int_equal(n, 4);
    assert_string_equal(g[0].key, "com.ex.Foo$Bar.make(Foo.java:55)");
    assert_int_equal(g[0].count, 2);
    assert_int_equal(g[1].bytes, 32);
    assert_null(g[2].key); /* no stack: 24 bytes */
    assert_int_equal(g[2].bytes, 24);
    free(g);

    n = alloc_group_rows(&rows, ALLOC_BY_THREAD, &g);
    assert_int_equal(n, 3);
    assert_int_equal(g[0].tid, 7);
    assert_int_equal(g[0].bytes, 800);
    assert_int_equal(g[1].tid, 1);
    assert_int_equal(g[1].count, 2);
    assert_int_equal(g[2].tid, 9);
    free(g);
    alloc_rows_clear(&rows);
}

/* ---------------------------------------------------------- plugin tests */

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
} fixture;

/* A host whose core has ABI 1.@abi_minor (0: the kit's own), the plugin
 * loaded, one ready VM. */
static fixture *setup_abi(unsigned abi_minor)
{
    fixture *f = calloc(1, sizeof *f);
    ddm_vm_info info = {0};
    info.key = "127.0.0.1:8000";
    info.pid = 1234;
    info.ddm = 1;
    info.app_name = "com.example";
    info.user_id = -1;
    info.native_debuggable = -1;
    f->fh = fake_host_new();
    if (abi_minor)
        fake_host_set_abi_minor(f->fh, abi_minor);
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    return f;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    ddm_vm_info info = {0};
    info.key = "127.0.0.1:8000";
    info.pid = 1234;
    info.ddm = 1;
    info.app_name = "com.example";
    info.user_id = -1;
    info.native_debuggable = -1;
    f->fh = fake_host_new();
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_host_free(f->fh);
    free(f);
    return 0;
}

static ddm_cmd *run(fixture *f, int argc, const char *const *argv)
{
    ddm_cmd *c = fake_host_run_command(f->fh, argc, argv);
    assert_non_null(c);
    return c;
}

static void reply_reaq(fixture *f, int idx, uint8_t on)
{
    assert_true(idx >= 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, ALLOC_CHUNK_REAQ, &on, 1);
}

static void test_reaq_at_ready(void **state)
{
    fixture *f = *state;
    int idx = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 0);
    assert_true(idx >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)idx)->len, 0);
    assert_null(fake_host_headline(f->fh, f->vm, "alloc"));
    reply_reaq(f, idx, 1);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc"));
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc.by-class"));
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc.by-site"));
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc.by-thread"));
    /* an unsolicited REAQ (owner) keeps it current too */
    {
        static const uint8_t off = 0;
        assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAQ, DDM_ORIGIN_REPLY, &off, 1), DDM_OK);
        assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");
        assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAQ, DDM_ORIGIN_REPLY, NULL, 0), -EBADMSG);
    }
}

static void test_reaq_disabled(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm *vm;
    (void)state;
    fake_host_disable_chunk(fh, ALLOC_CHUNK_REAQ);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &(ddm_vm_info){.pid = 5, .ddm = 1});
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    assert_int_equal(fake_host_n_requests(fh), 0);
    fake_host_free(fh);
}

static void test_start_stop_status(void **state)
{
    fixture *f = *state;
    static const char *const start[] = {"alloc", "1234", "start"};
    static const char *const stop[] = {"alloc", "com.example", "stop"};
    static const char *const status[] = {"alloc", "1234", "status"};
    ddm_cmd *c;
    int reae, reaq;
    size_t from;

    reply_reaq(f, fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 0), 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");

    from = fake_host_n_requests(f->fh);
    c = run(f, 3, start);
    assert_false(fake_cmd_finished(c));
    reae = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, from);
    reaq = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, from);
    assert_true(reae >= 0 && reaq > reae);
    assert_int_equal(fake_host_request(f->fh, (size_t)reae)->len, 1);
    assert_int_equal(fake_host_request(f->fh, (size_t)reae)->data[0], 1);
    fake_host_complete_status(f->fh, (size_t)reae, DDM_REPLY_TIMEOUT); /* ART: no reply */
    reply_reaq(f, reaq, 1);
    assert_true(fake_cmd_finished(c));
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(c), "allocation tracking on");
    assert_string_equal(fake_view_field_str(fake_cmd_result(c), "enabled"), "true");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");

    from = fake_host_n_requests(f->fh);
    c = run(f, 3, stop);
    reae = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, from);
    reaq = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, from);
    assert_int_equal(fake_host_request(f->fh, (size_t)reae)->data[0], 0);
    fake_host_complete_status(f->fh, (size_t)reae, DDM_REPLY_EMPTY); /* Dalvik */
    reply_reaq(f, reaq, 0);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");

    /* the VM did not switch: FAILED, and the headline tells the truth */
    from = fake_host_n_requests(f->fh);
    c = run(f, 3, start);
    reaq = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, from);
    reply_reaq(f, reaq, 0);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(c), "still off"));
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");

    from = fake_host_n_requests(f->fh);
    c = run(f, 3, status);
    reaq = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, from);
    assert_true(reaq >= 0);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, from), -1);
    reply_reaq(f, reaq, 1);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");

    /* no answer at all */
    from = fake_host_n_requests(f->fh);
    c = run(f, 3, status);
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, from),
                              DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(c), "no reply"));
}

/* The server stops (the stopping hook): tracking that REAQ said on, with
 * a state (views made) or only the marker, is turned off; a VM where it
 * is off or not known gets nothing. */
static void test_stopping_turns_tracking_off(void **state)
{
    fixture *f = *state;
    static const char *const start[] = {"alloc", "1234", "start"};
    ddm_vm *idle = fake_host_add_vm(f->fh, &(ddm_vm_info){.key = "127.0.0.1:8001", .pid = 77,
                                                          .app_name = "com.example.idle", .ddm = 1});
    ddm_vm *unknown = fake_host_add_vm(f->fh, &(ddm_vm_info){.key = "127.0.0.1:8002", .pid = 78,
                                                             .app_name = "com.example.quiet", .ddm = 1});
    ddm_cmd *c;
    size_t from;
    int reae;

    fake_host_vm_event(f->fh, idle, DDM_VM_READY);
    fake_host_vm_event(f->fh, unknown, DDM_VM_READY); /* its REAQ stays unanswered */
    reply_reaq(f, fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 0), 0);
    reply_reaq(f, fake_host_find_request(f->fh, idle, ALLOC_CHUNK_REAQ, 0), 0);
    c = run(f, 3, start);
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, 0),
                              DDM_REPLY_TIMEOUT);
    reply_reaq(f, fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 1), 1);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_int_equal(fake_host_n_stopping_hooks(f->fh), 1);
    from = fake_host_n_requests(f->fh);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    reae = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, from);
    assert_true(reae >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)reae)->len, 1);
    assert_int_equal(fake_host_request(f->fh, (size_t)reae)->data[0], 0);
    assert_int_equal(fake_host_n_requests(f->fh), from + 1); /* nothing for the others */
    assert_true(fake_host_log_contains(f->fh, "allocation tracking turned off (REAE 0 sent)"));
}

/* Tracking on with no state (the VM's data is REAQ's marker: no view made). */
static void test_stopping_marker_only(void **state)
{
    fake_host *fh = fake_host_new();
    ddm_vm *vm;
    uint8_t on = 1;
    size_t from;
    int reae;
    (void)state;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    vm = fake_host_add_vm(fh, &(ddm_vm_info){.key = "127.0.0.1:8000", .pid = 5, .ddm = 1});
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    fake_host_complete_chunk(fh, (size_t)fake_host_find_request(fh, vm, ALLOC_CHUNK_REAQ, 0),
                             ALLOC_CHUNK_REAQ, &on, 1);
    assert_int_equal(alloc_vm_states_alive(), 0);
    from = fake_host_n_requests(fh);
    assert_int_equal(fake_host_stopping(fh), 1);
    reae = fake_host_find_request(fh, vm, ALLOC_CHUNK_REAE, from);
    assert_true(reae >= 0);
    assert_int_equal(fake_host_request(fh, (size_t)reae)->data[0], 0);
    fake_host_free(fh);
}

static void test_usage_and_not_found(void **state)
{
    fixture *f = *state;
    static const char *const a1[] = {"alloc", "1234"};
    static const char *const a2[] = {"alloc", "1234", "frob"};
    static const char *const a3[] = {"alloc", "1234", "start", "x"};
    static const char *const a4[] = {"alloc", "1234", "show", "--by", "size"};
    static const char *const a5[] = {"alloc", "1234", "show", "--top", "0"};
    static const char *const a6[] = {"alloc", "1234", "show", "--top", "-3"};
    static const char *const a7[] = {"alloc", "1234", "show", "--by"};
    static const char *const a8[] = {"alloc", "999", "status"};
    size_t before = fake_host_n_requests(f->fh);
    assert_int_equal(fake_cmd_status(run(f, 2, a1)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 3, a2)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 4, a3)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 5, a4)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 5, a5)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 5, a6)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 4, a7)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run(f, 3, a8)), DDM_CMD_NOT_FOUND);
    assert_int_equal(fake_host_n_requests(f->fh), before);
    fake_host_set_request_error_for(f->fh, ALLOC_CHUNK_REAL, -EPERM);
    {
        static const char *const s[] = {"alloc", "1234", "show"};
        ddm_cmd *c = run(f, 3, s);
        assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(c), "disabled"));
    }
}

/* Each usage error says what was wrong before the usage line, as trace's
 * and hprof's do, not the usage line alone. */
static void test_usage_says_what(void **state)
{
    fixture *f = *state;
    static const char *const a2[] = {"alloc", "1234", "frob"};
    static const char *const a3[] = {"alloc", "1234", "start", "x"};
    static const char *const a4[] = {"alloc", "1234", "show", "--by", "size"};
    static const char *const a5[] = {"alloc", "1234", "show", "--top", "0"};
    static const char *const a7[] = {"alloc", "1234", "show", "--by"};
    static const char *const a9[] = {"alloc", "1234", "show", "--bogus"};
    static const struct {
        int argc;
        const char *const *argv;
        const char *says;
    } cases[] = {
        {3, a2, "alloc: start, stop, status or show, not 'frob'\nusage: alloc VM "},
        {4, a3, "alloc start takes nothing more, not 'x'\nusage: "},
        {5, a4, "--by: class, site or thread, not 'size'\nusage: "},
        {5, a5, "--top: 1 to 1000000 rows, not '0'\nusage: "},
        {4, a7, "--by needs a value\nusage: "},
        {4, a9, "alloc show takes --by and --top, not '--bogus'\nusage: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ddm_cmd *c = run(f, cases[i].argc, cases[i].argv);
        assert_int_equal(fake_cmd_status(c), DDM_CMD_USAGE);
        assert_non_null(fake_cmd_message(c));
        assert_true(strncmp(fake_cmd_message(c), cases[i].says, strlen(cases[i].says)) == 0);
    }
}

static ddm_cmd *show(fixture *f, int argc, const char *const *argv, const uint8_t *real, size_t len)
{
    size_t from = fake_host_n_requests(f->fh);
    ddm_cmd *c = run(f, argc, argv);
    int idx = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, from);
    assert_true(idx >= 0);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAE, from), -1); /* never a disable */
    assert_false(fake_cmd_finished(c));
    fake_host_complete_chunk(f->fh, (size_t)idx, ALLOC_CHUNK_REAL, real, len);
    assert_true(fake_cmd_finished(c));
    return c;
}

static void test_show(void **state)
{
    fixture *f = *state;
    static const char *const all[] = {"alloc", "1234", "show"};
    static const char *const cls[] = {"alloc", "1234", "show", "--by", "class"};
    static const char *const site[] = {"alloc", "1234", "show", "--by=site", "--top=2"};
    static const char *const thr[] = {"alloc", "1234", "show", "--top", "1", "--by", "thread"};
    size_t len;
    uint8_t *p = std_real(&len);
    ddm_cmd *c;
    ddm_view *v;

    /* the VM's views, looked at first: the reply fills those that exist */
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc"));
    c = show(f, 3, all, p, len);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(c), "5 allocations"));
    v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 5);
    assert_string_equal(fake_view_cell_str(v, 0, "class"), "java.lang.String");
    assert_int_equal(fake_view_cell_int(v, 1, "size"), 400);
    assert_string_equal(fake_view_col_unit(v, "size"), "B");
    assert_int_equal(fake_view_cell_int(v, 3, "thread"), 9);
    assert_true(fake_view_cell_is_null(v, 2, "site"));
    assert_string_equal(fake_view_cell_str(v, 1, "site"), "com.ex.Foo$Bar.make(Foo.java:55)");
    /* the VM's views follow the same reply */
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc")), 5);
    v = fake_view_find(f->fh, f->vm, "alloc.by-class");
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_string_equal(fake_view_cell_str(v, 0, "class"), "int[]");
    assert_int_equal(fake_view_cell_int(v, 0, "bytes"), 800);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-site")), 4);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-thread")), 3);

    c = show(f, 5, cls, p, len);
    v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_int_equal(fake_view_cell_int(v, 0, "count"), 2);
    assert_string_equal(fake_view_cell_str(v, 2, "class"), "com.ex.Foo$Bar");

    c = show(f, 5, site, p, len);
    v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_string_equal(fake_view_cell_str(v, 0, "site"), "com.ex.Foo$Bar.make(Foo.java:55)");

    c = show(f, 7, thr, p, len);
    v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_cell_int(v, 0, "thread"), 7);

    /* a bad REAL: FAILED with the reason, the views keep their content */
    {
        unsigned version = fake_view_version(fake_view_find(f->fh, f->vm, "alloc"));
        p[4] = 0xFF;
        c = show(f, 3, all, p, len);
        assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(c), "malformed"));
        assert_non_null(strstr(fake_cmd_message(c), "entries"));
        assert_int_equal(fake_view_version(fake_view_find(f->fh, f->vm, "alloc")), version);
        assert_true(fake_host_log_contains(f->fh, "bad REAL"));
    }
    free(p);

    /* a FAIL reply */
    {
        size_t from = fake_host_n_requests(f->fh);
        c = run(f, 3, all);
        fake_host_complete_fail(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, from),
                                1, "nope");
        assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(c), "nope"));
    }
}

static void test_poll_only_while_watched(void **state)
{
    fixture *f = *state;
    size_t len;
    uint8_t *p = std_real(&len);
    int idx;

    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, 0), -1);
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "alloc.by-site"), 1);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, 0);
    assert_true(idx >= 0);
    fake_host_fire_timers(f->fh); /* one in flight at most */
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, ALLOC_CHUNK_REAL), 1);
    fake_host_complete_chunk(f->fh, (size_t)idx, ALLOC_CHUNK_REAL, p, len);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-site")), 4);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc")), 5);
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "alloc.by-site"), 0);
    {
        size_t n = fake_host_n_requests(f->fh);
        fake_host_fire_timers(f->fh);
        assert_int_equal(fake_host_n_requests(f->fh), n);
    }
    /* an unsolicited or unclaimed REAL goes to the owner */
    p[4] = 1;
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAL, DDM_ORIGIN_REPLY, p, len), DDM_OK);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc")), 1);
    free(p);
}

/* ABI 1.7: with no view watched the poll tick sleeps; a watch wakes it and
 * REAL goes; when the watch ends the next tick finds nothing and sleeps. */
static void test_idle_tick_sleeps(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "alloc.by-class");
    int n;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 0);
    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 0);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, ALLOC_CHUNK_REAL), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 1); /* watched: it ticks */
    fake_view_set_watchers(v, 0);
    n = (int)fake_host_n_requests(f->fh);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 1);
    assert_int_equal((int)fake_host_n_requests(f->fh), n);
}

/* Plugin ABI 1.6: a ready VM nobody asked about holds none of the four
 * views; the first look makes all four as they were made before (columns,
 * no rows), and a REAL before any look makes them with its rows. */
static void test_views_made_when_asked(void **state)
{
    fixture *f = *state;
    static const char *const names[] = { "alloc", "alloc.by-class", "alloc.by-site",
                                         "alloc.by-thread" };
    ddm_vm_info info = {0};
    ddm_vm *other;
    ddm_view *v;
    uint8_t *p;
    size_t len, i;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    v = fake_view_find(f->fh, f->vm, "alloc.by-site");
    assert_non_null(v);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    for (i = 0; i < 4; i++) {
        v = fake_view_find_made(f->fh, f->vm, names[i]);
        assert_non_null(v);
        assert_int_equal(fake_view_n_rows(v), 0);
        assert_int_equal(fake_view_version(v), 0);
    }
    assert_string_equal(fake_view_title(fake_view_find_made(f->fh, f->vm, "alloc")), "Allocations");
    assert_int_equal(fake_view_n_cols(fake_view_find_made(f->fh, f->vm, "alloc")), 4);

    info.key = "127.0.0.1:8001";
    info.pid = 1235;
    info.ddm = 1;
    info.user_id = -1;
    info.native_debuggable = -1;
    other = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, other, DDM_VM_READY);
    assert_int_equal(fake_host_n_views_made(f->fh, other), 0);
    /* a REAL before any look makes no view (review rU2 1); the plugin keeps
     * no copy of a REAL, so the first look's views are empty until the next */
    p = std_real(&len);
    assert_int_equal(fake_host_deliver(f->fh, other, ALLOC_CHUNK_REAL, DDM_ORIGIN_EVENT, p, len), DDM_OK);
    assert_int_equal(fake_host_n_views_made(f->fh, other), 0);
    v = fake_view_find(f->fh, other, "alloc");
    assert_int_equal(fake_host_n_views_made(f->fh, other), 4);
    assert_int_equal(fake_view_n_rows(v), 0);
    assert_int_equal(fake_host_deliver(f->fh, other, ALLOC_CHUNK_REAL, DDM_ORIGIN_EVENT, p, len), DDM_OK);
    free(p);
    assert_int_equal(fake_view_n_rows(v), N_ENTRIES);
    assert_int_equal(fake_view_version(v), 1);
}

/* Views made when asked and then unwatched for the core's linger go
 * (vm_view_unmake), the watched one stays; the next look makes the rest
 * again, the same columns, and a REAL fills all four. */
static void test_views_unmade_when_unwatched(void **state)
{
    fixture *f = *state;
    ddm_view *site;
    uint8_t *p;
    size_t len;

    assert_non_null(fake_view_find(f->fh, f->vm, "alloc"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    site = fake_view_find_made(f->fh, f->vm, "alloc.by-site");
    fake_view_set_watchers(site, 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 3);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "alloc.by-site"), site);
    /* a REAL fills the watched one and makes none of the others (review rU2 1) */
    p = std_real(&len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAL, DDM_ORIGIN_EVENT, p, len),
                     DDM_OK);
    free(p);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1);
    assert_true(fake_view_n_rows(site) > 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    assert_non_null(fake_view_find(f->fh, f->vm, "alloc.by-class")); /* made again */
    assert_int_equal(fake_view_n_rows(fake_view_find_made(f->fh, f->vm, "alloc.by-class")), 0);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_string_equal(fake_view_title(fake_view_find_made(f->fh, f->vm, "alloc")), "Allocations");
    assert_int_equal(fake_view_n_cols(fake_view_find_made(f->fh, f->vm, "alloc")), 4);
    p = std_real(&len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAL, DDM_ORIGIN_EVENT, p, len),
                     DDM_OK);
    free(p);
    assert_int_equal(fake_view_n_rows(fake_view_find_made(f->fh, f->vm, "alloc")), N_ENTRIES);
    assert_true(fake_view_n_rows(site) > 0);
}

/* `alloc VM show` with no view open (review rU3 2): the reply makes the
 * VM's views and fills them, so a later look shows it (with alloc.interval=0
 * or nobody watching, nothing else asks REAL, and the plugin keeps no
 * copy); they are taken back after the linger. */
static void test_show_makes_the_views(void **state)
{
    fixture *f = *state;
    static const char *const all[] = {"alloc", "1234", "show"};
    size_t len;
    uint8_t *p = std_real(&len);
    ddm_cmd *c;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    c = show(f, 3, all, p, len);
    free(p);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc")), N_ENTRIES);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-class")), 3);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-site")), 4);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "alloc.by-thread")), 3);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
}

/* Issue 16: a VM nobody asks about keeps no state (REAQ's answer is its
 * data pointer: nothing for "off", a shared marker for "on"); a look, a
 * watch's polls and `alloc show` make one, with REAQ's answer in it, and
 * it goes when its views are taken back and no REAL is out. */
static void test_idle_vm_holds_no_state(void **state)
{
    fixture *f = *state;
    static const char *const all[] = {"alloc", "1234", "show"};
    size_t len;
    uint8_t *p = std_real(&len);
    ddm_view *v;
    ddm_cmd *c;
    int idx;

    assert_int_equal(alloc_vm_states_alive(), 0); /* REAQ asked, not answered */
    reply_reaq(f, fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 0), 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");
    assert_int_equal(alloc_vm_states_alive(), 0);
    /* "off" is no data at all: the core keeps no entry for the VM */
    assert_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), f->vm));
    fake_host_fire_timers(f->fh);
    assert_int_equal(alloc_vm_states_alive(), 0);

    /* a look: the state comes with the views, and knows tracking is off */
    v = fake_view_find(f->fh, f->vm, "alloc");
    assert_non_null(v);
    assert_int_equal(alloc_vm_states_alive(), 1);
    c = show(f, 3, all, p, len);
    assert_non_null(strstr(fake_cmd_message(c), "(tracking is off)"));
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(alloc_vm_states_alive(), 0);

    /* a watch: polls keep the state; the watch ends with a REAL out, the
     * views go, and the state with the REAL's answer */
    v = fake_view_find(f->fh, f->vm, "alloc.by-class");
    fake_view_set_watchers(v, 1);
    idx = (int)fake_host_n_requests(f->fh);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, (size_t)idx);
    assert_true(idx >= 0);
    fake_view_set_watchers(v, 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(alloc_vm_states_alive(), 1); /* the REAL is out */
    fake_host_complete_chunk(f->fh, (size_t)idx, ALLOC_CHUNK_REAL, p, len);
    assert_int_equal(alloc_vm_states_alive(), 0);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);

    /* "on" is kept without a state too: a show after it does not say off */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAQ, DDM_ORIGIN_EVENT,
                                       (const uint8_t[]){1}, 1), DDM_OK);
    assert_int_equal(alloc_vm_states_alive(), 0);
    c = show(f, 3, all, p, len);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    assert_null(strstr(fake_cmd_message(c), "tracking is off"));
    assert_int_equal(alloc_vm_states_alive(), 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(alloc_vm_states_alive(), 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");

    /* a failed show and an unsolicited REAL with no view leave none */
    {
        size_t from = fake_host_n_requests(f->fh);
        c = run(f, 3, all);
        fake_host_complete_fail(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, from),
                                1, "nope");
        assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    }
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAL, DDM_ORIGIN_EVENT, p, len), DDM_OK);
    assert_int_equal(alloc_vm_states_alive(), 0);
    free(p);
}

/* --chunks with REAQ on and REAL off (review rP 6): no view is ever made,
 * so an idle VM keeps REAQ's answer in its data pointer, as with the
 * declared views: no state at READY, none after REAQ's answer, none
 * after a `show` the core refuses. */
static void test_real_disabled_no_state(void **state)
{
    fixture f;
    static const char *const all[] = {"alloc", "1234", "show"};
    ddm_cmd *c;
    (void)state;
    f.fh = fake_host_new();
    fake_host_disable_chunk(f.fh, ALLOC_CHUNK_REAL);
    assert_int_equal(fake_host_load(f.fh, &ddm_plugin_descriptor), 0);
    f.vm = fake_host_add_vm(f.fh, &(ddm_vm_info){.key = "127.0.0.1:8000", .pid = 1234, .ddm = 1,
                                                  .user_id = -1, .native_debuggable = -1});
    fake_host_vm_event(f.fh, f.vm, DDM_VM_READY);
    assert_int_equal(alloc_vm_states_alive(), 0); /* REAQ asked, not answered */
    reply_reaq(&f, fake_host_find_request(f.fh, f.vm, ALLOC_CHUNK_REAQ, 0), 1);
    assert_string_equal(fake_host_headline(f.fh, f.vm, "alloc"), "on");
    assert_int_equal(alloc_vm_states_alive(), 0);
    assert_non_null(fake_host_table(f.fh)->vm_get_data(fake_host_plugin(f.fh), f.vm)); /* "on" */
    c = run(&f, 3, all);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    assert_int_equal(fake_host_n_views_made(f.fh, f.vm), 0);
    fake_host_fire_timers(f.fh);
    assert_int_equal(alloc_vm_states_alive(), 0);
    assert_int_equal(fake_host_deliver(f.fh, f.vm, ALLOC_CHUNK_REAQ, DDM_ORIGIN_EVENT,
                                       (const uint8_t[]){0}, 1), DDM_OK);
    assert_string_equal(fake_host_headline(f.fh, f.vm, "alloc"), "off");
    assert_null(fake_host_table(f.fh)->vm_get_data(fake_host_plugin(f.fh), f.vm));
    assert_int_equal(alloc_vm_states_alive(), 0);
    fake_host_free(f.fh);
}

/* The number of lines of the captured log at @level that hold @needle. */
static int log_lines(fixture *f, const char *level, const char *needle)
{
    int n = 0;
    const char *line = fake_host_log_text(f->fh);
    size_t ll = strlen(level);
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        if (strncmp(copy, level, ll) == 0 && copy[ll] == ':' && strstr(copy, needle))
            n++;
        free(copy);
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* A watch of @f->vm's "alloc" view whose poll's REAL the VM refuses; the
 * watch ends and the views are taken back: the VM goes back to REAQ's
 * answer (no state). */
static void refused_poll(fixture *f)
{
    ddm_view *v = fake_view_find(f->fh, f->vm, "alloc");
    size_t from = fake_host_n_requests(f->fh);
    int idx;
    fake_view_set_watchers(v, 1);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAL, from);
    assert_true(idx >= 0);
    fake_host_complete_fail(f->fh, (size_t)idx, 1, "nope");
    fake_view_set_watchers(v, 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(alloc_vm_states_alive(), 0);
}

/* A refused poll is logged at info once per VM (review rP 7), also when
 * the VM's state went back to REAQ's answer in between: the marker keeps
 * "logged" for each answer; "off" and logged is a marker, not NULL. */
static void test_poll_failure_logged_once_per_vm(void **state)
{
    fixture *f = *state;
    const char *msg = "no allocations from REAL";
    reply_reaq(f, fake_host_find_request(f->fh, f->vm, ALLOC_CHUNK_REAQ, 0), 0);
    assert_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), f->vm));
    refused_poll(f);
    assert_int_equal(log_lines(f, "info", msg), 1);
    assert_non_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), f->vm));
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "off");
    refused_poll(f);
    assert_int_equal(log_lines(f, "info", msg), 1);
    assert_int_equal(log_lines(f, "debug", msg), 1);
    /* a new answer keeps it too */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, ALLOC_CHUNK_REAQ, DDM_ORIGIN_EVENT,
                                       (const uint8_t[]){1}, 1), DDM_OK);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");
    refused_poll(f);
    assert_int_equal(log_lines(f, "info", msg), 1);
    assert_int_equal(log_lines(f, "debug", msg), 2);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "alloc"), "on");
}

/* A core before 1.6 (no vm_view_declare): the four alloc views are made
 * at DDM_VM_READY, as before. */
static void test_old_core_views_at_ready(void **state)
{
    fixture *f = setup_abi(5);
    static const char *const names[] = { "alloc", "alloc.by-class", "alloc.by-site",
                                         "alloc.by-thread" };
    (void)state;
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    for (size_t i = 0; i < 4; i++)
        assert_non_null(fake_view_find_made(f->fh, f->vm, names[i]));
    teardown((void **)&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_valid),
        cmocka_unit_test(test_real_empty),
        cmocka_unit_test(test_real_length_variants),
        cmocka_unit_test(test_real_short_lengths),
        cmocka_unit_test(test_real_every_truncation),
        cmocka_unit_test(test_real_offsets),
        cmocka_unit_test(test_real_counts),
        cmocka_unit_test(test_real_string_length),
        cmocka_unit_test(test_real_bad_indices),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_groups),
        cmocka_unit_test_setup_teardown(test_reaq_at_ready, setup, teardown),
        cmocka_unit_test(test_reaq_disabled),
        cmocka_unit_test(test_real_disabled_no_state),
        cmocka_unit_test_setup_teardown(test_start_stop_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_turns_tracking_off, setup, teardown),
        cmocka_unit_test(test_stopping_marker_only),
        cmocka_unit_test_setup_teardown(test_usage_and_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_says_what, setup, teardown),
        cmocka_unit_test_setup_teardown(test_show, setup, teardown),
        cmocka_unit_test_setup_teardown(test_show_makes_the_views, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_tick_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_only_while_watched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_made_when_asked, setup, teardown),
        cmocka_unit_test(test_old_core_views_at_ready),
        cmocka_unit_test_setup_teardown(test_views_unmade_when_unwatched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_vm_holds_no_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_failure_logged_once_per_vm, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
