/* SPDX-License-Identifier: Apache-2.0
 *
 * The view-debug decoders (VULW, the VURT text tree and theme dumps); the
 * formats and caps are in vudecode.h and doc/viewdebug.md.
 */
#include "vudecode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>

static int fail(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;

    if (why && why_len) {
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------------ VULW */

void vd_windows_clear(vd_windows *w)
{
    size_t i;

    if (!w)
        return;
    for (i = 0; i < w->n; i++)
        free(w->names[i]);
    free(w->names);
    w->names = NULL;
    w->n = 0;
}

int vd_parse_vulw(const uint8_t *data, size_t len, vd_windows *out, char *why, size_t why_len)
{
    ddm_reader r;
    uint32_t count, i;

    memset(out, 0, sizeof *out);
    ddm_reader_init(&r, data, len);
    count = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r))
        return fail(why, why_len, "VULW reply of %zu bytes has no window count", len);
    /* every name costs at least its u4 length: a count the bytes cannot
     * hold is a lie, found before anything is allocated */
    if (count > ddm_reader_remaining(&r) / 4)
        return fail(why, why_len, "VULW says %u windows but carries only %zu bytes", count,
                    ddm_reader_remaining(&r));
    if (count > VD_MAX_WINDOWS)
        return fail(why, why_len, "VULW says %u windows; more than %u are not shown", count,
                    VD_MAX_WINDOWS);
    out->names = calloc(count ? count : 1, sizeof *out->names);
    if (!out->names)
        return fail(why, why_len, "out of memory");
    for (i = 0; i < count; i++) {
        uint32_t units = ddm_read_u4(&r);
        if (!ddm_reader_ok(&r) || units > ddm_reader_remaining(&r) / 2) {
            vd_windows_clear(out);
            return fail(why, why_len, "VULW window %u: name of %u characters does not fit", i,
                        units);
        }
        if (units > VD_MAX_NAME_UNITS) {
            vd_windows_clear(out);
            return fail(why, why_len, "VULW window %u: name of %u characters is too long", i, units);
        }
        out->names[i] = ddm_read_str16(&r, units);
        if (!out->names[i]) {
            vd_windows_clear(out);
            return fail(why, why_len, "out of memory");
        }
        out->n = i + 1;
    }
    return 0;
}

/* ------------------------------------------------------------ text lines */

/* The lines of a text reply, each cut (NUL written over '\n', and over a
 * '\r' before it) in the owned copy. */
typedef struct lines {
    char *p, *end;
    size_t no; /* number of the line last returned, from 1 */
} lines;

/* The next line, or NULL at the end; -1 in *@err for a line over the cap. */
static char *next_line(lines *ls, size_t *len, int *err)
{
    char *s = ls->p, *nl;
    size_t n;

    *err = 0;
    if (s >= ls->end)
        return NULL;
    nl = memchr(s, '\n', (size_t)(ls->end - s));
    n = nl ? (size_t)(nl - s) : (size_t)(ls->end - s);
    ls->no++;
    if (n > VD_MAX_LINE) {
        *err = -1;
        return NULL;
    }
    ls->p = nl ? nl + 1 : ls->end;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    s[n] = '\0'; /* over '\n', '\r' or the copy's terminating byte */
    *len = n;
    return s;
}

static char *copy_text(const uint8_t *data, size_t len)
{
    char *t = malloc(len + 1);

    if (t) {
        if (len)
            memcpy(t, data, len);
        t[len] = '\0';
    }
    return t;
}

/* ------------------------------------------------------------------ tree */

int vd_dump_is_encoded(const uint8_t *data, size_t len)
{
    size_t i, n = len < 64 ? len : 64;

    /* ViewDebug.dumpv2 starts with a property key (u2 id 1) and the text
     * dump never holds a NUL byte near its start: a class name comes first */
    for (i = 0; i < n; i++)
        if (data[i] == 0)
            return 1;
    return 0;
}

void vd_tree_clear(vd_tree *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->views);
    free(t->props);
    memset(t, 0, sizeof *t);
}

const char *vd_view_prop(const vd_tree *t, const vd_view *v, const char *name)
{
    size_t i;

    for (i = 0; i < v->n_props; i++)
        if (strcmp(t->props[v->first_prop + i].name, name) == 0)
            return t->props[v->first_prop + i].value;
    return NULL;
}

/* Grow *@v (elements of @size) to hold one more than @n, doubling. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    size_t ncap;
    void *p;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 64;
    p = realloc(*v, ncap * size);
    if (!p)
        return -1;
    *v = p;
    *cap = ncap;
    return 0;
}

/* Bytes of the first @units UTF-16 code units of UTF-8 @s (@n bytes), or
 * (size_t)-1 if @s ends first. A 4-byte sequence is two units; a stray
 * byte counts as one, so bad UTF-8 cannot stall the count. */
static size_t utf16_span(const char *s, size_t n, unsigned long units)
{
    size_t i = 0;

    while (units > 0) {
        unsigned char c;
        size_t w;
        if (i >= n)
            return (size_t)-1;
        c = (unsigned char)s[i];
        w = c < 0x80 ? 1 : c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (w > n - i)
            w = 1;
        i += w;
        units -= w == 4 ? (units >= 2 ? 2 : 1) : 1;
    }
    return i;
}

