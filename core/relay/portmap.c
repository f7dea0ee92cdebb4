/* SPDX-License-Identifier: Apache-2.0
 *
 * The remembered debugger ports (portmap.h): an LRU list of (serial, app,
 * port) with two indexes (by name, and by port: one port has at most one
 * entry, so "is this port someone else's" is one lookup), its file format,
 * and loading and saving the file safely (bounded read, O_NOFOLLOW, owner
 * check; temporary file + rename, mode 0600 in a 0700 directory).
 *
 * Memory (issue 16: the relay keeps two maps of up to 512 entries, one
 * entry a VM): the entries sit in a dense array of slots (0..count-1; a
 * dropped entry's slot takes the last one), the LRU list is two 16-bit
 * slot numbers in each entry, and both indexes are open-addressing arrays
 * of 16-bit cells (0 = empty, else slot + 1; linear probing, deletion by
 * backward shift), at least twice as many cells as slots, so each index
 * is at most half full and a lookup is expected O(1). Per entry that is
 * one block of 12 bytes + its key, a slot pointer and four cells, not a
 * GList link, a hash node in each of two GHashTables and their arrays.
 * Nothing is allocated before the first entry; clearing frees it all.
 */
#include "core/relay/portmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#define NIL 0xffffu /* no slot (the ends of the LRU list) */

/* One remembered port in one block: its LRU neighbours, its hash and its
 * key "SERIAL\tAPP", which holds the serial ("" for a local VM) and the app. */
typedef struct {
    guint16 prev, next; /* slots, toward the least / most recently used; NIL at the ends */
    guint16 port;
    guint16 serial_len; /* key[serial_len] is the tab */
    guint32 hash;       /* name_hash of the key */
    char key[];         /* "SERIAL\tAPP" */
} Entry;

struct DdmPortMap {
    guint max;          /* <= DDM_PORTMAP_SLOTS_MAX */
    guint count;        /* entries: slots 0..count-1 */
    guint room;         /* slots allocated (a power of two, <= max rounded up) */
    guint16 head, tail; /* LRU: head least recently used, tail most; NIL when empty */
    Entry **slots;      /* room slots (owned, and the entries in them) */
    guint16 *by_name;   /* 2 * room cells: slot + 1 of the entry whose key hashes there */
    guint16 *by_port;   /* 2 * room cells: slot + 1 of the entry with that port */
};

/* Slot numbers and cells (slot + 1) fit 16 bits with NIL left over. */
#define DDM_PORTMAP_SLOTS_MAX 32768u
G_STATIC_ASSERT(DDM_PORTMAP_MAX_ENTRIES <= DDM_PORTMAP_SLOTS_MAX);

static const char *entry_app(const Entry *e)
{
    return e->key + e->serial_len + 1;
}

/* The hash of "SERIAL\tAPP" (djb2 over its bytes), computed from the parts. */
static guint32 name_hash(const char *serial, const char *app)
{
    guint32 h = 5381;
    for (const char *p = serial; *p; p++)
        h = h * 33 + (guchar)*p;
    h = h * 33 + '\t';
    for (const char *p = app; *p; p++)
        h = h * 33 + (guchar)*p;
    return h;
}

static gboolean entry_is(const Entry *e, guint32 hash, const char *serial, const char *app)
{
    return e->hash == hash && strncmp(e->key, serial, e->serial_len) == 0 &&
           serial[e->serial_len] == '\0' && strcmp(entry_app(e), app) == 0;
}

static guint cells_mask(const DdmPortMap *m)
{
    return 2 * m->room - 1;
}

/* Where an entry's cell probing starts, in each index. */
/* Fibonacci hashing: the top log2(cells) bits of the value times 2^32/phi. */
static guint fib_home(const DdmPortMap *m, guint32 v)
{
    return (guint)((guint32)(v * 0x9E3779B1u) >> (32 - g_bit_storage(cells_mask(m))));
}

static guint name_home(const DdmPortMap *m, guint32 hash)
{
    return fib_home(m, hash);
}

static guint port_home(const DdmPortMap *m, guint16 port)
{
    return fib_home(m, port);
}

