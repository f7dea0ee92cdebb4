/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for plugins/hprof/hprof_stream.c: hand-built dumps with every
 * record and sub-record kind, each built twice side by side (the Android
 * input and, written out by hand here, what hprof-conv makes of it), fed
 * whole, one byte at a time and in random pieces, in both modes; bad
 * inputs, each failing with -EPROTO and a message naming the offset of the
 * first bad byte; write errors; the patch callback only ever touching
 * bytes already written. The comparison with the real hprof-conv is
 * tests/integration/hprof-conv-compare.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/hprof/hprof_format.h"
#include "plugins/hprof/hprof_stream.h"

/* ---- a growing byte buffer (test code: malloc failure aborts) ---- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n)
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
    u1(b, v & 0xff);
}

static void u4(buf *b, uint32_t v)
{
    u2(b, v >> 16);
    u2(b, v & 0xffff);
}

static void idv(buf *b, unsigned id_size, uint64_t v)
{
    if (id_size == 8) {
        u4(b, (uint32_t)(v >> 32));
        u4(b, (uint32_t)v);
    } else {
        u4(b, (uint32_t)v);
    }
}

static void fill(buf *b, size_t n, uint8_t seed)
{
    while (n--)
        u1(b, seed++);
}

static void buf_free(buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- a dump and its conversion, built side by side ---- */

typedef struct {
    unsigned id;     /* id size */
    buf in, exp;     /* whole files */
    buf bin, bexp;   /* the current record's bodies */
} pair;

static void both(pair *d, const void *p, size_t n)
{
    put(&d->bin, p, n);
    put(&d->bexp, p, n);
}

static void both_u1(pair *d, unsigned v) { u1(&d->bin, v); u1(&d->bexp, v); }
static void both_u2(pair *d, unsigned v) { u2(&d->bin, v); u2(&d->bexp, v); }
static void both_u4(pair *d, uint32_t v) { u4(&d->bin, v); u4(&d->bexp, v); }
static void both_id(pair *d, uint64_t v) { idv(&d->bin, d->id, v); idv(&d->bexp, d->id, v); }
static void both_fill(pair *d, size_t n, uint8_t seed) { fill(&d->bin, n, seed); fill(&d->bexp, n, seed); }

static void pair_header(pair *d, unsigned id_size, const char *magic_in)
{
    static const uint8_t when[8] = { 0, 0, 1, 0x7f, 1, 2, 3, 4 };
    memset(d, 0, sizeof *d);
    d->id = id_size;
    put(&d->in, magic_in, strlen(magic_in) + 1);
    put(&d->exp, HPROF_MAGIC_1_0_2, HPROF_MAGIC_LEN + 1);
    u4(&d->in, id_size);
    u4(&d->exp, id_size);
    put(&d->in, when, sizeof when);
    put(&d->exp, when, sizeof when);
}

/* Close the current record: the input keeps its length, the conversion
 * carries the length of its own body. */
static void pair_record(pair *d, uint8_t tag)
{
    u1(&d->in, tag);
    u4(&d->in, 0x01020304);
    u4(&d->in, (uint32_t)d->bin.len);
    put(&d->in, d->bin.p, d->bin.len);
    u1(&d->exp, tag);
    u4(&d->exp, 0x01020304);
    u4(&d->exp, (uint32_t)d->bexp.len);
    put(&d->exp, d->bexp.p, d->bexp.len);
    d->bin.len = d->bexp.len = 0;
}

static void pair_free(pair *d)
{
    buf_free(&d->in);
    buf_free(&d->exp);
    buf_free(&d->bin);
    buf_free(&d->bexp);
}

/* Every record kind and every sub-record kind, with the conversion spelled
 * out (doc/hprof.md, "Android to J2SE"). */
