/* SPDX-License-Identifier: Apache-2.0
 *
 * The .trace push parser (trace_decode.h): a line reader for the text
 * header, a small fixed buffer for the SLOW data header and for a record
 * split between two pieces, and the per-thread stacks that turn enter and
 * exit records into per-method figures. The format facts: doc/trace.md.
 */
#include "build-config.h"

#include "trace_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/numparse.h"

typedef enum {
    ST_TEXT = 0,     /* header lines */
    ST_DATA_HEADER,  /* the first 16 (v3: 18) bytes of the SLOW header */
    ST_SKIP,         /* the rest of the SLOW header, up to its offset */
    ST_RECORDS,
    ST_DONE,         /* finished */
    ST_FAILED,
} stage;

typedef enum { SEC_START = 0, SEC_VERSION_NUMBER, SEC_VERSION, SEC_THREADS, SEC_METHODS } section;

typedef struct frame {
    trace_method *m;
    uint64_t entered;          /* the thread's time at entry */
    int nested;                /* the method was already open below: no inclusive time */
} frame;

/* A thread's open methods and how many frames each has: a hash table
 * (linear probing, backward-shift deletion) holding only methods on the
 * stack, so it never outgrows the stack. */
typedef struct open_slot {
    uint32_t key;              /* method index + 1; 0 = empty */
    uint32_t count;
} open_slot;

typedef struct thread_state {
    trace_thread pub;
    frame *stack;
    unsigned depth, cap;
    uint32_t last;             /* raw time of the last record */
    uint64_t now;              /* its time so far (sum of the deltas) */
    open_slot *open;
    unsigned open_cap, open_n; /* power of two; entries in use */
} thread_state;

typedef struct listed_thread {
    uint32_t tid;
    uint32_t order;            /* its line: the first line of a tid names it */
    char *name;
} listed_thread;

struct trace_decoder {
    stage st;
    section sec;
    uint64_t bytes;
    char err[512];
    trace_info info;

    char line[TRACE_MAX_LINE + 1];
    size_t line_len;
    uint64_t text_bytes;       /* kept strings, against TRACE_MAX_HEADER */

    trace_method *methods;     /* sorted by id once the header is through */
    char **method_text;        /* each line's copy (the strings point into it) */
    size_t n_methods, cap_methods;
    trace_method unknown;

    listed_thread *listed;     /* sorted by (tid, order) at *end */
    size_t n_listed, cap_listed;

    uint8_t hdr[18];
    size_t hdr_len, hdr_need;
    uint64_t skip;

    uint8_t rec[TRACE_MAX_RECORD];
    size_t rec_len;

    int32_t *tid_slot;         /* tid -> index + 1 into threads; 65536 entries */
    thread_state *threads;
    size_t n_threads, cap_threads;
    size_t frame_slots;        /* sum of the threads' stack caps, against TRACE_MAX_FRAMES */
    size_t state_bytes;        /* trace_decoder_state_bytes */
};

const char *trace_clock_name(trace_clock c)
{
    switch (c) {
    case TRACE_CLOCK_DUAL:
        return "dual";
    case TRACE_CLOCK_THREAD_CPU:
        return "thread-cpu";
    case TRACE_CLOCK_WALL:
        return "wall";
    default:
        return "unknown";
    }
}

static int fail(trace_decoder *d, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(trace_decoder *d, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
    d->st = ST_FAILED;
    return rc;
}

trace_decoder *trace_decoder_new(void)
{
    trace_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->info.elapsed_usec = -1;
    d->info.num_method_calls = -1;
    d->info.clock_overhead_nsec = -1;
    d->info.pid = -1;
    d->unknown.id = 0xfffffffcu;
    d->unknown.class_name = "(unknown)";
    d->unknown.name = "";
    d->unknown.signature = "";
    d->unknown.line = -1;
    return d;
}

void trace_decoder_free(trace_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_methods; i++)
        free(d->method_text[i]);
    free(d->method_text);
    free(d->methods);
    for (size_t i = 0; i < d->n_listed; i++)
        free(d->listed[i].name);
    free(d->listed);
    for (size_t i = 0; i < d->n_threads; i++) {
        free(d->threads[i].stack);
        free(d->threads[i].open);
    }
    free(d->threads);
    free(d->tid_slot);
    free(d);
}

/* ------------------------------------------------------------ text header */

