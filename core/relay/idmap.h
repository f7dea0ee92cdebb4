/* SPDX-License-Identifier: Apache-2.0
 *
 * Packet-id remapping for relayed debugger commands. A debugger picks its
 * own ids (JDI counts from 1, like everyone); ddmon's own requests use
 * 0x40000000 and up on the same VM connection. Every debugger command is
 * given a fresh id from a separate range before it reaches the VM, and the
 * VM's reply is given the debugger's id back. Several debuggers (a later
 * goal) can share one map: each entry remembers its client.
 *
 * Invariants: an id is in the map at most once; an entry leaves by
 * ddm_idmap_take (reply) or ddm_idmap_forget_client (debugger gone); the
 * map is bounded (a debugger cannot make it grow without limit). Pure.
 */
#ifndef DDM_IDMAP_H
#define DDM_IDMAP_H

#include <glib.h>
#include <stdint.h>

/** VM-side ids used for relayed debugger commands: disjoint from ddmon's
 *  own (0x40000000+) and from ids VMs use for their own commands. */
#define DDM_IDMAP_FIRST 0x01000000u
#define DDM_IDMAP_LAST 0x3FFFFFFFu

typedef struct DdmIdMap DdmIdMap;

/** A map that never holds more than @max_entries. (transfer full) */
DdmIdMap *ddm_idmap_new(guint max_entries);
void ddm_idmap_free(DdmIdMap *m);
/** Allocate a VM-side id for (@client, @client_id). FALSE if the map is full. */
gboolean ddm_idmap_map(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id);
/** Reserve a VM-side id for a command ddmon sends on a debugger's behalf
 *  (e.g. Dispose); its reply is taken and dropped like any other. */
gboolean ddm_idmap_reserve(DdmIdMap *m, uint32_t *vm_id);
/** The reply to @vm_id arrived: remove the entry and give back its client
 *  (NULL for reserved ids) and the client's id. FALSE if not ours. */
gboolean ddm_idmap_take(DdmIdMap *m, uint32_t vm_id, gpointer *client, uint32_t *client_id);
/** True if @vm_id is in the relay's range (mapped now or not). */
gboolean ddm_idmap_in_range(uint32_t vm_id);
/** Drop every entry of @client (it left): later replies are not routed. */
guint ddm_idmap_forget_client(DdmIdMap *m, gpointer client);
guint ddm_idmap_count(const DdmIdMap *m);
/** Tests: move the allocation cursor (to exercise wrap-around). */
void ddm_idmap_set_cursor(DdmIdMap *m, uint32_t next);

#endif /* DDM_IDMAP_H */
