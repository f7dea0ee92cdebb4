/* SPDX-License-Identifier: Apache-2.0
 *
 * hprof: every constant of the HPROF heap-dump format in one place
 * (doc/hprof.md). The J2SE format ("JAVA PROFILE 1.0.2", also 1.0.1) and
 * Android's extension of it ("JAVA PROFILE 1.0.3": more root kinds, heap
 * names, arrays without data). All integers are big-endian; "id" is an
 * object identifier of the size the file header gives (4 or 8 bytes).
 */
#ifndef DDM_HPROF_FORMAT_H
#define DDM_HPROF_FORMAT_H

/* File header: a NUL-terminated magic string, u4 id size, u8 time (ms). */
#define HPROF_MAGIC_1_0_1 "JAVA PROFILE 1.0.1"
#define HPROF_MAGIC_1_0_2 "JAVA PROFILE 1.0.2"
#define HPROF_MAGIC_ANDROID "JAVA PROFILE 1.0.3"
#define HPROF_MAGIC_LEN 18u                  /* without the NUL; all three */
#define HPROF_MAGIC_VERSION_DIGIT 17u        /* the '1'/'2'/'3' at the end */
#define HPROF_HEADER_TAIL_LEN 12u            /* u4 id size + u8 time */

/* Record header: u1 tag, u4 time delta, u4 body length. */
#define HPROF_RECORD_HEADER_LEN 9u
#define HPROF_RECORD_LENGTH_OFFSET 5u        /* of the u4 length in the header */

/* Top-level record tags. */
enum {
    HPROF_TAG_STRING = 0x01,
    HPROF_TAG_LOAD_CLASS = 0x02,
    HPROF_TAG_UNLOAD_CLASS = 0x03,
    HPROF_TAG_STACK_FRAME = 0x04,
    HPROF_TAG_STACK_TRACE = 0x05,
    HPROF_TAG_ALLOC_SITES = 0x06,
    HPROF_TAG_HEAP_SUMMARY = 0x07,
    HPROF_TAG_START_THREAD = 0x0a,
    HPROF_TAG_END_THREAD = 0x0b,
    HPROF_TAG_HEAP_DUMP = 0x0c,
    HPROF_TAG_CPU_SAMPLES = 0x0d,
    HPROF_TAG_CONTROL_SETTINGS = 0x0e,
    HPROF_TAG_HEAP_DUMP_SEGMENT = 0x1c,
    HPROF_TAG_HEAP_DUMP_END = 0x2c,
};

/* Sub-record tags inside HEAP_DUMP and HEAP_DUMP_SEGMENT records, with
 * their bodies after the tag byte. */
enum {
    /* J2SE (1.0.2) */
    HPROF_ROOT_UNKNOWN = 0xff,          /* id */
    HPROF_ROOT_JNI_GLOBAL = 0x01,       /* id, id (global ref) */
    HPROF_ROOT_JNI_LOCAL = 0x02,        /* id, u4 thread serial, u4 frame */
    HPROF_ROOT_JAVA_FRAME = 0x03,       /* id, u4 thread serial, u4 frame */
    HPROF_ROOT_NATIVE_STACK = 0x04,     /* id, u4 thread serial */
    HPROF_ROOT_STICKY_CLASS = 0x05,     /* id */
    HPROF_ROOT_THREAD_BLOCK = 0x06,     /* id, u4 thread serial */
    HPROF_ROOT_MONITOR_USED = 0x07,     /* id */
    HPROF_ROOT_THREAD_OBJECT = 0x08,    /* id, u4 thread serial, u4 stack serial */
    HPROF_CLASS_DUMP = 0x20,            /* see doc/hprof.md */
    HPROF_INSTANCE_DUMP = 0x21,         /* id, u4 stack, id class, u4 n, n bytes */
    HPROF_OBJECT_ARRAY_DUMP = 0x22,     /* id, u4 stack, u4 n, id class, n ids */
    HPROF_PRIMITIVE_ARRAY_DUMP = 0x23,  /* id, u4 stack, u4 n, u1 type, n values */

    /* Android (1.0.3) */
    HPROF_ROOT_INTERNED_STRING = 0x89,  /* id */
    HPROF_ROOT_FINALIZING = 0x8a,       /* id */
    HPROF_ROOT_DEBUGGER = 0x8b,         /* id */
    HPROF_ROOT_REFERENCE_CLEANUP = 0x8c, /* id */
    HPROF_ROOT_VM_INTERNAL = 0x8d,      /* id */
    HPROF_ROOT_JNI_MONITOR = 0x8e,      /* id, u4 thread serial, u4 stack depth */
    HPROF_UNREACHABLE = 0x90,           /* id (deprecated) */
    HPROF_PRIMITIVE_ARRAY_NODATA = 0xc3, /* id, u4 stack, u4 n, u1 type; no values */
    HPROF_HEAP_DUMP_INFO = 0xfe,        /* u4 heap type, id heap name (string id) */
};

/* Android heap types in HEAP_DUMP_INFO. */
enum {
    HPROF_HEAP_DEFAULT = 0,
    HPROF_HEAP_ZYGOTE = 'Z',
    HPROF_HEAP_APP = 'A',
    HPROF_HEAP_IMAGE = 'I',
};

/* Basic types (field, constant and array element types). */
enum {
    HPROF_BASIC_OBJECT = 2,             /* an id */
    HPROF_BASIC_BOOLEAN = 4,
    HPROF_BASIC_CHAR = 5,
    HPROF_BASIC_FLOAT = 6,
    HPROF_BASIC_DOUBLE = 7,
    HPROF_BASIC_BYTE = 8,
    HPROF_BASIC_SHORT = 9,
    HPROF_BASIC_INT = 10,
    HPROF_BASIC_LONG = 11,
};

/* Size in bytes of a value of basic type t, ids being id_size bytes;
 * 0 for a type that does not exist. */
static inline unsigned hprof_basic_size(unsigned t, unsigned id_size)
{
    switch (t) {
    case HPROF_BASIC_OBJECT: return id_size;
    case HPROF_BASIC_BOOLEAN: case HPROF_BASIC_BYTE: return 1;
    case HPROF_BASIC_CHAR: case HPROF_BASIC_SHORT: return 2;
    case HPROF_BASIC_FLOAT: case HPROF_BASIC_INT: return 4;
    case HPROF_BASIC_DOUBLE: case HPROF_BASIC_LONG: return 8;
    default: return 0;
    }
}

#endif
