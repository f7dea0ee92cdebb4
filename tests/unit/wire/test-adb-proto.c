/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the adb host protocol codec (core/wire/adb_proto.c): hex4
 * framing in both cases, OKAY/FAIL, truncated and malformed lengths, a
 * length larger than the data, device and pid lists, pid diffs, and the
 * server address from ADB_SERVER_SOCKET / ANDROID_ADB_SERVER_PORT; and
 * track-app's protobuf AppProcesses: valid lists, unknown fields of every
 * wire type, groups, truncation at every byte, varint overflow, negative
 * and huge pids, oversized lengths, capped strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/wire/adb_proto.h"

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
        {"tcp:localhost:6001", NULL, TRUE, "127.0.0.1:6001"},
        {"tcp:::1:6002", NULL, TRUE, "[::1]:6002"},
        {"tcp:[::1]:6003", NULL, TRUE, "[::1]:6003"},
        {"tcp:10.0.2.2:6004", NULL, TRUE, "10.0.2.2:6004"},
        {"tcp:adb.example.com:6005", NULL, FALSE, NULL}, /* names would need a blocking lookup */
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

/* ------------------------------------------------ track-app (protobuf) */

static GByteArray *unhex(const char *hex)
{
    GByteArray *b = g_byte_array_new();
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        int hi = g_ascii_xdigit_value(p[0]), lo = p[1] ? g_ascii_xdigit_value(p[1]) : -1;
        assert_true(hi >= 0 && lo >= 0);
        guint8 v = (guint8)(hi * 16 + lo);
        g_byte_array_append(b, &v, 1);
        p += 2;
    }
    return b;
}

/* Decode from an exact-size heap copy, so ASan sees any read past the end. */
static gboolean parse_apps(const guint8 *data, size_t len, GArray **out)
{
    guint8 *copy = len ? g_memdup2(data, len) : NULL;
    gboolean ok = ddm_adb_parse_app_processes(copy ? copy : (const guint8 *)"", len, out);
    g_free(copy);
    return ok;
}

typedef struct {
    guint32 pid;
    gboolean debuggable, profileable;
    const char *arch;
} WantApp;

typedef struct {
    const char *name;
    const char *hex;
    gboolean ok;
    guint n;
    WantApp want[3];
} AppCase;

/* Entry A: pid 1234, debuggable, profileable=0 sent, arch "arm64".
 * Entry B: pid 77, profileable only. */
#define ENTRY_A "0a0e 08d209 1001 1800 2205 61726d3634"
#define ENTRY_B "0a04 084d 1801"

