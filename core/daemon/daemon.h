/* SPDX-License-Identifier: Apache-2.0
 *
 * The daemon: one running ddmon, assembled from the parts below it. It owns
 * the configuration, the view store, the VM table (core/session), the
 * plugin host (core/pluginhost), the debugger relay (core/relay) and the
 * discovery modules (core/discovery), and it wires them: it receives what
 * the sessions report (DdmSessionEvents) and hands it to the plugins and
 * the relay, and keeps the core's own views "vms" and "plugins". The
 * server (server/) and the in-process snapshot (cli/) each run one.
 * Everything runs on the default GMainContext.
 */
#ifndef DDM_DAEMON_H
#define DDM_DAEMON_H

#include <glib.h>

#include "core/config/config.h"
#include "core/pluginhost/registry.h"
#include "core/relay/relay.h"
#include "core/session/monitor.h"
#include "core/views/views.h"

typedef struct DdmDaemon DdmDaemon;

/** Assemble a daemon from @config (taken over): views, VM table, plugins
 *  loaded, relay (unless config->relay is FALSE), discovery modules (not
 *  started). NULL + @error when a plugin the user named failed or the
 *  relay's configuration is invalid. */
DdmDaemon *ddm_daemon_new(DdmConfig *config, GError **error);
/** Start discovery. */
void ddm_daemon_start(DdmDaemon *d);
/** The server stops: the plugins' stopping hooks (ABI 1.8) send their last
 *  requests, the VMs get DDM_STOPPING_FLUSH_MS to take them and
 *  DDM_STOPPING_WAIT_MS to answer what they had in flight then, the loop
 *  running meanwhile (a stopped trace is saved, its command answered),
 *  then every VM closes (what is still pending gets DDM_REPLY_VM_GONE)
 *  and no new session starts. Once. Call it before the clients whose
 *  commands should hear how they ended go. */
void ddm_daemon_stop_vms(DdmDaemon *d);
/** The wait for the VMs' answers in ddm_daemon_stop_vms (running, or to
 *  come) ends at its next look: a user who asked twice for the stop (a
 *  second SIGTERM) gets it now; the VMs close without those answers (the
 *  log says so, at debug level only when the cut came before the wait:
 *  a one-shot look that has printed what it had waits for nothing). */
void ddm_daemon_stop_wait_cut(DdmDaemon *d);
/** ddm_daemon_stop_vms unless done, then stop discovery, close every VM
 *  (plugins see each go), unload plugins, free. */
void ddm_daemon_free(DdmDaemon *d);

/* The parts, for the server's and the snapshot's questions. (transfer none) */
DdmConfig *ddm_daemon_config(DdmDaemon *d);
DdmMonitor *ddm_daemon_monitor(DdmDaemon *d);
DdmRegistry *ddm_daemon_registry(DdmDaemon *d);
DdmViews *ddm_daemon_views(DdmDaemon *d);
/** NULL when the daemon has no relay (a one-shot snapshot). */
DdmRelay *ddm_daemon_relay(DdmDaemon *d);

/** Switch discovery modes at run time ("local,adb"); modes removed drop their VMs. */
gboolean ddm_daemon_set_scan(DdmDaemon *d, const char *spec, GError **error);
/** The VM list is worth showing: every discovery module has had its first
 *  round (the VMs that exist were offered) and no session is still finding
 *  out what its VM is (connecting, handshake, HELO); a coalesced rebuild of
 *  the "vms" view still due is then published at once. O(VMs). */
gboolean ddm_daemon_vm_list_complete(DdmDaemon *d);
/** Publish the "vms" view's coalesced rebuild now if one is due: for an
 *  answer that shows the list. */
void ddm_daemon_vm_list_fresh(DdmDaemon *d);
/** What a snapshot waits for: the VM list is complete (above) and no VM (READY
 *  or a plain JVM) has a request in flight that may still be answered (the plugins' first
 *  requests, the views' first fills: ddm_vm_requests_settled, which may
 *  send a FEAT to find out). O(VMs); a snapshot asks it a few times. */
gboolean ddm_daemon_settled(DdmDaemon *d);
/** What a look with no start time waits for (the looks of
 *  server/control_ops.c and a watching snapshot's "settled" use
 *  ddm_daemon_look_settled_since, below): as ddm_daemon_settled, except that a VM late for
 *  looks is not waited for (ddm_registry_look_vm_settled: one that left
 *  its handshake, HELO or requests unanswered for DDM_FIRST_LOOK_MS since
 *  a look found them). O(VMs). */
gboolean ddm_daemon_look_settled(DdmDaemon *d);
/** ddm_daemon_look_settled for a look that began at @since_us
 *  (g_get_monotonic_time()): sessions begun after it (a wide scan's later
 *  slices, reconnects) are not waited for (ddm_registry_look_vm_settled_since),
 *  except the sessions of discovery's first round when it was under way
 *  (begun by ddm_daemon_start, or a new --scan): those count as begun when
 *  a look first found the round done, so a cold server's first look waits
 *  for its first scan and adb's first pid lists (review rF 1). Discovery
 *  catching up later (adb reconnecting, a device plugged in) is no first
 *  round, nor is a --scan that starts no module (review rZ 1, 3). */
gboolean ddm_daemon_look_settled_since(DdmDaemon *d, gint64 since_us);

/* The core views, one file each (vms_view.c, plugins_view.c). */
typedef struct DdmVmsView DdmVmsView;
/** The "vms" view in @views: one row per listed VM and per retrying target,
 *  published at most every 100 ms (plus 20 us a row: every publication
 *  writes every row) after ddm_vms_view_schedule; a reader that wants it
 *  current flushes it first (ddm_daemon_vm_list_fresh). */
DdmVmsView *ddm_vms_view_new(DdmViews *views, DdmMonitor *mon);
/** The relay whose ports the rows show (NULL: none). */
void ddm_vms_view_set_relay(DdmVmsView *vv, DdmRelay *relay);
/** The row of target @key may have changed (NULL: any row may have). */
void ddm_vms_view_schedule(DdmVmsView *vv, const char *key);
/** Publish a pending rebuild now (someone waits for the list). */
void ddm_vms_view_flush(DdmVmsView *vv);
void ddm_vms_view_free(DdmVmsView *vv);
/** Publish (or refresh) the "plugins" view of @reg's plugin records in @views. */
void ddm_plugins_view_refresh(DdmViews *views, DdmRegistry *reg);

#endif /* DDM_DAEMON_H */
