/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of core/wire/helo.c: HELO replies with every prefix of the
 * optional tails, cut at every byte, with hostile lengths and bad UTF-16;
 * the HELO request; FEAT and FAIL payloads (doc/protocol.md, "HELO, FEAT,
 * FAIL").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/bytes.h>

#include "core/wire/ddm.h"
#include "test-util.h"

/* ------------------------------------------------------------- HELO */

#define VM_IDENT "Dalvik v2.1.0"
#define APP_NAME "com.example.app"
#define ABI "64-bit (arm64)"
#define JVM_FLAGS "CheckJNI=false"
#define PACKAGE "com.example"
#define USER_ID 10
#define BOOT_STAGE DDM_CHUNK('A', '_', 'G', 'O')

/* Levels of a HELO reply: 0 = mandatory part only, then each tail in wire
 * order; level 7 adds 5 unknown bytes a future VM might send. */
enum {
    L_MANDATORY,
    L_USER_ID,
    L_ABI,
    L_JVM_FLAGS,
    L_NATIVE_DEBUGGABLE,
    L_PACKAGE,
    L_BOOT_STAGE,
    L_UNKNOWN,
    N_LEVELS
};

/* Build the fullest HELO reply; ends[k] = payload length at level k. (free) */
static uint8_t *build_helo(size_t ends[N_LEVELS], size_t *len)
{
    ddm_writer w;
    uint8_t *p;

    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, 1);
    ddm_write_u4(&w, 4242);
    ddm_write_u4(&w, (uint32_t)strlen(VM_IDENT));
    ddm_write_u4(&w, (uint32_t)strlen(APP_NAME));
    ddm_write_str16(&w, VM_IDENT);
    ddm_write_str16(&w, APP_NAME);
    ends[L_MANDATORY] = w.len;
    ddm_write_u4(&w, USER_ID);
    ends[L_USER_ID] = w.len;
    ddm_write_lstr(&w, ABI);
    ends[L_ABI] = w.len;
    ddm_write_lstr(&w, JVM_FLAGS);
    ends[L_JVM_FLAGS] = w.len;
    ddm_write_u1(&w, 1);
    ends[L_NATIVE_DEBUGGABLE] = w.len;
    ddm_write_lstr(&w, PACKAGE);
    ends[L_PACKAGE] = w.len;
    ddm_write_u4(&w, BOOT_STAGE);
    ends[L_BOOT_STAGE] = w.len;
    ddm_write_bytes(&w, "\x01\x02\x03\x04\x05", 5);
    ends[L_UNKNOWN] = w.len;
    p = ddm_writer_take(&w, len);
    assert_non_null(p);
    return p;
}

/* Check @h holds exactly the fields up to @level. */
static void check_helo_level(const DdmHelo *h, int level)
{
    assert_int_equal(h->protocol_version, 1);
    assert_int_equal(h->pid, 4242);
    assert_string_equal(h->vm_ident, VM_IDENT);
    assert_string_equal(h->app_name, APP_NAME);
    assert_int_equal(h->user_id, level >= L_USER_ID ? USER_ID : -1);
    if (level >= L_ABI)
        assert_string_equal(h->abi, ABI);
    else
        assert_null(h->abi);
    if (level >= L_JVM_FLAGS)
        assert_string_equal(h->jvm_flags, JVM_FLAGS);
    else
        assert_null(h->jvm_flags);
    assert_int_equal(h->native_debuggable, level >= L_NATIVE_DEBUGGABLE ? 1 : -1);
    if (level >= L_PACKAGE)
        assert_string_equal(h->package_name, PACKAGE);
    else
        assert_null(h->package_name);
    assert_int_equal(h->boot_stage, level >= L_BOOT_STAGE ? BOOT_STAGE : 0);
}

static void test_helo_each_level(void **state)
{
    size_t ends[N_LEVELS], len;
    uint8_t *p = build_helo(ends, &len);
    int level;
    (void)state;

    for (level = 0; level < N_LEVELS; level++) {
        DdmHelo h;
        print_message("# level %d (%zu bytes)\n", level, ends[level]);
        assert_true(ddm_helo_parse(p, ends[level], &h));
        check_helo_level(&h, level > L_BOOT_STAGE ? L_BOOT_STAGE : level);
        assert_int_equal(h.trailing, level == L_UNKNOWN ? 5 : 0);
        ddm_helo_clear(&h);
    }
    free(p);
}

