/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb host protocol codec declared in adb_proto.h. Pure: every length
 * comes from 4 hex digits, so no frame can exceed 0xFFFF bytes, and callers
 * cap it lower where they know better. The track-app decoder reads a
 * protobuf from one such frame: varints of at most 10 bytes, every length
 * checked against the bytes left in its enclosing message, strings copied
 * into fixed, capped buffers; nothing it reads can point outside the frame.
 */
#include "core/wire/adb_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

gboolean ddm_adb_format_request(GString *out, const char *service)
{
    size_t n = strlen(service);
    if (n > DDM_ADB_MAX_FRAME)
        return FALSE;
    g_string_append_printf(out, "%04zx", n);
    g_string_append_len(out, service, (gssize)n);
    return TRUE;
}

int ddm_adb_parse_hex4(const uint8_t *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = g_ascii_xdigit_value((gchar)p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

DdmAdbStatus ddm_adb_parse_status(const uint8_t *buf, size_t len, size_t *consumed, char **reason)
{
    if (len < 4)
        return memcmp(buf, "OKAY", len) == 0 || memcmp(buf, "FAIL", len) == 0
                   ? DDM_ADB_NEED_MORE : DDM_ADB_ERR_PROTOCOL;
    if (memcmp(buf, "OKAY", 4) == 0) {
        *consumed = 4;
        return DDM_ADB_OKAY;
    }
    if (memcmp(buf, "FAIL", 4) != 0)
        return DDM_ADB_ERR_PROTOCOL;
    const uint8_t *msg;
    size_t msg_len, frame_len;
    switch (ddm_adb_next_frame(buf + 4, len - 4, DDM_ADB_MAX_FRAME, &frame_len, &msg, &msg_len)) {
    case DDM_ADB_FRAME_NEED_MORE:
        return DDM_ADB_NEED_MORE;
    case DDM_ADB_FRAME_ERR:
        return DDM_ADB_ERR_PROTOCOL;
    case DDM_ADB_FRAME_OK:
        break;
    }
    *consumed = 4 + frame_len;
    if (reason)
        *reason = g_utf8_make_valid((const gchar *)msg, (gssize)msg_len);
    return DDM_ADB_FAIL;
}

DdmAdbFrameResult ddm_adb_next_frame(const uint8_t *buf, size_t len, size_t max, size_t *consumed,
                                     const uint8_t **payload, size_t *payload_len)
{
    /* Reject non-hex as soon as the bad digit is visible. */
    for (size_t i = 0; i < len && i < 4; i++)
        if (!g_ascii_isxdigit((gchar)buf[i]))
            return DDM_ADB_FRAME_ERR;
    if (len < 4)
        return DDM_ADB_FRAME_NEED_MORE;
    int n = ddm_adb_parse_hex4(buf);
    if (n < 0 || (size_t)n > max)
        return DDM_ADB_FRAME_ERR;
    if (len - 4 < (size_t)n)
        return DDM_ADB_FRAME_NEED_MORE;
    *payload = buf + 4;
    *payload_len = (size_t)n;
    *consumed = 4 + (size_t)n;
    return DDM_ADB_FRAME_OK;
}

void ddm_adb_device_free(DdmAdbDevice *d)
{
    if (!d)
        return;
    g_free(d->serial);
    g_free(d->state);
    g_free(d);
}

GPtrArray *ddm_adb_parse_devices(const char *text, size_t len)
{
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_adb_device_free);
    char *copy = g_utf8_make_valid(text, (gssize)len);
    char **lines = g_strsplit(copy, "\n", -1);
    for (char **l = lines; *l; l++) {
        char *line = g_strstrip(*l);
        char *tab = strchr(line, '\t');
        if (!tab || tab == line || tab[1] == '\0')
            continue;
        *tab = '\0';
        const char *serial = line, *state = g_strstrip(tab + 1);
        if (*state == '\0' || strchr(state, '\t'))
            continue;
        gboolean dup = FALSE;
        for (guint i = 0; i < out->len && !dup; i++)
            dup = strcmp(((DdmAdbDevice *)out->pdata[i])->serial, serial) == 0;
        if (dup)
            continue;
        DdmAdbDevice *d = g_new0(DdmAdbDevice, 1);
        d->serial = g_strdup(serial);
        d->state = g_strdup(state);
        g_ptr_array_add(out, d);
    }
    g_strfreev(lines);
    g_free(copy);
    return out;
}

static gint cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

GArray *ddm_adb_parse_pids(const char *text, size_t len)
{
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(guint32));
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && text[i] != '\n')
            i++;
        size_t n = i - start;
        i++; /* skip the newline */
        while (n > 0 && (text[start + n - 1] == '\r' || text[start + n - 1] == ' '))
            n--;
        if (n == 0 || n > 10)
            continue;
        guint64 v = 0;
        gboolean ok = TRUE;
        for (size_t k = 0; k < n && ok; k++) {
            ok = g_ascii_isdigit(text[start + k]);
            v = v * 10 + (guint64)(text[start + k] - '0');
        }
        if (!ok || v == 0 || v > G_MAXINT32)
            continue;
        guint32 pid = (guint32)v;
        g_array_append_val(pids, pid);
    }
    g_array_sort(pids, cmp_u32);
    /* unique */
    guint w = 0;
    for (guint r = 0; r < pids->len; r++)
        if (w == 0 || g_array_index(pids, guint32, w - 1) != g_array_index(pids, guint32, r))
            g_array_index(pids, guint32, w++) = g_array_index(pids, guint32, r);
    g_array_set_size(pids, w);
    return pids;
}

