/* SPDX-License-Identifier: Apache-2.0
 *
 * The debugger relay (relay.h). Three objects:
 *  - Endpoint: a listening socket (a VM's 86xx port, the selected port, or a
 *    fixed port of a --connect target);
 *  - Debugger: one accepted connection: handshake, reader, write queue;
 *  - RelayVm (vm->relay): the relay's state for one VM connection: its
 *    debugger, the id map, the packets kept for the first debugger.
 * Invariants: a Debugger is attached to at most one RelayVm and a RelayVm
 * has at most one Debugger; every buffer is capped (reader: max_packet;
 * write queue: max_write_queue; early packets: EARLY_CAP); nothing a VM
 * sends after a debugger left reaches the next debugger.
 */
#define _GNU_SOURCE 1 /* accept4 */
#include "core/relay/relay.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/relay/idmap.h"
#include "core/wire/ddm.h"
#include "core/session/monitor.h"

#define EARLY_CAP (1u << 20)          /* VM traffic kept for the first debugger */
#define HOLD_MS 10000                 /* a debugger waits this long for a fixed target */
#define PARK_MS 10000                 /* a VM port stays open this long while the VM reconnects */
#define DBGD_TIMEOUT_MS 1000
#define MAX_MAPPED 65536              /* outstanding debugger commands per VM */
#define READ_CHUNK (64u * 1024u)
#define TO_VM_BATCH (64u * 1024u)     /* debugger packets gathered into one write to the VM */
#define FLUSH_AT (64u * 1024u)        /* VM packets queued for a debugger: write now from here */
/* Backpressure: once this much waits for a slow side (the debugger, or the
 * VM), ddmon stops reading from the other side until it has all been
 * written, as the kernel would on a direct connection. Far below
 * max_write_queue, which only catches what ddmon itself adds. */
#define BACKPRESSURE_AT (2u << 20)


typedef enum { EP_VM, EP_SELECTED, EP_FIXED } EndpointKind;

typedef struct Endpoint Endpoint;
typedef struct Debugger Debugger;
typedef struct RelayVm RelayVm;

struct Endpoint {
    DdmRelay *relay;
    EndpointKind kind;
    guint16 port;
    int fd;
    guint watch;
    char *key;          /* EP_VM / EP_FIXED: the VM key it reaches */
    guint park_timer;   /* EP_VM parked: closes the port if the VM does not come back */
};

typedef enum { DBG_HANDSHAKE, DBG_HELD, DBG_ATTACHED, DBG_CLOSED } DebuggerState;

struct Debugger {
    DdmRelay *relay;
    Endpoint *endpoint;       /* borrowed; NULL once the endpoint closed */
    guint16 port;
    int fd;
    guint in_watch, out_watch;
    guint flush_idle;         /* writes what VM packets queued during this main-loop round */
    GByteArray *to_vm;        /* packets read from the debugger, ids mapped, not yet sent */
    DebuggerState state;
    DdmJdwpReader *reader;
    GByteArray *out;
    gsize out_pos;
    RelayVm *rvm;             /* when attached */
    char *held_key;           /* when held: the VM key awaited, or NULL for the selection */
    guint hold_timer;
    gboolean sent_dispose;
    gboolean reading_paused;  /* not reading from the debugger: its VM's queue is full */
    gboolean vm_paused;       /* the VM's input paused: this debugger's queue is full */
    char *peer;
};

struct RelayVm {
    DdmVm *vm;                /* borrowed: lives while the VM does */
    Debugger *debugger;
    DdmIdMap *ids;
    GQueue early;             /* GBytes* packets kept for the first debugger */
    gsize early_bytes;
    gboolean had_debugger;    /* a debugger attached on this connection */
    gboolean early_overflow_logged;
    Endpoint *endpoint;       /* its dynamic port (EP_VM), or NULL */
    gboolean reconnect;       /* the relay wants this connection reopened */
    gboolean leaving;         /* a debugger left: this connection is being cleaned up
                                 (DBGD pending, or Dispose sent and the VM about to close
                                 it); a new debugger waits for the outcome */
};

struct DdmRelay {
    DdmMonitor *mon;
    GHashTable *endpoints;    /* port -> Endpoint* */
    GHashTable *port_by_key;  /* key -> port (remembered) */
    GHashTable *port_by_app;  /* app name -> port (remembered) */
    GHashTable *fixed_by_key; /* key -> Endpoint* of --connect targets */
    GHashTable *parked;       /* key -> Endpoint*: a VM port kept open while its VM reconnects */
    GPtrArray *debuggers;     /* Debugger* alive */
    GPtrArray *dead;          /* Debugger* closed, freed from an idle (callers may still look) */
    guint reap_idle;
    Endpoint *selected;
    char *selection;
    gboolean shutting_down;   /* no cleanup requests to VMs while freeing */
};

static void debugger_close(Debugger *d, const char *why);
static void debugger_flush(Debugger *d);
static void debugger_drain(Debugger *d);
static void debugger_to_vm_flush(Debugger *d);
static gboolean on_debugger_in(gint fd, GIOCondition cond, gpointer ud);

