/* SPDX-License-Identifier: Apache-2.0
 *
 * The daemon (see daemon.h): builds the parts in order (views, VM table,
 * plugins, relay, discovery), routes what sessions report to the plugins
 * and the relay, and takes them down in the reverse order. The routing
 * rules live here and only here:
 *  - READY: the relay gives the VM a port, then plugins see DDM_VM_READY;
 *    PLAIN: the relay, then the plain listeners (ABI 1.2,
 *    register_plain_vm_listener); plugins' DDM listeners never hear of it.
 *  - a changed identity: the relay (selection by name), then plugins.
 *  - a close: plugins see DDM_VM_GONE only for a VM they saw READY (or
 *    plain listeners for a plain JVM they saw), before
 *    its views go; then the relay, which may ask for a fast reconnect.
 *  - DDM chunks go to their owners; JDWP traffic to the relay.
 *  - stopping: the plugins' stopping hooks (ABI 1.8) while the VMs are
 *    connected, a bounded flush of what they sent, a bounded wait for the
 *    VMs' answers (the loop runs: a stopped trace comes back and is
 *    saved), then the closes (ddm_daemon_stop_vms), then the rest goes
 *    (ddm_daemon_free).
 */
#include "core/daemon/daemon.h"

#include <errno.h>

#include "core/discovery/discovery.h"
#include "core/pluginhost/loader.h"

struct DdmDaemon {
    DdmConfig *config;        /* owned */
    DdmViews *views;          /* owned */
    DdmMonitor *monitor;      /* owned */
    DdmRegistry *registry;    /* owned */
    DdmRelay *relay;          /* owned, NULL without debugger ports */
    DdmDiscoverySet *discovery; /* owned */
    DdmVmsView *vms_view;     /* owned */
    /* Review rF 1: discovery's first round was found not done (at the
     * start, by a look, or a new --scan), and when a look then first found
     * it done: the sessions that round began count as begun then. */
    gboolean first_round_open;
    gint64 first_round_seen_us;
    /* the round was found done since the start or the last --scan: a later
     * "not done" (adb reconnecting, a device just plugged in) is discovery
     * catching up, not a first round (review rZ 1) */
    gboolean first_round_passed;
    gboolean vms_stopped;     /* ddm_daemon_stop_vms ran */
    gboolean stop_wait_cut;   /* ddm_daemon_stop_wait_cut: no more waiting for answers */
    DdmSessionEvents events;  /* daemon_events, less what has no receiver */
};

static void on_vm_up(gpointer ud, DdmVm *vm)
{
    DdmDaemon *d = ud;
    if (d->relay)
        ddm_relay_vm_up(d->relay, vm);
    if (!d->registry)
        return;
    if (vm->state == DDM_VM_STATE_PLAIN) {
        ddm_registry_plain_vm_event(d->registry, vm, DDM_VM_READY);
    } else if (vm->state == DDM_VM_STATE_READY) {
        if (vm->was_plain) /* a late HELO answer: no longer a plain JVM */
            ddm_registry_plain_vm_event(d->registry, vm, DDM_VM_GONE);
        ddm_registry_vm_event(d->registry, vm, DDM_VM_READY);
    }
}

static void on_vm_changed(gpointer ud, DdmVm *vm)
{
    DdmDaemon *d = ud;
    if (d->relay)
        ddm_relay_vm_changed(d->relay, vm);
    if (vm->state == DDM_VM_STATE_READY && d->registry)
        ddm_registry_vm_event(d->registry, vm, DDM_VM_CHANGED);
    else if (vm->state == DDM_VM_STATE_PLAIN && d->registry)
        ddm_registry_plain_vm_event(d->registry, vm, DDM_VM_CHANGED);
}

static gboolean on_vm_closed(gpointer ud, DdmVm *vm)
{
    DdmDaemon *d = ud;
    gboolean reconnect = FALSE;

    if (vm->was_ready && d->registry)
        ddm_registry_vm_event(d->registry, vm, DDM_VM_GONE);
    else if (vm->was_plain && d->registry)
        ddm_registry_plain_vm_event(d->registry, vm, DDM_VM_GONE);
    if (d->relay)
        reconnect = ddm_relay_vm_closed(d->relay, vm);
    ddm_views_destroy_vm(d->views, vm->target->key);
    return reconnect;
}

static void on_list_changed(gpointer ud, const char *key)
{
    DdmDaemon *d = ud;
    ddm_vms_view_schedule(d->vms_view, key);
}

static void on_ddm_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    DdmDaemon *d = ud;
    if (d->registry)
        ddm_registry_dispatch(d->registry, vm, ci, data, len);
}

static void on_tap_chunk(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                         size_t len)
{
    DdmDaemon *d = ud;
    if (d->registry)
        ddm_registry_tap_request(d->registry, vm, ci, data, len);
}

