/* SPDX-License-Identifier: Apache-2.0
 *
 * The method-trace generator (trace_gen.h): the header text built at once,
 * then records produced an iteration at a time from a PRNG, encoded into a
 * small buffer that read() drains.
 */
#include "trace_gen.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define MAX_EVENTS 64u /* records of one iteration (at most ~30) */

typedef struct method_def {
    const char *cls, *name, *sig, *file;
    int line;
} method_def;

enum {
    M_LOOP = 0, M_DISPATCH, M_ON_DRAW, M_DRAW_TEXT, M_LOAD, M_ADD, M_FIB, M_RUN, M_PROCESS,
    M_HASH, M_PUT, M_IDLE
};

static const method_def methods[TRACE_GEN_METHODS] = {
    {"android.os.Looper", "loop", "()V", "Looper.java", 160},
    {"android.os.Handler", "dispatchMessage", "(Landroid/os/Message;)V", "Handler.java", 99},
    {"com.example.app.MainActivity", "onDraw", "(Landroid/graphics/Canvas;)V", "MainActivity.java", 42},
    {"android.graphics.Canvas", "drawText", "(Ljava/lang/String;FFLandroid/graphics/Paint;)V",
     "Canvas.java", 1655},
    {"com.example.app.Model", "load", "(I)Ljava/util/List;", "Model.java", 18},
    {"java.util.ArrayList", "add", "(Ljava/lang/Object;)Z", "ArrayList.java", 467},
    {"com.example.app.Model", "fib", "(I)I", "Model.java", 31},
    {"java.lang.Thread", "run", "()V", "Thread.java", 1012},
    {"com.example.app.Worker", "process", "(Ljava/lang/Object;)V", "Worker.java", 27},
    {"java.lang.String", "hashCode", "()I", "String.java", 1503},
    {"java.util.HashMap", "put", "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;",
     "HashMap.java", 611},
    {"com.example.app.Worker", "idle", "()V", "Worker.java", 55},
};

static const char *const thread_names[TRACE_GEN_THREADS] = {"main", "worker-1", "worker-2"};

typedef struct event {
    uint8_t thread; /* 0..2 */
    uint8_t method;
    uint8_t action; /* 0 enter, 1 exit */
} event;

typedef enum { PH_HEADER = 0, PH_OPEN, PH_ITER, PH_CLOSE, PH_END } phase;

struct trace_gen {
    trace_gen_params p;
    trace_gen_truth truth;
    char *header;            /* text + SLOW header */
    size_t header_len;
    unsigned record_size;
    uint32_t step_us;        /* duration_usec per record (0: the fixed steps) */
    /* the walk */
    phase ph;
    int counting;            /* the counting pass: iterations open-ended */
    SimRng rng;
    uint64_t iter;
    uint32_t cpu[TRACE_GEN_THREADS];
    uint32_t wall;
    uint64_t offset;
    uint8_t buf[MAX_EVENTS * 14u];
    size_t buf_len, buf_pos;
};

const char *trace_gen_method_class(unsigned i)
{
    return i < TRACE_GEN_METHODS ? methods[i].cls : NULL;
}

const char *trace_gen_method_name(unsigned i)
{
    return i < TRACE_GEN_METHODS ? methods[i].name : NULL;
}

const char *trace_gen_method_signature(unsigned i)
{
    return i < TRACE_GEN_METHODS ? methods[i].sig : NULL;
}

uint32_t trace_gen_method_id(unsigned i)
{
    return 0x1000u + 0x10u * i; /* never 0; low bits clear */
}

uint32_t trace_gen_thread_tid(unsigned i)
{
    return i + 1;
}

const char *trace_gen_thread_name(unsigned i)
{
    return i < TRACE_GEN_THREADS ? thread_names[i] : NULL;
}

