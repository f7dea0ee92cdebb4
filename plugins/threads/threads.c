/* SPDX-License-Identifier: Apache-2.0
 *
 * threads plugin: the thread table of the VMs someone looks at, and the
 * thread count of every VM.
 *  - On DDM_VM_READY it sends one THST: its answer (the whole table, u2
 *    count first) gives the headline "threads" = count. No THEN: a VM
 *    nobody looks at sends no THCR burst, and the plugin keeps no thread
 *    list, names or rows for it (issue 16; as ddmlib, which sends THEN
 *    only for the VM the user selects).
 *  - The "threads" table view (when THCR or THST is enabled) is declared
 *    (ABI 1.6, vm_view_declare): made when somebody asks for it or watches
 *    it, freed with the table (or threads.linger after a listing made it
 *    and nobody watched), so a VM nobody looks at holds none. On a core
 *    without vm_view_declare it is made with the VM's state.
 *  - While the VM's "threads" view is watched (a watch, a snapshot, a
 *    one-shot view, a /metrics scrape), the table is kept ("full"): THEN(1)
 *    when THCR is enabled (THEN is only the request that turns THCR/THNM/
 *    THDE events on; --chunks names the events users want), THST polls
 *    (poll.c), names from THCR/THNM, the whole table published. threads.linger
 *    after the last watcher left, THEN(0): the list and the view's rows go,
 *    the count stays.
 *  - The count of a VM whose table is not kept is as of its last THST: the
 *    one at READY, one at each look at the VM list (`ddmon vms`, a
 *    snapshot, a watch of the list: the look timer, poll.c; at most one a
 *    threads.interval), and a capped trickle while the list stays watched
 *    (ABI 1.6 vm_list_watchers; poll.c). Its age is not published: with
 *    few VMs it is at most a few seconds while the list is watched.
 *  - It owns THCR (u4 id, u4 len, str16 name), THNM (same, a rename), THDE
 *    (u4 id) and THST (events, and replies to the polls in poll.c). THCR,
 *    THNM and THDE are ignored while the table is not kept (the last ones
 *    before THEN(0) took effect).
 *  - View "threads" per VM: id, tid, name, state, daemon, utime, stime (ms),
 *    cpu (%); headline "threads" = count.
 * Options (host->config_get, i.e. --plugin-opt threads.KEY=VALUE):
 *   interval  THST poll period in ms while the view is watched, and the
 *             least age of a count a look asks again (1000; 0: no polls)
 *   linger    ms a table is kept after its last watcher left (10000)
 *   hz        clock ticks per second of utime/stime (100)
 * Invariants: a VM's count (threads_count) lives from first use to VM
 * gone; its threads_vm only while it holds more (threads.h), the core frees
 * either; the timers reach them through host->foreach_vm and vm_get_data,
 * so the plugin keeps no list of VMs. Bad chunks are
 * logged and rejected with -EBADMSG; they never change the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "threads.h"

static const ddm_column k_columns[] = {
    {"id", DDM_VAL_INT, NULL},       {"tid", DDM_VAL_INT, NULL},  {"name", DDM_VAL_STR, NULL},
    {"state", DDM_VAL_STR, NULL},    {"daemon", DDM_VAL_BOOL, NULL},
    {"utime", DDM_VAL_INT, "ms"},    {"stime", DDM_VAL_INT, "ms"},
    {"cpu", DDM_VAL_DOUBLE, "%"},
};

double threads_monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ per-VM */

static size_t states_alive;

_Static_assert(sizeof(threads_count) == 16, "an idle VM's count stays 16 bytes");

size_t threads_vm_states_alive(void)
{
    return states_alive;
}

static void vm_state_free(void *p)
{
    threads_vm *st = p;
    thread_list_clear(&st->list);
    free(st->cpu_ticks);
    free(st);
    states_alive--;
}

threads_vm *threads_vm_find(threads_plugin *pl, ddm_vm *vm)
{
    threads_count *c = pl->host->vm_get_data(pl->self, vm);
    return c && c->is_state ? (threads_vm *)(void *)c : NULL;
}

threads_count *threads_count_state(threads_plugin *pl, ddm_vm *vm)
{
    threads_count *c = pl->host->vm_get_data(pl->self, vm);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (pl->host->vm_set_data(pl->self, vm, c, free) != 0)
        return NULL; /* the host freed it */
    return c;
}

