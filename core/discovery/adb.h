/* SPDX-License-Identifier: Apache-2.0
 *
 * Android devices through the adb server: the adb transport (a DdmTarget
 * whose connect is host:transport:SERIAL + jdwp:PID on a fresh adb socket,
 * ending as a raw JDWP fd like any TCP target) and the adb discovery module
 * (host:track-devices, then track-jdwp per device; hotplug; an adb server
 * that dies is reconnected with backoff; `adb start-server` is spawned once
 * when none runs, unless --no-adb-start).
 */
#ifndef DDM_ADB_H
#define DDM_ADB_H

#include "core/wire/adb_proto.h"
#include "core/session/monitor.h"
#include "core/transport/target.h"

/** Target for VM @pid on device @serial; key "adb:SERIAL:PID". (transfer full) */
DdmTarget *ddm_target_adb_new(const DdmAdbServerAddr *addr, const char *serial, guint32 pid);
/** The adb discovery module (not started). */
DdmDiscovery *ddm_discovery_adb_new(DdmMonitor *mon);
/** The key of VM @pid on device @serial. (transfer full) */
char *ddm_adb_vm_key(const char *serial, guint32 pid);

#endif /* DDM_ADB_H */
