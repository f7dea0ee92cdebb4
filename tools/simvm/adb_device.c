/* SPDX-License-Identifier: Apache-2.0
 *
 * Simulated Android devices (see adb_device.h): listeners, one Link per
 * adb server connection, one Stream per OPENed service.
 *
 * Ownership: the setup owns its devices; a device owns its links; a link
 * owns its streams (by local id). Closing a link or a stream removes its
 * I/O at once and frees the memory from an idle callback, so a callback
 * on the stack never touches freed memory.
 * Bounds: messages from the server are capped (SIM_ADB_MAX_PAYLOAD_ACCEPTED),
 * a link's queued output is capped (LINK_OUT_MAX, then the link is
 * dropped), a stream has at most one WRTE in flight and reads from its VM
 * only when nothing is waiting to be sent.
 */
#define _GNU_SOURCE 1 /* accept4 */
#include "adb_device.h"

#include <errno.h>
#include <gio/gio.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adb_msg.h"
#include "reactor.h"

#define LINK_OUT_MAX ((size_t)8 << 20)
#define LINK_IN_MAX (SIM_ADB_HEADER_LEN + SIM_ADB_MAX_PAYLOAD_ACCEPTED)
#define MAX_LINKS_PER_DEVICE 16
/* 1,000 VMs' jdwp streams for one client, and another client's while the
 * first one's close (bench/scale.sh --adb), with room to spare. */
#define MAX_STREAMS_PER_LINK 4096

typedef struct Device Device;
typedef struct Link Link;
typedef struct Stream Stream;

typedef enum {
    SVC_TRACK_JDWP,
    SVC_TRACK_APP,  /* API 31+: protobuf AppProcesses */
    SVC_JDWP,
    SVC_TEXT, /* a fixed answer, then CLSE (shell:, exec:) */
} ServiceKind;

struct Stream {
    Link *link;
    uint32_t local_id, remote_id;
    ServiceKind kind;
    gboolean remote_ready;     /* no WRTE of ours awaiting its OKAY */
    GByteArray *pending;       /* bytes not yet sent in a WRTE */
    gboolean dirty;            /* track-jdwp/-app: the list may have changed */
    GBytes *last_frame;        /* track-app: the last update sent (resent only when different) */
    gboolean close_when_sent;  /* CLSE once pending is empty and acked */
    gboolean closed;
    /* jdwp:PID bridge */
    uint32_t pid;
    int fd;                    /* our end of the socketpair, -1 when none */
    SimIoHandle *io;
    unsigned io_events;
    GByteArray *to_vm;         /* data from the server not yet written */
    gboolean okay_owed;        /* OKAY the server's WRTE once to_vm drains */
    gboolean vm_eof;
};

struct Link {
    Device *dev;
    int fd;
    SimIoHandle *io;
    unsigned io_events;
    GByteArray *in;
    GByteArray *out;
    gboolean online;           /* CNXN exchanged */
    gboolean closed;
    uint32_t max_payload;      /* what we may send in one WRTE */
    uint32_t next_id;
    GHashTable *streams;       /* local id -> Stream* (owned) */
    char *peer;
};

struct Device {
    SimAdbSetup *setup;
    guint index;
    char *serial;
    int want_port;
    uint16_t port;
    int listen_fd;
    SimIoHandle *listen_io;
    GArray *pids;              /* uint32_t, in order of appearance */
    GPtrArray *links;          /* Link* (owned while open) */
    SimAdbProp *props;         /* ends with {NULL, NULL} */
    GPtrArray *prop_strings;   /* owns the props' strings */
    char *banner;
};

struct SimAdbSetup {
    char **opt_ports;
    char **opt_serials;
    int sdk;
    guint app_timer;           /* re-checks track-app lists (names change without pid events) */
    GPtrArray *devices;        /* Device* (owned) */
    SimWorld *world;
    guint watch_id;
    GHashTable *owner;         /* pid -> Device* */
    guint deal;                /* round-robin cursor */
    SimReactor *reactor;
    GPtrArray *dead_links;     /* closed, freed by the reaper */
    GPtrArray *dead_streams;
    guint reap_source;
};

static void link_close(Link *l, const char *why);
static void stream_close(Stream *s, gboolean send_clse, const char *why);
static void stream_pump(Stream *s);
static void link_flush(Link *l);
static void bridge_io(void *ud, unsigned events);

/* ---------------------------------------------------------------- reaping */

static void stream_free(Stream *s)
{
    if (s->pending)
        g_byte_array_unref(s->pending);
    if (s->to_vm)
        g_byte_array_unref(s->to_vm);
    if (s->last_frame)
        g_bytes_unref(s->last_frame);
    g_free(s);
}