static guint home_of(const DdmPortMap *m, const guint16 *cells, guint16 cell)
{
    const Entry *e = m->slots[cell - 1];
    return cells == m->by_name ? name_home(m, e->hash) : port_home(m, e->port);
}

/* The cell of @cells holding @slot, probing from @home (it is there). */
static guint cell_of(const DdmPortMap *m, const guint16 *cells, guint home, guint slot)
{
    guint mask = cells_mask(m);
    for (guint i = home;; i = (i + 1) & mask)
        if (cells[i] == slot + 1)
            return i;
}

static void cell_put(const DdmPortMap *m, guint16 *cells, guint home, guint slot)
{
    guint mask = cells_mask(m), i = home;
    while (cells[i])
        i = (i + 1) & mask;
    cells[i] = (guint16)(slot + 1);
}

/* Empty cell @i, moving later cells of the run back so that every entry
 * stays reachable from its home (backward-shift deletion). */
static void cell_delete(const DdmPortMap *m, guint16 *cells, guint i)
{
    guint mask = cells_mask(m), j = i;
    for (;;) {
        cells[i] = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!cells[j])
                return;
            guint k = home_of(m, cells, cells[j]);
            /* cells[j] stays if its home lies cyclically in (i, j] */
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            break;
        }
        cells[i] = cells[j];
        i = j;
    }
}

/* The slot of the entry for @serial + @app, or -1. */
static gint find_name(const DdmPortMap *m, const char *serial, const char *app)
{
    if (!m->count)
        return -1;
    guint32 h = name_hash(serial, app);
    guint mask = cells_mask(m);
    for (guint i = name_home(m, h); m->by_name[i]; i = (i + 1) & mask) {
        guint slot = m->by_name[i] - 1u;
        if (entry_is(m->slots[slot], h, serial, app))
            return (gint)slot;
    }
    return -1;
}

/* The slot of the entry with @port, or -1. */
static gint find_port(const DdmPortMap *m, guint16 port)
{
    if (!m->count)
        return -1;
    guint mask = cells_mask(m);
    for (guint i = port_home(m, port); m->by_port[i]; i = (i + 1) & mask) {
        guint slot = m->by_port[i] - 1u;
        if (m->slots[slot]->port == port)
            return (gint)slot;
    }
    return -1;
}

/* Room for @room slots (a power of two >= count): both indexes rebuilt. */
static void set_room(DdmPortMap *m, guint room)
{
    m->room = room;
    m->slots = g_renew(Entry *, m->slots, room);
    g_free(m->by_name);
    g_free(m->by_port);
    m->by_name = g_new0(guint16, 2 * room);
    m->by_port = g_new0(guint16, 2 * room);
    for (guint s = 0; s < m->count; s++) {
        cell_put(m, m->by_name, name_home(m, m->slots[s]->hash), s);
        cell_put(m, m->by_port, port_home(m, m->slots[s]->port), s);
    }
}

static void lru_unlink(DdmPortMap *m, guint s)
{
    Entry *e = m->slots[s];
    if (e->prev != NIL)
        m->slots[e->prev]->next = e->next;
    else
        m->head = e->next;
    if (e->next != NIL)
        m->slots[e->next]->prev = e->prev;
    else
        m->tail = e->prev;
}

static void lru_push_tail(DdmPortMap *m, guint s)
{
    Entry *e = m->slots[s];
    e->prev = m->tail;
    e->next = NIL;
    if (m->tail != NIL)
        m->slots[m->tail]->next = (guint16)s;
    else
        m->head = (guint16)s;
    m->tail = (guint16)s;
}

DdmPortMap *ddm_portmap_new(guint max_entries)
{
    DdmPortMap *m = g_new0(DdmPortMap, 1);
    m->max = CLAMP(max_entries, 1u, DDM_PORTMAP_SLOTS_MAX);
    m->head = m->tail = NIL;
    return m;
}

