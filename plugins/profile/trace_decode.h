/* SPDX-License-Identifier: Apache-2.0
 *
 * trace_decode: a push parser for Android method traces (.trace files:
 * the text header "*version ... *threads ... *methods ... *end" followed by
 * the binary "SLOW" data header and its records, versions 1 to 3, single
 * and dual clock; doc/trace.md) that sums them up as they stream past:
 * per method its calls and its inclusive and exclusive time, per thread
 * its records, calls, time and deepest stack.
 *
 * Bytes may arrive in pieces of any size, split anywhere (a file read in
 * blocks, an MPSE chunk as it comes off the wire); the result does not
 * depend on where. No record is kept: memory grows with the header (its
 * methods and threads) and with the deepest stack, never with the number
 * of records. Every table has a cap (TRACE_MAX_*), and a trace past one
 * is refused with a message that names the cap. Method lookup is a binary
 * search in the sorted method table, so decoding is O(n log m) for n
 * records and m methods.
 *
 * Times: a record's first clock (thread CPU time for clock=dual and
 * clock=thread-cpu, wall time for clock=wall), in microseconds, as
 * dmtracedump counts them. Time between two records of a thread is the
 * exclusive time of the method on top of its stack; a method's inclusive
 * time is counted once for its outermost frame (recursion is not counted
 * twice). Calls are counted at method entry. Frames still open when the
 * trace ends are closed at their thread's last record.
 *
 * Ownership: the decoder owns everything it returns (strings and structs
 * stay valid until trace_decoder_free); the caller owns the buffers it
 * feeds, which are never kept. Errors are sticky: after the first one,
 * feed and finish return it again.
 */
#ifndef DDM_PROFILE_TRACE_DECODE_H
#define DDM_PROFILE_TRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>

/** The caps (doc/trace.md). */
#define TRACE_MAX_LINE 8192u          /* bytes in one header line */
#define TRACE_MAX_HEADER (64u << 20)  /* bytes of the whole text header */
#define TRACE_MAX_METHODS 262144u     /* method lines */
#define TRACE_MAX_THREADS 65536u      /* thread lines, and threads seen in records */
#define TRACE_MAX_DEPTH 16384u        /* open frames on one thread (dmtracedump: 10000) */
#define TRACE_MAX_FRAMES 262144u      /* frame slots held across all threads */
#define TRACE_MAX_RECORD 64u          /* a v3 record size */
#define TRACE_MAGIC 0x574f4c53u       /* "SLOW", little-endian */

typedef enum trace_clock {
    TRACE_CLOCK_UNKNOWN = 0, /* no clock= line (old Dalvik traces: thread CPU) */
    TRACE_CLOCK_THREAD_CPU,
    TRACE_CLOCK_WALL,
    TRACE_CLOCK_DUAL,
} trace_clock;

/** What the header said and what the records held. */
typedef struct trace_info {
    int version;               /* from "*version" */
    int data_version;          /* from the SLOW header: 1, 2 or 3 */
    trace_clock clock;
    int dual;                  /* records carry a second (wall) time */
    unsigned record_size;      /* bytes per record */
    unsigned data_offset;      /* the SLOW header's offset to the first record */
    uint64_t start_usec;       /* the SLOW header's start time */
    int64_t elapsed_usec;      /* elapsed-time-usec=, -1 if absent */
    int64_t num_method_calls;  /* num-method-calls=, -1 if absent */
    int64_t clock_overhead_nsec; /* -1 if absent */
    int64_t pid;               /* pid=, -1 if absent */
    int overflow;              /* data-file-overflow=true */
    char vm[32];               /* vm=, "" if absent */
    uint64_t header_bytes;     /* bytes up to the first record */
    uint64_t records;          /* records decoded */
    uint64_t unknown_records;  /* records whose method is not in "*methods" */
    uint64_t unmatched_exits;  /* exits that did not match the top of their stack */
    uint64_t total_usec;       /* sum of every thread's time */
    uint64_t last_wall_usec;   /* dual clock: the largest wall time seen */
    size_t methods_listed;     /* lines in "*methods" */
    size_t threads_listed;     /* lines in "*threads" */
} trace_info;

