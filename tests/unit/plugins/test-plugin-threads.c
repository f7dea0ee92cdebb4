/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the threads plugin (plugins/threads sources compiled in)
 * through the fake host: THST (not THEN) on ready and the count it gives,
 * the table kept only while watched (THEN(1) on a watch, THEN(0) and the
 * list freed threads.linger after), a look's fresh counts, the first look's
 * wait for THEN's burst, the chunk filter, THCR/THNM/THDE,
 * every THST layout (real with longer header/entries, draft form, truncated
 * and invalid), polling only while watched with one THST in flight, CPU %
 * between two polls, options, STKL success/FAIL/timeout/malformed, the
 * stack command's errors, the thread cap and the big-table publish timer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include <ddmon/testkit.h>
#include "threads.h"
#include "refusing-host.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

static double g_now;

static double fake_now(void)
{
    return g_now;
}

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
} fixture;

static threads_plugin *plugin_of(fake_host *fh)
{
    return fake_host_table(fh)->get_data(fake_host_plugin(fh));
}

/* The VM's data: its count, or the threads_vm it heads. */
static threads_count *count_of(fake_host *fh, ddm_vm *vm)
{
    return fake_host_table(fh)->vm_get_data(fake_host_plugin(fh), vm);
}

/* The VM's threads_vm if it has one (NULL: a count only, or nothing). */
static threads_vm *found(fake_host *fh, ddm_vm *vm)
{
    return threads_vm_find(plugin_of(fh), vm);
}

/* 1 if the VM's table is kept. */
static int kept(fake_host *fh, ddm_vm *vm)
{
    threads_vm *st = found(fh, vm);
    return st && st->full;
}

/* The VM's threads_vm, made from its count if it has only that (as the
 * plugin does when it needs one). */
static threads_vm *state_of(fake_host *fh, ddm_vm *vm)
{
    return threads_vm_state(plugin_of(fh), vm);
}

/* A loaded host with one VM (pid 77), not yet ready. */
static fixture *make(void)
{
    fixture *f = calloc(1, sizeof *f);
    ddm_vm_info info = {.key = "127.0.0.1:8000", .pid = 77, .ddm = 1, .app_name = "app",
                        .user_id = -1, .native_debuggable = -1};
    f->fh = fake_host_new();
    return f->vm = fake_host_add_vm(f->fh, &info), f;
}

static void load(fixture *f)
{
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    plugin_of(f->fh)->now = fake_now;
    g_now = 100.0;
}

/* A real THST table with the given header and entry lengths (padding 0xEE). */
static uint8_t *thst_real(unsigned hl, unsigned bpe, unsigned count, const thst_entry *e, size_t n,
                          size_t *len);

/* READY's THST (request 0) answered with an empty table. */
static void answer_ready(fixture *f)
{
    size_t len;
    uint8_t *p = thst_real(4, 18, 0, NULL, 0, &len);
    assert_int_equal(fake_host_request(f->fh, 0)->type, THREADS_CHUNK_THST);
    fake_host_complete_chunk(f->fh, 0, THREADS_CHUNK_THST, p, len);
    free(p);
}

/* Ready, READY's THST unanswered: nobody looks at the VM. */
static int setup_ready(void **state)
{
    fixture *f = make();
    load(f);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    *state = f;
    return 0;
}

/* Ready, READY's THST answered (0 threads): nobody looks at the VM. */
static int setup_idle(void **state)
{
    setup_ready(state);
    answer_ready(*state);
    return 0;
}

/* As setup_idle, then the table kept as a watch keeps it (THEN(1) is
 * request 1, unanswered): most tests of the table start here. */
static int setup(void **state)
{
    fixture *f;
    setup_idle(state);
    f = *state;
    threads_table_on(state_of(f->fh, f->vm));
    assert_int_equal(fake_host_request(f->fh, 1)->type, THREADS_CHUNK_THEN);
    return 0;
}

static int setup_unloaded(void **state)
{
    *state = make();
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_host_free(f->fh);
    free(f);
    return 0;
}

/* --------------------------------------------------------------- builders */

static uint8_t *name_chunk(uint32_t id, const char *name, size_t *len)
{
    ddm_writer w;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, id);
    ddm_write_u4(&w, (uint32_t)ddm_utf8_to_utf16be(name, NULL, 0));
    ddm_write_str16(&w, name);
    return ddm_writer_take(&w, len);
}

static int send_name(fixture *f, uint32_t type, uint32_t id, const char *name)
{
    size_t len;
    uint8_t *p = name_chunk(id, name, &len);
    int rc = fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, p, len);
    free(p);
    threads_publish_soon(plugin_of(f->fh)); /* the loop, after the burst */
    return rc;
}

static int send_thde(fixture *f, uint32_t id)
{
    uint8_t p[4];
    ddm_put_u4(p, id);
    int rc = fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THDE, DDM_ORIGIN_EVENT, p, 4);
    threads_publish_soon(plugin_of(f->fh)); /* the loop, after the burst */
    return rc;
}

/* A real THST table with the given header and entry lengths (padding 0xEE). */
static uint8_t *thst_real(unsigned hl, unsigned bpe, unsigned count, const thst_entry *e, size_t n,
                          size_t *len)
{
    ddm_writer w;
    size_t i, k;
    ddm_writer_init(&w, 0);
    ddm_write_u1(&w, (uint8_t)hl);
    ddm_write_u1(&w, (uint8_t)bpe);
    ddm_write_u2(&w, (uint16_t)count);
    for (k = 4; k < hl; k++)
        ddm_write_u1(&w, 0xEE);
    for (i = 0; i < n; i++) {
        ddm_write_u4(&w, e[i].id);
        ddm_write_u1(&w, e[i].status);
        ddm_write_u4(&w, e[i].tid);
        ddm_write_u4(&w, e[i].utime);
        ddm_write_u4(&w, e[i].stime);
        ddm_write_u1(&w, e[i].daemon);
        for (k = 18; k < bpe; k++)
            ddm_write_u1(&w, 0xEE);
    }
    return ddm_writer_take(&w, len);
}

static int send_thst(fixture *f, const thst_entry *e, size_t n)
{
    size_t len;
    uint8_t *p = thst_real(4, 18, (unsigned)n, e, n, &len);
    int rc = fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, p, len);
    free(p);
    threads_publish_soon(plugin_of(f->fh)); /* the loop, after the burst */
    return rc;
}

static ddm_view *threads_view(fixture *f)
{
    ddm_view *v = fake_view_find(f->fh, f->vm, "threads");
    assert_non_null(v);
    return v;
}

/* ------------------------------------------------------- ready and THEN */

static void test_registration(void **state)
{
    fixture *f = *state;
    assert_true(fake_host_owns(f->fh, THREADS_CHUNK_THCR));
    assert_true(fake_host_owns(f->fh, THREADS_CHUNK_THNM));
    assert_true(fake_host_owns(f->fh, THREADS_CHUNK_THDE));
    assert_true(fake_host_owns(f->fh, THREADS_CHUNK_THST));
    assert_true(fake_host_has_command(f->fh, "stack"));
    assert_int_equal(fake_host_n_timers(f->fh), 2); /* the poll tick, the look timer */
    assert_int_equal(fake_host_timer_interval(f->fh, 0), THREADS_TICK_MS);
    assert_int_equal(fake_host_timer_interval(f->fh, 1), THREADS_LOOK_TIMER_MS);
}

/* Issue 16: READY sends one THST, not THEN. Its answer gives the headline
 * count, its figure and the threads by state; no list, names or rows are
 * kept for a VM nobody looks at. (The old READY sent THEN(1), and every
 * VM sent a THCR per thread.) */
static void test_ready_sends_thst_not_then(void **state)
{
    fixture *f = *state;
    const fake_request *rq;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 5},
                            {.id = 2, .status = 4, .tid = 78},
                            {.id = 3, .status = 4, .tid = 79}};
    size_t len, names = thread_names_shared();
    double fig = -1;
    uint8_t *p;
    assert_int_equal(fake_host_n_requests(f->fh), 1);
    rq = fake_host_request(f->fh, 0);
    assert_int_equal(rq->type, THREADS_CHUNK_THST);
    assert_int_equal(rq->len, 0);
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
    assert_null(fake_host_headline(f->fh, f->vm, "threads")); /* no made-up 0 */
    p = thst_real(4, 18, 3, e, 3, &len);
    fake_host_complete_chunk(f->fh, 0, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    assert_true(fake_host_headline_figure(f->fh, f->vm, "threads_count", &fig));
    assert_float_equal(fig, 3, 0);
    assert_int_equal(fake_view_n_rows(v), 0);
    assert_int_equal(state_of(f->fh, f->vm)->list.n, 0);
    assert_null(state_of(f->fh, f->vm)->list.v);
    assert_int_equal(thread_names_shared(), names);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 0); /* while kept only */
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "thread_cpu_seconds_total"), 0);
    /* the columns are set for when someone looks */
    assert_int_equal(fake_view_n_cols(v), 8);
    assert_string_equal(fake_view_col_unit(v, "cpu"), "%");
    assert_string_equal(fake_view_col_unit(v, "utime"), "ms");
    assert_string_equal(fake_view_col_unit(v, "stime"), "ms");
    assert_int_equal(fake_view_col_type(v, "daemon"), DDM_VAL_BOOL);
    /* events of a VM whose table is not kept change nothing */
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 9, "late"), DDM_OK);
    assert_int_equal(send_thde(f, 1), DDM_OK);
    assert_int_equal(fake_view_n_rows(v), 0);
    assert_int_equal(state_of(f->fh, f->vm)->list.n, 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    /* an idle tick asks nothing (the first run sees the views made at
     * READY as a watch change; the count is fresh) */
    fake_host_fire_timers(f->fh);
    g_now += 60;
    fake_host_fire_timers(f->fh);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 1);
}

/* A watch of the VM's threads view keeps its table: THEN(1), then a THST
 * whose answer ends THEN's wait; the events fill the list. threads.linger
 * (10 s) after the last watcher left: THEN(0), the list, names and rows
 * go, the count stays. */
static void test_table_kept_while_watched(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    threads_vm *st = state_of(f->fh, f->vm);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}, {.id = 2, .status = 4, .tid = 78}};
    size_t len, names = thread_names_shared();
    const fake_request *rq;
    int then_idx, thst_idx, off_idx;
    uint8_t *p;

    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_watch_begins(f->fh), 2); /* the poll tick and the look timer */
    then_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0);
    assert_true(then_idx > 0);
    rq = fake_host_request(f->fh, (size_t)then_idx);
    assert_int_equal(rq->len, 1);
    assert_int_equal(rq->data[0], 1);
    thst_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, (size_t)then_idx);
    assert_true(thst_idx > then_idx); /* after THEN: one THST, not two */
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    assert_true(st->full);
    send_name(f, THREADS_CHUNK_THCR, 1, "main");
    send_name(f, THREADS_CHUNK_THCR, 2, "Signal Catcher thread of app");
    fake_host_complete_status(f->fh, (size_t)then_idx, DDM_REPLY_EMPTY);
    p = thst_real(4, 18, 2, e, 2, &len);
    fake_host_complete_chunk(f->fh, (size_t)thst_idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "2");
    assert_true(thread_names_shared() > names);

    /* nobody looks any more: kept for the linger, no polls */
    fake_view_set_watchers(v, 0);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, (size_t)then_idx + 1), -1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    assert_true(st->full);
    assert_int_equal(fake_view_n_rows(v), 2);
    /* past it: THEN(0), everything but the count goes */
    g_now += 5.2;
    fake_host_fire_timers(f->fh);
    off_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, (size_t)then_idx + 1);
    assert_true(off_idx > 0);
    rq = fake_host_request(f->fh, (size_t)off_idx);
    assert_int_equal(rq->len, 1);
    assert_int_equal(rq->data[0], 0);
    /* issue 16: the list, its view and the state itself went; the count stays */
    assert_false(count_of(f->fh, f->vm)->is_state);
    assert_int_equal(threads_vm_states_alive(), 0);
    assert_int_equal(count_of(f->fh, f->vm)->count, 2);
    assert_int_equal(thread_names_shared(), names);
    assert_null(fake_view_find_made(f->fh, f->vm, "threads")); /* 1.6: made again when asked */
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "2");
    fake_host_complete_status(f->fh, (size_t)off_idx, DDM_REPLY_TIMEOUT); /* ART: no answer */
    /* stragglers sent before THEN(0) took effect are ignored */
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 3, "straggler"), DDM_OK);
    assert_false(count_of(f->fh, f->vm)->is_state);
    /* later ticks send nothing more */
    g_now += 30;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, (size_t)off_idx + 1), -1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, 0), 0);
    /* a new watch (which makes the view again, empty): THEN(1) again */
    v = threads_view(f);
    assert_int_equal(fake_view_n_rows(v), 0);
    assert_int_equal(fake_view_n_cols(v), 8);
    fake_view_set_watchers(v, 1);
    fake_host_watch_begins(f->fh);
    assert_true(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, (size_t)off_idx + 1) > off_idx);
    assert_true(state_of(f->fh, f->vm)->full);
}

