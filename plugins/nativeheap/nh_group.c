/* SPDX-License-Identifier: Apache-2.0
 *
 * nh_group: NHGT records grouped in a bounded, seeded hash table; see nh_group.h.
 */
#include "nh_group.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void nh_grouper_init(nh_grouper *t, int by_frames, size_t frames_len, size_t max)
{
    memset(t, 0, sizeof *t);
    t->by_frames = by_frames;
    t->frames_len = by_frames ? frames_len : 0;
    t->max = max ? max : NH_GROUPS_MAX;
    if (getrandom(&t->seed, sizeof t->seed, GRND_NONBLOCK) != sizeof t->seed)
        t->seed = (uint32_t)(uintptr_t)t ^ 0x9E3779B9u;
}

void nh_grouper_free(nh_grouper *t)
{
    free(t->g);
    free(t->index);
    t->g = NULL;
    t->index = NULL;
    t->n = t->cap = 0;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t key_hash(nh_grouper *t, uint64_t size, int zygote, const uint8_t *frames)
{
    uint64_t h = t->seed;
    size_t i;
    if (!t->by_frames)
        return mix(h ^ mix(size * 2 + (zygote != 0)));
    for (i = 0; i + 8 <= t->frames_len; i += 8) {
        uint64_t w;
        memcpy(&w, frames + i, 8);
        h = mix(h ^ w);
    }
    for (; i < t->frames_len; i++)
        h = mix(h ^ frames[i]);
    t->ops += t->frames_len / 8;
    return h;
}

static int same(const nh_grouper *t, const nh_group *g, uint64_t size, int zygote,
                const uint8_t *frames)
{
    if (t->by_frames)
        return !t->frames_len || memcmp(g->frames, frames, t->frames_len) == 0;
    return g->size == size && g->zygote == zygote;
}

/* Grow groups and index so that one more group fits at most half full. 0 or -ENOMEM. */
static int grow(nh_grouper *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 256, slots, i;
    nh_group *ng;
    uint32_t *ni;
    if (ncap > t->max)
        ncap = t->max;
    ng = realloc(t->g, ncap * sizeof *ng);
    if (!ng)
        return -ENOMEM;
    t->g = ng;
    t->cap = ncap;
    for (slots = 512; slots < 2 * ncap; slots *= 2)
        ;
    if (t->index && t->mask + 1 >= slots)
        return 0;
    ni = calloc(slots, sizeof *ni);
    if (!ni)
        return -ENOMEM;
    free(t->index);
    t->index = ni;
    t->mask = slots - 1;
    for (i = 0; i < t->n; i++) { /* re-index (hashes recomputed: keys are small) */
        const nh_group *g = &t->g[i];
        size_t s = (size_t)key_hash(t, g->size, g->zygote, g->frames) & t->mask;
        while (t->index[s]) {
            s = (s + 1) & t->mask;
            t->ops++;
        }
        t->index[s] = (uint32_t)(i + 1);
    }
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

int nh_grouper_add(nh_grouper *t, const nhgt_record *r, uint64_t total)
{
    uint64_t size = t->by_frames ? 0 : r->size;
    int zygote = t->by_frames ? 0 : r->zygote;
    size_t s;
    nh_group *g;

    if (!t->index && grow(t) != 0)
        return -ENOMEM;
    s = (size_t)key_hash(t, size, zygote, r->frames) & t->mask;
    for (;; s = (s + 1) & t->mask) {
        uint32_t at = t->index[s];
        t->ops++;
        if (!at)
            break;
        if (same(t, &t->g[at - 1], size, zygote, r->frames)) {
            g = &t->g[at - 1];
            g->count = sat_add(g->count, r->count);
            g->total = sat_add(g->total, total);
            g->records++;
            return 0;
        }
    }
    if (t->n >= t->max) {
        t->ungrouped++;
        return 0;
    }
    if (t->n == t->cap) {
        if (grow(t) != 0)
            return -ENOMEM;
        s = (size_t)key_hash(t, size, zygote, r->frames) & t->mask;
        while (t->index[s]) {
            s = (s + 1) & t->mask;
            t->ops++;
        }
    }
    g = &t->g[t->n];
    g->size = size;
    g->zygote = zygote;
    g->frames = r->frames;
    g->frames_len = t->frames_len;
    g->count = r->count;
    g->total = total;
    g->records = 1;
    t->index[s] = (uint32_t)(++t->n);
    return 0;
}

static int cmp_total_desc(const void *a, const void *b)
{
    const nh_group *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->zygote - y->zygote;
}

/* Sift @g[i] down the min-heap g[0..n) (the smallest total at the root). */
static void sift_down(nh_group *g, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        nh_group tmp;
        if (l < n && cmp_total_desc(&g[l], &g[m]) > 0)
            m = l;
        if (l + 1 < n && cmp_total_desc(&g[l + 1], &g[m]) > 0)
            m = l + 1;
        if (m == i)
            return;
        tmp = g[i];
        g[i] = g[m];
        g[m] = tmp;
        i = m;
    }
}

void nh_grouper_top_by_total(nh_grouper *t, size_t k)
{
    size_t i;
    /* the index no longer matches: the table is only read from here on */
    free(t->index);
    t->index = NULL;
    if (k > t->n)
        k = t->n;
    if (k < t->n && k > 0) { /* keep the k biggest: a min-heap of k, O(n log k) */
        for (i = k / 2; i-- > 0;)
            sift_down(t->g, k, i);
        for (i = k; i < t->n; i++)
            if (cmp_total_desc(&t->g[i], &t->g[0]) < 0) {
                t->g[0] = t->g[i];
                sift_down(t->g, k, 0);
            }
        t->n = k;
    }
    if (t->n > 1)
        qsort(t->g, t->n, sizeof *t->g, cmp_total_desc);
}