static const AppCase app_cases[] = {
    {"two entries, sorted by pid", ENTRY_A ENTRY_B, TRUE, 2,
     {{77, FALSE, TRUE, ""}, {1234, TRUE, FALSE, "arm64"}}},
    {"empty message", "", TRUE, 0, {{0}}},
    {"empty entry (no pid) left out", "0a00" ENTRY_B, TRUE, 1, {{77, FALSE, TRUE, ""}}},
    {"unknown top-level varint", "109601" ENTRY_A, TRUE, 1, {{1234, TRUE, FALSE, "arm64"}}},
    {"unknown top-level fixed64, fixed32, bytes",
     "19 0102030405060708 25 01020304 2a03 616263" ENTRY_B, TRUE, 1, {{77, FALSE, TRUE, ""}}},
    {"unknown entry fields of every wire type",
     "0a29 084d 2800 3a03616263 59 0102030405060708 65 01020304 48e807 c03e01 1001 5000 4201ff 2203 783836",
     TRUE, 1, {{77, TRUE, FALSE, "x86"}}},
    {"known fields with other wire types are skipped",
     "0a0c 0d01020304 084d 120101 2200", TRUE, 1, {{77, FALSE, FALSE, ""}}},
    {"top-level known field as varint is skipped", "0801" ENTRY_B, TRUE, 1, {{77, FALSE, TRUE, ""}}},
    {"last value of a field wins", "0a06 0801 0802 1001", TRUE, 1, {{2, TRUE, FALSE, ""}}},
    {"bools are any non-zero varint", "0a07 0805 108001 1802", TRUE, 1, {{5, TRUE, TRUE, ""}}},
    {"first entry of a duplicated pid kept", "0a04 084d 1001" ENTRY_B, TRUE, 1, {{77, TRUE, FALSE, ""}}},
    {"negative pid left out", "0a0d 08fbffffffffffffffff01 1001" ENTRY_B, TRUE, 1, {{77, FALSE, TRUE, ""}}},
    {"pid 2^31 left out", "0a08 088080808008 1001", TRUE, 0, {{0}}},
    {"pid 2^40 left out", "0a09 08808080808020 1001", TRUE, 0, {{0}}},
    {"pid 2^31-1 kept", "0a08 08ffffffff07 1001", TRUE, 1, {{2147483647, TRUE, FALSE, ""}}},
    {"pid 0 left out", "0a04 0800 1001", TRUE, 0, {{0}}},
    {"group start at top level", "0b" ENTRY_B, FALSE, 0, {{0}}},
    {"group end at top level", "0c", FALSE, 0, {{0}}},
    {"group inside an entry", "0a04 084d 1b1c", FALSE, 0, {{0}}},
    {"wire type 6", "0e00", FALSE, 0, {{0}}},
    {"wire type 7", "0a02 0f00", FALSE, 0, {{0}}},
    {"field number 0", "0001", FALSE, 0, {{0}}},
    {"varint of 11 bytes", "0a0c 08ffffffffffffffffffff01", FALSE, 0, {{0}}},
    {"10-byte varint above 64 bits", "0a0b 08ffffffffffffffffff02", FALSE, 0, {{0}}},
    {"key varint of 11 bytes", "8080808080808080808001", FALSE, 0, {{0}}},
    {"varint cut short", "0a02 0880", FALSE, 0, {{0}}},
    {"entry longer than the message", "0a05 084d", FALSE, 0, {{0}}},
    {"string longer than its entry", "0a04 2205 6162 636465", FALSE, 0, {{0}}},
    {"entry length 2^63-1", "0a ffffffffffffffff7f 084d", FALSE, 0, {{0}}},
    {"entry length 2^64-1", "0a ffffffffffffffffff01 084d", FALSE, 0, {{0}}},
    {"unknown bytes field longer than the message", "2affff03 00", FALSE, 0, {{0}}},
    {"fixed64 cut short", "19 01020304050607", FALSE, 0, {{0}}},
    {"fixed32 cut short", "25 010203", FALSE, 0, {{0}}},
    {"key without value", ENTRY_B "10", FALSE, 0, {{0}}},
};

static void test_adb_app_processes_table(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(app_cases); i++) {
        const AppCase *c = &app_cases[i];
        GByteArray *b = unhex(c->hex);
        GArray *apps = NULL;
        gboolean ok = parse_apps(b->data, b->len, &apps);
        if (ok != c->ok)
            fail_msg("case %zu (%s): got %s", i, c->name, ok ? "TRUE" : "FALSE");
        if (ok) {
            if (apps->len != c->n)
                fail_msg("case %zu (%s): %u entries, want %u", i, c->name, apps->len, c->n);
            for (guint k = 0; k < c->n; k++) {
                const DdmAdbApp *a = &g_array_index(apps, DdmAdbApp, k);
                const WantApp *w = &c->want[k];
                if (a->pid != w->pid || !a->debuggable != !w->debuggable || !a->profileable != !w->profileable ||
                    strcmp(a->architecture, w->arch) != 0)
                    fail_msg("case %zu (%s) entry %u: pid %u d%d p%d '%s'", i, c->name, k, a->pid, a->debuggable,
                             a->profileable, a->architecture);
            }
            g_array_unref(apps);
        } else {
            assert_null(apps); /* untouched */
        }
        g_byte_array_unref(b);
    }
}

/* Exactly what ddmon-simvm --adb-sdk 31 sent through the real adb 29 for two
 * VMs (pid, debuggable, profileable, arch, user_id, process_name,
 * package_names, waiting_for_debugger). */