static int on_stream_begin(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, guint64 declared)
{
    DdmDaemon *d = ud;
    return d->registry ? ddm_registry_stream_begin(d->registry, vm, ci, declared) : 0;
}

static int on_stream_data(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                          size_t len)
{
    DdmDaemon *d = ud;
    return d->registry ? ddm_registry_stream_data(d->registry, vm, ci, data, len) : -ECANCELED;
}

static void on_stream_end(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, int status,
                          guint64 received)
{
    DdmDaemon *d = ud;
    if (d->registry)
        ddm_registry_stream_end(d->registry, vm, ci, status, received);
}

static void on_jdwp_command(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    DdmDaemon *d = ud;
    ddm_relay_command_from_vm(d->relay, vm, pkt);
}

static gboolean on_foreign_reply(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    DdmDaemon *d = ud;
    return d->relay ? ddm_relay_reply_from_vm(d->relay, vm, pkt) : FALSE;
}

static gboolean on_reply_head(gpointer ud, DdmVm *vm, const DdmJdwpPacket *head)
{
    DdmDaemon *d = ud;
    return d->relay ? ddm_relay_reply_head(d->relay, vm, head) : FALSE;
}

static void on_reply_part(gpointer ud, DdmVm *vm, const uint8_t *data, size_t len, gboolean last)
{
    DdmDaemon *d = ud;
    if (d->relay)
        ddm_relay_reply_part(d->relay, vm, data, len, last);
}

static gssize on_reply_splice(gpointer ud, DdmVm *vm, int fd, size_t max, gboolean *socket_empty)
{
    DdmDaemon *d = ud;
    return d->relay ? ddm_relay_reply_splice(d->relay, vm, fd, max, socket_empty) : -ENOTSUP;
}

static void on_output_drained(gpointer ud, DdmVm *vm)
{
    DdmDaemon *d = ud;
    if (d->relay)
        ddm_relay_vm_output_drained(d->relay, vm);
}

static const DdmSessionEvents daemon_events = {
    .vm_up = on_vm_up,
    .vm_changed = on_vm_changed,
    .vm_closed = on_vm_closed,
    .list_changed = on_list_changed,
    .ddm_chunk = on_ddm_chunk,
    .tap_chunk = on_tap_chunk,
    .jdwp_command = on_jdwp_command,
    .foreign_reply = on_foreign_reply,
    .reply_head = on_reply_head,
    .reply_part = on_reply_part,
    .reply_splice = on_reply_splice,
    /* straight to the relay, no hop (it asks only for a VM with relay state) */
    .reply_alone = ddm_relay_reply_alone,
    .output_drained = on_output_drained,
    .stream_begin = on_stream_begin,
    .stream_data = on_stream_data,
    .stream_end = on_stream_end,
};

DdmDaemon *ddm_daemon_new(DdmConfig *config, GError **error)
{
    DdmDaemon *d;
    GError *err = NULL;

    g_return_val_if_fail(config != NULL, NULL);
    d = g_new0(DdmDaemon, 1);
    d->config = config;
    d->views = ddm_views_new();
    d->events = daemon_events;
    if (!config->relay) /* JDWP commands from a VM are then dropped and counted by the session */
        d->events.jdwp_command = NULL;
    d->monitor = ddm_monitor_new(config, &d->events, d);
    /* The core views first, so they lead every list of views. */
    d->vms_view = ddm_vms_view_new(d->views, d->monitor);
    d->registry = ddm_registry_new(d->monitor, d->views, config);
    ddm_plugins_view_refresh(d->views, d->registry);
    if (!ddm_loader_load_all(d->registry, config, &err)) {
        g_propagate_error(error, err);
        ddm_daemon_free(d);
        return NULL;
    }
    ddm_plugins_view_refresh(d->views, d->registry);
    if (config->relay) {
        d->relay = ddm_relay_new(d->monitor, &err);
        if (!d->relay && err) {
            g_propagate_error(error, err);
            ddm_daemon_free(d);
            return NULL;
        }
        ddm_vms_view_set_relay(d->vms_view, d->relay);
    }
    d->discovery = ddm_discovery_set_new(d->monitor, config, d->views);
    ddm_discovery_set_reconcile(d->discovery, FALSE);
    return d;
}

void ddm_daemon_start(DdmDaemon *d)
{
    g_return_if_fail(d != NULL);
    ddm_discovery_set_start(d->discovery);
    /* a cold server: a wide scan's later slices, adb's first pid lists */
    d->first_round_passed = ddm_discovery_set_first_round_done(d->discovery);
    d->first_round_open = !d->first_round_passed;
}

/* TRUE while @vm may still answer a request of ours (a trace's stop, the
 * event before its answer included); a closed VM answers nothing more. */