static void build_every_kind(pair *d, unsigned id_size)
{
    static const uint8_t android_id_roots[] = {
        HPROF_ROOT_INTERNED_STRING, HPROF_ROOT_FINALIZING, HPROF_ROOT_DEBUGGER,
        HPROF_ROOT_REFERENCE_CLEANUP, HPROF_ROOT_VM_INTERNAL, HPROF_UNREACHABLE,
    };
    static const uint8_t prim[] = {
        HPROF_BASIC_BOOLEAN, HPROF_BASIC_CHAR, HPROF_BASIC_FLOAT, HPROF_BASIC_DOUBLE,
        HPROF_BASIC_BYTE, HPROF_BASIC_SHORT, HPROF_BASIC_INT, HPROF_BASIC_LONG,
    };
    static const uint8_t all_types[] = {
        HPROF_BASIC_OBJECT, HPROF_BASIC_BOOLEAN, HPROF_BASIC_CHAR, HPROF_BASIC_FLOAT,
        HPROF_BASIC_DOUBLE, HPROF_BASIC_BYTE, HPROF_BASIC_SHORT, HPROF_BASIC_INT, HPROF_BASIC_LONG,
    };
    const unsigned id = id_size;
    size_t i;

    pair_header(d, id_size, HPROF_MAGIC_ANDROID);

    /* top-level records other than heap dumps: copied */
    both_id(d, 1);
    both(d, "main", 4);
    pair_record(d, HPROF_TAG_STRING);
    both_u4(d, 1);
    both_id(d, 0x100);
    both_u4(d, 1);
    both_id(d, 1);
    pair_record(d, HPROF_TAG_LOAD_CLASS);
    both_fill(d, 3, 0xa0);
    pair_record(d, 0x77); /* unknown to everyone: copied */
    pair_record(d, HPROF_TAG_STACK_TRACE); /* empty body */

    /* segment 1: every root */
    u1(&d->bin, HPROF_HEAP_DUMP_INFO); /* dropped */
    u4(&d->bin, HPROF_HEAP_ZYGOTE);
    idv(&d->bin, id, 1);
    for (i = 0; i < sizeof android_id_roots; i++) {
        u1(&d->bin, android_id_roots[i]);
        u1(&d->bexp, HPROF_ROOT_UNKNOWN);
        both_id(d, 0x200 + i);
    }
    u1(&d->bin, HPROF_ROOT_JNI_MONITOR); /* id kept, 8 bytes dropped */
    idv(&d->bin, id, 0x210);
    u4(&d->bin, 5);
    u4(&d->bin, 6);
    u1(&d->bexp, HPROF_ROOT_UNKNOWN);
    idv(&d->bexp, id, 0x210);
    both_u1(d, HPROF_ROOT_UNKNOWN);
    both_id(d, 0x220);
    both_u1(d, HPROF_ROOT_JNI_GLOBAL);
    both_id(d, 0x221);
    both_id(d, 0x222);
    both_u1(d, HPROF_ROOT_JNI_LOCAL);
    both_id(d, 0x223);
    both_u4(d, 1);
    both_u4(d, 2);
    both_u1(d, HPROF_ROOT_JAVA_FRAME);
    both_id(d, 0x224);
    both_u4(d, 1);
    both_u4(d, 2);
    both_u1(d, HPROF_ROOT_NATIVE_STACK);
    both_id(d, 0x225);
    both_u4(d, 1);
    both_u1(d, HPROF_ROOT_STICKY_CLASS);
    both_id(d, 0x226);
    both_u1(d, HPROF_ROOT_THREAD_BLOCK);
    both_id(d, 0x227);
    both_u4(d, 1);
    both_u1(d, HPROF_ROOT_MONITOR_USED);
    both_id(d, 0x228);
    both_u1(d, HPROF_ROOT_THREAD_OBJECT);
    both_id(d, 0x229);
    both_u4(d, 1);
    both_u4(d, 2);
    pair_record(d, HPROF_TAG_HEAP_DUMP_SEGMENT);

    /* segment 2: objects */
    u1(&d->bin, HPROF_HEAP_DUMP_INFO);
    u4(&d->bin, HPROF_HEAP_APP);
    idv(&d->bin, id, 1);
    both_u1(d, HPROF_CLASS_DUMP);
    both_id(d, 0x100);
    both_u4(d, 1);
    for (i = 0; i < 6; i++)
        both_id(d, i);
    both_u4(d, 16);
    both_u2(d, sizeof all_types);
    for (i = 0; i < sizeof all_types; i++) {
        both_u2(d, (unsigned)i);
        both_u1(d, all_types[i]);
        both_fill(d, hprof_basic_size(all_types[i], id), (uint8_t)i);
    }
    both_u2(d, sizeof all_types);
    for (i = 0; i < sizeof all_types; i++) {
        both_id(d, 0x300 + i);
        both_u1(d, all_types[i]);
        both_fill(d, hprof_basic_size(all_types[i], id), (uint8_t)(i * 7));
    }
    both_u2(d, sizeof all_types);
    for (i = 0; i < sizeof all_types; i++) {
        both_id(d, 0x400 + i);
        both_u1(d, all_types[i]);
    }
    both_u1(d, HPROF_CLASS_DUMP); /* a class with nothing */
    both_id(d, 0x101);
    both_u4(d, 1);
    for (i = 0; i < 6; i++)
        both_id(d, 0);
    both_u4(d, 0);
    both_u2(d, 0);
    both_u2(d, 0);
    both_u2(d, 0);
    both_u1(d, HPROF_INSTANCE_DUMP);
    both_id(d, 0x500);
    both_u4(d, 1);
    both_id(d, 0x100);
    both_u4(d, 13);
    both_fill(d, 13, 0x33);
    both_u1(d, HPROF_INSTANCE_DUMP);
    both_id(d, 0x501);
    both_u4(d, 1);
    both_id(d, 0x101);
    both_u4(d, 0);
    both_u1(d, HPROF_OBJECT_ARRAY_DUMP);
    both_id(d, 0x600);
    both_u4(d, 1);
    both_u4(d, 3);
    both_id(d, 0x100);
    for (i = 0; i < 3; i++)
        both_id(d, 0x500 + i);
    for (i = 0; i < sizeof prim; i++) {
        both_u1(d, HPROF_PRIMITIVE_ARRAY_DUMP);
        both_id(d, 0x700 + i);
        both_u4(d, 1);
        both_u4(d, (uint32_t)i);
        both_u1(d, prim[i]);
        both_fill(d, i * hprof_basic_size(prim[i], id), (uint8_t)i);
    }
    for (i = 0; i < sizeof prim; i++) {
        /* 0x23, and hprof-conv zeroes the u4 after the id: the stack serial */
        u1(&d->bin, HPROF_PRIMITIVE_ARRAY_NODATA);
        u1(&d->bexp, HPROF_PRIMITIVE_ARRAY_DUMP);
        both_id(d, 0x800 + i);
        u4(&d->bin, 0x99);
        u4(&d->bexp, 0);
        both_u4(d, 10 + (uint32_t)i);
        both_u1(d, prim[i]);
    }
    pair_record(d, HPROF_TAG_HEAP_DUMP_SEGMENT);

    /* a segment of nothing but heap info converts to an empty one */
    u1(&d->bin, HPROF_HEAP_DUMP_INFO);
    u4(&d->bin, HPROF_HEAP_IMAGE);
    idv(&d->bin, id, 1);
    pair_record(d, HPROF_TAG_HEAP_DUMP_SEGMENT);
    pair_record(d, HPROF_TAG_HEAP_DUMP_SEGMENT); /* empty */
    pair_record(d, HPROF_TAG_HEAP_DUMP_END);

    /* a single HEAP_DUMP record, converted the same way */
    u1(&d->bin, HPROF_ROOT_DEBUGGER);
    u1(&d->bexp, HPROF_ROOT_UNKNOWN);
    both_id(d, 0x900);
    pair_record(d, HPROF_TAG_HEAP_DUMP);
}

