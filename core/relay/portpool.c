/* SPDX-License-Identifier: Apache-2.0
 *
 * The relay's debugger port pool (portpool.h): two bitmaps over the VM
 * port range and a first-free scan a word at a time.
 */
#include "core/relay/portpool.h"

#include <string.h>

void ddm_portpool_init(DdmPortPool *pool, guint base, guint span)
{
    memset(pool, 0, sizeof *pool);
    if (base == 0 || base > 65535)
        return;
    if (span > DDM_PORTPOOL_SPAN)
        span = DDM_PORTPOOL_SPAN;
    if (span > 65536u - base)
        span = 65536u - base;
    pool->base = base;
    pool->span = span;
}

gboolean ddm_portpool_contains(const DdmPortPool *pool, guint port)
{
    return pool->span && port >= pool->base && port - pool->base < pool->span;
}

static void set_bit(guint64 *bits, guint i, gboolean on)
{
    if (on)
        bits[i / 64] |= (guint64)1 << (i % 64);
    else
        bits[i / 64] &= ~((guint64)1 << (i % 64));
}

void ddm_portpool_set_ours(DdmPortPool *pool, guint port, gboolean ours)
{
    if (!ddm_portpool_contains(pool, port))
        return;
    set_bit(pool->ours, port - pool->base, ours);
    if (ours)
        set_bit(pool->foreign, port - pool->base, FALSE);
}

void ddm_portpool_set_foreign(DdmPortPool *pool, guint port, gint64 now_us)
{
    if (!ddm_portpool_contains(pool, port))
        return;
    if (pool->foreign_since_us == 0)
        pool->foreign_since_us = now_us ? now_us : 1;
    set_bit(pool->foreign, port - pool->base, TRUE);
}

guint ddm_portpool_next_free(DdmPortPool *pool, guint from, gint64 now_us)
{
    guint i, w, nwords;

    if (!pool->span)
        return 0;
    if (pool->foreign_since_us && now_us - pool->foreign_since_us >= DDM_PORTPOOL_FOREIGN_TTL_US) {
        memset(pool->foreign, 0, sizeof pool->foreign);
        pool->foreign_since_us = 0;
    }
    if (from < pool->base)
        from = pool->base;
    if (from - pool->base >= pool->span)
        return 0;
    i = from - pool->base;
    nwords = (pool->span + 63) / 64;
    for (w = i / 64; w < nwords; w++) {
        guint64 busy = pool->ours[w] | pool->foreign[w];
        if (w == i / 64 && i % 64)
            busy |= ((guint64)1 << (i % 64)) - 1; /* below @from */
        if (busy != ~(guint64)0) {
            guint bit = w * 64 + (guint)__builtin_ctzll(~busy);
            return bit < pool->span ? pool->base + bit : 0;
        }
    }
    return 0;
}