threads_vm *threads_vm_state(threads_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    threads_count *c = h->vm_get_data(pl->self, vm);
    threads_vm *st;
    if (c && c->is_state)
        return (threads_vm *)(void *)c;
    st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    if (c)
        st->c = *c; /* the count goes on in the state; the host frees @c */
    st->c.is_state = 1;
    st->pl = pl;
    st->vm = vm;
    thread_list_init(&st->list);
    states_alive++;
    if (h->vm_set_data(pl->self, vm, st, vm_state_free) != 0)
        return NULL; /* the host freed it */
    if (!pl->lazy_view)
        threads_view_make(st);
    return st;
}

int threads_vm_settle(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    threads_count *c;
    if (!pl->lazy_view || st->full || st->view || st->stack_view || st->tick.on ||
        st->soon_slot || st->publish_pending || st->then_in_flight || st->then_thst_out ||
        st->cpu_ticks || st->list.n)
        return 0;
    c = malloc(sizeof *c);
    if (!c)
        return 0; /* it stays as it is */
    *c = st->c;
    c->is_state = 0;
    /* replaces @st (freed by the host, vm_state_free) */
    (void)pl->host->vm_set_data(pl->self, st->vm, c, free);
    return 1;
}

void threads_view_make(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    const ddm_host *h = pl->host;
    if (st->view || (!h->chunk_enabled(pl->self, THREADS_CHUNK_THCR) &&
                     !h->chunk_enabled(pl->self, THREADS_CHUNK_THST)))
        return;
    st->view = h->view_new(pl->self, st->vm, "threads", DDM_VIEW_TABLE, "Threads");
    if (st->view)
        h->view_set_columns(st->view, k_columns, sizeof k_columns / sizeof k_columns[0]);
    else
        h->log(pl->self, DDM_LOG_WARNING, "cannot create the threads view (name taken?)");
}

/* vm_view_declare's make (1.6): somebody asks for or begins to watch @vm's
 * "threads"; the poll tick (woken by that watch) then keeps its table. */
static void make_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st = threads_vm_state(pl, vm);
    (void)self;
    (void)name;
    if (!st)
        return;
    threads_view_make(st);
    if (!st->view) {
        (void)threads_vm_settle(st); /* nothing made: nothing kept */
        return;
    }
    if (st->full) {
        threads_publish(st);
    } else if (st->view) {
        /* a listing makes every declared view, watched or not: the tick
         * frees it threads.linger after, if nobody watches it */
        st->last_watched = pl->now();
        ddm_tick_list_add(&pl->ticks, &st->tick);
    }
}

/* ------------------------------------------------------------ publish */

static void cell_u32_or_null(const ddm_host *h, ddm_view *v, int known, uint32_t x)
{
    if (known)
        h->view_int(v, x);
    else
        h->view_str(v, NULL);
}

void threads_publish(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    const ddm_host *h = pl->host;
    ddm_view *v = st->view;
    char buf[48];
    size_t i;

    st->publish_pending = 0;
    if (!v)
        goto count;
    thread_list_sort(&st->list);
    h->view_begin(v);
    for (i = 0; i < st->list.n; i++) {
        const thread_info *t = &st->list.v[i];
        int real = t->has_stats && t->form == THST_FORM_REAL;
        h->view_row(v);
        h->view_int(v, t->id);
        cell_u32_or_null(h, v, real, real ? t->stats->tid : 0);
        h->view_str(v, t->name);
        if (t->has_stats) {
            char sbuf[16];
            const char *name = threads_state_name(t->status, sbuf);
            if (t->suspended && t->status != 9) {
                snprintf(buf, sizeof buf, "%s (suspended)", name);
                name = buf;
            }
            h->view_str(v, name);
        } else {
            h->view_str(v, NULL);
        }
        if (real)
            h->view_bool(v, t->daemon != 0);
        else
            h->view_str(v, NULL);
        if (real) {
            h->view_int(v, (int64_t)t->stats->utime * 1000 / pl->hz);
            h->view_int(v, (int64_t)t->stats->stime * 1000 / pl->hz);
        } else {
            h->view_str(v, NULL);
            h->view_str(v, NULL);
        }
        if (t->has_stats && t->has_cpu)
            h->view_double(v, t->stats->cpu);
        else
            h->view_str(v, NULL);
    }
    h->view_commit(v);
count:
    threads_publish_count(pl, st->vm, &st->c, (uint32_t)st->list.n);
    threads_metrics_publish(st);
}

