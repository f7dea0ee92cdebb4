/* SPDX-License-Identifier: Apache-2.0
 *
 * Local discovery: two DdmDiscovery modules that hand TCP targets to the
 * monitor.
 *  - "local": every scan_interval_ms, offer each port of the configured
 *    ranges on scan_host (127.0.0.1:8000-8040 by default). A port that
 *    already has a session is skipped, so ddmon never opens a second JDWP
 *    connection to a VM (a VM serves only one). The first scan runs at
 *    start, so a VM started after ddmon is found within one period.
 *    Ports ddmon listens on itself (its debugger ports, the dashboard:
 *    ddm_monitor_is_own_port) are skipped when the scanned host is this
 *    machine, so ddmon never connects to itself.
 *  - "connect": the --connect HOST:PORT[=DEBUGPORT] targets, offered at
 *    start and re-offered every second while one has no session (a session
 *    that ends arms the timer again: ddm_monitor_watch_keys); the
 *    monitor's per-key backoff decides when a failed one is really retried.
 * Stopping a module closes the sessions it found. A scan makes a port's
 * target for each offer and keeps none (the session holds its own): a
 * wide range of empty ports keeps nothing per port but its bits (review
 * rD 2). Non-goals: backoff (core/session/monitor.c), connecting
 * (core/transport/target.c).
 *
 * What a scan costs: the scan keeps the set of ports it must still try, a
 * bitmap over the ranges. The monitor tells it when a key of its host
 * gets a session (a connection attempt in flight counts) and when that
 * session ends (ddm_monitor_watch_keys), whichever DdmTarget object the
 * session came from (--connect, a fast retry): the port's bit goes and
 * comes back. A port the monitor refused for its backoff is parked until
 * the backoff ends. So a scan visits only the ports without a session
 * (64 at a time, skipping words of connected ports), and does no string
 * work for the others: its cost is O(ports not connected) + O(range / 64).
 * A range of empty ports still costs a connection attempt per port per
 * scan (a refused connect on this machine is cheap). A scan offers at
 * most LOCAL_SLICE_OFFERS targets per loop iteration and continues at the
 * next one, so a wide range (--scan-ports=1-65535) never holds the loop
 * for a whole scan. It also keeps at most a cap of its ports' sessions
 * connecting or in their handshake at once (the monitor tells it
 * when one gets past its handshake: DDM_KEY_ANSWERED, or ends): a port
 * that accepts and never answers holds a descriptor until its handshake
 * timeout, and thousands of those held as many descriptors at once (review
 * rD 1). At the cap the scan pauses, and goes on when one of them ends or
 * answers. DDM_KEY_ANSWERED comes with the handshake echo: a port that
 * echoes the JDWP handshake and then stays silent leaves the cap there and
 * holds its descriptor until the HELO request times out (review rF 6).
 * The cap is a quarter of the process's descriptor limit, between 64 and
 * 4,096: with 512, 10,000 VMs that answer at once were started 512 at a
 * time, each wave waiting for the last (bench/scale.sh with `ulimit -n
 * 20000`: 1,941 ms to all named, 1,685 with a cap of 4,096).
 */
#include <string.h>
#include <sys/resource.h>

#include "core/discovery/discovery.h"
#include "core/loop/timer.h"

#define CONNECT_RETRY_MS 1000
/* A scan's share of one loop iteration: sessions started, ports visited. */
#define LOCAL_SLICE_OFFERS 256u
#define LOCAL_SLICE_VISITS 8192u
/* A scan's sessions connecting or in their handshake at once, at most: a
 * quarter of the descriptors the process may open, within these bounds
 * (ddm_discovery_local_in_flight_cap). */
#define LOCAL_MAX_IN_FLIGHT_MIN 64u
#define LOCAL_MAX_IN_FLIGHT_MAX 4096u

typedef struct LocalScan {
    DdmDiscovery *d;
    DdmTimer timer;        /* the next scan, armed while running */
    DdmTimer slice;        /* the rest of a scan, armed while one is under way */
    /* The ports of the ranges as bits over [base, base + 64 * words). */
    const GArray *ranges_seen; /* config->scan_ranges the bitmaps were made for */
    guint ranges_len_seen;
    gboolean stale;        /* rebuild the bitmaps before the next scan (a start) */
    guint base;            /* lowest port of the ranges */
    guint words;           /* 64-bit words per bitmap; 0 = no port */
    guint64 *in_range;     /* a port of the ranges */
    guint64 *to_try;       /* in range, no session, no backoff parks it */
    guint64 *flying;       /* in range, its session connecting or in its handshake */
    guint max_in_flight;   /* ddm_discovery_local_in_flight_cap() (tests set less) */
    gboolean paused;       /* the scan under way waits for a session in flight to end or answer */
    GHashTable *parked;    /* GUINT_TO_POINTER(port) -> gint64* not-before (owned) */
    guint cursor;          /* the next port the scan under way visits; 0 = none under way */
    gboolean own;          /* the scanned host is this machine (skip ddmon's ports) */
    gboolean first_round_done;
    DdmLocalScanStats stats;
} LocalScan;

