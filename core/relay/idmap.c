/* SPDX-License-Identifier: Apache-2.0
 *
 * The relay's packet-id map (idmap.h): a hash table VM-side id -> (client,
 * client id), and a cursor that walks the relay's id range, skipping ids
 * still in use, so ids are not reused while a reply may still come.
 */
#include "core/relay/idmap.h"

typedef struct {
    gpointer client;
    uint32_t client_id;
} Entry;

struct DdmIdMap {
    GHashTable *entries; /* GUINT_TO_POINTER(vm id) -> Entry* */
    guint max_entries;
    uint32_t next;
};

DdmIdMap *ddm_idmap_new(guint max_entries)
{
    DdmIdMap *m = g_new0(DdmIdMap, 1);
    m->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    m->max_entries = max_entries ? max_entries : 1;
    m->next = DDM_IDMAP_FIRST;
    return m;
}

void ddm_idmap_free(DdmIdMap *m)
{
    if (!m)
        return;
    g_hash_table_destroy(m->entries);
    g_free(m);
}

static gboolean alloc_id(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id)
{
    if (g_hash_table_size(m->entries) >= m->max_entries)
        return FALSE;
    /* The range holds ~1 G ids and the map at most max_entries, so this
     * finds a free id within max_entries + 1 steps. */
    for (;;) {
        uint32_t id = m->next;
        m->next = m->next == DDM_IDMAP_LAST ? DDM_IDMAP_FIRST : m->next + 1;
        if (!g_hash_table_contains(m->entries, GUINT_TO_POINTER(id))) {
            Entry *e = g_new(Entry, 1);
            e->client = client;
            e->client_id = client_id;
            g_hash_table_insert(m->entries, GUINT_TO_POINTER(id), e);
            *vm_id = id;
            return TRUE;
        }
    }
}

gboolean ddm_idmap_map(DdmIdMap *m, gpointer client, uint32_t client_id, uint32_t *vm_id)
{
    g_return_val_if_fail(client != NULL, FALSE);
    return alloc_id(m, client, client_id, vm_id);
}

gboolean ddm_idmap_reserve(DdmIdMap *m, uint32_t *vm_id)
{
    return alloc_id(m, NULL, 0, vm_id);
}

gboolean ddm_idmap_take(DdmIdMap *m, uint32_t vm_id, gpointer *client, uint32_t *client_id)
{
    Entry *e = g_hash_table_lookup(m->entries, GUINT_TO_POINTER(vm_id));
    if (!e)
        return FALSE;
    if (client)
        *client = e->client;
    if (client_id)
        *client_id = e->client_id;
    g_hash_table_remove(m->entries, GUINT_TO_POINTER(vm_id));
    return TRUE;
}

gboolean ddm_idmap_in_range(uint32_t vm_id)
{
    return vm_id >= DDM_IDMAP_FIRST && vm_id <= DDM_IDMAP_LAST;
}

static gboolean entry_is_client(gpointer key, gpointer value, gpointer client)
{
    return ((Entry *)value)->client == client;
}

guint ddm_idmap_forget_client(DdmIdMap *m, gpointer client)
{
    return g_hash_table_foreach_remove(m->entries, entry_is_client, client);
}

guint ddm_idmap_count(const DdmIdMap *m)
{
    return g_hash_table_size(m->entries);
}

void ddm_idmap_set_cursor(DdmIdMap *m, uint32_t next)
{
    m->next = ddm_idmap_in_range(next) ? next : DDM_IDMAP_FIRST;
}