/* ------------------------------------------------------------ helpers */

static const char *vm_label(DdmVm *vm)
{
    return vm->info.key ? vm->info.key : "?";
}

static void tune_socket(int fd)
{
    ddm_socket_tune(fd);
}

static int listen_on(const char *host, guint16 port, GError **error)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    int family;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        family = AF_INET;
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        len = sizeof(*in4);
    } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        family = AF_INET6;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        len = sizeof(*in6);
    } else {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "listen address '%s' is not a numeric IPv4 or IPv6 address", host);
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "socket: %s", g_strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0) {
        int e = errno;
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s:%u: %s", host, port, g_strerror(e));
        return -1;
    }
    return fd;
}

/* ------------------------------------------------------------ RelayVm */

static RelayVm *rvm_get(DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (!r) {
        r = g_new0(RelayVm, 1);
        r->vm = vm;
        r->ids = ddm_idmap_new(MAX_MAPPED);
        g_queue_init(&r->early);
        vm->relay = r;
    }
    return r;
}

static void rvm_clear_early(RelayVm *r)
{
    GBytes *b;
    while ((b = g_queue_pop_head(&r->early)))
        g_bytes_unref(b);
    r->early_bytes = 0;
}

/* ------------------------------------------------------------ endpoints */

static gboolean on_accept(gint fd, GIOCondition cond, gpointer ud);

static Endpoint *endpoint_open(DdmRelay *relay, EndpointKind kind, guint16 port, const char *key,
                               GError **error)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    int fd = listen_on(cfg->listen_host ? cfg->listen_host : "127.0.0.1", port, error);
    if (fd < 0)
        return NULL;
    Endpoint *ep = g_new0(Endpoint, 1);
    ep->relay = relay;
    ep->kind = kind;
    ep->port = port;
    ep->fd = fd;
    ep->key = g_strdup(key);
    ep->watch = g_unix_fd_add(fd, G_IO_IN, on_accept, ep);
    g_hash_table_insert(relay->endpoints, GUINT_TO_POINTER((guint)port), ep);
    return ep;
}

static void endpoint_close(Endpoint *ep)
{
    DdmRelay *relay = ep->relay;
    for (guint i = 0; i < relay->debuggers->len; i++) {
        Debugger *d = relay->debuggers->pdata[i];
        if (d->endpoint == ep)
            d->endpoint = NULL;
    }
    g_hash_table_remove(relay->endpoints, GUINT_TO_POINTER((guint)ep->port));
    if (ep->park_timer) {
        g_source_remove(ep->park_timer);
        g_hash_table_remove(relay->parked, ep->key);
    }
    if (ep->watch)
        g_source_remove(ep->watch);
    close(ep->fd);
    g_free(ep->key);
    g_free(ep);
}

static gboolean port_reserved(DdmRelay *relay, guint16 port)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    return g_hash_table_contains(relay->endpoints, GUINT_TO_POINTER((guint)port)) ||
           (cfg->selected_port && port == cfg->selected_port);
}

/* Remembered for someone else (another key that is not up now)? */
static gboolean port_remembered_by_other(DdmRelay *relay, guint16 port, const char *key)
{
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, relay->port_by_key);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (GPOINTER_TO_UINT(v) == port && strcmp(k, key) != 0)
            return TRUE;
    return FALSE;
}

static Endpoint *open_vm_port(DdmRelay *relay, DdmVm *vm)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    const char *key = vm->info.key;
    guint16 want[2] = {0, 0};
    want[0] = (guint16)GPOINTER_TO_UINT(g_hash_table_lookup(relay->port_by_key, key));
    if (vm->info.app_name && *vm->info.app_name)
        want[1] = (guint16)GPOINTER_TO_UINT(g_hash_table_lookup(relay->port_by_app, vm->info.app_name));
    for (int i = 0; i < 2; i++) {
        if (want[i] && !port_reserved(relay, want[i])) {
            Endpoint *ep = endpoint_open(relay, EP_VM, want[i], key, NULL);
            if (ep)
                return ep;
        }
    }
    /* Lowest free port from the base; skip ports other VMs of other apps
     * still "own" while any other is free, so they can get them back. */
    for (int pass = 0; pass < 2; pass++) {
        for (guint p = cfg->debug_port_base; p <= 65535 && p < (guint)cfg->debug_port_base + 4096u; p++) {
            if (port_reserved(relay, (guint16)p))
                continue;
            if (pass == 0 && port_remembered_by_other(relay, (guint16)p, key))
                continue;
            Endpoint *ep = endpoint_open(relay, EP_VM, (guint16)p, key, NULL);
            if (ep)
                return ep;
        }
    }
    g_warning("relay: no free debugger port for VM %s from %u", key, cfg->debug_port_base);
    return NULL;
}

/* ------------------------------------------------------------ attach */

static DdmVm *selected_vm(DdmRelay *relay)
{
    if (!relay->selection || !*relay->selection)
        return NULL;
    /* An app name may match several VMs (two devices, or an old instance
     * not gone yet): the selection reaches the one that came last. */
    return ddm_monitor_resolve_vm_newest(relay->mon, relay->selection, NULL);
}