static void link_free(Link *l)
{
    g_hash_table_destroy(l->streams);
    g_byte_array_unref(l->in);
    g_byte_array_unref(l->out);
    g_free(l->peer);
    g_free(l);
}

static gboolean reap_cb(gpointer data)
{
    SimAdbSetup *s = data;

    s->reap_source = 0;
    g_ptr_array_set_size(s->dead_streams, 0);
    g_ptr_array_set_size(s->dead_links, 0);
    return G_SOURCE_REMOVE;
}

static void schedule_reap(SimAdbSetup *s)
{
    if (!s->reap_source)
        s->reap_source = g_idle_add(reap_cb, s);
}

/* ----------------------------------------------------------------- output */

static void link_update_io(Link *l)
{
    unsigned ev = SIM_IO_IN | (l->out->len ? SIM_IO_OUT : 0);

    if (l->io && ev != l->io_events) {
        sim_reactor_modify(l->dev->setup->reactor, l->io, ev);
        l->io_events = ev;
    }
}

static void link_send(Link *l, uint32_t cmd, uint32_t a0, uint32_t a1, const uint8_t *data, size_t len)
{
    if (l->closed)
        return;
    g_debug("adb %s: -> %s %u %u (%zu bytes)", l->peer, sim_adb_command_name(cmd), a0, a1, len);
    sim_adb_msg_append(l->out, cmd, a0, a1, data, len);
    if (l->out->len > LINK_OUT_MAX) {
        link_close(l, "the adb server does not read");
        return;
    }
    link_flush(l);
}

static void link_flush(Link *l)
{
    while (!l->closed && l->out->len) {
        ssize_t n = send(l->fd, l->out->data, l->out->len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            link_close(l, g_strerror(errno));
            return;
        }
        g_byte_array_remove_range(l->out, 0, (guint)n);
    }
    if (!l->closed)
        link_update_io(l);
}

/* ---------------------------------------------------------------- streams */

static void stream_update_io(Stream *s)
{
    SimReactor *r = s->link->dev->setup->reactor;
    unsigned ev = 0;

    if (s->fd < 0)
        return;
    /* read from the VM only when nothing waits to be sent (flow control) */
    if (!s->vm_eof && s->remote_ready && s->pending->len == 0)
        ev |= SIM_IO_IN;
    if (s->to_vm->len)
        ev |= SIM_IO_OUT;
    if (ev == s->io_events && (s->io != NULL) == (ev != 0))
        return;
    /* no interest: unregister, so a hung-up fd cannot wake us in a loop */
    if (ev == 0) {
        sim_reactor_remove(r, s->io);
        s->io = NULL;
    } else if (!s->io) {
        s->io = sim_reactor_add(r, s->fd, ev, bridge_io, s);
    } else {
        sim_reactor_modify(r, s->io, ev);
    }
    s->io_events = ev;
}

static void stream_destroy_io(Stream *s)
{
    if (s->io) {
        sim_reactor_remove(s->link->dev->setup->reactor, s->io);
        s->io = NULL;
    }
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
}

static void stream_close(Stream *s, gboolean send_clse, const char *why)
{
    Link *l = s->link;

    if (s->closed)
        return;
    s->closed = TRUE;
    g_debug("adb %s: stream %u closed (%s)", l->peer, s->local_id, why);
    stream_destroy_io(s);
    if (send_clse)
        link_send(l, SIM_ADB_CLSE, s->local_id, s->remote_id, NULL, 0);
    g_hash_table_steal(l->streams, GUINT_TO_POINTER(s->local_id));
    g_ptr_array_add(l->dev->setup->dead_streams, s);
    schedule_reap(l->dev->setup);
}

/* "64-bit (x86_64)" -> "x86_64" */
static void arch_of(const char *abi, char *buf, size_t size)
{
    const char *lp = abi ? strchr(abi, '(') : NULL;
    const char *rp = lp ? strchr(lp, ')') : NULL;

    if (lp && rp && (size_t)(rp - lp - 1) < size)
        g_strlcpy(buf, lp + 1, (gsize)(rp - lp));
    else
        g_strlcpy(buf, abi ? abi : "", size);
}

