/* SPDX-License-Identifier: Apache-2.0
 *
 * Simulated Android devices inside ddmon-simvm: each `--adb-device PORT`
 * listens on 127.0.0.1:PORT and plays adbd to an adb server that was told
 * `adb connect 127.0.0.1:PORT` (adb transport protocol: CNXN, OPEN, OKAY,
 * WRTE, CLSE; no AUTH). Services: track-jdwp (hex4 pid lists, re-sent on
 * every change), jdwp (the list once, unframed, for `adb jdwp`), jdwp:PID
 * (bridged over a socketpair to the simulated VM with sim_vm_serve_fd()),
 * shell:/exec: getprop and echo; track-app (protobuf AppProcesses, re-sent
 * when the list or a name changes) only with --adb-sdk 31 or more, as on
 * Android; anything else is refused with CLSE.
 *
 * Several devices in one process: the world's VMs are dealt round-robin
 * to the devices in the order they appear (a pid belongs to exactly one
 * device, so a VM is never offered twice). One device per process works
 * too (run several ddmon-simvm). `--serial NAME` (repeatable, matched to
 * the devices in order) only names a device in its properties
 * (ro.serialno); the adb server calls an `adb connect`ed device
 * "127.0.0.1:PORT" whatever it says.
 *
 * Flow control as adbd: one WRTE in flight per stream until the server's
 * OKAY; a stream's data from the server is OKAYed once written to the VM.
 * Threading: the thread-default main context; nothing blocks.
 */
#ifndef SIMVM_ADB_DEVICE_H
#define SIMVM_ADB_DEVICE_H

#include <glib.h>
#include <stdint.h>

#include "simvm.h"

typedef struct SimAdbSetup SimAdbSetup;

/** Empty setup (no devices until options say so). (transfer full) */
SimAdbSetup *sim_adb_setup_new(void);
/** The "adb" option group (--adb-device, --serial, --adb-sdk) that fills
 *  @s; hand it to sim_config_parse() (which takes ownership of the group;
 *  @s must outlive the parse). (transfer full) */
GOptionGroup *sim_adb_option_group(SimAdbSetup *s);
/** Add a device on @port (0 = kernel-chosen) programmatically. */
void sim_adb_setup_add_device(SimAdbSetup *s, int port, const char *serial);
/** The API level the devices report (default 30); from 31 on they offer
 *  track-app (and say so with the track_app feature). Before start. */
void sim_adb_setup_set_sdk(SimAdbSetup *s, int sdk);
/** Start listening for every configured device and follow @w's pids. A
 *  no-op without devices. @w must outlive @s (free @s first). */
gboolean sim_adb_setup_start(SimAdbSetup *s, SimWorld *w, GError **error);
guint sim_adb_setup_n_devices(const SimAdbSetup *s);
/** The port device @i listens on (after start). */
uint16_t sim_adb_setup_device_port(const SimAdbSetup *s, guint i);
void sim_adb_setup_free(SimAdbSetup *s);

#endif /* SIMVM_ADB_DEVICE_H */
