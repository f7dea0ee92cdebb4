/* SPDX-License-Identifier: Apache-2.0
 *
 * The relay's listening endpoints (relay-private.h): the selected-VM port,
 * the fixed ports of --connect targets, and each VM's port from
 * debug_port_base up (base 0: each VM a port the kernel picks), sticky per
 * VM key and per device serial + app name (port_by_key, port_by_app: both bounded LRU maps, portmap.h; the latter
 * kept in cfg->port_map_path across server restarts); a new VM passes
 * over at most DDM_RELAY_RESERVED_SKIP_MAX ports remembered for others, so
 * the ports in use stay within a bound however many apps came and went;
 * the lowest free port comes from a bitmap (portpool.h) that also passes
 * over ports a bind failed on and the JDWP ports of the VMs ddmon has a
 * session with on this machine (local_vm_ports, kept by the monitor's key
 * watch), with at most DDM_RELAY_BIND_TRIES binds per
 * VM, so a VM's port costs the same with 10 VMs or 10,000;
 * parking a VM's port while the VM reconnects;
 * accepting debuggers; which VM the selection reaches.
 * Memory (issue 16: one endpoint a VM): an endpoint is a 40-byte block
 * that borrows its VM's key (relay-private.h says from whom, when); the
 * relay lists its endpoints in an array (ep->index: O(1) removal), and
 * whether a port of the VM range is ours is the pool's bit, so no table
 * of that range keyed by port (local_vm_ports holds only local VMs' JDWP
 * ports, one entry each, and local_sessions one entry a local TCP session,
 * so that LOST undoes what HELD counted); a parked port's timer lives in its ParkedPort, not in
 * every endpoint.
 */
#include "core/relay/relay-private.h"

#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "core/loop/accept.h"
#include "core/loop/listener.h"
#include "core/loop/timer.h"
#include "core/session/monitor.h"
#include "core/session/ratelog.h"
#include "core/transport/target.h"

#define PARK_MS 10000                 /* a VM port stays open this long while the VM reconnects */
#define DDM_RELAY_BIND_TRIES 16       /* failed binds per VM port before giving up */
#define PORT_MAP_SAVE_MS 1000         /* new ports are written to the map file within this */

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

/* ------------------------------------------------------------ endpoints */

/* A parked VM port (the value of relay->parked, owned by it; the table's
 * key is the VM key, which ep->key borrows while parked): the endpoint and
 * the timer that closes it if its VM does not come back. */
typedef struct {
    Endpoint *ep;
    DdmTimer timer;
} ParkedPort;

/* One a VM: glibc's 48-byte block. */
G_STATIC_ASSERT(sizeof(Endpoint) <= 40);

static void on_accept(int c, const struct sockaddr *sa, socklen_t sl, gpointer ud);
static void on_accept_trouble(DdmAcceptResult r, int err, guint paused_ms, gpointer ud);
static const DdmListenerOps accept_ops = {on_accept, on_accept_trouble};

/* Take parked @ep out of relay->parked: its timer stops, its ParkedPort and
 * the table's key go, and ep->key becomes @key (a VM's, borrowed; or NULL
 * for an endpoint about to close). */
static void unpark(DdmRelay *relay, Endpoint *ep, const char *key)
{
    gpointer tkey = NULL, value = NULL;
    if (g_hash_table_steal_extended(relay->parked, ep->key, &tkey, &value)) {
        ParkedPort *pp = value;
        g_assert(pp->ep == ep);
        ddm_timer_cancel(&pp->timer);
        g_free(pp);
        g_free(tkey);
    }
    ep->parked = 0;
    ep->key = key;
}

static Endpoint *endpoint_open(DdmRelay *relay, EndpointKind kind, guint16 port, const char *key,
                               GError **error)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    int fd = listen_on(cfg->listen_host ? cfg->listen_host : "127.0.0.1", port, error);
    if (fd < 0)
        return NULL;
    if (port == 0) { /* --debug-port-base 0: the kernel's choice; the table keys the real one */
        struct sockaddr_storage bound;
        socklen_t blen = sizeof bound;
        if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
            port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                     : ((struct sockaddr_in *)&bound)->sin_port);
        if (port == 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: no port from the kernel",
                        cfg->listen_host ? cfg->listen_host : "127.0.0.1");
            close(fd);
            return NULL;
        }
    }
    Endpoint *ep = g_new0(Endpoint, 1);
    ep->relay = relay;
    ep->kind = (guint8)kind;
    ep->port = port;
    ep->fd = fd;
    ep->key = kind == EP_FIXED ? g_strdup(key) : key; /* EP_VM: the VM's (relay-private.h) */
    ep->listener = ddm_listener_new(fd, &accept_ops, ep);
    ep->index = relay->endpoints->len;
    g_ptr_array_add(relay->endpoints, ep);
    ddm_portpool_set_ours(&relay->vm_ports, port, TRUE);
    ddm_monitor_own_port(relay->mon, port, TRUE); /* never scanned (discovery_local.c) */
    return ep;
}

