/* SPDX-License-Identifier: Apache-2.0
 *
 * The debugger relay. A VM serves one JDWP connection and ddmon holds it,
 * so debuggers (jdb, IntelliJ, VS Code) attach through ddmon:
 *  - each VM gets a port from debug_port_base (8600) up, sticky per VM key
 *    and per app name while free, so IDE run configurations keep working;
 *  - selected_port (8700) reaches the selected VM (by pid, or by app name,
 *    which follows the app across restarts);
 *  - a --connect target may have a fixed port (HOST:PORT=DEBUGPORT) that
 *    exists before the VM is up: a debugger arriving early is held (bounded)
 *    while ddmon retries the VM quickly.
 * Listeners bind config->listen_host (127.0.0.1 unless the user says
 * otherwise). The relay echoes the debugger's handshake (the VM never sees
 * a second one), remaps packet ids both ways (idmap.h), forwards VM-
 * originated JDWP commands to the debugger but never DDM (0xC7) traffic,
 * answers vendor command sets for plain JVMs itself (they can crash
 * OpenJDK's agent, see doc/protocol.md),
 * keeps (bounded) what the VM sends before the first debugger and drops
 * what arrives after a debugger left. When the debugger leaves, the VM must
 * go on as if none had come: DDM VMs get DBGD and are reconnected unless
 * they acknowledge it; plain JVMs get VirtualMachine.Dispose if the debugger
 * did not send it, and are reconnected at once when their agent closes.
 * One debugger per VM; a second is refused with a log line (the data
 * structures allow several later: the id map keys entries by client).
 */
#ifndef DDM_RELAY_H
#define DDM_RELAY_H

#include <glib.h>

#include "core/wire/jdwp.h"
#include "core/session/vm.h"

typedef struct DdmRelay DdmRelay;

/** Create the relay: opens the selected-VM port and the fixed ports of
 *  --connect targets. FALSE-equivalent (NULL) + error only for invalid
 *  configuration; a port that cannot be bound is logged and skipped. */
DdmRelay *ddm_relay_new(DdmMonitor *mon, GError **error);
void ddm_relay_free(DdmRelay *relay);

/** The VM reached READY or PLAIN: give it a port. */
void ddm_relay_vm_up(DdmRelay *relay, DdmVm *vm);
/** The VM's identity changed (name: the selection may now match it). */
void ddm_relay_vm_changed(DdmRelay *relay, DdmVm *vm);
/** The VM connection closed: drop its debugger and port. Returns TRUE when
 *  the monitor should reconnect at once (a debugger session just ended). */
gboolean ddm_relay_vm_closed(DdmRelay *relay, DdmVm *vm);
/** A JDWP command from the VM that is not DDM (an event for the debugger). */
void ddm_relay_command_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt);
/** All that was queued for @vm has been written: a debugger whose reading
 *  was paused for it (backpressure) is read again. */
void ddm_relay_vm_output_drained(DdmRelay *relay, DdmVm *vm);
/** A reply whose id ddmon did not send: TRUE if it was a debugger's (routed or
 *  dropped because its debugger left). The relay writes the debugger's id
 *  into @pkt's bytes: the caller (the VM session's read path, vm_io.c)
 *  lends them writable for this call, and nobody reads the packet after a
 *  TRUE. */
gboolean ddm_relay_reply_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt);
/** The fused path of a reply (DdmSessionEvents.reply_alone, monitor.h: its
 *  contract; @unused is the events' user data): one whole reply alone in a
 *  read of @vm's socket, to the debugger attached, nothing waiting for it,
 *  sent on at once from @bytes (the debugger's id written there); FALSE when
 *  any of that does not hold (nothing done: ddm_relay_reply_from_vm then
 *  has it). Its id rule is the general path's (relay_reply_debugger). */
gboolean ddm_relay_reply_alone(gpointer unused, DdmVm *vm, uint8_t *bytes, size_t len);
/** The head of a long reply from @vm not yet whole: TRUE if it is a
 *  debugger's (its header then goes to the debugger at once, with the
 *  debugger's id); its bytes follow through ddm_relay_reply_part() as they
 *  arrive, @last ending it. */
gboolean ddm_relay_reply_head(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *head);
void ddm_relay_reply_part(DdmRelay *relay, DdmVm *vm, const uint8_t *data, size_t len,
                          gboolean last);
/** The rest of the reply ddm_relay_reply_head() claimed, moved by the
 *  relay from the VM's socket @fd straight to its debugger's (splice(2));
 *  what it returns: DdmSessionEvents.reply_splice (core/session/monitor.h). */
gssize ddm_relay_reply_splice(DdmRelay *relay, DdmVm *vm, int fd, size_t max,
                              gboolean *socket_empty);

/** The VM's debugger port, or 0. */
guint16 ddm_relay_port_of(DdmRelay *relay, DdmVm *vm);
/** The fixed debugger port of the --connect target keyed @key
 *  (HOST:PORT=DEBUGPORT), or 0: open (and holding debuggers that come)
 *  whether or not its VM is up, so listed for a target being retried too. */
guint16 ddm_relay_fixed_port(DdmRelay *relay, const char *key);
/** TRUE if @vm is the one the selected port reaches now. */
gboolean ddm_relay_is_selected(DdmRelay *relay, DdmVm *vm);
/** Select by "PID" or app name (NULL or "" clears). Debuggers held on the
 *  selected-VM port attach to the VM it reaches now if that VM is up and
 *  has no debugger; one already attached through that port stays with its
 *  VM (ddm_relay_selected_port_elsewhere). */
void ddm_relay_select(DdmRelay *relay, const char *spec);
/** The VMs that debuggers attached through the selected-VM port are on,
 *  other than the one the selection reaches now (they came before the
 *  selection moved), in no order; each DdmVm* borrowed. (transfer container) */
GPtrArray *ddm_relay_selected_port_elsewhere(DdmRelay *relay);
const char *ddm_relay_selection(DdmRelay *relay);

#endif /* DDM_RELAY_H */
