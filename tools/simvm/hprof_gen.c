/* SPDX-License-Identifier: Apache-2.0
 *
 * The streamed heap-dump generator (see hprof_gen.h): the fixed part
 * (header, strings, classes, stack trace, the content segment) is built
 * once into a bounded buffer; the filler segments and HEAP_DUMP_END are
 * produced on demand from their position, so a 4 GiB dump costs a few
 * kilobytes.
 */
#include "hprof_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_model.h"
#include "rng.h"

#define ID_SIZE 4u
#define HEADER_MAGIC "JAVA PROFILE 1.0.3"
#define RECORD_HEADER_LEN 9u                /* u1 tag, u4 time, u4 length */
#define END_RECORD_LEN RECORD_HEADER_LEN    /* HEAP_DUMP_END has no body */
#define INFO_LEN (1u + 4u + ID_SIZE)        /* HEAP_DUMP_INFO sub-record */
#define PRIM_ARRAY_HEADER_LEN (1u + ID_SIZE + 4u + 4u + 1u)
/* a filler segment: record header, HEAP_DUMP_INFO(app), byte[] header, data */
#define FILLER_OVERHEAD (RECORD_HEADER_LEN + INFO_LEN + PRIM_ARRAY_HEADER_LEN)
#define PREFIX_CAP (HPROF_GEN_MIN_TOTAL - END_RECORD_LEN - FILLER_OVERHEAD)

#define MAX_STRINGS 64u
#define MAX_CLASSES 24u
#define MAX_FIELDS 4u
#define MAX_NAME 192u
#define STACK_SERIAL 1u
#define THREAD_SERIAL 1u
#define STRING_ID_BASE 0x00001000u
#define CLASS_ID_BASE 0x70000000u
#define OBJECT_ID_BASE 0x12c00000u
#define FILLER_ID_BASE 0x32c00000u

/* ---- a bounded big-endian writer for the fixed part ---- */

typedef struct Out {
    uint8_t *d;
    size_t len, cap;
    int overflow;
} Out;

static void put_bytes(Out *o, const void *p, size_t n)
{
    if (o->overflow || n > o->cap - o->len) {
        o->overflow = 1;
        return;
    }
    memcpy(o->d + o->len, p, n);
    o->len += n;
}

static void put1(Out *o, uint8_t v) { put_bytes(o, &v, 1); }

static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
    unsigned i;
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void put2(Out *o, uint16_t v)
{
    uint8_t b[2];
    put_be(b, v, 2);
    put_bytes(o, b, 2);
}

static void put4(Out *o, uint32_t v)
{
    uint8_t b[4];
    put_be(b, v, 4);
    put_bytes(o, b, 4);
}

static void put8(Out *o, uint64_t v)
{
    uint8_t b[8];
    put_be(b, v, 8);
    put_bytes(o, b, 8);
}

/* Start a record; returns where its length goes (patched by end_record). */
static size_t begin_record(Out *o, uint8_t tag)
{
    size_t at;
    put1(o, tag);
    put4(o, 0); /* time offset */
    at = o->len;
    put4(o, 0);
    return at;
}

static void end_record(Out *o, size_t at)
{
    if (!o->overflow)
        put_be(o->d + at, o->len - at - 4, 4);
}

/* ---- the model: strings, classes, objects ---- */

typedef struct Field {
    uint32_t name;      /* string id */
    uint8_t type;
} Field;

typedef struct Class {
    char name[MAX_NAME];
    uint32_t name_id, id, super_id;
    uint8_t heap;
    unsigned n_fields;
    Field fields[MAX_FIELDS];
} Class;

typedef struct Model {
    const char *strings[MAX_STRINGS];
    char owned[MAX_CLASSES][MAX_NAME]; /* class names built here */
    unsigned n_strings;
    Class classes[MAX_CLASSES];
    unsigned n_classes;
    uint32_t static_field_name;        /* "sInstance" */
    SimRng rng;
} Model;

static uint32_t intern(Model *m, const char *s)
{
    unsigned i;
    for (i = 0; i < m->n_strings; i++)
        if (strcmp(m->strings[i], s) == 0)
            return STRING_ID_BASE + i;
    if (m->n_strings == MAX_STRINGS)
        return 0;
    m->strings[m->n_strings] = s;
    return STRING_ID_BASE + m->n_strings++;
}