static gboolean vm_attachable(DdmVm *vm)
{
    RelayVm *r = vm ? vm->relay : NULL;
    return vm && (vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN ||
                  vm->state == DDM_VM_STATE_HELO) &&
           !(r && r->leaving);
}

static void attach(Debugger *d, DdmVm *vm)
{
    RelayVm *r = rvm_get(vm);
    if (r->debugger) {
        g_message("relay: VM %s already has a debugger (port %u); a second debugger on port %u "
                  "is refused (one debugger per VM)", vm_label(vm),
                  r->debugger->port, d->port);
        debugger_close(d, NULL);
        return;
    }
    if (d->hold_timer) {
        g_source_remove(d->hold_timer);
        d->hold_timer = 0;
    }
    g_clear_pointer(&d->held_key, g_free);
    d->state = DBG_ATTACHED;
    d->rvm = r;
    r->debugger = d;
    if (!d->in_watch) /* it was held: read again */
        d->in_watch = ddm_read_watch_add(d->fd, G_IO_IN, on_debugger_in, d);
    /* Echo the handshake; the VM already had ours and never sees a second. */
    g_byte_array_append(d->out, (const guint8 *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    if (!r->had_debugger) {
        GBytes *b;
        while ((b = g_queue_pop_head(&r->early))) {
            gsize n;
            const guint8 *p = g_bytes_get_data(b, &n);
            g_byte_array_append(d->out, p, (guint)n);
            g_bytes_unref(b);
        }
        r->early_bytes = 0;
    }
    r->had_debugger = TRUE;
    g_message("relay: debugger %s attached to VM %s (pid %u%s%s) on port %u", d->peer, vm_label(vm),
              vm->info.pid, vm->info.app_name ? ", " : "", vm->info.app_name ? vm->info.app_name : "",
              d->port);
    vm->info.debugger = 1;
    ddm_monitor_vm_identity_changed(d->relay->mon, vm);
    if (d->state != DBG_ATTACHED)
        return;
    debugger_flush(d);
    /* Packets the debugger pipelined behind its handshake go now. */
    if (d->state == DBG_ATTACHED)
        debugger_drain(d);
}

static gboolean on_hold_timeout(gpointer ud)
{
    Debugger *d = ud;
    d->hold_timer = 0;
    g_message("relay: debugger on port %u waited %d ms for VM %s, which did not come up; closing",
              d->port, HOLD_MS, d->held_key ? d->held_key : d->relay->selection ? d->relay->selection : "?");
    debugger_close(d, NULL);
    return G_SOURCE_REMOVE;
}

/* Handshake done: find the VM this port reaches. */
static void route(Debugger *d)
{
    DdmRelay *relay = d->relay;
    Endpoint *ep = d->endpoint;
    if (!ep) {
        debugger_close(d, "its port closed");
        return;
    }
    DdmVm *vm = NULL;
    switch (ep->kind) {
    case EP_VM:   /* parked while its VM reconnects: wait for it like a fixed port */
    case EP_FIXED:
        vm = ddm_monitor_find_vm(relay->mon, ep->key);
        if (!vm_attachable(vm)) {
            d->state = DBG_HELD;
            d->held_key = g_strdup(ep->key);
            d->hold_timer = g_timeout_add(HOLD_MS, on_hold_timeout, d);
            g_message("relay: debugger on port %u is held until VM %s is up (at most %d ms)", d->port,
                      ep->key, HOLD_MS);
            ddm_monitor_retry_fast(relay->mon, ep->key);
            return;
        }
        break;
    case EP_SELECTED:
        if (!relay->selection) {
            g_message("relay: debugger on the selected-VM port %u: no VM is selected (select one "
                      "with 'ddmon select PID|APP' or --select); closing", d->port);
            debugger_close(d, NULL);
            return;
        }
        vm = selected_vm(relay);
        if (!vm_attachable(vm)) {
            /* The selected app may be restarting or reconnecting: wait for it. */
            d->state = DBG_HELD;
            d->hold_timer = g_timeout_add(HOLD_MS, on_hold_timeout, d);
            g_message("relay: debugger on the selected-VM port %u is held until a VM matching "
                      "'%s' is up (at most %d ms)", d->port, relay->selection, HOLD_MS);
            if (vm)
                ddm_monitor_retry_fast(relay->mon, vm->info.key);
            return;
        }
        break;
    }
    if (!vm_attachable(vm)) {
        debugger_close(d, "its VM is not connected");
        return;
    }
    attach(d, vm);
}

/* ------------------------------------------------------------ debugger I/O */

static gboolean on_debugger_out(gint fd, GIOCondition cond, gpointer ud);

/* Backpressure from the debugger to its VM (BACKPRESSURE_AT). */
static void set_vm_paused(Debugger *d, gboolean paused)
{
    d->vm_paused = paused;
    if (d->rvm && ddm_vm_is_valid(d->rvm->vm)) {
        g_debug("relay: debugger %s reads %s; %s reading from VM %s", d->peer,
                paused ? "slowly" : "again", paused ? "pausing" : "resuming", vm_label(d->rvm->vm));
        ddm_vm_pause_input(d->rvm->vm, paused);
    }
}

static void debugger_flush(Debugger *d)
{
    while (d->out_pos < d->out->len) {
        ssize_t n = write(d->fd, d->out->data + d->out_pos, d->out->len - d->out_pos);
        if (n > 0) {
            d->out_pos += (gsize)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!d->out_watch)
                d->out_watch = g_unix_fd_add(d->fd, G_IO_OUT, on_debugger_out, d);
            return;
        }
        debugger_close(d, n < 0 ? g_strerror(errno) : "write failed");
        return;
    }
    g_byte_array_set_size(d->out, 0);
    d->out_pos = 0;
    if (d->out_watch) {
        g_source_remove(d->out_watch);
        d->out_watch = 0;
    }
    if (d->vm_paused)
        set_vm_paused(d, FALSE);
}

static gboolean on_debugger_out(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    d->out_watch = 0;
    debugger_flush(d);
    return G_SOURCE_REMOVE;
}

static gboolean on_flush_idle(gpointer ud)
{
    Debugger *d = ud;
    d->flush_idle = 0;
    debugger_flush(d);
    return G_SOURCE_REMOVE;
}

/* Queue bytes for the debugger; FALSE (and the debugger closed) past the cap.
 * The write happens once per main-loop round (a high-priority idle runs right
 * after the VM's read batch), so a burst of packets costs one write. */
static gboolean debugger_queue(Debugger *d, const guint8 *p, gsize n, gboolean set_id, uint32_t id)
{
    const DdmConfig *cfg = ddm_monitor_config(d->relay->mon);
    if (d->out->len - d->out_pos + n > cfg->max_write_queue) {
        debugger_close(d, "it reads too slowly (write queue full)");
        return FALSE;
    }
    if (d->out_pos > 0 && d->out_pos == d->out->len) {
        g_byte_array_set_size(d->out, 0);
        d->out_pos = 0;
    }
    gsize at = d->out->len;
    g_byte_array_append(d->out, p, (guint)n);
    if (set_id)
        ddm_jdwp_set_id(d->out->data + at, id);
    if (!d->out_watch) {
        if (d->out->len - d->out_pos >= FLUSH_AT) /* a big burst streams on */
            debugger_flush(d);
        else if (!d->flush_idle)
            d->flush_idle = g_idle_add_full(G_PRIORITY_HIGH, on_flush_idle, d, NULL);
    }
    /* The debugger's socket is full and much waits: stop reading from the
     * VM until the queue is empty (debugger_flush resumes it). */
    if (d->state == DBG_ATTACHED && d->out_watch && !d->vm_paused &&
        d->out->len - d->out_pos >= BACKPRESSURE_AT)
        set_vm_paused(d, TRUE);
    return TRUE;
}

static gboolean debugger_send(Debugger *d, const guint8 *p, gsize n)
{
    return debugger_queue(d, p, n, FALSE, 0);
}

/* One packet from the debugger, going to its VM. */
static void debugger_packet(Debugger *d, const DdmJdwpPacket *pkt)
{
    RelayVm *r = d->rvm;
    DdmVm *vm = r->vm;
    if (!ddm_jdwp_is_reply(&pkt->header) && pkt->header.cmdset >= 128 &&
        vm->state == DDM_VM_STATE_PLAIN) {
        /* A vendor command set can crash OpenJDK's agent (JDK-8382537): a
         * VM known not to be Dalvik/ART never gets one. Answer what a
         * healthy JVM answers, NOT_IMPLEMENTED (after sending what was
         * gathered before it, so commands reach the VM in order). */
        gsize n;
        g_autofree guint8 *reply = ddm_jdwp_build_reply(pkt->header.id, DDM_JDWP_ERROR_NOT_IMPLEMENTED,
                                                        NULL, 0, &n);
        g_debug("relay: command set %u from the debugger of plain JVM %s answered by ddmon",
                pkt->header.cmdset, vm_label(vm));
        debugger_to_vm_flush(d);
        debugger_send(d, reply, n);
        return;
    }
    guint at = d->to_vm->len;
    g_byte_array_append(d->to_vm, pkt->bytes, (guint)pkt->len);
    if (!ddm_jdwp_is_reply(&pkt->header)) {
        uint32_t vm_id;
        if (!ddm_idmap_map(r->ids, d, pkt->header.id, &vm_id)) {
            g_byte_array_set_size(d->to_vm, at);
            debugger_to_vm_flush(d);
            debugger_close(d, "too many commands in flight");
            return;
        }
        ddm_jdwp_set_id(d->to_vm->data + at, vm_id);
        if (pkt->header.cmdset == DDM_JDWP_CMDSET_VM && pkt->header.cmd == DDM_JDWP_CMD_VM_DISPOSE)
            d->sent_dispose = TRUE;
    }
    if (d->to_vm->len >= TO_VM_BATCH)
        debugger_to_vm_flush(d);
}

/* One write to the VM for the packets gathered from one read. */
static void debugger_to_vm_flush(Debugger *d)
{
    if (!d->to_vm->len)
        return;
    if (d->rvm) {
        DdmVm *vm = d->rvm->vm;
        int rc = ddm_vm_send_packet(vm, d->to_vm->data, d->to_vm->len);
        if (rc < 0)
            g_message("relay: VM %s cannot take the debugger's packets (%s)", vm_label(vm), g_strerror(-rc));
    }
    if (d->to_vm->len > 4 * TO_VM_BATCH) { /* do not keep a big packet's buffer */
        g_byte_array_unref(d->to_vm);
        d->to_vm = g_byte_array_new();
    } else {
        g_byte_array_set_size(d->to_vm, 0);
    }
}

/* Handle what the reader holds. Stops while the debugger is held (its
 * packets wait in the reader until it attaches) or once it is closed. */
static void debugger_drain(Debugger *d)
{
    while (d->state == DBG_HANDSHAKE || d->state == DBG_ATTACHED) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res = ddm_jdwp_reader_next(d->reader, &pkt);
        if (res == DDM_JDWP_NEED_MORE)
            break;
        if (res == DDM_JDWP_HANDSHAKE_OK && d->state == DBG_HANDSHAKE) {
            route(d);
            continue;
        }
        if (res == DDM_JDWP_PACKET && d->state == DBG_ATTACHED) {
            debugger_packet(d, &pkt);
            continue;
        }
        g_autofree char *why = g_strdup_printf("protocol error: %s",
                                               res == DDM_JDWP_DISCARDED ? "a packet before the handshake"
                                                                        : ddm_jdwp_result_str(res));
        debugger_to_vm_flush(d);
        debugger_close(d, why);
    }
    debugger_to_vm_flush(d);
}

