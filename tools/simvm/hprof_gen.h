/* SPDX-License-Identifier: Apache-2.0
 *
 * A deterministic, streamed generator of Android heap dumps (hprof
 * "JAVA PROFILE 1.0.3", 4-byte ids) of an exact requested size: what a
 * simulated VM sends for HPDS and writes for HPDU.
 *
 * Layout, as ART's hprof.cc writes it: the 31-byte header; STRING records
 * (the heap names, the field names used, the class names), LOAD_CLASS for
 * every class, one STACK_TRACE; then HEAP_DUMP_SEGMENTs (0x1c) closed after
 * 4096 bytes or 128 objects, or after a big array, each opening with a
 * HEAP_DUMP_INFO for its heap: the image heap (boot classes, each with
 * VM_INTERNAL and STICKY_CLASS roots and ART's "$classOverhead" byte[], and
 * the first tenth of the objects), the zygote heap (the next 8%), then the
 * app heap (the app's classes, one empty PRIMITIVE_ARRAY_NODATA, 0xc3: hprof-conv
 * rewrites its tag to 0x23 and keeps its length without adding data, so
 * only an empty one converts into a well-formed file; then the rest, with
 * a zygote large object now and then). Classes: a table of real framework
 * names, the allocation model's (alloc_model.h), and the app's (PACKAGE.ui.
 * feed.FeedFragment, ...), one per 16 KiB of dump up to about 400; each has
 * fields (java.lang.Object's shadow$_klass_ and shadow$_monitor_ in all) and
 * maybe a super class. Objects: instances (mostly 16..200 bytes, reference
 * fields pointing at earlier objects or null), Strings with their value
 * array, object arrays (mostly short, some of thousands), primitive arrays
 * (mostly a few elements, a tail to tens of KiB) and now and then a bitmap's
 * pixels (32x32 to 480x480 RGBA). Roots: VM_INTERNAL for every image and
 * zygote object, INTERNED_STRING, JNI_GLOBAL, FINALIZING, UNKNOWN, and per
 * thread (one in 4096 app objects, at most 64) THREAD_OBJECT, JAVA_FRAME,
 * JNI_LOCAL, JNI_MONITOR; the main thread also DEBUGGER. The last segment
 * is a filler (HEAP_DUMP_INFO(app) and a byte[], usually a few dozen bytes)
 * that lands the dump exactly on the requested total; then HEAP_DUMP_END
 * (0x2c). Counts and values come from the seed.
 *
 * Invariants: the same (total, seed, package) gives the same bytes however
 * they are read, on any host; memory is O(1) in the total (a class table
 * of at most a few hundred entries and one chunk of 8 KiB: the walk is
 * generated record by record from a PRNG state, big arrays' data from
 * their position). Pure bytes: no I/O, no glib.
 */
#ifndef SIMVM_HPROF_GEN_H
#define SIMVM_HPROF_GEN_H

#include <stddef.h>
#include <stdint.h>

/** Smallest total a dump can have (a few classes and objects, the filler). */
#define HPROF_GEN_MIN_TOTAL 4096u
/** Largest total: a JDWP packet (11-byte header) with one chunk (8 bytes) must hold it. */
#define HPROF_GEN_MAX_TOTAL ((uint64_t)UINT32_MAX - 11u - 8u)
/** Largest HEAP_DUMP_SEGMENT record, header included. */
#define HPROF_GEN_SEGMENT_MAX ((size_t)1 << 20)
/** Longest package name used in class names (longer ones are cut). */
#define HPROF_GEN_PACKAGE_MAX 128u

/* hprof record and sub-record tags (AOSP hprof.cc, HprofConv.c) */
enum {
    HPROF_TAG_STRING = 0x01,
    HPROF_TAG_LOAD_CLASS = 0x02,
    HPROF_TAG_STACK_TRACE = 0x05,
    HPROF_TAG_HEAP_DUMP_SEGMENT = 0x1c,
    HPROF_TAG_HEAP_DUMP_END = 0x2c,

    HPROF_ROOT_UNKNOWN = 0xff,
    HPROF_ROOT_JNI_GLOBAL = 0x01,
    HPROF_ROOT_JNI_LOCAL = 0x02,
    HPROF_ROOT_JAVA_FRAME = 0x03,
    HPROF_ROOT_STICKY_CLASS = 0x05,
    HPROF_ROOT_THREAD_OBJECT = 0x08,
    HPROF_CLASS_DUMP = 0x20,
    HPROF_INSTANCE_DUMP = 0x21,
    HPROF_OBJECT_ARRAY_DUMP = 0x22,
    HPROF_PRIMITIVE_ARRAY_DUMP = 0x23,
    HPROF_HEAP_DUMP_INFO = 0xfe,
    HPROF_ROOT_INTERNED_STRING = 0x89,
    HPROF_ROOT_FINALIZING = 0x8a,
    HPROF_ROOT_DEBUGGER = 0x8b,
    HPROF_ROOT_VM_INTERNAL = 0x8d,
    HPROF_ROOT_JNI_MONITOR = 0x8e,
    HPROF_PRIMITIVE_ARRAY_NODATA = 0xc3,
};

/* basic types of fields and primitive arrays */
enum {
    HPROF_TYPE_OBJECT = 2,
    HPROF_TYPE_BOOLEAN = 4,
    HPROF_TYPE_CHAR = 5,
    HPROF_TYPE_FLOAT = 6,
    HPROF_TYPE_DOUBLE = 7,
    HPROF_TYPE_BYTE = 8,
    HPROF_TYPE_SHORT = 9,
    HPROF_TYPE_INT = 10,
    HPROF_TYPE_LONG = 11,
};

/* Android heap ids (HEAP_DUMP_INFO) */
enum {
    HPROF_HEAP_APP = 'A',
    HPROF_HEAP_IMAGE = 'I',
    HPROF_HEAP_ZYGOTE = 'Z',
};

typedef struct hprof_gen hprof_gen;

/** A dump of exactly @total bytes (HPROF_GEN_MIN_TOTAL..HPROF_GEN_MAX_TOTAL)
 *  drawn from @seed; @package (may be NULL) names the app's classes.
 *  NULL when @total is out of range. (transfer full: hprof_gen_free) */
hprof_gen *hprof_gen_new(uint64_t total, uint32_t seed, const char *package);
/** Copy the next bytes (at most @cap) to @buf; 0 at the end. */
size_t hprof_gen_read(hprof_gen *g, uint8_t *buf, size_t cap);
/** The dump's size, as requested. */
uint64_t hprof_gen_total(const hprof_gen *g);
/** Bytes read so far. */
uint64_t hprof_gen_offset(const hprof_gen *g);
void hprof_gen_free(hprof_gen *g);

/** Size in bytes of a value of basic @type with 4-byte ids; 0 if unknown. */
unsigned hprof_type_size(uint8_t type);

#endif /* SIMVM_HPROF_GEN_H */