/* ABI 1.6: a VM nobody asked about has no threads view at all; one made
 * by a listing (every declared view is made) and never watched is freed
 * threads.linger later, without THEN. */
static void test_view_made_only_when_asked(void **state)
{
    fixture *f = *state; /* setup_idle */
    assert_null(fake_view_find_made(f->fh, f->vm, "threads"));
    assert_null(found(f->fh, f->vm)); /* issue 16: a count only */
    assert_int_equal(fake_host_n_views(f->fh, f->vm), 1); /* a listing makes it */
    assert_non_null(found(f->fh, f->vm)->view);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_non_null(fake_view_find_made(f->fh, f->vm, "threads"));
    g_now += 5.2;
    fake_host_fire_timers(f->fh);
    assert_null(fake_view_find_made(f->fh, f->vm, "threads"));
    assert_null(found(f->fh, f->vm)); /* the view went, and the state with it */
    assert_int_equal(threads_vm_states_alive(), 0);
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "0");
}

/* ABI 1.7: with nothing on its list and nobody watching the VM list, the
 * poll tick sleeps (DDM_TIMER_SLEEP): an idle server does not wake for it.
 * What gives it work wakes it, and the work is then done: a listing that
 * makes the view (freed after the linger), a watch of the view (THEN and
 * a THST), a look at the VM list (the trickle keeps it ticking). */
static void test_idle_tick_sleeps(void **state)
{
    fixture *f = *state; /* setup_idle */
    threads_plugin *pl = plugin_of(f->fh);
    uint32_t tick = pl->poll_timer;
    assert_true(tick != 0);
    assert_int_equal(fake_host_fire_timers(f->fh), 2); /* the tick and the look timer */
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 1); /* the look timer only */
    /* a listing makes the view: the tick wakes to free it after the linger */
    assert_int_equal(fake_host_n_views(f->fh, f->vm), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 5;
    assert_int_equal(fake_host_fire_timers(f->fh), 2);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0); /* the linger runs */
    assert_non_null(fake_view_find_made(f->fh, f->vm, "threads"));
    g_now += 5.2;
    fake_host_fire_timers(f->fh);
    assert_null(fake_view_find_made(f->fh, f->vm, "threads"));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    /* a watch of the view: THEN(1) and a THST at the next tick */
    fake_view_set_watchers(threads_view(f), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    fake_host_fire_timers(f->fh);
    assert_true(kept(f->fh, f->vm));
    assert_true(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0) >= 0);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    /* the watch ends: the tick runs until the linger took the table back */
    fake_view_set_watchers(threads_view(f), 0);
    fake_host_fire_timers(f->fh);
    assert_true(kept(f->fh, f->vm));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_false(kept(f->fh, f->vm));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    /* a look at the VM list: the trickle needs the tick while it lasts */
    fake_host_set_vm_list_watchers(f->fh, 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    fake_host_fire_timers(f->fh);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    fake_host_set_vm_list_watchers(f->fh, 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
}

/* threads.linger=0: the table goes at the first tick nobody watches. */
static void test_option_linger(void **state)
{
    fixture *f = *state;
    fake_host_set_config(f->fh, "threads.linger", "0");
    load(f);
    assert_int_equal(plugin_of(f->fh)->linger_ms, 0);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    answer_ready(f);
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    fake_view_set_watchers(threads_view(f), 0);
    fake_host_fire_timers(f->fh);
    assert_false(kept(f->fh, f->vm));
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THEN), 2); /* 1 and 0 */
}

/* The index of the last request of @type to @vm, or -1. */
static int last_request(fake_host *fh, ddm_vm *vm, uint32_t type)
{
    int idx = -1, next;
    while ((next = fake_host_find_request(fh, vm, type, (size_t)(idx + 1))) >= 0)
        idx = next;
    return idx;
}

/* Answer every request of @type to @vm still pending from request @from
 * on: THST with @thst (@len bytes), anything else empty. The number
 * answered. */
static int answer_pending(fixture *f, size_t from, uint32_t type, const uint8_t *thst, size_t len)
{
    int n = 0;
    for (size_t i = from; i < fake_host_n_requests(f->fh); i++) {
        const fake_request *r = fake_host_request(f->fh, i);
        if (r->vm != f->vm || r->type != type || r->completed)
            continue;
        if (type == THREADS_CHUNK_THST)
            fake_host_complete_chunk(f->fh, i, THREADS_CHUNK_THST, thst, len);
        else
            fake_host_complete_status(f->fh, i, DDM_REPLY_EMPTY);
        n++;
    }
    return n;
}

/* A trickle now (the VM list watched), whatever the last one's time: the
 * THSTs it sent. */
static int trickle_now(fixture *f)
{
    threads_plugin *pl = plugin_of(f->fh);
    pl->last_trickle = 0;
    pl->last_capped = 0;
    return threads_trickle_once(pl);
}

/* Issue 16: a VM nobody looks at holds a threads_count only (its count,
 * the count's age, the THSTs out: 16 bytes), from READY on; a watch makes
 * the threads_vm, which goes back to a count with the table, once the
 * THST sent while it was kept has been answered; the count carries over
 * both ways (its value, its age and the THSTs out: review rP 5). */
static void test_idle_vm_holds_a_count_only(void **state)
{
    fixture *f = *state; /* setup_ready: READY's THST out */
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}, {.id = 2, .status = 4, .tid = 78},
                            {.id = 3, .status = 4, .tid = 79}};
    threads_count *c = count_of(f->fh, f->vm);
    double sent_at;
    size_t from;
    int idx;
    size_t len;
    uint8_t *p = thst_real(4, 18, 3, e, 3, &len);

    assert_non_null(c);
    assert_false(c->is_state);
    assert_int_equal(c->thst_in_flight, 1);
    assert_int_equal(threads_vm_states_alive(), 0);
    fake_host_complete_chunk(f->fh, 0, THREADS_CHUNK_THST, p, len);
    assert_ptr_equal(count_of(f->fh, f->vm), c);
    assert_int_equal(c->count, 3);
    assert_int_equal(c->thst_in_flight, 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    fake_host_fire_timers(f->fh);
    assert_int_equal(threads_vm_states_alive(), 0);

    /* watched: the state, with the count; the watch ends while a poll is out */
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    assert_int_equal(threads_vm_states_alive(), 1);
    assert_int_equal(found(f->fh, f->vm)->c.count, 3);
    idx = last_request(f->fh, f->vm, THREADS_CHUNK_THST);
    assert_true(idx > 0);
    fake_view_set_watchers(threads_view(f), 0);
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_false(kept(f->fh, f->vm));
    assert_non_null(found(f->fh, f->vm)); /* its THST (sent after THEN) is out */
    sent_at = found(f->fh, f->vm)->c.last_thst;
    fake_host_complete_chunk(f->fh, (size_t)idx, THREADS_CHUNK_THST, p, len);
    assert_null(found(f->fh, f->vm));
    assert_int_equal(threads_vm_states_alive(), 0);
    assert_int_equal(count_of(f->fh, f->vm)->count, 3);
    assert_int_equal(count_of(f->fh, f->vm)->thst_in_flight, 0);
    assert_true(count_of(f->fh, f->vm)->last_thst == sent_at); /* the count's age too */
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    /* stragglers make nothing */
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 9, "late"), DDM_OK);
    assert_null(found(f->fh, f->vm));

    /* Again, the state going back to a count while a poll's THST is out
     * (THEN and the THST after it answered; threads.linger 0): the count
     * keeps the THST out and its age, so a look and the trickle choose as
     * they would have with the state: nothing while it is out (a second
     * THST would go), nothing while the count is fresh (the oldest-first
     * order would put it first), then one. */
    plugin_of(f->fh)->linger_ms = 0;
    from = fake_host_n_requests(f->fh);
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    assert_int_equal(answer_pending(f, from, THREADS_CHUNK_THEN, NULL, 0), 1);
    assert_int_equal(answer_pending(f, from, THREADS_CHUNK_THST, p, len), 1);
    g_now += 1;
    fake_host_fire_timers(f->fh); /* the poll */
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    sent_at = found(f->fh, f->vm)->c.last_thst;
    assert_true(sent_at == g_now);
    fake_view_set_watchers(threads_view(f), 0);
    fake_host_fire_timers(f->fh); /* the table goes at once: back to a count */
    assert_false(kept(f->fh, f->vm));
    assert_null(found(f->fh, f->vm));
    assert_int_equal(threads_vm_states_alive(), 0);
    c = count_of(f->fh, f->vm);
    assert_int_equal(c->thst_in_flight, 1);
    assert_true(c->last_thst == sent_at);
    assert_int_equal(c->count, 3);
    fake_host_set_vm_list_watchers(f->fh, 1);
    g_now += 1.5; /* older than threads.interval: a first look would ask it */
    threads_look_once(plugin_of(f->fh));
    assert_int_equal(trickle_now(f), 0);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    assert_int_equal(answer_pending(f, from, THREADS_CHUNK_THST, p, len), 1);
    assert_int_equal(count_of(f->fh, f->vm)->thst_in_flight, 0);
    g_now += 1; /* 2.5 s: younger than the trickle's THREADS_TRICKLE_AGE_MS */
    assert_int_equal(trickle_now(f), 0);
    g_now += THREADS_TRICKLE_AGE_MS / 1000.0;
    assert_int_equal(trickle_now(f), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    assert_true(count_of(f->fh, f->vm)->last_thst == g_now);
    fake_host_set_vm_list_watchers(f->fh, 0);
    free(p);
}

/* The first look at the VM list (`ddmon vms`, a watch of it, a snapshot;
 * ABI 1.6 vm_list_watchers from 0 to more) that watches no threads view
 * asks every VM whose count is older than threads.interval for a THST:
 * the counts it shows are of that moment. A look that shows no VM list
 * (`ddmon view heap.summary --vm X`) asks none. A later wake while the
 * list stays watched (a second `ddmon vms` changes no watch) asks the
 * oldest counts older than threads.interval (here both VMs: fewer than
 * the cap; test_look_while_watched_sends_the_cap), and a watched VM gets
 * its table from the poll tick. */
