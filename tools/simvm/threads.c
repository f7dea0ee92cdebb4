/* SPDX-License-Identifier: Apache-2.0
 *
 * Thread model and thread chunk encoders (see threads.h).
 */
#include "threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STACK_NONE, STACK_MAIN, STACK_DAEMON, STACK_WORKER, STACK_SLEEPER, STACK_COUNT };

typedef struct Frame {
    const char *cls, *method, *file;
    int32_t line;
} Frame;

static const Frame main_stack[] = {
    { "android.os.MessageQueue", "nativePollOnce", "MessageQueue.java", -2 },
    { "android.os.MessageQueue", "next", "MessageQueue.java", 335 },
    { "android.os.Looper", "loopOnce", "Looper.java", 161 },
    { "android.os.Looper", "loop", "Looper.java", 288 },
    { "android.app.ActivityThread", "main", "ActivityThread.java", 7872 },
    { "java.lang.reflect.Method", "invoke", "Method.java", -2 },
    { "com.android.internal.os.RuntimeInit$MethodAndArgsCaller", "run", "RuntimeInit.java", 548 },
    { "com.android.internal.os.ZygoteInit", "main", "ZygoteInit.java", 936 },
};
static const Frame daemon_stack[] = {
    { "java.lang.Object", "wait", "Object.java", -2 },
    { "java.lang.Object", "wait", "Object.java", 442 },
    { "java.lang.ref.ReferenceQueue", "remove", "ReferenceQueue.java", 203 },
    { "java.lang.Daemons$FinalizerDaemon", "runInternal", "Daemons.java", 273 },
    { "java.lang.Daemons$Daemon", "run", "Daemons.java", 139 },
    { "java.lang.Thread", "run", "Thread.java", 1012 },
};
static const Frame worker_stack[] = {
    { "jdk.internal.misc.Unsafe", "park", "Unsafe.java", -2 },
    { "java.util.concurrent.locks.LockSupport", "park", "LockSupport.java", 341 },
    { "a.b.c", "a", "", -1 }, /* obfuscated, no debug info */
    { "com.example.sync.SyncWorker", "doWork", "SyncWorker.java", 88 },
    { "java.util.concurrent.ThreadPoolExecutor", "runWorker", "ThreadPoolExecutor.java", 1145 },
    { "java.util.concurrent.ThreadPoolExecutor$Worker", "run", "ThreadPoolExecutor.java", 644 },
    { "java.lang.Thread", "run", "Thread.java", 1012 },
};
static const Frame sleeper_stack[] = {
    { "java.lang.Thread", "sleep", "Thread.java", -2 },
    { "java.lang.Thread", "sleep", "Thread.java", 450 },
    { "java.lang.Daemons$FinalizerWatchdogDaemon", "sleepUntilNeeded", "Daemons.java", 419 },
    { "java.lang.Daemons$Daemon", "run", "Daemons.java", 139 },
    { "java.lang.Thread", "run", "Thread.java", 1012 },
};

static const struct {
    const Frame *frames;
    uint32_t n;
} stacks[STACK_COUNT] = {
    { NULL, 0 },
    { main_stack, sizeof main_stack / sizeof main_stack[0] },
    { daemon_stack, sizeof daemon_stack / sizeof daemon_stack[0] },
    { worker_stack, sizeof worker_stack / sizeof worker_stack[0] },
    { sleeper_stack, sizeof sleeper_stack / sizeof sleeper_stack[0] },
};

/* The threads every app has, in ART's order; %u is the pid. */
static const struct {
    const char *name;
    uint8_t daemon, status, stack;
    uint32_t urate; /* milli-ticks/s while running (100 ticks/s = one CPU) */
} core_threads[] = {
    { "main", 0, 7, STACK_MAIN, 9000 },
    { "Signal Catcher", 1, 8, STACK_NONE, 0 },
    { "perfetto_hprof_listener", 1, 7, STACK_NONE, 0 },
    { "ADB-JDWP Connection Control Thread", 1, 7, STACK_NONE, 200 },
    { "Jit thread pool worker thread 0", 1, 8, STACK_NONE, 3000 },
    { "HeapTaskDaemon", 1, 4, STACK_DAEMON, 2000 },
    { "ReferenceQueueDaemon", 1, 4, STACK_DAEMON, 100 },
    { "FinalizerDaemon", 1, 4, STACK_DAEMON, 300 },
    { "FinalizerWatchdogDaemon", 1, 2, STACK_SLEEPER, 50 },
    { "Binder:%u_1", 0, 7, STACK_NONE, 400 },
    { "Binder:%u_2", 0, 7, STACK_NONE, 400 },
    { "Profile Saver", 1, 7, STACK_NONE, 100 },
    { "RenderThread", 0, 7, STACK_NONE, 2500 },
    { "hwuiTask0", 1, 4, STACK_NONE, 100 },
};
#define N_CORE (sizeof core_threads / sizeof core_threads[0])

