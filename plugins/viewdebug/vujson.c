/* SPDX-License-Identifier: Apache-2.0
 *
 * The view tree as a JSON document (vujson.h): a small writer (escaping,
 * typed property values) and the walk that nests the preorder tree.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vujson.h"

/* ---------------------------------------------------------- the writer */

typedef struct jbuf {
    char *p;
    size_t len, cap, max;
    int err; /* 0, ENOMEM or EFBIG: once set, appends do nothing */
} jbuf;

static void put(jbuf *b, const char *s, size_t n)
{
    if (b->err)
        return;
    if (n > b->max - b->len) {
        b->err = EFBIG;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->err = ENOMEM;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(jbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, cp = c & 0x07;
    else
        return 0;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0; /* overlong, out of range, or a surrogate (CESU-8) */
    return k;
}

/* @s as a JSON string, quotes included; NULL as null. */
static void put_str(jbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t n;

    if (!s) {
        puts_(b, "null");
        return;
    }
    n = strlen(s);
    put(b, "\"", 1);
    while (n > 0) {
        size_t run = 0;
        /* the plain bytes in one go */
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        put(b, (const char *)p, run);
        p += run;
        n -= run;
        if (n == 0)
            break;
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            put(b, e, 2);
            p++, n--;
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            put(b, e, 6);
            p++, n--;
        } else {
            size_t k = utf8_seq(p, n);
            if (k == 0) {
                puts_(b, "\xef\xbf\xbd"); /* U+FFFD for a byte that is not UTF-8 */
                k = 1;
            } else {
                put(b, (const char *)p, k);
            }
            p += k, n -= k;
        }
    }
    put(b, "\"", 1);
}

static void put_int(jbuf *b, int64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    put(b, tmp + i, sizeof tmp - i);
}

/* ------------------------------------------------------ property values */

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* 1 if @v is a JSON number as written and unambiguous: -?(0|[1-9]d*), at
 * most 64 bits, or the same with a fraction ".d+" (no exponent, so that
 * no value turns into an infinity). */
static int plain_number(const char *v)
{
    const char *s = v[0] == '-' ? v + 1 : v;
    const char *dot = strchr(s, '.');
    size_t ni = dot ? (size_t)(dot - s) : strlen(s);

    if (!all_digits(s, ni) || (ni > 1 && s[0] == '0'))
        return 0;
    if (dot)
        return all_digits(dot + 1, strlen(dot + 1)) && ni <= 308;
    if (ni > 19)
        return 0;
    if (ni == 19) { /* against INT64_MAX / INT64_MIN's magnitude */
        const char *lim = v[0] == '-' ? "9223372036854775808" : "9223372036854775807";
        return strcmp(s, lim) <= 0;
    }
    return 1;
}

static void put_prop_value(jbuf *b, const char *v)
{
    if (!v)
        puts_(b, "null");
    else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0 || plain_number(v))
        puts_(b, v);
    else
        put_str(b, v);
}

/* Properties by name, then by position (pointers into one array). */
static int cmp_prop(const void *a, const void *b)
{
    const vd_prop *x = *(const vd_prop *const *)a, *y = *(const vd_prop *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x < y ? -1 : x > y);
}

/* The view's properties as an object; the first of equal names wins. */
static void put_props(jbuf *b, const vd_tree *t, const vd_view *v)
{
    size_t n = v->n_props;
    const vd_prop *pr = n > 0 ? t->props + v->first_prop : NULL; /* no props: t->props may be NULL */
    unsigned char *skip = NULL;
    const vd_prop **order = NULL;
    int first = 1;

    if (n > 1) {
        order = malloc(n * sizeof *order);
        skip = calloc(n, 1);
        if (!order || !skip) {
            free(order);
            free(skip);
            b->err = ENOMEM;
            return;
        }
        for (size_t i = 0; i < n; i++)
            order[i] = &pr[i];
        qsort(order, n, sizeof *order, cmp_prop);
        for (size_t i = 1; i < n; i++)
            if (strcmp(order[i]->name, order[i - 1]->name) == 0)
                skip[order[i] - pr] = 1;
        free(order);
    }
    put(b, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        if (!first)
            put(b, ",", 1);
        first = 0;
        put_str(b, pr[i].name);
        put(b, ":", 1);
        put_prop_value(b, pr[i].value);
    }
    put(b, "}", 1);
    free(skip);
}

/* ------------------------------------------------------------ the tree */

static void put_bound(jbuf *b, const char *key, int64_t v)
{
    puts_(b, key);
    if (v == VD_NO_VALUE)
        puts_(b, "null");
    else
        put_int(b, v);
}

/* The view's members up to the opening of its children list. */
static void put_view_head(jbuf *b, const vd_tree *t, const vd_view *v, int properties)
{
    puts_(b, "{\"class\":");
    put_str(b, v->cls);
    puts_(b, ",\"hash\":");
    put_str(b, v->hash);
    puts_(b, ",\"id\":");
    put_str(b, v->id);
    puts_(b, ",\"bounds\":");
    if (v->left == VD_NO_VALUE && v->top == VD_NO_VALUE && v->right == VD_NO_VALUE &&
        v->bottom == VD_NO_VALUE) {
        puts_(b, "null");
    } else {
        put_bound(b, "{\"left\":", v->left);
        put_bound(b, ",\"top\":", v->top);
        put_bound(b, ",\"right\":", v->right);
        put_bound(b, ",\"bottom\":", v->bottom);
        put(b, "}", 1);
    }
    if (properties) {
        puts_(b, ",\"properties\":");
        put_props(b, t, v);
    }
    puts_(b, ",\"children\":[");
}

char *vd_tree_json(const vd_tree *t, const char *window, int properties, size_t max, size_t *len)
{
    jbuf b = {NULL, 0, 0, max, 0};
    size_t open = 0; /* views whose children list is open: depths 0 .. open-1 */

    puts_(&b, "{\"schema\":");
    put_int(&b, VD_JSON_SCHEMA);
    puts_(&b, ",\"window\":");
    put_str(&b, window);
    puts_(&b, ",\"views\":");
    put_int(&b, (int64_t)t->n_views);
    puts_(&b, properties ? ",\"properties\":true" : ",\"properties\":false");
    puts_(&b, ",\"root\":");
    if (t->n_views == 0)
        puts_(&b, "null");
    for (size_t i = 0; i < t->n_views && !b.err; i++) {
        const vd_view *v = &t->views[i];
        /* Preorder with depths that grow by at most one (vudecode checks):
         * close the views this one is not inside of. */
        if (v->depth > open || (i > 0 && v->depth == 0)) {
            b.err = EINVAL;
            break;
        }
        int sibling = i > 0 && v->depth < open;
        while (open > v->depth) {
            puts_(&b, "]}");
            open--;
        }
        if (sibling)
            put(&b, ",", 1);
        put_view_head(&b, t, v, properties);
        open++;
    }
    while (open > 0) {
        puts_(&b, "]}");
        open--;
    }
    put(&b, "}", 1);
    if (b.err) {
        free(b.p);
        errno = b.err;
        return NULL;
    }
    *len = b.len;
    return b.p;
}
