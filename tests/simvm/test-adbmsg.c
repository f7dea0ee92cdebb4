/* SPDX-License-Identifier: Apache-2.0
 *
 * Tests of the simulated device's adb transport codec (tools/simvm/adb_msg.c):
 * header layout against bytes captured from adb 29, checksum acceptance
 * (sum or 0), magic and length checks, truncated input at every cut, the
 * service-name, pid and pid-frame helpers, and the shell answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adb_msg.h"

/* OPEN local-id 8 "shell:getprop\0" as Debian's adb 29 sends it. */
static const uint8_t open_getprop[] = {
    'O', 'P', 'E', 'N', 8, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 0x53, 0x05, 0, 0, 0xb0, 0xaf, 0xba, 0xb1,
    's', 'h', 'e', 'l', 'l', ':', 'g', 'e', 't', 'p', 'r', 'o', 'p', 0,
};

static void test_command_values(void **state)
{
    (void)state;
    assert_int_equal(SIM_ADB_CNXN, 0x4e584e43u);
    assert_memory_equal(&(uint32_t){ SIM_ADB_OPEN }, "OPEN", 4); /* little-endian host assumed by adb too */
    assert_string_equal(sim_adb_command_name(SIM_ADB_WRTE), "WRTE");
    assert_string_equal(sim_adb_command_name(SIM_ADB_CLSE), "CLSE");
    assert_string_equal(sim_adb_command_name(SIM_ADB_OKAY), "OKAY");
    assert_string_equal(sim_adb_command_name(0x12345678), "????");
}

static void test_take_captured_open(void **state)
{
    SimAdbHeader h;
    const uint8_t *data = NULL;
    size_t used = 0;

    (void)state;
    assert_int_equal(sim_adb_msg_take(open_getprop, sizeof open_getprop, 4096, &h, &data, &used), SIM_ADB_MSG_OK);
    assert_int_equal(h.command, SIM_ADB_OPEN);
    assert_int_equal(h.arg0, 8);
    assert_int_equal(h.arg1, 0);
    assert_int_equal(h.data_length, 14);
    assert_int_equal(h.data_check, 1363);
    assert_int_equal(used, sizeof open_getprop);
    assert_ptr_equal(data, open_getprop + 24);
    assert_int_equal(sim_adb_checksum(data, 14), 1363);
}

static void test_take_every_truncation(void **state)
{
    SimAdbHeader h;
    const uint8_t *data;
    size_t used, cut;

    (void)state;
    for (cut = 0; cut < sizeof open_getprop; cut++)
        assert_int_equal(sim_adb_msg_take(open_getprop, cut, 4096, &h, &data, &used), SIM_ADB_MSG_NEED_MORE);
}

static void test_append_roundtrip(void **state)
{
    GByteArray *out = g_byte_array_new();
    static const uint8_t payload[] = "device::features=\0";
    SimAdbHeader h;
    const uint8_t *data;
    size_t used;

    (void)state;
    sim_adb_msg_append(out, SIM_ADB_CNXN, SIM_ADB_VERSION, 4096, payload, sizeof payload);
    sim_adb_msg_append(out, SIM_ADB_OKAY, 3, 8, NULL, 0);
    assert_int_equal(out->len, 24 + sizeof payload + 24);
    /* magic is command ^ 0xffffffff, little-endian */
    assert_int_equal(out->data[20], (uint8_t)~'C');
    assert_int_equal(sim_adb_msg_take(out->data, out->len, 4096, &h, &data, &used), SIM_ADB_MSG_OK);
    assert_int_equal(h.command, SIM_ADB_CNXN);
    assert_int_equal(h.arg0, SIM_ADB_VERSION);
    assert_int_equal(h.arg1, 4096);
    assert_int_equal(h.data_check, sim_adb_checksum(payload, sizeof payload));
    assert_memory_equal(data, payload, sizeof payload);
    assert_int_equal(sim_adb_msg_take(out->data + used, out->len - used, 4096, &h, &data, &used), SIM_ADB_MSG_OK);
    assert_int_equal(h.command, SIM_ADB_OKAY);
    assert_int_equal(h.arg0, 3);
    assert_int_equal(h.arg1, 8);
    assert_int_equal(h.data_length, 0);
    assert_int_equal(h.data_check, 0);
    g_byte_array_unref(out);
}

