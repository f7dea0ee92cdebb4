/* SPDX-License-Identifier: Apache-2.0
 *
 * Discovery through the adb server (discovery.h). One socket stays open on
 * host:track-devices; each update is the full device list. Every device in
 * state "device" gets its own socket with host:transport:SERIAL + a
 * tracking service whose updates are the full list: new pids are offered
 * to the monitor as adb targets, pids that disappear are forgotten.
 * Tracking service, chosen once per device (and again after it was offline
 * or detached): track-app (API 31+, protobuf AppProcesses with debuggable/
 * profileable flags) is tried first; if it answers FAIL (older adbd) or
 * its stream ends before the first update, track-jdwp (text pid list)
 * is used instead; a malformed track-app update also switches the device
 * to track-jdwp for good. With track-app only debuggable processes are
 * offered as VMs; profileable-only ones are listed, never connected. Pids still
 * listed but not connected (a FAIL on jdwp:PID because another tool holds
 * the VM) are offered again every scan interval, or at the end of the
 * monitor's per-key backoff when that is later (the timer sleeps until
 * the earliest of the waiting pids' backoffs ends). Which listed pids have no
 * session is kept per device as the monitor tells of sessions starting and
 * ending (ddm_monitor_watch_keys): the re-offer timer visits only those,
 * and is not armed at all while every listed VM is connected (an idle
 * server with 1,000 VMs through adb wakes for none of them).
 * The adb server is never killed or restarted; when none answers at start,
 * `adb start-server` is spawned once (argv, no shell) unless --no-adb-start
 * (never after a server answered once: the user stopped it), and
 * the connection is retried with backoff (250 ms doubling to 5 s). A server
 * that dies takes its devices' VMs with it; they come back with it.
 * Publishes the global views "devices" (serial, state, VMs, tracking
 * service, debuggable/profileable counts) and "device-processes" (every
 * process track-app lists: flags, architecture, name; none for track-jdwp
 * devices).
 */
#include "core/discovery/discovery.h"

#include <stdlib.h>
#include <string.h>

#include "core/loop/timer.h"
#include "core/transport/adb_conn.h"
#include "core/transport/adb_target.h"

#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 5000
#define TRACK_MAX_FRAME DDM_ADB_MAX_FRAME

typedef struct AdbDiscovery AdbDiscovery;

typedef enum { TRACK_UNKNOWN = 0, TRACK_APP, TRACK_JDWP } Tracking;

typedef struct {
    AdbDiscovery *ad;
    char *serial;
    char *state;
    Tracking tracking;       /* chosen service; UNKNOWN until track-app sent an
                                update, or track-jdwp opened after track-app failed */
    Tracking opening;        /* the service of conn / stream */
    gboolean got_update;     /* stream delivered its first update */
    char *fallback_why;      /* why track-jdwp is being tried instead of track-app */
    DdmAdbConn *conn;        /* tracking service being opened */
    DdmAdbStream *stream;    /* its updates */
    GArray *pids;            /* sorted debuggable pids, as last listed */
    GArray *apps;            /* DdmAdbApp by pid, as last listed (track-app only) */
    DdmTimer retry_timer;    /* re-open the tracking service */
    guint backoff_ms;
    DdmTimer reoffer_timer;  /* offer the waiting pids again; armed while there are some */
    GHashTable *waiting;     /* GUINT_TO_POINTER(pid): listed, no session (a set) */
    char *last_error;
} Device;

struct AdbDiscovery {
    DdmDiscovery base;
    DdmAdbServerAddr addr;
    char *addr_str;
    DdmAdbConn *conn;        /* track-devices being opened */
    DdmAdbStream *stream;
    DdmTimer retry_timer;
    guint backoff_ms;
    gboolean spawned_adb;    /* `adb start-server` was run once */
    gboolean ever_connected; /* a server answered once: never start one after that */
    gboolean outage_logged;
    gboolean got_devices;    /* the track-devices stream delivered a device list */
    GHashTable *devices;     /* serial -> Device* */
    ddm_view *view;          /* "devices" */
    ddm_view *apps_view;     /* "device-processes" */
    DdmTimer reap_timer;     /* zero-delay: frees dead_streams */
    GPtrArray *dead_streams; /* closed streams, freed at the next iteration */
};