/* Cut at every byte: below the mandatory part it fails; above it, the
 * tails that fit are read and a partial tail is counted as trailing. */
static void test_helo_every_length(void **state)
{
    size_t ends[N_LEVELS], len, cut;
    uint8_t *p = build_helo(ends, &len);
    (void)state;

    for (cut = 0; cut <= len; cut++) {
        uint8_t *copy = g_malloc(cut + 1);
        DdmHelo h;

        memcpy(copy, p, cut);
        memset(&h, 0x5A, sizeof h);
        if (cut < ends[L_MANDATORY]) {
            assert_false(ddm_helo_parse(copy, cut, &h));
            /* a failed parse leaves a cleared struct */
            assert_null(h.vm_ident);
            assert_null(h.app_name);
            assert_null(h.abi);
            assert_int_equal(h.user_id, -1);
            ddm_helo_clear(&h);
        } else {
            int level = L_MANDATORY;
            while (level < L_BOOT_STAGE && ends[level + 1] <= cut)
                level++;
            assert_true(ddm_helo_parse(copy, cut, &h));
            check_helo_level(&h, level);
            assert_int_equal(h.trailing, cut - ends[level]);
            ddm_helo_clear(&h);
        }
        g_free(copy);
    }
    free(p);
}

/* A length field that overruns: FALSE (mandatory) or an absent tail. */
static uint8_t *dup_bytes(const uint8_t *p, size_t len)
{
    uint8_t *q = g_malloc(len);
    memcpy(q, p, len);
    return q;
}

static void test_helo_hostile_lengths(void **state)
{
    /* 0 stands for "the payload length": more units than there are bytes */
    static const uint32_t huge[] = { 0, 0x7FFFFFFFu, 0x80000000u, 0x80000001u, 0xFFFFFFFFu };
    size_t ends[N_LEVELS], len, i;
    uint8_t *p = build_helo(ends, &len);
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(huge); i++) {
        DdmHelo h;
        uint32_t bad = huge[i] ? huge[i] : (uint32_t)len;

        /* vmIdentLen (offset 8), then appNameLen (offset 12) */
        uint8_t *copy = dup_bytes(p, len);
        ddm_put_u4(copy + 8, bad);
        assert_false(ddm_helo_parse(copy, len, &h));
        assert_null(h.vm_ident);
        g_free(copy);

        copy = dup_bytes(p, len);
        ddm_put_u4(copy + 12, bad);
        assert_false(ddm_helo_parse(copy, len, &h));
        g_free(copy);

        /* abi's lstr count: the tail and all after it are absent, counted as trailing */
        copy = dup_bytes(p, len);
        ddm_put_u4(copy + ends[L_USER_ID], bad);
        assert_true(ddm_helo_parse(copy, len, &h));
        check_helo_level(&h, L_USER_ID);
        assert_int_equal(h.trailing, len - ends[L_USER_ID]);
        ddm_helo_clear(&h);
        g_free(copy);
    }
    free(p);
}

static void test_helo_bad_utf16(void **state)
{
    /* vmIdent = "A" + lone high surrogate, appName = lone low surrogate + "B" */
    size_t len;
    uint8_t *p = test_util_unhex("00 00 00 01 00 00 00 07 00 00 00 02 00 00 00 02"
                                 "00 41 d8 00 | dc 00 00 42",
                                 &len);
    DdmHelo h;
    (void)state;

    assert_true(ddm_helo_parse(p, len, &h));
    assert_int_equal(h.pid, 7);
    assert_string_equal(h.vm_ident, "A\xEF\xBF\xBD");
    assert_string_equal(h.app_name, "\xEF\xBF\xBD" "B");
    assert_true(g_utf8_validate(h.vm_ident, -1, NULL));
    assert_int_equal(h.user_id, -1);
    assert_int_equal(h.trailing, 0);
    ddm_helo_clear(&h);
    g_free(p);
}

static void test_helo_empty_names(void **state)
{
    static const uint8_t p[16] = { 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0 };
    DdmHelo h;
    (void)state;

    assert_true(ddm_helo_parse(p, sizeof p, &h));
    assert_string_equal(h.vm_ident, "");
    assert_string_equal(h.app_name, "");
    ddm_helo_clear(&h);
    ddm_helo_clear(&h); /* clearing twice is harmless */
    ddm_helo_clear(NULL);
}

