/* SPDX-License-Identifier: Apache-2.0
 *
 * hprof: the streaming checker and Android -> J2SE converter
 * (hprof_stream.h; the rules in doc/hprof.md).
 *
 * The input is read as a sequence of items. An item is either a fixed-size
 * part collected into the scratch (the file header, a record header, a
 * sub-record's tag and fixed fields, one class-dump constant or field
 * entry) and handled once complete, or a pass-through run (a record body
 * the converter does not look into, instance field bytes, array elements,
 * one constant or static value) copied from the caller's buffer to the
 * output as it arrives. A handler decides what of its item goes out
 * (ANDROID: all of it, unchanged; STANDARD: hprof-conv's rewrite) and which
 * item comes next. Output goes through a fixed buffer flushed at the end of
 * every feed.
 *
 * Bounds: inside a heap-dump record every item's size is charged to the
 * record's remaining length before the item is read (expect_in_record,
 * pass_in_record); a size that does not fit is an error at the item's
 * first byte. Sizes are computed in 64 bits (u4 count x 8 bytes at most).
 * The scratch holds the largest fixed part, a class dump's 7 ids + 10
 * bytes with 8-byte ids.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof_format.h"
#include <ddmon/bytes.h>

#include "hprof_stream.h"

#define OUT_BUFFER_SIZE (64u * 1024u)
#define SCRATCH_SIZE (7u * 8u + 10u)
#define ERROR_SIZE 256u

typedef enum {
    ST_MAGIC,           /* the header's string, byte by byte up to its NUL */
    ST_HEADER_TAIL,     /* u4 id size, u8 time */
    ST_RECORD_HEADER,   /* tag, time, length */
    ST_SUB_TAG,         /* a heap-dump sub-record's tag */
    ST_SUB_FIXED,       /* the tag again (scratch[0]) and its fixed fields */
    ST_CPOOL_ENTRY,     /* class dump: u2 index, u1 type */
    ST_STATIC_COUNT,    /* class dump: u2 */
    ST_STATIC_ENTRY,    /* class dump: id name, u1 type */
    ST_FIELD_COUNT,     /* class dump: u2 */
    ST_FIELD_ENTRY,     /* class dump: id name, u1 type */
    ST_PASS,            /* pass_left bytes straight through */
    ST_FINISHED,
} stream_state;

/* What follows a pass-through run. */
typedef enum {
    AFTER_RECORD,       /* the body of a record that is not a heap dump */
    AFTER_SUB_RECORD,   /* instance bytes or array elements */
    AFTER_CPOOL_VALUE,
    AFTER_STATIC_VALUE,
} pass_end;

struct hprof_stream {
    hprof_out_format fmt;
    hprof_write_fn write;
    hprof_patch_fn patch;
    void *ud;

    int err;
    char msg[ERROR_SIZE];

    uint64_t in_off;        /* input bytes consumed */
    uint64_t out_off;       /* output bytes produced (written + buffered) */
    uint8_t *out;           /* OUT_BUFFER_SIZE */
    size_t out_len;         /* buffered, not yet written */

    stream_state state;
    uint8_t scratch[SCRATCH_SIZE];
    size_t have, want;      /* scratch fill and the current item's size */
    uint64_t item_off;      /* input offset of the current item's first byte */

    uint64_t pass_left;
    bool pass_emit;
    pass_end pass_then;

    unsigned id_size;       /* 0 until the header is read */
    bool segments_open;     /* a HEAP_DUMP_SEGMENT with no HEAP_DUMP_END yet */

    /* the current record */
    uint8_t rec_tag;
    uint64_t rec_off;       /* input offset of its header */
    uint32_t rec_len;       /* its body length as the input says */
    uint32_t rec_left;      /* heap dumps: body bytes not yet claimed by an item */
    uint64_t rec_out_off;   /* output offset of its header */

    /* the current heap-dump sub-record */
    uint8_t sub_tag;
    uint64_t sub_off;
    uint32_t items_left;    /* class dump entries still to read in this list */
};

#if defined(__GNUC__)
#define DDM_HPROF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DDM_HPROF_PRINTF(a, b)
#endif

static int fail(hprof_stream *s, const char *fmt, ...) DDM_HPROF_PRINTF(2, 3);