static void device_track(Device *dev);
static void device_open(Device *dev, Tracking service);

/* ------------------------------------------------------------ helpers */

static void reap_streams(AdbDiscovery *ad);

static void reap_later(DdmTimer *t, gpointer ud)
{
    (void)t;
    reap_streams(ud);
}

static void reap_streams(AdbDiscovery *ad)
{
    for (guint i = 0; i < ad->dead_streams->len; i++)
        ddm_adb_stream_free(ad->dead_streams->pdata[i]);
    g_ptr_array_set_size(ad->dead_streams, 0);
}

/* Streams cannot be freed inside their own callback. */
static void retire_stream(AdbDiscovery *ad, DdmAdbStream *s)
{
    if (!s)
        return;
    ddm_adb_stream_close(s);
    g_ptr_array_add(ad->dead_streams, s);
    if (!ddm_timer_armed(&ad->reap_timer)) {
        ddm_timer_init(&ad->reap_timer, reap_later, ad);
        ddm_timer_arm(&ad->reap_timer, 0);
    }
}

static guint next_backoff(guint *ms)
{
    guint now = *ms ? *ms : BACKOFF_MIN_MS;
    *ms = MIN(now * 2, BACKOFF_MAX_MS);
    return now;
}

static const char *tracking_name(Tracking t)
{
    return t == TRACK_APP ? "track-app" : t == TRACK_JDWP ? "track-jdwp" : NULL;
}

static void publish_apps(AdbDiscovery *ad, GList *serials)
{
    if (!ad->apps_view)
        return;
    ddm_view_begin(ad->apps_view);
    for (GList *l = serials; l; l = l->next) {
        Device *dev = g_hash_table_lookup(ad->devices, l->data);
        for (guint i = 0; i < dev->apps->len; i++) {
            const DdmAdbApp *a = &g_array_index(dev->apps, DdmAdbApp, i);
            g_autofree char *key = a->debuggable ? ddm_adb_vm_key(dev->serial, a->pid) : NULL;
            ddm_view_row(ad->apps_view);
            ddm_view_cell_str(ad->apps_view, dev->serial);
            ddm_view_cell_int(ad->apps_view, a->pid);
            ddm_view_cell_str(ad->apps_view, key);
            ddm_view_cell_bool(ad->apps_view, a->debuggable);
            ddm_view_cell_bool(ad->apps_view, a->profileable);
            ddm_view_cell_str(ad->apps_view, a->architecture[0] ? a->architecture : NULL);
            ddm_view_cell_str(ad->apps_view, a->process_name[0] ? a->process_name : NULL);
        }
    }
    ddm_view_commit(ad->apps_view);
}

static void publish_devices(AdbDiscovery *ad)
{
    if (!ad->view)
        return;
    ddm_view_begin(ad->view);
    GList *keys = g_list_sort(g_hash_table_get_keys(ad->devices), (GCompareFunc)strcmp);
    for (GList *l = keys; l; l = l->next) {
        Device *dev = g_hash_table_lookup(ad->devices, l->data);
        gint64 profileable = -1; /* track-jdwp does not say */
        if (dev->tracking == TRACK_APP) {
            profileable = 0;
            for (guint i = 0; i < dev->apps->len; i++)
                profileable += g_array_index(dev->apps, DdmAdbApp, i).profileable ? 1 : 0;
        }
        ddm_view_row(ad->view);
        ddm_view_cell_str(ad->view, dev->serial);
        ddm_view_cell_str(ad->view, dev->state);
        ddm_view_cell_int(ad->view, dev->pids ? dev->pids->len : 0);
        ddm_view_cell_str(ad->view, dev->last_error);
        ddm_view_cell_str(ad->view, tracking_name(dev->tracking));
        ddm_view_cell_int(ad->view, dev->pids ? dev->pids->len : 0);
        if (profileable >= 0)
            ddm_view_cell_int(ad->view, profileable);
        else
            ddm_view_cell_str(ad->view, NULL); /* unknown: shown as "-", null in JSON */
    }
    ddm_view_commit(ad->view);
    publish_apps(ad, keys);
    g_list_free(keys);
}

