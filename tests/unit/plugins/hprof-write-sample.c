/* SPDX-License-Identifier: Apache-2.0
 *
 * hprof-write-sample: writes Android (1.0.3) heap dumps for
 * tests/integration/hprof-conv-compare.sh, which converts them with the
 * real hprof-conv and with plugins/hprof/hprof_stream.c and compares.
 *
 *   hprof-write-sample all FILE   every record and sub-record kind, small
 *   hprof-write-sample big FILE   a few MiB: big arrays and instances,
 *                                 segments over 64 KiB whose length changes
 *   hprof-write-sample id8 FILE   "all" with 8-byte ids (Android mode only:
 *                                 hprof-conv reads 4-byte ids only)
 *
 * The content is deterministic (a fixed xorshift seed). Test code: buffers
 * grow with malloc and a failure aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/hprof/hprof_format.h"

typedef struct {
    uint8_t *p;
    size_t len, cap;
} buf;

static unsigned id_size = 4;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void u1(buf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    put(b, &x, 1);
}

static void u2(buf *b, unsigned v)
{
    u1(b, v >> 8);
    u1(b, v);
}

static void u4(buf *b, uint32_t v)
{
    u2(b, v >> 16);
    u2(b, v & 0xffff);
}

static void u8(buf *b, uint64_t v)
{
    u4(b, (uint32_t)(v >> 32));
    u4(b, (uint32_t)v);
}

static void id(buf *b, uint64_t v)
{
    if (id_size == 8)
        u8(b, v);
    else
        u4(b, (uint32_t)v);
}

static void random_bytes(buf *b, size_t n)
{
    while (n--)
        u1(b, next_random());
}

/* One top-level record: header then body; the body is emptied. */
static void record(buf *out, uint8_t tag, buf *body)
{
    u1(out, tag);
    u4(out, 0x1234);
    u4(out, (uint32_t)body->len);
    if (body->len)
        put(out, body->p, body->len);
    body->len = 0;
}

static void header(buf *out)
{
    put(out, HPROF_MAGIC_ANDROID, HPROF_MAGIC_LEN + 1);
    u4(out, id_size);
    u8(out, 0x0000017f00112233ull);
}

static void string_record(buf *out, uint64_t sid, const char *s)
{
    buf b = { 0 };
    id(&b, sid);
    put(&b, s, strlen(s));
    record(out, HPROF_TAG_STRING, &b);
    free(b.p);
}

static void heap_info(buf *b, uint32_t type, uint64_t name)
{
    u1(b, HPROF_HEAP_DUMP_INFO);
    u4(b, type);
    id(b, name);
}

static void every_root(buf *b, uint64_t obj)
{
    static const uint8_t id_only[] = {
        HPROF_ROOT_UNKNOWN, HPROF_ROOT_STICKY_CLASS, HPROF_ROOT_MONITOR_USED,
        HPROF_ROOT_INTERNED_STRING, HPROF_ROOT_FINALIZING, HPROF_ROOT_DEBUGGER,
        HPROF_ROOT_REFERENCE_CLEANUP, HPROF_ROOT_VM_INTERNAL, HPROF_UNREACHABLE,
    };
    static const uint8_t id_u4_u4[] = {
        HPROF_ROOT_JNI_LOCAL, HPROF_ROOT_JAVA_FRAME, HPROF_ROOT_THREAD_OBJECT, HPROF_ROOT_JNI_MONITOR,
    };
    size_t i;
    for (i = 0; i < sizeof id_only; i++) {
        u1(b, id_only[i]);
        id(b, obj + i);
    }
    for (i = 0; i < sizeof id_u4_u4; i++) {
        u1(b, id_u4_u4[i]);
        id(b, obj + 0x100 + i);
        u4(b, 7);
        u4(b, 0xabcdef00u + (uint32_t)i);
    }
    u1(b, HPROF_ROOT_JNI_GLOBAL);
    id(b, obj + 0x200);
    id(b, obj + 0x201);
    u1(b, HPROF_ROOT_NATIVE_STACK);
    id(b, obj + 0x202);
    u4(b, 3);
    u1(b, HPROF_ROOT_THREAD_BLOCK);
    id(b, obj + 0x203);
    u4(b, 4);
}