/* "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]" (hprof's names). */
static void descriptor_to_name(const char *desc, char *out, size_t cap)
{
    static const struct { char c; const char *name; } prims[] = {
        { 'Z', "boolean" }, { 'B', "byte" }, { 'C', "char" }, { 'S', "short" },
        { 'I', "int" }, { 'J', "long" }, { 'F', "float" }, { 'D', "double" },
    };
    unsigned dims = 0, i;
    size_t len = 0;

    out[0] = '\0';
    while (desc[dims] == '[')
        dims++;
    desc += dims;
    if (desc[0] == 'L') {
        for (desc++; *desc && *desc != ';' && len + 1 < cap; desc++)
            out[len++] = *desc == '/' ? '.' : *desc;
        out[len] = '\0';
    } else {
        for (i = 0; i < sizeof prims / sizeof prims[0]; i++)
            if (prims[i].c == desc[0]) {
                strncpy(out, prims[i].name, cap - 1);
                out[cap - 1] = '\0';
            }
        len = strlen(out);
    }
    for (i = 0; i < dims && len + 3 <= cap; i++, len += 2)
        memcpy(out + len, "[]", 3);
}

static Class *add_class(Model *m, const char *name, uint8_t heap)
{
    Class *c;
    unsigned i;

    for (i = 0; i < m->n_classes; i++)
        if (strcmp(m->classes[i].name, name) == 0)
            return NULL;
    if (m->n_classes == MAX_CLASSES)
        return NULL;
    c = &m->classes[m->n_classes];
    memset(c, 0, sizeof *c);
    strncpy(c->name, name, MAX_NAME - 1);
    c->id = CLASS_ID_BASE + 16u * m->n_classes;
    c->super_id = m->n_classes == 0 ? 0 : CLASS_ID_BASE; /* everything extends Object */
    c->heap = heap;
    c->name_id = intern(m, m->classes[m->n_classes].name);
    m->n_classes++;
    return c;
}

static void add_field(Model *m, Class *c, const char *name, uint8_t type)
{
    if (c && c->n_fields < MAX_FIELDS) {
        c->fields[c->n_fields].name = intern(m, name);
        c->fields[c->n_fields].type = type;
        c->n_fields++;
    }
}

unsigned hprof_type_size(uint8_t type)
{
    switch (type) {
    case HPROF_TYPE_OBJECT:
        return ID_SIZE;
    case HPROF_TYPE_BOOLEAN:
    case HPROF_TYPE_BYTE:
        return 1;
    case HPROF_TYPE_CHAR:
    case HPROF_TYPE_SHORT:
        return 2;
    case HPROF_TYPE_FLOAT:
    case HPROF_TYPE_INT:
        return 4;
    case HPROF_TYPE_DOUBLE:
    case HPROF_TYPE_LONG:
        return 8;
    default:
        return 0;
    }
}

static uint32_t instance_size(const Class *c)
{
    uint32_t n = 0;
    unsigned i;
    for (i = 0; i < c->n_fields; i++)
        n += hprof_type_size(c->fields[i].type);
    return n;
}

/* Well-known class indices in Model.classes. */
enum { C_OBJECT, C_CLASS, C_STRING, C_THREAD, C_OBJECT_ARRAY, C_CHAR_ARRAY, C_BYTE_ARRAY, C_INT_ARRAY,
       C_ACTIVITY, C_FIRST_MODEL };

