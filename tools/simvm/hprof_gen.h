/* SPDX-License-Identifier: Apache-2.0
 *
 * A deterministic, streamed generator of Android heap dumps (hprof
 * "JAVA PROFILE 1.0.3", 4-byte ids) of an exact requested size: what a
 * simulated VM sends for HPDS and writes for HPDU.
 *
 * Layout: the 31-byte header; STRING, LOAD_CLASS and STACK_TRACE records;
 * one HEAP_DUMP_SEGMENT (0x1c) with the heap's content (HEAP_DUMP_INFO for
 * the image, zygote and app heaps, every root kind ART writes, CLASS_DUMP,
 * INSTANCE_DUMP, OBJECT_ARRAY_DUMP, PRIMITIVE_ARRAY_DUMP and one empty
 * PRIMITIVE_ARRAY_NODATA, 0xc3: hprof-conv rewrites its tag to 0x23 and
 * keeps its length without adding data, so only an empty one converts
 * into a well-formed file); then filler
 * segments of at most HPROF_GEN_SEGMENT_MAX bytes, each an app-heap
 * HEAP_DUMP_INFO and one byte[] sized so the whole lands exactly on the
 * requested total; then HEAP_DUMP_END (0x2c). The class names come from
 * the allocation model's class table (alloc_model.h) plus the app's
 * MainActivity; counts and values from the seed.
 *
 * Invariants: the same (total, seed, package) gives the same bytes however
 * they are read; memory is O(1) in the total (the fixed part is built once,
 * at most HPROF_GEN_MIN_TOTAL bytes; filler bytes are computed from their
 * position). Pure bytes: no I/O, no glib.
 */
#ifndef SIMVM_HPROF_GEN_H
#define SIMVM_HPROF_GEN_H

#include <stddef.h>
#include <stdint.h>

/** Smallest total a dump can have (the fixed part plus one filler segment). */
#define HPROF_GEN_MIN_TOTAL 4096u
/** Largest total: a JDWP packet (11-byte header) with one chunk (8 bytes) must hold it. */
#define HPROF_GEN_MAX_TOTAL ((uint64_t)UINT32_MAX - 11u - 8u)
/** Largest filler HEAP_DUMP_SEGMENT record, header included. */
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
    HPROF_ROOT_JAVA_FRAME = 0x03,
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