static void class_dump(buf *b, uint64_t cls)
{
    static const uint8_t types[] = {
        HPROF_BASIC_OBJECT, HPROF_BASIC_BOOLEAN, HPROF_BASIC_CHAR, HPROF_BASIC_FLOAT,
        HPROF_BASIC_DOUBLE, HPROF_BASIC_BYTE, HPROF_BASIC_SHORT, HPROF_BASIC_INT, HPROF_BASIC_LONG,
    };
    size_t i;
    u1(b, HPROF_CLASS_DUMP);
    id(b, cls);
    u4(b, 1);                            /* stack serial */
    for (i = 0; i < 6; i++)              /* super, loader, signers, domain, 2 reserved */
        id(b, i == 0 ? cls - 1 : 0);
    u4(b, 24);                           /* instance size */
    u2(b, 3);                            /* constant pool */
    for (i = 0; i < 3; i++) {
        u2(b, (unsigned)i);
        u1(b, types[i * 3 + 1]);
        random_bytes(b, hprof_basic_size(types[i * 3 + 1], id_size));
    }
    u2(b, sizeof types);                 /* statics, one of each type */
    for (i = 0; i < sizeof types; i++) {
        id(b, 0x500 + i);
        u1(b, types[i]);
        random_bytes(b, hprof_basic_size(types[i], id_size));
    }
    u2(b, sizeof types);                 /* instance fields */
    for (i = 0; i < sizeof types; i++) {
        id(b, 0x600 + i);
        u1(b, types[i]);
    }
}

static void instance(buf *b, uint64_t obj, uint64_t cls, uint32_t nbytes)
{
    u1(b, HPROF_INSTANCE_DUMP);
    id(b, obj);
    u4(b, 2);
    id(b, cls);
    u4(b, nbytes);
    random_bytes(b, nbytes);
}

static void object_array(buf *b, uint64_t obj, uint32_t n)
{
    uint32_t i;
    u1(b, HPROF_OBJECT_ARRAY_DUMP);
    id(b, obj);
    u4(b, 3);
    u4(b, n);
    id(b, 0x700);
    for (i = 0; i < n; i++)
        id(b, obj + 1 + i);
}

static void primitive_array(buf *b, uint8_t tag, uint64_t obj, uint8_t type, uint32_t n)
{
    u1(b, tag);
    id(b, obj);
    u4(b, 0x99);                         /* stack serial: hprof-conv zeroes it in NODATA */
    u4(b, n);
    u1(b, type);
    if (tag == HPROF_PRIMITIVE_ARRAY_DUMP)
        random_bytes(b, (size_t)n * hprof_basic_size(type, id_size));
}