/* ------------------------------------------------------------ devices */

static void forget_device_vms(Device *dev, const char *why)
{
    if (!dev->pids)
        return;
    for (guint i = 0; i < dev->pids->len; i++) {
        g_autofree char *key = ddm_adb_vm_key(dev->serial, g_array_index(dev->pids, guint32, i));
        ddm_monitor_forget_target(dev->ad->base.monitor, key, why);
    }
    g_array_set_size(dev->pids, 0);
    g_array_set_size(dev->apps, 0);
    g_hash_table_remove_all(dev->waiting);
    ddm_timer_cancel(&dev->reoffer_timer);
}

static void device_untrack(Device *dev)
{
    if (dev->conn)
        ddm_adb_conn_cancel(dev->conn);
    dev->conn = NULL;
    retire_stream(dev->ad, dev->stream);
    dev->stream = NULL;
    ddm_timer_cancel(&dev->retry_timer);
    ddm_timer_cancel(&dev->reoffer_timer);
}

static void device_free(gpointer p)
{
    Device *dev = p;
    device_untrack(dev);
    if (dev->pids)
        g_array_unref(dev->pids);
    g_array_unref(dev->apps);
    g_hash_table_destroy(dev->waiting);
    g_free(dev->fallback_why);
    g_free(dev->serial);
    g_free(dev->state);
    g_free(dev->last_error);
    g_free(dev);
}

/* Offer @pid; a session that starts takes it off the waiting set
 * (adb_key_changed), and so does one that was there already (its end
 * will put it back). Returns when the monitor's backoff lets @pid be
 * offered again when that is what refused it, else 0. */
static gint64 offer_pid(Device *dev, guint32 pid)
{
    DdmMonitor *mon = dev->ad->base.monitor;
    DdmTarget *t = ddm_target_adb_new(&dev->ad->addr, dev->serial, pid);
    gint64 until = 0;
    if (!ddm_monitor_offer_target(mon, t)) {
        if (ddm_monitor_find_vm(mon, t->key))
            g_hash_table_remove(dev->waiting, GUINT_TO_POINTER(pid));
        else
            until = ddm_monitor_backoff_until(mon, t->key);
    }
    ddm_target_unref(t);
    return until;
}

static guint reoffer_ms(const Device *dev)
{
    return MAX(dev->ad->base.config->scan_interval_ms, 500u);
}

/* Offers the waiting pids again; armed again, while some wait, for the
 * earliest end of their backoffs, the interval at the least (review rD 5:
 * a pid waiting out a refusal's backoff, up to 30 s, woke the server every
 * interval for offers the monitor refused). */
static void on_reoffer(DdmTimer *t, gpointer ud)
{
    Device *dev = ud;
    guint n = 0;
    gint64 now = g_get_monotonic_time();
    gint64 next = G_MAXINT64;
    /* A copy: each offer that starts a session changes the set. */
    g_autofree gpointer *pids = (gpointer *)g_hash_table_get_keys_as_array(dev->waiting, &n);

    for (guint i = 0; i < n; i++) {
        guint32 pid = GPOINTER_TO_UINT(pids[i]);
        gint64 until = offer_pid(dev, pid);
        if (g_hash_table_contains(dev->waiting, GUINT_TO_POINTER(pid)))
            next = MIN(next, until); /* 0: not held back by a backoff */
    }
    if (g_hash_table_size(dev->waiting) > 0)
        ddm_timer_arm_at(t, MAX(next, now + (gint64)reoffer_ms(dev) * 1000));
}

/* @pid is listed and has no session: offer it again at the next interval
 * (sooner than the timer, if it waits for other pids' longer backoffs). */