static const char *const worker_names[] = {
    "pool-%u-thread-1", "AsyncTask #%u", "OkHttp Dispatcher", "Thread-%u", "queued-work-looper",
    "WM.task-%u", "DefaultDispatcher-worker-%u", "glide-source-thread-%u",
};
static const char *const rename_names[] = {
    "sync-worker-%u", "image-decoder-%u", "db-writer", "net-%u", "analytics-%u",
};

/* Dalvik status -> ART's subset (doc/protocol.md, "THST"). */
static const uint8_t art_status[10] = { 0, 1, 2, 3, 4, 1, 0, 1, 4, 1 };

static const char *const dalvik_names[10] = {
    "zombie", "running", "timed-wait", "monitor", "wait",
    "initializing", "starting", "native", "vmwait", "suspended",
};
static const char *const art_names[5] = { "starting/terminated", "runnable", "sleeping", "blocked",
                                          "waiting" };

const char *sim_thread_status_name(uint8_t s, int art)
{
    if (art)
        return s < 5 ? art_names[s] : "unknown";
    return s < 10 ? dalvik_names[s] : "unknown";
}

uint8_t sim_thread_wire_status(const SimThreads *ts, const SimThread *t)
{
    return ts->art && t->status < 10 ? art_status[t->status] : t->status;
}

static char *format_name(const char *fmt, uint32_t arg)
{
    char buf[SIM_THREAD_NAME_MAX + 1];

    /* the formats are ours and take one %u at most */
    if (strstr(fmt, "%u"))
        snprintf(buf, sizeof buf, "%.*s%u%s", (int)(strstr(fmt, "%u") - fmt), fmt, arg,
                 strstr(fmt, "%u") + 2);
    else
        snprintf(buf, sizeof buf, "%s", fmt);
    return strdup(buf);
}

