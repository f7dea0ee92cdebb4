/* SPDX-License-Identifier: Apache-2.0
 *
 * threads plugin, internal interface shared by its files (never installed):
 *  - threads.c:     descriptor, init, options, VM listener, THCR/THDE/THNM/THST
 *                   handlers, the per-VM "threads" table view;
 *  - thread-list.c: the per-VM thread list (hashed by id, capped) and how a
 *                   THST table updates it, with CPU % between two tables;
 *  - thst.c:        THST decoder (the real table and the 2007 draft's form);
 *  - stkl.c:        STKL decoder;
 *  - states.c:      thread state names;
 *  - poll.c:        the polling tick (the table kept while the view is
 *                   watched: THEN(1), THST polls, THEN(0) after threads.linger)
 *                   and the look timer (a look's THST for the other VMs' counts);
 *  - stack-cmd.c:   `ddmon stack PID THREAD_ID` and the per-VM "stack" view.
 * Ownership: threads_plugin is the plugin data (host->set_data). A VM's
 * data (host->vm_set_data) is a threads_count (16 bytes: the count, its age,
 * the THSTs out, what was logged once per VM) from READY on, and a
 * threads_vm (which begins with one) only while the VM has more: its table
 * kept, a view, a THEN or its THSTs out, the CPU totals of a scraped VM, a
 * stack view; threads_vm_settle
 * turns it back into a threads_count when it has no more, and the core
 * frees either at VM gone. The timers reach them through
 * host->foreach_vm (no list of VMs of our own) and pl->ticks (the VMs
 * with a table or a made view). Views belong to the core; the plugin
 * frees its "threads" view when the table goes (ABI 1.6).
 * Callbacks that outlive a call (request replies) never hold a threads_vm:
 * they look it up again with host->vm_get_data.
 */
#ifndef DDM_PLUGIN_THREADS_H
#define DDM_PLUGIN_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/chunk.h>
#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

#define THREADS_CHUNK_THEN DDM_CHUNK('T', 'H', 'E', 'N')
#define THREADS_CHUNK_THCR DDM_CHUNK('T', 'H', 'C', 'R')
#define THREADS_CHUNK_THDE DDM_CHUNK('T', 'H', 'D', 'E')
#define THREADS_CHUNK_THNM DDM_CHUNK('T', 'H', 'N', 'M')
#define THREADS_CHUNK_THST DDM_CHUNK('T', 'H', 'S', 'T')
#define THREADS_CHUNK_STKL DDM_CHUNK('S', 'T', 'K', 'L')

#define THREADS_DEFAULT_INTERVAL_MS 1000u /* option threads.interval; 0 = no polling */
#define THREADS_DEFAULT_LINGER_MS 10000u  /* option threads.linger: table kept after the
                                           * last look */
#define THREADS_LOOK_TIMER_MS 3600000u    /* the look timer's own period (it runs when woken) */
#define THREADS_MIN_INTERVAL_MS 100u
#define THREADS_TICK_MS 250u              /* poll timer period (at most the interval) */
#define THREADS_TRICKLE_PERIOD_MS 1000u   /* the VM list watched: counts refreshed this often */
#define THREADS_TRICKLE_MAX 32u           /* ... at most this many THSTs each time */
#define THREADS_TRICKLE_AGE_MS 5000u      /* ... for counts at least this old (or
                                           * threads.interval) */
#define THREADS_DEFAULT_HZ 100u           /* option threads.hz: clock ticks per second */
#define THREADS_MAX 65535u                /* threads kept per VM */
#define THREADS_NAME_MAX_UNITS 1024u      /* longer names are cut */
#define THREADS_PUBLISH_NOW_MAX 256u      /* bigger tables are published by a 100 ms timer */
#define THREADS_FLUSH_MS 100u
#define THREADS_THEN_TIMEOUT_MS 5000u
#define THREADS_STKL_MAX_FRAMES 65535u
#define THREADS_METRIC_STATES 16u         /* state codes 0-14, then one "other" */

/* ------------------------------------------------------------ decoders */

/** THST layouts. */
typedef enum thst_form {
    THST_FORM_REAL = 1, /* u1 headerLen, u1 bytesPerEntry, u2 count, entries */
    THST_FORM_DRAFT = 2 /* u4 count, (u4 id, u1 state, u1 suspended) entries */
} thst_form;

/** One THST entry; fields absent from the draft form are 0. */
typedef struct thst_entry {
    uint32_t id;
    uint8_t status;
    uint8_t suspended; /* draft form only */
    uint8_t daemon;
    uint32_t tid, utime, stime;
} thst_entry;

