/* SPDX-License-Identifier: Apache-2.0
 *
 * A counted set of TCP ports as a paged bitmap (portset.h): the bit says
 * "in the set", the extra table how many more times than once.
 */
#include "core/session/portset.h"

#define WORDS_PER_PAGE (DDM_PORTSET_PAGE_PORTS / 64u)

static gboolean bit(const DdmPortSet *s, guint16 port)
{
    const guint64 *page = s->pages[port / DDM_PORTSET_PAGE_PORTS];
    guint i = port % DDM_PORTSET_PAGE_PORTS;
    return page && ((page[i / 64] >> (i % 64)) & 1u);
}

static void set_bit(DdmPortSet *s, guint16 port, gboolean on)
{
    guint64 **page = &s->pages[port / DDM_PORTSET_PAGE_PORTS];
    guint i = port % DDM_PORTSET_PAGE_PORTS;
    if (!*page) {
        if (!on)
            return;
        *page = g_new0(guint64, WORDS_PER_PAGE);
    }
    if (on)
        (*page)[i / 64] |= G_GUINT64_CONSTANT(1) << (i % 64);
    else
        (*page)[i / 64] &= ~(G_GUINT64_CONSTANT(1) << (i % 64));
}

void ddm_portset_add(DdmPortSet *s, guint16 port)
{
    g_return_if_fail(s != NULL && port != 0);
    if (!bit(s, port)) {
        set_bit(s, port, TRUE);
        return;
    }
    if (!s->extra)
        s->extra = g_hash_table_new(g_direct_hash, g_direct_equal);
    gpointer k = GUINT_TO_POINTER((guint)port);
    guint more = GPOINTER_TO_UINT(g_hash_table_lookup(s->extra, k));
    g_hash_table_insert(s->extra, k, GUINT_TO_POINTER(more + 1));
}

void ddm_portset_remove(DdmPortSet *s, guint16 port)
{
    g_return_if_fail(s != NULL);
    gpointer k = GUINT_TO_POINTER((guint)port);
    guint more = s->extra ? GPOINTER_TO_UINT(g_hash_table_lookup(s->extra, k)) : 0;
    if (more > 1)
        g_hash_table_insert(s->extra, k, GUINT_TO_POINTER(more - 1));
    else if (more == 1)
        g_hash_table_remove(s->extra, k);
    else
        set_bit(s, port, FALSE);
}

gboolean ddm_portset_contains(const DdmPortSet *s, guint16 port)
{
    g_return_val_if_fail(s != NULL, FALSE);
    return bit(s, port);
}

void ddm_portset_clear(DdmPortSet *s)
{
    for (guint i = 0; i < DDM_PORTSET_PAGES; i++)
        g_clear_pointer(&s->pages[i], g_free);
    g_clear_pointer(&s->extra, g_hash_table_destroy);
}

guint ddm_portset_pages(const DdmPortSet *s)
{
    guint n = 0;
    for (guint i = 0; i < DDM_PORTSET_PAGES; i++)
        n += s->pages[i] != NULL;
    return n;
}