void threads_publish_count(threads_plugin *pl, ddm_vm *vm, threads_count *c, uint32_t n)
{
    const ddm_host *h = pl->host;
    char text[24];
    if (c->has_count && c->count == n)
        return;
    c->count = n;
    c->has_count = 1;
    snprintf(text, sizeof text, "%u", (unsigned)n);
    h->vm_headline(pl->self, vm, "threads", text);
    if (DDM_HOST_HAS(h, vm_headline_figures)) { /* the count, typed (1.2) */
        ddm_headline_figure fig = {"count", DDM_VAL_INT, (int64_t)n, 0};
        h->vm_headline_figures(pl->self, vm, "threads", &fig, 1);
    }
}

static int flush_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st = threads_vm_find(pl, vm);
    (void)self;
    if (st && st->publish_pending)
        threads_publish(st);
    return 0;
}

static int flush_timer_cb(ddm_plugin *self, void *ud)
{
    threads_plugin *pl = ud;
    pl->flush_timer = 0; /* returning 0 ends this timer */
    pl->host->foreach_vm(self, flush_vm, pl);
    return 0;
}

/* A small table is published once per burst of events: the ~14 THCR a VM
 * sends when THEN asks for them arrive together, and publishing the
 * table, its headline and its metrics once for each made start-up with
 * many VMs O(threads^2) a VM (39% of the server's instructions with 1,000
 * VMs). A burst is the events of a VM while its THEN is unanswered (THEN's
 * reply publishes them: Dalvik answers after the THCR; ART never answers
 * THEN, but it answers in order, so the reply to any later request of
 * ours, a THST poll's or a STKL's, says the burst is over: it publishes
 * them and ends the wait, threads_then_passed; THEN's 5 s timeout at the
 * latest), or those after the first of a loop iteration (the soon timer,
 * at least 1 ms later, publishes them). A lone event and a reply to our
 * own request (a THST poll's answer) are published at once: the server
 * may say "settled" as soon as it has them, and a snapshot then reads the
 * table. */
void threads_publish_soon(threads_plugin *pl)
{
    while (pl->n_soon > 0) {
        threads_vm *st = pl->soon[--pl->n_soon];
        st->soon_slot = 0;
        if (st->publish_pending) /* another path may have published it since */
            threads_publish(st);
    }
}

static int soon_timer_cb(ddm_plugin *self, void *ud)
{
    threads_plugin *pl = ud;
    (void)self;
    pl->soon_timer = 0; /* returning 0 ends this timer */
    threads_publish_soon(pl);
    return 0;
}

/* @st leaves the soon list (its VM is gone): O(1), the last entry takes
 * its slot. */
static void threads_forget_soon(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    size_t i = st->soon_slot;
    threads_vm *last;
    if (i == 0)
        return;
    last = pl->soon[--pl->n_soon];
    pl->soon[i - 1] = last;
    last->soon_slot = i;
    st->soon_slot = 0;
}

/* Puts @st on the soon list (once at most, whoever published it since it
 * was added: the 100 ms flush, a reply, a fallback; publish_pending says
 * only whether it still needs publishing) and arms the soon timer. 0, or
 * -1 when out of memory or no timer could be added. */
static int soon_add(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    if (!st->soon_slot) {
        if (pl->n_soon == pl->cap_soon) {
            size_t cap = pl->cap_soon ? pl->cap_soon * 2 : 64;
            threads_vm **grown = realloc(pl->soon, cap * sizeof *grown);
            if (!grown)
                return -1;
            pl->soon = grown;
            pl->cap_soon = cap;
        }
        pl->soon[pl->n_soon++] = st;
        st->soon_slot = pl->n_soon;
    }
    if (!pl->soon_timer)
        pl->soon_timer = pl->host->timer_add(pl->self, 0, soon_timer_cb, pl, NULL);
    return pl->soon_timer ? 0 : -1;
}

