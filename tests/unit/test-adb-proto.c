/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the adb host protocol codec (core/adb_proto.c): hex4
 * framing in both cases, OKAY/FAIL, truncated and malformed lengths, a
 * length larger than the data, device and pid lists, pid diffs, and the
 * server address from ADB_SERVER_SOCKET / ANDROID_ADB_SERVER_PORT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adb_proto.h"

static void test_adb_format_request(void **state)
{
    GString *s = g_string_new(NULL);
    assert_true(ddm_adb_format_request(s, "host:version"));
    assert_string_equal(s->str, "000chost:version");
    g_string_truncate(s, 0);
    char *big = g_strnfill(0x10000, 'a');
    assert_false(ddm_adb_format_request(s, big));
    g_free(big);
    g_string_free(s, TRUE);
}

static void test_adb_hex4_cases(void **state)
{
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)"00ff"), 255);
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)"00FF"), 255);
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)"FFFF"), 65535);
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)"00g0"), -1);
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)" 123"), -1);
    assert_int_equal(ddm_adb_parse_hex4((const uint8_t *)"-123"), -1);
}

static void test_adb_status(void **state)
{
    size_t used = 0;
    char *reason = NULL;
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"OKAYrest", 8, &used, &reason), DDM_ADB_OKAY);
    assert_int_equal(used, 4);
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"OK", 2, &used, &reason), DDM_ADB_NEED_MORE);
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"FA", 2, &used, &reason), DDM_ADB_NEED_MORE);
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"OKEY", 4, &used, &reason), DDM_ADB_ERR_PROTOCOL);
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"XX", 2, &used, &reason), DDM_ADB_ERR_PROTOCOL);

    const char *fail = "FAIL0010device not found";
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)fail, strlen(fail), &used, &reason), DDM_ADB_FAIL);
    assert_int_equal(used, strlen(fail));
    assert_string_equal(reason, "device not found");
    g_free(reason);
    reason = NULL;
    /* truncated reason: need more, never a read past the end */
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)fail, 12, &used, &reason), DDM_ADB_NEED_MORE);
    assert_null(reason);
    /* truncated hex4 */
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"FAIL00", 6, &used, &reason), DDM_ADB_NEED_MORE);
    /* malformed hex4 */
    assert_int_equal(ddm_adb_parse_status((const uint8_t *)"FAIL00zz", 8, &used, &reason), DDM_ADB_ERR_PROTOCOL);
    /* invalid UTF-8 reason is made valid */
    const uint8_t bad[] = "FAIL0002\xff\xfe";
    assert_int_equal(ddm_adb_parse_status(bad, 10, &used, &reason), DDM_ADB_FAIL);
    assert_true(g_utf8_validate(reason, -1, NULL));
    g_free(reason);
}

static void test_adb_frames_split_everywhere(void **state)
{
    const char *stream = "0015emulator-5554\tdevice\n00000012R58M\tunauthorized\n";
    size_t n = strlen(stream);
    /* Feeding any prefix gives NEED_MORE or a complete first frame; never an error. */
    for (size_t cut = 0; cut <= n; cut++) {
        size_t used = 0, plen = 0;
        const uint8_t *p = NULL;
        DdmAdbFrameResult r = ddm_adb_next_frame((const uint8_t *)stream, cut, 4096, &used, &p, &plen);
        if (cut < 4 + 0x15) {
            assert_int_equal(r, DDM_ADB_FRAME_NEED_MORE);
        } else {
            assert_int_equal(r, DDM_ADB_FRAME_OK);
            assert_int_equal(plen, 0x15);
            assert_memory_equal(p, "emulator-5554\tdevice\n", 0x15);
        }
    }
    /* walk all frames */
    size_t pos = 0, frames = 0;
    while (pos < n) {
        size_t used, plen;
        const uint8_t *p;
        assert_int_equal(ddm_adb_next_frame((const uint8_t *)stream + pos, n - pos, 4096, &used, &p, &plen),
                         DDM_ADB_FRAME_OK);
        pos += used;
        frames++;
    }
    assert_int_equal(frames, 3);
}

static void test_adb_frame_limits(void **state)
{
    size_t used, plen;
    const uint8_t *p;
    /* length larger than the data: wait, never read beyond */
    assert_int_equal(ddm_adb_next_frame((const uint8_t *)"ffffabc", 7, 0xFFFF, &used, &p, &plen),
                     DDM_ADB_FRAME_NEED_MORE);
    /* length above the caller's cap: error at once */
    assert_int_equal(ddm_adb_next_frame((const uint8_t *)"1000", 4, 1024, &used, &p, &plen),
                     DDM_ADB_FRAME_ERR);
    /* non-hex seen before all 4 digits arrived */
    assert_int_equal(ddm_adb_next_frame((const uint8_t *)"0x", 2, 1024, &used, &p, &plen), DDM_ADB_FRAME_ERR);
    assert_int_equal(ddm_adb_next_frame((const uint8_t *)"", 0, 1024, &used, &p, &plen),
                     DDM_ADB_FRAME_NEED_MORE);
}