void ddm_adb_diff_pids(const GArray *old_pids, const GArray *new_pids, GArray *added, GArray *removed)
{
    guint i = 0, j = 0;
    while (i < old_pids->len || j < new_pids->len) {
        if (j >= new_pids->len ||
            (i < old_pids->len && g_array_index(old_pids, guint32, i) < g_array_index(new_pids, guint32, j))) {
            g_array_append_val(removed, g_array_index(old_pids, guint32, i));
            i++;
        } else if (i >= old_pids->len ||
                   g_array_index(new_pids, guint32, j) < g_array_index(old_pids, guint32, i)) {
            g_array_append_val(added, g_array_index(new_pids, guint32, j));
            j++;
        } else {
            i++;
            j++;
        }
    }
}

static gboolean parse_port(const char *s, guint16 *port)
{
    guint64 v;
    if (!s || !*s || !g_ascii_string_to_unsigned(s, 10, 1, 65535, &v, NULL))
        return FALSE;
    *port = (guint16)v;
    return TRUE;
}

gboolean ddm_adb_server_addr(const char *env_socket, const char *env_port, DdmAdbServerAddr *out,
                             GError **error)
{
    memset(out, 0, sizeof(*out));
    out->port = DDM_ADB_DEFAULT_PORT;
    if (env_socket && *env_socket) {
        if (g_str_has_prefix(env_socket, "tcp:")) {
            const char *rest = env_socket + 4;
            const char *colon = strrchr(rest, ':');
            if (!colon) {
                out->host = g_strdup("127.0.0.1");
                if (parse_port(rest, &out->port))
                    return TRUE;
            } else if (colon > rest && parse_port(colon + 1, &out->port)) {
                gsize n = (gsize)(colon - rest);
                if (n > 2 && rest[0] == '[' && rest[n - 1] == ']') /* [::1] */
                    out->host = g_strndup(rest + 1, n - 2);
                else
                    out->host = g_strndup(rest, n);
                if (g_ascii_strcasecmp(out->host, "localhost") == 0) {
                    g_free(out->host);
                    out->host = g_strdup("127.0.0.1");
                }
                if (g_hostname_is_ip_address(out->host))
                    return TRUE;
            }
        } else if (g_str_has_prefix(env_socket, "localabstract:") && env_socket[14]) {
            out->unix_path = g_strdup(env_socket + 14);
            out->abstract = TRUE;
            return TRUE;
        } else if (g_str_has_prefix(env_socket, "localfilesystem:") && env_socket[16]) {
            out->unix_path = g_strdup(env_socket + 16);
            return TRUE;
        }
        ddm_adb_server_addr_clear(out);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "ADB_SERVER_SOCKET '%s' is not tcp:PORT, tcp:ADDRESS:PORT (an IP address, "
                    "[::1] or localhost), localabstract:NAME or localfilesystem:PATH", env_socket);
        return FALSE;
    }
    out->host = g_strdup("127.0.0.1");
    if (env_port && *env_port && !parse_port(env_port, &out->port)) {
        ddm_adb_server_addr_clear(out);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "ANDROID_ADB_SERVER_PORT '%s' is not a port number (1-65535)", env_port);
        return FALSE;
    }
    return TRUE;
}

