/* SPDX-License-Identifier: Apache-2.0
 *
 * The monitor: the hub of one ddmon server process. It owns the VM table
 * (key -> ddm_vm), the plugin registry, the view store, the discovery
 * modules and (later) the relay, and wires them: discovery hands it
 * targets; sessions report state changes, DDM chunks and debugger traffic;
 * it keeps the core's own views ("vms", "plugins") and tells plugins when
 * VMs become ready or go away. Everything runs on the default GMainContext.
 */
#ifndef DDM_MONITOR_H
#define DDM_MONITOR_H

#include <glib.h>

#include "core/config/config.h"
#include "core/wire/jdwp.h"
#include "core/pluginhost/registry.h"
#include "core/transport/target.h"
#include "core/views/views.h"
#include "core/session/vm.h"

struct DdmMonitor {
    DdmConfig *config;       /* owned */
    DdmRegistry *registry;   /* owned */
    DdmViews *views;         /* owned */
    GHashTable *vms;         /* key -> DdmVm* (one reference each) */
    GHashTable *backoff;     /* key -> DdmBackoff*: when a target may be tried again */
    GHashTable *known_ddm;   /* keys that answered HELO: reconnects skip the Version probe */
    GPtrArray *discovery;    /* DdmDiscovery* modules */
    ddm_view *vms_view;      /* core view "vms" */
    ddm_view *plugins_view;  /* core view "plugins" */
    guint vms_view_idle;     /* coalesces VM list updates */
    gint64 vms_view_refreshed_us; /* last rebuild (rate limit) */
    gpointer relay;          /* issue 5 */
    gboolean stopping;
};

/** Build a monitor from @config (taken over): registry with plugins loaded,
 *  views, discovery modules (not started). FALSE + error when a required
 *  plugin failed. */
DdmMonitor *ddm_monitor_new(DdmConfig *config, GError **error);
/** Start discovery. */
void ddm_monitor_start(DdmMonitor *mon);
/** Close every VM, stop discovery, unload plugins, free. */
void ddm_monitor_free(DdmMonitor *mon);

/** Discovery found @target: connect unless its key is connected or backing
 *  off. Returns TRUE if a session was started. (target: transfer none) */
gboolean ddm_monitor_offer_target(DdmMonitor *mon, DdmTarget *target);
/** Discovery lost @key (adb pid gone, device unplugged): close it. */
void ddm_monitor_forget_target(DdmMonitor *mon, const char *key, const char *reason);
/** Close every VM found by discovery @origin (mode switched off). */
void ddm_monitor_forget_origin(DdmMonitor *mon, const char *origin);
/** Someone waits for VM @key (a debugger on its fixed relay port, or the
 *  relay just ended a debugger session): retry connecting it quickly (tens
 *  of milliseconds at first, backing off), bypassing the normal backoff. */
void ddm_monitor_retry_fast(DdmMonitor *mon, const char *key);
DdmVm *ddm_monitor_find_vm(DdmMonitor *mon, const char *key);
/** Every VM in the table, in no particular order. (transfer full: the
 *  array holds a reference to each VM and drops them when freed) */
GPtrArray *ddm_monitor_list_vms(DdmMonitor *mon);
/** Resolve "PID", "SERIAL:PID", a key, or an app name; NULL if none or ambiguous. */
DdmVm *ddm_monitor_resolve_vm(DdmMonitor *mon, const char *spec);
/** Like ddm_monitor_resolve_vm, but when several VMs match (an app name on
 *  two devices, say) returns the one connected last; *@n_matches (may be
 *  NULL) says how many matched. */
DdmVm *ddm_monitor_resolve_vm_newest(DdmMonitor *mon, const char *spec, guint *n_matches);

/* Called by sessions (vm.c). */
/** TRUE if @key answered HELO before (in this server's life). */
gboolean ddm_monitor_known_ddm(DdmMonitor *mon, const char *key);
void ddm_monitor_note_ddm(DdmMonitor *mon, const char *key);
void ddm_monitor_vm_state_changed(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state);
void ddm_monitor_vm_identity_changed(DdmMonitor *mon, DdmVm *vm);
void ddm_monitor_vm_closed(DdmMonitor *mon, DdmVm *vm);
void ddm_monitor_ddm_chunk(DdmMonitor *mon, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len);
/** Show a chunk to taps only (outgoing requests, replies that go to a
 *  request's callback rather than through ddm_monitor_ddm_chunk). */
void ddm_monitor_tap_chunk(DdmMonitor *mon, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len);
/** A JDWP packet from the VM that is not ours (debugger reply or JDWP event). */
void ddm_monitor_jdwp_from_vm(DdmMonitor *mon, DdmVm *vm, const DdmJdwpPacket *pkt);
/** What was queued for the VM has all been written (ddm_vm_notify_when_drained). */
void ddm_monitor_vm_output_drained(DdmMonitor *mon, DdmVm *vm);
/** A reply to an id we do not know: TRUE if the relay claims it. */
gboolean ddm_monitor_foreign_reply(DdmMonitor *mon, DdmVm *vm, const DdmJdwpPacket *pkt);
/** Headlines changed: refresh the VM list. */
void ddm_monitor_vm_headline_changed(DdmMonitor *mon, DdmVm *vm);
/** The plugins view needs a refresh (after loading). */
void ddm_monitor_refresh_plugins_view(DdmMonitor *mon);

/* Discovery modules: local scan, --connect, adb. */
typedef struct DdmDiscovery DdmDiscovery;
typedef struct DdmDiscoveryOps {
    const char *name;                         /* "local", "connect", "adb" */
    void (*start)(DdmDiscovery *d);
    void (*stop)(DdmDiscovery *d);           /* stop and forget its targets */
    void (*free)(DdmDiscovery *d);
} DdmDiscoveryOps;
struct DdmDiscovery {
    const DdmDiscoveryOps *ops;
    DdmMonitor *monitor;
    gboolean running;        /* set by ops->start, cleared by ops->stop (the module's own) */
    gpointer priv;
};
DdmDiscovery *ddm_discovery_local_new(DdmMonitor *mon);
DdmDiscovery *ddm_discovery_connect_new(DdmMonitor *mon);
/** adb discovery (core/discovery_adb.c); the monitor runs it when config->scan_adb. */
DdmDiscovery *ddm_discovery_adb_new(DdmMonitor *mon);
/** Switch discovery modes at run time ("local,adb"); modes removed drop their VMs. */
gboolean ddm_monitor_set_scan(DdmMonitor *mon, const char *spec, GError **error);

#endif /* DDM_MONITOR_H */