static gboolean on_debugger_in(gint fd, GIOCondition cond, gpointer ud)
{
    Debugger *d = ud;
    for (int rounds = 0; rounds < 16 && (d->state == DBG_HANDSHAKE || d->state == DBG_ATTACHED);
         rounds++) {
        size_t avail;
        uint8_t *space = ddm_jdwp_reader_space(d->reader, READ_CHUNK, &avail);
        ssize_t n = read(d->fd, space, avail);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            d->in_watch = 0; /* removed by returning G_SOURCE_REMOVE */
            debugger_close(d, n == 0 ? (d->state == DBG_HANDSHAKE ? "closed before the handshake" : NULL)
                                     : g_strerror(errno));
            return G_SOURCE_REMOVE;
        }
        ddm_jdwp_reader_commit(d->reader, (size_t)n);
        debugger_drain(d);
        if (d->state == DBG_ATTACHED && ddm_vm_out_queued(d->rvm->vm) >= BACKPRESSURE_AT &&
            ddm_vm_notify_when_drained(d->rvm->vm)) {
            /* The VM takes less than the debugger sends: read on once all
             * of it is written (ddm_relay_vm_output_drained). */
            g_debug("relay: VM %s reads slowly; pausing reading from debugger %s",
                    vm_label(d->rvm->vm), d->peer);
            d->reading_paused = TRUE;
            d->in_watch = 0;
            return G_SOURCE_REMOVE;
        }
        if ((size_t)n < avail)
            break; /* the socket is empty for now: no read just to see EAGAIN */
    }
    if (d->state == DBG_CLOSED || d->state == DBG_HELD) {
        /* Held: read nothing more until attached (attach() watches again),
         * so a held debugger cannot make ddmon buffer what it sends. */
        d->in_watch = 0;
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_accept(gint fd, GIOCondition cond, gpointer ud)
{
    Endpoint *ep = ud;
    DdmRelay *relay = ep->relay;
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                g_warning("relay: accept on port %u: %s", ep->port, g_strerror(errno));
            break;
        }
        tune_socket(c);
        Debugger *d = g_new0(Debugger, 1);
        d->relay = relay;
        d->endpoint = ep;
        d->port = ep->port;
        d->fd = c;
        d->state = DBG_HANDSHAKE;
        d->reader = ddm_jdwp_reader_new(ddm_monitor_config(relay->mon)->max_packet);
        ddm_jdwp_reader_expect_handshake(d->reader);
        d->out = g_byte_array_new();
        d->to_vm = g_byte_array_new();
        char host[INET6_ADDRSTRLEN] = "?";
        guint16 peer_port = 0;
        if (ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
            peer_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
            peer_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        }
        d->peer = g_strdup_printf("%s:%u", host, peer_port);
        g_ptr_array_add(relay->debuggers, d);
        d->in_watch = ddm_read_watch_add(c, G_IO_IN, on_debugger_in, d);
        g_debug("relay: connection from %s on port %u", d->peer, ep->port);
    }
    return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------ debugger leaves */