static void put2(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put4(uint8_t *p, uint32_t v)
{
    put2(p, v);
    put2(p + 2, v >> 16);
}

/* One iteration's events (iteration @i: thread i % 3). */
static size_t iteration(SimRng *r, uint64_t i, event *ev)
{
    size_t n = 0;
    uint8_t t = (uint8_t)(i % TRACE_GEN_THREADS);
#define EV(m, a) (ev[n++] = (event){t, (uint8_t)(m), (uint8_t)(a)})
    if (t == 0) {
        EV(M_DISPATCH, 0);
        if (sim_rng_below(r, 2) == 0) {
            unsigned k = sim_rng_range(r, 1, 3);
            EV(M_ON_DRAW, 0);
            for (unsigned j = 0; j < k; j++) {
                EV(M_DRAW_TEXT, 0);
                EV(M_DRAW_TEXT, 1);
            }
            EV(M_ON_DRAW, 1);
        } else {
            unsigned k = sim_rng_range(r, 1, 4), depth = sim_rng_range(r, 1, 4);
            EV(M_LOAD, 0);
            for (unsigned j = 0; j < k; j++) {
                EV(M_ADD, 0);
                EV(M_ADD, 1);
            }
            for (unsigned j = 0; j < depth; j++)
                EV(M_FIB, 0);
            for (unsigned j = 0; j < depth; j++)
                EV(M_FIB, 1);
            EV(M_LOAD, 1);
        }
        EV(M_DISPATCH, 1);
    } else {
        unsigned k = sim_rng_below(r, 3);
        EV(M_PROCESS, 0);
        for (unsigned j = 0; j < k; j++) {
            EV(M_HASH, 0);
            EV(M_HASH, 1);
            EV(M_PUT, 0);
            EV(M_PUT, 1);
        }
        EV(M_PROCESS, 1);
        if (sim_rng_below(r, 4) == 0) {
            EV(M_IDLE, 0);
            EV(M_IDLE, 1);
        }
    }
#undef EV
    return n;
}

static void walk_reset(trace_gen *g)
{
    sim_rng_seed(&g->rng, g->p.seed);
    g->ph = PH_OPEN;
    g->iter = 0;
    memset(g->cpu, 0, sizeof g->cpu);
    g->wall = 0;
}

/* Time per record: a share of duration_usec (0 to twice step_us, so the
 * wall clock spans about the time the VM traced and no thread's time can
 * exceed it), else tracing 1-20 us, sampling one or two intervals. */
static void advance(trace_gen *g, unsigned t)
{
    uint32_t d = g->step_us       ? sim_rng_range(&g->rng, 0, 2 * g->step_us)
                 : g->p.sampling ? g->p.interval_us * sim_rng_range(&g->rng, 1, 2)
                                 : sim_rng_range(&g->rng, 1, 20);
    g->cpu[t] += d;
    g->wall += d + sim_rng_below(&g->rng, 5);
}

static void encode(trace_gen *g, const event *e, uint8_t *out)
{
    put2(out, trace_gen_thread_tid(e->thread));
    put4(out + 2, trace_gen_method_id(e->method) | e->action);
    put4(out + 6, g->cpu[e->thread]);
    if (g->p.dual)
        put4(out + 10, g->wall);
}

/* The next group of events: the roots' enters, an iteration, the roots'
 * exits. 0 at the end. */
static size_t next_events(trace_gen *g, event *ev)
{
    size_t n = 0;
    switch (g->ph) {
    case PH_OPEN:
        for (unsigned t = 0; t < TRACE_GEN_THREADS; t++)
            ev[n++] = (event){(uint8_t)t, t == 0 ? M_LOOP : M_RUN, 0};
        g->ph = g->counting || g->truth.iterations ? PH_ITER : PH_CLOSE;
        return n;
    case PH_ITER:
        n = iteration(&g->rng, g->iter++, ev);
        if (!g->counting && g->iter >= g->truth.iterations)
            g->ph = PH_CLOSE;
        return n;
    case PH_CLOSE:
        for (unsigned t = 0; t < TRACE_GEN_THREADS; t++)
            ev[n++] = (event){(uint8_t)t, t == 0 ? M_LOOP : M_RUN, 1};
        g->ph = PH_END;
        return n;
    default:
        return 0;
    }
}

/* The counting pass: how many iterations reach the byte target, and what
 * they hold. */
static void count(trace_gen *g)
{
    event ev[MAX_EVENTS];
    trace_gen_truth *t = &g->truth;
    uint64_t want = g->p.bytes / g->record_size + 1;
    size_t n;

    walk_reset(g);
    g->counting = 1;
    for (;;) {
        if (g->ph == PH_ITER && t->records + TRACE_GEN_THREADS >= want && g->iter > 0)
            g->ph = PH_CLOSE;
        n = next_events(g, ev);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            advance(g, ev[i].thread);
            t->records++;
            if (ev[i].action == 0) {
                t->calls[ev[i].method]++;
                t->thread_calls[ev[i].thread]++;
            }
        }
    }
    g->counting = 0;
    t->iterations = g->iter;
    t->elapsed_usec = g->wall;
}