static void test_helo_request(void **state)
{
    uint8_t out[4];
    (void)state;

    ddm_helo_request(out, 1);
    assert_bytes_equal(out, 4, "\x00\x00\x00\x01", 4);
    ddm_helo_request(out, 0x01020304u);
    assert_bytes_equal(out, 4, "\x01\x02\x03\x04", 4);
}

/* ------------------------------------------------------------- FEAT */

static uint8_t *build_feat(uint32_t count, const char *const *names, size_t n, size_t *len)
{
    ddm_writer w;
    size_t i;
    uint8_t *p;

    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, count);
    for (i = 0; i < n; i++)
        ddm_write_lstr(&w, names[i]);
    p = ddm_writer_take(&w, len);
    assert_non_null(p);
    return p;
}

static void test_feat_parse(void **state)
{
    static const char *const names[] = { "hprof-heap-dump", "method-trace-profiling", "",
                                         "view-hierarchy" };
    size_t len, cut, i;
    uint8_t *p = build_feat(4, names, 4, &len);
    char **v;
    (void)state;

    v = ddm_feat_parse(p, len);
    assert_non_null(v);
    assert_int_equal(g_strv_length(v), 4);
    for (i = 0; i < 4; i++)
        assert_string_equal(v[i], names[i]);
    g_strfreev(v);

    /* every truncation fails */
    for (cut = 0; cut < len; cut++)
        assert_null(ddm_feat_parse(p, cut));
    free(p);

    /* trailing bytes after the last string are tolerated */
    {
        uint8_t *q = g_malloc(len + 3);
        p = build_feat(4, names, 4, &len);
        memcpy(q, p, len);
        memcpy(q + len, "xyz", 3);
        v = ddm_feat_parse(q, len + 3);
        assert_non_null(v);
        assert_int_equal(g_strv_length(v), 4);
        g_strfreev(v);
        g_free(q);
        free(p);
    }
}

static void test_feat_empty(void **state)
{
    static const uint8_t zero[4] = { 0 };
    char **v = ddm_feat_parse(zero, sizeof zero);
    (void)state;

    assert_non_null(v);
    assert_null(v[0]);
    g_strfreev(v);
}

static void test_feat_malformed(void **state)
{
    static const char *const two[] = { "a", "b" };
    static const struct {
        const char *what;
        uint32_t count;
        size_t n_names;
    } cases[] = {
        { "count 0xFFFFFFFF", 0xFFFFFFFFu, 2 },
        { "count 0x40000000", 0x40000000u, 2 },
        { "count one more than the strings", 3, 2 },
    };
    size_t i, len;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t *p = build_feat(cases[i].count, two, cases[i].n_names, &len);
        print_message("# case: %s\n", cases[i].what);
        assert_null(ddm_feat_parse(p, len));
        free(p);
    }

    /* an lstr whose count runs past the end */
    {
        uint8_t *p = test_util_unhex("00 00 00 01 | 00 00 00 05 00 61 00 62", &len);
        assert_null(ddm_feat_parse(p, len));
        g_free(p);
        p = test_util_unhex("00 00 00 01 | ff ff ff ff 00 61", &len);
        assert_null(ddm_feat_parse(p, len));
        g_free(p);
    }
    assert_null(ddm_feat_parse(NULL, 0));
}

/* A FEAT reply keeps at most max_names names, each from at most max_units
 * UTF-16 units; the rest is walked, never allocated, but still checked:
 * 1,000,000 empty names (4 MB) give back 256 names and the true count. */