static void build_model(Model *m, const char *package)
{
    char pkg[HPROF_GEN_PACKAGE_MAX + 1];
    Class *c;
    unsigned i;
    const char *desc;

    strncpy(pkg, package && *package ? package : "com.example.sim", HPROF_GEN_PACKAGE_MAX);
    pkg[HPROF_GEN_PACKAGE_MAX] = '\0';
    intern(m, "app");
    intern(m, "image");
    intern(m, "zygote");
    add_class(m, "java.lang.Object", HPROF_HEAP_IMAGE);
    add_class(m, "java.lang.Class", HPROF_HEAP_IMAGE);
    c = add_class(m, "java.lang.String", HPROF_HEAP_IMAGE);
    add_field(m, c, "count", HPROF_TYPE_INT);
    add_field(m, c, "hash", HPROF_TYPE_INT);
    add_field(m, c, "value", HPROF_TYPE_OBJECT);
    c = add_class(m, "java.lang.Thread", HPROF_HEAP_IMAGE);
    add_field(m, c, "name", HPROF_TYPE_OBJECT);
    add_field(m, c, "priority", HPROF_TYPE_INT);
    add_field(m, c, "daemon", HPROF_TYPE_BOOLEAN);
    add_field(m, c, "tid", HPROF_TYPE_LONG);
    add_class(m, "java.lang.Object[]", HPROF_HEAP_IMAGE);
    add_class(m, "char[]", HPROF_HEAP_IMAGE);
    add_class(m, "byte[]", HPROF_HEAP_IMAGE);
    add_class(m, "int[]", HPROF_HEAP_IMAGE);
    snprintf(m->owned[0], MAX_NAME, "%s.MainActivity", pkg);
    c = add_class(m, m->owned[0], HPROF_HEAP_APP);
    add_field(m, c, "mTitle", HPROF_TYPE_OBJECT);
    add_field(m, c, "mCount", HPROF_TYPE_INT);
    /* the allocation model's classes (the same names REAL reports) */
    for (i = 0; (desc = sim_alloc_class_name(i)) != NULL && 1 + i < MAX_CLASSES; i++) {
        char *name = m->owned[1 + i];
        descriptor_to_name(desc, name, MAX_NAME);
        c = add_class(m, name, HPROF_HEAP_ZYGOTE);
        if (c && desc[0] == 'L') {
            add_field(m, c, "hash", HPROF_TYPE_INT);
            add_field(m, c, "next", HPROF_TYPE_OBJECT);
            if (sim_rng_chance(&m->rng, 0.5))
                add_field(m, c, "flags", HPROF_TYPE_SHORT);
        }
    }
    m->static_field_name = intern(m, "sInstance");
}

/* ---- the fixed part ---- */

static void write_class_dump(Out *o, const Model *m, const Class *c, uint32_t static_ref)
{
    unsigned i;

    put1(o, HPROF_CLASS_DUMP);
    put4(o, c->id);
    put4(o, STACK_SERIAL);
    put4(o, c->super_id);
    put4(o, 0); /* class loader: boot */
    put4(o, 0); /* signers */
    put4(o, 0); /* protection domain */
    put4(o, 0); /* reserved */
    put4(o, 0); /* reserved */
    put4(o, instance_size(c));
    put2(o, 0); /* constant pool */
    if (static_ref) {
        put2(o, 1);
        put4(o, m->static_field_name);
        put1(o, HPROF_TYPE_OBJECT);
        put4(o, static_ref);
    } else {
        put2(o, 0);
    }
    put2(o, (uint16_t)c->n_fields);
    for (i = 0; i < c->n_fields; i++) {
        put4(o, c->fields[i].name);
        put1(o, c->fields[i].type);
    }
}

static void put_value(Out *o, uint8_t type, uint64_t v)
{
    switch (hprof_type_size(type)) {
    case 1:
        put1(o, type == HPROF_TYPE_BOOLEAN ? (uint8_t)(v & 1) : (uint8_t)v);
        break;
    case 2:
        put2(o, (uint16_t)v);
        break;
    case 4:
        put4(o, (uint32_t)v);
        break;
    default:
        put8(o, v);
        break;
    }
}

/* An instance of @c whose object fields point to @ref (or null). */
static void write_instance(Out *o, Model *m, const Class *c, uint32_t id, uint32_t ref)
{
    unsigned i;

    put1(o, HPROF_INSTANCE_DUMP);
    put4(o, id);
    put4(o, STACK_SERIAL);
    put4(o, c->id);
    put4(o, instance_size(c));
    for (i = 0; i < c->n_fields; i++)
        put_value(o, c->fields[i].type,
                  c->fields[i].type == HPROF_TYPE_OBJECT ? ref : sim_rng_next(&m->rng) & 0x7fffffff);
}

static void write_root(Out *o, uint8_t tag, uint32_t id)
{
    put1(o, tag);
    put4(o, id);
}