/* The scanned host, as the config says now. */
static const char *local_host(const LocalScan *s)
{
    return s->d->config->scan_host ? s->d->config->scan_host : "127.0.0.1";
}

/* A new target for @port of the scanned host (transfer full). */
static DdmTarget *local_target_new(LocalScan *s, guint16 port)
{
    DdmTarget *t = ddm_target_tcp_new(local_host(s), port, "local");
    t->speculative = TRUE;
    return t;
}

/* Is the scanned host one ddmon's own listeners may be on? A loopback
 * address or name, the wildcard, or the address debugger ports bind to. */
static gboolean scans_this_machine(const DdmConfig *cfg)
{
    const char *host = cfg->scan_host ? cfg->scan_host : "127.0.0.1";
    if (g_str_has_prefix(host, "127.") || strcmp(host, "::1") == 0 ||
        g_ascii_strcasecmp(host, "localhost") == 0 || strcmp(host, "0.0.0.0") == 0 ||
        strcmp(host, "::") == 0)
        return TRUE;
    return cfg->listen_host && strcmp(host, cfg->listen_host) == 0;
}

static inline gboolean bit_get(const guint64 *bits, guint i)
{
    return (bits[i / 64] >> (i % 64)) & 1u;
}

static inline void bit_put(guint64 *bits, guint i, gboolean on)
{
    if (on)
        bits[i / 64] |= (guint64)1 << (i % 64);
    else
        bits[i / 64] &= ~((guint64)1 << (i % 64));
}

/* The bit index of @port, or -1 when it is not a port of the ranges. */
static gint port_index(const LocalScan *s, guint port)
{
    if (port < s->base || port - s->base >= 64u * s->words || !bit_get(s->in_range, port - s->base))
        return -1;
    return (gint)(port - s->base);
}

/* Port @i's session is (@on) or is not (any more) a connection attempt in
 * flight; a paused scan goes on once there are fewer than the cap. */
static void fly_put(LocalScan *s, guint i, gboolean on)
{
    if ((gboolean)bit_get(s->flying, i) == on)
        return;
    bit_put(s->flying, i, on);
    if (on) {
        s->stats.in_flight++;
        s->stats.in_flight_max = MAX(s->stats.in_flight_max, s->stats.in_flight);
        return;
    }
    s->stats.in_flight--;
    if (s->paused && s->stats.in_flight < s->max_in_flight) {
        s->paused = FALSE;
        ddm_timer_arm(&s->slice, 0); /* the rest at the next iteration */
    }
}

/* The monitor's word (ddm_monitor_watch_keys): a key got or lost its
 * session, or its session answered. Ours when it is "scan_host:port" for a
 * port of the ranges. */
static void local_key_changed(gpointer ud, const DdmTarget *target, DdmKeyChange change)
{
    LocalScan *s = ud;
    guint port = ddm_target_tcp_port(target);
    gint i = port ? port_index(s, port) : -1;
    gboolean held = change != DDM_KEY_LOST;

    if (i < 0 || g_strcmp0(ddm_target_tcp_host(target), local_host(s)) != 0)
        return; /* an adb pid, another host's port, a port outside the ranges */
    fly_put(s, (guint)i, change == DDM_KEY_HELD);
    if (change == DDM_KEY_ANSWERED)
        return; /* still held */
    g_hash_table_remove(s->parked, GUINT_TO_POINTER(port));
    bit_put(s->to_try, (guint)i, !held);
    if (held)
        s->stats.held++;
    else if (s->stats.held)
        s->stats.held--;
}

/* (Re)make the bitmaps for the configured ranges: every port to try but
 * those that have a session now (one lookup each, at start only). */