typedef struct trace_method {
    uint32_t id;               /* the method id (low two bits clear) */
    const char *class_name;    /* "(unknown)" for records of unlisted methods */
    const char *name;          /* "" when the line had only a class */
    const char *signature;
    const char *file;          /* NULL if absent */
    int64_t line;              /* -1 if absent */
    uint64_t calls;            /* entries */
    uint64_t inclusive_usec;
    uint64_t exclusive_usec;
} trace_method;

typedef struct trace_thread {
    uint32_t tid;
    const char *name;          /* from "*threads", NULL if not listed */
    uint64_t records;
    uint64_t calls;
    uint64_t usec;             /* time from its first record to its last */
    unsigned max_depth;
} trace_thread;

typedef enum trace_order { TRACE_BY_INCLUSIVE = 0, TRACE_BY_EXCLUSIVE, TRACE_BY_CALLS } trace_order;

typedef struct trace_decoder trace_decoder;

/** A new decoder. (transfer full; NULL on no memory) */
trace_decoder *trace_decoder_new(void);
void trace_decoder_free(trace_decoder *d);

/** Decode the next @len bytes. 0, or -EPROTO (bad input: trace_decoder_error
 *  says why, with a byte offset) or -ENOMEM. */
int trace_decoder_feed(trace_decoder *d, const uint8_t *data, size_t len);
/** The input is complete: a trace cut short anywhere (in the text header,
 *  the data header or inside a record) is -EPROTO; else open frames are
 *  closed and the figures final. */
int trace_decoder_finish(trace_decoder *d);
/** The input ended early (a stream cut short): the bytes of a record begun
 *  and not finished are dropped, and the trace ends after its last whole
 *  record (trace_decoder_bytes then counts up to there, the length of a
 *  valid prefix). -EPROTO (with the reason) if the headers were not
 *  through; else as trace_decoder_finish. */
int trace_decoder_finish_cut(trace_decoder *d);
/** Why the trace was refused, or NULL. (transfer none) */
const char *trace_decoder_error(const trace_decoder *d);
/** Bytes fed so far. */
uint64_t trace_decoder_bytes(const trace_decoder *d);
/** 1 once the text and data headers are through (records follow). */
int trace_decoder_in_records(const trace_decoder *d);

/** (transfer none) */
const trace_info *trace_decoder_info(const trace_decoder *d);
/** Bytes the decoder holds for the records' state (threads, their stacks
 * and open-method tables, the thread indexes): grows with what the records
 * use, never with what the header lists. */
size_t trace_decoder_state_bytes(const trace_decoder *d);
/** Methods with at least one call or any time, best first by @order (ties:
 *  by id); at most @max of them into @out. Returns how many. O(m log m). */
size_t trace_decoder_top(const trace_decoder *d, trace_order order, const trace_method **out,
                         size_t max);
/** Every listed method, in id order, plus "(unknown)" last if records named
 *  unlisted methods. */
size_t trace_decoder_n_methods(const trace_decoder *d);
const trace_method *trace_decoder_method(const trace_decoder *d, size_t i);
/** The method listed with @id (low two bits ignored), or NULL. */
const trace_method *trace_decoder_find(const trace_decoder *d, uint32_t id);
/** Threads seen in records, in the order they first appeared. */
size_t trace_decoder_n_threads(const trace_decoder *d);
const trace_thread *trace_decoder_thread(const trace_decoder *d, size_t i);

/** "dual", "thread-cpu", "wall" or "unknown". */
const char *trace_clock_name(trace_clock c);

#endif /* DDM_PROFILE_TRACE_DECODE_H */
