/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb transport message codec and the device's text helpers (see
 * adb_msg.h). Every length is checked against a cap before use.
 */
#include "adb_msg.h"

#include <string.h>

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t sim_adb_checksum(const uint8_t *data, size_t len)
{
    uint32_t sum = 0;
    size_t i;

    for (i = 0; i < len; i++)
        sum += data[i];
    return sum;
}

const char *sim_adb_command_name(uint32_t command)
{
    switch (command) {
    case SIM_ADB_CNXN:
        return "CNXN";
    case SIM_ADB_OPEN:
        return "OPEN";
    case SIM_ADB_OKAY:
        return "OKAY";
    case SIM_ADB_WRTE:
        return "WRTE";
    case SIM_ADB_CLSE:
        return "CLSE";
    case SIM_ADB_AUTH:
        return "AUTH";
    case SIM_ADB_SYNC:
        return "SYNC";
    case SIM_ADB_STLS:
        return "STLS";
    default:
        return "????";
    }
}

const char *sim_adb_msg_status_name(SimAdbMsgStatus st)
{
    switch (st) {
    case SIM_ADB_MSG_OK:
        return "ok";
    case SIM_ADB_MSG_NEED_MORE:
        return "incomplete message";
    case SIM_ADB_MSG_BAD_MAGIC:
        return "bad magic";
    case SIM_ADB_MSG_TOO_LONG:
        return "data length above the limit";
    case SIM_ADB_MSG_BAD_CHECKSUM:
        return "bad data checksum";
    }
    return "?";
}

void sim_adb_header_encode(const SimAdbHeader *h, uint8_t out[SIM_ADB_HEADER_LEN])
{
    put_le32(out, h->command);
    put_le32(out + 4, h->arg0);
    put_le32(out + 8, h->arg1);
    put_le32(out + 12, h->data_length);
    put_le32(out + 16, h->data_check);
    put_le32(out + 20, h->magic);
}

SimAdbMsgStatus sim_adb_header_decode(const uint8_t in[SIM_ADB_HEADER_LEN], uint32_t max_data, SimAdbHeader *h)
{
    h->command = get_le32(in);
    h->arg0 = get_le32(in + 4);
    h->arg1 = get_le32(in + 8);
    h->data_length = get_le32(in + 12);
    h->data_check = get_le32(in + 16);
    h->magic = get_le32(in + 20);
    if (h->magic != (h->command ^ 0xffffffffu))
        return SIM_ADB_MSG_BAD_MAGIC;
    if (h->data_length > max_data)
        return SIM_ADB_MSG_TOO_LONG;
    return SIM_ADB_MSG_OK;
}

void sim_adb_msg_append(GByteArray *out, uint32_t command, uint32_t arg0, uint32_t arg1, const uint8_t *data,
                        size_t len)
{
    SimAdbHeader h;
    uint8_t head[SIM_ADB_HEADER_LEN];

    g_return_if_fail(len <= SIM_ADB_MAX_PAYLOAD_ACCEPTED);
    h.command = command;
    h.arg0 = arg0;
    h.arg1 = arg1;
    h.data_length = (uint32_t)len;
    h.data_check = len ? sim_adb_checksum(data, len) : 0;
    h.magic = command ^ 0xffffffffu;
    sim_adb_header_encode(&h, head);
    g_byte_array_append(out, head, sizeof head);
    if (len)
        g_byte_array_append(out, data, (guint)len);
}

SimAdbMsgStatus sim_adb_msg_take(const uint8_t *buf, size_t len, uint32_t max_data, SimAdbHeader *h,
                                 const uint8_t **data, size_t *consumed)
{
    SimAdbMsgStatus st;
    size_t total;

    if (len < SIM_ADB_HEADER_LEN)
        return SIM_ADB_MSG_NEED_MORE;
    st = sim_adb_header_decode(buf, max_data, h);
    if (st != SIM_ADB_MSG_OK)
        return st;
    total = SIM_ADB_HEADER_LEN + (size_t)h->data_length;
    if (len < total)
        return SIM_ADB_MSG_NEED_MORE;
    if (h->data_check != 0 && h->data_check != sim_adb_checksum(buf + SIM_ADB_HEADER_LEN, h->data_length))
        return SIM_ADB_MSG_BAD_CHECKSUM;
    *data = buf + SIM_ADB_HEADER_LEN;
    *consumed = total;
    return SIM_ADB_MSG_OK;
}

char *sim_adb_service_name(const uint8_t *data, size_t len)
{
    size_t n = 0, i;

    while (n < len && data[n] != 0)
        n++;
    if (n == 0 || n > SIM_ADB_MAX_SERVICE)
        return NULL;
    for (i = 0; i < n; i++)
        if (data[i] < 0x20 || data[i] > 0x7e)
            return NULL;
    return g_strndup((const char *)data, n);
}

