/* SPDX-License-Identifier: Apache-2.0
 *
 * The remembered debugger ports (portmap.h): an LRU list of (serial, app,
 * port) with two hash indexes (by name, and by port: one port has at most
 * one entry, so "is this port someone else's" is one lookup), its file format, and loading and saving the file
 * safely (bounded read, O_NOFOLLOW, owner check; temporary file + rename,
 * mode 0600 in a 0700 directory).
 */
#include "core/relay/portmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

/* One remembered port in one block (every VM that has a debugger port has
 * an entry or two): its link in the LRU list and its index key
 * "SERIAL\tAPP", which holds the serial ("" for a local VM) and the app. */
typedef struct {
    GList link;         /* in lru; link.data is the entry */
    guint16 port;
    guint16 serial_len; /* key[serial_len] is the tab */
    char key[];         /* "SERIAL\tAPP" */
} Entry;

struct DdmPortMap {
    guint max;
    GQueue lru;        /* Entry links: head least recently used, tail most */
    GHashTable *index; /* Entry.key (borrowed) -> its link in lru */
    GHashTable *by_port; /* port -> GList* link in lru (ddm_portmap_set keeps one entry a port) */
};

static const char *entry_app(const Entry *e)
{
    return e->key + e->serial_len + 1;
}

static gboolean entry_serial_is(const Entry *e, const char *serial)
{
    return strncmp(e->key, serial, e->serial_len) == 0 && serial[e->serial_len] == '\0';
}

static char *index_key(const char *serial, const char *app)
{
    return g_strconcat(serial ? serial : "", "\t", app, NULL);
}

DdmPortMap *ddm_portmap_new(guint max_entries)
{
    DdmPortMap *m = g_new0(DdmPortMap, 1);
    m->max = max_entries ? max_entries : 1;
    g_queue_init(&m->lru);
    m->index = g_hash_table_new(g_str_hash, g_str_equal);
    m->by_port = g_hash_table_new(g_direct_hash, g_direct_equal);
    return m;
}

static void clear(DdmPortMap *m)
{
    GList *l;
    g_hash_table_remove_all(m->index);
    g_hash_table_remove_all(m->by_port);
    while ((l = g_queue_pop_head_link(&m->lru)))
        g_free(l->data);
}

void ddm_portmap_free(DdmPortMap *m)
{
    if (!m)
        return;
    clear(m);
    g_hash_table_destroy(m->index);
    g_hash_table_destroy(m->by_port);
    g_free(m);
}

guint ddm_portmap_count(const DdmPortMap *m)
{
    return m->lru.length;
}

/* A field the file can hold: valid UTF-8, no control characters (so no tab
 * or newline), at most @max bytes, and not empty if @need. */
static gboolean field_ok(const char *s, gsize len, gsize max, gboolean need)
{
    if (len > max || (need && len == 0) || !g_utf8_validate(s, (gssize)len, NULL))
        return FALSE;
    for (gsize i = 0; i < len; i++)
        if ((guchar)s[i] < 0x20 || (guchar)s[i] == 0x7f)
            return FALSE;
    return TRUE;
}

guint16 ddm_portmap_lookup(const DdmPortMap *m, const char *serial, const char *app)
{
    if (!app)
        return 0;
    g_autofree char *k = index_key(serial, app);
    GList *l = g_hash_table_lookup(m->index, k);
    return l ? ((Entry *)l->data)->port : 0;
}

gboolean ddm_portmap_port_taken_by_other(const DdmPortMap *m, guint16 port, const char *serial,
                                         const char *app)
{
    if (!serial)
        serial = "";
    GList *l = g_hash_table_lookup(m->by_port, GUINT_TO_POINTER((guint)port));
    if (!l)
        return FALSE;
    Entry *e = l->data;
    return !app || strcmp(entry_app(e), app) != 0 || !entry_serial_is(e, serial);
}