/* ---- running a stream ---- */

typedef struct {
    buf out;
    unsigned patches;
    int fail_write_at; /* fail the Nth write with -ENOSPC; 0 never */
    unsigned writes;
} sink;

static int sink_write(void *ud, const uint8_t *p, size_t n)
{
    sink *k = ud;
    assert_true(n > 0);
    if (k->fail_write_at && ++k->writes >= (unsigned)k->fail_write_at)
        return -ENOSPC;
    put(&k->out, p, n);
    return 0;
}

static int sink_patch(void *ud, uint64_t off, const uint8_t *p, size_t n)
{
    sink *k = ud;
    assert_true(off + n <= k->out.len); /* only bytes already written */
    memcpy(k->out.p + off, p, n);
    k->patches++;
    return 0;
}

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 17);
}

enum { SPLIT_WHOLE = 0, SPLIT_BYTES = 1 }; /* or >= 2: random pieces, a seed */

/* Feed all of in, split as asked, and finish. The result: 0 or the error,
 * whose message is copied to msg; either way the stream's bookkeeping and
 * stickiness are checked on the way. */
static int run(hprof_out_format fmt, const uint8_t *in, size_t len, unsigned split, sink *k,
               char *msg, size_t msglen)
{
    hprof_stream *s = hprof_stream_new(fmt, sink_write, sink_patch, k);
    size_t off = 0;
    int rc = 0, again;
    assert_non_null(s);
    rng_state = 0x2545f4914f6cdd1dull * (split + 1);
    while (off < len && rc == 0) {
        size_t n = len - off;
        if (split == SPLIT_BYTES)
            n = 1;
        else if (split >= 2 && n > 1)
            n = 1 + rnd() % (rnd() % 4 == 0 ? n : (n < 40 ? n : 40));
        rc = hprof_stream_feed(s, in + off, n);
        off += n;
        if (rc == 0) {
            assert_int_equal(hprof_stream_bytes_in(s), off);
            assert_int_equal(hprof_stream_bytes_out(s), k->out.len);
        }
    }
    if (rc == 0)
        rc = hprof_stream_finish(s);
    if (rc != 0) {
        assert_non_null(hprof_stream_error(s));
        snprintf(msg, msglen, "%s", hprof_stream_error(s));
        again = hprof_stream_feed(s, in, len ? 1 : 0); /* sticky */
        assert_int_equal(again, rc);
        assert_int_equal(hprof_stream_finish(s), rc);
    } else {
        assert_null(hprof_stream_error(s));
        assert_int_equal(hprof_stream_bytes_in(s), len);
        assert_int_equal(hprof_stream_feed(s, in, 0), -EINVAL); /* finished */
        msg[0] = 0;
    }
    hprof_stream_free(s);
    return rc;
}