gboolean sim_adb_parse_pid(const char *s, uint32_t *pid)
{
    uint64_t v = 0;
    const char *p;

    if (!s || !*s)
        return FALSE;
    for (p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return FALSE;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > 0x7fffffffu)
            return FALSE;
    }
    if (v == 0)
        return FALSE;
    *pid = (uint32_t)v;
    return TRUE;
}

guint sim_adb_append_pid_frame(GByteArray *out, const uint32_t *pids, guint n)
{
    GString *text = g_string_new(NULL);
    char line[16], head[8];
    guint i, written = 0;

    for (i = 0; i < n; i++) {
        int l = g_snprintf(line, sizeof line, "%u\n", pids[i]);
        if (text->len + (gsize)l > SIM_ADB_HEX4_MAX)
            break;
        g_string_append_len(text, line, l);
        written++;
    }
    g_snprintf(head, sizeof head, "%04x", (unsigned)text->len);
    g_byte_array_append(out, (const guint8 *)head, 4);
    g_byte_array_append(out, (const guint8 *)text->str, (guint)text->len);
    g_string_free(text, TRUE);
    return written;
}

/* ---- protobuf, the few wire types AppProcesses needs */

static void pb_varint(GByteArray *b, uint64_t v)
{
    uint8_t byte;

    do {
        byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            byte |= 0x80;
        g_byte_array_append(b, &byte, 1);
    } while (v);
}

static void pb_key(GByteArray *b, unsigned field, unsigned wire_type)
{
    pb_varint(b, (uint64_t)field << 3 | wire_type);
}

static void pb_bytes(GByteArray *b, unsigned field, const void *data, size_t len)
{
    pb_key(b, field, 2);
    pb_varint(b, len);
    g_byte_array_append(b, data, (guint)len);
}

static void pb_string(GByteArray *b, unsigned field, const char *s)
{
    if (s)
        pb_bytes(b, field, s, strlen(s));
}

static void pb_bool(GByteArray *b, unsigned field, gboolean v)
{
    pb_key(b, field, 0);
    pb_varint(b, v ? 1 : 0);
}

guint sim_adb_append_app_frame(GByteArray *out, const SimAdbApp *apps, guint n)
{
    GByteArray *msg = g_byte_array_new();
    GByteArray *entry = g_byte_array_new();
    char head[8];
    guint i, written = 0;

    for (i = 0; i < n; i++) {
        const SimAdbApp *a = &apps[i];
        guint before = msg->len;

        g_byte_array_set_size(entry, 0);
        pb_key(entry, 1, 0);
        pb_varint(entry, a->pid);
        pb_bool(entry, 2, a->debuggable);
        pb_bool(entry, 3, a->profileable);
        pb_string(entry, 4, a->architecture);
        pb_key(entry, 5, 0);
        pb_varint(entry, 0); /* user_id */
        pb_string(entry, 6, a->process_name);
        pb_string(entry, 7, a->package_name);
        pb_bool(entry, 8, a->waiting_for_debugger);
        pb_bytes(msg, 1, entry->data, entry->len);
        if (msg->len > SIM_ADB_HEX4_MAX) {
            g_byte_array_set_size(msg, before);
            break;
        }
        written++;
    }
    g_snprintf(head, sizeof head, "%04x", msg->len);
    g_byte_array_append(out, (const guint8 *)head, 4);
    g_byte_array_append(out, msg->data, msg->len);
    g_byte_array_unref(entry);
    g_byte_array_unref(msg);
    return written;
}

static const char *find_prop(const SimAdbProp *props, const char *key)
{
    for (; props && props->key; props++)
        if (strcmp(props->key, key) == 0)
            return props->value;
    return NULL;
}

char *sim_adb_shell_output(const char *cmdline, const SimAdbProp *props)
{
    char **argv = NULL;
    GString *out = g_string_new(NULL);
    int argc = 0;

    /* A device's shell would do far more; anything we cannot split is "not found". */
    if (!g_shell_parse_argv(cmdline, &argc, &argv, NULL) || argc == 0) {
        g_string_append_printf(out, "/system/bin/sh: syntax error\n");
    } else if (strcmp(argv[0], "getprop") == 0 && argc == 1) {
        const SimAdbProp *p;
        for (p = props; p && p->key; p++)
            g_string_append_printf(out, "[%s]: [%s]\n", p->key, p->value);
    } else if (strcmp(argv[0], "getprop") == 0) {
        const char *v = find_prop(props, argv[1]);
        g_string_append_printf(out, "%s\n", v ? v : (argc > 2 ? argv[2] : ""));
    } else if (strcmp(argv[0], "echo") == 0) {
        int i;
        for (i = 1; i < argc; i++)
            g_string_append_printf(out, "%s%s", i > 1 ? " " : "", argv[i]);
        g_string_append_c(out, '\n');
    } else {
        g_string_append_printf(out, "/system/bin/sh: %s: not found\n", argv[0]);
    }
    g_strfreev(argv);
    return g_string_free(out, FALSE);
}
