/* SPDX-License-Identifier: Apache-2.0
 *
 * Discovery: modules that find VMs and offer them to the monitor as
 * targets ("local": the port scan of 127.0.0.1; "connect": the --connect
 * targets; "adb": every debuggable app of every device the adb server
 * knows, with hotplug), and the set of modules that follows the
 * configuration as the user switches modes at run time. Discovery may
 * call the monitor (core/session) and publish views (core/views); nothing
 * below calls discovery.
 */
#ifndef DDM_DISCOVERY_H
#define DDM_DISCOVERY_H

#include <glib.h>

#include "core/config/config.h"
#include "core/session/monitor.h"
#include "core/views/views.h"

typedef struct DdmDiscovery DdmDiscovery;
typedef struct DdmDiscoveryOps {
    const char *name;                         /* "local", "connect", "adb" */
    void (*start)(DdmDiscovery *d);
    void (*stop)(DdmDiscovery *d);           /* stop and forget its targets */
    void (*free)(DdmDiscovery *d);
    /* TRUE once its first round is over: every target it could find now
     * has been offered (adb: the device list came and each online
     * device's first pid list). NULL: over when start returns. */
    gboolean (*first_round_done)(DdmDiscovery *d);
} DdmDiscoveryOps;

/* What every module gets: all borrowed, all outlive the module. */
struct DdmDiscovery {
    const DdmDiscoveryOps *ops;
    DdmMonitor *monitor;
    const DdmConfig *config;
    DdmViews *views;         /* for modules that publish views (adb: "devices") */
    gboolean running;        /* set by ops->start, cleared by ops->stop (the module's own) */
    gpointer priv;
};

DdmDiscovery *ddm_discovery_local_new(DdmMonitor *mon, const DdmConfig *config);
/* What the local scan did, for tests and debugging. */
typedef struct DdmLocalScanStats {
    guint scans;   /* scans started since the module was made */
    guint visits;  /* ports the last scan (or the one under way) looked at */
    guint offers;  /* sessions it started */
    guint slices;  /* loop iterations it took so far */
    guint held;    /* ports of the ranges with a session (or a connect in flight) now */
    guint in_flight;     /* of those, sessions connecting or in their handshake now */
    guint in_flight_max; /* the most in_flight ever was */
    guint pauses;        /* times a scan waited for in_flight to drop below its cap */
    guint in_flight_cap; /* that cap */
} DdmLocalScanStats;
/** The local module's figures (@d: a module of ddm_discovery_local_new). */
void ddm_discovery_local_stats(const DdmDiscovery *d, DdmLocalScanStats *out);
/** The default cap on the scan's sessions connecting or in their handshake
 *  at once, for a descriptor limit of @nofile (RLIMIT_NOFILE's soft limit,
 *  0 if unknown): a quarter of it, between 64 and 4,096. */
guint ddm_discovery_local_in_flight_cap(guint64 nofile);
/** Tests: at most @max (> 0) of the scan's sessions connecting or in their
 *  handshake at once (default ddm_discovery_local_in_flight_cap()). */
void ddm_discovery_local_set_max_in_flight(DdmDiscovery *d, guint max);
DdmDiscovery *ddm_discovery_connect_new(DdmMonitor *mon, const DdmConfig *config);
/** How many times the connect module offered its targets (for tests: it
 *  does so at start, then only while one has no session). */
guint ddm_discovery_connect_rounds(const DdmDiscovery *d);
/** adb tracking; publishes the "devices" and "device-processes" views in @views. */
DdmDiscovery *ddm_discovery_adb_new(DdmMonitor *mon, const DdmConfig *config, DdmViews *views);

/* The modules the configuration asks for (config->scan_local, scan_adb,
 * connect), kept in line with it. */
typedef struct DdmDiscoverySet DdmDiscoverySet;
/** No module is created before ddm_discovery_set_reconcile. All borrowed. */
DdmDiscoverySet *ddm_discovery_set_new(DdmMonitor *mon, const DdmConfig *config, DdmViews *views);
/** Create the modules the config asks for and drop the others (dropping
 *  one closes its VMs); start new ones when @start. */
void ddm_discovery_set_reconcile(DdmDiscoverySet *set, gboolean start);
/** Start every module not running. */
void ddm_discovery_set_start(DdmDiscoverySet *set);
/** TRUE when every running module has had its first round (for a
 *  snapshot that answers as soon as discovery has nothing more to say). */
gboolean ddm_discovery_set_first_round_done(DdmDiscoverySet *set);
/** Stop and free every module. */
void ddm_discovery_set_free(DdmDiscoverySet *set);

#endif /* DDM_DISCOVERY_H */