static void test_look_refreshes_counts(void **state)
{
    fixture *f = *state;
    ddm_vm_info info = {.key = "127.0.0.1:8001", .pid = 88, .ddm = 1, .user_id = -1,
                        .native_debuggable = -1};
    ddm_vm *vm2 = fake_host_add_vm(f->fh, &info);
    const thst_entry e[] = {{.id = 1, .status = 1}, {.id = 2, .status = 1}, {.id = 5, .status = 2},
                            {.id = 6, .status = 2}};
    size_t len;
    uint8_t *p;
    int idx;

    fake_host_vm_event(f->fh, vm2, DDM_VM_READY);
    assert_int_equal(fake_host_n_pending(f->fh, vm2, THREADS_CHUNK_THST), 1); /* its READY's */
    /* a look that shows no VM list, later: no THST for the counts */
    g_now += 2;
    fake_host_watch_begins(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    g_now -= 2;
    fake_host_set_vm_list_watchers(f->fh, 1);
    plugin_of(f->fh)->last_trickle = 1e9; /* the trickle is another test's */
    /* a look at once: f->vm's count is fresh (READY's), vm2's in flight */
    fake_host_watch_begins(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    assert_int_equal(fake_host_n_pending(f->fh, vm2, THREADS_CHUNK_THST), 1);
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, vm2, THREADS_CHUNK_THST, 0),
                              DDM_REPLY_TIMEOUT);
    /* later, a look asks both, and THEN goes to neither (the trickle's
     * budget, which such a look shares, free) */
    g_now += 2;
    fake_host_watch_begins(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    assert_int_equal(fake_host_n_pending(f->fh, vm2, THREADS_CHUNK_THST), 1);
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    p = thst_real(4, 18, 4, e, 4, &len);
    fake_host_complete_chunk(f->fh, (size_t)idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "4");
    assert_int_equal(fake_view_n_rows(threads_view(f)), 0); /* the count only */
    /* another look within threads.interval asks nothing new */
    g_now += 0.2;
    plugin_of(f->fh)->last_capped = 0; /* the budget free: threads.interval says no */
    fake_host_watch_begins(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    /* a wake with no watch change (a second `ddmon vms`) asks again (the
     * list was watched: at most the cap, the oldest, from the trickle's
     * budget, free here) */
    g_now += 2;
    threads_look_once(plugin_of(f->fh));
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    fake_host_complete_status(f->fh, (size_t)last_request(f->fh, f->vm, THREADS_CHUNK_THST),
                              DDM_REPLY_TIMEOUT);
    /* nobody watches the VM list: the timers' own runs ask nothing */
    fake_host_set_vm_list_watchers(f->fh, 0);
    g_now += 10;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    fake_host_set_vm_list_watchers(f->fh, 1);
    /* a VM whose view is watched gets THEN and one THST, from the poll tick */
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THEN), 1);
}

/* A wake of the look timer while the VM list is watched already (a
 * `ddmon vms` in a loop, any fresh watch or one-shot view) sends at most
 * THREADS_TRICKLE_MAX THSTs, to the oldest counts older than
 * threads.interval: no THST to every VM. Only a first look at the list
 * (from unwatched) asks every VM. */
static void test_look_while_watched_sends_the_cap(void **state)
{
    fixture *f = *state;
    enum { N = 40 };
    static char keys[N][32];
    ddm_vm *vms[N + 1];
    threads_plugin *pl = plugin_of(f->fh);
    int i, pending;

    vms[0] = f->vm;
    for (i = 1; i <= N; i++) {
        ddm_vm_info info = {.pid = 2000 + i, .ddm = 1, .user_id = -1, .native_debuggable = -1};
        snprintf(keys[i - 1], sizeof keys[i - 1], "127.0.0.1:%d", 9500 + i);
        info.key = keys[i - 1];
        vms[i] = fake_host_add_vm(f->fh, &info);
        fake_host_vm_event(f->fh, vms[i], DDM_VM_READY);
        fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, vms[i], THREADS_CHUNK_THST, 0),
                                  DDM_REPLY_TIMEOUT);
    }
    pl->last_trickle = 1e9; /* the tick's trickle is another test's */
    /* the list watched from the start: the first look asks every VM */
    g_now += 2;
    fake_host_set_vm_list_watchers(f->fh, 1);
    threads_look_once(pl);
    for (i = 0; i <= N; i++) {
        assert_int_equal(fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST), 1);
        fake_host_complete_status(f->fh, (size_t)last_request(f->fh, vms[i], THREADS_CHUNK_THST),
                                  DDM_REPLY_TIMEOUT);
    }
    count_of(f->fh, vms[7])->last_thst -= 1; /* the oldest count */
    /* 2 s later, still watched: a wake sends the cap, the oldest first */
    g_now += 2;
    threads_look_once(pl);
    pending = 0;
    for (i = 0; i <= N; i++)
        pending += fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST);
    assert_int_equal(pending, (int)THREADS_TRICKLE_MAX);
    assert_int_equal(fake_host_n_pending(f->fh, vms[7], THREADS_CHUNK_THST), 1);
    /* another wake within the period: nothing more (the wakes share the
     * trickle's budget: at most the cap a period, however many wakes) */
    g_now += 0.5;
    threads_look_once(pl);
    pending = 0;
    for (i = 0; i <= N; i++)
        pending += fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST);
    assert_int_equal(pending, (int)THREADS_TRICKLE_MAX);
    /* nor the tick's trickle, the counts made old enough for it */
    for (i = 0; i <= N; i++)
        count_of(f->fh, vms[i])->last_thst -= 10;
    pl->last_trickle = 0;
    assert_int_equal(threads_trickle_once(pl), 0);
    pl->last_trickle = 1e9;
    /* a period later: the rest (those in flight are not asked again) */
    g_now += 1;
    threads_look_once(pl);
    for (i = 0; i <= N; i++) {
        assert_int_equal(fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST), 1);
        fake_host_complete_status(f->fh, (size_t)last_request(f->fh, vms[i], THREADS_CHUNK_THST),
                                  DDM_REPLY_TIMEOUT);
    }
    /* nobody watches the list (the tick saw it), then a look: every VM */
    g_now += 2;
    fake_host_set_vm_list_watchers(f->fh, 0);
    threads_poll_once(pl);
    (void)threads_trickle_once(pl);
    fake_host_set_vm_list_watchers(f->fh, 1);
    threads_look_once(pl);
    for (i = 0; i <= N; i++)
        assert_int_equal(fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST), 1);
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
}

/* While the VM list is watched (the TUI, a live view, the web), the counts
 * of VMs nobody looks at are refreshed in a trickle: once a second, at most
 * THREADS_TRICKLE_MAX THSTs, oldest count first, none younger than
 * THREADS_TRICKLE_AGE_MS; nothing when nobody watches the list. */
static void test_trickle_while_list_watched(void **state)
{
    fixture *f = *state;
    enum { N = 40 };
    static char keys[N][32];
    ddm_vm *vms[N + 1];
    threads_plugin *pl = plugin_of(f->fh);
    int pending, i;

    vms[0] = f->vm;
    for (i = 1; i <= N; i++) {
        ddm_vm_info info = {.pid = 1000 + i, .ddm = 1, .user_id = -1, .native_debuggable = -1};
        snprintf(keys[i - 1], sizeof keys[i - 1], "127.0.0.1:%d", 9000 + i);
        info.key = keys[i - 1];
        vms[i] = fake_host_add_vm(f->fh, &info);
        fake_host_vm_event(f->fh, vms[i], DDM_VM_READY);
        fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, vms[i], THREADS_CHUNK_THST, 0),
                                  DDM_REPLY_TIMEOUT);
    }
    /* watched, the counts 3 s old: too young */
    g_now = 103.0;
    fake_host_set_vm_list_watchers(f->fh, 1);
    assert_int_equal(threads_trickle_once(pl), 0);
    count_of(f->fh, vms[N])->last_thst = 50.0; /* the oldest count */
    /* nobody watches the list: nothing, however old the counts */
    g_now = 106.0;
    fake_host_set_vm_list_watchers(f->fh, 0);
    assert_int_equal(threads_trickle_once(pl), 0);
    for (i = 0; i <= N; i++)
        assert_int_equal(fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST), 0);
    /* watched, 6 s old: the cap, the oldest among them */
    fake_host_set_vm_list_watchers(f->fh, 1);
    assert_int_equal(threads_trickle_once(pl), (int)THREADS_TRICKLE_MAX);
    assert_int_equal(fake_host_n_pending(f->fh, vms[N], THREADS_CHUNK_THST), 1);
    assert_int_equal(threads_trickle_once(pl), 0); /* once a second */
    g_now = 106.5;
    assert_int_equal(threads_trickle_once(pl), 0);
    /* a second later, the rest (those in flight are not asked again) */
    g_now = 107.0;
    assert_int_equal(threads_trickle_once(pl), N + 1 - (int)THREADS_TRICKLE_MAX);
    pending = 0;
    for (i = 0; i <= N; i++) {
        assert_int_equal(fake_host_n_pending(f->fh, vms[i], THREADS_CHUNK_THST), 1);
        pending++;
    }
    assert_int_equal(pending, N + 1);
    /* no THEN for any of them: counts only */
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
}

/* A THST sent after a THEN(1) whose table was dropped before its answer
 * came says nothing of a later THEN(1): its answer does not end that
 * THEN's wait (the VM answers in order: the stale one comes first). */
static void test_stale_then_thst_ends_no_later_then(void **state)
{
    fixture *f = *state;
    threads_vm *st = state_of(f->fh, f->vm);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}};
    int old_idx, new_idx;
    size_t len;
    uint8_t *p;

    assert_int_equal(st->then_in_flight, 1);
    assert_int_equal(threads_send_thst(st->pl, st->vm, &st->c), 0); /* after THEN(1), unanswered */
    old_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_true(old_idx >= 0);
    threads_table_off(st);
    threads_table_on(st); /* THEN(1) again, unanswered */
    assert_int_equal(st->then_in_flight, 1);
    assert_int_equal(threads_send_thst(st->pl, st->vm, &st->c), 0);
    new_idx = last_request(f->fh, f->vm, THREADS_CHUNK_THST);
    assert_true(new_idx > old_idx);
    p = thst_real(4, 18, 1, e, 1, &len);
    fake_host_complete_chunk(f->fh, (size_t)old_idx, THREADS_CHUNK_THST, p, len);
    assert_int_equal(st->then_in_flight, 1); /* the old answer: still waiting */
    fake_host_complete_chunk(f->fh, (size_t)new_idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(st->then_in_flight, 0); /* this THEN's */
}

/* The first look of a snapshot (every view watched) at a VM nobody
 * watched: the woken tick sends THEN(1) and then a THST, so the look waits
 * for both (the core waits for the requests a woken timer sends); on ART,
 * which never answers THEN, the THST's answer publishes the THCR burst
 * with names. When READY's THST is still in flight, a second THST goes
 * after THEN, and READY's answer (sent before THEN) does not end the wait. */
static void test_first_look_waits_for_the_burst(void **state)
{
    fixture *f = *state; /* setup_ready: READY's THST (0) in flight */
    ddm_view *v = threads_view(f);
    threads_vm *st = state_of(f->fh, f->vm);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}, {.id = 2, .status = 4, .tid = 78}};
    unsigned before;
    size_t len;
    uint8_t *p;
    int then_idx, thst_idx;

    fake_host_set_default_watchers(f->fh, 1); /* a snapshot watches everything */
    fake_host_watch_begins(f->fh);
    then_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0);
    thst_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_int_equal(then_idx, 1);
    assert_true(thst_idx > then_idx);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 2);
    /* READY's answer (a table without names) ends no wait */
    p = thst_real(4, 18, 2, e, 2, &len);
    fake_host_complete_chunk(f->fh, 0, THREADS_CHUNK_THST, p, len);
    assert_int_equal(st->then_in_flight, 1);
    before = fake_view_version(v);
    for (uint32_t id = 1; id <= 2; id++) { /* the burst: held */
        size_t nl;
        uint8_t *np = name_chunk(id, id == 1 ? "main" : "Signal Catcher", &nl);
        assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, np, nl), 0);
        free(np);
    }
    assert_int_equal(fake_view_version(v), before);
    /* THEN unanswered (ART); the THST after it is answered: all at once */
    fake_host_complete_chunk(f->fh, (size_t)thst_idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(st->then_in_flight, 0);
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    assert_string_equal(fake_view_cell_str(v, 1, "name"), "Signal Catcher");
    assert_int_equal(fake_view_cell_int(v, 1, "tid"), 78);
    assert_int_equal(fake_view_version(v), before + 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
}

/* A VM that becomes ready while its view is watched (an in-process
 * snapshot watches every view before discovery) gets THEN(1) and a THST at
 * READY, not just the count: the server counts it settled only after them. */
static void test_ready_while_watched(void **state)
{
    fixture *f = *state; /* loaded, not ready */
    int then_idx;
    load(f);
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    then_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0);
    assert_int_equal(then_idx, 0);
    assert_int_equal(fake_host_request(f->fh, 0)->data[0], 1);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 0), 1);
    assert_int_equal(fake_host_n_requests(f->fh), 2);
    assert_true(state_of(f->fh, f->vm)->full);
    fake_host_fire_timers(f->fh); /* nothing more before the interval */
    assert_int_equal(fake_host_n_requests(f->fh), 2);
}