void ddm_relay_endpoint_close(Endpoint *ep)
{
    DdmRelay *relay = ep->relay;
    for (guint i = 0; i < relay->debuggers->len; i++) {
        Debugger *d = relay->debuggers->pdata[i];
        if (d->endpoint == ep)
            d->endpoint = NULL;
    }
    GPtrArray *eps = relay->endpoints; /* the last one takes its place */
    g_assert(ep->index < eps->len && g_ptr_array_index(eps, ep->index) == ep);
    g_ptr_array_remove_index_fast(eps, ep->index);
    if (ep->index < eps->len)
        ((Endpoint *)g_ptr_array_index(eps, ep->index))->index = ep->index;
    ddm_portpool_set_ours(&relay->vm_ports, ep->port, FALSE);
    ddm_monitor_own_port(relay->mon, ep->port, FALSE);
    if (ep->parked)
        unpark(relay, ep, NULL);
    ddm_listener_free(ep->listener); /* before the close (core/loop/listener.h) */
    close(ep->fd);
    if (ep->kind == EP_FIXED)
        g_free((char *)ep->key);
    g_free(ep);
}

/* @addr (of @family) is an address of this machine's interfaces: a UDP
 * socket can bind it (else EADDRNOTAVAIL). No lookup and no packet; a bind
 * of port 0, at once undone. (With net.ipv4.ip_nonlocal_bind set every
 * address passes: a port of a remote VM is then passed over too, which
 * costs the pool one port.) */
static gboolean address_is_ours(int family, const void *addr)
{
    struct sockaddr_storage ss;
    socklen_t len;
    /* a multicast or broadcast address binds too, and is no VM's host */
    if (family == AF_INET) {
        guint32 a = ntohl(((const struct in_addr *)addr)->s_addr);
        if (IN_MULTICAST(a) || a == INADDR_BROADCAST)
            return FALSE;
    } else if (IN6_IS_ADDR_MULTICAST((const struct in6_addr *)addr)) {
        return FALSE;
    }
    memset(&ss, 0, sizeof ss);
    if (family == AF_INET) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, addr, sizeof s4->sin_addr);
        len = sizeof *s4;
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, addr, sizeof s6->sin6_addr);
        len = sizeof *s6;
    }
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return FALSE;
    gboolean ours = bind(fd, (struct sockaddr *)&ss, len) == 0;
    close(fd);
    return ours;
}

/* @host (a TCP target's, as the user or a scan gave it) is this machine:
 * "localhost", a loopback or unspecified address (IPv4, IPv6 or
 * IPv4-mapped), the scanned host or the listen address as configured, or
 * an address literal of one of its interfaces (address_is_ours: a LAN
 * address). (This machine's other names are not looked up: no DNS here.) */
static gboolean host_is_local(const DdmConfig *cfg, const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (!host)
        return FALSE;
    if (!g_ascii_strcasecmp(host, "localhost") || !g_ascii_strcasecmp(host, "localhost."))
        return TRUE;
    if ((cfg->scan_host && !strcmp(host, cfg->scan_host)) ||
        (cfg->listen_host && !strcmp(host, cfg->listen_host)))
        return TRUE;
    if (inet_pton(AF_INET, host, &a4) == 1) {
        guint32 a = ntohl(a4.s_addr);
        return (a >> 24) == 127 || a == 0 || address_is_ours(AF_INET, &a4);
    }
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || IN6_IS_ADDR_UNSPECIFIED(&a6) ||
               (IN6_IS_ADDR_V4MAPPED(&a6) && (a6.s6_addr[12] == 127 ||
                                              !(a6.s6_addr[12] | a6.s6_addr[13] | a6.s6_addr[14] |
                                                a6.s6_addr[15]))) ||
               address_is_ours(AF_INET6, &a6);
    return FALSE;
}