static int64_t whole_number(const char *s)
{
    char *end;
    long long v;

    if (!s || !*s)
        return VD_NO_VALUE;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end)
        return VD_NO_VALUE;
    return (int64_t)v;
}

static int64_t bound(const vd_tree *t, const vd_view *v, const char *plain, const char *layout)
{
    const char *s = vd_view_prop(t, v, layout);

    return whole_number(s ? s : vd_view_prop(t, v, plain));
}

typedef struct tree_build {
    vd_tree *t;
    size_t views_cap, props_cap;
    size_t stack[VD_MAX_DEPTH + 1]; /* index of the open view at each depth */
    char *why;
    size_t why_len;
} tree_build;

/* Properties after "class@hash ": NAME=LEN,VALUE separated by spaces. */
static int parse_props(tree_build *b, vd_view *v, char *s, char *end, size_t line_no)
{
    vd_tree *t = b->t;

    v->first_prop = t->n_props;
    for (;;) {
        char *name, *eq, *p;
        unsigned long units = 0;
        size_t span;

        while (s < end && *s == ' ')
            s++;
        if (s >= end)
            break;
        name = s;
        eq = memchr(s, '=', (size_t)(end - s));
        if (!eq)
            return fail(b->why, b->why_len, "line %zu: property '%.40s' has no '='", line_no, name);
        p = eq + 1;
        if (p >= end || *p < '0' || *p > '9')
            return fail(b->why, b->why_len, "line %zu: property '%.*s' has no length", line_no,
                        (int)(eq - name > 40 ? 40 : eq - name), name);
        while (p < end && *p >= '0' && *p <= '9') {
            if (units > VD_MAX_LINE)
                return fail(b->why, b->why_len, "line %zu: property '%.*s' claims a huge length",
                            line_no, (int)(eq - name > 40 ? 40 : eq - name), name);
            units = units * 10 + (unsigned long)(*p - '0');
            p++;
        }
        if (p >= end || *p != ',')
            return fail(b->why, b->why_len, "line %zu: property '%.*s': ',' expected after its length",
                        line_no, (int)(eq - name > 40 ? 40 : eq - name), name);
        p++;
        span = utf16_span(p, (size_t)(end - p), units);
        if (span == (size_t)-1)
            return fail(b->why, b->why_len,
                        "line %zu: property '%.*s' says %lu characters but the line ends first",
                        line_no, (int)(eq - name > 40 ? 40 : eq - name), name, units);
        if (p + span < end && p[span] != ' ')
            return fail(b->why, b->why_len,
                        "line %zu: property '%.*s': no space after its %lu characters", line_no,
                        (int)(eq - name > 40 ? 40 : eq - name), name, units);
        if (t->n_props >= VD_MAX_PROPS)
            return fail(b->why, b->why_len, "more than %u properties: not shown", VD_MAX_PROPS);
        if (grow((void **)&t->props, &b->props_cap, t->n_props, sizeof *t->props) < 0)
            return fail(b->why, b->why_len, "out of memory");
        *eq = '\0';
        p[span] = '\0'; /* over the separating space, or at the line's end */
        t->props[t->n_props].name = name;
        t->props[t->n_props].value = p;
        t->n_props++;
        v->n_props++;
        s = p + span + 1;
    }
    return 0;
}

static int is_hex(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
            return 0;
    return 1;
}

static int parse_view_line(tree_build *b, char *s, size_t n, size_t line_no)
{
    vd_tree *t = b->t;
    char *end = s + n, *head, *sp, *at;
    size_t depth = 0;
    vd_view *v;

    while (depth < n && s[depth] == ' ')
        depth++;
    if (depth == n)
        return fail(b->why, b->why_len, "line %zu: empty line in the view tree", line_no);
    if (t->n_views == 0 && depth != 0)
        return fail(b->why, b->why_len, "line %zu: the first view is indented by %zu spaces", line_no,
                    depth);
    if (t->n_views > 0 && depth == 0)
        return fail(b->why, b->why_len, "line %zu: a second root view (no indentation)", line_no);
    if (t->n_views > 0 && depth > t->views[t->n_views - 1].depth + 1)
        return fail(b->why, b->why_len, "line %zu: indentation jumps from %u to %zu spaces", line_no,
                    t->views[t->n_views - 1].depth, depth);
    if (depth > VD_MAX_DEPTH)
        return fail(b->why, b->why_len, "line %zu: views nested deeper than %u", line_no, VD_MAX_DEPTH);
    if (s[depth] == '\t')
        return fail(b->why, b->why_len, "line %zu: indentation with a tab", line_no);
    if (t->n_views >= VD_MAX_VIEWS)
        return fail(b->why, b->why_len, "more than %u views: not shown", VD_MAX_VIEWS);
    head = s + depth;
    sp = memchr(head, ' ', (size_t)(end - head));
    if (!sp)
        sp = end;
    if (memchr(head, '\0', (size_t)(sp - head)))
        return fail(b->why, b->why_len, "line %zu: a NUL byte in CLASS@HASH", line_no);
    at = NULL;
    for (char *q = head; q < sp; q++)
        if (*q == '@')
            at = q;
    if (!at || at == head)
        return fail(b->why, b->why_len, "line %zu: '%.60s' is not CLASS@HASH", line_no, head);
    *at = '\0';
    *sp = '\0';
    if (!is_hex(at + 1) || strlen(at + 1) > 8)
        return fail(b->why, b->why_len, "line %zu: '%.40s' is not a hexadecimal hash", line_no, at + 1);
    if (grow((void **)&t->views, &b->views_cap, t->n_views, sizeof *t->views) < 0)
        return fail(b->why, b->why_len, "out of memory");
    v = &t->views[t->n_views];
    memset(v, 0, sizeof *v);
    v->cls = head;
    v->hash = at + 1;
    v->depth = (uint32_t)depth;
    v->parent = depth ? (int64_t)b->stack[depth - 1] : -1;
    b->stack[depth] = t->n_views;
    if (sp < end && parse_props(b, v, sp + 1, end, line_no) < 0)
        return -1;
    if (v->parent >= 0)
        t->views[v->parent].children++;
    v->id = vd_view_prop(t, v, "mID");
    v->left = bound(t, v, "mLeft", "layout:mLeft");
    v->top = bound(t, v, "mTop", "layout:mTop");
    v->right = bound(t, v, "mRight", "layout:mRight");
    v->bottom = bound(t, v, "mBottom", "layout:mBottom");
    t->n_views++;
    return 0;
}