static int fail(hprof_stream *s, const char *fmt, ...)
{
    va_list ap;
    if (s->err)
        return s->err;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->err = -EPROTO;
    return s->err;
}

static void fail_io(hprof_stream *s, int rc, const char *what)
{
    if (s->err)
        return;
    if (rc >= 0)
        rc = -EIO;
    snprintf(s->msg, sizeof s->msg, "%s failed at output byte %" PRIu64 ": %s", what,
             s->out_off - s->out_len, strerror(-rc));
    s->err = rc;
}

static uint16_t get_u2(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint32_t get_u4(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- output ---- */

static void flush(hprof_stream *s)
{
    int rc;
    if (s->err || s->out_len == 0)
        return;
    rc = s->write(s->ud, s->out, s->out_len);
    s->out_len = 0;
    if (rc < 0)
        fail_io(s, rc, "write");
}

static void emit(hprof_stream *s, const uint8_t *p, size_t n)
{
    int rc;
    if (s->err || n == 0)
        return;
    if (n > OUT_BUFFER_SIZE - s->out_len) {
        flush(s);
        if (s->err)
            return;
    }
    if (n >= OUT_BUFFER_SIZE) {
        rc = s->write(s->ud, p, n);
        if (rc < 0) {
            fail_io(s, rc, "write");
            return;
        }
        s->out_off += n;
        return;
    }
    memcpy(s->out + s->out_len, p, n);
    s->out_len += n;
    s->out_off += n;
}

/* Rewrite 4 bytes at output offset off, in the buffer if they are still
 * there, else through the patch fn once they have all been written. */
static void patch_u4(hprof_stream *s, uint64_t off, uint32_t v)
{
    uint8_t b[4];
    uint64_t written = s->out_off - s->out_len;
    int rc;
    ddm_put_u4(b, v);
    if (off >= written) {
        memcpy(s->out + (off - written), b, sizeof b);
        return;
    }
    if (off + sizeof b > written) {
        flush(s);
        if (s->err)
            return;
    }
    rc = s->patch(s->ud, off, b, sizeof b);
    if (rc < 0)
        fail_io(s, rc, "patch");
}

/* ---- what comes next ---- */

static void expect(hprof_stream *s, stream_state st, size_t n)
{
    s->state = st;
    s->have = 0;
    s->want = n;
    s->item_off = s->in_off;
}

static const char *tag_name(uint8_t tag)
{
    return tag == HPROF_TAG_HEAP_DUMP ? "HEAP_DUMP" : "HEAP_DUMP_SEGMENT";
}

/* Charge n more bytes of the current sub-record to its record. */
static int charge(hprof_stream *s, uint64_t n, const char *what)
{
    if (n > s->rec_left)
        return fail(s, "%s of sub-record 0x%02x at byte %" PRIu64 " needs %" PRIu64
                    " bytes from byte %" PRIu64 " but its %s record (byte %" PRIu64
                    ") has only %" PRIu32 " left",
                    what, s->sub_tag, s->sub_off, n, s->in_off, tag_name(s->rec_tag), s->rec_off,
                    s->rec_left);
    s->rec_left -= (uint32_t)n;
    return 0;
}

static void expect_in_record(hprof_stream *s, stream_state st, size_t n, const char *what)
{
    if (charge(s, n, what) == 0)
        expect(s, st, n);
}

static void after_pass(hprof_stream *s);

static void pass(hprof_stream *s, uint64_t n, bool out, pass_end then)
{
    s->state = ST_PASS;
    s->pass_left = n;
    s->pass_emit = out;
    s->pass_then = then;
    s->item_off = s->in_off;
    if (n == 0)
        after_pass(s);
}

static void pass_in_record(hprof_stream *s, uint64_t n, pass_end then, const char *what)
{
    if (charge(s, n, what) == 0)
        pass(s, n, true, then);
}

static void next_record(hprof_stream *s)
{
    expect(s, ST_RECORD_HEADER, HPROF_RECORD_HEADER_LEN);
}

/* A heap-dump record has been read to its end. */
static void heap_record_done(hprof_stream *s)
{
    uint64_t out_body = s->out_off - s->rec_out_off - HPROF_RECORD_HEADER_LEN;
    if (s->fmt == HPROF_OUT_STANDARD && out_body != s->rec_len) {
        /* the body only shrinks, so it fits the u4 it came in */
        patch_u4(s, s->rec_out_off + HPROF_RECORD_LENGTH_OFFSET, (uint32_t)out_body);
    }
    next_record(s);
}

static void sub_record_done(hprof_stream *s)
{
    if (s->rec_left == 0) {
        heap_record_done(s);
        return;
    }
    s->sub_off = s->in_off;
    expect(s, ST_SUB_TAG, 1);
}

static void next_cpool_entry(hprof_stream *s)
{
    if (s->items_left == 0) {
        expect_in_record(s, ST_STATIC_COUNT, 2, "static field count");
        return;
    }
    s->items_left--;
    expect_in_record(s, ST_CPOOL_ENTRY, 3, "constant pool entry");
}

static void next_static_entry(hprof_stream *s)
{
    if (s->items_left == 0) {
        expect_in_record(s, ST_FIELD_COUNT, 2, "instance field count");
        return;
    }
    s->items_left--;
    expect_in_record(s, ST_STATIC_ENTRY, s->id_size + 1u, "static field");
}

static void next_field_entry(hprof_stream *s)
{
    if (s->items_left == 0) {
        sub_record_done(s);
        return;
    }
    s->items_left--;
    expect_in_record(s, ST_FIELD_ENTRY, s->id_size + 1u, "instance field");
}

static void after_pass(hprof_stream *s)
{
    switch (s->pass_then) {
    case AFTER_RECORD:
        next_record(s);
        break;
    case AFTER_SUB_RECORD:
        sub_record_done(s);
        break;
    case AFTER_CPOOL_VALUE:
        next_cpool_entry(s);
        break;
    case AFTER_STATIC_VALUE:
        next_static_entry(s);
        break;
    }
}

/* ---- items ---- */

/* The header string arrives byte by byte so a wrong one is reported at its
 * first wrong byte: "JAVA PROFILE 1.0." then '1', '2' or '3', then NUL. */
static void on_magic_byte(hprof_stream *s, uint8_t c)
{
    static const char prefix[] = "JAVA PROFILE 1.0.";
    size_t i = s->have;
    uint64_t at = s->in_off - 1;

    s->scratch[s->have++] = c;
    if (i < HPROF_MAGIC_VERSION_DIGIT) {
        if (c != (uint8_t)prefix[i])
            fail(s, "not an HPROF file: header byte %" PRIu64 " is 0x%02x, expected '%c' of \"%s\"", at,
                 c, prefix[i], HPROF_MAGIC_ANDROID);
        return;
    }
    if (i == HPROF_MAGIC_VERSION_DIGIT) {
        if (c != '1' && c != '2' && c != '3')
            fail(s, "unknown HPROF version at byte %" PRIu64 ": 0x%02x (1.0.1, 1.0.2 or 1.0.3 expected)",
                 at, c);
        else if (s->fmt == HPROF_OUT_STANDARD && c != '3')
            fail(s, "header at byte 0 is \"JAVA PROFILE 1.0.%c\", already the standard format; only "
                 "Android's 1.0.3 can be converted (hprof-conv refuses it too)", c);
        return;
    }
    if (c != 0) {
        fail(s, "header string not terminated at byte %" PRIu64 " (0x%02x where NUL expected)", at, c);
        return;
    }
    if (s->fmt == HPROF_OUT_STANDARD)
        s->scratch[HPROF_MAGIC_VERSION_DIGIT] = '2';
    emit(s, s->scratch, s->have);
    expect(s, ST_HEADER_TAIL, HPROF_HEADER_TAIL_LEN);
}

static void on_header_tail(hprof_stream *s)
{
    uint32_t id_size = get_u4(s->scratch);
    if (id_size != 4 && id_size != 8) {
        fail(s, "id size %" PRIu32 " at byte %" PRIu64 ": 4 or 8 expected", id_size, s->item_off);
        return;
    }
    if (s->fmt == HPROF_OUT_STANDARD && id_size != 4) {
        fail(s, "id size %" PRIu32 " at byte %" PRIu64 ": hprof-conv reads 4-byte ids only, so the "
             "conversion is defined for 4 only", id_size, s->item_off);
        return;
    }
    s->id_size = id_size;
    emit(s, s->scratch, s->have);
    next_record(s);
}

static void on_record_header(hprof_stream *s)
{
    s->rec_tag = s->scratch[0];
    s->rec_len = get_u4(s->scratch + HPROF_RECORD_LENGTH_OFFSET);
    s->rec_off = s->item_off;
    s->rec_out_off = s->out_off;
    emit(s, s->scratch, s->have); /* in STANDARD, a heap dump's length is patched at its end */

    switch (s->rec_tag) {
    case HPROF_TAG_HEAP_DUMP_SEGMENT:
        s->segments_open = true;
        /* fall through */
    case HPROF_TAG_HEAP_DUMP:
        s->rec_left = s->rec_len;
        if (s->rec_left == 0) {
            heap_record_done(s);
            return;
        }
        s->sub_off = s->in_off;
        expect(s, ST_SUB_TAG, 1);
        return;
    case HPROF_TAG_HEAP_DUMP_END:
        s->segments_open = false;
        break;
    default:
        break;
    }
    s->rec_left = 0;
    pass(s, s->rec_len, true, AFTER_RECORD);
}

/* The size of a sub-record's fixed fields after its tag; 0 if the tag is
 * unknown. */
static size_t sub_fixed_len(uint8_t tag, unsigned id)
{
    switch (tag) {
    case HPROF_ROOT_UNKNOWN:
    case HPROF_ROOT_STICKY_CLASS:
    case HPROF_ROOT_MONITOR_USED:
    case HPROF_ROOT_INTERNED_STRING:
    case HPROF_ROOT_FINALIZING:
    case HPROF_ROOT_DEBUGGER:
    case HPROF_ROOT_REFERENCE_CLEANUP:
    case HPROF_ROOT_VM_INTERNAL:
    case HPROF_UNREACHABLE:
        return id;
    case HPROF_ROOT_JNI_GLOBAL:
        return 2u * id;
    case HPROF_ROOT_JNI_LOCAL:
    case HPROF_ROOT_JAVA_FRAME:
    case HPROF_ROOT_THREAD_OBJECT:
    case HPROF_ROOT_JNI_MONITOR:
        return id + 8u;
    case HPROF_ROOT_NATIVE_STACK:
    case HPROF_ROOT_THREAD_BLOCK:
    case HPROF_HEAP_DUMP_INFO:
        return id + 4u;
    case HPROF_CLASS_DUMP:
        return 7u * id + 8u + 2u; /* through the constant pool count */
    case HPROF_INSTANCE_DUMP:
    case HPROF_OBJECT_ARRAY_DUMP:
        return 2u * id + 8u;
    case HPROF_PRIMITIVE_ARRAY_DUMP:
    case HPROF_PRIMITIVE_ARRAY_NODATA:
        return id + 9u;
    default:
        return 0;
    }
}

static void on_sub_tag(hprof_stream *s)
{
    size_t len;
    s->sub_tag = s->scratch[0];
    s->sub_off = s->item_off;
    len = sub_fixed_len(s->sub_tag, s->id_size);
    if (len == 0) {
        fail(s, "unknown heap-dump sub-record tag 0x%02x at byte %" PRIu64 " (in %s record at byte %"
             PRIu64 ")", s->sub_tag, s->sub_off, tag_name(s->rec_tag), s->rec_off);
        return;
    }
    s->rec_left -= 1; /* the tag: rec_left > 0 was checked before a tag was expected */
    if (charge(s, len, "fixed part") != 0)
        return;
    s->state = ST_SUB_FIXED;
    s->want = 1 + len; /* the tag stays in scratch[0] */
}

/* The size of one value of basic type t, or an error naming where. */
static unsigned value_size(hprof_stream *s, uint8_t t, bool allow_object, const char *where)
{
    unsigned n = hprof_basic_size(t, s->id_size);
    if (n == 0 || (!allow_object && t == HPROF_BASIC_OBJECT)) {
        fail(s, "invalid basic type %u in %s at byte %" PRIu64 " (sub-record 0x%02x at byte %" PRIu64 ")",
             t, where, s->item_off, s->sub_tag, s->sub_off);
        return 0;
    }
    return n;
}

static void on_sub_fixed(hprof_stream *s)
{
    const unsigned id = s->id_size;
    uint8_t *b = s->scratch; /* b[0] is the tag */
    bool standard = s->fmt == HPROF_OUT_STANDARD;
    uint64_t count;
    unsigned elem;

    switch (s->sub_tag) {
    case HPROF_HEAP_DUMP_INFO:
        if (!standard)
            emit(s, b, s->have); /* STANDARD drops it: J2SE has no heaps */
        sub_record_done(s);
        return;
    case HPROF_ROOT_INTERNED_STRING:
    case HPROF_ROOT_FINALIZING:
    case HPROF_ROOT_DEBUGGER:
    case HPROF_ROOT_REFERENCE_CLEANUP:
    case HPROF_ROOT_VM_INTERNAL:
    case HPROF_UNREACHABLE:
    case HPROF_ROOT_JNI_MONITOR:
        if (standard) {
            /* ROOT_UNKNOWN with the id alone (JNI_MONITOR loses its 8 bytes) */
            b[0] = HPROF_ROOT_UNKNOWN;
            emit(s, b, 1u + id);
        } else {
            emit(s, b, s->have);
        }
        sub_record_done(s);
        return;
    case HPROF_PRIMITIVE_ARRAY_NODATA:
        if (standard) {
            /* What hprof-conv does: tag 0x23, and zero bytes 5..8, meant as
             * the array length but in fact the stack serial; the length
             * stays and no elements follow (doc/hprof.md). */
            b[0] = HPROF_PRIMITIVE_ARRAY_DUMP;
            memset(b + 1 + id, 0, 4);
        }
        if (value_size(s, b[1 + id + 8], false, "array element type") == 0)
            return;
        emit(s, b, s->have);
        sub_record_done(s);
        return;
    case HPROF_CLASS_DUMP:
        emit(s, b, s->have);
        s->items_left = get_u2(b + 1 + 7u * id + 8u);
        next_cpool_entry(s);
        return;
    case HPROF_INSTANCE_DUMP:
        emit(s, b, s->have);
        pass_in_record(s, get_u4(b + 1 + 2u * id + 4u), AFTER_SUB_RECORD, "field bytes");
        return;
    case HPROF_OBJECT_ARRAY_DUMP:
        emit(s, b, s->have);
        count = get_u4(b + 1 + id + 4u);
        pass_in_record(s, count * id, AFTER_SUB_RECORD, "elements");
        return;
    case HPROF_PRIMITIVE_ARRAY_DUMP:
        elem = value_size(s, b[1 + id + 8], false, "array element type");
        if (elem == 0)
            return;
        emit(s, b, s->have);
        count = get_u4(b + 1 + id + 4u);
        pass_in_record(s, count * elem, AFTER_SUB_RECORD, "elements");
        return;
    default: /* the other J2SE roots: fixed size, copied */
        emit(s, b, s->have);
        sub_record_done(s);
        return;
    }
}

static void on_item(hprof_stream *s)
{
    unsigned size;
    switch (s->state) {
    case ST_HEADER_TAIL:
        on_header_tail(s);
        break;
    case ST_RECORD_HEADER:
        on_record_header(s);
        break;
    case ST_SUB_TAG:
        on_sub_tag(s);
        break;
    case ST_SUB_FIXED:
        on_sub_fixed(s);
        break;
    case ST_CPOOL_ENTRY:
        size = value_size(s, s->scratch[2], true, "constant pool entry");
        if (size == 0)
            return;
        emit(s, s->scratch, s->have);
        pass_in_record(s, size, AFTER_CPOOL_VALUE, "constant value");
        break;
    case ST_STATIC_COUNT:
        emit(s, s->scratch, s->have);
        s->items_left = get_u2(s->scratch);
        next_static_entry(s);
        break;
    case ST_STATIC_ENTRY:
        size = value_size(s, s->scratch[s->id_size], true, "static field");
        if (size == 0)
            return;
        emit(s, s->scratch, s->have);
        pass_in_record(s, size, AFTER_STATIC_VALUE, "static value");
        break;
    case ST_FIELD_COUNT:
        emit(s, s->scratch, s->have);
        s->items_left = get_u2(s->scratch);
        next_field_entry(s);
        break;
    case ST_FIELD_ENTRY:
        if (value_size(s, s->scratch[s->id_size], true, "instance field") == 0)
            return;
        emit(s, s->scratch, s->have);
        next_field_entry(s);
        break;
    case ST_MAGIC:
    case ST_PASS:
    case ST_FINISHED:
        break; /* not scratch items */
    }
}

/* ---- API ---- */

hprof_stream *hprof_stream_new(hprof_out_format fmt, hprof_write_fn w, hprof_patch_fn patch, void *ud)
{
    hprof_stream *s;
    if (!w || (fmt != HPROF_OUT_ANDROID && fmt != HPROF_OUT_STANDARD) ||
        (fmt == HPROF_OUT_STANDARD && !patch)) {
        errno = EINVAL;
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->out = malloc(OUT_BUFFER_SIZE);
    if (!s->out) {
        free(s);
        return NULL;
    }
    s->fmt = fmt;
    s->write = w;
    s->patch = patch;
    s->ud = ud;
    s->state = ST_MAGIC;
    return s;
}

int hprof_stream_feed(hprof_stream *s, const uint8_t *p, size_t n)
{
    size_t k;
    if (s->err)
        return s->err;
    if (s->state == ST_FINISHED)
        return -EINVAL;
    while (n > 0 && !s->err) {
        if (s->state == ST_PASS) {
            k = n < s->pass_left ? n : (size_t)s->pass_left;
            if (s->pass_emit)
                emit(s, p, k);
            s->pass_left -= k;
        } else if (s->state == ST_MAGIC) {
            k = 1;
            s->in_off++;
            on_magic_byte(s, p[0]);
            p++;
            n--;
            continue;
        } else {
            k = s->want - s->have;
            if (k > n)
                k = n;
            memcpy(s->scratch + s->have, p, k);
            s->have += k;
        }
        p += k;
        n -= k;
        s->in_off += k;
        if (s->state == ST_PASS ? s->pass_left == 0 : s->have == s->want) {
            if (s->state == ST_PASS)
                after_pass(s);
            else
                on_item(s);
        }
    }
    flush(s);
    return s->err;
}

static const char *state_name(const hprof_stream *s)
{
    switch (s->state) {
    case ST_MAGIC:
    case ST_HEADER_TAIL:
        return "the file header";
    case ST_RECORD_HEADER:
        return "a record header";
    case ST_PASS:
        return s->pass_then == AFTER_RECORD ? "a record body" : "a heap-dump sub-record";
    default:
        return "a heap-dump sub-record";
    }
}

int hprof_stream_finish(hprof_stream *s)
{
    if (s->err)
        return s->err;
    if (s->state == ST_FINISHED)
        return 0;
    flush(s);
    if (s->err)
        return s->err;
    if (s->state == ST_RECORD_HEADER && s->have == 0) {
        if (s->segments_open)
            return fail(s, "input ended at byte %" PRIu64 " after HEAP_DUMP_SEGMENT records with no "
                        "HEAP_DUMP_END", s->in_off);
        s->state = ST_FINISHED;
        return 0;
    }
    if (s->state == ST_MAGIC || s->state == ST_HEADER_TAIL)
        return fail(s, "input ended at byte %" PRIu64 " inside the file header", s->in_off);
    if (s->state == ST_RECORD_HEADER || (s->state == ST_PASS && s->pass_then == AFTER_RECORD))
        return fail(s, "input ended at byte %" PRIu64 " inside %s (record 0x%02x at byte %" PRIu64 ")",
                    s->in_off, state_name(s), s->state == ST_RECORD_HEADER ? s->scratch[0] : s->rec_tag,
                    s->state == ST_RECORD_HEADER ? s->item_off : s->rec_off);
    return fail(s, "input ended at byte %" PRIu64 " inside %s record at byte %" PRIu64
                " (sub-record 0x%02x at byte %" PRIu64 ")",
                s->in_off, tag_name(s->rec_tag), s->rec_off, s->sub_tag, s->sub_off);
}

const char *hprof_stream_error(const hprof_stream *s)
{
    return s->err ? s->msg : NULL;
}

uint64_t hprof_stream_bytes_in(const hprof_stream *s)
{
    return s->in_off;
}

uint64_t hprof_stream_bytes_out(const hprof_stream *s)
{
    return s->out_off - s->out_len;
}

unsigned hprof_stream_id_size(const hprof_stream *s)
{
    return s->id_size;
}

void hprof_stream_free(hprof_stream *s)
{
    if (!s)
        return;
    free(s->out);
    free(s);
}