static void waiting_add(Device *dev, guint32 pid)
{
    gint64 at = g_get_monotonic_time() + (gint64)reoffer_ms(dev) * 1000;
    g_hash_table_add(dev->waiting, GUINT_TO_POINTER(pid));
    if (!ddm_timer_armed(&dev->reoffer_timer)) {
        ddm_timer_init(&dev->reoffer_timer, on_reoffer, dev);
        ddm_timer_arm_at(&dev->reoffer_timer, at);
    } else if (ddm_timer_due(&dev->reoffer_timer) > at) {
        ddm_timer_arm_at(&dev->reoffer_timer, at);
    }
}

static int cmp_pid(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

/* Is @pid in the device's (sorted) list? O(log n). */
static gboolean pid_listed(const Device *dev, guint32 pid)
{
    return dev->pids && dev->pids->len &&
           bsearch(&pid, dev->pids->data, dev->pids->len, sizeof(guint32), cmp_pid) != NULL;
}

/* The monitor's word (ddm_monitor_watch_keys): an adb key got or lost its
 * session. A listed pid without one waits for the next re-offer. */
static void adb_key_changed(gpointer ud, const DdmTarget *target, DdmKeyChange change)
{
    AdbDiscovery *ad = ud;
    Device *dev;
    guint32 pid = target->pid_hint;

    if (change == DDM_KEY_ANSWERED || !target->device || !g_str_has_prefix(target->key, "adb:"))
        return; /* still held; a TCP port */
    dev = g_hash_table_lookup(ad->devices, target->device);
    if (!dev)
        return;
    if (change == DDM_KEY_HELD)
        g_hash_table_remove(dev->waiting, GUINT_TO_POINTER(pid));
    else if (pid_listed(dev, pid))
        waiting_add(dev, pid);
}

/* Make @now (transfer full: sorted debuggable pids) the device's VM list. */
static void apply_pids(Device *dev, GArray *now)
{
    GArray *added = g_array_new(FALSE, FALSE, sizeof(guint32));
    GArray *removed = g_array_new(FALSE, FALSE, sizeof(guint32));
    ddm_adb_diff_pids(dev->pids, now, added, removed);
    g_array_unref(dev->pids);
    dev->pids = now;
    for (guint i = 0; i < removed->len; i++) {
        guint32 pid = g_array_index(removed, guint32, i);
        g_autofree char *key = ddm_adb_vm_key(dev->serial, pid);
        g_autofree char *why = g_strdup_printf("pid %u is no longer listed by device %s", pid, dev->serial);
        g_hash_table_remove(dev->waiting, GUINT_TO_POINTER(pid));
        ddm_monitor_forget_target(dev->ad->base.monitor, key, why);
    }
    for (guint i = 0; i < added->len; i++) {
        guint32 pid = g_array_index(added, guint32, i);
        waiting_add(dev, pid); /* until its session starts: the offer below, or a later one */
        offer_pid(dev, pid);
    }
    if (added->len || removed->len)
        g_debug("adb: device %s: %u VMs (+%u -%u)", dev->serial, now->len, added->len, removed->len);
    g_array_unref(added);
    g_array_unref(removed);
    publish_devices(dev->ad);
}

/* The first update proves the stream works: the next failure starts a fresh backoff. */
static void stream_delivered(Device *dev)
{
    if (dev->got_update)
        return;
    dev->got_update = TRUE;
    dev->backoff_ms = 0;
}

static void choose_tracking(Device *dev, Tracking t, const char *why)
{
    if (dev->tracking == t)
        return;
    dev->tracking = t;
    if (t == TRACK_APP)
        g_message("adb: device %s: tracking apps with track-app (debuggable and profileable flags)", dev->serial);
    else
        g_message("adb: device %s: tracking VMs with track-jdwp (track-app: %s)", dev->serial, why);
}

/* track-app is not usable on this device (yet): use track-jdwp now. */
static void fall_back_to_jdwp(Device *dev, const char *why)
{
    g_debug("adb: device %s: track-app: %s; trying track-jdwp", dev->serial, why);
    g_array_set_size(dev->apps, 0);
    g_free(dev->fallback_why);
    dev->fallback_why = g_strdup(why);
    device_open(dev, TRACK_JDWP);
}

static void on_pids(const char *payload, size_t len, gpointer ud)
{
    Device *dev = ud;
    stream_delivered(dev);
    apply_pids(dev, ddm_adb_parse_pids(payload, len));
}

static void on_apps(const char *payload, size_t len, gpointer ud)
{
    Device *dev = ud;
    GArray *apps = NULL;
    if (!ddm_adb_parse_app_processes((const guint8 *)payload, len, &apps)) {
        g_warning("adb: device %s sent a track-app update that is not an AppProcesses message (%zu bytes); "
                  "using track-jdwp for it", dev->serial, len);
        retire_stream(dev->ad, dev->stream);
        dev->stream = NULL;
        choose_tracking(dev, TRACK_JDWP, "it sent a malformed update"); /* for good */
        fall_back_to_jdwp(dev, "it sent a malformed update");
        return;
    }
    stream_delivered(dev);
    choose_tracking(dev, TRACK_APP, NULL);
    g_array_unref(dev->apps);
    dev->apps = apps;
    apply_pids(dev, ddm_adb_app_debuggable_pids(apps));
}

static void on_device_retry(DdmTimer *t, gpointer ud)
{
    (void)t;
    device_track(ud);
}

static void device_retry_later(Device *dev)
{
    if (!dev->ad->base.running || strcmp(dev->state, "device") != 0 ||
        ddm_timer_armed(&dev->retry_timer))
        return;
    ddm_timer_init(&dev->retry_timer, on_device_retry, dev);
    ddm_timer_arm(&dev->retry_timer, next_backoff(&dev->backoff_ms));
}

static void on_track_closed(const char *reason, gpointer ud)
{
    Device *dev = ud;
    retire_stream(dev->ad, dev->stream);
    dev->stream = NULL;
    if (dev->opening == TRACK_APP && !dev->got_update && dev->tracking == TRACK_UNKNOWN) {
        g_autofree char *why = g_strdup_printf("the stream ended before its first update (%s)", reason);
        fall_back_to_jdwp(dev, why);
        return;
    }
    g_message("adb: %s of device %s ended (%s); retrying", tracking_name(dev->opening), dev->serial, reason);
    device_retry_later(dev);
}

static void on_track_open(int fd, GBytes *extra, const GError *error, gpointer ud)
{
    Device *dev = ud;
    dev->conn = NULL;
    if (fd < 0) {
        /* FAIL: adbd does not know track-app (adb 29 reports "closed"), or
         * the transport failed; in the latter case track-jdwp fails too and
         * the next try starts with track-app again. */
        if (dev->opening == TRACK_APP && dev->tracking == TRACK_UNKNOWN &&
            g_error_matches(error, DDM_ADB_ERROR, DDM_ADB_ERROR_FAIL)) {
            g_autofree char *why = g_strdup_printf("refused: %s", error->message);
            fall_back_to_jdwp(dev, why);
            return;
        }
        g_free(dev->last_error);
        dev->last_error = g_strdup(error->message);
        g_message("adb: cannot track VMs of device %s (%s): %s", dev->serial, tracking_name(dev->opening),
                  error->message);
        publish_devices(dev->ad);
        device_retry_later(dev);
        return;
    }
    g_clear_pointer(&dev->last_error, g_free);
    if (dev->opening == TRACK_JDWP && dev->tracking == TRACK_UNKNOWN)
        choose_tracking(dev, TRACK_JDWP, dev->fallback_why ? dev->fallback_why : "not available");
    dev->got_update = FALSE;
    dev->stream = ddm_adb_stream_new(fd, extra, TRACK_MAX_FRAME, dev->opening == TRACK_APP ? on_apps : on_pids,
                                     on_track_closed, dev);
    publish_devices(dev->ad);
}

static void device_open(Device *dev, Tracking service)
{
    if (dev->conn || dev->stream)
        return;
    g_autofree char *transport = g_strdup_printf("host:transport:%s", dev->serial);
    const char *requests[] = {transport, tracking_name(service), NULL};
    dev->opening = service;
    dev->conn = ddm_adb_conn_open(&dev->ad->addr, requests, 5000, on_track_open, dev);
}

/* (Re)open the device's tracking service: the chosen one, else track-app first. */
static void device_track(Device *dev)
{
    device_open(dev, dev->tracking == TRACK_JDWP ? TRACK_JDWP : TRACK_APP);
}

static void on_devices(const char *payload, size_t len, gpointer ud)
{
    AdbDiscovery *ad = ud;
    GPtrArray *list = ddm_adb_parse_devices(payload, len);
    ad->got_devices = TRUE;
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < list->len; i++) {
        DdmAdbDevice *d = list->pdata[i];
        g_hash_table_add(seen, d->serial);
        Device *dev = g_hash_table_lookup(ad->devices, d->serial);
        if (!dev) {
            dev = g_new0(Device, 1);
            dev->ad = ad;
            dev->serial = g_strdup(d->serial);
            dev->state = g_strdup(d->state);
            dev->pids = g_array_new(FALSE, FALSE, sizeof(guint32));
            dev->apps = g_array_new(FALSE, FALSE, sizeof(DdmAdbApp));
            dev->waiting = g_hash_table_new(g_direct_hash, g_direct_equal);
            g_hash_table_insert(ad->devices, dev->serial, dev);
            g_message("adb: device %s attached (%s)", dev->serial, dev->state);
            if (strcmp(dev->state, "device") == 0)
                device_track(dev);
        } else if (strcmp(dev->state, d->state) != 0) {
            g_message("adb: device %s is now %s (was %s)", dev->serial, d->state, dev->state);
            gboolean was = strcmp(dev->state, "device") == 0, is = strcmp(d->state, "device") == 0;
            g_free(dev->state);
            dev->state = g_strdup(d->state);
            if (was && !is) {
                device_untrack(dev);
                forget_device_vms(dev, "its device is no longer online");
                dev->tracking = TRACK_UNKNOWN; /* it may come back with another system */
            } else if (!was && is) {
                dev->backoff_ms = 0;
                device_track(dev);
            }
        }
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ad->devices);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        Device *dev = v;
        if (!g_hash_table_contains(seen, k)) {
            g_message("adb: device %s detached", dev->serial);
            device_untrack(dev);
            forget_device_vms(dev, "its device was detached");
            g_hash_table_iter_remove(&it);
        }
    }
    g_hash_table_destroy(seen);
    g_ptr_array_unref(list);
    publish_devices(ad);
}