/** A decoded THST table: @e has @n entries (malloc'd; threads_thst_clear). */
typedef struct thst_table {
    thst_form form;
    size_t n;
    thst_entry *e;
} thst_table;

/**
 * Decode a THST payload. Real form: headerLen >= 4 and bytesPerEntry >= 18
 * are honoured (extra header and entry bytes skipped); the whole table must
 * fit. Draft form, tried only when the real header is invalid: u4 count
 * (<= THREADS_MAX) and exactly 4 + 6 x count bytes (see thst.c for why this
 * cannot be confused with a real table; doc/protocol.md, "THST"). Returns 0 or -EBADMSG with a
 * reason in @why (@whylen bytes, required).
 */
int threads_parse_thst(const uint8_t *data, size_t len, thst_table *out, char *why, size_t whylen);
void threads_thst_clear(thst_table *t);

/** One STKL frame (strings malloc'd; file NULL when the VM sent none). */
typedef struct stkl_frame {
    char *class_name, *method, *file;
    int32_t line; /* -2 native, -1 unknown */
} stkl_frame;

typedef struct stkl_trace {
    uint32_t thread_id;
    uint32_t n;
    stkl_frame *frames;
} stkl_trace;

/** Decode an STKL reply. 0 or -EBADMSG with a reason in @why. */
int threads_parse_stkl(const uint8_t *data, size_t len, stkl_trace *out, char *why,
                       size_t whylen);
void threads_stkl_clear(stkl_trace *t);
/** "native", "unknown" or the number, into @buf. */
const char *threads_line_text(int32_t line, char buf[16]);

/** State name for a THST status code ("running", ..., "state-N"). */
const char *threads_state_name(uint8_t code, char buf[16]);

/* --------------------------------------------------------- thread list */

/* What a real-form THST says of a thread (THST comes only while someone
 * watches the VM's threads: an idle VM's threads have none). */
typedef struct thread_stats {
    uint64_t prev_ticks;
    double prev_wall;
    double cpu;        /* % of one CPU between the last two tables */
    uint64_t delta_ticks; /* utime + stime between them (when has_cpu) */
    uint32_t tid, utime, stime;
} thread_stats;

/* Laid out without holes (32 bytes, not 72): every VM holds a list of them. */
typedef struct thread_info {
    char *name;        /* NULL until THCR/THNM; shared with the plugin's other
                          threads of that name (read only: thread-list.c) */
    thread_stats *stats; /* NULL until the thread is in a real-form THST; then
                            valid whenever has_stats and form is real */
    uint32_t id;
    thst_form form;
    int8_t announced;  /* seen in THCR/THNM: kept when absent from a THST */
    int8_t has_stats;  /* from the last THST (-1 while a THST is being merged) */
    int8_t has_prev;   /* previous CPU sample */
    int8_t has_cpu;
    uint8_t status, suspended, daemon;
} thread_info;

typedef struct thread_list {
    thread_info *v;    /* dense; in id order when @sorted */
    size_t n, cap;
    size_t max;        /* THREADS_MAX unless a test says otherwise */
    uint32_t *index;   /* id -> position + 1 (0: empty slot); index_mask + 1 slots */
    size_t index_mask;
    uint32_t seed;     /* random per list: ids cannot be chosen to collide */
    int sorted;
    uint64_t ops;      /* index probes, element moves, sort comparisons (tests bound it) */
} thread_list;

void thread_list_init(thread_list *l);
void thread_list_clear(thread_list *l);
thread_info *thread_list_find(thread_list *l, uint32_t id);
/** Distinct thread names shared by the plugin's lists now (tests). */
size_t thread_names_shared(void);
/** Find or add @id. NULL when the list is full (or out of memory). */
thread_info *thread_list_get(thread_list *l, uint32_t id);
/** Remove @id; 1 if it was there. Moves the last thread into its place. */
int thread_list_remove(thread_list *l, uint32_t id);
/** Put v[0..n) in id order (before publishing). O(n log n), nothing when already so. */
void thread_list_sort(thread_list *l);
/** Set @id's name (taking ownership of @name); NULL if full. */
thread_info *thread_list_name(thread_list *l, uint32_t id, char *name);
/**
 * Apply a THST table received at @now (seconds, monotonic) with @hz ticks
 * per second. Threads in the table get its stats and a CPU % when a
 * previous sample exists; announced threads missing from it lose their
 * stats; threads only known from THST and missing are removed. Returns the
 * number of entries dropped because the list is full.
 */
size_t thread_list_apply_thst(thread_list *l, const thst_table *t, double now, unsigned hz);

/* -------------------------------------------------------------- plugin */