/* The monitor's key watch: a TCP session with a VM on this machine began
 * (HELD) or left the table (LOST); its port is counted in local_vm_ports
 * meanwhile. A JVM's agent does not listen while ddmon is connected, and
 * SO_REUSEADDR lets our bind succeed beside that connection: a debugger
 * port opened there would leave the JVM unable to listen again once a
 * debugger left ("bind failed" in its output, "did not come back" here).
 * Counted from the session's start, not from its HELO: a VM that has not
 * answered yet holds its port too. Decided once a session by its target,
 * however its host is spelled ("localhost", 127.0.0.2, [::1], a LAN
 * address of this machine), at HELD: LOST undoes what HELD did
 * (local_sessions), whatever the interfaces' addresses did meanwhile. */
static void on_key_change(gpointer ud, const DdmTarget *target, DdmKeyChange change)
{
    DdmRelay *relay = ud;
    gpointer k;
    if (change == DDM_KEY_ANSWERED)
        return;
    if (change == DDM_KEY_HELD) {
        guint16 port = ddm_target_tcp_port(target);
        if (!port || g_hash_table_contains(relay->local_sessions, target) ||
            !host_is_local(relay->cfg, ddm_target_tcp_host(target)))
            return;
        g_hash_table_insert(relay->local_sessions, (gpointer)target, GUINT_TO_POINTER(port));
        k = GUINT_TO_POINTER(port);
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(relay->local_vm_ports, k));
        g_hash_table_insert(relay->local_vm_ports, k, GUINT_TO_POINTER(n + 1));
        return;
    }
    gpointer port_p;
    if (!g_hash_table_steal_extended(relay->local_sessions, target, NULL, &port_p))
        return; /* not counted at HELD */
    k = port_p;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(relay->local_vm_ports, k));
    if (n > 1)
        g_hash_table_insert(relay->local_vm_ports, k, GUINT_TO_POINTER(n - 1));
    else
        g_hash_table_remove(relay->local_vm_ports, k);
}

/* A VM on this machine has its JDWP port at @port (on_key_change). O(1). */
static gboolean port_of_local_vm(DdmRelay *relay, guint16 port)
{
    return g_hash_table_contains(relay->local_vm_ports, GUINT_TO_POINTER(port));
}

/* An endpoint of ours listens on @port, or it is the selected port, or a
 * local VM's JDWP port (port_of_local_vm). In the VM port range the
 * pool's "ours" bit says; outside it (a port the kernel chose with
 * --debug-port-base 0, a fixed port) only a bind can tell, and a bind on
 * a port one of our listeners holds fails (no SO_REUSEPORT), which every
 * caller of endpoint_open takes as "not free". */
static gboolean port_reserved(DdmRelay *relay, guint16 port)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    const DdmPortPool *pool = &relay->vm_ports;
    if (cfg->selected_port && port == cfg->selected_port)
        return TRUE;
    if (port_of_local_vm(relay, port))
        return TRUE;
    if (!ddm_portpool_contains(pool, port))
        return FALSE;
    guint i = port - pool->base;
    return (pool->ours[i / 64] >> (i % 64)) & 1u;
}

/* An app name worth remembering a port for. */
static gboolean app_named(const char *app)
{
    return app && *app && strcmp(app, "<pre-initialized>") != 0;
}

/* The remembered port of @vm's app on its device, or 0. The ports VMs get
 * are the pool's (debug_port_base and the DDM_PORTPOOL_SPAN - 1 above it):
 * a remembered port outside it (the base changed) is not used. */
static guint16 app_port(DdmRelay *relay, DdmVm *vm)
{
    if (!app_named(vm->info.app_name))
        return 0;
    guint16 p = ddm_portmap_lookup(relay->port_by_app, vm->info.device, vm->info.app_name);
    return ddm_portpool_contains(&relay->vm_ports, p) ? p : 0;
}

/* Remembered for someone else (another key that is not up now, or another
 * app, in this run or an earlier one)? */
static gboolean port_remembered_by_other(DdmRelay *relay, guint16 port, DdmVm *vm)
{
    if (ddm_portmap_port_taken_by_other(relay->port_by_key, port, NULL, vm->info.key))
        return TRUE;
    return ddm_portmap_port_taken_by_other(relay->port_by_app, port, vm->info.device,
                                           app_named(vm->info.app_name) ? vm->info.app_name : NULL);
}

/* ------------------------------------------------------------ the port map file */

