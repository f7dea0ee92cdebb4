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

/* The table's fields, for idmap.c and the inline fast paths below only
 * (every relayed round trip maps one id and takes one: issue 16). Open
 * addressing without probing: the entry for VM-side id i lives in slot
 * i & (cap - 1) (idmap.c says more). */
typedef struct DdmIdMapEntry {
    uint32_t vm_id;     /* 0: free (never in the relay's range) */
    uint32_t client_id;
    gpointer client;
} DdmIdMapEntry;

struct DdmIdMap {
    DdmIdMapEntry *slots; /* NULL until the first id */
    guint cap;          /* slots, a power of two (0 without slots) */
    guint count;
    guint max_entries;
    uint32_t next;
    guint fast_below;   /* MIN(cap / 2, max_entries) (0 without slots): below this count
                           the cursor's id may go in without growing the table */
};

/* The table is emptied once empty and larger than this (idmap.c). */
#define DDM_IDMAP_MIN_SLOTS_ 16u

/** A map that never holds more than @max_entries. (transfer full) */
DdmIdMap *ddm_idmap_new(guint max_entries);
void ddm_idmap_free(DdmIdMap *m);
/* idmap.c's: ddm_idmap_map's every other case (the table grows first, the
 * cursor skips taken slots or wraps, the map is full), and giving back an
 * emptied table. */
gboolean ddm_idmap_map_(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id);
void ddm_idmap_emptied_(DdmIdMap *m);
/** Allocate a VM-side id for (@client, @client_id, not NULL). FALSE if the
 *  map is full. Inline, its common case: the table has room, the cursor's
 *  slot is free and the cursor does not wrap. */
static inline gboolean ddm_idmap_map(DdmIdMap *m, gpointer client, uint32_t client_id,
                                     uint32_t *vm_id)
{
    uint32_t id = m->next;
    if (G_LIKELY(m->count < m->fast_below && id != DDM_IDMAP_LAST && client)) {
        DdmIdMapEntry *e = &m->slots[id & (m->cap - 1)];
        if (G_LIKELY(!e->vm_id)) {
            m->next = id + 1;
            e->vm_id = id;
            e->client = client;
            e->client_id = client_id;
            m->count++;
            *vm_id = id;
            return TRUE;
        }
    }
    return ddm_idmap_map_(m, client, client_id, vm_id);
}
/** Reserve a VM-side id for a command ddmon sends on a debugger's behalf
 *  (e.g. Dispose); its reply is taken and dropped like any other. */
gboolean ddm_idmap_reserve(DdmIdMap *m, uint32_t *vm_id);
/** The reply to @vm_id arrived: remove the entry and give back its client
 *  (NULL for reserved ids) and the client's id (either pointer may be
 *  NULL). FALSE if not ours. Inline: one slot to look at. */
static inline gboolean ddm_idmap_take(DdmIdMap *m, uint32_t vm_id, gpointer *client,
                                      uint32_t *client_id)
{
    if (!m->slots || !vm_id)
        return FALSE;
    DdmIdMapEntry *e = &m->slots[vm_id & (m->cap - 1)];
    if (e->vm_id != vm_id)
        return FALSE;
    if (client)
        *client = e->client;
    if (client_id)
        *client_id = e->client_id;
    e->vm_id = 0;
    if (--m->count == 0 && m->cap > 4 * DDM_IDMAP_MIN_SLOTS_) /* a burst is over */
        ddm_idmap_emptied_(m);
    return TRUE;
}
/** True if @vm_id is in the relay's range (mapped now or not). */
gboolean ddm_idmap_in_range(uint32_t vm_id);
/** Drop every entry of @client (it left): later replies are not routed. */
guint ddm_idmap_forget_client(DdmIdMap *m, gpointer client);
guint ddm_idmap_count(const DdmIdMap *m);
/** Tests: move the allocation cursor (to exercise wrap-around). */
void ddm_idmap_set_cursor(DdmIdMap *m, uint32_t next);

#endif /* DDM_IDMAP_H */