/* /metrics: the samples exist while the table is kept (a scrape is a
 * look at every VM's threads view, so a scraped VM has its table); when it
 * goes, so do they (a VM nobody looks at holds none), and a look's THST
 * adds none. The CPU total comes back from where it was with the next
 * table: a counter never goes down. */
static void test_metrics_without_list(void **state)
{
    fixture *f = *state;
    threads_vm *st = state_of(f->fh, f->vm);
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100},
                      {.id = 2, .status = 4, .tid = 78, .utime = 5}};
    double v = -1;
    size_t len;
    uint8_t *p;
    int idx;
    /* while kept: two polls give CPU seconds */
    threads_table_on(st);
    g_now = 110.0;
    send_thst(f, e, 2);
    g_now = 111.0;
    e[0].utime = 200;
    send_thst(f, e, 2);
    assert_true(fake_host_metric(f->fh, f->vm, "thread_cpu_seconds_total", "running", &v));
    assert_float_equal(v, 1.0, 1e-12);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 2);
    threads_table_off(st);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 0);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "thread_cpu_seconds_total"), 0);
    /* a look's THST: three threads now, the count only */
    e[1].status = 3;
    g_now = 120.0;
    fake_host_set_vm_list_watchers(f->fh, 1); /* a look at the VM list */
    threads_look_once(plugin_of(f->fh));
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_true(idx > 0);
    {
        thst_entry e3[] = {e[0], e[1], {.id = 3, .status = 3}};
        p = thst_real(4, 18, 3, e3, 3, &len);
    }
    fake_host_complete_chunk(f->fh, (size_t)idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(st->list.n, 0);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    /* kept again: the counter goes on from 1 s (+100 ticks running) */
    threads_table_on(st);
    g_now = 121.0;
    send_thst(f, e, 2);
    g_now = 122.0;
    e[0].utime = 300;
    send_thst(f, e, 2);
    assert_true(fake_host_metric(f->fh, f->vm, "thread_cpu_seconds_total", "running", &v));
    assert_float_equal(v, 2.0, 1e-12);
    assert_true(fake_host_metric(f->fh, f->vm, "threads", "monitor", &v));
    assert_float_equal(v, 1, 0);
}

/* `ddmon stack` works for a VM nobody looks at (no list to check the id
 * against: the VM says whether the thread exists). */
static void test_stkl_unwatched_vm(void **state);

static void test_no_then_when_thcr_disabled(void **state)
{
    fixture *f = *state;
    fake_host_disable_chunk(f->fh, THREADS_CHUNK_THCR);
    load(f);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    assert_non_null(fake_view_find(f->fh, f->vm, "threads")); /* THST still feeds it */
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(state_of(f->fh, f->vm)->full);
    assert_int_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1); /* READY's */
}

/* --chunks names the events users want (THCR...), not the request that
 * turns them on: THEN goes out when THCR is enabled, listed or not. */
static void test_then_follows_thcr_not_its_own_name(void **state)
{
    fixture *f = *state;
    const uint32_t only[] = {THREADS_CHUNK_THCR, DDM_CHUNK('T', 'H', 'D', 'E'), DDM_CHUNK('T', 'H', 'S', 'T')};
    fake_host_only_chunks(f->fh, only, 3);
    load(f);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_int_not_equal(fake_host_find_request(f->fh, NULL, THREADS_CHUNK_THEN, 0), -1);
}

static void test_nothing_when_thread_types_disabled(void **state)
{
    fixture *f = *state;
    const uint32_t only[] = {DDM_CHUNK('H', 'P', 'I', 'F'), THREADS_CHUNK_THEN};
    fake_host_only_chunks(f->fh, only, 2);
    load(f);
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    assert_null(fake_view_find(f->fh, f->vm, "threads"));
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
}

/* --------------------------------------------------- THCR / THNM / THDE */

static void test_thcr_thnm_thde(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 5, "Signal Catcher"), DDM_OK);
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 1, "main"), DDM_OK);
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 9, "Binder:77_1"), DDM_OK);
    assert_int_equal(fake_view_n_rows(v), 3);
    /* sorted by id */
    assert_int_equal(fake_view_cell_int(v, 0, "id"), 1);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    assert_true(fake_view_cell_is_null(v, 0, "state"));
    assert_true(fake_view_cell_is_null(v, 0, "cpu"));
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
    /* rename */
    assert_int_equal(send_name(f, THREADS_CHUNK_THNM, 9, "worker \xe2\x98\x83"), DDM_OK);
    assert_string_equal(fake_view_cell_str(v, fake_view_find_row(v, "id", "9"), "name"),
                        "worker \xe2\x98\x83");
    /* THNM of an unknown thread adds it */
    assert_int_equal(send_name(f, THREADS_CHUNK_THNM, 12, "late"), DDM_OK);
    assert_int_equal(fake_view_n_rows(v), 4);
    /* removal */
    assert_int_equal(send_thde(f, 5), DDM_OK);
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_int_equal(fake_view_find_row(v, "id", "5"), -1);
    assert_int_equal(send_thde(f, 5), DDM_OK); /* unknown: harmless */
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
}

static void test_thcr_malformed(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    static const uint8_t past_end[] = {0, 0, 0, 1, 0, 0, 0, 50, 0, 'a', 0, 'b'};
    static const uint8_t seven[] = {0, 0, 0, 1, 0, 0, 0};
    static const uint8_t thde_short[] = {0, 0, 1};
    static const uint8_t huge_len[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 'a'};
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, past_end,
                                       sizeof past_end),
                     -EBADMSG);
    assert_true(fake_host_log_contains(f->fh, "name length 50 runs past the end"));
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THNM, DDM_ORIGIN_EVENT, seven,
                                       sizeof seven),
                     -EBADMSG);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, huge_len,
                                       sizeof huge_len),
                     -EBADMSG);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THDE, DDM_ORIGIN_EVENT,
                                       thde_short, sizeof thde_short),
                     -EBADMSG);
    assert_int_equal(fake_view_n_rows(v), 0);
}

static void test_thcr_empty_and_long_names(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    char *longname = malloc(3001);
    memset(longname, 'x', 3000);
    longname[3000] = '\0';
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 2, ""), DDM_OK);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "");
    assert_int_equal(send_name(f, THREADS_CHUNK_THCR, 3, longname), DDM_OK);
    assert_int_equal(strlen(fake_view_cell_str(v, 1, "name")), THREADS_NAME_MAX_UNITS);
    free(longname);
}

/* ---------------------------------------------------------------- THST */

static void test_thst_real_table(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {
        {.id = 1, .status = 1, .tid = 77, .utime = 150, .stime = 20, .daemon = 0},
        {.id = 2, .status = 4, .tid = 80, .utime = 3, .stime = 1, .daemon = 1},
        {.id = 3, .status = 42, .tid = 81},
    };
    send_name(f, THREADS_CHUNK_THCR, 1, "main");
    assert_int_equal(send_thst(f, e, 3), 0);
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    assert_string_equal(fake_view_cell_str(v, 0, "state"), "running");
    assert_int_equal(fake_view_cell_int(v, 0, "tid"), 77);
    assert_int_equal(fake_view_cell_int(v, 0, "utime"), 1500); /* 150 ticks at 100 Hz */
    assert_int_equal(fake_view_cell_int(v, 0, "stime"), 200);
    assert_string_equal(fake_view_cell_str(v, 0, "daemon"), "false");
    assert_true(fake_view_cell_is_null(v, 0, "cpu")); /* first poll */
    assert_true(fake_view_cell_is_null(v, 1, "name"));
    assert_string_equal(fake_view_cell_str(v, 1, "state"), "wait");
    assert_string_equal(fake_view_cell_str(v, 1, "daemon"), "true");
    assert_string_equal(fake_view_cell_str(v, 2, "state"), "state-42");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "3");
}

static void test_thst_state_names(void **state)
{
    static const char *const names[] = {"zombie", "running", "timed-wait", "monitor", "wait",
                                        "initializing", "starting", "native", "vmwait",
                                        "suspended"};
    char buf[16];
    unsigned i;
    (void)state;
    for (i = 0; i < 10; i++)
        assert_string_equal(threads_state_name(i, buf), names[i]);
    assert_string_equal(threads_state_name(10, buf), "state-10");
    assert_string_equal(threads_state_name(255, buf), "state-255");
}

static void test_thst_longer_header_and_entries(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {{.id = 7, .status = 2, .tid = 700, .utime = 10, .stime = 10},
                            {.id = 8, .status = 3, .tid = 800, .utime = 1, .stime = 2}};
    size_t len;
    uint8_t *p = thst_real(9, 25, 2, e, 2, &len);
    assert_int_equal(len, 9 + 2 * 25);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    threads_publish_soon(plugin_of(f->fh));
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_int_equal(fake_view_cell_int(v, 1, "id"), 8);
    assert_int_equal(fake_view_cell_int(v, 1, "tid"), 800);
    assert_string_equal(fake_view_cell_str(v, 0, "state"), "timed-wait");
    assert_string_equal(fake_view_cell_str(v, 1, "state"), "monitor");
}

static void test_thst_trailing_bytes_ignored(void **state)
{
    thst_table t;
    char why[128];
    const thst_entry e[] = {{.id = 1, .status = 1}};
    size_t len;
    uint8_t *p = thst_real(4, 18, 1, e, 1, &len);
    uint8_t *q = malloc(len + 3);
    (void)state;
    memcpy(q, p, len);
    memset(q + len, 0xAB, 3);
    assert_int_equal(threads_parse_thst(q, len + 3, &t, why, sizeof why), 0);
    assert_int_equal(t.form, THST_FORM_REAL);
    assert_int_equal(t.n, 1);
    threads_thst_clear(&t);
    free(p);
    free(q);
}

typedef struct bad_thst {
    const char *what;
    unsigned hl, bpe, count, present;
    const char *log;
} bad_thst;