static void write_root_thread(Out *o, uint8_t tag, uint32_t id, uint32_t a, uint32_t b)
{
    put1(o, tag);
    put4(o, id);
    put4(o, a);
    put4(o, b);
}

static void write_info(Out *o, Model *m, uint8_t heap)
{
    put1(o, HPROF_HEAP_DUMP_INFO);
    put4(o, heap);
    put4(o, intern(m, heap == HPROF_HEAP_APP ? "app" : heap == HPROF_HEAP_IMAGE ? "image" : "zygote"));
}

static void write_char_array(Out *o, uint32_t id, const char *text)
{
    size_t i, n = strlen(text);

    put1(o, HPROF_PRIMITIVE_ARRAY_DUMP);
    put4(o, id);
    put4(o, STACK_SERIAL);
    put4(o, (uint32_t)n);
    put1(o, HPROF_TYPE_CHAR);
    for (i = 0; i < n; i++)
        put2(o, (uint8_t)text[i]);
}

static void write_content_segment(Out *o, Model *m)
{
    size_t at = begin_record(o, HPROF_TAG_HEAP_DUMP_SEGMENT);
    uint32_t next_id = OBJECT_ID_BASE, thread_id, name_id, chars_id, activity_id, first, n, i, k;
    unsigned ci;

    /* image heap: the boot classes, an interned string */
    write_info(o, m, HPROF_HEAP_IMAGE);
    write_root(o, HPROF_ROOT_VM_INTERNAL, m->classes[C_OBJECT].id);
    for (ci = 0; ci < m->n_classes; ci++)
        if (m->classes[ci].heap == HPROF_HEAP_IMAGE)
            write_class_dump(o, m, &m->classes[ci], 0);
    chars_id = next_id += 16;
    write_char_array(o, chars_id, "main");
    name_id = next_id += 16;
    write_instance(o, m, &m->classes[C_STRING], name_id, chars_id);
    write_root(o, HPROF_ROOT_INTERNED_STRING, name_id);

    /* zygote heap: the model's classes, a JNI global, an unknown root */
    write_info(o, m, HPROF_HEAP_ZYGOTE);
    for (ci = 0; ci < m->n_classes; ci++)
        if (m->classes[ci].heap == HPROF_HEAP_ZYGOTE)
            write_class_dump(o, m, &m->classes[ci], 0);
    put1(o, HPROF_ROOT_JNI_GLOBAL); /* object id, JNI global ref id */
    put4(o, m->classes[C_FIRST_MODEL].id);
    put4(o, 0x2f6a);
    write_root(o, HPROF_ROOT_UNKNOWN, name_id);

    /* app heap: the activity, the main thread, objects of the model's classes */
    write_info(o, m, HPROF_HEAP_APP);
    activity_id = next_id += 16;
    write_class_dump(o, m, &m->classes[C_ACTIVITY], activity_id);
    write_instance(o, m, &m->classes[C_ACTIVITY], activity_id, name_id);
    thread_id = next_id += 16;
    write_instance(o, m, &m->classes[C_THREAD], thread_id, name_id);
    write_root_thread(o, HPROF_ROOT_THREAD_OBJECT, thread_id, THREAD_SERIAL, STACK_SERIAL);
    write_root_thread(o, HPROF_ROOT_JAVA_FRAME, activity_id, THREAD_SERIAL, 0);
    write_root_thread(o, HPROF_ROOT_JNI_MONITOR, thread_id, THREAD_SERIAL, 0);
    write_root(o, HPROF_ROOT_DEBUGGER, thread_id);
    n = sim_rng_range(&m->rng, 12, 32);
    first = next_id + 16;
    for (i = 0; i < n; i++) {
        const Class *c;
        do
            c = &m->classes[C_FIRST_MODEL + sim_rng_below(&m->rng, m->n_classes - C_FIRST_MODEL)];
        while (c->n_fields == 0);
        next_id += 16;
        write_instance(o, m, c, next_id, i ? next_id - 16 : activity_id);
    }
    write_root(o, HPROF_ROOT_FINALIZING, next_id);
    /* an Object[] holding every instance, and an int[] */
    put1(o, HPROF_OBJECT_ARRAY_DUMP);
    put4(o, next_id += 16);
    put4(o, STACK_SERIAL);
    put4(o, n);
    put4(o, m->classes[C_OBJECT_ARRAY].id);
    for (i = 0; i < n; i++)
        put4(o, first + 16 * i);
    k = sim_rng_range(&m->rng, 4, 24);
    put1(o, HPROF_PRIMITIVE_ARRAY_DUMP);
    put4(o, next_id += 16);
    put4(o, STACK_SERIAL);
    put4(o, k);
    put1(o, HPROF_TYPE_INT);
    for (i = 0; i < k; i++)
        put4(o, (uint32_t)sim_rng_next(&m->rng));
    /* Android's "array without data", length 0: hprof-conv turns 0xc3 into
     * 0x23 and keeps the length without adding data, so only an empty one
     * converts into a well-formed file */
    put1(o, HPROF_PRIMITIVE_ARRAY_NODATA);
    put4(o, next_id += 16);
    put4(o, STACK_SERIAL);
    put4(o, 0);
    put1(o, HPROF_TYPE_BYTE);
    end_record(o, at);
}