void ddm_adb_server_addr_clear(DdmAdbServerAddr *a)
{
    g_clear_pointer(&a->host, g_free);
    g_clear_pointer(&a->unix_path, g_free);
}

char *ddm_adb_server_addr_to_string(const DdmAdbServerAddr *a)
{
    if (a->unix_path)
        return g_strdup_printf("%s:%s", a->abstract ? "localabstract" : "localfilesystem", a->unix_path);
    if (strchr(a->host, ':'))
        return g_strdup_printf("[%s]:%u", a->host, a->port);
    return g_strdup_printf("%s:%u", a->host, a->port);
}

/* ------------------------------------------------ track-app (protobuf) */

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_GROUP_START = 3, PB_GROUP_END = 4, PB_FIXED32 = 5 };

typedef struct {
    const guint8 *p, *end;
} PbReader;

/* At most 10 bytes; the 10th may only carry bit 63. */
static gboolean pb_read_varint(PbReader *r, guint64 *out)
{
    guint64 v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return FALSE;
        guint8 b = *r->p++;
        if (i == 9 && b > 1)
            return FALSE;
        v |= (guint64)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return TRUE;
        }
    }
    return FALSE;
}

/* A field key; FALSE for field 0, groups and wire types 6/7. */
static gboolean pb_read_key(PbReader *r, guint64 *field, unsigned *wire)
{
    guint64 key;
    if (!pb_read_varint(r, &key))
        return FALSE;
    *field = key >> 3;
    *wire = (unsigned)(key & 7);
    return *field != 0 && (*wire == PB_VARINT || *wire == PB_FIXED64 || *wire == PB_LEN || *wire == PB_FIXED32);
}

/* A length-delimited payload, bounded by the bytes that remain. */
static gboolean pb_read_len(PbReader *r, const guint8 **data, size_t *len)
{
    guint64 n;
    if (!pb_read_varint(r, &n) || n > (guint64)(r->end - r->p))
        return FALSE;
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return TRUE;
}

static gboolean pb_skip(PbReader *r, unsigned wire)
{
    guint64 v;
    const guint8 *d;
    size_t n;
    switch (wire) {
    case PB_VARINT:
        return pb_read_varint(r, &v);
    case PB_LEN:
        return pb_read_len(r, &d, &n);
    case PB_FIXED64:
    case PB_FIXED32: {
        size_t want = wire == PB_FIXED64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < want)
            return FALSE;
        r->p += want;
        return TRUE;
    }
    default:
        return FALSE;
    }
}

/* Valid UTF-8, cut at a character boundary to fit @size bytes with the NUL. */
static void pb_copy_string(char *dst, size_t size, const guint8 *src, size_t len)
{
    char *valid = g_utf8_make_valid((const char *)src, (gssize)len);
    const char *p = valid, *keep = valid;
    while (*p) {
        const char *next = g_utf8_next_char(p);
        if ((size_t)(next - valid) > size - 1)
            break;
        keep = p = next;
    }
    size_t n = (size_t)(keep - valid);
    memcpy(dst, valid, n);
    dst[n] = '\0';
    g_free(valid);
}