static void test_adb_app_processes_simvm(void **state)
{
    GByteArray *b = unhex(
        "0a3f0895381001180122067838365f363428003214636f6d2e616e64726f69642e73797374656d75693a14636f6d2e"
        "616e64726f69642e73797374656d756940000a5908c8381001180122067838365f363428003221636f6d2e676f6f67"
        "6c652e616e64726f69642e676d732e70657273697374656e743a21636f6d2e676f6f676c652e616e64726f69642e67"
        "6d732e70657273697374656e744000");
    assert_int_equal(b->len, 0x9c);
    GArray *apps = NULL;
    assert_true(parse_apps(b->data, b->len, &apps));
    assert_int_equal(apps->len, 2);
    const DdmAdbApp *a = &g_array_index(apps, DdmAdbApp, 0), *z = &g_array_index(apps, DdmAdbApp, 1);
    assert_int_equal(a->pid, 7189);
    assert_true(a->debuggable && a->profileable);
    assert_string_equal(a->architecture, "x86_64");
    assert_string_equal(a->process_name, "com.android.systemui");
    assert_int_equal(z->pid, 7240);
    assert_string_equal(z->process_name, "com.google.android.gms.persistent");
    assert_ptr_equal(ddm_adb_app_find(apps, 7240), z);
    assert_null(ddm_adb_app_find(apps, 7000));
    assert_null(ddm_adb_app_find(apps, 8000));
    g_array_unref(apps);
    g_byte_array_unref(b);
}

/* Every prefix of a valid message: no crash, no read past the end; it
 * decodes exactly when the cut falls between two top-level fields. */
static void test_adb_app_processes_truncated(void **state)
{
    static const char *const fields[] = {
        "0a29 084d 2800 3a03616263 59 0102030405060708 65 01020304 48e807 c03e01 1001 5000 4201ff 2203 783836",
        "19 0102030405060708", "25 01020304", "2a03 616263", "109601", ENTRY_A, ENTRY_B,
        "0a0d 08fbffffffffffffffff01 1001",
    };
    GByteArray *msg = g_byte_array_new();
    GArray *bounds = g_array_new(FALSE, FALSE, sizeof(guint));
    guint zero = 0;
    g_array_append_val(bounds, zero);
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        GByteArray *f = unhex(fields[i]);
        g_byte_array_append(msg, f->data, f->len);
        g_array_append_val(bounds, msg->len);
        g_byte_array_unref(f);
    }
    guint b = 0;
    for (guint cut = 0; cut <= msg->len; cut++) {
        gboolean at_bound = b < bounds->len && g_array_index(bounds, guint, b) == cut;
        GArray *apps = NULL;
        gboolean ok = parse_apps(msg->data, cut, &apps);
        if (ok != at_bound)
            fail_msg("cut at %u of %u: got %d", cut, msg->len, ok);
        if (ok) {
            /* entries complete so far: field 0 (pid 77), ENTRY_A (5), ENTRY_B (6, dup of 77) */
            guint want = b >= 6 ? 2 : b >= 1 ? 1 : 0;
            assert_int_equal(apps->len, want);
            g_array_unref(apps);
            b++;
        }
    }
    assert_int_equal(b, bounds->len);
    g_array_unref(bounds);
    g_byte_array_unref(msg);
}

static void add_varint(GByteArray *b, guint64 v)
{
    do {
        guint8 byte = (guint8)(v & 0x7f);
        v >>= 7;
        if (v)
            byte |= 0x80;
        g_byte_array_append(b, &byte, 1);
    } while (v);
}

/* Entry { pid, arch = @s (len @n) } */
static GByteArray *entry_with_arch(guint32 pid, const char *s, size_t n)
{
    GByteArray *e = g_byte_array_new(), *m = g_byte_array_new();
    add_varint(e, 1 << 3);
    add_varint(e, pid);
    add_varint(e, 4 << 3 | 2);
    add_varint(e, n);
    g_byte_array_append(e, (const guint8 *)s, (guint)n);
    add_varint(m, 1 << 3 | 2);
    add_varint(m, e->len);
    g_byte_array_append(m, e->data, e->len);
    g_byte_array_unref(e);
    return m;
}

