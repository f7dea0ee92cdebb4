/* SPDX-License-Identifier: Apache-2.0
 *
 * The relay's packet-id map (idmap.h): VM-side id -> (client, client id) in
 * a table of slots indexed by the id's low bits, and a cursor that walks the
 * relay's id range, skipping ids whose slot is in use, so ids are not reused
 * while a reply may still come.
 */
#include "core/relay/idmap.h"

/* Open addressing without probing: the entry for VM-side id i lives in slot
 * i & (cap - 1), and the cursor skips ids whose slot is taken, so a lookup
 * is one slot and no entry is allocated (a relayed round trip costs no
 * malloc). The table doubles while it is over half full (the entries move
 * to distinct slots: the new mask only adds bits) up to what max_entries
 * needs, and gives its memory back to MIN_SLOTS once empty. The common
 * cases of mapping and taking are inline (idmap.h). */
#define MIN_SLOTS DDM_IDMAP_MIN_SLOTS_

typedef DdmIdMapEntry Entry;

/* What ddm_idmap_map's inline case checks first, kept with cap. */
static void set_cap(DdmIdMap *m, guint cap)
{
    m->cap = cap;
    m->fast_below = MIN(cap / 2, m->max_entries);
}

DdmIdMap *ddm_idmap_new(guint max_entries)
{
    DdmIdMap *m = g_new0(DdmIdMap, 1);
    m->max_entries = max_entries ? max_entries : 1;
    m->next = DDM_IDMAP_FIRST;
    return m;
}

void ddm_idmap_free(DdmIdMap *m)
{
    if (!m)
        return;
    g_free(m->slots);
    g_free(m);
}

static void resize(DdmIdMap *m, guint cap)
{
    Entry *old = m->slots;
    guint old_cap = m->cap;
    m->slots = g_new0(Entry, cap);
    set_cap(m, cap);
    for (guint i = 0; i < old_cap; i++)
        if (old[i].vm_id)
            m->slots[old[i].vm_id & (cap - 1)] = old[i];
    g_free(old);
}

/* Any case: the table may have to grow first, and the cursor may skip ids
 * whose slot is taken. */
static gboolean alloc_id(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id)
{
    if (m->count >= m->max_entries)
        return FALSE;
    if (!m->slots)
        resize(m, MIN_SLOTS);
    else if (m->count >= m->cap / 2)
        resize(m, m->cap * 2);
    /* At most half the slots are taken, so this finds a free one within
     * cap / 2 + 1 steps (ids still in use are never reused: their slot is
     * taken). */
    for (;;) {
        uint32_t id = m->next;
        m->next = m->next == DDM_IDMAP_LAST ? DDM_IDMAP_FIRST : m->next + 1;
        Entry *e = &m->slots[id & (m->cap - 1)];
        if (!e->vm_id) {
            e->vm_id = id;
            e->client = client;
            e->client_id = client_id;
            m->count++;
            *vm_id = id;
            return TRUE;
        }
    }
}

gboolean ddm_idmap_map_(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id)
{
    g_return_val_if_fail(client != NULL, FALSE);
    return alloc_id(m, client, client_id, vm_id);
}

gboolean ddm_idmap_reserve(DdmIdMap *m, uint32_t *vm_id)
{
    return alloc_id(m, NULL, 0, vm_id);
}

void ddm_idmap_emptied_(DdmIdMap *m)
{
    g_free(m->slots);
    m->slots = NULL;
    set_cap(m, 0);
}

static void entry_free(DdmIdMap *m, Entry *e)
{
    e->vm_id = 0;
    m->count--;
    if (m->count == 0 && m->cap > 4 * MIN_SLOTS) /* a burst is over: give it back */
        ddm_idmap_emptied_(m);
}

gboolean ddm_idmap_in_range(uint32_t vm_id)
{
    return vm_id >= DDM_IDMAP_FIRST && vm_id <= DDM_IDMAP_LAST;
}

guint ddm_idmap_forget_client(DdmIdMap *m, gpointer client)
{
    guint n = 0;
    for (guint i = 0; m->slots && i < m->cap; i++) {
        Entry *e = &m->slots[i];
        if (e->vm_id && e->client == client) {
            n++;
            entry_free(m, e); /* may free the slots: the loop then ends */
        }
    }
    return n;
}

guint ddm_idmap_count(const DdmIdMap *m)
{
    return m->count;
}

void ddm_idmap_set_cursor(DdmIdMap *m, uint32_t next)
{
    m->next = ddm_idmap_in_range(next) ? next : DDM_IDMAP_FIRST;
}