static void release_held(DdmRelay *relay, DdmVm *vm);

static void on_dbgd_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    if (!ddm_vm_is_valid(vm) || vm->state == DDM_VM_STATE_CLOSED)
        return;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_DBGD) {
        g_message("relay: VM %s acknowledged DBGD; keeping its connection", vm_label(vm));
        RelayVm *r = vm->relay;
        if (r) {
            r->leaving = FALSE;
            r->reconnect = FALSE;
            release_held(ud, vm); /* a debugger that came meanwhile (ud: the relay) */
        }
        return;
    }
    /* Real VMs never implemented DBGD: reopen the connection so the VM
     * releases every debugger resource, as Android's tools do. */
    g_message("relay: VM %s did not acknowledge DBGD; reopening its connection so it releases "
              "the debugger's state", vm_label(vm));
    RelayVm *r = rvm_get(vm);
    r->reconnect = TRUE;
    ddm_vm_close(vm, "reopened after the debugger left");
}

/* The debugger left (cleanly or not): make the VM go on as if none had come. */
static void after_debugger_left(RelayVm *r, Debugger *d)
{
    DdmVm *vm = r->vm;
    guint dropped = ddm_idmap_forget_client(r->ids, d);
    if (dropped)
        g_debug("relay: %u replies for the departed debugger will be dropped", dropped);
    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    r->reconnect = TRUE;
    /* Until the VM acknowledged DBGD, or closed this connection after
     * Dispose, a new debugger must not attach to it: it would be cut off
     * with it. It is held and attached to what comes next. */
    r->leaving = TRUE;
    if (vm->state == DDM_VM_STATE_READY) {
        int rc = ddm_vm_request(vm, NULL, DDM_CHUNK_DBGD, NULL, 0, DBGD_TIMEOUT_MS,
                                on_dbgd_reply, d->relay, NULL);
        if (rc < 0)
            ddm_vm_close(vm, "reopened after the debugger left");
        return;
    }
    /* Plain JVM: OpenJDK's agent resumes threads, clears event requests and
     * closes its side on VirtualMachine.Dispose; send it on the debugger's
     * behalf if it vanished without. The agent then listens again and the
     * monitor reconnects at once (ddm_relay_vm_closed returns TRUE). */
    if (!d->sent_dispose) {
        uint32_t id;
        if (ddm_idmap_reserve(r->ids, &id)) {
            gsize len;
            g_autofree guint8 *pkt = ddm_jdwp_build_command(id, DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_DISPOSE, NULL, 0, &len);
            g_message("relay: debugger of VM %s left without VirtualMachine.Dispose; sending it on "
                      "its behalf", vm_label(vm));
            if (ddm_vm_send_packet(vm, pkt, len) < 0)
                ddm_vm_close(vm, "reopened after the debugger left");
        }
    }
}