void ddm_relay_ports_load(DdmRelay *relay)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    GError *e = NULL;
    if (!cfg->port_map_path || !cfg->relay)
        return;
    if (!ddm_portmap_load(relay->port_by_app, cfg->port_map_path, &e)) {
        g_warning("relay: ignoring the remembered debugger ports: %s", e->message);
        g_error_free(e);
        return;
    }
    g_debug("relay: %u remembered debugger ports from %s", ddm_portmap_count(relay->port_by_app),
            cfg->port_map_path);
}

static void save_port_map(DdmRelay *relay)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    GError *e = NULL;
    relay->port_map_dirty = FALSE;
    if (!cfg->port_map_path)
        return;
    if (!ddm_portmap_save(relay->port_by_app, cfg->port_map_path, &e)) {
        if (!relay->port_map_save_warned)
            g_warning("relay: cannot remember debugger ports: %s", e->message);
        relay->port_map_save_warned = TRUE;
        g_error_free(e);
    }
}

void ddm_relay_ports_flush(DdmRelay *relay)
{
    ddm_timer_cancel(&relay->port_map_save);
    if (relay->port_map_dirty)
        save_port_map(relay);
}

static void on_port_map_save(DdmTimer *t, gpointer ud)
{
    (void)t;
    save_port_map(ud);
}

/* @vm's app has @port now: remember it; save within PORT_MAP_SAVE_MS when
 * an app or a port is new (one write for a burst of new VMs, not one per
 * VM: 1,000 VMs starting cost 1,000 file writes of up to 512 lines each);
 * an order change alone waits for the next save or the end. */
static void remember_app_port(DdmRelay *relay, DdmVm *vm, guint16 port)
{
    guint16 before = ddm_portmap_lookup(relay->port_by_app, vm->info.device, vm->info.app_name);
    gboolean changed = FALSE;
    if (!ddm_portmap_set(relay->port_by_app, vm->info.device, vm->info.app_name, port, &changed))
        return;
    if (changed)
        relay->port_map_dirty = TRUE;
    if (before != port && !ddm_timer_armed(&relay->port_map_save))
        ddm_timer_arm(&relay->port_map_save, PORT_MAP_SAVE_MS);
}

/* ------------------------------------------------------------ assigning a VM's port */

/* @port, parked for a VM that went away after a debugger session, taken
 * over by @vm, a new VM of the app the port is remembered for: the app
 * restarted (new pid, new key) and its old instance will not come back.
 * NULL if @port is not parked for another key. */
static Endpoint *adopt_parked(DdmRelay *relay, guint16 port, DdmVm *vm)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, relay->parked);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        Endpoint *ep = ((ParkedPort *)value)->ep;
        if (ep->port != port || g_strcmp0(ep->key, vm->info.key) == 0)
            continue;
        g_message("relay: VM %s takes over debugger port %u, parked for %s (the same app, "
                  "restarted)", vm_label(vm), port, ep->key);
        unpark(relay, ep, vm->info.key);
        return ep;
    }
    return NULL;
}

static Endpoint *open_vm_port(DdmRelay *relay, DdmVm *vm)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    const char *key = vm->info.key;
    guint16 want[2] = {0, 0};
    want[0] = ddm_portmap_lookup(relay->port_by_key, NULL, key);
    want[1] = app_port(relay, vm);
    for (int i = 0; i < 2; i++) {
        if (want[i] && !port_reserved(relay, want[i])) {
            Endpoint *ep = endpoint_open(relay, EP_VM, want[i], key, NULL);
            if (ep)
                return ep;
        }
    }
    if (want[1]) {
        Endpoint *ep = adopt_parked(relay, want[1], vm);
        if (ep)
            return ep;
    }
    /* Lowest free port from the base; skip ports other VMs of other apps
     * still "own" while any other is free, so they can get them back, but
     * at most DDM_RELAY_RESERVED_SKIP_MAX of them: the highest port in use
     * must not creep up as apps come and go. Free means: no endpoint of
     * ours, and no failed bind there lately (the pool's bitmaps); at most
     * DDM_RELAY_BIND_TRIES binds fail before this VM goes without a port. */
    if (cfg->debug_port_base == 0) /* the kernel picks each VM's port */
        return endpoint_open(relay, EP_VM, 0, key, NULL);
    guint failed = 0;
    for (int pass = 0; pass < 2; pass++) {
        guint skipped = 0;
        gint64 now = g_get_monotonic_time();
        for (guint p = ddm_portpool_next_free(&relay->vm_ports, cfg->debug_port_base, now); p;
             p = ddm_portpool_next_free(&relay->vm_ports, p + 1, now)) {
            if (port_reserved(relay, (guint16)p)) {
                /* the selected port, inside the range, or a local VM's: the
                 * latter marked as another's, so the next VM's walk passes
                 * over it in the bitmap instead of asking again (the mark
                 * ages out as a failed bind's does) */
                if (port_of_local_vm(relay, (guint16)p))
                    ddm_portpool_set_foreign(&relay->vm_ports, p, now);
                continue;
            }
            if (pass == 0 && skipped < DDM_RELAY_RESERVED_SKIP_MAX &&
                port_remembered_by_other(relay, (guint16)p, vm)) {
                skipped++;
                continue;
            }
            Endpoint *ep = endpoint_open(relay, EP_VM, (guint16)p, key, NULL);
            if (ep)
                return ep;
            ddm_portpool_set_foreign(&relay->vm_ports, p, now);
            if (++failed >= DDM_RELAY_BIND_TRIES) {
                g_warning("relay: no debugger port for VM %s: %u binds failed from %u", key, failed,
                          cfg->debug_port_base);
                return NULL;
            }
        }
        if (skipped == 0)
            break; /* a second pass would find nothing more */
    }
    g_warning("relay: no free debugger port for VM %s from %u", key, cfg->debug_port_base);
    return NULL;
}