static void drop_all_devices(AdbDiscovery *ad, const char *why)
{
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ad->devices);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        device_untrack(v);
        forget_device_vms(v, why);
    }
    g_hash_table_remove_all(ad->devices);
    publish_devices(ad);
}

/* ------------------------------------------------------------ server */

static void server_connect(AdbDiscovery *ad);

static void on_server_retry(DdmTimer *t, gpointer ud)
{
    (void)t;
    server_connect(ud);
}

static void server_retry_later(AdbDiscovery *ad)
{
    if (ad->base.running && !ddm_timer_armed(&ad->retry_timer)) {
        ddm_timer_init(&ad->retry_timer, on_server_retry, ad);
        ddm_timer_arm(&ad->retry_timer, next_backoff(&ad->backoff_ms));
    }
}

static void on_adb_start_exit(GPid pid, gint status, gpointer ud)
{
    GError *err = NULL;
    if (!g_spawn_check_wait_status(status, &err)) {
        g_warning("adb: 'adb start-server' failed: %s", err->message);
        g_error_free(err);
    } else {
        g_message("adb: 'adb start-server' finished");
    }
    g_spawn_close_pid(pid);
}

static void spawn_adb_server(AdbDiscovery *ad)
{
    const DdmConfig *cfg = ad->base.config;
    const char *adb = cfg->adb_path ? cfg->adb_path : "adb";
    char *argv[] = {(char *)adb, (char *)"start-server", NULL};
    GPid pid;
    GError *err = NULL;
    ad->spawned_adb = TRUE;
    g_message("adb: no adb server at %s; starting one with '%s start-server'", ad->addr_str, adb);
    if (!g_spawn_async(NULL, argv, NULL,
                       G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                           G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, &pid, &err)) {
        g_warning("adb: cannot run '%s start-server': %s (Android devices will appear once an "
                  "adb server runs at %s)", adb, err->message, ad->addr_str);
        g_error_free(err);
        return;
    }
    g_child_watch_add(pid, on_adb_start_exit, NULL);
}

