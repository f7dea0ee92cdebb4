/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulated VM's threads and the encoders of the thread chunks:
 * THCR/THNM (u4 id, u4 name units, str16), THDE (u4 id), the THST table
 * (u1 header 4, u1 entry 18, u2 count; per thread u4 id, u1 status,
 * u4 tid, u4 utime, u4 stime, u1 daemon) and STKL (u4 0, u4 id,
 * u4 frames; per frame lstr class, lstr method, lstr file, i4 line).
 *
 * Threads live in Dalvik's status space (0-9); an ART VM reports them
 * through ART's mapping (0-4). Core threads (main, daemons, binder) never
 * die; worker threads are created, renamed, change state and die over time.
 * CPU time grows at per-thread rates while a thread runs. Everything is
 * drawn from the model's own SimRng: same seed, same threads.
 */
#ifndef SIMVM_THREADS_H
#define SIMVM_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/bytes.h>

#include "rng.h"

/** Dalvik cap on thread names (units), kept by the model. */
#define SIM_THREAD_NAME_MAX 124

typedef struct SimThread {
    uint32_t id;             /* VM thread id (ART thin-lock id), not the tid */
    uint32_t tid;            /* Linux tid */
    char *name;              /* owned, UTF-8 */
    uint64_t utime_milli;    /* 1/1000 clock ticks */
    uint64_t stime_milli;
    uint32_t urate, srate;   /* milli-ticks per second while running */
    uint8_t status;          /* Dalvik status 0-9 */
    uint8_t daemon;
    uint8_t core;            /* never dies or renames */
    uint8_t stack;           /* stack template (SimStackKind) */
} SimThread;

typedef struct SimThreads {
    SimThread *v;
    uint32_t n, cap;
    uint32_t pid, next_id, next_tid, spawned;
    int art;                 /* report ART statuses (0-4) */
    int main_scripted;       /* main's state changes only by sim_threads_switch_main */
    SimRng rng;
} SimThreads;

typedef enum {
    SIM_THREAD_CREATED,  /* THCR */
    SIM_THREAD_RENAMED,  /* THNM */
    SIM_THREAD_DIED,     /* THDE; the thread is removed after the call */
} SimThreadEvent;

typedef void (*SimThreadEventFn)(SimThreadEvent ev, const SimThread *t, void *ud);

/** @initial threads (at least 1: main); @art selects the status mapping. */
void sim_threads_init(SimThreads *ts, uint32_t pid, uint64_t seed, unsigned initial, int art);
void sim_threads_clear(SimThreads *ts);
/** Advance @dt_ms: CPU grows, states change; with probability @lifecycle_p one
 *  thread is created, renamed or dies (@fn told, may be NULL). Returns TRUE-ish
 *  (non-zero) when something other than CPU time changed. */
int sim_threads_step(SimThreads *ts, uint32_t dt_ms, double lifecycle_p, SimThreadEventFn fn,
                     void *ud);
const SimThread *sim_threads_find(const SimThreads *ts, uint32_t id);
/** Switch the main thread (id 1) between waiting and runnable, states that
 *  differ in Dalvik's and ART's space (--main-state-every). Returns 1, or 0
 *  without a main thread. */
int sim_threads_switch_main(SimThreads *ts);
/** The status a THST reply carries for @t (Dalvik or ART space). */
uint8_t sim_thread_wire_status(const SimThreads *ts, const SimThread *t);
const char *sim_thread_status_name(uint8_t wire_status, int art);

void sim_thread_write_name(ddm_writer *w, const SimThread *t); /* THCR and THNM payload */
void sim_threads_write_thst(const SimThreads *ts, ddm_writer *w);
/** STKL reply payload for thread @id; -1 (nothing written) if unknown. */
int sim_threads_write_stkl(const SimThreads *ts, uint32_t id, ddm_writer *w);

#endif /* SIMVM_THREADS_H */