static void track_app_fill(Stream *s)
{
    Device *d = s->link->dev;
    SimAdbApp *apps = g_new0(SimAdbApp, d->pids->len ? d->pids->len : 1);
    char *arch = g_malloc0((gsize)(d->pids->len ? d->pids->len : 1) * 32); /* 32 bytes each */
    GByteArray *frame = g_byte_array_new();
    GBytes *bytes;
    guint i, n = 0;

    for (i = 0; i < d->pids->len; i++) {
        SimVm *vm = sim_world_find_pid(d->setup->world, g_array_index(d->pids, uint32_t, i));
        if (!vm)
            continue;
        arch_of(sim_vm_abi(vm), arch + (gsize)n * 32, 32);
        apps[n].pid = sim_vm_pid(vm);
        apps[n].debuggable = TRUE;
        apps[n].profileable = TRUE;
        apps[n].architecture = arch + (gsize)n * 32;
        apps[n].process_name = sim_vm_app_name(vm);
        apps[n].package_name = sim_vm_package_name(vm);
        n++;
    }
    if (sim_adb_append_app_frame(frame, apps, n) < n)
        g_message("adb device %s: track-app lists fewer processes than it has (hex4 limit)", d->serial);
    bytes = g_byte_array_free_to_bytes(frame);
    if (!s->last_frame || !g_bytes_equal(bytes, s->last_frame)) {
        g_byte_array_append(s->pending, g_bytes_get_data(bytes, NULL), (guint)g_bytes_get_size(bytes));
        if (s->last_frame)
            g_bytes_unref(s->last_frame);
        s->last_frame = g_bytes_ref(bytes);
    }
    g_bytes_unref(bytes);
    g_free(arch);
    g_free(apps);
}

/* Build the current list for a track-jdwp or track-app stream. */
static void track_fill(Stream *s)
{
    Device *d = s->link->dev;

    s->dirty = FALSE;
    if (s->kind == SVC_TRACK_APP) {
        track_app_fill(s);
        return;
    }
    if (sim_adb_append_pid_frame(s->pending, (const uint32_t *)(void *)d->pids->data, d->pids->len) < d->pids->len)
        g_message("adb device %s: track-jdwp lists fewer pids than it has (hex4 limit)", d->serial);
}

/* Send what is pending, one WRTE at a time. */
static void stream_pump(Stream *s)
{
    Link *l = s->link;

    if (s->closed || l->closed || !s->remote_ready)
        return;
    if ((s->kind == SVC_TRACK_JDWP || s->kind == SVC_TRACK_APP) && s->dirty && s->pending->len == 0)
        track_fill(s);
    if (s->pending->len) {
        guint n = MIN(s->pending->len, l->max_payload);
        s->remote_ready = FALSE;
        link_send(l, SIM_ADB_WRTE, s->local_id, s->remote_id, s->pending->data, n);
        if (s->closed || l->closed)
            return;
        g_byte_array_remove_range(s->pending, 0, n);
    } else if (s->close_when_sent) {
        stream_close(s, TRUE, "done");
        return;
    }
    stream_update_io(s);
}

static void bridge_write(Stream *s)
{
    while (s->to_vm->len) {
        ssize_t n = send(s->fd, s->to_vm->data, s->to_vm->len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            stream_close(s, TRUE, "the VM's connection failed");
            return;
        }
        g_byte_array_remove_range(s->to_vm, 0, (guint)n);
    }
    if (s->to_vm->len == 0 && s->okay_owed) {
        s->okay_owed = FALSE;
        link_send(s->link, SIM_ADB_OKAY, s->local_id, s->remote_id, NULL, 0);
    }
}

static void bridge_io(void *ud, unsigned events)
{
    Stream *s = ud;

    if (s->closed)
        return;
    if ((events & SIM_IO_OUT) && s->to_vm->len) {
        bridge_write(s);
        if (s->closed)
            return;
    }
    if ((events & SIM_IO_IN) && !s->vm_eof && s->remote_ready && s->pending->len == 0) {
        uint8_t buf[SIM_ADB_DEVICE_MAX_PAYLOAD];
        size_t want = MIN(sizeof buf, s->link->max_payload);
        ssize_t n = recv(s->fd, buf, want, 0);
        if (n > 0) {
            g_byte_array_append(s->pending, buf, (guint)n);
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            s->vm_eof = TRUE;
            s->close_when_sent = TRUE;
        }
    }
    stream_pump(s);
    if (!s->closed)
        stream_update_io(s);
}

static Stream *stream_new(Link *l, uint32_t remote_id, ServiceKind kind)
{
    Stream *s = g_new0(Stream, 1);

    s->link = l;
    s->remote_id = remote_id;
    s->kind = kind;
    s->fd = -1;
    s->pending = g_byte_array_new();
    s->to_vm = g_byte_array_new();
    do
        s->local_id = l->next_id++;
    while (s->local_id == 0 || g_hash_table_contains(l->streams, GUINT_TO_POINTER(s->local_id)));
    g_hash_table_insert(l->streams, GUINT_TO_POINTER(s->local_id), s);
    return s;
}

