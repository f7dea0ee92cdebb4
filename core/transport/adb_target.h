/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb transport: a DdmTarget whose connect is host:transport:SERIAL +
 * jdwp:PID on a fresh adb server socket, ending as a raw JDWP fd like any
 * TCP target.
 */
#ifndef DDM_ADB_TARGET_H
#define DDM_ADB_TARGET_H

#include "core/transport/target.h"
#include "core/wire/adb_proto.h"

/** Target for VM @pid on device @serial; key "adb:SERIAL:PID". (transfer full) */
DdmTarget *ddm_target_adb_new(const DdmAdbServerAddr *addr, const char *serial, guint32 pid);
/** The key of VM @pid on device @serial. (transfer full) */
char *ddm_adb_vm_key(const char *serial, guint32 pid);

#endif /* DDM_ADB_TARGET_H */