static void local_build_ports(LocalScan *s)
{
    DdmDiscovery *d = s->d;
    const GArray *ranges = d->config->scan_ranges;
    guint lo = G_MAXUINT, hi = 0;

    g_clear_pointer(&s->in_range, g_free);
    g_clear_pointer(&s->to_try, g_free);
    g_clear_pointer(&s->flying, g_free);
    g_hash_table_remove_all(s->parked);
    s->ranges_seen = ranges;
    s->ranges_len_seen = ranges ? ranges->len : 0;
    s->stale = FALSE;
    s->words = 0;
    s->base = 0;
    s->cursor = 0;
    s->stats.held = 0;
    s->stats.in_flight = 0;
    s->paused = FALSE;
    for (guint i = 0; ranges && i < ranges->len; i++) {
        const DdmPortRange *r = &g_array_index(ranges, DdmPortRange, i);
        guint first = MAX(r->first, 1u); /* never port 0 */
        if (first > r->last)
            continue;
        lo = MIN(lo, first);
        hi = MAX(hi, (guint)r->last);
    }
    if (hi == 0)
        return;
    s->base = lo;
    s->words = (hi - lo) / 64 + 1;
    s->in_range = g_new0(guint64, s->words);
    s->to_try = g_new0(guint64, s->words);
    s->flying = g_new0(guint64, s->words);
    for (guint i = 0; i < ranges->len; i++) {
        const DdmPortRange *r = &g_array_index(ranges, DdmPortRange, i);
        for (guint port = MAX(r->first, 1u); port <= r->last; port++) {
            if (bit_get(s->in_range, port - lo))
                continue; /* overlapping ranges */
            bit_put(s->in_range, port - lo, TRUE);
            g_autofree char *key = ddm_target_tcp_key(local_host(s), (guint16)port);
            DdmVm *vm = ddm_monitor_find_vm(d->monitor, key);
            if (vm) {
                s->stats.held++;
                if (vm->state <= DDM_VM_STATE_HANDSHAKE)
                    fly_put(s, port - lo, TRUE);
            } else
                bit_put(s->to_try, port - lo, TRUE);
        }
    }
}

/* Parked ports whose backoff is over may be tried again. */
static void local_unpark_due(LocalScan *s, gint64 now)
{
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, s->parked);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (*(const gint64 *)v > now)
            continue;
        bit_put(s->to_try, GPOINTER_TO_UINT(k) - s->base, TRUE);
        g_hash_table_iter_remove(&it);
    }
}

static void local_slice_cb(DdmTimer *t, gpointer ud);

/* Visit the ports to try from s->cursor on, up to one slice's share;
 * arm s->slice for the rest, or end the scan. */
static void local_scan_slice(LocalScan *s)
{
    DdmDiscovery *d = s->d;
    DdmMonitor *mon = d->monitor;
    guint offers = 0, visits = 0;
    gint64 now = g_get_monotonic_time();
    guint w = (s->cursor - s->base) / 64;
    guint64 from_mask = ~(guint64)0 << ((s->cursor - s->base) % 64);

    for (; w < s->words; w++, from_mask = ~(guint64)0) {
        /* A copy: offers change the live word (their session's bit goes). */
        guint64 bits = s->to_try[w] & from_mask;
        while (bits) {
            guint port = s->base + w * 64 + (guint)__builtin_ctzll(bits);
            DdmTarget *t;
            bits &= bits - 1;
            if (offers >= LOCAL_SLICE_OFFERS || visits >= LOCAL_SLICE_VISITS) {
                s->cursor = port;
                s->stats.slices++;
                ddm_timer_arm(&s->slice, 0); /* the rest at the next iteration */
                return;
            }
            if (s->stats.in_flight >= s->max_in_flight) {
                /* the rest once a session in flight ends or answers (fly_put) */
                s->cursor = port;
                s->stats.slices++;
                s->stats.pauses++;
                s->paused = TRUE;
                return;
            }
            visits++;
            s->stats.visits++;
            /* Never ddmon's own listening ports. */
            if (s->own && ddm_monitor_is_own_port(mon, (guint16)port))
                continue;
            t = local_target_new(s, (guint16)port);
            if (ddm_monitor_offer_target(mon, t)) {
                ddm_target_unref(t); /* the session holds its own */
                offers++;
                s->stats.offers++;
                continue;
            }
            if (ddm_monitor_stopping(mon)) {
                ddm_target_unref(t);
                return;
            }
            /* Refused: its backoff. Parked until it ends (a session that
             * starts meanwhile unparks it, and so does its end). */
            {
                gint64 until = ddm_monitor_backoff_until(mon, t->key);
                if (until > now) {
                    gint64 *at = g_new(gint64, 1);
                    *at = until;
                    g_hash_table_replace(s->parked, GUINT_TO_POINTER(port), at);
                    bit_put(s->to_try, port - s->base, FALSE);
                }
            }
            ddm_target_unref(t);
        }
    }
    s->cursor = 0;
    s->stats.slices++;
    s->first_round_done = TRUE;
}