static void debugger_free(gpointer p)
{
    Debugger *d = p;
    ddm_jdwp_reader_free(d->reader);
    g_byte_array_unref(d->out);
    g_byte_array_unref(d->to_vm);
    g_free(d->held_key);
    g_free(d->peer);
    g_free(d);
}

static gboolean reap_dead(gpointer ud)
{
    DdmRelay *relay = ud;
    relay->reap_idle = 0;
    g_ptr_array_set_size(relay->dead, 0);
    return G_SOURCE_REMOVE;
}

static void debugger_close(Debugger *d, const char *why)
{
    if (d->state == DBG_CLOSED)
        return;
    DebuggerState old = d->state;
    d->state = DBG_CLOSED;
    if (why)
        g_message("relay: debugger %s on port %u closed: %s", d->peer, d->port, why);
    else if (old == DBG_ATTACHED)
        g_message("relay: debugger %s on port %u left", d->peer, d->port);
    if (d->in_watch)
        g_source_remove(d->in_watch);
    if (d->out_watch)
        g_source_remove(d->out_watch);
    if (d->hold_timer)
        g_source_remove(d->hold_timer);
    if (d->flush_idle)
        g_source_remove(d->flush_idle);
    d->in_watch = d->out_watch = d->hold_timer = d->flush_idle = 0;
    close(d->fd);
    if (d->vm_paused)
        set_vm_paused(d, FALSE); /* before the cleanup: DBGD's answer must be read */
    RelayVm *r = d->rvm;
    d->rvm = NULL;
    if (r && r->debugger == d) {
        r->debugger = NULL;
        if (ddm_vm_is_valid(r->vm))
            r->vm->info.debugger = 0;
        if (!d->relay->shutting_down) {
            after_debugger_left(r, d);
            if (ddm_vm_is_valid(r->vm) && r->vm->state != DDM_VM_STATE_CLOSED)
                ddm_monitor_vm_identity_changed(d->relay->mon, r->vm);
        }
    }
    DdmRelay *relay = d->relay;
    g_ptr_array_remove_fast(relay->debuggers, d);
    /* Freed from an idle: callers up the stack may still look at d->state. */
    g_ptr_array_add(relay->dead, d);
    if (!relay->reap_idle)
        relay->reap_idle = g_idle_add(reap_dead, relay);
}

/* ------------------------------------------------------------ public */