/* Drop the entry at @link from the list and both indexes. */
static void drop_link(DdmPortMap *m, GList *link)
{
    Entry *o = link->data;
    g_hash_table_remove(m->index, o->key);
    if (g_hash_table_lookup(m->by_port, GUINT_TO_POINTER((guint)o->port)) == link)
        g_hash_table_remove(m->by_port, GUINT_TO_POINTER((guint)o->port));
    g_queue_unlink(&m->lru, link);
    g_free(o);
}

gboolean ddm_portmap_set(DdmPortMap *m, const char *serial, const char *app, guint16 port,
                         gboolean *changed)
{
    if (changed)
        *changed = FALSE;
    if (!serial)
        serial = "";
    if (!app || port == 0 || !field_ok(serial, strlen(serial), DDM_PORTMAP_SERIAL_MAX, FALSE) ||
        !field_ok(app, strlen(app), DDM_PORTMAP_APP_MAX, TRUE))
        return FALSE;
    char *k = index_key(serial, app);
    GList *l = g_hash_table_lookup(m->index, k);
    /* One port, one app: whoever held @port before loses it (the relay's
     * fallback can hand a remembered port to another app; a restarted app
     * must then not take it back from under it). At most max entries. */
    GList *holder = g_hash_table_lookup(m->by_port, GUINT_TO_POINTER((guint)port));
    if (holder && holder != l) {
        drop_link(m, holder);
        if (changed)
            *changed = TRUE;
    }
    if (l) {
        Entry *e = l->data;
        if (changed)
            *changed = *changed || e->port != port || l != m->lru.tail;
        if (g_hash_table_lookup(m->by_port, GUINT_TO_POINTER((guint)e->port)) == l)
            g_hash_table_remove(m->by_port, GUINT_TO_POINTER((guint)e->port));
        e->port = port;
        g_hash_table_insert(m->by_port, GUINT_TO_POINTER((guint)port), l);
        g_queue_unlink(&m->lru, l);
        g_queue_push_tail_link(&m->lru, l);
        g_free(k);
        return TRUE;
    }
    while (m->lru.length >= m->max)
        drop_link(m, m->lru.head);
    gsize key_len = strlen(k);
    Entry *e = g_malloc0(sizeof *e + key_len + 1);
    memcpy(e->key, k, key_len + 1);
    g_free(k);
    e->serial_len = (guint16)strlen(serial); /* <= DDM_PORTMAP_SERIAL_MAX (field_ok) */
    e->port = port;
    e->link.data = e;
    g_queue_push_tail_link(&m->lru, &e->link);
    g_hash_table_insert(m->index, e->key, &e->link);
    g_hash_table_insert(m->by_port, GUINT_TO_POINTER((guint)port), &e->link);
    if (changed)
        *changed = TRUE;
    return TRUE;
}

/* ------------------------------------------------------------ the file */

static gboolean parse_fail(DdmPortMap *m, GError **error, guint line, const char *why)
{
    clear(m);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "line %u: %s", line, why);
    return FALSE;
}