void threads_changed(threads_vm *st, int solicited)
{
    threads_plugin *pl = st->pl;
    if (solicited) { /* one a poll, whatever the table's size */
        threads_publish(st);
        return;
    }
    if (st->list.n <= THREADS_PUBLISH_NOW_MAX) {
        if (!st->then_in_flight && !st->soon_slot) { /* no burst yet */
            threads_publish(st);
            (void)soon_add(st); /* the rest of this loop iteration's are one */
            return;
        }
        st->publish_pending = 1;
        if (soon_add(st) != 0) /* no memory or no timer: publish now rather than never */
            threads_publish(st);
        return;
    }
    st->publish_pending = 1;
    if (!pl->flush_timer)
        pl->flush_timer = pl->host->timer_add(pl->self, THREADS_FLUSH_MS, flush_timer_cb, pl, NULL);
    if (!pl->flush_timer) /* no timer: publish now rather than never */
        threads_publish(st);
}

void threads_then_passed(threads_vm *st)
{
    if (!st->then_in_flight)
        return;
    st->then_in_flight = 0;
    threads_forget_soon(st); /* the next lone event is published at once */
    if (st->publish_pending)
        threads_publish(st);
}

int threads_reply_came(const ddm_reply *reply)
{
    return reply->status == DDM_REPLY_CHUNK || reply->status == DDM_REPLY_EMPTY ||
           reply->status == DDM_REPLY_ERROR || reply->status == DDM_REPLY_BAD;
}

/* ------------------------------------------------------------- chunks */

/* Once per VM (the flag is in its count: it outlives the state). */
static void log_full(threads_vm *st)
{
    const ddm_host *h = st->pl->host;
    if (!st->c.full_logged)
        h->log(st->pl->self, DDM_LOG_WARNING,
               "VM %s has more than %zu threads; the rest are not shown",
               h->vm_info(st->vm)->key ? h->vm_info(st->vm)->key : "?", st->list.max);
    st->c.full_logged = 1;
}

/* THCR and THNM share a layout: u4 id, u4 name length (units), str16 name. */
static int on_name(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st = threads_vm_find(pl, vm);
    ddm_reader r;
    uint32_t id, units, keep;
    char *name, tname[5];

    if (!st || !st->full)
        return DDM_OK; /* no table kept: sent before THEN(0) took effect */
    ddm_reader_init(&r, data, len);
    id = ddm_read_u4(&r);
    units = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r) || (uint64_t)units * 2 > ddm_reader_remaining(&r)) {
        pl->host->log(self, DDM_LOG_WARNING,
                      "%s of %zu bytes: name length %u runs past the end; ignored",
                      ddm_chunk_name(ci->type, tname), len, (unsigned)units);
        return -EBADMSG;
    }
    keep = units < THREADS_NAME_MAX_UNITS ? units : THREADS_NAME_MAX_UNITS;
    name = ddm_read_str16(&r, keep);
    if (!name)
        return -ENOMEM;
    if (!thread_list_name(&st->list, id, name)) {
        if (thread_list_find(&st->list, id) || st->list.n < st->list.max)
            return -ENOMEM; /* the list had room: the name could not be held */
        log_full(st);
        return DDM_OK;
    }
    threads_changed(st, ci->origin == DDM_ORIGIN_REPLY);
    return DDM_OK;
}

static int on_thde(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st = threads_vm_find(pl, vm);
    ddm_reader r;
    uint32_t id;
    if (!st || !st->full)
        return DDM_OK; /* no table kept */
    ddm_reader_init(&r, data, len);
    id = ddm_read_u4(&r);
    if (!ddm_reader_ok(&r)) {
        pl->host->log(self, DDM_LOG_WARNING, "THDE of %zu bytes (need 4); ignored", len);
        return -EBADMSG;
    }
    if (!thread_list_remove(&st->list, id)) {
        pl->host->log(self, DDM_LOG_DEBUG, "THDE for unknown thread %u", (unsigned)id);
        return DDM_OK;
    }
    threads_changed(st, ci->origin == DDM_ORIGIN_REPLY);
    return DDM_OK;
}

void threads_apply_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c, const thst_table *t,
                        int solicited)
{
    threads_vm *st = c->is_state ? (threads_vm *)(void *)c : NULL;
    size_t dropped;
    if (!st || !st->full) { /* nobody looks at the table: its count only */
        threads_publish_count(pl, vm, c, (uint32_t)(t->n < UINT32_MAX ? t->n : UINT32_MAX));
        return;
    }
    dropped = thread_list_apply_thst(&st->list, t, pl->now(), pl->hz);
    threads_metrics_account(st);
    if (dropped)
        log_full(st);
    threads_changed(st, solicited);
}