static void test_adb_app_processes_strings(void **state)
{
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        {"arm64", "arm64"},
        {"", ""},
        /* 40 bytes: cut to 31 */
        {"0123456789012345678901234567890123456789", "0123456789012345678901234567890"},
        /* 30 ASCII + a 2-byte character (ends at 32): the character is dropped whole */
        {"012345678901234567890123456789\xc3\xa9", "012345678901234567890123456789"},
        /* 29 ASCII + a 2-byte character (ends at 31): kept */
        {"01234567890123456789012345678\xc3\xa9", "01234567890123456789012345678\xc3\xa9"},
        /* invalid UTF-8 is replaced */
        {"x\xff", "x\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GByteArray *m = entry_with_arch(42, cases[i].in, strlen(cases[i].in));
        GArray *apps = NULL;
        assert_true(parse_apps(m->data, m->len, &apps));
        assert_int_equal(apps->len, 1);
        const DdmAdbApp *a = &g_array_index(apps, DdmAdbApp, 0);
        if (strcmp(a->architecture, cases[i].want) != 0)
            fail_msg("case %zu: '%s'", i, a->architecture);
        assert_true(g_utf8_validate(a->architecture, -1, NULL));
        g_array_unref(apps);
        g_byte_array_unref(m);
    }
    /* an embedded NUL never lets bytes after it through unvalidated */
    GByteArray *m = entry_with_arch(42, "ab\0\xff", 4);
    GArray *apps = NULL;
    assert_true(parse_apps(m->data, m->len, &apps));
    assert_true(g_utf8_validate(g_array_index(apps, DdmAdbApp, 0).architecture, -1, NULL));
    g_array_unref(apps);
    g_byte_array_unref(m);
}

/* The largest update a hex4 frame can carry, many entries: decodes, sorted, unique. */
static void test_adb_app_processes_many(void **state)
{
    GByteArray *m = g_byte_array_new();
    guint32 pid = 40000;
    while (m->len + 16 < 0xFFFF) {
        GByteArray *e = g_byte_array_new();
        add_varint(e, 1 << 3);
        add_varint(e, pid);
        add_varint(e, 2 << 3);
        add_varint(e, pid % 3 != 0);
        add_varint(m, 1 << 3 | 2);
        add_varint(m, e->len);
        g_byte_array_append(m, e->data, e->len);
        g_byte_array_unref(e);
        pid = pid * 7 % 65521 + 1; /* scrambled order, some repeats */
    }
    GArray *apps = NULL;
    assert_true(parse_apps(m->data, m->len, &apps));
    assert_true(apps->len > 1000);
    for (guint i = 1; i < apps->len; i++)
        assert_true(g_array_index(apps, DdmAdbApp, i - 1).pid < g_array_index(apps, DdmAdbApp, i).pid);
    GArray *dbg = ddm_adb_app_debuggable_pids(apps);
    guint n = 0;
    for (guint i = 0; i < apps->len; i++)
        n += g_array_index(apps, DdmAdbApp, i).debuggable ? 1 : 0;
    assert_int_equal(dbg->len, n);
    for (guint i = 0; i < dbg->len; i++) {
        const DdmAdbApp *a = ddm_adb_app_find(apps, g_array_index(dbg, guint32, i));
        assert_non_null(a);
        assert_true(a->debuggable);
    }
    g_array_unref(dbg);
    g_array_unref(apps);
    g_byte_array_unref(m);
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
        cmocka_unit_test(test_adb_app_processes_table),
        cmocka_unit_test(test_adb_app_processes_simvm),
        cmocka_unit_test(test_adb_app_processes_truncated),
        cmocka_unit_test(test_adb_app_processes_strings),
        cmocka_unit_test(test_adb_app_processes_many),
    };
    return cmocka_run_group_tests_name("adb-proto", tests, NULL, NULL);
}