typedef struct threads_vm threads_vm;

/* What every VM with a count holds, and all that one nobody looks at
 * holds (issue 16: 16 bytes, not a threads_vm's ~200); the head of a
 * threads_vm. What is logged once per VM is kept here, so that it stays
 * once per VM however often the state is made again (review rP 7). */
typedef struct threads_count {
    double last_thst;       /* when the last THST of any kind was sent (the count's age) */
    uint32_t count;         /* threads as of the last table or THST (the headline) */
    uint8_t has_count;      /* @count was published as the headline */
    uint8_t thst_in_flight; /* THST requests sent and not answered (a few at most) */
    uint8_t is_state;       /* 1: the head of a threads_vm */
    uint8_t full_logged : 1;   /* "more than N threads" was logged */
    uint8_t metric_logged : 1; /* a failed vm_metric was logged (ddm_vm_metric_logged) */
} threads_count;

typedef struct threads_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned interval_ms; /* 0: no polling */
    unsigned linger_ms;   /* how long a table nobody watches is kept (threads.linger) */
    unsigned hz;
    uint32_t poll_timer;  /* 0: none */
    uint32_t look_timer;  /* 0: none (a core before 1.5); runs when a look begins */
    uint64_t look_gen;    /* watch_generation at the look timer's last run */
    double last_trickle;  /* when the poll tick last refreshed counts for the watched VM list */
    double last_capped;   /* when the trickle or a later look last sent THSTs: their shared
                           * budget, THREADS_TRICKLE_MAX a THREADS_TRICKLE_PERIOD_MS */
    int list_look_due;    /* the VM list was seen unwatched: its next look asks every VM */
    int lazy_view;        /* "threads" is declared (ABI 1.6): made when asked for */
    uint32_t flush_timer; /* 0: none */
    uint32_t soon_timer;  /* 0: none; publishes `soon` (the host runs it at least 1 ms later) */
    threads_vm **soon;    /* small tables changed since the soon timer last ran, each once
                             (threads_vm.soon_slot); publish_pending says which still need it */
    size_t n_soon, cap_soon;
    double (*now)(void);  /* monotonic seconds; tests may replace it */
    ddm_tick_list ticks;  /* poll.c: the VMs whose table is kept (the tick visits them
                             while the watches stay the same) */
} threads_plugin;

struct threads_vm {
    threads_count c;      /* first: what a VM's data pointer points at */
    threads_plugin *pl;
    ddm_vm *vm;
    thread_list list;     /* empty unless @full */
    ddm_view *view;       /* "threads"; NULL when THCR and THST are both disabled, and
                             with ABI 1.6 until somebody asks for it (made again after
                             threads_table_off freed it) */
    ddm_view *stack_view; /* "stack", created by the first stack command */
    int full;             /* the table is kept: THEN(1) sent (when THCR is enabled), the
                             list follows events and polls; else only the count is */
    int was_watched;      /* watched at the last poll tick */
    ddm_tick_node tick;   /* on pl->ticks while @full */
    double last_poll;     /* when the last THST poll of the watched view was sent */
    double last_watched;  /* when the view was last seen watched */
    int publish_pending;  /* changed since its table was last published */
    size_t soon_slot;     /* its index on pl->soon + 1; 0: not on it */
    int then_in_flight;   /* THEN(1) sent, not answered: its THCR burst waits for the reply
                             (or for the reply to a later request: threads_then_passed) */
    int then_thst_out;    /* THSTs sent after a THEN(1), not answered (thst_then_reply) */
    int then_thst_stale;  /* of those, sent before the last threads_table_off: their
                             answers end no later THEN's wait */
    uint64_t *cpu_ticks;  /* THREADS_METRIC_STATES, by state slot (threads_metrics.c);
                             NULL until the first CPU figure (polls come only while
                             someone watches: an idle VM has none) */
};

/** The VM's threads_vm, made on first use from its threads_count (with its
 *  view on a core before 1.6). NULL if out of memory. */
threads_vm *threads_vm_state(threads_plugin *pl, ddm_vm *vm);
/** The VM's threads_vm, NULL if it has only a count (or nothing). */
threads_vm *threads_vm_find(threads_plugin *pl, ddm_vm *vm);
/** The VM's count (the head of its threads_vm if it has one), made on
 *  first use. NULL if out of memory. */
threads_count *threads_count_state(threads_plugin *pl, ddm_vm *vm);
/** Turn @st back into a threads_count if it holds nothing more (table not
 *  kept, no view, nothing out, no CPU totals); @st must not be used after
 *  a 1. On a core before 1.6 (the view made with the state) it never does. */
