/* SPDX-License-Identifier: Apache-2.0
 *
 * nhmaps: parsing /proc/self/maps text and symbolizing addresses; see nhmaps.h.
 */
#include "nhmaps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse hex digits at *p (bounded by end); -1 if none or overflow. */
static int hex(const char **p, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    while (*p < end) {
        char c = **p;
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        if (n == 16)
            return -1;
        v = (v << 4) | d;
        n++;
        (*p)++;
    }
    *out = v;
    return n ? 0 : -1;
}

static const char *skip_field(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    while (p < end && *p != ' ')
        p++;
    return p;
}

/* Parse one line [p, end) into @e; 0 if it maps a file. */
static int parse_line(const char *p, const char *end, nh_map_entry *e)
{
    const char *name, *slash;
    if (hex(&p, end, &e->start) || p >= end || *p++ != '-' || hex(&p, end, &e->end))
        return -1;
    p = skip_field(p, end); /* perms */
    while (p < end && *p == ' ')
        p++;
    if (hex(&p, end, &e->offset))
        return -1;
    p = skip_field(p, end); /* dev */
    p = skip_field(p, end); /* inode */
    while (p < end && *p == ' ')
        p++;
    if (p >= end || *p != '/' || e->end <= e->start)
        return -1;
    name = p;
    while (end > name && (end[-1] == ' ' || end[-1] == '\r'))
        end--;
    slash = name;
    for (p = name; p < end; p++)
        if (*p == '/')
            slash = p + 1;
    e->name = slash;
    e->name_len = (size_t)(end - slash);
    return e->name_len ? 0 : -1;
}

static int cmp_start(const void *a, const void *b)
{
    const nh_map_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int nh_maps_parse(nh_maps *m, const char *text, size_t len)
{
    const char *p = text, *end = text + (text ? len : 0);
    size_t cap = 0;
    m->e = NULL;
    m->n = 0;
    while (text && p < end && m->n < NH_MAPS_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        nh_map_entry e;
        if (parse_line(p, le, &e) == 0) {
            if (m->n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                nh_map_entry *ne = realloc(m->e, ncap * sizeof(*ne));
                if (!ne) {
                    nh_maps_free(m);
                    return -ENOMEM;
                }
                m->e = ne;
                cap = ncap;
            }
            m->e[m->n++] = e;
        }
        p = nl ? nl + 1 : end;
    }
    if (m->n > 1)
        qsort(m->e, m->n, sizeof(*m->e), cmp_start);
    return 0;
}

void nh_maps_free(nh_maps *m)
{
    free(m->e);
    m->e = NULL;
    m->n = 0;
}

void nh_maps_symbolize(const nh_maps *m, uint64_t addr, char *buf, size_t len)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) { /* last entry with start <= addr */
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && addr < m->e[lo - 1].end) {
        const nh_map_entry *e = &m->e[lo - 1];
        snprintf(buf, len, "%.*s+0x%" PRIx64, (int)(e->name_len > 200 ? 200 : e->name_len), e->name,
                 addr - e->start + e->offset);
        return;
    }
    snprintf(buf, len, "0x%" PRIx64, addr);
}