static void on_devices_closed(const char *reason, gpointer ud)
{
    AdbDiscovery *ad = ud;
    g_warning("adb: lost the adb server at %s (%s); its devices are gone until it is back", ad->addr_str, reason);
    retire_stream(ad, ad->stream);
    ad->stream = NULL;
    drop_all_devices(ad, "the adb server went away");
    ad->outage_logged = TRUE;
    server_retry_later(ad);
}

static void on_track_devices_open(int fd, GBytes *extra, const GError *error, gpointer ud)
{
    AdbDiscovery *ad = ud;
    ad->conn = NULL;
    if (fd < 0) {
        const DdmConfig *cfg = ad->base.config;
        /* Start a server only if none ever answered: a server that went
         * away was stopped by someone (adb kill-server), not ours to undo. */
        if (g_error_matches(error, DDM_ADB_ERROR, DDM_ADB_ERROR_NO_SERVER) && cfg->adb_start &&
            !ad->spawned_adb && !ad->ever_connected) {
            spawn_adb_server(ad);
        } else if (!ad->outage_logged) {
            g_message("adb: no adb server at %s (%s); retrying in the background", ad->addr_str, error->message);
        } else {
            g_debug("adb: server at %s: %s", ad->addr_str, error->message);
        }
        ad->outage_logged = TRUE;
        server_retry_later(ad);
        return;
    }
    g_message("adb: tracking devices through the adb server at %s", ad->addr_str);
    ad->ever_connected = TRUE;
    ad->outage_logged = FALSE;
    ad->backoff_ms = 0;
    ad->got_devices = FALSE;
    ad->stream = ddm_adb_stream_new(fd, extra, TRACK_MAX_FRAME, on_devices, on_devices_closed, ad);
}