int threads_vm_settle(threads_vm *st);
/** threads_vm states alive in this process (tests: an idle VM has none). */
size_t threads_vm_states_alive(void);
/** Make @st's "threads" view (columns set, empty) if it has none. */
void threads_view_make(threads_vm *st);
/** The list changed: publish now when @solicited (a reply to a request of
 *  ours, e.g. a THST poll: the server may count it settled at once) or when
 *  no burst of events is in progress; else soon (the soon timer, or THEN's
 *  reply), or for big tables at the 100 ms flush. */
void threads_changed(threads_vm *st, int solicited);
/** Publish the small tables changed since the last publish (what the
 *  soon timer threads_changed arms runs, after a burst of events). */
void threads_publish_soon(threads_plugin *pl);
/** A reply came to a request sent after THEN (the VM answers in order, so
 *  THEN was handled, answered or not: ART never answers it): THEN's burst
 *  is over. Clears then_in_flight and publishes what is pending, at once. */
void threads_then_passed(threads_vm *st);
/** Whether @reply came from the VM (not a timeout, not the VM gone). */
int threads_reply_came(const ddm_reply *reply);
/** Publish the table and the headline now. */
void threads_publish(threads_vm *st);
/** @vm's headline "threads" (text and figure) says @n, unless @c says it does. */
void threads_publish_count(threads_plugin *pl, ddm_vm *vm, threads_count *c, uint32_t n);
/** Apply a decoded THST table to @vm (its data @c) and publish: the whole
 *  table (and the metric samples) when its table is kept, else only the
 *  count. */
void threads_apply_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c, const thst_table *t,
                        int solicited);
/** Keep the table (@st->full): THEN(1) when THCR is enabled. */
void threads_table_on(threads_vm *st);
/** Stop keeping it: THEN(0) when THCR is enabled; the count stays, the
 *  list goes, and the view (declared, ABI 1.6) or else its rows. */
void threads_table_off(threads_vm *st);
/** Send @vm (data @c) a THST whose answer refreshes the count (and the
 *  table when kept); after THEN(1) its answer also ends THEN's wait. 0 or
 *  -errno. */
int threads_send_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c);
/** Decode and apply a THST payload (event or reply). 0 or -EBADMSG (logged). */
int threads_handle_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c, const uint8_t *data,
                        size_t len, int solicited);

/** Start the polling tick and the look timer. 0 or -errno. */
int threads_poll_start(threads_plugin *pl);
/** One polling round (the timer callback's body; also for tests). */
void threads_poll_once(threads_plugin *pl);
/** If @vm's view is watched now, the tick's work for it now (its table
 *  kept, THEN(1), a THST); 1 if so, else 0 (nothing done). */
int threads_poll_vm_if_watched(threads_plugin *pl, ddm_vm *vm);
/** 1 if the poll tick has nothing to do until a wake (poll.c): no VM on
 *  pl->ticks and nobody watches the VM list; it then sleeps (ABI 1.7). */
int threads_poll_idle(threads_plugin *pl);
/** A look began (the look timer's body): at the first look at the VM
 *  list, a THST to each VM whose view nobody watches and whose count is
 *  older than threads.interval; while the list stays watched, to at most
 *  THREADS_TRICKLE_MAX of them, the oldest counts first, from the budget
 *  it shares with threads_trickle_once (at most THREADS_TRICKLE_MAX a
 *  THREADS_TRICKLE_PERIOD_MS for both). */
void threads_look_once(threads_plugin *pl);
/** While the VM list is watched (1.6 vm_list_watchers), at most once a
 *  THREADS_TRICKLE_PERIOD_MS: a THST to the (at most THREADS_TRICKLE_MAX)
 *  VMs nobody looks at whose count is oldest and older than
 *  max(threads.interval, THREADS_TRICKLE_AGE_MS). Returns the THSTs sent. */
int threads_trickle_once(threads_plugin *pl);

/** threads_metrics.c: declare the metric families (in init; 1.3); add
 *  the CPU ticks of the table just applied to each thread's state; set the
 *  VM's samples (threads by state, CPU seconds by state). */
int threads_metrics_register(threads_plugin *pl);
void threads_metrics_account(threads_vm *st);
void threads_metrics_publish(threads_vm *st);
/** Remove the VM's samples (its table goes; the CPU totals are kept). */
void threads_metrics_clear(threads_vm *st);

/** Register the stack command. 0 or -errno. */
int threads_stack_register(threads_plugin *pl);

/** Monotonic clock in seconds (the default of threads_plugin.now). */
double threads_monotonic_now(void);

#endif /* DDM_PLUGIN_THREADS_H */