static gboolean device_has_pid(Device *d, uint32_t pid)
{
    guint i;

    for (i = 0; i < d->pids->len; i++)
        if (g_array_index(d->pids, uint32_t, i) == pid)
            return TRUE;
    return FALSE;
}

/* Open the service @name for the server's stream @remote_id. */
static void open_service(Link *l, uint32_t remote_id, const char *name)
{
    Device *d = l->dev;
    Stream *s;

    if (g_hash_table_size(l->streams) >= MAX_STREAMS_PER_LINK) {
        g_message("adb device %s: too many streams; refusing '%s'", d->serial, name);
        link_send(l, SIM_ADB_CLSE, 0, remote_id, NULL, 0);
        return;
    }
    if (strcmp(name, "track-jdwp") == 0 || (strcmp(name, "track-app") == 0 && d->setup->sdk >= 31)) {
        s = stream_new(l, remote_id, name[6] == 'j' ? SVC_TRACK_JDWP : SVC_TRACK_APP);
        link_send(l, SIM_ADB_OKAY, s->local_id, remote_id, NULL, 0);
        s->remote_ready = TRUE;
        s->dirty = TRUE;
        stream_pump(s);
    } else if (strcmp(name, "jdwp") == 0) { /* one-shot list, no hex4 (adb jdwp) */
        guint i;
        s = stream_new(l, remote_id, SVC_TEXT);
        for (i = 0; i < d->pids->len; i++) {
            char line[16];
            int n = g_snprintf(line, sizeof line, "%u\n", g_array_index(d->pids, uint32_t, i));
            g_byte_array_append(s->pending, (const guint8 *)line, (guint)n);
        }
        s->close_when_sent = TRUE;
        link_send(l, SIM_ADB_OKAY, s->local_id, remote_id, NULL, 0);
        s->remote_ready = TRUE;
        stream_pump(s);
    } else if (g_str_has_prefix(name, "jdwp:")) {
        uint32_t pid;
        SimVm *vm = NULL;
        int sv[2];

        if (sim_adb_parse_pid(name + 5, &pid) && device_has_pid(d, pid))
            vm = sim_world_find_pid(d->setup->world, pid);
        if (!vm) {
            g_message("adb device %s: %s: no such debuggable process", d->serial, name);
            link_send(l, SIM_ADB_CLSE, 0, remote_id, NULL, 0);
            return;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
            g_warning("adb device %s: socketpair: %s", d->serial, g_strerror(errno));
            link_send(l, SIM_ADB_CLSE, 0, remote_id, NULL, 0);
            return;
        }
        s = stream_new(l, remote_id, SVC_JDWP);
        s->pid = pid;
        s->fd = sv[0];
        s->remote_ready = TRUE;
        g_message("adb device %s: jdwp:%u opened", d->serial, pid);
        sim_vm_serve_fd(vm, sv[1]); /* the VM owns sv[1] from here */
        link_send(l, SIM_ADB_OKAY, s->local_id, remote_id, NULL, 0);
        if (!s->closed)
            stream_update_io(s);
    } else if (g_str_has_prefix(name, "shell:") || g_str_has_prefix(name, "exec:")) {
        const char *cmd = strchr(name, ':') + 1;
        char *text;

        if (*cmd == '\0') { /* interactive shell: not offered */
            link_send(l, SIM_ADB_CLSE, 0, remote_id, NULL, 0);
            return;
        }
        g_debug("adb device %s: shell '%s'", d->serial, cmd);
        text = sim_adb_shell_output(cmd, d->props);
        s = stream_new(l, remote_id, SVC_TEXT);
        g_byte_array_append(s->pending, (const guint8 *)text, (guint)strlen(text));
        g_free(text);
        s->close_when_sent = TRUE;
        link_send(l, SIM_ADB_OKAY, s->local_id, remote_id, NULL, 0);
        s->remote_ready = TRUE;
        stream_pump(s);
    } else {
        g_message("adb device %s: service '%s' not offered", d->serial, name);
        link_send(l, SIM_ADB_CLSE, 0, remote_id, NULL, 0);
    }
}

/* ------------------------------------------------------------------ links */

static void link_close(Link *l, const char *why)
{
    GList *streams, *it;
    Device *d = l->dev;

    if (l->closed)
        return;
    l->closed = TRUE;
    g_message("adb device %s: adb server connection %s closed (%s)", d->serial, l->peer, why);
    streams = g_hash_table_get_values(l->streams);
    for (it = streams; it; it = it->next)
        stream_close(it->data, FALSE, "transport closed");
    g_list_free(streams);
    if (l->io) {
        sim_reactor_remove(d->setup->reactor, l->io);
        l->io = NULL;
    }
    close(l->fd);
    l->fd = -1;
    g_ptr_array_remove(d->links, l); /* no free func: ownership moves to the reaper */
    g_ptr_array_add(d->setup->dead_links, l);
    schedule_reap(d->setup);
}