static void server_connect(AdbDiscovery *ad)
{
    if (!ad->base.running || ad->conn || ad->stream)
        return;
    const char *requests[] = {"host:track-devices", NULL};
    ad->conn = ddm_adb_conn_open(&ad->addr, requests, 5000, on_track_devices_open, ad);
}

/* ------------------------------------------------------------ module */

static void adb_start(DdmDiscovery *d)
{
    AdbDiscovery *ad = (AdbDiscovery *)d;
    if (d->running)
        return;
    d->running = TRUE;
    if (!ad->view) {
        static const ddm_column cols[] = {
            {"serial", DDM_VAL_STR, NULL},
            {"state", DDM_VAL_STR, NULL},
            {"vms", DDM_VAL_INT, NULL},
            {"error", DDM_VAL_STR, NULL},
            {"tracking", DDM_VAL_STR, NULL},     /* track-app | track-jdwp | null: not chosen yet */
            {"debuggable", DDM_VAL_INT, NULL},   /* debuggable processes listed (offered as VMs) */
            {"profileable", DDM_VAL_INT, NULL},  /* profileable processes listed; -1 = not known (track-jdwp) */
        };
        ad->view = ddm_views_create(d->views, "ddmon", NULL, "devices", DDM_VIEW_TABLE,
                                    "Android devices (adb)");
        if (ad->view)
            ddm_view_set_columns(ad->view, cols, G_N_ELEMENTS(cols));
    }
    if (!ad->apps_view) {
        static const ddm_column cols[] = {
            {"serial", DDM_VAL_STR, NULL},
            {"pid", DDM_VAL_INT, NULL},
            {"vm", DDM_VAL_STR, NULL},           /* the VM key; null when not debuggable */
            {"debuggable", DDM_VAL_BOOL, NULL},
            {"profileable", DDM_VAL_BOOL, NULL},
            {"architecture", DDM_VAL_STR, NULL},
            {"process", DDM_VAL_STR, NULL},
        };
        ad->apps_view = ddm_views_create(d->views, "ddmon", NULL, "device-processes", DDM_VIEW_TABLE,
                                         "Processes listed by track-app on Android devices (adb)");
        if (ad->apps_view)
            ddm_view_set_columns(ad->apps_view, cols, G_N_ELEMENTS(cols));
    }
    server_connect(ad);
}