/* ------------------------------------------------------------ accepting */

/* A debugger connected (core/loop/listener.h: DDM_ACCEPT_BATCH a wake-up). */
static void on_accept(int c, const struct sockaddr *sa, socklen_t sl, gpointer ud)
{
    Endpoint *ep = ud;
    ddm_socket_nodelay(c); /* ddm_accept made it non-blocking and close-on-exec */
    char host[INET6_ADDRSTRLEN] = "?";
    guint16 peer_port = 0;
    /* the length first: with sl 0 the kernel gave no address and *sa is
     * unfilled (core/loop/listener.h) */
    if (sl >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
        peer_port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
    } else if (sl >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
        peer_port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    }
    Debugger *d = ddm_relay_debugger_new(ep, c, g_strdup_printf("%s:%u", host, peer_port));
    g_debug("relay: connection from %s on port %u", d->peer, ep->port);
}

/* Shed (out of descriptors) or an accept error: one rate-limited line. */
static void on_accept_trouble(DdmAcceptResult r, int err, guint paused_ms, gpointer ud)
{
    const Endpoint *ep = ud;
    char where[32];
    g_snprintf(where, sizeof where, "on port %u", ep->port);
    ddm_ratelog_accept("relay", where, r, err, paused_ms);
}

/* ------------------------------------------------------------ fixed and selected ports */

/* Split "HOST:PORT=DEBUGPORT" ("[v6]:PORT=..." too) into the key of the
 * VM discovery makes of it and the debugger port. Split by
 * ddm_target_parse_host_port, as discovery splits it, and keyed through the same
 * ddm_target_tcp_key (an IPv6 literal in brackets, the port without
 * leading zeros), so that "::1:8000=8700" or "127.0.0.1:08000=8700" finds
 * its VM; FALSE without "=DEBUGPORT" or for a spec discovery ignores. */
static gboolean parse_connect_port(const char *spec, char **key, guint16 *port)
{
    const char *eq = strchr(spec, '=');
    guint64 v;
    g_autofree char *host = NULL;
    guint16 p;
    if (!eq || !g_ascii_string_to_unsigned(eq + 1, 10, 1, 65535, &v, NULL) ||
        !ddm_target_parse_host_port(spec, (gsize)(eq - spec), &host, &p))
        return FALSE;
    *key = ddm_target_tcp_key(host, p);
    *port = (guint16)v;
    return TRUE;
}

void ddm_relay_ports_open(DdmRelay *relay)
{
    const DdmConfig *cfg = ddm_monitor_config(relay->mon);
    ddm_portpool_init(&relay->vm_ports, cfg->debug_port_base, DDM_PORTPOOL_SPAN);
    relay->local_vm_ports = g_hash_table_new(g_direct_hash, g_direct_equal);
    relay->local_sessions = g_hash_table_new(g_direct_hash, g_direct_equal);
    ddm_monitor_watch_keys(relay->mon, on_key_change, relay);
    ddm_timer_init(&relay->port_map_save, on_port_map_save, relay);
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
}