static void clear(DdmPortMap *m)
{
    for (guint s = 0; s < m->count; s++)
        g_free(m->slots[s]);
    g_clear_pointer(&m->slots, g_free);
    g_clear_pointer(&m->by_name, g_free);
    g_clear_pointer(&m->by_port, g_free);
    m->count = m->room = 0;
    m->head = m->tail = NIL;
}

void ddm_portmap_free(DdmPortMap *m)
{
    if (!m)
        return;
    clear(m);
    g_free(m);
}

guint ddm_portmap_count(const DdmPortMap *m)
{
    return m->count;
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
    gint s = find_name(m, serial ? serial : "", app);
    return s >= 0 ? m->slots[s]->port : 0;
}

gboolean ddm_portmap_port_taken_by_other(const DdmPortMap *m, guint16 port, const char *serial,
                                         const char *app)
{
    if (!serial)
        serial = "";
    gint s = find_port(m, port);
    if (s < 0)
        return FALSE;
    const Entry *e = m->slots[s];
    return !app || !entry_is(e, name_hash(serial, app), serial, app);
}

/* Drop the entry in slot @s from the list and both indexes; the last
 * slot's entry moves into @s. */
static void drop(DdmPortMap *m, guint s)
{
    Entry *e = m->slots[s];
    cell_delete(m, m->by_name, cell_of(m, m->by_name, name_home(m, e->hash), s));
    cell_delete(m, m->by_port, cell_of(m, m->by_port, port_home(m, e->port), s));
    lru_unlink(m, s);
    g_free(e);
    guint last = --m->count;
    if (s != last) {
        Entry *moved = m->slots[last];
        m->by_name[cell_of(m, m->by_name, name_home(m, moved->hash), last)] = (guint16)(s + 1);
        m->by_port[cell_of(m, m->by_port, port_home(m, moved->port), last)] = (guint16)(s + 1);
        if (moved->prev != NIL)
            m->slots[moved->prev]->next = (guint16)s;
        else
            m->head = (guint16)s;
        if (moved->next != NIL)
            m->slots[moved->next]->prev = (guint16)s;
        else
            m->tail = (guint16)s;
        m->slots[s] = moved;
    }
    if (m->count == 0)
        clear(m);
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
    gint s = find_name(m, serial, app);
    /* One port, one app: whoever held @port before loses it (the relay's
     * fallback can hand a remembered port to another app; a restarted app
     * must then not take it back from under it). At most max entries. */
    gint holder = find_port(m, port);
    if (holder >= 0 && holder != s) {
        if (s == (gint)m->count - 1)
            s = holder; /* drop() moves the last slot into the hole */
        drop(m, (guint)holder);
        if (changed)
            *changed = TRUE;
    }
    if (s >= 0) {
        Entry *e = m->slots[s];
        if (changed)
            *changed = *changed || e->port != port || (guint)s != m->tail;
        if (e->port != port) {
            cell_delete(m, m->by_port, cell_of(m, m->by_port, port_home(m, e->port), (guint)s));
            e->port = port;
            cell_put(m, m->by_port, port_home(m, port), (guint)s);
        }
        lru_unlink(m, (guint)s);
        lru_push_tail(m, (guint)s);
        return TRUE;
    }
    while (m->count >= m->max)
        drop(m, m->head);
    if (m->count == m->room)
        set_room(m, m->room ? m->room * 2 : 4);
    gsize serial_len = strlen(serial), app_len = strlen(app);
    Entry *e = g_malloc(sizeof *e + serial_len + 1 + app_len + 1);
    memcpy(e->key, serial, serial_len);
    e->key[serial_len] = '\t';
    memcpy(e->key + serial_len + 1, app, app_len + 1);
    e->serial_len = (guint16)serial_len; /* <= DDM_PORTMAP_SERIAL_MAX (field_ok) */
    e->port = port;
    e->hash = name_hash(serial, app);
    guint slot = m->count++;
    m->slots[slot] = e;
    cell_put(m, m->by_name, name_home(m, e->hash), slot);
    cell_put(m, m->by_port, port_home(m, port), slot);
    lru_push_tail(m, slot);
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
    for (guint16 i = m->head; i != NIL; i = m->slots[i]->next) {
        const Entry *e = m->slots[i];
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