static void adb_stop(DdmDiscovery *d)
{
    AdbDiscovery *ad = (AdbDiscovery *)d;
    if (!d->running)
        return;
    d->running = FALSE;
    if (ad->conn)
        ddm_adb_conn_cancel(ad->conn);
    ad->conn = NULL;
    retire_stream(ad, ad->stream);
    ad->stream = NULL;
    ddm_timer_cancel(&ad->retry_timer);
    drop_all_devices(ad, "adb discovery was switched off");
    ddm_monitor_forget_origin(d->monitor, "adb");
    if (ad->view) {
        ddm_views_destroy(d->views, ad->view);
        ad->view = NULL;
    }
    if (ad->apps_view) {
        ddm_views_destroy(d->views, ad->apps_view);
        ad->apps_view = NULL;
    }
}

static void adb_free(DdmDiscovery *d)
{
    AdbDiscovery *ad = (AdbDiscovery *)d;
    adb_stop(d);
    ddm_monitor_unwatch_keys(d->monitor, adb_key_changed, ad);
    g_hash_table_destroy(ad->devices);
    ddm_timer_cancel(&ad->reap_timer);
    reap_streams(ad);
    g_ptr_array_unref(ad->dead_streams);
    ddm_adb_server_addr_clear(&ad->addr);
    g_free(ad->addr_str);
    g_free(ad);
}

/* First round over: the server's device list came (or no server answers
 * and none is starting), and every online device's tracking service gave
 * its first pid list (or failed and waits for a retry). */
static gboolean adb_first_round_done(DdmDiscovery *d)
{
    AdbDiscovery *ad = (AdbDiscovery *)d;
    if (ad->conn != NULL)
        return FALSE;
    if (ad->stream == NULL) /* no server now; one we started may still come up */
        return !(ad->spawned_adb && !ad->ever_connected);
    if (!ad->got_devices)
        return FALSE;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ad->devices);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        const Device *dev = v;
        if (strcmp(dev->state, "device") == 0 && !dev->got_update &&
            (dev->conn != NULL || dev->stream != NULL))
            return FALSE;
    }
    return TRUE;
}

static const DdmDiscoveryOps adb_discovery_ops = {
    .name = "adb",
    .start = adb_start,
    .stop = adb_stop,
    .free = adb_free,
    .first_round_done = adb_first_round_done,
};

DdmDiscovery *ddm_discovery_adb_new(DdmMonitor *mon, const DdmConfig *config, DdmViews *views)
{
    AdbDiscovery *ad = g_new0(AdbDiscovery, 1);
    ad->base.ops = &adb_discovery_ops;
    ad->base.monitor = mon;
    ad->base.config = config;
    ad->base.views = views;
    ad->devices = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, device_free);
    ad->dead_streams = g_ptr_array_new();
    GError *err = NULL;
    if (!ddm_adb_server_addr(g_getenv("ADB_SERVER_SOCKET"), g_getenv("ANDROID_ADB_SERVER_PORT"), &ad->addr, &err)) {
        g_warning("adb: %s; using 127.0.0.1:%d", err->message, DDM_ADB_DEFAULT_PORT);
        g_error_free(err);
        ddm_adb_server_addr(NULL, NULL, &ad->addr, NULL);
    }
    ad->addr_str = ddm_adb_server_addr_to_string(&ad->addr);
    ddm_monitor_watch_keys(mon, adb_key_changed, ad);
    return (DdmDiscovery *)ad;
}