trace_gen *trace_gen_new(const trace_gen_params *p)
{
    trace_gen *g;
    char *text = NULL;
    size_t text_len = 0;
    FILE *f;
    uint8_t slow[32];

    if (p->bytes > TRACE_GEN_MAX_BYTES)
        return NULL;
    g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->p = *p;
    if (g->p.sampling && g->p.interval_us == 0)
        g->p.interval_us = 1000;
    g->record_size = g->p.dual ? 14u : 10u;
    if (g->p.duration_usec) { /* the records share the time traced (minus the wall jitter) */
        uint64_t want = g->p.bytes / g->record_size + 1 + 2u * TRACE_GEN_THREADS;
        uint64_t step = g->p.duration_usec / want;
        g->step_us = step > 2 ? (uint32_t)(step - 2 < UINT32_MAX / 4 ? step - 2 : UINT32_MAX / 4) : 1;
    }
    count(g);

    f = open_memstream(&text, &text_len);
    if (!f) {
        free(g);
        return NULL;
    }
    fprintf(f, "*version\n%u\n", g->p.dual ? 3u : 2u);
    fprintf(f, "data-file-overflow=%s\n", g->p.overflow ? "true" : "false");
    fprintf(f, "clock=%s\n", g->p.dual ? "dual" : "thread-cpu");
    fprintf(f, "elapsed-time-usec=%" PRIu64 "\n", g->truth.elapsed_usec);
    fprintf(f, "num-method-calls=%" PRIu64 "\n", g->truth.records);
    fprintf(f, "clock-call-overhead-nsec=%u\n", 500u);
    fprintf(f, "vm=art\n");
    fprintf(f, "pid=%" PRIu32 "\n", g->p.pid);
    fprintf(f, "*threads\n");
    for (unsigned i = 0; i < TRACE_GEN_THREADS; i++)
        fprintf(f, "%" PRIu32 "\t%s\n", trace_gen_thread_tid(i), thread_names[i]);
    fprintf(f, "*methods\n");
    for (unsigned i = 0; i < TRACE_GEN_METHODS; i++)
        fprintf(f, "%#" PRIx32 "\t%s\t%s\t%s\t%s\t%d\n", trace_gen_method_id(i), methods[i].cls,
                methods[i].name, methods[i].sig, methods[i].file, methods[i].line);
    fprintf(f, "*end\n");
    if (fclose(f) != 0 || !text) {
        free(text);
        free(g);
        return NULL;
    }
    memset(slow, 0, sizeof slow);
    put4(slow, 0x574f4c53u);
    put2(slow + 4, g->p.dual ? 3u : 2u);
    put2(slow + 6, sizeof slow);
    put4(slow + 8, (uint32_t)g->p.start_usec);
    put4(slow + 12, (uint32_t)(g->p.start_usec >> 32));
    if (g->p.dual)
        put2(slow + 16, g->record_size);
    g->header = malloc(text_len + sizeof slow);
    if (!g->header) {
        free(text);
        free(g);
        return NULL;
    }
    memcpy(g->header, text, text_len);
    memcpy(g->header + text_len, slow, sizeof slow);
    g->header_len = text_len + sizeof slow;
    free(text);
    g->truth.size = g->header_len + g->truth.records * g->record_size;

    walk_reset(g);
    g->ph = PH_HEADER;
    return g;
}

void trace_gen_free(trace_gen *g)
{
    if (!g)
        return;
    free(g->header);
    free(g);
}

size_t trace_gen_read(trace_gen *g, uint8_t *out, size_t cap)
{
    size_t done = 0;
    while (done < cap) {
        if (g->offset < g->header_len) {
            size_t n = g->header_len - (size_t)g->offset;
            if (n > cap - done)
                n = cap - done;
            memcpy(out + done, g->header + g->offset, n);
            done += n;
            g->offset += n;
            if (g->offset == g->header_len)
                g->ph = PH_OPEN;
            continue;
        }
        if (g->buf_pos == g->buf_len) {
            event ev[MAX_EVENTS];
            size_t n = next_events(g, ev);
            if (n == 0)
                break;
            g->buf_len = g->buf_pos = 0;
            for (size_t i = 0; i < n; i++) {
                advance(g, ev[i].thread);
                encode(g, &ev[i], g->buf + g->buf_len);
                g->buf_len += g->record_size;
            }
        }
        size_t n = g->buf_len - g->buf_pos;
        if (n > cap - done)
            n = cap - done;
        memcpy(out + done, g->buf + g->buf_pos, n);
        g->buf_pos += n;
        done += n;
        g->offset += n;
    }
    return done;
}

uint64_t trace_gen_offset(const trace_gen *g)
{
    return g->offset;
}

const trace_gen_truth *trace_gen_truth_of(const trace_gen *g)
{
    return &g->truth;
}