static void assert_bytes(const buf *got, const buf *want)
{
    size_t i;
    if (got->len == want->len && memcmp(got->p, want->p, got->len) == 0)
        return;
    for (i = 0; i < got->len && i < want->len && got->p[i] == want->p[i]; i++)
        ;
    print_error("output differs at byte %zu (got %zu bytes, want %zu)\n", i, got->len, want->len);
    fail();
}

static const unsigned splits[] = { SPLIT_WHOLE, SPLIT_BYTES, 2, 3, 5, 8, 13, 21, 34, 55 };

static void check_every_split(hprof_out_format fmt, const buf *in, const buf *want)
{
    char msg[300];
    size_t i;
    for (i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        sink k = { 0 };
        int rc = run(fmt, in->p, in->len, splits[i], &k, msg, sizeof msg);
        if (rc != 0)
            print_error("split %u: %s\n", splits[i], msg);
        assert_int_equal(rc, 0);
        assert_bytes(&k.out, want);
        if (fmt == HPROF_OUT_ANDROID)
            assert_int_equal(k.patches, 0);
        buf_free(&k.out);
    }
}

/* ---- the tests ---- */

static void test_android_copies_every_kind(void **state)
{
    pair d;
    (void)state;
    build_every_kind(&d, 4);
    check_every_split(HPROF_OUT_ANDROID, &d.in, &d.in);
    pair_free(&d);
    build_every_kind(&d, 8);
    check_every_split(HPROF_OUT_ANDROID, &d.in, &d.in);
    pair_free(&d);
}

static void test_standard_converts_every_kind(void **state)
{
    pair d;
    (void)state;
    build_every_kind(&d, 4);
    assert_true(d.exp.len < d.in.len); /* the test itself: something changed */
    check_every_split(HPROF_OUT_STANDARD, &d.in, &d.exp);
    pair_free(&d);
}

static void test_android_accepts_older_headers(void **state)
{
    static const char *const magics[] = { HPROF_MAGIC_1_0_1, HPROF_MAGIC_1_0_2 };
    size_t i;
    (void)state;
    for (i = 0; i < 2; i++) {
        pair d;
        pair_header(&d, 4, magics[i]);
        both_u1(&d, HPROF_ROOT_STICKY_CLASS);
        both_id(&d, 7);
        pair_record(&d, HPROF_TAG_HEAP_DUMP);
        check_every_split(HPROF_OUT_ANDROID, &d.in, &d.in);
        pair_free(&d);
    }
}

/* A segment much larger than the output buffer whose length changes at
 * its very end: the length is patched through the callback, after the
 * header went out, and the big array passes through in pieces. */