/* A decimal or 0x number that fills all of @s, at most @max. */
static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    return parse_number(s, NUM_C_BASES, max, out);
}

static void version_key(trace_decoder *d, const char *key, const char *val)
{
    uint64_t v;
    if (strcmp(key, "clock") == 0) {
        d->info.clock = strcmp(val, "dual") == 0         ? TRACE_CLOCK_DUAL
                        : strcmp(val, "thread-cpu") == 0 ? TRACE_CLOCK_THREAD_CPU
                        : strcmp(val, "wall") == 0       ? TRACE_CLOCK_WALL
                                                         : TRACE_CLOCK_UNKNOWN;
    } else if (strcmp(key, "data-file-overflow") == 0) {
        d->info.overflow = strcmp(val, "true") == 0;
    } else if (strcmp(key, "vm") == 0) {
        snprintf(d->info.vm, sizeof d->info.vm, "%s", val);
    } else if (parse_uint(val, INT64_MAX, &v) == 0) {
        if (strcmp(key, "elapsed-time-usec") == 0)
            d->info.elapsed_usec = (int64_t)v;
        else if (strcmp(key, "num-method-calls") == 0)
            d->info.num_method_calls = (int64_t)v;
        else if (strcmp(key, "clock-call-overhead-nsec") == 0)
            d->info.clock_overhead_nsec = (int64_t)v;
        else if (strcmp(key, "pid") == 0)
            d->info.pid = (int64_t)v;
    }
    /* other keys (alloc-count, ...) are allowed and not used */
}

static int thread_line(trace_decoder *d, char *s, uint64_t at)
{
    char *tab = strchr(s, '\t');
    uint64_t tid;
    size_t len;
    if (!tab)
        return fail(d, -EPROTO, "thread line without a tab at byte %" PRIu64, at);
    *tab = '\0';
    if (parse_uint(s, 0xffff, &tid) != 0)
        return fail(d, -EPROTO, "bad thread id '%.32s' at byte %" PRIu64, s, at);
    if (d->n_listed >= TRACE_MAX_THREADS)
        return fail(d, -EPROTO, "more than %u threads listed (at byte %" PRIu64 ")",
                    TRACE_MAX_THREADS, at);
    if (d->n_listed == d->cap_listed) {
        size_t cap = d->cap_listed ? d->cap_listed * 2 : 16;
        listed_thread *p = realloc(d->listed, cap * sizeof *p);
        if (!p)
            return fail(d, -ENOMEM, "out of memory");
        d->listed = p;
        d->cap_listed = cap;
    }
    len = strlen(tab + 1);
    d->text_bytes += len + 1;
    if (d->text_bytes > TRACE_MAX_HEADER)
        return fail(d, -EPROTO, "text header larger than %u bytes", TRACE_MAX_HEADER);
    d->listed[d->n_listed].tid = (uint32_t)tid;
    d->listed[d->n_listed].order = (uint32_t)d->n_listed;
    d->listed[d->n_listed].name = strdup(tab + 1);
    if (!d->listed[d->n_listed].name)
        return fail(d, -ENOMEM, "out of memory");
    d->n_listed++;
    d->info.threads_listed = d->n_listed;
    return 0;
}