/* One ProcessEntry. FALSE = malformed; *app->pid stays 0 when unusable. */
static gboolean pb_parse_entry(const guint8 *buf, size_t len, DdmAdbApp *app)
{
    PbReader r = {buf, buf + len};
    gint64 pid = 0;
    memset(app, 0, sizeof(*app));
    while (r.p < r.end) {
        guint64 field, v;
        unsigned wire;
        const guint8 *d;
        size_t n;
        if (!pb_read_key(&r, &field, &wire))
            return FALSE;
        if (wire == PB_VARINT && (field == 1 || field == 2 || field == 3)) {
            if (!pb_read_varint(&r, &v))
                return FALSE;
            if (field == 1)
                pid = (gint64)v; /* int64: negative values are 10-byte varints */
            else if (field == 2)
                app->debuggable = v != 0;
            else
                app->profileable = v != 0;
        } else if (wire == PB_LEN && (field == 4 || field == 6)) {
            if (!pb_read_len(&r, &d, &n))
                return FALSE;
            if (field == 4)
                pb_copy_string(app->architecture, sizeof app->architecture, d, n);
            else
                pb_copy_string(app->process_name, sizeof app->process_name, d, n);
        } else if (!pb_skip(&r, wire)) {
            return FALSE;
        }
    }
    app->pid = pid >= 1 && pid <= G_MAXINT32 ? (guint32)pid : 0;
    return TRUE;
}

static gint cmp_app_pid(gconstpointer a, gconstpointer b)
{
    return cmp_u32(&((const DdmAdbApp *)a)->pid, &((const DdmAdbApp *)b)->pid);
}

gboolean ddm_adb_parse_app_processes(const guint8 *buf, size_t len, GArray **out)
{
    PbReader r = {buf, buf + len};
    GArray *apps = g_array_new(FALSE, FALSE, sizeof(DdmAdbApp));
    while (r.p < r.end) {
        guint64 field;
        unsigned wire;
        const guint8 *d;
        size_t n;
        if (!pb_read_key(&r, &field, &wire))
            goto bad;
        if (field == 1 && wire == PB_LEN) {
            DdmAdbApp app;
            if (!pb_read_len(&r, &d, &n) || !pb_parse_entry(d, n, &app))
                goto bad;
            if (app.pid)
                g_array_append_val(apps, app);
        } else if (!pb_skip(&r, wire)) {
            goto bad;
        }
    }
    /* g_array_sort is stable: of a pid listed twice the first entry stays first. */
    g_array_sort(apps, cmp_app_pid);
    guint w = 0;
    for (guint i = 0; i < apps->len; i++)
        if (w == 0 || g_array_index(apps, DdmAdbApp, w - 1).pid != g_array_index(apps, DdmAdbApp, i).pid)
            g_array_index(apps, DdmAdbApp, w++) = g_array_index(apps, DdmAdbApp, i);
    g_array_set_size(apps, w);
    *out = apps;
    return TRUE;
bad:
    g_array_unref(apps);
    return FALSE;
}

const DdmAdbApp *ddm_adb_app_find(const GArray *apps, guint32 pid)
{
    guint lo = 0, hi = apps->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        guint32 at = g_array_index(apps, DdmAdbApp, mid).pid;
        if (at == pid)
            return &g_array_index(apps, DdmAdbApp, mid);
        if (at < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

GArray *ddm_adb_app_debuggable_pids(const GArray *apps)
{
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < apps->len; i++) {
        const DdmAdbApp *a = &g_array_index(apps, DdmAdbApp, i);
        if (a->debuggable)
            g_array_append_val(pids, a->pid);
    }
    return pids;
}