static void test_standard_patches_big_record(void **state)
{
    pair d;
    sink k = { 0 };
    char msg[300];
    (void)state;
    pair_header(&d, 4, HPROF_MAGIC_ANDROID);
    both_u1(&d, HPROF_PRIMITIVE_ARRAY_DUMP);
    both_id(&d, 1);
    both_u4(&d, 0);
    both_u4(&d, 300000);
    both_u1(&d, HPROF_BASIC_INT);
    both_fill(&d, 4u * 300000u, 9);
    u1(&d.bin, HPROF_ROOT_JNI_MONITOR);
    idv(&d.bin, 4, 2);
    u4(&d.bin, 0);
    u4(&d.bin, 0);
    u1(&d.bexp, HPROF_ROOT_UNKNOWN);
    idv(&d.bexp, 4, 2);
    pair_record(&d, HPROF_TAG_HEAP_DUMP_SEGMENT);
    pair_record(&d, HPROF_TAG_HEAP_DUMP_END);
    assert_int_equal(run(HPROF_OUT_STANDARD, d.in.p, d.in.len, 7, &k, msg, sizeof msg), 0);
    assert_bytes(&k.out, &d.exp);
    assert_int_equal(k.patches, 1);
    buf_free(&k.out);
    check_every_split(HPROF_OUT_STANDARD, &d.in, &d.exp);
    pair_free(&d);
}

/* ---- bad inputs ---- */

typedef struct {
    const char *name;
    int modes;            /* 1 ANDROID, 2 STANDARD, 3 both */
    const char *expect;   /* must appear in the message */
} bad_case;

static void check_bad(const buf *in, const bad_case *c)
{
    char msg[300];
    size_t i;
    int m;
    for (m = 0; m < 2; m++) {
        if (!(c->modes & (1 << m)))
            continue;
        for (i = 0; i < sizeof splits / sizeof splits[0]; i++) {
            sink k = { 0 };
            int rc = run(m ? HPROF_OUT_STANDARD : HPROF_OUT_ANDROID, in->p, in->len, splits[i], &k,
                         msg, sizeof msg);
            if (rc != -EPROTO || !strstr(msg, c->expect))
                print_error("%s, mode %d, split %u: rc %d, message \"%s\", want \"%s\"\n", c->name, m,
                            splits[i], rc, msg, c->expect);
            assert_int_equal(rc, -EPROTO);
            assert_non_null(strstr(msg, c->expect));
            buf_free(&k.out);
        }
    }
}

/* A valid header (31 bytes) with id size 4; records start at byte 31. */
static void good_header(buf *b)
{
    put(b, HPROF_MAGIC_ANDROID, HPROF_MAGIC_LEN + 1);
    u4(b, 4);
    u4(b, 0);
    u4(b, 0);
}

static void rec_header(buf *b, uint8_t tag, uint32_t len)
{
    u1(b, tag);
    u4(b, 0);
    u4(b, len);
}

static void test_bad_header(void **state)
{
    buf b = { 0 };
    (void)state;

    check_bad(&b, &(bad_case){ "empty input", 3, "ended at byte 0 inside the file header" });
    good_header(&b);
    b.len = 10;
    check_bad(&b, &(bad_case){ "truncated magic", 3, "ended at byte 10 inside the file header" });
    b.len = 25;
    check_bad(&b, &(bad_case){ "truncated id size and time", 3, "ended at byte 25 inside the file header" });
    b.len = 0;
    put(&b, "JAVA PROFILX 1.0.3", 19);
    check_bad(&b, &(bad_case){ "bad magic", 3, "byte 11" });
    b.len = 0;
    put(&b, "JAVA PROFILE 1.0.4", 19);
    check_bad(&b, &(bad_case){ "unknown version", 3, "version at byte 17" });
    b.len = 0;
    put(&b, "JAVA PROFILE 1.0.33", 20);
    check_bad(&b, &(bad_case){ "magic not terminated", 3, "not terminated at byte 18" });
    b.len = 0;
    put(&b, HPROF_MAGIC_ANDROID, HPROF_MAGIC_LEN + 1);
    u4(&b, 3);
    u4(&b, 0);
    u4(&b, 0);
    check_bad(&b, &(bad_case){ "id size 3", 3, "id size 3 at byte 19" });
    b.p[22] = 8;
    check_bad(&b, &(bad_case){ "id size 8 cannot be converted", 2, "id size 8 at byte 19" });
    b.len = 0;
    put(&b, HPROF_MAGIC_1_0_2, HPROF_MAGIC_LEN + 1);
    u4(&b, 4);
    u4(&b, 0);
    u4(&b, 0);
    check_bad(&b, &(bad_case){ "1.0.2 cannot be converted", 2, "already the standard format" });
    buf_free(&b);
}