static gboolean parse_connect_port(const char *spec, char **key, guint16 *port)
{
    const char *eq = strrchr(spec, '=');
    if (!eq)
        return FALSE;
    guint64 v;
    if (!g_ascii_string_to_unsigned(eq + 1, 10, 1, 65535, &v, NULL))
        return FALSE;
    *key = g_strndup(spec, (gsize)(eq - spec));
    *port = (guint16)v;
    return TRUE;
}

DdmRelay *ddm_relay_new(DdmMonitor *mon, GError **error)
{
    const DdmConfig *cfg = ddm_monitor_config(mon);
    DdmRelay *relay = g_new0(DdmRelay, 1);
    relay->mon = mon;
    relay->endpoints = g_hash_table_new(g_direct_hash, g_direct_equal);
    relay->port_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->port_by_app = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->fixed_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->parked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->debuggers = g_ptr_array_new();
    relay->dead = g_ptr_array_new_with_free_func(debugger_free);
    relay->selection = g_strdup(cfg->select);
    if (cfg->selected_port) {
        GError *e = NULL;
        relay->selected = endpoint_open(relay, EP_SELECTED, cfg->selected_port, NULL, &e);
        if (!relay->selected) {
            g_warning("relay: could not open the selected-VM debugger port: %s", e->message);
            g_error_free(e);
        }
    }
    for (guint i = 0; cfg->connect && i < cfg->connect->len; i++) {
        char *key = NULL;
        guint16 port;
        if (!parse_connect_port(cfg->connect->pdata[i], &key, &port))
            continue;
        GError *e = NULL;
        Endpoint *ep = endpoint_open(relay, EP_FIXED, port, key, &e);
        if (ep) {
            g_hash_table_insert(relay->fixed_by_key, g_strdup(key), ep);
        } else {
            g_warning("relay: could not open debugger port for %s: %s", key, e->message);
            g_error_free(e);
        }
        g_free(key);
    }
    (void)error;
    return relay;
}

void ddm_relay_free(DdmRelay *relay)
{
    if (!relay)
        return;
    relay->shutting_down = TRUE;
    while (relay->debuggers->len)
        debugger_close(relay->debuggers->pdata[0], NULL);
    GList *eps = g_hash_table_get_values(relay->endpoints);
    for (GList *l = eps; l; l = l->next)
        endpoint_close(l->data);
    g_list_free(eps);
    g_hash_table_destroy(relay->endpoints);
    g_hash_table_destroy(relay->port_by_key);
    g_hash_table_destroy(relay->port_by_app);
    g_hash_table_destroy(relay->fixed_by_key);
    g_hash_table_destroy(relay->parked);
    g_ptr_array_unref(relay->debuggers);
    if (relay->reap_idle)
        g_source_remove(relay->reap_idle);
    g_ptr_array_unref(relay->dead);
    g_free(relay->selection);
    g_free(relay);
}

void ddm_relay_vm_up(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = rvm_get(vm);
    Endpoint *fixed = g_hash_table_lookup(relay->fixed_by_key, vm->info.key);
    Endpoint *parked = g_hash_table_lookup(relay->parked, vm->info.key);
    if (parked && !r->endpoint) {
        g_source_remove(parked->park_timer);
        parked->park_timer = 0;
        g_hash_table_remove(relay->parked, vm->info.key);
        r->endpoint = parked;
    }
    if (!fixed && !r->endpoint) {
        r->endpoint = open_vm_port(relay, vm);
        if (r->endpoint) {
            g_hash_table_replace(relay->port_by_key, g_strdup(vm->info.key),
                                 GUINT_TO_POINTER((guint)r->endpoint->port));
            g_debug("relay: VM %s debugger port %u", vm_label(vm), r->endpoint->port);
        }
    }
    ddm_relay_vm_changed(relay, vm);
}

/* Debuggers held for @vm (its fixed or parked port, or the selection that
 * now matches it) attach now. */
static void release_held(DdmRelay *relay, DdmVm *vm)
{
    if (!vm_attachable(vm) || vm->state == DDM_VM_STATE_HELO)
        return;
    gboolean selected = relay->selection && selected_vm(relay) == vm;
    for (guint i = 0; i < relay->debuggers->len;) {
        Debugger *d = relay->debuggers->pdata[i];
        gboolean mine = d->state == DBG_HELD &&
                        (d->held_key ? strcmp(d->held_key, vm->info.key) == 0 : selected);
        if (mine)
            attach(d, vm); /* removes d from the list only if it closes */
        if (i < relay->debuggers->len && relay->debuggers->pdata[i] == d)
            i++;
    }
}