static void test_thst_rejects(void **state)
{
    fixture *f = *state;
    static const bad_thst cases[] = {
        {"count 1000, bytes for 2", 4, 18, 1000, 2, "count says 1000 entries of 18 bytes"},
        {"header length 2", 2, 18, 1, 1, "header length 2 < 4"},
        {"header length 0", 0, 18, 1, 1, "header length 0 < 4"},
        {"entry length 17", 4, 17, 1, 1, "entry length 17 < 18"},
        {"header past end", 200, 18, 0, 0, "header length 200 runs past the end"},
    };
    const thst_entry e[2] = {{.id = 1, .status = 1}, {.id = 2, .status = 1}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_thst *c = &cases[i];
        size_t len;
        uint8_t *p;
        ddm_writer w;
        if (c->bpe >= 18) {
            p = thst_real(c->hl < 4 ? 4 : c->hl, c->bpe, c->count, e, c->present, &len);
            if (c->hl < 4)
                p[0] = (uint8_t)c->hl;
            if (c->hl == 200) { /* header claims 200 bytes, only 4 sent */
                free(p);
                ddm_writer_init(&w, 0);
                ddm_write_u1(&w, 200);
                ddm_write_u1(&w, 18);
                ddm_write_u2(&w, 0);
                p = ddm_writer_take(&w, &len);
            }
        } else {
            ddm_writer_init(&w, 0);
            ddm_write_u1(&w, (uint8_t)c->hl);
            ddm_write_u1(&w, (uint8_t)c->bpe);
            ddm_write_u2(&w, (uint16_t)c->count);
            ddm_writer_reserve(&w, c->bpe * c->present);
            memset(w.data + 4, 0, c->bpe * c->present);
            p = ddm_writer_take(&w, &len);
        }
        fake_host_log_clear(f->fh);
        assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, p, len),
                         -EBADMSG);
        if (!fake_host_log_contains(f->fh, c->log))
            fail_msg("case '%s': log lacks '%s': %s", c->what, c->log, fake_host_log_text(f->fh));
        free(p);
    }
    assert_int_equal(fake_view_n_rows(threads_view(f)), 0);
    /* too short for any header */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, "\4\22", 2),
                     -EBADMSG);
    assert_true(fake_host_log_contains(f->fh, "shorter than the 4-byte header"));
}

static void test_thst_draft_form(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    ddm_writer w;
    size_t len;
    uint8_t *p;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, 2);
    ddm_write_u4(&w, 1); /* id */
    ddm_write_u1(&w, 2); /* sleeping */
    ddm_write_u1(&w, 0);
    ddm_write_u4(&w, 3);
    ddm_write_u1(&w, 7); /* native */
    ddm_write_u1(&w, 1); /* suspended */
    p = ddm_writer_take(&w, &len);
    assert_int_equal(len, 16);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, p, len), 0);
    threads_publish_soon(plugin_of(f->fh));
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_string_equal(fake_view_cell_str(v, 0, "state"), "timed-wait");
    assert_string_equal(fake_view_cell_str(v, 1, "state"), "native (suspended)");
    assert_true(fake_view_cell_is_null(v, 0, "tid"));
    assert_true(fake_view_cell_is_null(v, 0, "utime"));
    assert_true(fake_view_cell_is_null(v, 0, "daemon"));
    assert_true(fake_view_cell_is_null(v, 0, "cpu"));
    /* one byte more and it is neither form */
    p = realloc(p, len + 1);
    p[len] = 0;
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT, p, len + 1),
                     -EBADMSG);
    free(p);
    /* an empty draft table is 4 zero bytes */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THST, DDM_ORIGIN_EVENT,
                                       "\0\0\0\0", 4), 0);
    threads_publish_soon(plugin_of(f->fh));
    assert_int_equal(fake_view_n_rows(v), 0);
}

static void test_thst_draft_heuristic_direct(void **state)
{
    thst_table t;
    char why[128];
    /* a valid real header is never read as draft, even if the length would fit */
    static const uint8_t real_empty[] = {4, 18, 0, 0};
    static const uint8_t draft_big[] = {0x00, 0x01, 0x00, 0x00}; /* count 65536 > cap */
    (void)state;
    assert_int_equal(threads_parse_thst(real_empty, 4, &t, why, sizeof why), 0);
    assert_int_equal(t.form, THST_FORM_REAL);
    assert_int_equal(t.n, 0);
    threads_thst_clear(&t);
    assert_int_equal(threads_parse_thst(draft_big, 4, &t, why, sizeof why), -EBADMSG);
}

static void test_thst_keeps_announced_drops_unannounced(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry both[] = {{.id = 1, .status = 1}, {.id = 2, .status = 1}};
    const thst_entry none[] = {{.id = 3, .status = 1}};
    send_name(f, THREADS_CHUNK_THCR, 1, "main");
    send_thst(f, both, 2);
    assert_int_equal(fake_view_n_rows(v), 2);
    send_thst(f, none, 1);
    /* 1 announced: kept without state; 2 only from THST: gone; 3 new */
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_true(fake_view_cell_is_null(v, fake_view_find_row(v, "id", "1"), "state"));
    assert_int_equal(fake_view_find_row(v, "id", "2"), -1);
    assert_true(fake_view_find_row(v, "id", "3") >= 0);
}

/* ------------------------------------------------------------- polling */

static void test_polls_only_while_watched(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}};
    size_t len;
    uint8_t *p;
    int idx;
    fake_host_complete_status(f->fh, 1, DDM_REPLY_EMPTY); /* THEN */
    fake_host_fire_timers(f->fh);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1), -1);
    fake_view_set_watchers(v, 1);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_true(idx >= 0);
    assert_int_equal(fake_host_request(f->fh, idx)->len, 0); /* empty THST request */
    /* one in flight at most */
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    p = thst_real(4, 18, 1, e, 1, &len);
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_THST, p, len);
    free(p);
    threads_publish_soon(plugin_of(f->fh));
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    /* not before the interval (1 s) has passed */
    g_now += 0.5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    g_now += 0.45; /* within half a tick of the interval: due */
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    /* a timeout clears the in-flight mark too */
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, (size_t)idx + 1);
    fake_host_complete_status(f->fh, idx, DDM_REPLY_TIMEOUT);
    /* nobody looks any more: no new request */
    fake_view_set_watchers(v, 0);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    /* a new watcher gets a table at once, without waiting for the interval */
    fake_view_set_watchers(v, 1);
    g_now += 0.01;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
}

/* ABI 1.5: the poll tick runs as soon as a watch begins (timer_wake_on_watch),
 * so a view nobody watched is asked for without waiting for the next tick;
 * a watch of nothing this plugin shows asks nothing. */
static void test_polls_when_a_watch_begins(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    fake_host_complete_status(f->fh, 1, DDM_REPLY_EMPTY); /* THEN */
    assert_int_equal(fake_host_watch_begins(f->fh), 2);  /* the poll tick and the look timer */
    assert_int_equal(fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1), -1);
    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_watch_begins(f->fh), 2);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
}

static void test_poll_fail_and_other_replies(void **state)
{
    fixture *f = *state;
    int idx;
    fake_view_set_watchers(threads_view(f), 3);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    fake_host_complete_fail(f->fh, idx, 1, "Can't build THST chunk");
    assert_true(fake_host_log_contains(f->fh, "Can't build THST chunk"));
    g_now += 1;
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, (size_t)idx + 1);
    fake_host_complete_status(f->fh, idx, DDM_REPLY_ERROR);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, (size_t)idx + 1);
    assert_true(idx >= 0);
    /* malformed table in a reply: rejected, logged */
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_THST, "\4\22\0\5", 4);
    assert_true(fake_host_log_contains(f->fh, "THST of 4 bytes rejected"));
    /* the VM goes away with a poll pending: nothing breaks */
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_null(fake_view_find(f->fh, f->vm, "threads"));
    fake_host_fire_timers(f->fh);
}

static void test_poll_two_vms(void **state)
{
    fixture *f = *state;
    ddm_vm_info info = {.pid = 88, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    ddm_vm *vm2 = fake_host_add_vm(f->fh, &info);
    fake_host_vm_event(f->fh, vm2, DDM_VM_READY);
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, vm2, THREADS_CHUNK_THST, 0),
                              DDM_REPLY_TIMEOUT); /* READY's */
    fake_view_set_watchers(fake_view_find(f->fh, vm2, "threads"), 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, vm2, THREADS_CHUNK_THST), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
    fake_host_vm_event(f->fh, vm2, DDM_VM_GONE);
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 1);
}

static void test_cpu_between_polls(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100, .stime = 0},
                      {.id = 2, .status = 4, .tid = 78, .utime = 5, .stime = 5}};
    g_now = 10.0;
    send_thst(f, e, 2);
    assert_true(fake_view_cell_is_null(v, 0, "cpu"));
    g_now = 12.0;
    e[0].utime = 150;
    e[0].stime = 50; /* +100 ticks = 1 s of CPU in 2 s */
    send_thst(f, e, 2);
    assert_float_equal(fake_view_cell_double(v, 0, "cpu"), 50.0, 1e-9);
    assert_float_equal(fake_view_cell_double(v, 1, "cpu"), 0.0, 1e-9);
    /* counters going backwards (tid reuse): no figure */
    g_now = 13.0;
    e[0].utime = 1;
    e[0].stime = 0;
    send_thst(f, e, 2);
    assert_true(fake_view_cell_is_null(v, 0, "cpu"));
    /* same wall time: no figure rather than a division by zero */
    send_thst(f, e, 2);
    assert_true(fake_view_cell_is_null(v, 0, "cpu"));
}

/* Metrics (ABI 1.3): threads by state (unknown: announced, in no THST
 * yet), and CPU seconds by the state a thread is in at each THST, which
 * only grow when threads change state or go. */
static double metric(fixture *f, const char *name, const char *label)
{
    double v = -1;
    if (!fake_host_metric(f->fh, f->vm, name, label, &v))
        return -1;
    return v;
}

static void test_metrics_by_state(void **state)
{
    fixture *f = *state;
    ddm_metric_family fam;
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100, .stime = 0},
                      {.id = 2, .status = 4, .tid = 78, .utime = 5, .stime = 5}};
    assert_true(fake_host_metric_family(f->fh, "threads", &fam));
    assert_string_equal(fam.label, "state");
    assert_string_equal(fam.view, "threads");
    assert_true(fake_host_metric_family(f->fh, "thread_cpu_seconds_total", &fam));
    assert_int_equal(fam.type, DDM_METRIC_COUNTER);
    assert_string_equal(fam.unit, "seconds");
    send_name(f, THREADS_CHUNK_THCR, 3, "announced");
    g_now = 10.0;
    send_thst(f, e, 2);
    assert_float_equal(metric(f, "threads", "running"), 1, 0);
    assert_float_equal(metric(f, "threads", "wait"), 1, 0);
    assert_float_equal(metric(f, "threads", "unknown"), 1, 0);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 3);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "thread_cpu_seconds_total"), 0);
    /* +100 ticks running, +20 ticks for thread 2, now blocked on a monitor */
    g_now = 11.0;
    e[0].utime = 200;
    e[1].status = 3;
    e[1].stime = 25;
    send_thst(f, e, 2);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "running"), 1.0, 1e-12);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "monitor"), 0.2, 1e-12);
    assert_float_equal(metric(f, "threads", "monitor"), 1, 0);
    assert_float_equal(metric(f, "threads", "wait"), -1, 0); /* no thread waits: no series */
    /* thread 1 waits now (+50 ticks), thread 2 went: the totals stay */
    g_now = 12.0;
    e[0].status = 4;
    e[0].utime = 250;
    send_thde(f, 2);
    send_thst(f, e, 1);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "running"), 1.0, 1e-12);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "monitor"), 0.2, 1e-12);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "wait"), 0.5, 1e-12);
    assert_float_equal(metric(f, "threads", "wait"), 1, 0);
    assert_float_equal(metric(f, "threads", "monitor"), -1, 0);
    /* the VM goes: its series go with it */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 0);
}

/* Issue 16: a table that goes takes the VM's threads_vm with it, unless
 * its threads used CPU between two tables: a counter must not go back, so
 * the totals (and the state that holds them) stay, and the next table
 * publishes them from where they were. */