static void handle_cnxn(Link *l, const SimAdbHeader *h, const uint8_t *data)
{
    Device *d = l->dev;
    GList *streams, *it;
    char *banner = sim_adb_service_name(data, h->data_length);

    /* A new CNXN resets the transport: every stream is gone. */
    streams = g_hash_table_get_values(l->streams);
    for (it = streams; it; it = it->next)
        stream_close(it->data, FALSE, "transport reset");
    g_list_free(streams);
    l->max_payload = h->arg1 ? MIN(h->arg1, SIM_ADB_DEVICE_MAX_PAYLOAD) : SIM_ADB_DEVICE_MAX_PAYLOAD;
    g_message("adb device %s: adb server %s connected (version %08x, max payload %u, '%s')", d->serial, l->peer,
              h->arg0, h->arg1, banner ? banner : "?");
    g_free(banner);
    l->online = TRUE;
    link_send(l, SIM_ADB_CNXN, SIM_ADB_VERSION, SIM_ADB_DEVICE_MAX_PAYLOAD, (const uint8_t *)d->banner,
              strlen(d->banner) + 1);
}

static void handle_message(Link *l, const SimAdbHeader *h, const uint8_t *data)
{
    Stream *s;

    g_debug("adb %s: <- %s %u %u (%u bytes)", l->peer, sim_adb_command_name(h->command), h->arg0, h->arg1,
            h->data_length);
    if (h->command == SIM_ADB_CNXN) {
        handle_cnxn(l, h, data);
        return;
    }
    if (!l->online) {
        link_close(l, "the first message is not CNXN");
        return;
    }
    switch (h->command) {
    case SIM_ADB_OPEN: {
        char *name = sim_adb_service_name(data, h->data_length);
        if (!name || h->arg0 == 0) {
            g_message("adb device %s: malformed OPEN; refused", l->dev->serial);
            if (h->arg0)
                link_send(l, SIM_ADB_CLSE, 0, h->arg0, NULL, 0);
        } else {
            open_service(l, h->arg0, name);
        }
        g_free(name);
        break;
    }
    case SIM_ADB_OKAY:
        s = g_hash_table_lookup(l->streams, GUINT_TO_POINTER(h->arg1));
        if (s && s->remote_id == h->arg0) {
            s->remote_ready = TRUE;
            stream_pump(s);
        }
        break;
    case SIM_ADB_WRTE:
        s = g_hash_table_lookup(l->streams, GUINT_TO_POINTER(h->arg1));
        if (!s || s->remote_id != h->arg0) {
            g_debug("adb %s: WRTE for unknown stream %u", l->peer, h->arg1);
            break;
        }
        if (s->kind != SVC_JDWP || s->fd < 0) {
            /* nobody listens on the other side: take it and say OKAY */
            link_send(l, SIM_ADB_OKAY, s->local_id, s->remote_id, NULL, 0);
            break;
        }
        if (s->to_vm->len) { /* a WRTE before our OKAY: the server broke flow control */
            g_message("adb device %s: WRTE before OKAY on stream %u; closing it", l->dev->serial, s->local_id);
            stream_close(s, TRUE, "flow control violated");
            break;
        }
        g_byte_array_append(s->to_vm, data, h->data_length);
        s->okay_owed = TRUE;
        bridge_write(s);
        if (!s->closed)
            stream_update_io(s);
        break;
    case SIM_ADB_CLSE:
        s = g_hash_table_lookup(l->streams, GUINT_TO_POINTER(h->arg1));
        if (s && (s->remote_id == h->arg0 || h->arg0 == 0))
            stream_close(s, FALSE, "closed by the adb server");
        break;
    case SIM_ADB_AUTH:
    case SIM_ADB_STLS:
    case SIM_ADB_SYNC:
    default:
        g_debug("adb %s: ignoring %s", l->peer, sim_adb_command_name(h->command));
        break;
    }
}