static void local_slice_cb(DdmTimer *t, gpointer ud)
{
    (void)t;
    local_scan_slice(ud);
}

/* Start a scan, unless one is still under way (a wide range, a short period). */
static void local_scan_once(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    if (s->cursor)
        return;
    if (s->stale || d->config->scan_ranges != s->ranges_seen ||
        (s->ranges_seen && s->ranges_seen->len != s->ranges_len_seen))
        local_build_ports(s);
    if (!s->words) {
        s->first_round_done = TRUE;
        return;
    }
    s->own = scans_this_machine(d->config);
    s->stats.scans++;
    s->stats.visits = 0;
    s->stats.offers = 0;
    s->stats.slices = 0;
    local_unpark_due(s, g_get_monotonic_time());
    s->cursor = s->base;
    local_scan_slice(s);
}

static void local_arm(DdmDiscovery *d)
{
    LocalScan *s = d->priv;
    guint interval = d->config->scan_interval_ms;
    ddm_timer_arm(&s->timer, interval ? interval : 2000);
}

static void local_tick(DdmTimer *t, gpointer ud)
{
    DdmDiscovery *d = ud;
    (void)t;
    local_arm(d); /* first: the scan may stop discovery */
    local_scan_once(d);
}

static void local_start(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    if (ddm_timer_armed(&s->timer))
        return;
    d->running = TRUE;
    /* The ports' state is rebuilt: backoffs were forgotten at the stop. */
    s->stale = TRUE;
    s->first_round_done = FALSE;
    ddm_timer_init(&s->timer, local_tick, d);
    ddm_timer_init(&s->slice, local_slice_cb, s);
    local_scan_once(d);
    local_arm(d);
}

static void local_stop(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    ddm_timer_cancel(&s->timer);
    ddm_timer_cancel(&s->slice);
    s->cursor = 0;
    s->paused = FALSE;
    d->running = FALSE;
    ddm_monitor_forget_origin(d->monitor, "local");
}

static gboolean local_first_round_done(DdmDiscovery *d)
{
    return ((LocalScan *)d->priv)->first_round_done;
}

static void local_free(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    ddm_timer_cancel(&s->timer);
    ddm_timer_cancel(&s->slice);
    ddm_monitor_unwatch_keys(d->monitor, local_key_changed, s);
    g_hash_table_destroy(s->parked);
    g_free(s->in_range);
    g_free(s->to_try);
    g_free(s->flying);
    g_free(s);
    g_free(d);
}

static const DdmDiscoveryOps local_ops = {"local", local_start, local_stop, local_free,
                                          local_first_round_done};

DdmDiscovery *ddm_discovery_local_new(DdmMonitor *mon, const DdmConfig *config)
{
    DdmDiscovery *d;
    LocalScan *s;

    g_return_val_if_fail(mon != NULL && config != NULL, NULL);
    d = g_new0(DdmDiscovery, 1);
    s = g_new0(LocalScan, 1);
    s->d = d;
    s->parked = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    {
        struct rlimit nofile;
        s->max_in_flight = ddm_discovery_local_in_flight_cap(
            getrlimit(RLIMIT_NOFILE, &nofile) == 0 ? (guint64)nofile.rlim_cur : 0);
    }
    d->ops = &local_ops;
    d->monitor = mon;
    d->config = config;
    d->priv = s;
    ddm_monitor_watch_keys(mon, local_key_changed, s);
    return d;
}

void ddm_discovery_local_stats(const DdmDiscovery *d, DdmLocalScanStats *out)
{
    g_return_if_fail(d != NULL && out != NULL && d->ops == &local_ops);
    const LocalScan *s = d->priv;
    *out = s->stats;
    out->in_flight_cap = s->max_in_flight;
}

guint ddm_discovery_local_in_flight_cap(guint64 nofile)
{
    /* RLIM_INFINITY is the largest rlim_t: the upper bound */
    return (guint)CLAMP(nofile / 4, LOCAL_MAX_IN_FLIGHT_MIN, LOCAL_MAX_IN_FLIGHT_MAX);
}