int vd_parse_tree(const uint8_t *data, size_t len, vd_tree *out, char *why, size_t why_len)
{
    tree_build *b;
    lines ls;
    char *s;
    size_t n;
    int err, done = 0;

    memset(out, 0, sizeof *out);
    if (vd_dump_is_encoded(data, len))
        return fail(why, why_len, "the VM sent an encoded (v2) view dump, which ddmon does not decode");
    b = calloc(1, sizeof *b);
    out->text = copy_text(data, len);
    if (!b || !out->text) {
        free(b);
        vd_tree_clear(out);
        return fail(why, why_len, "out of memory");
    }
    b->t = out;
    b->why = why;
    b->why_len = why_len;
    ls.p = out->text;
    ls.end = out->text + len;
    ls.no = 0;
    while ((s = next_line(&ls, &n, &err)) != NULL) {
        if (strcmp(s, "DONE.") == 0) {
            done = 1;
            break;
        }
        if (parse_view_line(b, s, n, ls.no) < 0) {
            err = 1;
            break;
        }
    }
    out->lines = ls.no;
    if (err < 0)
        fail(why, why_len, "line %zu: longer than %zu bytes", ls.no, VD_MAX_LINE);
    else if (!err && !done)
        fail(why, why_len, "the dump has no DONE. line after %zu lines: truncated, or the VM failed "
                           "while writing it", ls.no);
    free(b);
    if (err || !done) {
        vd_tree_clear(out);
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------------- theme */

void vd_theme_clear(vd_theme *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->names);
    free(t->values);
    memset(t, 0, sizeof *t);
}

int vd_parse_theme(const uint8_t *data, size_t len, vd_theme *out, char *why, size_t why_len)
{
    lines ls;
    char *s, *name = NULL;
    size_t n, cap = 0;
    int err, done = 0;

    memset(out, 0, sizeof *out);
    if (vd_dump_is_encoded(data, len))
        return fail(why, why_len, "the theme dump holds binary data");
    out->text = copy_text(data, len);
    if (!out->text)
        return fail(why, why_len, "out of memory");
    ls.p = out->text;
    ls.end = out->text + len;
    ls.no = 0;
    while ((s = next_line(&ls, &n, &err)) != NULL) {
        if (!name) {
            if (strcmp(s, "DONE.") == 0) {
                done = 1;
                break;
            }
            name = s;
            continue;
        }
        if (out->n >= VD_MAX_THEME) {
            fail(why, why_len, "more than %u theme attributes: not shown", VD_MAX_THEME);
            err = 1;
            break;
        }
        if (out->n >= cap) {
            size_t ncap = cap ? cap * 2 : 64;
            const char **nn = realloc(out->names, ncap * sizeof *nn);
            if (nn)
                out->names = nn;
            const char **nv = nn ? realloc(out->values, ncap * sizeof *nv) : NULL;
            if (!nn || !nv) {
                fail(why, why_len, "out of memory");
                err = 1;
                break;
            }
            out->values = nv;
            cap = ncap;
        }
        out->names[out->n] = name;
        out->values[out->n] = s;
        out->n++;
        name = NULL;
    }
    if (err < 0)
        fail(why, why_len, "line %zu: longer than %zu bytes", ls.no, VD_MAX_LINE);
    else if (!err && !done)
        fail(why, why_len, "the theme dump has no DONE. line after %zu lines: truncated%s", ls.no,
             name ? " (an attribute without a value)" : "");
    if (err || !done) {
        vd_theme_clear(out);
        return -1;
    }
    return 0;
}