static void write_all(buf *out)
{
    static const uint8_t prim[] = {
        HPROF_BASIC_BOOLEAN, HPROF_BASIC_CHAR, HPROF_BASIC_FLOAT, HPROF_BASIC_DOUBLE,
        HPROF_BASIC_BYTE, HPROF_BASIC_SHORT, HPROF_BASIC_INT, HPROF_BASIC_LONG,
    };
    buf b = { 0 };
    size_t i;

    header(out);
    string_record(out, 1, "zygote");
    string_record(out, 2, "app");
    string_record(out, 3, "java.lang.Object");
    u4(&b, 1);                           /* LOAD_CLASS */
    id(&b, 0x1000);
    u4(&b, 1);
    id(&b, 3);
    record(out, HPROF_TAG_LOAD_CLASS, &b);
    u4(&b, 1);                           /* STACK_TRACE, no frames */
    u4(&b, 1);
    u4(&b, 0);
    record(out, HPROF_TAG_STACK_TRACE, &b);
    random_bytes(&b, 5);                 /* a tag hprof-conv does not know: copied */
    record(out, 0x77, &b);

    heap_info(&b, HPROF_HEAP_ZYGOTE, 1);
    every_root(&b, 0x2000);
    class_dump(&b, 0x1000);
    instance(&b, 0x3000, 0x1000, 24);
    instance(&b, 0x3001, 0x1000, 0);
    object_array(&b, 0x4000, 5);
    object_array(&b, 0x4100, 0);
    for (i = 0; i < sizeof prim; i++)
        primitive_array(&b, HPROF_PRIMITIVE_ARRAY_DUMP, 0x5000 + i, prim[i], (uint32_t)i * 3);
    record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b);

    heap_info(&b, HPROF_HEAP_APP, 2);
    for (i = 0; i < sizeof prim; i++)
        primitive_array(&b, HPROF_PRIMITIVE_ARRAY_NODATA, 0x6000 + i, prim[i], (uint32_t)i + 1);
    every_root(&b, 0x7000);
    record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b);

    heap_info(&b, HPROF_HEAP_IMAGE, 2);  /* a segment that converts to nothing */
    record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b);
    record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b); /* empty */
    record(out, HPROF_TAG_HEAP_DUMP_END, &b);

    every_root(&b, 0x8000);              /* an old-style single HEAP_DUMP too */
    instance(&b, 0x8800, 0x1000, 3);
    record(out, HPROF_TAG_HEAP_DUMP, &b);
    free(b.p);
}

static void write_big(buf *out)
{
    buf b = { 0 };
    uint32_t i;

    header(out);
    string_record(out, 1, "app");
    heap_info(&b, HPROF_HEAP_APP, 1);
    class_dump(&b, 0x1000);
    primitive_array(&b, HPROF_PRIMITIVE_ARRAY_DUMP, 0x10, HPROF_BASIC_BYTE, 1536u * 1024u);
    primitive_array(&b, HPROF_PRIMITIVE_ARRAY_DUMP, 0x11, HPROF_BASIC_LONG, 128u * 1024u);
    instance(&b, 0x12, 0x1000, 300u * 1024u);
    object_array(&b, 0x13, 64u * 1024u);
    for (i = 0; i < 2000; i++)           /* the length changes after 3 MiB */
        every_root(&b, 0x100000u + i * 0x300u);
    record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b);
    for (i = 0; i < 40; i++) {           /* many mid-sized segments */
        heap_info(&b, i % 2 ? HPROF_HEAP_ZYGOTE : HPROF_HEAP_APP, 1);
        primitive_array(&b, HPROF_PRIMITIVE_ARRAY_DUMP, 0x200000u + i, HPROF_BASIC_CHAR,
                        next_random() % 40000u);
        primitive_array(&b, HPROF_PRIMITIVE_ARRAY_NODATA, 0x300000u + i, HPROF_BASIC_INT, i);
        every_root(&b, 0x400000u + i * 0x300u);
        record(out, HPROF_TAG_HEAP_DUMP_SEGMENT, &b);
    }
    record(out, HPROF_TAG_HEAP_DUMP_END, &b);
    free(b.p);
}

int main(int argc, char **argv)
{
    buf out = { 0 };
    FILE *f;

    if (argc != 3) {
        fprintf(stderr, "usage: %s all|big|id8 FILE\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "all") == 0) {
        write_all(&out);
    } else if (strcmp(argv[1], "big") == 0) {
        write_big(&out);
    } else if (strcmp(argv[1], "id8") == 0) {
        id_size = 8;
        write_all(&out);
    } else {
        fprintf(stderr, "%s: unknown kind %s\n", argv[0], argv[1]);
        return 2;
    }
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out.p, 1, out.len, f) != out.len || fclose(f) != 0) {
        perror(argv[2]);
        return 1;
    }
    free(out.p);
    return 0;
}