void ddm_discovery_local_set_max_in_flight(DdmDiscovery *d, guint max)
{
    g_return_if_fail(d != NULL && d->ops == &local_ops && max > 0);
    ((LocalScan *)d->priv)->max_in_flight = max;
}

/* ------------------------------------------------------------- --connect */

typedef struct ConnectList {
    DdmDiscovery *d;
    GPtrArray *targets;   /* DdmTarget* (owned) */
    DdmTimer timer;       /* the next offer, armed while running and a target has no session */
    guint rounds;         /* offer rounds so far (ddm_discovery_connect_rounds) */
} ConnectList;

/* Split "HOST:PORT[=DEBUGPORT]" ("[v6]:PORT" too) into host and port. */
static gboolean parse_connect(const char *spec, char **host, guint16 *port)
{
    const char *eq = strchr(spec, '=');
    return ddm_target_parse_host_port(spec, eq ? (gsize)(eq - spec) : strlen(spec), host, port);
}

/* Offer every target without a session; the next round comes in a second
 * if one still has none (refused for its backoff), else when a session
 * ends (connect_key_changed). */
static void connect_offer_all(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    gboolean waiting = FALSE;

    c->rounds++;
    for (guint i = 0; i < c->targets->len; i++) {
        DdmTarget *t = g_ptr_array_index(c->targets, i);
        if (ddm_monitor_find_vm(d->monitor, t->key))
            continue;
        if (!ddm_monitor_offer_target(d->monitor, t))
            waiting = TRUE;
    }
    if (waiting && d->running) /* (an offer may have stopped discovery) */
        ddm_timer_arm(&c->timer, CONNECT_RETRY_MS);
}

static void connect_tick(DdmTimer *t, gpointer ud)
{
    (void)t;
    connect_offer_all(ud);
}

/* A session of one of the targets ended: offer it again in a second. */
static void connect_key_changed(gpointer ud, const DdmTarget *target, DdmKeyChange change)
{
    ConnectList *c = ud;

    if (change != DDM_KEY_LOST || !c->d->running || ddm_timer_armed(&c->timer))
        return;
    for (guint i = 0; i < c->targets->len; i++) {
        if (strcmp(((DdmTarget *)g_ptr_array_index(c->targets, i))->key, target->key) == 0) {
            ddm_timer_arm(&c->timer, CONNECT_RETRY_MS);
            return;
        }
    }
}

static void connect_start(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    if (d->running)
        return;
    d->running = TRUE;
    ddm_timer_init(&c->timer, connect_tick, d);
    connect_offer_all(d);
}

static void connect_stop(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    ddm_timer_cancel(&c->timer);
    d->running = FALSE;
    ddm_monitor_forget_origin(d->monitor, "connect");
}

static void connect_free(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    ddm_timer_cancel(&c->timer);
    ddm_monitor_unwatch_keys(d->monitor, connect_key_changed, c);
    g_ptr_array_unref(c->targets);
    g_free(c);
    g_free(d);
}

static const DdmDiscoveryOps connect_ops = {"connect", connect_start, connect_stop, connect_free};

DdmDiscovery *ddm_discovery_connect_new(DdmMonitor *mon, const DdmConfig *config)
{
    DdmDiscovery *d;
    ConnectList *c;
    GPtrArray *specs;

    g_return_val_if_fail(mon != NULL && config != NULL, NULL);
    d = g_new0(DdmDiscovery, 1);
    c = g_new0(ConnectList, 1);
    c->d = d;
    c->targets = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_target_unref);
    specs = config->connect;
    for (guint i = 0; specs && i < specs->len; i++) {
        const char *spec = g_ptr_array_index(specs, i);
        char *host = NULL;
        guint16 port = 0;
        if (!parse_connect(spec, &host, &port)) {
            g_warning("--connect %s: expected HOST:PORT[=DEBUGPORT]; ignored", spec);
            continue;
        }
        g_ptr_array_add(c->targets, ddm_target_tcp_new(host, port, "connect"));
        g_free(host);
    }
    d->ops = &connect_ops;
    d->monitor = mon;
    d->config = config;
    d->priv = c;
    ddm_monitor_watch_keys(mon, connect_key_changed, c);
    return d;
}

guint ddm_discovery_connect_rounds(const DdmDiscovery *d)
{
    g_return_val_if_fail(d != NULL && d->ops == &connect_ops, 0);
    return ((const ConnectList *)d->priv)->rounds;
}
