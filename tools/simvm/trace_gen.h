/* SPDX-License-Identifier: Apache-2.0
 *
 * A deterministic, streamed generator of Android method traces (.trace:
 * the text header, the SLOW data header, the records; doc/trace.md): what
 * a simulated VM sends in its MPSE event (MPSS/MPSE, SPSS/SPSE) and writes
 * to the device for MPRS/MPRE.
 *
 * The workload: three threads (1 "main", 2 "worker-1", 3 "worker-2"), each
 * opened with its root method (Looper.loop, Thread.run) and closed at the
 * end; between them, iterations on the threads in turn: on main a
 * Handler.dispatchMessage that either draws (MainActivity.onDraw, 1-3
 * Canvas.drawText) or loads (Model.load, 1-4 ArrayList.add, a recursive
 * Model.fib 1-4 deep); on a worker a Worker.process with 0-2 pairs of
 * String.hashCode and HashMap.put. Every enter has its exit; the counts
 * come from the seed. Clocks: dual (version 3, 14-byte records: thread CPU
 * time, then wall time) or thread-cpu (version 2, 10-byte records);
 * with duration_usec (what a VM sends) the records share that time, so the
 * wall clock spans about it and no thread's time exceeds it; without,
 * tracing advances a thread's clock 1-20 us per record, sampling by one or
 * two sampling intervals.
 *
 * The number of iterations is the smallest that gives at least @bytes of
 * records; the header states num-method-calls (the records) and
 * elapsed-time-usec, so the generator runs the workload twice: once to
 * count (the ground truth: calls per method and per thread), once to send.
 *
 * Invariants: the same params give the same bytes however they are read;
 * memory is O(1) in the trace's size. Pure bytes: no I/O, no glib.
 */
#ifndef SIMVM_TRACE_GEN_H
#define SIMVM_TRACE_GEN_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_GEN_METHODS 12u
#define TRACE_GEN_THREADS 3u
/** Largest trace: a JDWP packet (11) with one chunk header (8) must hold it. */
#define TRACE_GEN_MAX_BYTES ((uint64_t)UINT32_MAX - 11u - 8u - 65536u)

typedef struct trace_gen_params {
    int sampling;          /* SPSS: times advance in sampling intervals */
    int dual;              /* clock=dual (v3, 14-byte records), else thread-cpu (v2, 10) */
    uint32_t seed;
    uint64_t bytes;        /* at least this many bytes of records */
    uint32_t interval_us;  /* sampling interval (sampling only; 0 -> 1000) */
    uint32_t pid;
    uint64_t start_usec;   /* the SLOW header's start time */
    uint64_t duration_usec; /* how long the VM traced: the wall clock spans about this
                              (each record a share of it); 0: each record 1-20 us
                              (tracing) or one or two intervals (sampling) */
    int overflow;          /* the records were cut to the VM's buffer: the header says
                              data-file-overflow=true */
} trace_gen_params;

/** What the trace holds (computed before the first byte is read). */
typedef struct trace_gen_truth {
    uint64_t records;
    uint64_t iterations;
    uint64_t calls[TRACE_GEN_METHODS];       /* enters per method */
    uint64_t thread_calls[TRACE_GEN_THREADS];
    uint64_t size;                           /* bytes of the whole file */
    uint64_t elapsed_usec;                   /* elapsed-time-usec= */
} trace_gen_truth;

typedef struct trace_gen trace_gen;

/** (transfer full) NULL when @p asks for more than TRACE_GEN_MAX_BYTES. */
trace_gen *trace_gen_new(const trace_gen_params *p);
void trace_gen_free(trace_gen *g);
/** Up to @cap bytes of the file into @buf; 0 at the end. */
size_t trace_gen_read(trace_gen *g, uint8_t *buf, size_t cap);
uint64_t trace_gen_offset(const trace_gen *g);
/** (transfer none) */
const trace_gen_truth *trace_gen_truth_of(const trace_gen *g);

/** Method @i's class, name, signature, source file (static strings). */
const char *trace_gen_method_class(unsigned i);
const char *trace_gen_method_name(unsigned i);
const char *trace_gen_method_signature(unsigned i);
/** Its id in the trace (low two bits clear). */
uint32_t trace_gen_method_id(unsigned i);
/** Thread @i's tid and name. */
uint32_t trace_gen_thread_tid(unsigned i);
const char *trace_gen_thread_name(unsigned i);

#endif /* SIMVM_TRACE_GEN_H */