static void test_adb_devices(void **state)
{
    const char *text = "emulator-5554\tdevice\nR58M\tunauthorized\n\nbroken-line\n\tdevice\n"
                       "x\t\nR58M\toffline\n127.0.0.1:40001\tsideload";
    GPtrArray *d = ddm_adb_parse_devices(text, strlen(text));
    assert_int_equal(d->len, 3);
    DdmAdbDevice *a = d->pdata[0], *b = d->pdata[1], *c = d->pdata[2];
    assert_string_equal(a->serial, "emulator-5554");
    assert_string_equal(a->state, "device");
    assert_string_equal(b->serial, "R58M");
    assert_string_equal(b->state, "unauthorized"); /* the later duplicate is ignored */
    assert_string_equal(c->serial, "127.0.0.1:40001");
    assert_string_equal(c->state, "sideload");    /* no final newline, unknown state kept */
    g_ptr_array_unref(d);
    d = ddm_adb_parse_devices("", 0);
    assert_int_equal(d->len, 0);
    g_ptr_array_unref(d);
}

static void test_adb_pids(void **state)
{
    const char *text = "1234\n77\r\nabc\n0\n\n1234\n99999999999\n2147483647\n-5\n42";
    GArray *p = ddm_adb_parse_pids(text, strlen(text));
    guint32 want[] = {42, 77, 1234, 2147483647};
    assert_int_equal(p->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < p->len; i++)
        assert_int_equal(g_array_index(p, guint32, i), want[i]);
    g_array_unref(p);
}

static void test_adb_diff(void **state)
{
    GArray *a = ddm_adb_parse_pids("1\n2\n3\n5\n", 8), *b = ddm_adb_parse_pids("2\n4\n5\n6\n", 8);
    GArray *added = g_array_new(FALSE, FALSE, 4), *removed = g_array_new(FALSE, FALSE, 4);
    ddm_adb_diff_pids(a, b, added, removed);
    assert_int_equal(added->len, 2);
    assert_int_equal(g_array_index(added, guint32, 0), 4);
    assert_int_equal(g_array_index(added, guint32, 1), 6);
    assert_int_equal(removed->len, 2);
    assert_int_equal(g_array_index(removed, guint32, 0), 1);
    assert_int_equal(g_array_index(removed, guint32, 1), 3);
    g_array_set_size(added, 0);
    g_array_set_size(removed, 0);
    ddm_adb_diff_pids(a, a, added, removed);
    assert_int_equal(added->len + removed->len, 0);
    GArray *empty = g_array_new(FALSE, FALSE, 4);
    ddm_adb_diff_pids(empty, b, added, removed);
    assert_int_equal(added->len, 4);
    g_array_unref(a); g_array_unref(b); g_array_unref(added); g_array_unref(removed); g_array_unref(empty);
}

typedef struct {
    const char *sock, *port;
    gboolean ok;
    const char *want; /* to_string */
} AddrCase;

static void test_adb_server_addr(void **state)
{
    static const AddrCase cases[] = {
        {NULL, NULL, TRUE, "127.0.0.1:5037"},
        {NULL, "5038", TRUE, "127.0.0.1:5038"},
        {NULL, "0", FALSE, NULL},
        {NULL, "70000", FALSE, NULL},
        {NULL, "50x", FALSE, NULL},
        {"tcp:6000", "5038", TRUE, "127.0.0.1:6000"},   /* ADB_SERVER_SOCKET wins */
        {"tcp:localhost:6001", NULL, TRUE, "localhost:6001"},
        {"tcp:::1:6002", NULL, TRUE, "[::1]:6002"},
        {"localabstract:adbsock", NULL, TRUE, "localabstract:adbsock"},
        {"localfilesystem:/tmp/adb.sock", NULL, TRUE, "localfilesystem:/tmp/adb.sock"},
        {"udp:5037", NULL, FALSE, NULL},
        {"tcp:", NULL, FALSE, NULL},
        {"tcp:host:", NULL, FALSE, NULL},
        {"localabstract:", NULL, FALSE, NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        DdmAdbServerAddr a;
        GError *err = NULL;
        gboolean ok = ddm_adb_server_addr(cases[i].sock, cases[i].port, &a, &err);
        if (ok != cases[i].ok)
            fail_msg("case %zu (%s, %s): got %d", i, cases[i].sock, cases[i].port, ok);
        if (ok) {
            char *s = ddm_adb_server_addr_to_string(&a);
            assert_string_equal(s, cases[i].want);
            g_free(s);
            ddm_adb_server_addr_clear(&a);
        } else {
            assert_non_null(err);
            g_error_free(err);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adb_format_request),
        cmocka_unit_test(test_adb_hex4_cases),
        cmocka_unit_test(test_adb_status),
        cmocka_unit_test(test_adb_frames_split_everywhere),
        cmocka_unit_test(test_adb_frame_limits),
        cmocka_unit_test(test_adb_devices),
        cmocka_unit_test(test_adb_pids),
        cmocka_unit_test(test_adb_diff),
        cmocka_unit_test(test_adb_server_addr),
    };
    return cmocka_run_group_tests_name("adb-proto", tests, NULL, NULL);
}