static void link_read(Link *l)
{
    uint8_t buf[16384];

    for (;;) {
        ssize_t n = recv(l->fd, buf, sizeof buf, 0);
        size_t off = 0;

        if (n == 0) {
            link_close(l, "end of stream");
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                link_close(l, g_strerror(errno));
            return;
        }
        g_byte_array_append(l->in, buf, (guint)n);
        while (!l->closed) {
            SimAdbHeader h;
            const uint8_t *data = NULL;
            size_t used = 0;
            SimAdbMsgStatus st = sim_adb_msg_take(l->in->data + off, l->in->len - off,
                                                  SIM_ADB_MAX_PAYLOAD_ACCEPTED, &h, &data, &used);
            if (st == SIM_ADB_MSG_NEED_MORE)
                break;
            if (st != SIM_ADB_MSG_OK) {
                g_warning("adb device %s: bad message from the adb server: %s", l->dev->serial,
                          sim_adb_msg_status_name(st));
                link_close(l, sim_adb_msg_status_name(st));
                return;
            }
            handle_message(l, &h, data);
            off += used;
        }
        if (l->closed)
            return;
        g_byte_array_remove_range(l->in, 0, (guint)off);
        if (l->in->len > LINK_IN_MAX) { /* cannot happen with a capped length; be sure */
            link_close(l, "oversized message");
            return;
        }
    }
}

static void link_io(void *ud, unsigned events)
{
    Link *l = ud;

    if (l->closed)
        return;
    if (events & SIM_IO_OUT)
        link_flush(l);
    if (!l->closed && (events & SIM_IO_IN))
        link_read(l);
}

static void listener_io(void *ud, unsigned events)
{
    Device *d = ud;
    int i;

    (void)events;
    for (i = 0; i < 8; i++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(d->listen_fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        Link *l;

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                g_message("adb device %s: accept: %s", d->serial, g_strerror(errno));
            return;
        }
        if (d->links->len >= MAX_LINKS_PER_DEVICE) {
            g_message("adb device %s: too many adb server connections; refusing one", d->serial);
            close(fd);
            continue;
        }
        l = g_new0(Link, 1);
        l->dev = d;
        l->fd = fd;
        l->in = g_byte_array_new();
        l->out = g_byte_array_new();
        l->max_payload = SIM_ADB_DEVICE_MAX_PAYLOAD;
        l->next_id = 1;
        l->streams = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)stream_free);
        l->peer = g_strdup_printf("127.0.0.1:%u", ntohs(sa.sin_port));
        l->io_events = SIM_IO_IN;
        l->io = sim_reactor_add(d->setup->reactor, fd, SIM_IO_IN, link_io, l);
        if (!l->io) {
            g_message("adb device %s: cannot watch a connection: %s", d->serial, g_strerror(errno));
            close(fd);
            link_free(l);
            continue;
        }
        g_ptr_array_add(d->links, l);
        g_debug("adb device %s: connection from %s", d->serial, l->peer);
    }
}

/* -------------------------------------------------------- pids and devices */

static void device_pids_changed(Device *d)
{
    guint i;

    for (i = 0; i < d->links->len; i++) {
        Link *l = g_ptr_array_index(d->links, i);
        GList *streams = g_hash_table_get_values(l->streams), *it;
        for (it = streams; it; it = it->next) {
            Stream *s = it->data;
            if ((s->kind == SVC_TRACK_JDWP || s->kind == SVC_TRACK_APP) && !s->closed) {
                s->dirty = TRUE;
                stream_pump(s);
            }
        }
        g_list_free(streams);
        if (l->closed) /* link_send may have closed it: the array shrank */
            i--;
    }
}

static void pid_watch(SimWorld *w, uint32_t pid, gboolean alive, void *ud)
{
    SimAdbSetup *s = ud;
    Device *d;
    guint i;

    (void)w;
    if (alive) {
        if (g_hash_table_contains(s->owner, GUINT_TO_POINTER(pid)))
            return;
        d = g_ptr_array_index(s->devices, s->deal++ % s->devices->len);
        g_hash_table_insert(s->owner, GUINT_TO_POINTER(pid), d);
        g_array_append_val(d->pids, pid);
    } else {
        d = g_hash_table_lookup(s->owner, GUINT_TO_POINTER(pid));
        if (!d)
            return;
        g_hash_table_remove(s->owner, GUINT_TO_POINTER(pid));
        for (i = 0; i < d->pids->len; i++)
            if (g_array_index(d->pids, uint32_t, i) == pid) {
                g_array_remove_index(d->pids, i);
                break;
            }
    }
    device_pids_changed(d);
}

/* Names change without pid events: let track-app streams re-check. */
static gboolean app_tick(gpointer data)
{
    SimAdbSetup *s = data;
    guint i;

    for (i = 0; i < s->devices->len; i++)
        device_pids_changed(g_ptr_array_index(s->devices, i));
    return G_SOURCE_CONTINUE;
}

static void add_prop(Device *d, GArray *props, const char *key, char *value /* transfer full */)
{
    SimAdbProp p;

    g_ptr_array_add(d->prop_strings, value);
    p.key = key;
    p.value = value;
    g_array_append_val(props, p);
}