static void test_feat_capped(void **state)
{
    const uint32_t million = 1000000;
    size_t len = 4 + (size_t)million * 4;
    uint8_t *p = g_malloc0(len);
    DdmFeatSize size = { 0, 0 };
    char **v;
    (void)state;

    ddm_put_u4(p, million);
    v = ddm_feat_parse_capped(p, len, 256, 256, &size);
    assert_non_null(v);
    assert_int_equal(g_strv_length(v), 256);
    assert_string_equal(v[255], "");
    assert_int_equal(size.count, million);
    assert_int_equal(size.longest_units, 0);
    g_strfreev(v);
    v = ddm_feat_parse(p, len); /* the default caps */
    assert_non_null(v);
    assert_int_equal(g_strv_length(v), DDM_FEAT_NAMES_MAX);
    g_strfreev(v);

    /* a name past the cap is still checked: its length runs past the end */
    ddm_put_u4(p + len - 4, 1);
    assert_null(ddm_feat_parse_capped(p, len, 256, 256, &size));
    g_free(p);

    /* long names: cut to max_units units, never between the two halves of
     * a surrogate pair; the longest is counted in units, kept or not */
    {
        GString *a = g_string_new(NULL), *b = g_string_new(NULL);
        g_string_append(b, "xy"); /* "xy" then U+1F600 at units 2-3 */
        g_string_append(b, "\xf0\x9f\x98\x80");
        g_string_append(b, "z");
        for (int i = 0; i < 300; i++)
            g_string_append_c(a, 'a');
        const char *names[] = { a->str, b->str, "c", "far-too-long-but-never-kept" };
        uint8_t *q = build_feat(4, names, 4, &len);
        v = ddm_feat_parse_capped(q, len, 3, 3, &size);
        assert_non_null(v);
        assert_int_equal(g_strv_length(v), 3);
        assert_string_equal(v[0], "aaa");
        assert_string_equal(v[1], "xy"); /* 3 units would split the pair */
        assert_string_equal(v[2], "c");
        assert_int_equal(size.count, 4);
        assert_int_equal(size.longest_units, 300);
        g_strfreev(v);
        v = ddm_feat_parse_capped(q, len, 4, 4, &size);
        assert_non_null(v);
        assert_string_equal(v[1], "xy\xf0\x9f\x98\x80"); /* 4 units hold the pair */
        assert_string_equal(v[3], "far-");
        g_strfreev(v);
        v = ddm_feat_parse_capped(q, len, 0, 0, &size);
        assert_non_null(v);
        assert_null(v[0]);
        assert_int_equal(size.count, 4);
        g_strfreev(v);
        free(q);
        g_string_free(a, TRUE);
        g_string_free(b, TRUE);
    }
}

/* ------------------------------------------------------------- FAIL */

static void test_fail_parse(void **state)
{
    static const struct {
        const char *what;
        const char *hex;
        gboolean ok;
        uint32_t code;
        const char *msg;
    } cases[] = {
        { "generic", "00 00 00 01 00 00 00 02 00 6e 00 6f", TRUE, 1, "no" },
        { "view debug -2", "ff ff ff fe 00 00 00 01 00 78", TRUE, 0xFFFFFFFEu, "x" },
        { "empty message", "00 00 00 01 00 00 00 00", TRUE, 1, "" },
        { "trailing bytes", "00 00 00 01 00 00 00 01 00 78 ff ff ff", TRUE, 1, "x" },
        { "lone surrogate", "00 00 00 01 00 00 00 01 d8 00", TRUE, 1, "\xEF\xBF\xBD" },
        { "message overruns", "00 00 00 01 00 00 00 03 00 78", FALSE, 0, NULL },
        { "count 0xFFFFFFFF", "00 00 00 01 ff ff ff ff 00 78", FALSE, 0, NULL },
        { "count 0x80000000", "00 00 00 01 80 00 00 00 00 78", FALSE, 0, NULL },
        { "no count", "00 00 00 01 00 00 00", FALSE, 0, NULL },
        { "nothing", "", FALSE, 0, NULL },
    };
    size_t i;
    (void)state;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        size_t len;
        uint8_t *p = test_util_unhex(cases[i].hex, &len);
        uint32_t code = 777;
        char *msg = NULL;

        print_message("# case: %s\n", cases[i].what);
        assert_int_equal(ddm_fail_parse(p, len, &code, &msg), cases[i].ok);
        if (cases[i].ok) {
            assert_int_equal(code, cases[i].code);
            assert_string_equal(msg, cases[i].msg);
            g_free(msg);
            /* out parameters are optional */
            assert_true(ddm_fail_parse(p, len, NULL, NULL));
        } else {
            assert_int_equal(code, 777);
            assert_null(msg);
        }
        g_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helo_each_level),
        cmocka_unit_test(test_helo_every_length),
        cmocka_unit_test(test_helo_hostile_lengths),
        cmocka_unit_test(test_helo_bad_utf16),
        cmocka_unit_test(test_helo_empty_names),
        cmocka_unit_test(test_helo_request),
        cmocka_unit_test(test_feat_parse),
        cmocka_unit_test(test_feat_empty),
        cmocka_unit_test(test_feat_malformed),
        cmocka_unit_test(test_feat_capped),
        cmocka_unit_test(test_fail_parse),
    };
    return cmocka_run_group_tests_name("helo", tests, NULL, NULL);
}