void ddm_relay_vm_changed(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    const char *app = vm->info.app_name;
    gboolean named = app && *app && strcmp(app, "<pre-initialized>") != 0;
    if (named && r && r->endpoint && r->endpoint->kind == EP_VM && !r->debugger) {
        /* Android apps start as "<pre-initialized>" and learn their name
         * later (APNM): move to the port this app had before, if free, so
         * IDE run configurations keep working across restarts. */
        guint16 want = (guint16)GPOINTER_TO_UINT(g_hash_table_lookup(relay->port_by_app, app));
        if (want && want != r->endpoint->port && !port_reserved(relay, want)) {
            Endpoint *ep = endpoint_open(relay, EP_VM, want, vm->info.key, NULL);
            if (ep) {
                g_message("relay: VM %s is %s again: back on its debugger port %u (was %u)",
                          vm_label(vm), app, want, r->endpoint->port);
                endpoint_close(r->endpoint);
                r->endpoint = ep;
                g_hash_table_replace(relay->port_by_key, g_strdup(vm->info.key),
                                     GUINT_TO_POINTER((guint)want));
            }
        }
    }
    guint16 port = r && r->endpoint ? r->endpoint->port : 0;
    if (port && named)
        g_hash_table_replace(relay->port_by_app, g_strdup(app), GUINT_TO_POINTER((guint)port));
    release_held(relay, vm);
}

static gboolean on_park_timeout(gpointer ud)
{
    Endpoint *ep = ud;
    ep->park_timer = 0;
    g_hash_table_remove(ep->relay->parked, ep->key);
    g_message("relay: VM %s did not come back; freeing its debugger port %u", ep->key, ep->port);
    endpoint_close(ep);
    return G_SOURCE_REMOVE;
}

/* Keep a VM's port open while the VM reconnects (after a debugger session),
 * so the next debugger finds the same port and waits for the VM. */
static void park(DdmRelay *relay, Endpoint *ep)
{
    g_hash_table_replace(relay->parked, g_strdup(ep->key), ep);
    ep->park_timer = g_timeout_add(PARK_MS, on_park_timeout, ep);
}

gboolean ddm_relay_vm_closed(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (!r)
        return FALSE;
    gboolean reconnect = r->reconnect || r->had_debugger;
    if (r->debugger) {
        Debugger *d = r->debugger;
        g_message("relay: VM %s went away; closing its debugger's connection", vm_label(vm));
        r->debugger = NULL;
        d->rvm = NULL;
        debugger_close(d, NULL);
        reconnect = TRUE;
    }
    if (r->endpoint) {
        if (reconnect && !relay->shutting_down)
            park(relay, r->endpoint);
        else
            endpoint_close(r->endpoint);
    }
    rvm_clear_early(r);
    ddm_idmap_free(r->ids);
    g_free(r);
    vm->relay = NULL;
    return reconnect;
}

void ddm_relay_command_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    RelayVm *r = rvm_get(vm);
    if (r->debugger && r->debugger->state == DBG_ATTACHED) {
        debugger_send(r->debugger, pkt->bytes, pkt->len);
        return;
    }
    if (r->had_debugger) {
        g_debug("relay: VM %s: event (cmdset %u cmd %u) after its debugger left: dropped", vm_label(vm),
                pkt->header.cmdset, pkt->header.cmd);
        return;
    }
    if (r->early_bytes + pkt->len > EARLY_CAP) {
        if (!r->early_overflow_logged)
            g_warning("relay: VM %s sent more than %u bytes of JDWP traffic before any debugger "
                      "attached; dropping the rest", vm_label(vm), EARLY_CAP);
        r->early_overflow_logged = TRUE;
        return;
    }
    g_queue_push_tail(&r->early, g_bytes_new(pkt->bytes, pkt->len));
    r->early_bytes += pkt->len;
}

void ddm_relay_vm_output_drained(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    Debugger *d = r ? r->debugger : NULL;
    (void)relay;
    if (!d || d->state != DBG_ATTACHED || !d->reading_paused)
        return;
    g_debug("relay: VM %s took what was queued; reading from debugger %s again", vm_label(vm), d->peer);
    d->reading_paused = FALSE;
    if (!d->in_watch)
        d->in_watch = ddm_read_watch_add(d->fd, G_IO_IN, on_debugger_in, d);
}

gboolean ddm_relay_reply_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    RelayVm *r = vm->relay;
    gpointer client = NULL;
    uint32_t client_id = 0;
    if (!r || !ddm_idmap_take(r->ids, pkt->header.id, &client, &client_id))
        return ddm_idmap_in_range(pkt->header.id); /* a departed debugger's: drop quietly */
    Debugger *d = client;
    if (!d || d != r->debugger || d->state != DBG_ATTACHED)
        return TRUE; /* reply to a command we sent on a debugger's behalf */
    debugger_queue(d, pkt->bytes, pkt->len, TRUE, client_id);
    return TRUE;
}

guint16 ddm_relay_port_of(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (r && r->endpoint)
        return r->endpoint->port;
    Endpoint *fixed = relay ? g_hash_table_lookup(relay->fixed_by_key, vm->info.key) : NULL;
    return fixed ? fixed->port : 0;
}

gboolean ddm_relay_is_selected(DdmRelay *relay, DdmVm *vm)
{
    return relay && selected_vm(relay) == vm;
}

void ddm_relay_select(DdmRelay *relay, const char *spec)
{
    g_free(relay->selection);
    relay->selection = spec && *spec ? g_strdup(spec) : NULL;
    g_message("relay: selected VM: %s", relay->selection ? relay->selection : "(none)");
}

const char *ddm_relay_selection(DdmRelay *relay)
{
    return relay->selection;
}