typedef struct {
    const char *name;
    size_t offset;   /* byte to change */
    uint8_t value;
    SimAdbMsgStatus want;
} Corruption;

static void test_corruptions(void **state)
{
    static const Corruption table[] = {
        { "magic", 20, 0x00, SIM_ADB_MSG_BAD_MAGIC },
        { "command (magic no longer matches)", 0, 'X', SIM_ADB_MSG_BAD_MAGIC },
        { "length above the cap", 13, 0x10, SIM_ADB_MSG_TOO_LONG },
        { "checksum wrong", 16, 0x54, SIM_ADB_MSG_BAD_CHECKSUM },
        { "data changed under the checksum", 30, 'X', SIM_ADB_MSG_BAD_CHECKSUM },
        { "huge length", 15, 0xff, SIM_ADB_MSG_TOO_LONG },
    };
    size_t i;

    (void)state;
    for (i = 0; i < G_N_ELEMENTS(table); i++) {
        uint8_t buf[sizeof open_getprop];
        SimAdbHeader h;
        const uint8_t *data;
        size_t used;

        memcpy(buf, open_getprop, sizeof buf);
        buf[table[i].offset] = table[i].value;
        print_message("corruption: %s\n", table[i].name);
        assert_int_equal(sim_adb_msg_take(buf, sizeof buf, 4096, &h, &data, &used), table[i].want);
    }
}

static void test_zero_checksum_accepted(void **state)
{
    uint8_t buf[sizeof open_getprop];
    SimAdbHeader h;
    const uint8_t *data;
    size_t used;

    (void)state;
    memcpy(buf, open_getprop, sizeof buf);
    memset(buf + 16, 0, 4);
    assert_int_equal(sim_adb_msg_take(buf, sizeof buf, 4096, &h, &data, &used), SIM_ADB_MSG_OK);
}

static void test_length_cap_is_inclusive(void **state)
{
    GByteArray *out = g_byte_array_new();
    uint8_t data[100];
    SimAdbHeader h;
    const uint8_t *d;
    size_t used;

    (void)state;
    memset(data, 7, sizeof data);
    sim_adb_msg_append(out, SIM_ADB_WRTE, 1, 2, data, sizeof data);
    assert_int_equal(sim_adb_msg_take(out->data, out->len, 100, &h, &d, &used), SIM_ADB_MSG_OK);
    assert_int_equal(sim_adb_msg_take(out->data, out->len, 99, &h, &d, &used), SIM_ADB_MSG_TOO_LONG);
    /* the length is refused before the data arrives */
    assert_int_equal(sim_adb_msg_take(out->data, 24, 99, &h, &d, &used), SIM_ADB_MSG_TOO_LONG);
    g_byte_array_unref(out);
}

static void test_service_name(void **state)
{
    char *s;
    uint8_t big[SIM_ADB_MAX_SERVICE + 2];

    (void)state;
    s = sim_adb_service_name((const uint8_t *)"jdwp:123\0", 9);
    assert_string_equal(s, "jdwp:123");
    g_free(s);
    s = sim_adb_service_name((const uint8_t *)"track-jdwp", 10); /* no NUL: all of it */
    assert_string_equal(s, "track-jdwp");
    g_free(s);
    assert_null(sim_adb_service_name((const uint8_t *)"\0", 1));
    assert_null(sim_adb_service_name((const uint8_t *)"", 0));
    assert_null(sim_adb_service_name((const uint8_t *)"shell:\n\0", 8));
    assert_null(sim_adb_service_name((const uint8_t *)"a\xff", 2));
    memset(big, 'a', sizeof big);
    assert_null(sim_adb_service_name(big, sizeof big));
    s = sim_adb_service_name(big, SIM_ADB_MAX_SERVICE);
    assert_non_null(s);
    g_free(s);
}