static void test_bad_records(void **state)
{
    buf b = { 0 };
    (void)state;

    good_header(&b);
    rec_header(&b, HPROF_TAG_STRING, 100);
    fill(&b, 5, 0);
    check_bad(&b, &(bad_case){ "record length past the end", 3, "ended at byte 45 inside a record body (record 0x01 at byte 31)" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_STRING, 2);
    fill(&b, 2, 0);
    fill(&b, 3, 0x0c); /* a partial record header */
    check_bad(&b, &(bad_case){ "trailing partial record", 3, "ended at byte 45 inside a record header (record 0x0c at byte 42)" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 3);
    u1(&b, HPROF_ROOT_UNKNOWN);
    u2(&b, 0);
    check_bad(&b, &(bad_case){ "root past its record", 3, "sub-record 0xff at byte 40 needs 4 bytes from byte 41" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 5);
    u1(&b, 0x42);
    u4(&b, 0);
    check_bad(&b, &(bad_case){ "unknown sub-record tag", 3, "unknown heap-dump sub-record tag 0x42 at byte 40" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 1 + 16 + 4);
    u1(&b, HPROF_INSTANCE_DUMP);
    u4(&b, 1);
    u4(&b, 0);
    u4(&b, 2);
    u4(&b, 5); /* 5 field bytes, 4 left */
    u4(&b, 0);
    check_bad(&b, &(bad_case){ "instance bytes past the record", 3, "field bytes of sub-record 0x21 at byte 40 needs 5 bytes from byte 57" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 1 + 13 + 4);
    u1(&b, HPROF_PRIMITIVE_ARRAY_DUMP);
    u4(&b, 1);
    u4(&b, 0);
    u4(&b, 0x40000000u); /* 4 GiB of ints */
    u1(&b, HPROF_BASIC_INT);
    u4(&b, 0);
    check_bad(&b, &(bad_case){ "array elements past the record", 3, "elements of sub-record 0x23 at byte 40 needs 4294967296 bytes" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 14);
    u1(&b, HPROF_PRIMITIVE_ARRAY_DUMP);
    u4(&b, 1);
    u4(&b, 0);
    u4(&b, 0);
    u1(&b, 3); /* no basic type 3 */
    check_bad(&b, &(bad_case){ "bad array element type", 3, "invalid basic type 3 in array element type at byte 40" });
    b.p[b.len - 1] = HPROF_BASIC_OBJECT;
    check_bad(&b, &(bad_case){ "object primitive array", 3, "invalid basic type 2" });
    b.p[40] = HPROF_PRIMITIVE_ARRAY_NODATA;
    check_bad(&b, &(bad_case){ "object array without data", 3, "invalid basic type 2" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 1 + 7 * 4 + 8 + 2 + 3 + 1);
    u1(&b, HPROF_CLASS_DUMP);
    fill(&b, 7 * 4 + 8, 0);
    u2(&b, 1); /* one constant: index, type 12 */
    u2(&b, 0);
    u1(&b, 12);
    u1(&b, 0);
    check_bad(&b, &(bad_case){ "bad constant type", 3, "invalid basic type 12 in constant pool entry at byte 79" });
    b.p[81] = HPROF_BASIC_LONG; /* 8 bytes, 1 left */
    check_bad(&b, &(bad_case){ "constant past the record", 3, "constant value of sub-record 0x20 at byte 40 needs 8 bytes from byte 82" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 1 + 7 * 4 + 8 + 2 + 2 + 2 + 5);
    u1(&b, HPROF_CLASS_DUMP);
    fill(&b, 7 * 4 + 8, 0);
    u2(&b, 0);
    u2(&b, 0);
    u2(&b, 2); /* two instance fields, room for one */
    u4(&b, 9);
    u1(&b, HPROF_BASIC_INT);
    check_bad(&b, &(bad_case){ "field list past the record", 3, "instance field of sub-record 0x20 at byte 40 needs 5 bytes from byte 88" });
    b.p[82] = 1;
    b.p[b.len - 1] = 0; /* one field of no type */
    check_bad(&b, &(bad_case){ "bad field type", 3, "invalid basic type 0 in instance field at byte 83" });

    b.len = 31;
    rec_header(&b, HPROF_TAG_HEAP_DUMP_SEGMENT, 5);
    u1(&b, HPROF_ROOT_UNKNOWN);
    u4(&b, 1);
    check_bad(&b, &(bad_case){ "segments without HEAP_DUMP_END", 3, "ended at byte 45 after HEAP_DUMP_SEGMENT" });
    b.len -= 2;
    check_bad(&b, &(bad_case){ "truncated sub-record", 3, "ended at byte 43 inside HEAP_DUMP_SEGMENT record at byte 31 (sub-record 0xff at byte 40)" });
    buf_free(&b);
}

/* ---- errors of the callbacks and the API ---- */

static void test_write_error_is_sticky(void **state)
{
    pair d;
    sink k = { 0 };
    char msg[300];
    (void)state;
    build_every_kind(&d, 4);
    k.fail_write_at = 2;
    assert_int_equal(run(HPROF_OUT_STANDARD, d.in.p, d.in.len, SPLIT_BYTES, &k, msg, sizeof msg), -ENOSPC);
    assert_non_null(strstr(msg, "write failed at output byte"));
    buf_free(&k.out);
    pair_free(&d);
}

static void test_new_checks_callbacks(void **state)
{
    sink k = { 0 };
    hprof_stream *s;
    (void)state;
    errno = 0;
    assert_null(hprof_stream_new(HPROF_OUT_STANDARD, sink_write, NULL, &k));
    assert_int_equal(errno, EINVAL);
    assert_null(hprof_stream_new(HPROF_OUT_ANDROID, NULL, NULL, &k));
    assert_null(hprof_stream_new((hprof_out_format)7, sink_write, sink_patch, &k));
    s = hprof_stream_new(HPROF_OUT_ANDROID, sink_write, NULL, &k);
    assert_non_null(s);
    assert_int_equal(hprof_stream_id_size(s), 0);
    assert_int_equal(hprof_stream_feed(s, NULL, 0), 0);
    hprof_stream_free(s);
    hprof_stream_free(NULL);
}

/* 64 MiB of array elements in 1 MiB pieces: passed straight through (the
 * stream holds no body; ASan would see a larger allocation's leak or
 * overflow). */
static void test_big_array_streams_through(void **state)
{
    enum { PIECE = 1 << 20, PIECES = 64 };
    sink k = { 0 };
    buf head = { 0 };
    uint8_t *zeros = calloc(1, PIECE);
    hprof_stream *s;
    unsigned i;
    uint64_t out_before;
    (void)state;
    assert_non_null(zeros);
    good_header(&head);
    rec_header(&head, HPROF_TAG_HEAP_DUMP_SEGMENT, 14 + (uint32_t)PIECE * PIECES);
    u1(&head, HPROF_PRIMITIVE_ARRAY_DUMP);
    u4(&head, 1);
    u4(&head, 0);
    u4(&head, (uint32_t)PIECE * PIECES);
    u1(&head, HPROF_BASIC_BYTE);
    s = hprof_stream_new(HPROF_OUT_STANDARD, sink_write, sink_patch, &k);
    assert_non_null(s);
    assert_int_equal(hprof_stream_feed(s, head.p, head.len), 0);
    out_before = k.out.len;
    for (i = 0; i < PIECES; i++) {
        assert_int_equal(hprof_stream_feed(s, zeros, PIECE), 0);
        /* everything went out: nothing of the body is kept */
        assert_int_equal(k.out.len - out_before, PIECE);
        k.out.len = out_before; /* do not keep it here either */
    }
    head.len = 0;
    rec_header(&head, HPROF_TAG_HEAP_DUMP_END, 0);
    assert_int_equal(hprof_stream_feed(s, head.p, head.len), 0);
    assert_int_equal(hprof_stream_finish(s), 0);
    assert_int_equal(hprof_stream_bytes_in(s), 31 + 9 + 14 + (uint64_t)PIECE * PIECES + 9);
    assert_int_equal(k.patches, 0);
    hprof_stream_free(s);
    buf_free(&head);
    buf_free(&k.out);
    free(zeros);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_android_copies_every_kind),
        cmocka_unit_test(test_standard_converts_every_kind),
        cmocka_unit_test(test_android_accepts_older_headers),
        cmocka_unit_test(test_standard_patches_big_record),
        cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_write_error_is_sticky),
        cmocka_unit_test(test_new_checks_callbacks),
        cmocka_unit_test(test_big_array_streams_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