/* What ddm_relay_ports_open started and the endpoints do not hold: the key
 * watch and its table (the endpoints close in ddm_relay_free). */
void ddm_relay_ports_close(DdmRelay *relay)
{
    ddm_monitor_unwatch_keys(relay->mon, on_key_change, relay);
    g_clear_pointer(&relay->local_vm_ports, g_hash_table_destroy);
    g_clear_pointer(&relay->local_sessions, g_hash_table_destroy);
}

/* ------------------------------------------------------------ a VM's port */

void ddm_relay_ports_vm_up(DdmRelay *relay, RelayVm *r)
{
    DdmVm *vm = r->vm;
    Endpoint *fixed = g_hash_table_lookup(relay->fixed_by_key, vm->info.key);
    ParkedPort *parked = g_hash_table_lookup(relay->parked, vm->info.key);
    if (parked && !r->endpoint) {
        Endpoint *ep = parked->ep;
        unpark(relay, ep, vm->info.key);
        r->endpoint = ep;
    }
    if (!fixed && !r->endpoint) {
        r->endpoint = open_vm_port(relay, vm);
        if (r->endpoint) {
            ddm_portmap_set(relay->port_by_key, NULL, vm->info.key, r->endpoint->port, NULL);
            g_debug("relay: VM %s debugger port %u", vm_label(vm), r->endpoint->port);
        }
    }
}

void ddm_relay_ports_vm_changed(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    const char *app = vm->info.app_name;
    gboolean named = app_named(app);
    if (named && r && r->endpoint && r->endpoint->kind == EP_VM && !r->debugger) {
        /* Android apps start as "<pre-initialized>" and learn their name
         * later (APNM): move to the port this app had before, if free, so
         * IDE run configurations keep working across restarts. */
        guint16 want = app_port(relay, vm);
        if (want && want != r->endpoint->port) {
            Endpoint *ep = !port_reserved(relay, want)
                               ? endpoint_open(relay, EP_VM, want, vm->info.key, NULL)
                               : adopt_parked(relay, want, vm);
            if (ep) {
                g_message("relay: VM %s is %s again: back on its debugger port %u (was %u)",
                          vm_label(vm), app, want, r->endpoint->port);
                ddm_relay_endpoint_close(r->endpoint);
                r->endpoint = ep;
                ddm_portmap_set(relay->port_by_key, NULL, vm->info.key, want, NULL);
            }
        }
    }
    guint16 port = r && r->endpoint ? r->endpoint->port : 0;
    if (port && named)
        remember_app_port(relay, vm, port);
}

static void on_park_timeout(DdmTimer *t, gpointer ud)
{
    Endpoint *ep = ((ParkedPort *)ud)->ep;
    (void)t;
    g_message("relay: VM %s did not come back; freeing its debugger port %u", ep->key, ep->port);
    ddm_relay_endpoint_close(ep); /* frees the ParkedPort */
}

/* Keep a VM's port open while the VM reconnects (after a debugger session),
 * so the next debugger finds the same port and waits for the VM. Called
 * while the VM is still there: ep->key (its key) is copied into the table
 * and borrowed from there. One parked port a key: an older one (its VM
 * never took it back) closes. */
static void park(DdmRelay *relay, Endpoint *ep)
{
    ParkedPort *old = g_hash_table_lookup(relay->parked, ep->key);
    if (old && old->ep != ep)
        ddm_relay_endpoint_close(old->ep);
    ParkedPort *pp = g_new0(ParkedPort, 1);
    char *key = g_strdup(ep->key);
    pp->ep = ep;
    g_hash_table_insert(relay->parked, key, pp);
    ep->key = key;
    ep->parked = 1;
    ddm_timer_init(&pp->timer, on_park_timeout, pp);
    ddm_timer_arm(&pp->timer, PARK_MS);
}

void ddm_relay_ports_vm_closed(DdmRelay *relay, RelayVm *r, gboolean reconnect)
{
    if (r->endpoint) {
        if (reconnect && !relay->shutting_down)
            park(relay, r->endpoint);
        else
            ddm_relay_endpoint_close(r->endpoint);
    }
}

/* ------------------------------------------------------------ selection */

DdmVm *ddm_relay_selected_vm(DdmRelay *relay)
{
    if (!relay->selection || !*relay->selection)
        return NULL;
    /* An app name may match several VMs (two devices, or an old instance
     * not gone yet): the selection reaches the one that came last. */
    return ddm_monitor_resolve_vm_newest(relay->mon, relay->selection, NULL);
}
