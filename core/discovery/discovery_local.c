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
 *    start and re-offered every second; the monitor's per-key backoff
 *    decides when a failed one is really retried.
 * Stopping a module closes the sessions it found. Targets are made once
 * per port and reused. Non-goals: backoff (core/session/monitor.c), connecting
 * (core/transport/target.c).
 */
#include <string.h>

#include "core/discovery/discovery.h"
#include "core/loop/timer.h"

#define CONNECT_RETRY_MS 1000

typedef struct LocalScan {
    GHashTable *targets;   /* GUINT_TO_POINTER(port) -> DdmTarget* (owned) */
    DdmTimer timer;        /* the next scan, armed while running */
} LocalScan;

static DdmTarget *local_target(DdmDiscovery *d, guint16 port)
{
    LocalScan *s = d->priv;
    DdmTarget *t = g_hash_table_lookup(s->targets, GUINT_TO_POINTER(port));

    if (!t) {
        const char *host = d->config->scan_host ? d->config->scan_host
                                                         : "127.0.0.1";
        t = ddm_target_tcp_new(host, port, "local");
        t->speculative = TRUE;
        g_hash_table_insert(s->targets, GUINT_TO_POINTER(port), t);
    }
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

static void local_scan_once(DdmDiscovery *d)
{
    DdmMonitor *mon = d->monitor;
    GArray *ranges = d->config->scan_ranges;
    guint offered = 0;
    gboolean own = scans_this_machine(d->config);

    for (guint i = 0; ranges && i < ranges->len; i++) {
        const DdmPortRange *r = &g_array_index(ranges, DdmPortRange, i);
        for (guint port = r->first; port <= r->last && port != 0; port++) {
            DdmTarget *t = local_target(d, (guint16)port);
            /* Never a second connection to a port that has a session. */
            if (ddm_monitor_find_vm(mon, t->key))
                continue;
            /* Never ddmon's own listening ports. */
            if (own && ddm_monitor_is_own_port(mon, (guint16)port))
                continue;
            if (ddm_monitor_offer_target(mon, t))
                offered++;
            if (port == G_MAXUINT16)
                break;
        }
    }
    if (offered)
        g_debug("local scan: %u connection attempts", offered);
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
    local_scan_once(d);
    ddm_timer_init(&s->timer, local_tick, d);
    local_arm(d);
}

static void local_stop(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    ddm_timer_cancel(&s->timer);
    d->running = FALSE;
    ddm_monitor_forget_origin(d->monitor, "local");
}

static void local_free(DdmDiscovery *d)
{
    LocalScan *s = d->priv;

    ddm_timer_cancel(&s->timer);
    g_hash_table_destroy(s->targets);
    g_free(s);
    g_free(d);
}

static const DdmDiscoveryOps local_ops = {"local", local_start, local_stop, local_free};

DdmDiscovery *ddm_discovery_local_new(DdmMonitor *mon, const DdmConfig *config)
{
    DdmDiscovery *d;
    LocalScan *s;

    g_return_val_if_fail(mon != NULL && config != NULL, NULL);
    d = g_new0(DdmDiscovery, 1);
    s = g_new0(LocalScan, 1);
    s->targets = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                       (GDestroyNotify)ddm_target_unref);
    d->ops = &local_ops;
    d->monitor = mon;
    d->config = config;
    d->priv = s;
    return d;
}

/* ------------------------------------------------------------- --connect */

typedef struct ConnectList {
    GPtrArray *targets;   /* DdmTarget* (owned) */
    DdmTimer timer;       /* the next offer, armed while running */
} ConnectList;

/* Split "HOST:PORT[=DEBUGPORT]" ("[v6]:PORT" too) into host and port. */
static gboolean parse_connect(const char *spec, char **host, guint16 *port)
{
    char *s = g_strdup(spec);
    char *eq = strchr(s, '=');
    char *colon;
    guint64 p;
    gboolean ok = FALSE;

    if (eq)
        *eq = '\0';
    colon = strrchr(s, ':');
    if (colon && colon != s &&
        g_ascii_string_to_unsigned(colon + 1, 10, 1, 65535, &p, NULL)) {
        *colon = '\0';
        if (s[0] == '[' && colon[-1] == ']') {
            colon[-1] = '\0';
            *host = g_strdup(s + 1);
        } else {
            *host = g_strdup(s);
        }
        *port = (guint16)p;
        ok = **host != '\0';
        if (!ok)
            g_clear_pointer(host, g_free);
    }
    g_free(s);
    return ok;
}

static void connect_offer_all(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    for (guint i = 0; i < c->targets->len; i++) {
        DdmTarget *t = g_ptr_array_index(c->targets, i);
        if (!ddm_monitor_find_vm(d->monitor, t->key))
            ddm_monitor_offer_target(d->monitor, t);
    }
}

static void connect_tick(DdmTimer *t, gpointer ud)
{
    ddm_timer_arm(t, CONNECT_RETRY_MS); /* first: the offers may stop discovery */
    connect_offer_all(ud);
}

static void connect_start(DdmDiscovery *d)
{
    ConnectList *c = d->priv;
    if (ddm_timer_armed(&c->timer))
        return;
    d->running = TRUE;
    connect_offer_all(d);
    ddm_timer_init(&c->timer, connect_tick, d);
    ddm_timer_arm(&c->timer, CONNECT_RETRY_MS);
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
    return d;
}
