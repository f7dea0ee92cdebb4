/* SPDX-License-Identifier: Apache-2.0
 *
 * hprof: a push parser that checks an Android heap dump as it streams past
 * and writes it out either unchanged or converted to the J2SE format, byte
 * for byte what hprof-conv (AOSP dalvik/tools/hprof-conv, no -z) writes.
 * The formats and the conversion rules: doc/hprof.md.
 *
 * Ownership: the stream owns only itself and two fixed buffers (a 64 KiB
 * output buffer and a scratch of under 100 bytes for the fixed part of the
 * item being read); memory does not grow with the dump, however large.
 * No record body is ever held: large bodies (instance fields, array
 * elements, constant values, records other than heap dumps) go from the
 * caller's buffer to the output as they arrive, in pieces. The caller owns
 * every buffer it passes; the stream keeps no pointer to one after a call.
 *
 * Invariants:
 *  - Bytes may arrive in pieces of any size, split anywhere: the result
 *    (output and verdict) does not depend on where.
 *  - Each feed() hands all output it can produce from its input to the
 *    write fn before it returns (at most the scratch's few bytes of an
 *    unfinished item wait for the next feed).
 *  - patch is called only on bytes the write fn already received (offset +
 *    length <= bytes written so far), to rewrite the u4 length of a heap-dump
 *    record once its converted body is known. It is never called in
 *    ANDROID mode, nor when the length did not change.
 *  - Every length read from the input is checked against what remains of
 *    its enclosing record before it is used; the first bad byte stops the
 *    stream with -EPROTO and a message naming the byte offset. Errors
 *    (bad input or the write fn's -errno) are sticky.
 */
#ifndef DDM_HPROF_STREAM_H
#define DDM_HPROF_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    HPROF_OUT_ANDROID = 0,   /* output = input, after checking it */
    HPROF_OUT_STANDARD = 1,  /* output = hprof-conv's J2SE conversion */
} hprof_out_format;

typedef struct hprof_stream hprof_stream;

/* Append n bytes to the output; return 0 or -errno. */
typedef int (*hprof_write_fn)(void *ud, const uint8_t *p, size_t n);
/* Overwrite n bytes at absolute output offset off (written earlier);
 * return 0 or -errno. */
typedef int (*hprof_patch_fn)(void *ud, uint64_t off, const uint8_t *p, size_t n);

/* A new stream; patch may be NULL in ANDROID mode only. NULL (errno set)
 * on a missing callback or out of memory. */
hprof_stream *hprof_stream_new(hprof_out_format fmt, hprof_write_fn w, hprof_patch_fn patch, void *ud);

/* Push the next n bytes. 0; -EPROTO on bad input (hprof_stream_error says
 * what and where); the write or patch fn's error; -EINVAL after finish. */
int hprof_stream_feed(hprof_stream *s, const uint8_t *p, size_t n);

/* The input has ended. 0 iff it ended at a record boundary after a valid
 * header, with every HEAP_DUMP_SEGMENT run closed by HEAP_DUMP_END; else
 * -EPROTO with a message (or the earlier sticky error). */
int hprof_stream_finish(hprof_stream *s);

/* The first error, with the input byte offset where it was found; NULL
 * while all is well. Valid until the stream is freed. */
const char *hprof_stream_error(const hprof_stream *s);

/* Bytes consumed from the input so far. */
uint64_t hprof_stream_bytes_in(const hprof_stream *s);
/* Bytes handed to the write fn so far. */
uint64_t hprof_stream_bytes_out(const hprof_stream *s);
/* The id size the header declared (4 or 8), 0 before the header is read. */
unsigned hprof_stream_id_size(const hprof_stream *s);

void hprof_stream_free(hprof_stream *s);

#endif
