/* SPDX-License-Identifier: Apache-2.0
 *
 * The process's seeded string hash (seeded_hash.h): one seed, one FNV-1a
 * loop, shared by the view store, its column sets and the session's FEAT
 * set. Single-threaded like its callers (the loop's thread).
 */
#include <stdint.h>
#include <sys/random.h>

#include "core/wire/seeded_hash.h"

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

static guint32 process_seed;
static gboolean process_seeded;

guint32 ddm_hash_seed(void)
{
    if (G_UNLIKELY(!process_seeded)) {
        if (getrandom(&process_seed, sizeof process_seed, GRND_NONBLOCK) != sizeof process_seed)
            process_seed = (guint32)g_random_int() ^ (guint32)(uintptr_t)&process_seed;
        process_seeded = TRUE;
    }
    return process_seed;
}

/* murmur3's finalizer: the low bits a table masks depend on every byte */
static inline guint finish(guint32 h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

guint ddm_hash_bytes(guint32 seed, const void *data, gsize len)
{
    const guchar *p = data;
    guint32 h = FNV_OFFSET ^ seed;

    for (gsize i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return finish(h);
}

guint ddm_str_hash(gconstpointer s)
{
    const guchar *p = s;
    guint32 h = FNV_OFFSET ^ ddm_hash_seed();

    for (; *p; p++) {
        h ^= *p;
        h *= FNV_PRIME;
    }
    return finish(h);
}