int threads_handle_thst(threads_plugin *pl, ddm_vm *vm, threads_count *c, const uint8_t *data,
                        size_t len, int solicited)
{
    thst_table t;
    char why[128];
    int rc = threads_parse_thst(data, len, &t, why, sizeof why);
    if (rc != 0) {
        pl->host->log(pl->self, DDM_LOG_WARNING, "THST of %zu bytes rejected: %s", len,
                      rc == -ENOMEM ? "out of memory" : why);
        return rc;
    }
    if (t.form == THST_FORM_DRAFT)
        pl->host->log(pl->self, DDM_LOG_DEBUG, "THST in the 2007 draft's form (%zu threads)", t.n);
    threads_apply_thst(pl, vm, c, &t, solicited);
    threads_thst_clear(&t);
    return 0;
}

static int on_thst(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    threads_count *c = threads_count_state(ud, vm);
    (void)self;
    if (!c)
        return -ENOMEM;
    return threads_handle_thst(ud, vm, c, data, len, ci->origin == DDM_ORIGIN_REPLY);
}

/* ------------------------------------------------------------ VM events */

static void then_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    threads_plugin *pl = ud;
    threads_vm *st = threads_vm_find(pl, vm);
    /* The THCR burst THEN asked for came before this answer: publish it now,
     * whatever its size, before the server may count this request settled.
     * A timeout too (ART never answers THEN): what came is published then at
     * the latest, though a later reply to a request of ours usually came
     * first (threads_then_passed). */
    if (st && reply->status != DDM_REPLY_VM_GONE) {
        threads_then_passed(st);
        (void)threads_vm_settle(st); /* the table went before this answer */
    } else if (st) {
        st->then_in_flight = 0;
    }
    /* Dalvik answers empty, ART's adbconnection not at all: both are fine. */
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        pl->host->log(self, DDM_LOG_INFO, "THEN refused by the VM: %s",
                      reply->fail_msg ? reply->fail_msg : "no message");
    else if (reply->status == DDM_REPLY_ERROR)
        pl->host->log(self, DDM_LOG_INFO, "THEN: JDWP error %u", (unsigned)reply->jdwp_error);
}

/* THEN(0)'s answer: nothing waits for it (ART sends none). */
static void then_off_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    threads_plugin *pl = ud;
    (void)vm;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        pl->host->log(self, DDM_LOG_INFO, "THEN(0) refused by the VM: %s",
                      reply->fail_msg ? reply->fail_msg : "no message");
}

void threads_table_on(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    const ddm_host *h = pl->host;
    static const uint8_t enable = 1;
    int rc;
    if (st->full)
        return;
    st->full = 1;
    st->last_watched = pl->now();
    if (!h->chunk_enabled(pl->self, THREADS_CHUNK_THCR))
        return; /* THST alone fills the table */
    rc = h->request(pl->self, st->vm, THREADS_CHUNK_THEN, &enable, 1, THREADS_THEN_TIMEOUT_MS,
                    then_reply, pl, NULL);
    if (rc != 0)
        h->log(pl->self, DDM_LOG_INFO, "THEN not sent: error %d", rc);
    else
        st->then_in_flight = 1;
}

