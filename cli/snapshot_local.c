/* SPDX-License-Identifier: Apache-2.0
 *
 * ddm_snapshot_run_local() (snapshot.h): the snapshot with a monitor built
 * in this process, its view store feeding the collector and --gc run
 * through its registry. It is settled as soon as the daemon is
 * (ddm_daemon_settled): discovery's first round done, every VM through
 * its handshake and the plugins' first requests answered.
 *
 * A VM takes one debugger at a time. One that another debugger (such as a
 * ddmon server) holds, as the monitor tells (ddm_monitor_held: it closed
 * the connection during the JDWP handshake, as ddmon-simvm's and Android
 * VMs do, or refused a named target's connect, as OpenJDK's jdwp agent
 * does, and a connection to its port is established on this host or it
 * is a named adb target), is listed "busy" (the monitor's report_held,
 * scanned ports too) rather than left out, and one line on stderr names
 * them and, when a server holds the control socket's lock
 * (opt->server_socket), that server and the way out. A port that closes
 * at once with nobody connected to it is no VM: left out, as a server
 * leaves it out. A scanned JVM that refuses says nothing, so with a server
 * and no VM that answered at all one line names the server.
 * The monitor's "session closed" lines are a server's log: with
 * report_held on the monitor logs a normal close at debug level (shown
 * with --verbose); every other line, the snapshot's own notices too, as
 * before.
 */
#include <build-config.h>

#include <stdio.h>
#include <string.h>

#include "cli/snapshot-private.h"
#include "core/daemon/daemon.h"
#include "core/pluginhost/registry.h"
#include "core/views/views.h"

static void on_local_change(ddm_view *view, DdmViewChange change, gpointer ud)
{
    /* Only the timing matters here: the content is read from the store at
     * the end, so no JSON is built per commit. */
    gboolean is_vms = ddm_view_vm_key(view) == NULL && strcmp(ddm_view_name(view), "vms") == 0;
    g_autoptr(JsonNode) vms = is_vms && change != DDM_VIEW_REMOVED ? ddm_view_to_json(view, FALSE)
                                                                   : NULL;
    ddm_snapshot_note_change(ud, change == DDM_VIEW_REMOVED, ddm_view_vm_key(view),
                             ddm_view_name(view),
                             change == DDM_VIEW_ADDED ? 0 : (gint64)ddm_view_version(view), vms);
}

static void local_cmd_done(ddm_cmd_status status, const char *message, ddm_view *result,
                           gpointer ud)
{
    g_autoptr(JsonNode) json = result != NULL ? ddm_view_to_json(result, FALSE) : NULL;
    ddm_snapshot_call_done(ud, status == DDM_CMD_OK, message, json);
}

/* Run the call's command ("gc KEY", "hprof --out-dir=DIR KEY") as a
 * client's command runs: through the registry. */
static void local_send(DdmSnapshotCollector *col, DdmSnapshotCall *call)
{
    DdmDaemon *daemon = col->source;
    if (!ddm_registry_run_command(ddm_daemon_registry(daemon), (int)g_strv_length(call->argv),
                                  (const char *const *)call->argv, local_cmd_done, call)) {
        g_autofree char *why = g_strdup_printf("no plugin provides the '%s' command any more",
                                               call->argv[0]);
        ddm_snapshot_call_done(call, FALSE, why, NULL);
    }
}

static gboolean local_has_command(const char *name, gpointer ud)
{
    DdmDaemon *daemon = ud;
    if (ddm_daemon_registry(daemon) == NULL)
        return FALSE;
    g_autoptr(GArray) cmds = ddm_registry_commands(ddm_daemon_registry(daemon));
    for (guint i = 0; i < cmds->len; i++)
        if (g_strcmp0(g_array_index(cmds, DdmCommandInfo, i).name, name) == 0)
            return TRUE;
    return FALSE;
}

typedef struct HeldKeys {
    DdmMonitor *mon; /* borrowed */
    GPtrArray *keys; /* the "busy" targets' keys (borrowed from the monitor) */
} HeldKeys;

static void add_held(const DdmTarget *target, const char *last_error, gpointer ud)
{
    (void)last_error;
    HeldKeys *held = ud;
    if (ddm_monitor_held(held->mon, target->key))
        g_ptr_array_add(held->keys, target->key);
}

/* Whether a VM answered the JDWP handshake (listed helo, ready or plain). */
static gboolean any_answered(DdmMonitor *mon)
{
    g_autoptr(GPtrArray) vms = ddm_monitor_listed_vms(mon);
    for (guint i = 0; i < vms->len; i++) {
        const DdmVm *vm = g_ptr_array_index(vms, i);
        if (vm->state >= DDM_VM_STATE_HELO && vm->state < DDM_VM_STATE_CLOSED)
            return TRUE;
    }
    return FALSE;
}

#define HELD_NAMED_MAX 4 /* keys named in the line; the rest counted */

/* One line on stderr for the VMs listed "busy", if any: which, why, and
 * with a server running on @server_socket what to do instead; with such a
 * server and no VM that answered, one line naming the server. */