/* Header, STRING, LOAD_CLASS, STACK_TRACE, the content segment. */
static int build_prefix(Out *o, uint32_t seed, const char *package)
{
    Model *m = calloc(1, sizeof *m);
    unsigned i;
    size_t at;

    if (!m)
        return 0;
    sim_rng_seed(&m->rng, sim_rng_mix(seed, 0x4850524full /* "HPRO" */));
    build_model(m, package);
    put_bytes(o, HEADER_MAGIC, sizeof HEADER_MAGIC); /* with its NUL */
    put4(o, ID_SIZE);
    put8(o, 1700000000000ull + (uint64_t)seed * 1000u); /* ms since the epoch */
    /* the content segment interns the names it uses first: build it into a
     * scratch writer, then emit the strings it needs before it */
    {
        uint8_t scratch[PREFIX_CAP];
        Out seg = { scratch, 0, sizeof scratch, 0 };
        write_content_segment(&seg, m);
        for (i = 0; i < m->n_strings; i++) {
            at = begin_record(o, HPROF_TAG_STRING);
            put4(o, STRING_ID_BASE + i);
            put_bytes(o, m->strings[i], strlen(m->strings[i]));
            end_record(o, at);
        }
        for (i = 0; i < m->n_classes; i++) {
            at = begin_record(o, HPROF_TAG_LOAD_CLASS);
            put4(o, i + 1); /* class serial */
            put4(o, m->classes[i].id);
            put4(o, STACK_SERIAL);
            put4(o, m->classes[i].name_id);
            end_record(o, at);
        }
        at = begin_record(o, HPROF_TAG_STACK_TRACE);
        put4(o, STACK_SERIAL);
        put4(o, THREAD_SERIAL);
        put4(o, 0); /* no frames */
        end_record(o, at);
        put_bytes(o, scratch, seg.len);
        if (seg.overflow)
            o->overflow = 1;
    }
    free(m);
    return !o->overflow;
}

/* ---- the streamed part ---- */

typedef enum { PHASE_PREFIX, PHASE_FILLER, PHASE_END, PHASE_DONE } Phase;

struct hprof_gen {
    uint64_t total, offset;
    uint32_t seed;
    uint8_t prefix[PREFIX_CAP];
    size_t prefix_len;
    uint64_t filler_bytes;       /* all filler records together */
    uint32_t filler_records;
    Phase phase;
    size_t pos;                  /* in the prefix or the end record */
    uint32_t record;             /* current filler record */
    uint64_t record_len, record_off;
    uint8_t record_header[FILLER_OVERHEAD];
};

static uint64_t filler_record_len(const hprof_gen *g, uint32_t i)
{
    uint64_t base = g->filler_bytes / g->filler_records;
    return base + (i < g->filler_bytes % g->filler_records ? 1 : 0);
}