static gboolean vm_waits(DdmVm *vm)
{
    return (vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN) &&
           !ddm_vm_requests_settled(vm);
}

/* The wait's deadline came: *@ud (a gboolean) says so. */
static gboolean wake_up(gpointer ud)
{
    *(gboolean *)ud = TRUE;
    return G_SOURCE_REMOVE;
}

/* After the stopping hooks: the loop runs until every VM that had a
 * request in flight then has answered what it will answer (a stopped
 * trace's MPSE event and the stop's answer: the profile plugin saves the
 * trace and answers its command), or until @budget_ms. Only those VMs are
 * waited for, but a poll a plugin sends one of them meanwhile is part of
 * what it must answer (ddm_vm_requests_settled looks at its newest
 * request): a plugin that keeps polling holds the wait up to @budget_ms.
 * Timers, discovery and the relay run too, but no session starts (the
 * monitor refuses new ones since ddm_daemon_stop_vms began: a VM found now
 * would miss the hooks); the control socket no longer accepts (server.c)
 * and the web part is gone. */
static void wait_answers(DdmDaemon *d, guint budget_ms)
{
    GPtrArray *vms = ddm_monitor_list_vms(d->monitor);
    GPtrArray *waiting = g_ptr_array_new_with_free_func((GDestroyNotify)ddm_vm_unref);
    const gint64 deadline = g_get_monotonic_time() + (gint64)budget_ms * 1000;
    const gboolean cut_before = d->stop_wait_cut; /* a one-shot look: no wait, nothing to say */

    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        if (vm_waits(vm))
            g_ptr_array_add(waiting, ddm_vm_ref(vm));
    }
    g_ptr_array_unref(vms);
    /* One timer for the whole wait, made after the deadline was taken, so
     * it fires at the deadline or later: each round of the loop below is
     * woken by it at the latest. */
    gboolean timed_out = FALSE;
    GSource *wake = NULL;
    if (waiting->len > 0 && !cut_before) {
        wake = g_timeout_source_new(budget_ms);
        g_source_set_callback(wake, wake_up, &timed_out, NULL);
        g_source_attach(wake, NULL);
    }
    while (waiting->len > 0 && !d->stop_wait_cut) {
        for (guint i = waiting->len; i-- > 0;)
            if (!vm_waits(g_ptr_array_index(waiting, i)))
                g_ptr_array_remove_index_fast(waiting, i);
        if (waiting->len == 0 || timed_out || g_get_monotonic_time() >= deadline)
            break;
        g_main_context_iteration(NULL, TRUE); /* one round of the loop */
    }
    if (wake != NULL) {
        g_source_destroy(wake);
        g_source_unref(wake);
    }
    if (waiting->len > 0 && d->stop_wait_cut && cut_before)
        g_debug("ddmon is stopping: %u VM%s closed without the answers to the last requests "
                "(no wait asked for)",
                waiting->len, waiting->len == 1 ? "" : "s");
    else if (waiting->len > 0 && d->stop_wait_cut)
        g_message("ddmon is stopping: %u VM%s closed without the answers to the last requests "
                  "(asked not to wait)",
                  waiting->len, waiting->len == 1 ? "" : "s");
    else if (waiting->len > 0)
        g_message("ddmon is stopping: %u VM%s did not answer the last requests within %u ms; "
                  "closed without their answers",
                  waiting->len, waiting->len == 1 ? "" : "s", budget_ms);
    g_ptr_array_unref(waiting);
}

void ddm_daemon_stop_vms(DdmDaemon *d)
{
    g_return_if_fail(d != NULL);
    if (d->vms_stopped)
        return;
    d->vms_stopped = TRUE;
    /* The plugins' stopping hooks (ABI 1.8) send their last requests while
     * every VM is still connected (a trace's stop), what the sockets do
     * not take at once gets a bounded wait, and so do the answers; then
     * the VM table refuses new sessions and closes every VM, each with a
     * FIN after what was written (plugins and the relay see each go, what
     * is still pending gets DDM_REPLY_VM_GONE: a command waiting for a VM
     * that did not answer ends now, while its client can hear it; a
     * stopping table reports no list changes, so the "vms" view is not
     * scheduled again). */
    ddm_monitor_refuse_new(d->monitor); /* a VM found from now on would miss the hooks */
    if (d->registry)
        ddm_registry_stopping(d->registry);
    ddm_monitor_flush_output(d->monitor, DDM_STOPPING_FLUSH_MS);
    wait_answers(d, DDM_STOPPING_WAIT_MS);
    ddm_monitor_stop(d->monitor, "ddmon is stopping");
}

void ddm_daemon_stop_wait_cut(DdmDaemon *d)
{
    g_return_if_fail(d != NULL);
    d->stop_wait_cut = TRUE;
}

