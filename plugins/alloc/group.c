/* SPDX-License-Identifier: Apache-2.0
 *
 * alloc: rows and groups. A decoded REAL becomes rows (class as a Java
 * name, size, thread, top frame as text), in the VM's order (most recent
 * first). Grouping sorts row indices by key (O(n log n)), merges equal
 * keys, then sorts the groups by bytes, count (descending) and key.
 * Class names are converted once per string-table index; a site text is
 * made once per entry that has a stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void alloc_rows_clear(alloc_rows *rows)
{
    size_t i;
    for (i = 0; i < rows->n_names; i++)
        free(rows->names[i]);
    free(rows->names);
    free(rows->r);
    memset(rows, 0, sizeof *rows);
}

int alloc_rows_build(const alloc_table *t, alloc_rows *out)
{
    size_t i, k;

    memset(out, 0, sizeof *out);
    if (!t->n)
        return 0;
    out->r = calloc(t->n, sizeof *out->r);
    out->names = calloc((size_t)t->n_classes + t->n, sizeof *out->names);
    if (!out->r || !out->names)
        goto oom;
    out->n = t->n;
    for (k = 0; k < t->n_classes; k++) {
        if (!(out->names[k] = alloc_descriptor_to_name(t->classes[k])))
            goto oom;
        out->n_names = k + 1;
    }
    for (i = 0; i < t->n; i++) {
        const alloc_entry *e = &t->e[i];
        alloc_row *row = &out->r[i];
        row->cls = out->names[e->cls];
        row->size = e->size;
        row->tid = e->tid;
        if (e->depth) {
            const alloc_frame *f = &t->f[e->first];
            char *site;
            if (!(site = alloc_frame_text(out->names[f->cls], t->methods[f->method],
                                          t->files[f->file], f->line)))
                goto oom;
            out->names[out->n_names++] = site;
            row->site = site;
        }
    }
    return 0;
oom:
    alloc_rows_clear(out);
    return -ENOMEM;
}

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return a ? 1 : b ? -1 : 0; /* no stack first */
    return strcmp(a, b);
}

/* qsort has no context argument: the rows travel inside the keys. */
typedef struct keyed {
    const alloc_row *row;
    alloc_by by;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    switch (a->by) {
    case ALLOC_BY_CLASS:
        return cmp_str(a->row->cls, b->row->cls);
    case ALLOC_BY_SITE:
        return cmp_str(a->row->site, b->row->site);
    default:
        return a->row->tid < b->row->tid ? -1 : a->row->tid > b->row->tid;
    }
}

static int cmp_group(const void *pa, const void *pb)
{
    const alloc_group *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->key || b->key)
        return cmp_str(a->key, b->key);
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

long alloc_group_rows(const alloc_rows *rows, alloc_by by, alloc_group **out)
{
    keyed *k;
    alloc_group *g;
    size_t i, n = 0;

    *out = NULL;
    if (!rows->n)
        return 0;
    k = malloc(rows->n * sizeof *k);
    g = calloc(rows->n, sizeof *g);
    if (!k || !g) {
        free(k);
        free(g);
        return -ENOMEM;
    }
    for (i = 0; i < rows->n; i++) {
        k[i].row = &rows->r[i];
        k[i].by = by;
    }
    qsort(k, rows->n, sizeof *k, cmp_keyed);
    for (i = 0; i < rows->n; i++) {
        if (i == 0 || cmp_keyed(&k[i - 1], &k[i]) != 0) {
            g[n].key = by == ALLOC_BY_CLASS ? k[i].row->cls : by == ALLOC_BY_SITE ? k[i].row->site : NULL;
            g[n].tid = k[i].row->tid;
            n++;
        }
        g[n - 1].count++;
        g[n - 1].bytes += k[i].row->size;
    }
    free(k);
    qsort(g, n, sizeof *g, cmp_group);
    *out = g;
    return (long)n;
}