static void test_parse_pid(void **state)
{
    static const struct {
        const char *in;
        gboolean ok;
        uint32_t pid;
    } table[] = {
        { "1", TRUE, 1 },          { "4242", TRUE, 4242 },  { "2147483647", TRUE, 2147483647u },
        { "2147483648", FALSE, 0 }, { "0", FALSE, 0 },       { "", FALSE, 0 },
        { "-1", FALSE, 0 },        { "12a", FALSE, 0 },     { " 12", FALSE, 0 },
        { "99999999999999999999", FALSE, 0 },
    };
    size_t i;

    (void)state;
    for (i = 0; i < G_N_ELEMENTS(table); i++) {
        uint32_t pid = 0;
        print_message("pid '%s'\n", table[i].in);
        assert_int_equal(sim_adb_parse_pid(table[i].in, &pid), table[i].ok);
        if (table[i].ok)
            assert_int_equal(pid, table[i].pid);
    }
    assert_false(sim_adb_parse_pid(NULL, NULL));
}

static void test_pid_frame(void **state)
{
    GByteArray *out = g_byte_array_new();
    uint32_t pids[] = { 42, 1234 };
    uint32_t *many;
    guint n, i;

    (void)state;
    assert_int_equal(sim_adb_append_pid_frame(out, NULL, 0), 0);
    assert_int_equal(out->len, 4);
    assert_memory_equal(out->data, "0000", 4);
    g_byte_array_set_size(out, 0);
    assert_int_equal(sim_adb_append_pid_frame(out, pids, 2), 2);
    assert_int_equal(out->len, 4 + 8);
    assert_memory_equal(out->data, "000842\n1234\n", 12);
    /* more pids than fit: whole lines only, length within hex4 */
    many = g_new(uint32_t, 20000);
    for (i = 0; i < 20000; i++)
        many[i] = 1000000 + i;
    g_byte_array_set_size(out, 0);
    n = sim_adb_append_pid_frame(out, many, 20000);
    assert_int_equal(n, 0xffff / 8);
    assert_int_equal(out->len, 4 + n * 8);
    assert_int_equal(out->data[out->len - 1], '\n');
    g_free(many);
    g_byte_array_unref(out);
}

/* A minimal protobuf reader for the test: varints and length-delimited fields. */
static uint64_t pb_read_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    unsigned shift = 0;

    for (;;) {
        assert_true(*p < end);
        assert_true(shift < 64);
        v |= (uint64_t)(**p & 0x7f) << shift;
        if (!(*(*p)++ & 0x80))
            return v;
        shift += 7;
    }
}

typedef struct {
    uint64_t pid, debuggable, profileable, user_id, waiting;
    char arch[32], name[64], package[64];
    unsigned seen; /* bit per field number */
} Entry;

static void pb_read_entry(const uint8_t *p, const uint8_t *end, Entry *e)
{
    memset(e, 0, sizeof *e);
    while (p < end) {
        uint64_t key = pb_read_varint(&p, end);
        unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        e->seen |= 1u << field;
        if (wt == 0) {
            uint64_t v = pb_read_varint(&p, end);
            if (field == 1)
                e->pid = v;
            else if (field == 2)
                e->debuggable = v;
            else if (field == 3)
                e->profileable = v;
            else if (field == 5)
                e->user_id = v;
            else if (field == 8)
                e->waiting = v;
        } else {
            uint64_t n = pb_read_varint(&p, end);
            char *dst = field == 4 ? e->arch : field == 6 ? e->name : e->package;
            assert_int_equal(wt, 2);
            assert_true(n < 64 && n <= (uint64_t)(end - p));
            if (field == 4)
                assert_true(n < 32);
            memcpy(dst, p, (size_t)n);
            dst[n] = 0;
            p += n;
        }
    }
}

static guint pb_read_apps(const GByteArray *frame, Entry *out, guint max)
{
    char head[5];
    const uint8_t *p = frame->data + 4, *end;
    guint n = 0;

    memcpy(head, frame->data, 4);
    head[4] = 0;
    assert_int_equal(strtoul(head, NULL, 16), frame->len - 4);
    end = frame->data + frame->len;
    while (p < end) {
        uint64_t key = pb_read_varint(&p, end), len;
        assert_int_equal(key, 1u << 3 | 2); /* AppProcesses.process */
        len = pb_read_varint(&p, end);
        assert_true(len <= (uint64_t)(end - p));
        assert_true(n < max);
        pb_read_entry(p, p + len, &out[n++]);
        p += len;
    }
    return n;
}