static void test_cpu_totals_keep_the_state(void **state)
{
    fixture *f = *state; /* setup: the table kept, THEN(1) unanswered */
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100, .stime = 0}};
    g_now = 100.0;
    send_thst(f, e, 1);
    g_now = 101.0;
    send_thst(f, e, 1); /* no tick used */
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "thread_cpu_seconds_total"), 0);
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_null(found(f->fh, f->vm)); /* back to a count */
    assert_int_equal(count_of(f->fh, f->vm)->count, 1);

    fake_view_set_watchers(threads_view(f), 1); /* a scrape, a watch */
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    send_thst(f, e, 1);
    g_now += 1;
    e[0].utime = 200; /* +100 ticks running */
    send_thst(f, e, 1);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "running"), 1.0, 1e-12);
    fake_view_set_watchers(threads_view(f), 0);
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_false(kept(f->fh, f->vm));
    for (size_t i = 0; i < fake_host_n_requests(f->fh); i++) /* nothing left out */
        if (!fake_host_request(f->fh, i)->completed)
            fake_host_complete_status(f->fh, i, DDM_REPLY_TIMEOUT);
    assert_non_null(found(f->fh, f->vm)); /* the totals keep it */
    assert_int_equal(found(f->fh, f->vm)->then_thst_out, 0);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "thread_cpu_seconds_total"), 0);
    threads_table_on(state_of(f->fh, f->vm));
    send_thst(f, e, 1);
    assert_float_equal(metric(f, "thread_cpu_seconds_total", "running"), 1.0, 1e-12);
}

static void test_options_hz_and_interval(void **state)
{
    fixture *f = *state;
    ddm_view *v;
    thst_entry e[] = {{.id = 1, .status = 1, .utime = 1000, .stime = 0}};
    fake_host_set_config(f->fh, "threads.hz", "1000");
    fake_host_set_config(f->fh, "threads.interval", "250");
    load(f);
    assert_int_equal(fake_host_timer_interval(f->fh, 0), 250);
    assert_int_equal(plugin_of(f->fh)->interval_ms, 250);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    threads_table_on(state_of(f->fh, f->vm));
    v = threads_view(f);
    g_now = 1.0;
    send_thst(f, e, 1);
    assert_int_equal(fake_view_cell_int(v, 0, "utime"), 1000); /* 1000 ticks at 1000 Hz */
    g_now = 2.0;
    e[0].utime = 1500;
    send_thst(f, e, 1);
    assert_float_equal(fake_view_cell_double(v, 0, "cpu"), 50.0, 1e-9);
}

static void test_option_interval_off(void **state)
{
    fixture *f = *state;
    fake_host_set_config(f->fh, "threads.interval", "0");
    load(f);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    /* the tick still keeps a watched table (THEN), but polls nothing; no
     * look timer (it would only refresh counts) */
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    fake_host_complete_status(f->fh, 0, DDM_REPLY_TIMEOUT); /* READY's THST */
    fake_view_set_watchers(threads_view(f), 1);
    g_now += 5;
    fake_host_watch_begins(f->fh);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THEN), 1);
    assert_int_equal(fake_host_n_pending(f->fh, f->vm, THREADS_CHUNK_THST), 0);
}

static void test_option_bad_values(void **state)
{
    fixture *f = *state;
    fake_host_set_config(f->fh, "threads.interval", "soon");
    fake_host_set_config(f->fh, "threads.hz", "0");
    fake_host_set_config(f->fh, "threads.linger", "-3");
    load(f);
    assert_int_equal(plugin_of(f->fh)->interval_ms, THREADS_DEFAULT_INTERVAL_MS);
    assert_int_equal(plugin_of(f->fh)->hz, THREADS_DEFAULT_HZ);
    assert_int_equal(plugin_of(f->fh)->linger_ms, THREADS_DEFAULT_LINGER_MS);
    assert_true(fake_host_log_contains(f->fh, "option linger=-3"));
    assert_true(fake_host_log_contains(f->fh, "option interval=soon"));
    assert_true(fake_host_log_contains(f->fh, "option hz=0"));
}

static void test_option_interval_clamped(void **state)
{
    fixture *f = *state;
    fake_host_set_config(f->fh, "threads.interval", "10");
    load(f);
    assert_int_equal(plugin_of(f->fh)->interval_ms, THREADS_MIN_INTERVAL_MS);
    assert_int_equal(fake_host_timer_interval(f->fh, 0), THREADS_MIN_INTERVAL_MS);
}

/* --------------------------------------------------------------- limits */

static void test_thread_cap(void **state)
{
    fixture *f = *state;
    threads_vm *st = state_of(f->fh, f->vm);
    const thst_entry e[] = {{.id = 50, .status = 1}};
    uint32_t i;
    st->list.max = 3;
    for (i = 1; i <= 5; i++)
        assert_int_equal(send_name(f, THREADS_CHUNK_THCR, i, "t"), DDM_OK);
    assert_int_equal(fake_view_n_rows(threads_view(f)), 3);
    assert_true(fake_host_log_contains(f->fh, "more than 3 threads"));
    send_thst(f, e, 1);
    assert_int_equal(fake_view_find_row(threads_view(f), "id", "50"), -1);
}

/* The number of times @needle is in the captured log. */
static int log_occurrences(fixture *f, const char *needle)
{
    int n = 0;
    for (const char *p = fake_host_log_text(f->fh); (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* A watch of @f->vm's "threads" view that keeps its table, THEN(1) and the
 * THST after it answered (the latter with an empty table); the list's cap
 * then set to @max. */
static void watch_kept(fixture *f, size_t max)
{
    size_t from = fake_host_n_requests(f->fh);
    size_t len;
    uint8_t *p = thst_real(4, 18, 0, NULL, 0, &len);
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    assert_int_equal(answer_pending(f, from, THREADS_CHUNK_THEN, NULL, 0), 1);
    assert_int_equal(answer_pending(f, from, THREADS_CHUNK_THST, p, len), 1);
    free(p);
    found(f->fh, f->vm)->list.max = max;
}

/* "more than N threads" is logged once per VM (review rP 7), also when the
 * table goes and comes back (watch, linger, watch): the flag lives in the
 * VM's count, not in the state the linger frees. */
static void test_thread_cap_logged_once_per_vm(void **state)
{
    fixture *f = *state; /* setup_idle */
    uint32_t i;
    watch_kept(f, 3);
    for (i = 1; i <= 5; i++)
        assert_int_equal(send_name(f, THREADS_CHUNK_THCR, i, "t"), DDM_OK);
    assert_int_equal(log_occurrences(f, "more than 3 threads"), 1);
    fake_view_set_watchers(threads_view(f), 0);
    g_now += 11; /* threads.linger */
    fake_host_fire_timers(f->fh);
    assert_null(found(f->fh, f->vm)); /* back to a count */
    assert_int_equal(threads_vm_states_alive(), 0);
    assert_true(count_of(f->fh, f->vm)->full_logged);
    watch_kept(f, 3);
    for (i = 1; i <= 5; i++)
        assert_int_equal(send_name(f, THREADS_CHUNK_THCR, i, "t"), DDM_OK);
    assert_int_equal(fake_view_n_rows(threads_view(f)), 3);
    assert_int_equal(log_occurrences(f, "more than 3 threads"), 1);
}

/* A VM whose metrics the host keeps refusing is logged once, also when
 * the table goes and comes back: ddm_vm_metric_logged's flag lives in the
 * VM's count (metric_logged), not in the state the linger frees. */
static void test_metric_refused_logged_once_per_vm(void **state)
{
    fixture *f = *state; /* setup: the table kept, THEN(1) unanswered */
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100, .stime = 0}};
    int before;
    plugin_of(f->fh)->host = refusing_host_of(fake_host_table(f->fh));
    fake_host_log_clear(f->fh);
    g_now = 100.0;
    send_thst(f, e, 1);
    g_now = 101.0;
    send_thst(f, e, 1); /* no tick used: no CPU totals keep the state */
    g_now += 11;        /* threads.linger */
    fake_host_fire_timers(f->fh);
    assert_null(found(f->fh, f->vm)); /* back to a count */
    fake_view_set_watchers(threads_view(f), 1);
    fake_host_watch_begins(f->fh);
    assert_true(kept(f->fh, f->vm));
    before = refused_metrics;
    send_thst(f, e, 1); /* refused again, and not logged again */
    plugin_of(f->fh)->host = fake_host_table(f->fh);
    assert_true(refused_metrics > before);
    assert_int_equal(log_occurrences(f, "metric threads not set"), 1);
}

/* A burst of events (the THCR a VM sends after THEN) republishes a small
 * table once, at the next loop iteration (the zero-delay timer), not once
 * per event; a VM gone before that leaves nothing behind. */
static void test_small_table_published_once_per_burst(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    unsigned before = fake_view_version(v);
    ddm_vm_info info = {.pid = 89, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    ddm_vm *vm2 = fake_host_add_vm(f->fh, &info);
    uint32_t i;
    for (i = 1; i <= 14; i++) {
        size_t len;
        uint8_t *p = name_chunk(i, "t", &len);
        assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
        free(p);
    }
    assert_int_equal(fake_view_version(v), before); /* nothing yet */
    assert_int_equal(fake_view_n_rows(v), 0);
    fake_host_vm_event(f->fh, vm2, DDM_VM_READY);
    threads_table_on(state_of(f->fh, vm2));
    {
        size_t len;
        uint8_t *p = name_chunk(1, "gone soon", &len);
        assert_int_equal(fake_host_deliver(f->fh, vm2, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
        free(p);
    }
    fake_host_vm_event(f->fh, vm2, DDM_VM_GONE); /* pending: it leaves the list */
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_view_n_rows(v), 14);
    assert_int_equal(fake_view_version(v), before + 1); /* once for the 14 */
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "14");
    fake_host_fire_timers(f->fh); /* nothing changed: nothing published */
    assert_int_equal(fake_view_version(v), before + 1);
}

/* A VM published by another path while on the soon list (the 100 ms
 * flush's flush_vm, or the fallback when no timer could be added), then
 * changed again, was put on the list a second time; its GONE removed one
 * entry, and the soon timer published the freed state (heap use after
 * free under ASan). It is on the list once, and leaves it at GONE. */
static void test_soon_list_once_per_vm(void **state)
{
    fixture *f = *state;
    threads_plugin *pl = plugin_of(f->fh);
    threads_vm *st;
    ddm_vm_info info = {.pid = 90, .ddm = 1, .user_id = -1, .native_debuggable = -1};
    ddm_vm *vm2 = fake_host_add_vm(f->fh, &info);
    size_t len;
    uint8_t *p;

    fake_host_vm_event(f->fh, vm2, DDM_VM_READY);
    threads_table_on(state_of(f->fh, vm2));
    p = name_chunk(1, "a", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    assert_int_equal(fake_host_deliver(f->fh, vm2, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    st = threads_vm_state(pl, f->vm);
    threads_publish(st); /* what flush_vm does when the flush timer runs first */
    p = name_chunk(2, "b", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(pl->n_soon, 2); /* each VM once */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(pl->n_soon, 1);
    assert_ptr_equal(pl->soon[0], threads_vm_state(pl, vm2)); /* swapped into the slot */
    assert_int_equal(threads_vm_state(pl, vm2)->soon_slot, 1);
    fake_host_fire_timers(f->fh); /* publishes vm2 only, never the freed state */
    assert_int_equal(pl->n_soon, 0);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, vm2, "threads")), 1);
}

/* A poll's answer is published before the reply callback returns, and
 * so are THEN's burst when THEN is answered and a lone event: the server
 * may say "settled" as soon as it has handled them, and a snapshot then
 * reads the view (review of ef18821: the soon timer published them at
 * least 1 ms later, and snapshot-first-look.sh read the old table). Only
 * the events after the first of one loop iteration wait for the timer. */
static void test_replies_and_lone_events_published_at_once(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}, {.id = 2, .status = 1, .tid = 78}};
    unsigned before;
    size_t len;
    uint8_t *p;
    int idx, i;

    /* THEN's THCR come before its (Dalvik) answer: one publish, at the answer */
    before = fake_view_version(v);
    for (i = 1; i <= 3; i++) {
        p = name_chunk((uint32_t)i, "t", &len);
        assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
        free(p);
    }
    assert_int_equal(fake_view_version(v), before);
    fake_host_complete_status(f->fh, 1, DDM_REPLY_EMPTY); /* THEN */
    assert_int_equal(fake_view_n_rows(v), 3);
    assert_int_equal(fake_view_version(v), before + 1);
    fake_host_fire_timers(f->fh); /* the soon timer has nothing left */
    assert_int_equal(fake_view_version(v), before + 1);

    /* a poll's answer, at once */
    fake_view_set_watchers(v, 1);
    fake_host_fire_timers(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_true(idx >= 0);
    p = thst_real(4, 18, 2, e, 2, &len);
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(fake_view_n_rows(v), 3); /* 3 was announced: it stays, without stats */
    assert_int_equal(fake_view_cell_int(v, 1, "tid"), 78);
    fake_host_fire_timers(f->fh);

    /* a lone event at once; the next ones of the same iteration at the timer */
    before = fake_view_version(v);
    p = name_chunk(1, "main", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THNM, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(fake_view_version(v), before + 1);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    p = name_chunk(2, "worker", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THNM, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(fake_view_version(v), before + 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_view_version(v), before + 2);
    assert_string_equal(fake_view_cell_str(v, 1, "name"), "worker");
}

/* ART never answers THEN, so its burst once waited for the soon timer
 * (and a lone event after it too, then_in_flight staying set for THEN's
 * 5 s): the server could say "settled" before either was published. A VM
 * answers in order: the reply to a THST sent after THEN says THEN was
 * handled, so what is pending is published with it and the wait ends;
 * a STKL's reply does the same, and THEN's timeout at the latest. */
static void test_then_unanswered_ends_at_a_later_reply(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const thst_entry e[] = {{.id = 1, .status = 1, .tid = 77}};
    unsigned before;
    size_t len;
    uint8_t *p;
    int idx, then_idx, i;

    then_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0);
    assert_true(then_idx >= 0); /* left unanswered, as ART does */
    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_watch_begins(f->fh), 2); /* the poll tick sends THST */
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    assert_true(idx >= 0);
    before = fake_view_version(v);
    for (i = 1; i <= 3; i++) {
        p = name_chunk((uint32_t)i, "t", &len);
        assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
        free(p);
    }
    assert_int_equal(fake_view_version(v), before); /* THEN's burst: it waits */
    p = thst_real(4, 18, 1, e, 1, &len);
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_THST, p, len);
    free(p);
    assert_int_equal(fake_view_n_rows(v), 3); /* at once, no timer fired */
    assert_int_equal(fake_view_version(v), before + 1);
    assert_int_equal(state_of(f->fh, f->vm)->then_in_flight, 0);

    /* a lone event after it: at once */
    p = name_chunk(4, "lone", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(fake_view_n_rows(v), 4);
    assert_int_equal(fake_view_version(v), before + 2);

    /* THEN's timeout later changes nothing */
    fake_host_complete_status(f->fh, (size_t)then_idx, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_view_version(v), before + 2);
}

/* The same for a rejected THST reply and a STKL's reply; a timeout of
 * either is no reply and ends nothing; THEN's own timeout publishes. */
static void test_then_unanswered_other_replies(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    unsigned before;
    size_t len;
    uint8_t *p;
    int idx, then_idx;

    then_idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0);
    fake_view_set_watchers(v, 1);
    fake_host_watch_begins(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, 1);
    before = fake_view_version(v);
    p = name_chunk(1, "a", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_TIMEOUT); /* no reply: still waiting */
    assert_int_equal(fake_view_version(v), before);
    assert_int_equal(state_of(f->fh, f->vm)->then_in_flight, 1);
    g_now += 10;
    fake_host_watch_begins(f->fh);
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THST, (size_t)idx + 1);
    assert_true(idx >= 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, THREADS_CHUNK_THST, "\4\22\0\5", 4); /* rejected */
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_version(v), before + 1);
    assert_int_equal(state_of(f->fh, f->vm)->then_in_flight, 0);
    (void)then_idx;
}