void ddm_daemon_free(DdmDaemon *d)
{
    if (!d)
        return;
    /* The VMs get the plugins' last requests, answer them and close
     * (ddm_daemon_stop_vms, unless the server did it already), then
     * discovery stops, then the relay and the plugins go. */
    ddm_daemon_stop_vms(d);
    ddm_discovery_set_free(d->discovery);
    d->discovery = NULL;
    if (d->relay) {
        ddm_relay_free(d->relay);
        d->relay = NULL;
    }
    if (d->registry) {
        ddm_registry_free(d->registry);
        d->registry = NULL;
    }
    ddm_monitor_free(d->monitor);
    ddm_vms_view_free(d->vms_view);
    ddm_views_free(d->views);
    ddm_config_free(d->config);
    g_free(d);
}

DdmConfig *ddm_daemon_config(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    return d->config;
}

DdmMonitor *ddm_daemon_monitor(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    return d->monitor;
}

DdmRegistry *ddm_daemon_registry(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    return d->registry;
}

DdmViews *ddm_daemon_views(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    return d->views;
}

DdmRelay *ddm_daemon_relay(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    return d->relay;
}

gboolean ddm_daemon_set_scan(DdmDaemon *d, const char *spec, GError **error)
{
    g_return_val_if_fail(d != NULL && spec != NULL, FALSE);
    if (!ddm_config_set_scan(d->config, spec, error))
        return FALSE;
    ddm_discovery_set_reconcile(d->discovery, TRUE);
    /* a spec that starts a module: its round's sessions are waited for
     * again; one that starts none (the same spec, none) moves nothing
     * (review rZ 3) */
    if (!ddm_discovery_set_first_round_done(d->discovery)) {
        d->first_round_open = TRUE;
        d->first_round_passed = FALSE;
    }
    return TRUE;
}

gboolean ddm_daemon_vm_list_complete(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, TRUE);
    if (!ddm_discovery_set_first_round_done(d->discovery) ||
        !ddm_monitor_sessions_settled(d->monitor))
        return FALSE;
    /* Someone waits for the list: the coalesced rebuild (at most every
     * 100 ms) goes out now rather than at its timer. */
    ddm_vms_view_flush(d->vms_view);
    return TRUE;
}

void ddm_daemon_vm_list_fresh(DdmDaemon *d)
{
    g_return_if_fail(d != NULL);
    ddm_vms_view_flush(d->vms_view);
}

gboolean ddm_daemon_look_settled(DdmDaemon *d)
{
    return ddm_daemon_look_settled_since(d, G_MAXINT64);
}

gboolean ddm_daemon_look_settled_since(DdmDaemon *d, gint64 since_us)
{
    g_return_val_if_fail(d != NULL, TRUE);
    if (!d->registry)
        return ddm_daemon_settled(d);
    if (!ddm_discovery_set_first_round_done(d->discovery)) {
        if (!d->first_round_passed)
            d->first_round_open = TRUE;
        return FALSE;
    }
    d->first_round_passed = TRUE;
    /* Review rF 1: a cold server's first round begins its sessions after
     * the request came in (adb's first pid list, a wide scan's later
     * slices): they are waited for, as begun when a look found the round
     * done (a look that comes long after the round ended may so wait for
     * sessions begun after it, up to DDM_FIRST_LOOK_MS). A round found done
     * at the start moves nothing, nor does discovery catching up later. */
    if (d->first_round_open) {
        d->first_round_open = FALSE;
        d->first_round_seen_us = g_get_monotonic_time();
    }
    since_us = MAX(since_us, d->first_round_seen_us);
    gboolean settled = TRUE; /* every VM is asked, so that the fences go out together */
    g_autoptr(GPtrArray) vms = ddm_monitor_list_vms(d->monitor);
    for (guint i = 0; i < vms->len; i++)
        if (!ddm_registry_look_vm_settled_since(d->registry, g_ptr_array_index(vms, i), since_us))
            settled = FALSE;
    if (settled)
        ddm_vms_view_flush(d->vms_view); /* as ddm_daemon_vm_list_complete */
    return settled;
}

gboolean ddm_daemon_settled(DdmDaemon *d)
{
    g_return_val_if_fail(d != NULL, TRUE);
    if (!ddm_daemon_vm_list_complete(d))
        return FALSE;
    /* The plugins' first requests (sent at DDM_VM_READY: the views'
     * first fills), and FEAT, are answered, timed out or will never be
     * answered. Every VM is asked, so that the fences go out together. */
    gboolean settled = TRUE;
    g_autoptr(GPtrArray) vms = ddm_monitor_list_vms(d->monitor);
    for (guint i = 0; i < vms->len; i++)
        if (!ddm_vm_requests_settled(g_ptr_array_index(vms, i)))
            settled = FALSE;
    return settled;
}