static void say_held(DdmMonitor *mon, const char *server_socket)
{
    HeldKeys held = {mon, g_ptr_array_new()};
    ddm_monitor_foreach_retrying(mon, add_held, &held);
    guint n = held.keys->len;
    if (n > 0) {
        GString *s = g_string_new(NULL);
        g_string_printf(s, "ddmon: snapshot --in-process: %u VM%s (", n, n == 1 ? "" : "s");
        for (guint i = 0; i < n && i < HELD_NAMED_MAX; i++)
            g_string_append_printf(s, "%s%s", i > 0 ? ", " : "",
                                   (const char *)g_ptr_array_index(held.keys, i));
        if (n > HELD_NAMED_MAX)
            g_string_append_printf(s, " and %u more", n - HELD_NAMED_MAX);
        g_string_append_printf(s, ") refused the connection or closed it during the JDWP "
                                  "handshake, listed as \"busy\": ");
        if (server_socket != NULL)
            g_string_append_printf(s, "a server runs on %s and holds its VMs' connections (a VM "
                                      "takes one debugger at a time); plain 'ddmon snapshot' "
                                      "asks that server ('ddmon kill-server' first for an "
                                      "in-process one)",
                                   server_socket);
        else
            g_string_append(s, "another debugger holds them (a VM takes one at a time)");
        g_printerr("%s\n", s->str);
        g_string_free(s, TRUE);
    } else if (server_socket != NULL && !any_answered(mon)) {
        /* Not every VM says it is held: a JVM whose debugger is attached
         * (OpenJDK's jdwp agent) refuses a second connection, so the scan
         * finds nothing there. */
        g_printerr("ddmon: snapshot --in-process: no VM answered; a server runs on %s and may "
                   "hold the VMs' connections (a VM takes one debugger at a time); plain "
                   "'ddmon snapshot' asks that server ('ddmon kill-server' first for an "
                   "in-process one)\n",
                   server_socket);
    }
    g_ptr_array_unref(held.keys);
}

static gboolean local_settled(DdmSnapshotCollector *col)
{
    return ddm_daemon_settled(col->source);
}

int ddm_snapshot_run_local(DdmConfig *config, const DdmSnapshotOptions *opt)
{
    g_autoptr(GError) error = NULL;
    /* A one-shot snapshot exits at once: debugger ports would only collide
     * with a running server's. */
    config->relay = FALSE;
    DdmDaemon *daemon = ddm_daemon_new(config, &error);
    if (daemon == NULL) {
        g_printerr("ddmon: %s\n", error->message);
        return DDM_EXIT_FAILED;
    }
    DdmSnapshotCollector col;
    ddm_snapshot_collector_init(&col, opt);
    col.source = daemon;
    col.send = local_send;
    col.source_settled = local_settled;
    ddm_snapshot_cmds_available(&col, local_has_command, daemon, "");
    /* What exists before discovery (the plugin list, global views). */
    g_autoptr(GPtrArray) initial = ddm_views_list(ddm_daemon_views(daemon));
    for (guint i = 0; i < initial->len; i++) {
        ddm_view *v = g_ptr_array_index(initial, i);
        ddm_snapshot_note_change(&col, FALSE, ddm_view_vm_key(v), ddm_view_name(v),
                                 (gint64)ddm_view_version(v), NULL);
    }
    /* Nothing is retried once the snapshot is printed: a VM another
     * debugger holds is listed "busy", not left out. */
    ddm_monitor_report_held(ddm_daemon_monitor(daemon), TRUE);
    guint listener = ddm_views_add_listener(ddm_daemon_views(daemon), on_local_change, &col);
    guint watch = ddm_views_watch(ddm_daemon_views(daemon), NULL, NULL);
    ddm_daemon_start(daemon);
    ddm_snapshot_collector_run(&col);
    ddm_views_unwatch(ddm_daemon_views(daemon), watch);
    ddm_views_remove_listener(ddm_daemon_views(daemon), listener);
    /* The content, from the store. */
    g_autoptr(GPtrArray) final = ddm_views_list(ddm_daemon_views(daemon));
    for (guint i = 0; i < final->len; i++) {
        g_autoptr(JsonNode) json = ddm_view_to_json(g_ptr_array_index(final, i),
                                                    opt->out_dir != NULL);
        ddm_snapshot_collect(&col, "added", json);
    }
    int status = col.status != 0 ? col.status : ddm_snapshot_print_views(&col);
    if (col.status == 0)
        say_held(ddm_daemon_monitor(daemon), opt->server_socket);
    /* Commands still in flight (GCs past the cap, any after an interrupt)
     * end while the monitor goes: col must outlive it. What was printed
     * is all there is: the stopping hooks' requests are still written
     * (what the plugins started in the VMs is stopped), but no answer is
     * waited for (a VM that does not answer held the exit for 2 s). */
    ddm_daemon_stop_wait_cut(daemon);
    ddm_daemon_free(daemon);
    ddm_snapshot_collector_clear(&col);
    return status;
}