static void start_filler_record(hprof_gen *g)
{
    uint8_t *h = g->record_header;
    uint64_t len = filler_record_len(g, g->record);

    g->record_len = len;
    g->record_off = 0;
    h[0] = HPROF_TAG_HEAP_DUMP_SEGMENT;
    put_be(h + 1, 0, 4);
    put_be(h + 5, len - RECORD_HEADER_LEN, 4);
    h[9] = HPROF_HEAP_DUMP_INFO;
    put_be(h + 10, HPROF_HEAP_APP, 4);
    put_be(h + 14, STRING_ID_BASE, 4); /* "app": the first string */
    h[18] = HPROF_PRIMITIVE_ARRAY_DUMP;
    put_be(h + 19, FILLER_ID_BASE + 16u * g->record, 4);
    put_be(h + 23, STACK_SERIAL, 4);
    put_be(h + 27, len - FILLER_OVERHEAD, 4);
    h[31] = HPROF_TYPE_BYTE;
}

/* Filler data: a function of (seed, record, offset), so any read pattern
 * gives the same bytes. */
static void fill_data(const hprof_gen *g, uint64_t off, uint8_t *out, size_t n)
{
    uint64_t key = sim_rng_mix(g->seed, (uint64_t)g->record + 1);

    while (n > 0) {
        uint64_t word = sim_rng_mix(key, off >> 3);
        unsigned b = (unsigned)(off & 7);
        for (; b < 8 && n > 0; b++, n--, off++)
            *out++ = (uint8_t)(word >> (8 * b));
    }
}

hprof_gen *hprof_gen_new(uint64_t total, uint32_t seed, const char *package)
{
    hprof_gen *g;
    Out o;

    if (total < HPROF_GEN_MIN_TOTAL || total > HPROF_GEN_MAX_TOTAL)
        return NULL;
    g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->total = total;
    g->seed = seed;
    o.d = g->prefix;
    o.len = 0;
    o.cap = sizeof g->prefix;
    o.overflow = 0;
    if (!build_prefix(&o, seed, package)) {
        free(g);
        return NULL;
    }
    g->prefix_len = o.len;
    g->filler_bytes = total - g->prefix_len - END_RECORD_LEN; /* >= FILLER_OVERHEAD by PREFIX_CAP */
    g->filler_records = (uint32_t)((g->filler_bytes + HPROF_GEN_SEGMENT_MAX - 1) / HPROF_GEN_SEGMENT_MAX);
    g->phase = PHASE_PREFIX;
    return g;
}

size_t hprof_gen_read(hprof_gen *g, uint8_t *buf, size_t cap)
{
    static const uint8_t end_record[END_RECORD_LEN] = { HPROF_TAG_HEAP_DUMP_END, 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t done = 0;

    while (done < cap && g->phase != PHASE_DONE) {
        size_t n;

        switch (g->phase) {
        case PHASE_PREFIX:
            n = g->prefix_len - g->pos;
            if (n > cap - done)
                n = cap - done;
            memcpy(buf + done, g->prefix + g->pos, n);
            g->pos += n;
            done += n;
            if (g->pos == g->prefix_len) {
                g->phase = PHASE_FILLER;
                g->record = 0;
                start_filler_record(g);
            }
            break;
        case PHASE_FILLER:
            if (g->record_off < FILLER_OVERHEAD) {
                n = FILLER_OVERHEAD - (size_t)g->record_off;
                if (n > cap - done)
                    n = cap - done;
                memcpy(buf + done, g->record_header + g->record_off, n);
            } else {
                uint64_t left = g->record_len - g->record_off;
                n = left < cap - done ? (size_t)left : cap - done;
                fill_data(g, g->record_off - FILLER_OVERHEAD, buf + done, n);
            }
            g->record_off += n;
            done += n;
            if (g->record_off == g->record_len) {
                if (++g->record == g->filler_records) {
                    g->phase = PHASE_END;
                    g->pos = 0;
                } else {
                    start_filler_record(g);
                }
            }
            break;
        case PHASE_END:
            n = END_RECORD_LEN - g->pos;
            if (n > cap - done)
                n = cap - done;
            memcpy(buf + done, end_record + g->pos, n);
            g->pos += n;
            done += n;
            if (g->pos == END_RECORD_LEN)
                g->phase = PHASE_DONE;
            break;
        case PHASE_DONE:
            break;
        }
    }
    g->offset += done;
    return done;
}

uint64_t hprof_gen_total(const hprof_gen *g)
{
    return g->total;
}

uint64_t hprof_gen_offset(const hprof_gen *g)
{
    return g->offset;
}

void hprof_gen_free(hprof_gen *g)
{
    free(g);
}