static void device_make_props(Device *d, int sdk)
{
    static const char *const releases[] = { "4.4", "5.0", "5.1", "6.0", "7.0", "7.1", "8.0", "8.1", "9",
                                            "10",  "11",  "12",  "12",  "13",  "14",  "15",  "16" };
    GArray *props = g_array_new(TRUE, TRUE, sizeof(SimAdbProp));
    const char *release = sdk >= 19 && sdk - 19 < (int)G_N_ELEMENTS(releases) ? releases[sdk - 19] : "11";

    add_prop(d, props, "dalvik.vm.heapsize", g_strdup("512m"));
    add_prop(d, props, "ro.build.characteristics", g_strdup("emulator"));
    add_prop(d, props, "ro.build.id", g_strdup("DDMSIM.1"));
    add_prop(d, props, "ro.build.type", g_strdup("userdebug"));
    add_prop(d, props, "ro.build.version.release", g_strdup(release));
    add_prop(d, props, "ro.build.version.sdk", g_strdup_printf("%d", sdk));
    add_prop(d, props, "ro.debuggable", g_strdup("1"));
    add_prop(d, props, "ro.kernel.qemu", g_strdup("0"));
    add_prop(d, props, "ro.product.cpu.abi", g_strdup("x86_64"));
    add_prop(d, props, "ro.product.cpu.abilist", g_strdup("x86_64,x86"));
    add_prop(d, props, "ro.product.device", g_strdup("simvm"));
    add_prop(d, props, "ro.product.manufacturer", g_strdup("ddmon"));
    add_prop(d, props, "ro.product.model", g_strdup("ddmon-simvm"));
    add_prop(d, props, "ro.product.name", g_strdup("ddmonsim"));
    add_prop(d, props, "ro.secure", g_strdup("0"));
    add_prop(d, props, "ro.serialno", g_strdup(d->serial));
    d->props = (SimAdbProp *)(void *)g_array_free(props, FALSE);
    /* no feature is needed by adb 29 (no shell_v2: it then asks plain shell:);
     * track_app tells newer clients that track-app is served (API 31+) */
    d->banner = g_strdup_printf("device::ro.product.name=ddmonsim;ro.product.model=ddmon-simvm;"
                                "ro.product.device=simvm;features=%s",
                                sdk >= 31 ? "track_app" : "");
}

static gboolean device_listen(Device *d, GError **error)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "socket: %s", g_strerror(errno));
        return FALSE;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)d->want_port);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "adb device on 127.0.0.1:%d: %s", d->want_port,
                    g_strerror(e));
        return FALSE;
    }
    d->listen_io = sim_reactor_add(d->setup->reactor, fd, SIM_IO_IN, listener_io, d);
    if (!d->listen_io) {
        int e = errno;
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "epoll: %s", g_strerror(e));
        return FALSE;
    }
    d->listen_fd = fd;
    d->port = ntohs(sa.sin_port);
    return TRUE;
}

static void device_free(Device *d)
{
    while (d->links->len)
        link_close(g_ptr_array_index(d->links, 0), "shutting down");
    if (d->listen_io)
        sim_reactor_remove(d->setup->reactor, d->listen_io);
    if (d->listen_fd >= 0)
        close(d->listen_fd);
    g_ptr_array_free(d->links, TRUE);
    g_array_free(d->pids, TRUE);
    g_free(d->props);
    g_ptr_array_free(d->prop_strings, TRUE);
    g_free(d->banner);
    g_free(d->serial);
    g_free(d);
}

/* ------------------------------------------------------------------ setup */

SimAdbSetup *sim_adb_setup_new(void)
{
    SimAdbSetup *s = g_new0(SimAdbSetup, 1);

    s->sdk = 30;
    s->devices = g_ptr_array_new_with_free_func((GDestroyNotify)device_free);
    s->owner = g_hash_table_new(NULL, NULL);
    s->dead_links = g_ptr_array_new_with_free_func((GDestroyNotify)link_free);
    s->dead_streams = g_ptr_array_new_with_free_func((GDestroyNotify)stream_free);
    return s;
}

void sim_adb_setup_add_device(SimAdbSetup *s, int port, const char *serial)
{
    Device *d = g_new0(Device, 1);

    d->setup = s;
    d->index = s->devices->len;
    d->want_port = port;
    d->serial = serial ? g_strdup(serial) : NULL;
    d->listen_fd = -1;
    d->pids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->links = g_ptr_array_new();
    d->prop_strings = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(s->devices, d);
}