static void test_then_unanswered_stkl_reply(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    const char *argv[] = {"stack", "77", "1"};
    unsigned before = fake_view_version(v);
    size_t len;
    uint8_t *p = name_chunk(1, "a", &len);
    int idx;

    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(fake_view_version(v), before);
    assert_non_null(fake_host_run_command(f->fh, 3, argv));
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_STKL, 0);
    assert_true(idx >= 0);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_version(v), before + 1);
    assert_int_equal(state_of(f->fh, f->vm)->then_in_flight, 0);
}

/* With nothing but THEN's timeout, the burst is published at it. */
static void test_then_timeout_publishes(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    unsigned before = fake_view_version(v);
    size_t len;
    uint8_t *p = name_chunk(1, "a", &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, THREADS_CHUNK_THCR, DDM_ORIGIN_EVENT, p, len), 0);
    free(p);
    assert_int_equal(fake_view_version(v), before);
    fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_THEN, 0),
                              DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_version(v), before + 1);
}

static void test_big_table_published_by_timer(void **state)
{
    fixture *f = *state;
    ddm_view *v = threads_view(f);
    unsigned before;
    uint32_t i;
    for (i = 1; i <= THREADS_PUBLISH_NOW_MAX + 10; i++)
        send_name(f, THREADS_CHUNK_THCR, i, "t");
    before = fake_view_version(v);
    assert_int_equal(fake_view_n_rows(v), THREADS_PUBLISH_NOW_MAX);
    assert_int_equal(fake_host_n_timers(f->fh), 4); /* poll, look, flush, the small tables' (idle) */
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_view_n_rows(v), THREADS_PUBLISH_NOW_MAX + 10);
    assert_int_equal(fake_view_version(v), before + 1);
    assert_int_equal(fake_host_n_timers(f->fh), 2);
}

/* Issue 15, fault 1: a valid THST of 65,535 threads in descending id order
 * once cost O(n^2) memmoves (5.8 s of the main loop). The list's work
 * counter (index probes, element moves, sort comparisons) must stay within
 * a small multiple of n log2 n for the table, a repeat of it, and a table
 * that drops half the threads: deterministic, no clock. The old sorted
 * array moved ~n^2/2 = 2.1e9 elements for the first table alone. */
static void test_thst_65535_descending_bounded_work(void **state)
{
    fixture *f = *state;
    threads_vm *st = state_of(f->fh, f->vm);
    const size_t n = THREADS_MAX;
    const uint64_t bound = 40u * n; /* n log2 n is 16 n here */
    thst_entry *e = calloc(n, sizeof *e);
    ddm_view *v;
    size_t i;
    uint64_t before;

    assert_non_null(e);
    for (i = 0; i < n; i++) {
        e[i].id = (uint32_t)(n - i);
        e[i].status = 1;
        e[i].tid = (uint32_t)(1000 + i);
    }
    st->list.ops = 0;
    assert_int_equal(send_thst(f, e, n), DDM_OK);
    fake_host_fire_timers(f->fh); /* the big-table publish (sorts) */
    v = threads_view(f);
    assert_int_equal(fake_view_n_rows(v), (int)n);
    assert_int_equal(fake_view_cell_int(v, 0, "id"), 1);
    assert_int_equal(fake_view_cell_int(v, (int)n - 1, "id"), (int64_t)n);
    assert_int_equal(fake_view_cell_int(v, 0, "tid"), (int64_t)(1000 + n - 1));
    assert_true(st->list.ops <= bound);

    before = st->list.ops; /* the same table again: every id found */
    assert_int_equal(send_thst(f, e, n), DDM_OK);
    fake_host_fire_timers(f->fh);
    assert_true(st->list.ops - before <= bound);

    before = st->list.ops; /* only the odd ids: the even ones go */
    for (i = 0; i < n / 2 + 1; i++)
        e[i].id = (uint32_t)(2 * i + 1);
    assert_int_equal(send_thst(f, e, n / 2 + 1), DDM_OK);
    fake_host_fire_timers(f->fh);
    assert_true(st->list.ops - before <= bound);
    assert_int_equal(fake_view_n_rows(v), (int)(n / 2 + 1));
    assert_int_equal(fake_view_cell_int(v, 1, "id"), 3);
    free(e);
}

/* The hashed index against a reference: random adds, names and removals
 * (THCR, THDE) in any order; every present id is found, no absent one is,
 * and the published table is in id order. */
/* A thread holds THST's figures only once a real-form THST lists it: an
 * idle VM's threads (THCR/THNM only, nobody watching) carry none, and a
 * draft-form table (no tid or times) adds none. */
static void test_thread_stats_only_with_thst(void **state)
{
    thread_list l;
    thst_entry e[] = {{.id = 1, .status = 1, .tid = 77, .utime = 100, .stime = 0}};
    thst_table real = {THST_FORM_REAL, 1, e}, draft = {THST_FORM_DRAFT, 1, e};
    (void)state;
    thread_list_init(&l);
    assert_non_null(thread_list_name(&l, 1, strdup("main")));
    assert_non_null(thread_list_name(&l, 2, strdup("idle")));
    assert_null(thread_list_find(&l, 1)->stats);
    assert_null(thread_list_find(&l, 2)->stats);
    assert_int_equal(thread_list_apply_thst(&l, &draft, 1.0, 100), 0);
    assert_null(thread_list_find(&l, 1)->stats);
    assert_int_equal(thread_list_apply_thst(&l, &real, 2.0, 100), 0);
    assert_non_null(thread_list_find(&l, 1)->stats);
    assert_int_equal(thread_list_find(&l, 1)->stats->tid, 77);
    assert_null(thread_list_find(&l, 2)->stats);
    e[0].utime = 200; /* +100 ticks in 1 s at 100 Hz: 100% */
    assert_int_equal(thread_list_apply_thst(&l, &real, 3.0, 100), 0);
    assert_true(thread_list_find(&l, 1)->has_cpu);
    assert_true(thread_list_find(&l, 1)->stats->cpu > 99.9 && thread_list_find(&l, 1)->stats->cpu < 100.1);
    thread_list_clear(&l); /* frees the stats (ASan: no leak) */
}

/* Thread names are shared by every list of the plugin (the apps of one
 * device name their threads alike): equal names are one copy, a rename
 * lets go of the old one, and the last holder frees it. */
static void test_thread_names_shared(void **state)
{
    thread_list a, b;
    char buf[32];
    size_t base = thread_names_shared();
    (void)state;
    thread_list_init(&a);
    thread_list_init(&b);
    assert_non_null(thread_list_name(&a, 1, strdup("main")));
    assert_non_null(thread_list_name(&b, 7, strdup("main")));
    assert_non_null(thread_list_name(&b, 8, strdup("Signal Catcher")));
    assert_ptr_equal(thread_list_find(&a, 1)->name, thread_list_find(&b, 7)->name);
    assert_string_equal(thread_list_find(&b, 8)->name, "Signal Catcher");
    assert_int_equal(thread_names_shared(), base + 2);
    assert_non_null(thread_list_name(&a, 1, strdup("renamed"))); /* THNM */
    assert_string_equal(thread_list_find(&a, 1)->name, "renamed");
    assert_string_equal(thread_list_find(&b, 7)->name, "main");
    assert_int_equal(thread_names_shared(), base + 3);
    /* many distinct names: each found again, the table grows */
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "Binder:%u_1", i);
        assert_non_null(thread_list_name(&a, 100 + i, strdup(buf)));
    }
    for (uint32_t i = 0; i < 5000; i += 499) {
        snprintf(buf, sizeof buf, "Binder:%u_1", i);
        assert_string_equal(thread_list_find(&a, 100 + i)->name, buf);
    }
    assert_true(thread_names_shared() <= base + 3 + 5000);
    thread_list_clear(&a);
    assert_int_equal(thread_names_shared(), base + 2);
    thread_list_clear(&b); /* the last holders: ASan sees no leak */
    assert_int_equal(thread_names_shared(), base);
}