void threads_table_off(threads_vm *st)
{
    threads_plugin *pl = st->pl;
    const ddm_host *h = pl->host;
    static const uint8_t disable = 0;
    int rc;
    if (!st->full)
        return;
    if (h->chunk_enabled(pl->self, THREADS_CHUNK_THCR)) {
        rc = h->request(pl->self, st->vm, THREADS_CHUNK_THEN, &disable, 1, THREADS_THEN_TIMEOUT_MS,
                        then_off_reply, pl, NULL);
        if (rc != 0) /* the events keep coming, and are ignored */
            h->log(pl->self, DDM_LOG_DEBUG, "THEN(0) not sent: error %d", rc);
    }
    threads_publish_count(pl, st->vm, &st->c, (uint32_t)st->list.n);
    threads_metrics_clear(st);
    st->full = 0;
    st->then_in_flight = 0;
    st->then_thst_stale = st->then_thst_out; /* answered in order, before any later THEN's */
    st->publish_pending = 0;
    st->was_watched = 0;
    threads_forget_soon(st);
    thread_list_clear(&st->list);
    if (st->view && pl->lazy_view) { /* made again when somebody asks (1.6) */
        h->view_free(st->view);
        st->view = NULL;
    } else if (st->view && h->view_begin(st->view) == 0) { /* the core lets go of the rows too */
        h->view_commit(st->view);
    }
    ddm_tick_list_del(&pl->ticks, &st->tick);
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    threads_plugin *pl = ud;
    const ddm_host *h = pl->host;
    threads_vm *st;
    threads_count *c;
    int rc;

    if (event == DDM_VM_GONE) { /* the core frees our state (vm_state_free) and views */
        st = threads_vm_find(pl, vm);
        if (st) {
            ddm_tick_list_del(&pl->ticks, &st->tick); /* poll.c's tick visits it no more */
            threads_forget_soon(st);
        }
        return;
    }
    if (event != DDM_VM_READY)
        return;
    /* a count (a make may have made more already); on a core before 1.6
     * the state, with its view */
    if (!(pl->lazy_view ? (void *)threads_count_state(pl, vm) : (void *)threads_vm_state(pl, vm)))
        return;
    /* A VM that becomes ready while its view is watched (an in-process
     * snapshot, a watch of every view) gets its table at once, so the
     * answer the server waits for has it. */
    if (threads_poll_vm_if_watched(pl, vm) || !h->chunk_enabled(self, THREADS_CHUNK_THST))
        return;
    /* The count: one THST, no THEN (the table is kept only while watched). */
    c = threads_count_state(pl, vm);
    rc = c ? threads_send_thst(pl, vm, c) : -ENOMEM;
    if (rc != 0)
        h->log(self, DDM_LOG_INFO, "THST not sent: error %d", rc);
}

/* ---------------------------------------------------------- descriptor */

/* ABI 1.6: "threads" is made only when somebody asks for it or watches it
 * (make_view), and freed with the table (threads_table_off): a VM nobody
 * looks at holds no view. On an older core it is made with the state. */
static int threads_view_declare(threads_plugin *pl)
{
    const ddm_host *h = pl->host;
    int rc;
    if (!DDM_HOST_HAS(h, vm_view_declare) || !h->vm_view_declare ||
        (!h->chunk_enabled(pl->self, THREADS_CHUNK_THCR) &&
         !h->chunk_enabled(pl->self, THREADS_CHUNK_THST)))
        return 0;
    rc = h->vm_view_declare(pl->self, "threads", make_view, pl, NULL);
    if (rc == 0)
        pl->lazy_view = 1;
    return rc;
}


static void plugin_free(void *p)
{
    threads_plugin *pl = p;
    free(pl->soon);
    free(pl);
}

static int threads_init(ddm_plugin *self, const ddm_host *host)
{
    threads_plugin *pl = calloc(1, sizeof *pl);
    int rc;
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    pl->now = threads_monotonic_now;
    host->set_data(self, pl, plugin_free);
    pl->interval_ms = (unsigned)ddm_config_uint(host, self, "interval", 0, 3600000u,
                                                THREADS_DEFAULT_INTERVAL_MS);
    if (pl->interval_ms && pl->interval_ms < THREADS_MIN_INTERVAL_MS) {
        host->log(self, DDM_LOG_INFO, "threads.interval %u ms raised to %u ms", pl->interval_ms,
                  THREADS_MIN_INTERVAL_MS);
        pl->interval_ms = THREADS_MIN_INTERVAL_MS;
    }
    pl->linger_ms = (unsigned)ddm_config_uint(host, self, "linger", 0, 3600000u,
                                              THREADS_DEFAULT_LINGER_MS);
    pl->hz = (unsigned)ddm_config_uint(host, self, "hz", 1, 1000000u, THREADS_DEFAULT_HZ);
    if ((rc = host->register_chunk(self, THREADS_CHUNK_THCR, on_name, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, THREADS_CHUNK_THNM, on_name, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, THREADS_CHUNK_THDE, on_thde, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, THREADS_CHUNK_THST, on_thst, pl, NULL)) != 0 ||
        (rc = host->register_vm_listener(self, on_vm, pl, NULL)) != 0 ||
        (rc = threads_view_declare(pl)) != 0 ||
        (rc = threads_stack_register(pl)) != 0 || (rc = threads_poll_start(pl)) != 0 ||
        (rc = threads_metrics_register(pl)) != 0)
        return rc;
    return 0;
}

DDM_PLUGIN_DEFINE("threads", "1.0", "Apache-2.0",
                  "thread table (THCR/THDE/THNM/THST) with CPU %, and stacks (STKL)",
                  threads_init, NULL);