void sim_adb_setup_set_sdk(SimAdbSetup *s, int sdk)
{
    s->sdk = sdk;
}

static gboolean parse_options_into_devices(SimAdbSetup *s, GError **error)
{
    guint i, n = s->opt_ports ? g_strv_length(s->opt_ports) : 0;
    guint n_serials = s->opt_serials ? g_strv_length(s->opt_serials) : 0;

    if (n_serials > n) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--serial given %u times for %u --adb-device",
                    n_serials, n);
        return FALSE;
    }
    if (s->sdk < 1 || s->sdk > 99) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--adb-sdk must be between 1 and 99");
        return FALSE;
    }
    for (i = 0; i < n; i++) {
        char *end = NULL;
        long port = strtol(s->opt_ports[i], &end, 10);
        if (!*s->opt_ports[i] || *end || port < 0 || port > 65535) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--adb-device: bad port '%s'",
                        s->opt_ports[i]);
            return FALSE;
        }
        sim_adb_setup_add_device(s, (int)port, i < n_serials ? s->opt_serials[i] : NULL);
    }
    g_clear_pointer(&s->opt_ports, g_strfreev);
    g_clear_pointer(&s->opt_serials, g_strfreev);
    return TRUE;
}

GOptionGroup *sim_adb_option_group(SimAdbSetup *s)
{
    GOptionEntry entries[] = {
        { "adb-device", 0, 0, G_OPTION_ARG_STRING_ARRAY, &s->opt_ports,
          "Play an Android device for `adb connect 127.0.0.1:PORT` (repeatable: VMs are dealt round-robin "
          "to the devices; avoid 5555-5585, which adb probes as emulators; 0 = any port)",
          "PORT" },
        { "serial", 0, 0, G_OPTION_ARG_STRING_ARRAY, &s->opt_serials,
          "ro.serialno of the device from the matching --adb-device (repeatable)", "NAME" },
        { "adb-sdk", 0, 0, G_OPTION_ARG_INT, &s->sdk, "API level the devices report (default 30; 31+ adds track-app)", "N" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionGroup *g = g_option_group_new("adb", "Simulated Android device options:",
                                         "Show the simulated Android device options", NULL, NULL);

    g_option_group_add_entries(g, entries);
    return g;
}

gboolean sim_adb_setup_start(SimAdbSetup *s, SimWorld *w, GError **error)
{
    GArray *pids;
    guint i;

    g_return_val_if_fail(s->world == NULL, FALSE);
    if (!parse_options_into_devices(s, error))
        return FALSE;
    if (s->devices->len == 0)
        return TRUE;
    s->world = w;
    s->reactor = sim_reactor_new(g_main_context_get_thread_default());
    if (!s->reactor) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "epoll: %s", g_strerror(errno));
        return FALSE;
    }
    for (i = 0; i < s->devices->len; i++) {
        Device *d = g_ptr_array_index(s->devices, i);
        if (!d->serial)
            d->serial = g_strdup_printf("ddmonsim%u", i + 1);
        device_make_props(d, s->sdk);
        if (!device_listen(d, error))
            return FALSE;
        g_message("adb device %s listening on 127.0.0.1:%u (adb connect 127.0.0.1:%u)", d->serial, d->port,
                  d->port);
    }
    pids = sim_world_list_pids(w);
    for (i = 0; i < pids->len; i++)
        pid_watch(w, g_array_index(pids, uint32_t, i), TRUE, s);
    g_array_unref(pids);
    s->watch_id = sim_world_watch_pids(w, pid_watch, s);
    if (s->sdk >= 31)
        s->app_timer = g_timeout_add(1000, app_tick, s);
    return TRUE;
}

guint sim_adb_setup_n_devices(const SimAdbSetup *s)
{
    return s->devices->len;
}

uint16_t sim_adb_setup_device_port(const SimAdbSetup *s, guint i)
{
    g_return_val_if_fail(i < s->devices->len, 0);
    return ((Device *)g_ptr_array_index(s->devices, i))->port;
}

void sim_adb_setup_free(SimAdbSetup *s)
{
    if (!s)
        return;
    if (s->watch_id)
        sim_world_unwatch_pids(s->world, s->watch_id);
    if (s->app_timer)
        g_source_remove(s->app_timer);
    g_ptr_array_free(s->devices, TRUE);
    if (s->reap_source)
        g_source_remove(s->reap_source);
    g_ptr_array_free(s->dead_streams, TRUE);
    g_ptr_array_free(s->dead_links, TRUE);
    g_hash_table_destroy(s->owner);
    sim_reactor_free(s->reactor);
    g_strfreev(s->opt_ports);
    g_strfreev(s->opt_serials);
    g_free(s);
}