static void test_app_frame(void **state)
{
    GByteArray *out = g_byte_array_new();
    SimAdbApp apps[2] = {
        { 4242, TRUE, TRUE, "x86_64", "com.example.notes", "com.example", FALSE },
        { 300, TRUE, FALSE, NULL, NULL, NULL, TRUE },
    };
    Entry e[4];
    SimAdbApp *many;
    guint i, n;

    (void)state;
    assert_int_equal(sim_adb_append_app_frame(out, NULL, 0), 0);
    assert_int_equal(out->len, 4);
    assert_memory_equal(out->data, "0000", 4);
    g_byte_array_set_size(out, 0);
    assert_int_equal(sim_adb_append_app_frame(out, apps, 2), 2);
    assert_int_equal(pb_read_apps(out, e, 4), 2);
    assert_int_equal(e[0].pid, 4242);
    assert_int_equal(e[0].debuggable, 1);
    assert_int_equal(e[0].profileable, 1);
    assert_string_equal(e[0].arch, "x86_64");
    assert_string_equal(e[0].name, "com.example.notes");
    assert_string_equal(e[0].package, "com.example");
    assert_int_equal(e[0].waiting, 0);
    assert_true(e[0].seen & (1u << 5)); /* user_id 0 is sent */
    assert_int_equal(e[1].pid, 300); /* a two-byte varint */
    assert_int_equal(e[1].profileable, 0);
    assert_int_equal(e[1].waiting, 1);
    assert_false(e[1].seen & (1u << 4 | 1u << 6 | 1u << 7));
    /* the second entry alone, against a hand encoding */
    {
        static const uint8_t want[] = { '0', '0', '0', 'd', 0x0a, 0x0b, 0x08, 0xac, 0x02, 0x10, 0x01,
                                        0x18, 0x00, 0x28, 0x00, 0x40, 0x01 };
        g_byte_array_set_size(out, 0);
        assert_int_equal(sim_adb_append_app_frame(out, &apps[1], 1), 1);
        assert_int_equal(out->len, sizeof want);
        assert_memory_equal(out->data, want, sizeof want);
    }
    /* too many for hex4: whole entries only */
    many = g_new0(SimAdbApp, 5000);
    for (i = 0; i < 5000; i++) {
        many[i].pid = 100000 + i;
        many[i].process_name = "com.example.a.rather.long.process.name";
    }
    g_byte_array_set_size(out, 0);
    n = sim_adb_append_app_frame(out, many, 5000);
    assert_true(n > 100 && n < 5000);
    assert_true(out->len - 4 <= 0xffff);
    g_free(many);
    g_byte_array_unref(out);
}

static void test_shell(void **state)
{
    static const SimAdbProp props[] = {
        { "ro.build.version.sdk", "30" },
        { "ro.product.cpu.abi", "x86_64" },
        { NULL, NULL },
    };
    static const struct {
        const char *cmd;
        const char *want;
    } table[] = {
        { "getprop", "[ro.build.version.sdk]: [30]\n[ro.product.cpu.abi]: [x86_64]\n" },
        { "getprop ro.build.version.sdk", "30\n" },
        { "  getprop   ro.product.cpu.abi ", "x86_64\n" },
        { "getprop no.such", "\n" },
        { "getprop no.such dflt", "dflt\n" },
        { "echo hello  world", "hello world\n" },
        { "am start", "/system/bin/sh: am: not found\n" },
        { "getprop 'unterminated", "/system/bin/sh: syntax error\n" },
    };
    size_t i;

    (void)state;
    for (i = 0; i < G_N_ELEMENTS(table); i++) {
        char *out = sim_adb_shell_output(table[i].cmd, props);
        print_message("shell '%s'\n", table[i].cmd);
        assert_string_equal(out, table[i].want);
        g_free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_values),
        cmocka_unit_test(test_take_captured_open),
        cmocka_unit_test(test_take_every_truncation),
        cmocka_unit_test(test_append_roundtrip),
        cmocka_unit_test(test_corruptions),
        cmocka_unit_test(test_zero_checksum_accepted),
        cmocka_unit_test(test_length_cap_is_inclusive),
        cmocka_unit_test(test_service_name),
        cmocka_unit_test(test_parse_pid),
        cmocka_unit_test(test_pid_frame),
        cmocka_unit_test(test_app_frame),
        cmocka_unit_test(test_shell),
    };
    return cmocka_run_group_tests_name("adbmsg", tests, NULL, NULL);
}