static void test_thread_list_index_matches_reference(void **state)
{
    thread_list l;
    static unsigned char present[4096];
    unsigned seed = 12345, step, id, count = 0, last;
    size_t i;
    (void)state;
    thread_list_init(&l);
    memset(present, 0, sizeof present);
    for (step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        id = (seed >> 8) % 4096;
        if ((seed >> 4) % 3 == 0) {
            assert_int_equal(thread_list_remove(&l, id), present[id]);
            count -= present[id];
            present[id] = 0;
        } else {
            thread_info *t = thread_list_get(&l, id);
            assert_non_null(t);
            assert_int_equal(t->id, id);
            count += !present[id];
            present[id] = 1;
        }
        if (step % 997 == 0) {
            for (id = 0; id < 4096; id++)
                assert_int_equal(thread_list_find(&l, id) != NULL, present[id]);
            assert_int_equal(l.n, count);
            thread_list_sort(&l);
            for (i = 1, last = l.n ? l.v[0].id : 0; i < l.n; i++) {
                assert_true(l.v[i].id > last);
                last = l.v[i].id;
            }
        }
    }
    thread_list_clear(&l);
}

/* ---------------------------------------------------------------- STKL */

static uint8_t *stkl_payload(uint32_t tid, size_t *len)
{
    ddm_writer w;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, tid);
    ddm_write_u4(&w, 3);
    ddm_write_lstr(&w, "java.lang.Object");
    ddm_write_lstr(&w, "wait");
    ddm_write_lstr(&w, "");
    ddm_write_u4(&w, (uint32_t)-2);
    ddm_write_lstr(&w, "com.example.Worker");
    ddm_write_lstr(&w, "run");
    ddm_write_lstr(&w, "Worker.java");
    ddm_write_u4(&w, 42);
    ddm_write_lstr(&w, "java.lang.Thread");
    ddm_write_lstr(&w, "run");
    ddm_write_lstr(&w, "Thread.java");
    ddm_write_u4(&w, (uint32_t)-1);
    return ddm_writer_take(&w, len);
}

static ddm_cmd *run_stack(fixture *f, const char *vm, const char *tid)
{
    const char *argv[] = {"stack", vm, tid};
    ddm_cmd *cmd = fake_host_run_command(f->fh, 3, argv);
    assert_non_null(cmd);
    return cmd;
}

static void test_stkl_success(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd;
    ddm_view *res, *sv;
    size_t len;
    uint8_t *p;
    int idx;
    send_name(f, THREADS_CHUNK_THCR, 9, "worker");
    cmd = run_stack(f, "77", "9");
    assert_false(fake_cmd_finished(cmd));
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_STKL, 0);
    assert_true(idx >= 0);
    assert_int_equal(fake_host_request(f->fh, idx)->len, 4);
    assert_memory_equal(fake_host_request(f->fh, idx)->data, "\0\0\0\x09", 4);
    p = stkl_payload(9, &len);
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_STKL, p, len);
    free(p);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_string_equal(fake_cmd_message(cmd), "thread 9: 3 frames");
    res = fake_cmd_result(cmd);
    assert_non_null(res);
    assert_int_equal(fake_view_n_rows(res), 3);
    assert_string_equal(fake_view_cell_str(res, 0, "class"), "java.lang.Object");
    /* line is a number (null when unknown), native says a native method's frame */
    assert_true(fake_view_cell_is_null(res, 0, "line"));
    assert_int_equal(fake_view_cell_int(res, 0, "native"), 1);
    assert_true(fake_view_cell_is_null(res, 0, "file"));
    assert_string_equal(fake_view_cell_str(res, 1, "method"), "run");
    assert_string_equal(fake_view_cell_str(res, 1, "file"), "Worker.java");
    assert_int_equal(fake_view_cell_int(res, 1, "line"), 42);
    assert_int_equal(fake_view_cell_int(res, 1, "native"), 0);
    assert_true(fake_view_cell_is_null(res, 2, "line"));
    assert_int_equal(fake_view_cell_int(res, 2, "native"), 0);
    assert_int_equal(fake_view_cell_int(res, 2, "frame"), 2);
    sv = fake_view_find(f->fh, f->vm, "stack");
    assert_non_null(sv);
    assert_int_equal(fake_view_n_rows(sv), 3);
    assert_int_equal(fake_view_cell_int(sv, 0, "thread"), 9);
    /* a second stack replaces the view's content */
    cmd = run_stack(f, "app", "0x9");
    idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_STKL, (size_t)idx + 1);
    fake_host_complete_chunk(f->fh, idx, THREADS_CHUNK_STKL, "\0\0\0\0\0\0\0\x09\0\0\0\0", 12);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_n_rows(sv), 0);
    assert_int_equal(fake_view_version(sv), 2);
}

static void test_stkl_fail_timeout_empty(void **state)
{
    fixture *f = *state;
    ddm_cmd *cmd = run_stack(f, "77", "1");
    fake_host_complete_fail(f->fh, 2, 1, "Stack trace unavailable");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "Stack trace unavailable"));
    cmd = run_stack(f, "77", "1");
    fake_host_complete_status(f->fh, 3, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "timeout"));
    cmd = run_stack(f, "77", "1");
    fake_host_complete_status(f->fh, 4, DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    cmd = run_stack(f, "77", "1");
    fake_host_complete_status(f->fh, 5, DDM_REPLY_ERROR);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    cmd = run_stack(f, "77", "1");
    fake_host_complete_chunk(f->fh, 6, DDM_CHUNK('H', 'P', 'I', 'F'), NULL, 0);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    cmd = run_stack(f, "77", "1");
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_null(fake_view_find(f->fh, f->vm, "stack"));
}

static void test_stkl_malformed(void **state)
{
    fixture *f = *state;
    static const uint8_t huge_count[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x03, 0xE8, /* 1000 */
                                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t short_hdr[] = {0, 0, 0, 0, 0, 0};
    size_t len;
    uint8_t *p = stkl_payload(1, &len);
    ddm_cmd *cmd = run_stack(f, "77", "1");
    fake_host_complete_chunk(f->fh, 2, THREADS_CHUNK_STKL, huge_count, sizeof huge_count);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "frame count 1000"));
    cmd = run_stack(f, "77", "1");
    fake_host_complete_chunk(f->fh, 3, THREADS_CHUNK_STKL, short_hdr, sizeof short_hdr);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    /* the last frame cut short (its line missing) */
    cmd = run_stack(f, "77", "1");
    fake_host_complete_chunk(f->fh, 4, THREADS_CHUNK_STKL, p, len - 2);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "frame 2 of 3 is truncated"));
    free(p);
    assert_null(fake_view_find(f->fh, f->vm, "stack"));
}

static void test_stkl_parser_lstr_past_end(void **state)
{
    stkl_trace t;
    char why[128];
    ddm_writer w;
    size_t len;
    uint8_t *p;
    (void)state;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, 4);
    ddm_write_u4(&w, 1);
    ddm_write_u4(&w, 0x40000000u); /* class name length far past the end */
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, 0);
    p = ddm_writer_take(&w, &len);
    assert_int_equal(threads_parse_stkl(p, len, &t, why, sizeof why), -EBADMSG);
    assert_null(t.frames);
    free(p);
}

static void test_stack_command_errors(void **state)
{
    fixture *f = *state;
    const char *two[] = {"stack", "77"};
    ddm_cmd *cmd;
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, two)), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run_stack(f, "77", "abc")), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run_stack(f, "77", "-1")), DDM_CMD_USAGE);
    assert_int_equal(fake_cmd_status(run_stack(f, "77", "99999999999")), DDM_CMD_USAGE);
    cmd = run_stack(f, "4242", "1");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_string_equal(fake_cmd_message(cmd), "no VM matches '4242' (try 'ddmon vms')"); /* the core's */
    send_name(f, THREADS_CHUNK_THCR, 1, "main");
    cmd = run_stack(f, "77", "2");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
    assert_non_null(strstr(fake_cmd_message(cmd), "no thread 2"));
    /* The host refuses the request (-EPERM: its type is disabled). */
    fake_host_set_request_error(f->fh, -EPERM);
    cmd = run_stack(f, "77", "1");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "disabled"));
    fake_host_set_request_error(f->fh, 0);
}

static void test_stkl_unwatched_vm(void **state)
{
    fixture *f = *state; /* setup_idle */
    ddm_cmd *cmd = run_stack(f, "77", "9");
    int idx = fake_host_find_request(f->fh, f->vm, THREADS_CHUNK_STKL, 0);
    size_t len;
    uint8_t *p = stkl_payload(9, &len);
    assert_true(idx > 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, THREADS_CHUNK_STKL, p, len);
    free(p);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_n_rows(fake_cmd_result(cmd)), 3);
    assert_false(state_of(f->fh, f->vm)->full);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TI(fn) cmocka_unit_test_setup_teardown(fn, setup_idle, teardown)
#define TR(fn) cmocka_unit_test_setup_teardown(fn, setup_ready, teardown)
#define TU(fn) cmocka_unit_test_setup_teardown(fn, setup_unloaded, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_registration),
        TR(test_ready_sends_thst_not_then),
        TI(test_table_kept_while_watched),
        TU(test_option_linger),
        TI(test_view_made_only_when_asked),
        TI(test_idle_tick_sleeps),
        TR(test_idle_vm_holds_a_count_only),
        TI(test_look_refreshes_counts),
        TI(test_look_while_watched_sends_the_cap),
        TI(test_trickle_while_list_watched),
        T(test_stale_then_thst_ends_no_later_then),
        TR(test_first_look_waits_for_the_burst),
        TU(test_ready_while_watched),
        TI(test_metrics_without_list),
        TI(test_stkl_unwatched_vm),
        TU(test_no_then_when_thcr_disabled),
        TU(test_then_follows_thcr_not_its_own_name),
        TU(test_nothing_when_thread_types_disabled),
        T(test_thcr_thnm_thde),
        T(test_thcr_malformed),
        T(test_thcr_empty_and_long_names),
        T(test_thst_real_table),
        cmocka_unit_test(test_thst_state_names),
        T(test_thst_longer_header_and_entries),
        cmocka_unit_test(test_thst_trailing_bytes_ignored),
        TI(test_thst_rejects),
        T(test_thst_draft_form),
        cmocka_unit_test(test_thst_draft_heuristic_direct),
        T(test_thst_keeps_announced_drops_unannounced),
        T(test_polls_only_while_watched),
        T(test_polls_when_a_watch_begins),
        T(test_poll_fail_and_other_replies),
        T(test_poll_two_vms),
        T(test_cpu_between_polls),
        T(test_metrics_by_state),
        T(test_cpu_totals_keep_the_state),
        TU(test_options_hz_and_interval),
        TU(test_option_interval_off),
        TU(test_option_bad_values),
        TU(test_option_interval_clamped),
        T(test_thread_cap),
        TI(test_thread_cap_logged_once_per_vm),
        T(test_metric_refused_logged_once_per_vm),
        T(test_small_table_published_once_per_burst),
        T(test_soon_list_once_per_vm),
        T(test_replies_and_lone_events_published_at_once),
        T(test_then_unanswered_ends_at_a_later_reply),
        T(test_then_unanswered_other_replies),
        T(test_then_unanswered_stkl_reply),
        T(test_then_timeout_publishes),
        T(test_big_table_published_by_timer),
        T(test_thst_65535_descending_bounded_work),
        cmocka_unit_test(test_thread_stats_only_with_thst),
        cmocka_unit_test(test_thread_names_shared),
        cmocka_unit_test(test_thread_list_index_matches_reference),
        T(test_stkl_success),
        T(test_stkl_fail_timeout_empty),
        T(test_stkl_malformed),
        cmocka_unit_test(test_stkl_parser_lstr_past_end),
        T(test_stack_command_errors),
    };
    return cmocka_run_group_tests_name("plugin-threads", tests, NULL, NULL);
}