gboolean ddm_portmap_parse(DdmPortMap *m, const char *buf, gsize len, GError **error)
{
    clear(m);
    if (len > DDM_PORTMAP_FILE_MAX)
        return parse_fail(m, error, 0, "file too large");
    if (len == 0 || buf[len - 1] != '\n')
        return parse_fail(m, error, 0, "not a whole file (no final newline)");
    gsize pos = 0;
    guint line = 0;
    while (pos < len) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        gsize n = (gsize)(nl - s); /* nl != NULL: the buffer ends with '\n' */
        pos += n + 1;
        line++;
        if (line == 1) {
            if (n != strlen(DDM_PORTMAP_HEADER) || memcmp(s, DDM_PORTMAP_HEADER, n) != 0)
                return parse_fail(m, error, line, "not a ddmon port map (bad header)");
            continue;
        }
        const char *t1 = memchr(s, '\t', n);
        const char *t2 = t1 ? memchr(t1 + 1, '\t', n - (gsize)(t1 + 1 - s)) : NULL;
        if (!t2)
            return parse_fail(m, error, line, "expected SERIAL<TAB>APP<TAB>PORT");
        gsize sl = (gsize)(t1 - s), al = (gsize)(t2 - t1 - 1), pl = n - (gsize)(t2 + 1 - s);
        if (!field_ok(s, sl, DDM_PORTMAP_SERIAL_MAX, FALSE))
            return parse_fail(m, error, line, "bad device serial");
        if (!field_ok(t1 + 1, al, DDM_PORTMAP_APP_MAX, TRUE))
            return parse_fail(m, error, line, "bad app name");
        guint port = 0;
        if (pl == 0 || pl > 5)
            return parse_fail(m, error, line, "bad port");
        for (gsize i = 0; i < pl; i++) {
            char c = t2[1 + i];
            if (c < '0' || c > '9' || (i == 0 && c == '0'))
                return parse_fail(m, error, line, "bad port");
            port = port * 10 + (guint)(c - '0');
        }
        if (port < 1 || port > 65535)
            return parse_fail(m, error, line, "port out of range");
        g_autofree char *serial = g_strndup(s, sl);
        g_autofree char *app = g_strndup(t1 + 1, al);
        if (ddm_portmap_lookup(m, serial, app))
            return parse_fail(m, error, line, "app listed twice");
        /* Oldest first: past the cap, set() drops the oldest. */
        ddm_portmap_set(m, serial, app, (guint16)port, NULL);
    }
    if (line == 0)
        return parse_fail(m, error, 1, "no header");
    return TRUE;
}

char *ddm_portmap_serialize(const DdmPortMap *m, gsize *len)
{
    GString *s = g_string_new(DDM_PORTMAP_HEADER "\n");
    for (GList *l = m->lru.head; l; l = l->next) {
        Entry *e = l->data;
        g_string_append_printf(s, "%s\t%u\n", e->key, (unsigned)e->port);
    }
    if (len)
        *len = s->len;
    return g_string_free(s, FALSE);
}

gboolean ddm_portmap_load(DdmPortMap *m, const char *path, GError **error)
{
    clear(m);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return TRUE;
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", path, g_strerror(e));
        return FALSE;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 0022) != 0) {
        close(fd);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                    "%s: not a regular file of mode 0600 owned by this user", path);
        return FALSE;
    }
    gsize cap = DDM_PORTMAP_FILE_MAX + 1, n = 0;
    char *buf = g_malloc(cap);
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            g_free(buf);
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", path, g_strerror(e));
            return FALSE;
        }
        if (r == 0 || (n += (gsize)r) == cap)
            break;
    }
    close(fd);
    GError *perr = NULL;
    gboolean ok = ddm_portmap_parse(m, buf, n, &perr);
    g_free(buf);
    if (!ok) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path, perr->message);
        g_error_free(perr);
    }
    return ok;
}

/* The file's directory: created 0700 if missing; it must be a directory
 * of ours that nobody else can write to. */
static gboolean check_dir(const char *dir, GError **error)
{
    struct stat st;
    if (g_mkdir_with_parents(dir, 0700) != 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", dir, g_strerror(e));
        return FALSE;
    }
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 0022) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                    "%s: not a directory of this user's that only it can write to", dir);
        return FALSE;
    }
    return TRUE;
}

gboolean ddm_portmap_save(const DdmPortMap *m, const char *path, GError **error)
{
    g_autofree char *dir = g_path_get_dirname(path);
    if (!check_dir(dir, error))
        return FALSE;
    g_autofree char *tmp = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", tmp, g_strerror(e));
        return FALSE;
    }
    gsize len = 0;
    g_autofree char *text = ddm_portmap_serialize(m, &len);
    gsize off = 0;
    int err = 0;
    if (fchmod(fd, 0600) != 0)
        err = errno;
    while (!err && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            err = errno;
        else
            off += (gsize)w;
    }
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(err), "%s: %s", path, g_strerror(err));
        return FALSE;
    }
    return TRUE;
}