/* "ID\tclass[\tname\tsig[\tfile[\tline]]]" (doc/trace.md) */
static int method_line(trace_decoder *d, const char *s, size_t len, uint64_t at)
{
    char *copy, *f[6];
    size_t n = 0;
    uint64_t id, line;
    trace_method *m;

    if (d->n_methods >= TRACE_MAX_METHODS)
        return fail(d, -EPROTO, "more than %u methods listed (at byte %" PRIu64 ")",
                    TRACE_MAX_METHODS, at);
    d->text_bytes += len + 1;
    if (d->text_bytes > TRACE_MAX_HEADER)
        return fail(d, -EPROTO, "text header larger than %u bytes", TRACE_MAX_HEADER);
    if (d->n_methods == d->cap_methods) {
        size_t cap = d->cap_methods ? d->cap_methods * 2 : 64;
        trace_method *pm = realloc(d->methods, cap * sizeof *pm);
        if (!pm)
            return fail(d, -ENOMEM, "out of memory");
        d->methods = pm;
        char **pt = realloc(d->method_text, cap * sizeof *pt);
        if (!pt)
            return fail(d, -ENOMEM, "out of memory");
        d->method_text = pt;
        d->cap_methods = cap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return fail(d, -ENOMEM, "out of memory");
    memcpy(copy, s, len + 1);
    f[n++] = copy;
    for (char *p = copy; *p && n < 6; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    if (n < 2 || parse_uint(f[0], 0xffffffffu, &id) != 0) {
        free(copy);
        return fail(d, -EPROTO, "bad method line '%.48s' at byte %" PRIu64, s, at);
    }
    m = &d->methods[d->n_methods];
    memset(m, 0, sizeof *m);
    m->id = (uint32_t)id & ~3u;
    m->class_name = f[1];
    m->name = n >= 4 ? f[2] : "";
    m->signature = n >= 4 ? f[3] : "";
    m->file = n >= 5 ? f[4] : NULL;
    m->line = n >= 6 && parse_uint(f[5], INT64_MAX, &line) == 0 ? (int64_t)line : -1;
    d->method_text[d->n_methods++] = copy;
    d->info.methods_listed = d->n_methods;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    const trace_method *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_tid(const void *a, const void *b)
{
    const listed_thread *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* *end: sort the methods (and their text along) for the binary search. */
static int header_done(trace_decoder *d, uint64_t at)
{
    /* sort an index, then permute both arrays: the strings stay put */
    size_t n = d->n_methods;
    if (d->sec != SEC_METHODS && d->sec != SEC_THREADS && d->sec != SEC_VERSION)
        return fail(d, -EPROTO, "*end before *version at byte %" PRIu64, at);
    if (d->n_listed > 1) /* a thread's name by binary search, not a scan per thread */
        qsort(d->listed, d->n_listed, sizeof *d->listed, by_tid);
    if (n > 1) {
        /* method_text[i] is only freed; order does not matter for it */
        qsort(d->methods, n, sizeof *d->methods, by_id);
        for (size_t i = 1; i < n; i++)
            if (d->methods[i].id == d->methods[i - 1].id)
                return fail(d, -EPROTO, "method id %#" PRIx32 " listed twice",
                            d->methods[i].id);
    }
    d->st = ST_DATA_HEADER;
    d->hdr_len = 0;
    d->hdr_need = 16;
    return 0;
}

static int text_line(trace_decoder *d, uint64_t at)
{
    char *s = d->line;
    size_t len = d->line_len;
    if (len > 0 && s[len - 1] == '\r')
        s[--len] = '\0';
    if (s[0] == '*') {
        if (strcmp(s, "*version") == 0) {
            if (d->sec != SEC_START)
                return fail(d, -EPROTO, "second *version at byte %" PRIu64, at);
            d->sec = SEC_VERSION_NUMBER;
        } else if (d->sec == SEC_START) {
            return fail(d, -EPROTO, "not a method trace: it starts with '%.16s', not *version", s);
        } else if (strcmp(s, "*threads") == 0) {
            d->sec = SEC_THREADS;
        } else if (strcmp(s, "*methods") == 0) {
            d->sec = SEC_METHODS;
        } else if (strcmp(s, "*end") == 0) {
            return header_done(d, at);
        } else {
            return fail(d, -EPROTO, "unknown section '%.32s' at byte %" PRIu64, s, at);
        }
        return 0;
    }
    switch (d->sec) {
    case SEC_START:
        return fail(d, -EPROTO, "not a method trace: it does not start with *version");
    case SEC_VERSION_NUMBER: {
        uint64_t v;
        if (parse_uint(s, 1000, &v) != 0)
            return fail(d, -EPROTO, "bad trace version '%.32s' at byte %" PRIu64, s, at);
        if (v < 1 || v > 3)
            return fail(d, -EPROTO, "unknown trace version %" PRIu64 " (1 to 3 are known)", v);
        d->info.version = (int)v;
        d->sec = SEC_VERSION;
        return 0;
    }
    case SEC_VERSION: {
        char *eq = strchr(s, '=');
        if (eq) {
            *eq = '\0';
            version_key(d, s, eq + 1);
        }
        return 0;
    }
    case SEC_THREADS:
        return len == 0 ? 0 : thread_line(d, s, at);
    case SEC_METHODS:
        return len == 0 ? 0 : method_line(d, s, len, at);
    }
    return 0;
}

/* Header text from @p; returns bytes used (the rest belongs to the data). */
static size_t feed_text(trace_decoder *d, const uint8_t *p, size_t n, int *rc)
{
    size_t i = 0;
    while (i < n && d->st == ST_TEXT) {
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t take = nl ? (size_t)(nl - (p + i)) : n - i;
        if (d->line_len + take > TRACE_MAX_LINE) {
            *rc = fail(d, -EPROTO, "header line longer than %u bytes at byte %" PRIu64,
                       TRACE_MAX_LINE, d->bytes + i - d->line_len);
            return i;
        }
        if (d->sec == SEC_START) {
            /* the first line must be *version: say so at the first byte that differs */
            static const char want[] = "*version";
            for (size_t k = 0; k < take && d->line_len + k < sizeof want - 1; k++)
                if (p[i + k] != (uint8_t)want[d->line_len + k]) {
                    *rc = fail(d, -EPROTO, "not a method trace: it does not start with *version");
                    return i;
                }
        }
        const uint8_t *nul = memchr(p + i, '\0', take);
        if (nul) {
            *rc = fail(d, -EPROTO, "NUL byte in the text header at byte %" PRIu64,
                       d->bytes + (uint64_t)(nul - p));
            return i;
        }
        memcpy(d->line + d->line_len, p + i, take);
        d->line_len += take;
        i += take;
        if (!nl)
            break;
        i++; /* the newline */
        d->line[d->line_len] = '\0';
        *rc = text_line(d, d->bytes + i);
        d->line_len = 0;
        if (*rc)
            return i;
    }
    return i;
}

/* ------------------------------------------------------------ data header */

static uint32_t le2(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le4(const uint8_t *p)
{
    return le2(p) | le2(p + 2) << 16;
}

static int data_header(trace_decoder *d)
{
    const uint8_t *h = d->hdr;
    uint32_t magic = le4(h);
    unsigned version = le2(h + 4), offset = le2(h + 6);
    uint64_t at = d->bytes; /* the header's end so far */

    if (d->hdr_need == 16) {
        if (magic != TRACE_MAGIC)
            return fail(d, -EPROTO,
                        "no SLOW data header after *end: found %02x %02x %02x %02x at byte %" PRIu64,
                        h[0], h[1], h[2], h[3], at - 16);
        if (version < 1 || version > 3)
            return fail(d, -EPROTO, "unknown trace data version %u (1 to 3 are known)", version);
        d->info.data_version = (int)version;
        d->info.start_usec = (uint64_t)le4(h + 8) | (uint64_t)le4(h + 12) << 32;
        if (version == 3) {
            d->hdr_need = 18;
            return 0;
        }
        d->info.record_size = version == 1 ? 9 : 10;
    } else {
        unsigned rs = le2(h + 16);
        if (rs < 10 || rs > TRACE_MAX_RECORD)
            return fail(d, -EPROTO, "bad record size %u in the version 3 header (10 to %u)", rs,
                        TRACE_MAX_RECORD);
        d->info.record_size = rs;
    }
    if (offset < d->hdr_need)
        return fail(d, -EPROTO,
                    "bad data offset %u: the version %u header alone is %zu bytes", offset,
                    version, d->hdr_need);
    d->info.data_offset = offset;
    d->info.dual = version == 3 && d->info.record_size >= 14 && d->info.clock == TRACE_CLOCK_DUAL;
    d->skip = offset - d->hdr_need;
    d->st = d->skip ? ST_SKIP : ST_RECORDS;
    if (d->st == ST_RECORDS)
        d->info.header_bytes = at;
    return 0;
}

/* ------------------------------------------------------------ records */

/* The first line listing @tid (d->listed is sorted by tid, then line). */
static const listed_thread *listed_find(const trace_decoder *d, uint32_t tid)
{
    size_t lo = 0, hi = d->n_listed;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->listed[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n_listed && d->listed[lo].tid == tid ? &d->listed[lo] : NULL;
}

static thread_state *thread_for(trace_decoder *d, uint32_t tid)
{
    int32_t slot;
    if (!d->tid_slot) {
        d->tid_slot = calloc(65536, sizeof *d->tid_slot);
        if (!d->tid_slot)
            return NULL;
        d->state_bytes += 65536 * sizeof *d->tid_slot;
    }
    slot = d->tid_slot[tid & 0xffff];
    if (slot > 0)
        return &d->threads[slot - 1];
    if (d->n_threads == d->cap_threads) {
        size_t cap = d->cap_threads ? d->cap_threads * 2 : 16;
        thread_state *p = realloc(d->threads, cap * sizeof *p);
        if (!p)
            return NULL;
        d->threads = p;
        d->state_bytes += (cap - d->cap_threads) * sizeof *p;
        d->cap_threads = cap;
    }
    thread_state *t = &d->threads[d->n_threads];
    memset(t, 0, sizeof *t);
    t->pub.tid = tid;
    const listed_thread *lt = listed_find(d, tid);
    t->pub.name = lt ? lt->name : NULL;
    d->tid_slot[tid & 0xffff] = (int32_t)++d->n_threads;
    return t;
}

static trace_method *method_for(trace_decoder *d, uint32_t id)
{
    size_t lo = 0, hi = d->n_methods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t v = d->methods[mid].id;
        if (v == id)
            return &d->methods[mid];
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static uint32_t method_key(const trace_decoder *d, const trace_method *m)
{
    return m == &d->unknown ? (uint32_t)d->n_methods + 1 : (uint32_t)(m - d->methods) + 1;
}

static unsigned open_home(uint32_t key, unsigned cap)
{
    return (key * 0x9e3779b1u) & (cap - 1);
}

/* Starts small (most threads of a hostile file make one call) and doubles. */
static int open_grow(trace_decoder *d, thread_state *t)
{
    unsigned cap = t->open_cap ? t->open_cap * 2 : 8;
    open_slot *n = calloc(cap, sizeof *n);
    if (!n)
        return -ENOMEM;
    d->state_bytes += (cap - t->open_cap) * sizeof *n;
    for (unsigned i = 0; i < t->open_cap; i++) {
        if (!t->open[i].key)
            continue;
        unsigned j = open_home(t->open[i].key, cap);
        while (n[j].key)
            j = (j + 1) & (cap - 1);
        n[j] = t->open[i];
    }
    free(t->open);
    t->open = n;
    t->open_cap = cap;
    return 0;
}

/* The slot of @key, or of the empty place it would take. */
static unsigned open_find(const thread_state *t, uint32_t key)
{
    unsigned i = open_home(key, t->open_cap);
    while (t->open[i].key && t->open[i].key != key)
        i = (i + 1) & (t->open_cap - 1);
    return i;
}

/* One more frame of @key; returns how many there were before. */
static int open_push(trace_decoder *d, thread_state *t, uint32_t key, uint32_t *before)
{
    unsigned i;
    if ((t->open_n + 1) * 2 > t->open_cap && open_grow(d, t) != 0)
        return -ENOMEM;
    i = open_find(t, key);
    if (!t->open[i].key) {
        t->open[i].key = key;
        t->open[i].count = 0;
        t->open_n++;
    }
    *before = t->open[i].count++;
    return 0;
}

static void open_pop(thread_state *t, uint32_t key)
{
    unsigned mask = t->open_cap - 1, i = open_find(t, key), j;
    if (!t->open[i].key || --t->open[i].count > 0)
        return;
    t->open[i].key = 0; /* remove, shifting back what probed past it */
    t->open_n--;
    for (j = (i + 1) & mask; t->open[j].key; j = (j + 1) & mask) {
        unsigned k = open_home(t->open[j].key, t->open_cap);
        if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
            t->open[i] = t->open[j];
            t->open[j].key = 0;
            i = j;
        }
    }
}

/* Pop @t's top frame: inclusive time for its method unless nested. */
static void pop_frame(trace_decoder *d, thread_state *t)
{
    frame *f = &t->stack[--t->depth];
    open_pop(t, method_key(d, f->m));
    if (!f->nested)
        f->m->inclusive_usec += t->now - f->entered;
}

static int record(trace_decoder *d, const uint8_t *r)
{
    unsigned v1 = d->info.data_version == 1;
    uint32_t tid = v1 ? r[0] : le2(r);
    uint32_t val = le4(r + (v1 ? 1 : 2));
    uint32_t time = le4(r + (v1 ? 5 : 6));
    uint32_t action = val & 3u;
    trace_method *m;
    thread_state *t;

    if (d->info.dual) {
        uint32_t wall = le4(r + 10);
        if (wall > d->info.last_wall_usec)
            d->info.last_wall_usec = wall;
    }
    m = method_for(d, val & ~3u);
    if (!m) {
        m = &d->unknown;
        d->info.unknown_records++;
    }
    t = thread_for(d, tid);
    if (!t)
        return fail(d, -ENOMEM, "out of memory");
    if (t->pub.records == 0 && d->n_threads > TRACE_MAX_THREADS)
        return fail(d, -EPROTO, "more than %u threads in the records", TRACE_MAX_THREADS);
    if (t->pub.records++ > 0) {
        uint32_t delta = time - t->last; /* wraps like the VM's u4 clock */
        if ((int32_t)delta > 0) {
            t->now += delta;
            t->pub.usec += delta;
            d->info.total_usec += delta;
            if (t->depth > 0)
                t->stack[t->depth - 1].m->exclusive_usec += delta;
        }
    }
    t->last = time;
    d->info.records++;
    if (action == 0) {
        if (t->depth >= TRACE_MAX_DEPTH)
            return fail(d, -EPROTO, "thread %" PRIu32 " is more than %u calls deep (record %" PRIu64 ")",
                        tid, TRACE_MAX_DEPTH, d->info.records);
        if (t->depth == t->cap) {
            unsigned cap = t->cap ? t->cap * 2 : 4;
            if (cap > TRACE_MAX_DEPTH)
                cap = TRACE_MAX_DEPTH;
            if (d->frame_slots + (cap - t->cap) > TRACE_MAX_FRAMES)
                return fail(d, -EPROTO, "more than %u open calls across the threads (record %" PRIu64 ")",
                            TRACE_MAX_FRAMES, d->info.records);
            frame *p = realloc(t->stack, cap * sizeof *p);
            if (!p)
                return fail(d, -ENOMEM, "out of memory");
            d->frame_slots += cap - t->cap;
            d->state_bytes += (cap - t->cap) * sizeof *p;
            t->stack = p;
            t->cap = cap;
        }
        uint32_t before;
        if (open_push(d, t, method_key(d, m), &before) != 0)
            return fail(d, -ENOMEM, "out of memory");
        t->stack[t->depth].m = m;
        t->stack[t->depth].entered = t->now;
        t->stack[t->depth].nested = before > 0;
        t->depth++;
        if (t->depth > t->pub.max_depth)
            t->pub.max_depth = t->depth;
        m->calls++;
        t->pub.calls++;
        return 0;
    }
    /* exit (1), unroll (2; an exception), or 3 (undefined: an exit, as
     * dmtracedump reads it) */
    if (t->depth == 0 || t->stack[t->depth - 1].m != m) {
        d->info.unmatched_exits++;
        return 0;
    }
    pop_frame(d, t);
    return 0;
}

/* ------------------------------------------------------------ feeding */

int trace_decoder_feed(trace_decoder *d, const uint8_t *p, size_t n)
{
    int rc = 0;
    if (d->st == ST_FAILED)
        return d->err[0] && strstr(d->err, "out of memory") == d->err ? -ENOMEM : -EPROTO;
    if (d->st == ST_DONE)
        return fail(d, -EPROTO, "bytes after the end");
    while (n > 0) {
        size_t used = 0;
        switch (d->st) {
        case ST_TEXT:
            used = feed_text(d, p, n, &rc);
            break;
        case ST_DATA_HEADER:
            used = d->hdr_need - d->hdr_len < n ? d->hdr_need - d->hdr_len : n;
            memcpy(d->hdr + d->hdr_len, p, used);
            d->hdr_len += used;
            if (d->hdr_len == d->hdr_need) {
                d->bytes += used;
                p += used;
                n -= used;
                if ((rc = data_header(d)) != 0)
                    return rc;
                continue;
            }
            break;
        case ST_SKIP:
            used = d->skip < n ? (size_t)d->skip : n;
            d->skip -= used;
            if (d->skip == 0) {
                d->st = ST_RECORDS;
                d->info.header_bytes = d->bytes + used;
            }
            break;
        case ST_RECORDS: {
            size_t rs = d->info.record_size;
            if (d->rec_len > 0 || n < rs) {
                used = rs - d->rec_len < n ? rs - d->rec_len : n;
                memcpy(d->rec + d->rec_len, p, used);
                d->rec_len += used;
                if (d->rec_len == rs) {
                    d->rec_len = 0;
                    rc = record(d, d->rec);
                }
            } else {
                while (used + rs <= n && rc == 0) {
                    rc = record(d, p + used);
                    used += rs;
                }
            }
            break;
        }
        default:
            return -EPROTO;
        }
        d->bytes += used;
        p += used;
        n -= used;
        if (rc)
            return rc;
    }
    return 0;
}

static int close_frames(trace_decoder *d)
{
    for (size_t i = 0; i < d->n_threads; i++) {
        thread_state *t = &d->threads[i];
        while (t->depth > 0)
            pop_frame(d, t);
    }
    return 0;
}

int trace_decoder_finish(trace_decoder *d)
{
    switch (d->st) {
    case ST_FAILED:
        return -EPROTO;
    case ST_DONE:
        return 0;
    case ST_TEXT:
        return fail(d, -EPROTO, "truncated: the text header ends at byte %" PRIu64 " without *end",
                    d->bytes);
    case ST_DATA_HEADER:
    case ST_SKIP:
        return fail(d, -EPROTO, "truncated: the file ends inside the SLOW data header (byte %" PRIu64
                    ")", d->bytes);
    case ST_RECORDS:
        if (d->rec_len)
            return fail(d, -EPROTO,
                        "truncated: the file ends %zu bytes into a %u-byte record (after record %" PRIu64
                        ", byte %" PRIu64 ")",
                        d->rec_len, d->info.record_size, d->info.records, d->bytes);
        break;
    }
    close_frames(d);
    d->st = ST_DONE;
    return 0;
}

int trace_decoder_finish_cut(trace_decoder *d)
{
    if (d->st == ST_RECORDS && d->rec_len) {
        d->bytes -= d->rec_len;
        d->rec_len = 0;
    }
    return trace_decoder_finish(d);
}

const char *trace_decoder_error(const trace_decoder *d)
{
    return d->st == ST_FAILED ? d->err : NULL;
}

uint64_t trace_decoder_bytes(const trace_decoder *d)
{
    return d->bytes;
}

int trace_decoder_in_records(const trace_decoder *d)
{
    return d->st == ST_RECORDS || (d->st == ST_DONE && d->info.record_size > 0);
}

size_t trace_decoder_state_bytes(const trace_decoder *d)
{
    return d->state_bytes;
}

const trace_info *trace_decoder_info(const trace_decoder *d)
{
    return &d->info;
}

size_t trace_decoder_n_methods(const trace_decoder *d)
{
    return d->n_methods + (d->unknown.calls || d->info.unknown_records ? 1 : 0);
}

const trace_method *trace_decoder_method(const trace_decoder *d, size_t i)
{
    if (i < d->n_methods)
        return &d->methods[i];
    return i == d->n_methods && trace_decoder_n_methods(d) > d->n_methods ? &d->unknown : NULL;
}

const trace_method *trace_decoder_find(const trace_decoder *d, uint32_t id)
{
    return method_for((trace_decoder *)d, id & ~3u);
}

size_t trace_decoder_n_threads(const trace_decoder *d)
{
    return d->n_threads;
}

const trace_thread *trace_decoder_thread(const trace_decoder *d, size_t i)
{
    return i < d->n_threads ? &d->threads[i].pub : NULL;
}

static uint64_t key_of(const trace_method *m, trace_order o)
{
    return o == TRACE_BY_INCLUSIVE ? m->inclusive_usec
           : o == TRACE_BY_EXCLUSIVE ? m->exclusive_usec
                                     : m->calls;
}

typedef struct ranked {
    uint64_t key;
    const trace_method *m;
} ranked;

static int by_key(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->m->id < y->m->id ? -1 : x->m->id > y->m->id;
}

size_t trace_decoder_top(const trace_decoder *d, trace_order order, const trace_method **out,
                         size_t max)
{
    size_t n = trace_decoder_n_methods(d), k = 0;
    ranked *all;
    if (max == 0 || n == 0)
        return 0;
    all = malloc(n * sizeof *all);
    if (!all)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const trace_method *m = trace_decoder_method(d, i);
        if (m->calls || m->inclusive_usec || m->exclusive_usec) {
            all[k].key = key_of(m, order);
            all[k++].m = m;
        }
    }
    qsort(all, k, sizeof *all, by_key);
    if (k > max)
        k = max;
    for (size_t i = 0; i < k; i++)
        out[i] = all[i].m;
    free(all);
    return k;
}