static SimThread *add_thread(SimThreads *ts)
{
    SimThread *t;

    if (ts->n == ts->cap) {
        uint32_t ncap = ts->cap ? ts->cap * 2 : 16;
        SimThread *nv = realloc(ts->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        ts->v = nv;
        ts->cap = ncap;
    }
    t = &ts->v[ts->n++];
    memset(t, 0, sizeof *t);
    t->id = ts->next_id++;
    t->tid = ts->next_tid;
    ts->next_tid += 1 + sim_rng_below(&ts->rng, 3);
    return t;
}

static SimThread *spawn_worker(SimThreads *ts)
{
    SimThread *t = add_thread(ts);

    if (!t)
        return NULL;
    ts->spawned++;
    t->name = format_name(worker_names[sim_rng_below(&ts->rng, sizeof worker_names / sizeof worker_names[0])],
                          ts->spawned);
    t->daemon = (uint8_t)sim_rng_chance(&ts->rng, 0.3);
    t->status = 6; /* starting */
    t->stack = STACK_WORKER;
    t->urate = sim_rng_range(&ts->rng, 500, 60000);
    t->srate = t->urate / sim_rng_range(&ts->rng, 2, 8);
    return t;
}

void sim_threads_init(SimThreads *ts, uint32_t pid, uint64_t seed, unsigned initial, int art)
{
    unsigned i;

    memset(ts, 0, sizeof *ts);
    sim_rng_seed(&ts->rng, seed);
    ts->pid = pid;
    ts->art = art;
    ts->next_id = 1;
    ts->next_tid = pid;
    if (initial < 1)
        initial = 1;
    for (i = 0; i < initial; i++) {
        SimThread *t;
        if (i >= N_CORE) {
            t = spawn_worker(ts);
            if (t)
                t->status = 4;
            continue;
        }
        t = add_thread(ts);
        if (!t)
            break;
        t->name = format_name(core_threads[i].name, pid);
        t->daemon = core_threads[i].daemon;
        t->status = core_threads[i].status;
        t->stack = core_threads[i].stack;
        t->core = 1;
        t->urate = core_threads[i].urate;
        t->srate = t->urate / 3;
        /* some CPU already spent before we were attached */
        t->utime_milli = (uint64_t)t->urate * sim_rng_range(&ts->rng, 1, 30);
        t->stime_milli = t->utime_milli / 3;
    }
}

void sim_threads_clear(SimThreads *ts)
{
    uint32_t i;

    for (i = 0; i < ts->n; i++)
        free(ts->v[i].name);
    free(ts->v);
    memset(ts, 0, sizeof *ts);
}

const SimThread *sim_threads_find(const SimThreads *ts, uint32_t id)
{
    uint32_t i;

    for (i = 0; i < ts->n; i++)
        if (ts->v[i].id == id)
            return &ts->v[i];
    return NULL;
}

static uint32_t count_workers(const SimThreads *ts)
{
    uint32_t i, n = 0;

    for (i = 0; i < ts->n; i++)
        n += !ts->v[i].core;
    return n;
}

static SimThread *pick_worker(SimThreads *ts)
{
    uint32_t n = count_workers(ts), k, i;

    if (n == 0)
        return NULL;
    k = sim_rng_below(&ts->rng, n);
    for (i = 0; i < ts->n; i++)
        if (!ts->v[i].core && k-- == 0)
            return &ts->v[i];
    return NULL;
}

int sim_threads_step(SimThreads *ts, uint32_t dt_ms, double lifecycle_p, SimThreadEventFn fn, void *ud)
{
    static const uint8_t worker_states[] = { 1, 1, 2, 3, 4, 4, 7 };
    int changed = 0;
    uint32_t i;

    for (i = 0; i < ts->n; i++) {
        SimThread *t = &ts->v[i];
        if (t->status == 1) {
            t->utime_milli += (uint64_t)t->urate * dt_ms / 1000;
            t->stime_milli += (uint64_t)t->srate * dt_ms / 1000;
        } else if (t->status == 7 || t->status == 8) {
            /* native and vm-internal work shows up mostly as system time */
            t->utime_milli += (uint64_t)t->urate * dt_ms / 20000;
            t->stime_milli += (uint64_t)t->urate * dt_ms / 8000;
        }
        if (t->status == 6) {
            t->status = 1;
            changed = 1;
        } else if (!t->core && sim_rng_chance(&ts->rng, dt_ms / 1500.0)) {
            t->status = worker_states[sim_rng_below(&ts->rng, sizeof worker_states)];
            changed = 1;
        } else if (t->core && t->id == 1 && !ts->main_scripted &&
                   sim_rng_chance(&ts->rng, dt_ms / 4000.0)) {
            t->status = t->status == 7 ? 1 : 7; /* main: busy, then back in the looper */
            changed = 1;
        }
    }
    if (lifecycle_p > 0 && sim_rng_chance(&ts->rng, lifecycle_p)) {
        uint32_t workers = count_workers(ts);
        uint32_t action = sim_rng_below(&ts->rng, 100);
        SimThread *t;

        if (workers == 0 || (action < 40 && workers < 24)) {
            t = spawn_worker(ts);
            if (t && fn)
                fn(SIM_THREAD_CREATED, t, ud);
        } else if (action < 75) {
            t = pick_worker(ts);
            if (t) {
                if (fn)
                    fn(SIM_THREAD_DIED, t, ud);
                free(t->name);
                *t = ts->v[--ts->n];
            }
        } else {
            t = pick_worker(ts);
            if (t) {
                free(t->name);
                t->name = format_name(rename_names[sim_rng_below(&ts->rng, sizeof rename_names /
                                                                                 sizeof rename_names[0])],
                                      t->id);
                if (fn)
                    fn(SIM_THREAD_RENAMED, t, ud);
            }
        }
        changed = 1;
    }
    return changed;
}

int sim_threads_switch_main(SimThreads *ts)
{
    uint32_t i;

    for (i = 0; i < ts->n; i++) {
        SimThread *t = &ts->v[i];
        if (t->id == 1) {
            t->status = t->status == 4 ? 1 : 4; /* ART: waiting <-> runnable too */
            return 1;
        }
    }
    return 0;
}

void sim_thread_write_name(ddm_writer *w, const SimThread *t)
{
    ddm_write_u4(w, t->id);
    ddm_write_lstr(w, t->name);
}

static uint32_t clamp_u4(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void sim_threads_write_thst(const SimThreads *ts, ddm_writer *w)
{
    uint32_t i, n = ts->n > 65535 ? 65535 : ts->n;

    ddm_write_u1(w, 4);
    ddm_write_u1(w, 18);
    ddm_write_u2(w, (uint16_t)n);
    for (i = 0; i < n; i++) {
        const SimThread *t = &ts->v[i];
        ddm_write_u4(w, t->id);
        ddm_write_u1(w, sim_thread_wire_status(ts, t));
        ddm_write_u4(w, t->tid);
        ddm_write_u4(w, clamp_u4(t->utime_milli / 1000));
        ddm_write_u4(w, clamp_u4(t->stime_milli / 1000));
        ddm_write_u1(w, t->daemon);
    }
}

int sim_threads_write_stkl(const SimThreads *ts, uint32_t id, ddm_writer *w)
{
    const SimThread *t = sim_threads_find(ts, id);
    uint32_t i, n;
    const Frame *f;

    if (!t)
        return -1;
    f = stacks[t->stack < STACK_COUNT ? t->stack : 0].frames;
    n = stacks[t->stack < STACK_COUNT ? t->stack : 0].n;
    ddm_write_u4(w, 0);
    ddm_write_u4(w, t->id);
    ddm_write_u4(w, n);
    for (i = 0; i < n; i++) {
        ddm_write_lstr(w, f[i].cls);
        ddm_write_lstr(w, f[i].method);
        ddm_write_lstr(w, f[i].file);
        ddm_write_u4(w, (uint32_t)f[i].line);
    }
    return 0;
}
