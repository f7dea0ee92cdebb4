/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the heap plugin through the fake host: collection switched
 * on only while a heap view is watched (HPIF now + every GC, HPSG) and off
 * again after heap.grace_ms, heap.always=1 switching it on at READY (none
 * of it for disabled chunk types), HPIF parsing (truncated,
 * oversized counts), segment updates (the reject rule with the rest kept,
 * out-of-order pieces, two heaps at once, HPST without HPEN and HPEN
 * without HPST, partial runs), the views, and the commands heap-bitmap
 * (the PNG is decoded back with libpng and checked; on a VM nobody
 * watched it asks for a GC itself; a FIFO at FILE is refused) and
 * heap-info.
 */
#ifdef HAVE_CONFIG_H
#include "build-config.h"
#endif

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef HAVE_LIBPNG
#include <png.h>
#endif

#include <ddmon/bytes.h>

#include <ddmon/testkit.h>
#include "plugins/heap/bitmap_png.h"
#include "plugins/heap/heap.h"
#include "refusing-host.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

#define HPIF HEAP_CHUNK_HPIF
#define HPSG HEAP_CHUNK_HPSG
#define HPSO HEAP_CHUNK_HPSO
#define HPST HEAP_CHUNK_HPST
#define HPEN HEAP_CHUNK_HPEN
#define HPGC HEAP_CHUNK_HPGC

#define ST(kind, sol) ((uint8_t)(((kind) << 3) | (sol)))
#define PARTIAL 0x80

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
} fixture;

static double g_now;

static double fake_now(void)
{
    return g_now;
}

/* 2023-11-14 22:13:20 UTC (TZ is UTC in main). */
#define FAKE_WALL_MS 1700000000000ll

static int64_t fake_wall_ms(void)
{
    return FAKE_WALL_MS;
}

static heap_plugin *plugin_of(fake_host *fh)
{
    return fake_host_table(fh)->get_data(fake_host_plugin(fh));
}

/* A host with the plugin loaded, options applied, and one ready VM (pid 42),
 * its clock at 100 s. Nobody watches its views unless @before_ready says so. */
static fixture *setup_with(const char *const *opts, void (*before_ready)(fake_host *))
{
    fixture *f = calloc(1, sizeof(*f));
    size_t i;
    assert_non_null(f);
    f->fh = fake_host_new();
    for (i = 0; opts && opts[i]; i += 2)
        fake_host_set_config(f->fh, opts[i], opts[i + 1]);
    if (before_ready)
        before_ready(f->fh);
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    plugin_of(f->fh)->now = fake_now;
    plugin_of(f->fh)->wall_ms = fake_wall_ms;
    g_now = 100.0;
    f->vm = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 42, .ddm = 1, .user_id = -1, .key = "127.0.0.1:8042",
                                                    .app_name = "app" });
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    return f;
}

static int setup(void **state)
{
    *state = setup_with(NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_host_free(f->fh);
    free(f);
    return 0;
}

/* ---------------------------------------------------------------- builders */

static void send_u4(fixture *f, uint32_t type, uint32_t v, int want)
{
    uint8_t b[4];
    ddm_put_u4(b, v);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, b, 4), want);
}

/* Send a piece of @heap at @start+@offset with @units declared and the given pairs. */
static int send_piece(fixture *f, uint32_t type, uint32_t heap, uint32_t start,
                      uint32_t offset, uint32_t units, const uint8_t *pairs, size_t pair_bytes)
{
    ddm_writer w;
    uint8_t *buf;
    size_t len;
    int rc;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, heap);
    ddm_write_u1(&w, 8);
    ddm_write_u4(&w, start);
    ddm_write_u4(&w, offset);
    ddm_write_u4(&w, units);
    ddm_write_bytes(&w, pairs, pair_bytes);
    buf = ddm_writer_take(&w, &len);
    assert_non_null(buf);
    rc = fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, buf, len);
    free(buf);
    return rc;
}

/* An HPIF payload (caller frees) of @n heaps of @declared, @extra_bytes trailing. */
static uint8_t *build_hpif(uint32_t declared, size_t n, const uint32_t *ids, uint32_t size,
                           uint32_t alloc, size_t extra_bytes, size_t *len)
{
    ddm_writer w;
    uint8_t *buf;
    size_t i;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, declared);
    for (i = 0; i < n; i++) {
        ddm_write_u4(&w, ids[i]);
        ddm_write_u8(&w, 1700000000000ull + i);
        ddm_write_u1(&w, 3);
        ddm_write_u4(&w, 64u << 20);
        ddm_write_u4(&w, size);
        ddm_write_u4(&w, alloc);
        ddm_write_u4(&w, 1000 + (uint32_t)i);
    }
    for (i = 0; i < extra_bytes; i++)
        ddm_write_u1(&w, 0xEE);
    buf = ddm_writer_take(&w, len);
    assert_non_null(buf);
    return buf;
}

static void send_hpif(fixture *f, uint32_t declared, size_t n, const uint32_t *ids,
                      uint32_t size, uint32_t alloc, size_t extra_bytes)
{
    size_t len;
    uint8_t *buf = build_hpif(declared, n, ids, size, alloc, extra_bytes, &len);
    assert_int_equal(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, buf, len), DDM_OK);
    free(buf);
}

static int row_of(ddm_view *v, uint32_t heap, const char *kind)
{
    int r;
    for (r = 0; r < fake_view_n_rows(v); r++)
        if (fake_view_cell_int(v, r, "heap") == heap &&
            !strcmp(fake_view_cell_str(v, r, "kind"), kind))
            return r;
    return -1;
}

static int64_t seg_cell(fixture *f, uint32_t heap, const char *kind, const char *col)
{
    ddm_view *v = fake_view_find(f->fh, f->vm, "heap.segments");
    int r;
    assert_non_null(v);
    r = row_of(v, heap, kind);
    assert_true(r >= 0);
    return fake_view_cell_int(v, r, col);
}

static int frag_row(fixture *f, uint32_t heap)
{
    ddm_view *v = fake_view_find(f->fh, f->vm, "heap.fragmentation");
    char id[16];
    assert_non_null(v);
    snprintf(id, sizeof id, "%u", heap);
    return fake_view_find_row(v, "heap", id);
}

/* The standard piece A: 4 objects units, 2 free, 300-unit byte array (partial) = 306 units. */
static const uint8_t piece_a[] = {
    ST(0, 1), 3, ST(0, 0), 1, PARTIAL | ST(2, 1), 255, ST(2, 1), 43,
};
#define PIECE_A_UNITS 306
/* Piece B: 10 free, 1 class object = 11 units. */
static const uint8_t piece_b[] = { ST(0, 0), 9, ST(1, 1), 0 };
#define PIECE_B_UNITS 11

/* ------------------------------------------------------------------- tests */

/* Request @idx is @type with payload @b0 (and @b1 when @len is 2). */
static void assert_request(fixture *f, int idx, uint32_t type, size_t len, uint8_t b0, uint8_t b1)
{
    const fake_request *rq = fake_host_request(f->fh, (size_t)idx);
    assert_non_null(rq);
    assert_ptr_equal(rq->vm, f->vm);
    assert_int_equal(rq->type, type);
    assert_int_equal(rq->len, len);
    assert_int_equal(rq->data[0], b0);
    if (len > 1)
        assert_int_equal(rq->data[1], b1);
}

/* The "on" requests from index @from: HPIF now, HPIF every GC, HPSG(1, 0). */
static void assert_on_requests(fixture *f, size_t from)
{
    assert_int_equal(fake_host_n_requests(f->fh), from + 3);
    assert_request(f, (int)from, HPIF, 1, 1, 0);
    assert_request(f, (int)from + 1, HPIF, 1, 3, 0);
    assert_request(f, (int)from + 2, HPSG, 2, 1, 0);
}

static void watch_all(fake_host *fh) { fake_host_set_default_watchers(fh, 1); }

static void test_unwatched_sends_nothing(void **state)
{
    fixture *f = *state;
    int i;
    /* the plugin is there: chunk types, views, commands, one tick timer */
    assert_true(fake_host_owns(f->fh, HPIF));
    assert_true(fake_host_owns(f->fh, HPST));
    assert_true(fake_host_owns(f->fh, HPSG));
    assert_true(fake_host_owns(f->fh, HPSO));
    assert_true(fake_host_owns(f->fh, HPEN));
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.segments"));
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.histogram"));
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.fragmentation"));
    assert_true(fake_host_has_command(f->fh, "heap-bitmap"));
    assert_true(fake_host_has_command(f->fh, "heap-info"));
    assert_false(fake_host_has_command(f->fh, "gc"));
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_interval(f->fh, 0), HEAP_WATCH_TICK_MS);
    /* nobody looks: no HPIF, no HPSG, however long */
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    for (i = 0; i < 20; i++) {
        g_now += 1.0;
        fake_host_fire_timers(f->fh);
    }
    assert_int_equal(fake_host_n_requests(f->fh), 0);
}

static void test_watched_requests(void **state)
{
    fixture *f = *state;
    ddm_view *summary = fake_view_find(f->fh, f->vm, "heap.summary");
    /* a watcher: at the next tick HPIF "now" (fresh at once), HPIF "every
     * GC", HPSG(every GC, merged) */
    fake_view_set_watchers(summary, 1);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 0);
    /* still watched: nothing more */
    g_now += 30;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    /* the replies end quietly; a FAIL is logged */
    fake_host_complete_status(f->fh, 0, DDM_REPLY_EMPTY);
    fake_host_complete_fail(f->fh, 2, 1, "Unsupported");
    assert_true(fake_host_log_contains(f->fh, "Unsupported"));
}

/* heap.map: the default heap's ranges by kind (the PNG legend's names and
 * colours), touching runs of one kind merged, gaps left out; built only
 * while watched (at HPEN, or at the tick for a watcher that came later);
 * past HEAP_MAP_MAX_ROWS ranges, coarse granules keep it bounded. */
static void test_heap_map(void **state)
{
    fixture *f = *state;
    ddm_view *map = fake_view_find(f->fh, f->vm, "heap.map");
    /* data object 2 units, then 3 more (merged), free 2, class object 1 */
    static const uint8_t pc[] = { ST(0, 1), 1, ST(0, 1), 2, ST(0, 0), 1, ST(1, 1), 0 };
    int r;

    assert_non_null(map);
    assert_string_equal(fake_view_col_unit(map, "addr"), "addr");
    assert_string_equal(fake_view_col_unit(map, "length"), "B");
    assert_int_equal(fake_view_col_type(map, "kind"), DDM_VAL_STR);

    /* nobody watches: nothing built */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x20000, 0, 8, pc, sizeof pc), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(map), 0);

    /* a watcher after the update: the next tick builds it from that update */
    fake_view_set_watchers(map, 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_view_version(map), 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_view_version(map), 1); /* the same update: not again */
    assert_int_equal(fake_view_n_rows(map), 6);
    static const struct { int64_t addr, len; const char *kind, *color; } want[] = {
        { 0x10000, 32, "data object", "#0000ff" },
        { 0x10020, 16, "free", "#000000" },
        { 0x10030, 2400, "1-byte array (byte[], boolean[])", "#ff0000" },
        { 0x20000, 40, "data object", "#0000ff" },  /* two runs, one row */
        { 0x20028, 16, "free", "#000000" },
        { 0x20038, 8, "class object", "#00ff00" },
    };
    for (r = 0; r < 6; r++) {
        assert_int_equal(fake_view_cell_int(map, r, "heap"), 1);
        assert_int_equal(fake_view_cell_int(map, r, "addr"), want[r].addr);
        assert_int_equal(fake_view_cell_int(map, r, "length"), want[r].len);
        assert_string_equal(fake_view_cell_str(map, r, "kind"), want[r].kind);
        assert_string_equal(fake_view_cell_str(map, r, "color"), want[r].color);
    }

    /* watched: the next update is built at its HPEN */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(map), 2);
    assert_int_equal(fake_view_n_rows(map), 2);
    assert_string_equal(fake_view_cell_str(map, 1, "kind"), "class object");
    assert_int_equal(fake_view_cell_int(map, 1, "addr"), 0x10000 + 80);

    /* many alternating runs: at most HEAP_MAP_MAX_ROWS rows, still in
     * address order, covering the heap from its start to its end */
    {
        enum { N = 20000 };
        uint8_t *many = malloc(2 * N);
        int64_t prev = -1, total = 0;
        assert_non_null(many);
        for (r = 0; r < N; r++) {
            many[2 * r] = r % 2 ? ST(0, 0) : ST(r % 4 ? 1 : 0, 1);
            many[2 * r + 1] = 0;
        }
        send_u4(f, HPST, 1, DDM_OK);
        assert_int_equal(send_piece(f, HPSG, 1, 0x100000, 0, N, many, 2 * N), DDM_OK);
        send_u4(f, HPEN, 1, DDM_OK);
        free(many);
        assert_true(fake_view_n_rows(map) > 0);
        assert_true(fake_view_n_rows(map) <= (int)HEAP_MAP_MAX_ROWS);
        for (r = 0; r < fake_view_n_rows(map); r++) {
            int64_t a = fake_view_cell_int(map, r, "addr");
            assert_true(a > prev);
            prev = a;
            total += fake_view_cell_int(map, r, "length");
        }
        assert_int_equal(fake_view_cell_int(map, 0, "addr"), 0x100000);
        assert_int_equal(total, (int64_t)N * 8);
    }
}

/* Any of the heap views counts as a look. */
static void test_each_view_counts(void **state)
{
    static const char *const names[] = { "heap.summary", "heap.segments", "heap.histogram",
                                         "heap.fragmentation", "heap.bitmap", "heap.map" };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        fixture *f = setup_with(NULL, NULL);
        ddm_view *v = fake_view_find(f->fh, f->vm, names[i]);
        if (!v) {
            assert_string_equal(names[i], "heap.bitmap"); /* only with libpng */
            assert_false(bm_png_available());
            teardown((void **)&f);
            continue;
        }
        fake_host_fire_timers(f->fh);
        assert_int_equal(fake_host_n_requests(f->fh), 0);
        fake_view_set_watchers(v, 2);
        fake_host_fire_timers(f->fh);
        assert_on_requests(f, 0);
        teardown((void **)&f);
    }
}

/* A VM whose views are watched when it becomes ready (a snapshot watches
 * everything) is asked at once, before any tick (and before a GC the
 * snapshot may ask for). */
static void test_watched_at_ready(void **state)
{
    fixture *f = setup_with(NULL, watch_all);
    (void)state;
    assert_on_requests(f, 0);
    teardown((void **)&f);
}

static void test_grace_then_off(void **state)
{
    fixture *f = *state;
    ddm_view *seg = fake_view_find(f->fh, f->vm, "heap.segments");
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    fake_view_set_watchers(seg, 1);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 0);
    /* unwatched for less than heap.grace_ms (10 s): still on */
    fake_view_set_watchers(seg, 0);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    /* a flickering watch (a one-shot view) neither toggles nor re-sends */
    fake_view_set_watchers(sum, 1);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    fake_view_set_watchers(sum, 0);
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    g_now += 9.9;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    /* 10 s after the last look: the "off" forms, HPIF(0) and HPSG(0, what) */
    g_now += 0.1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 5);
    assert_request(f, 3, HPIF, 1, 0, 0);
    assert_request(f, 4, HPSG, 2, 0, 0);
    /* off stays off */
    g_now += 60;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 5);
    /* a new look switches it on again, with a fresh HPIF "now" */
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 5);
}

static void test_grace_option(void **state)
{
    static const char *const o[] = { "heap.grace_ms", "0", "heap.what", "1", NULL };
    fixture *f = setup_with(o, NULL);
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    (void)state;
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    assert_request(f, 2, HPSG, 2, 1, 1);
    fake_view_set_watchers(sum, 0);
    g_now += 0.25;
    fake_host_fire_timers(f->fh); /* grace 0: off at the first tick nobody looks */
    assert_int_equal(fake_host_n_requests(f->fh), 5);
    assert_request(f, 3, HPIF, 1, 0, 0);
    assert_request(f, 4, HPSG, 2, 0, 1);
    teardown((void **)&f);
}

/* A GC asked (by another plugin) of a watched VM before the tick switched
 * segments on: on at once, and one more GC after the HPSG. */
static void test_gc_before_tick(void **state)
{
    fixture *f = *state;
    assert_int_equal(fake_host_n_taps(f->fh, HPGC), 1);
    /* nobody watches: a GC is just a GC */
    fake_host_deliver(f->fh, f->vm, HPGC, DDM_ORIGIN_REQUEST, NULL, 0);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    /* the watch began, the tick has not run yet */
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "heap.fragmentation"), 1);
    fake_host_deliver(f->fh, f->vm, HPGC, DDM_ORIGIN_REQUEST, NULL, 0);
    assert_int_equal(fake_host_n_requests(f->fh), 4);
    assert_request(f, 0, HPIF, 1, 1, 0);
    assert_request(f, 1, HPIF, 1, 3, 0);
    assert_request(f, 2, HPSG, 2, 1, 0);
    assert_int_equal(fake_host_request(f->fh, 3)->type, HPGC);
    assert_true(fake_host_log_contains(f->fh, "asked for another GC"));
    /* segments on already: nothing more (our own HPGC included) */
    fake_host_deliver(f->fh, f->vm, HPGC, DDM_ORIGIN_REQUEST, NULL, 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 4);
}

/* heap.always=1: the old behaviour, on at READY for every VM, never off. */
static void test_always(void **state)
{
    static const char *const o[] = { "heap.always", "1", NULL };
    fixture *f = setup_with(o, NULL);
    int i;
    (void)state;
    assert_on_requests(f, 0);
    assert_int_equal(fake_host_n_timers(f->fh), 0); /* nothing to follow */
    assert_int_equal(fake_host_n_taps(f->fh, HEAP_CHUNK_HPGC), 0);
    for (i = 0; i < 5; i++) {
        g_now += 60;
        fake_host_fire_timers(f->fh);
    }
    assert_int_equal(fake_host_n_requests(f->fh), 3);
    teardown((void **)&f);
}

/* A failed "on" is logged once and retried at the next tick. */
static void test_on_retried(void **state)
{
    fixture *f = *state;
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "heap.summary"), 1);
    fake_host_set_request_error(f->fh, -ENOSPC);
    fake_host_fire_timers(f->fh);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    assert_true(fake_host_log_contains(f->fh, "cannot send HPIF(now)"));
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_INFO), 1);
    fake_host_set_request_error(f->fh, 0);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 0);
}

static void test_options(void **state)
{
    static const char *const opts[] = { "heap.hpif_when", "1", "heap.what", "1", NULL };
    fixture *f = setup_with(opts, watch_all);
    (void)state;
    /* hpif_when 1: only "now"; what 1: objects */
    assert_int_equal(fake_host_n_requests(f->fh), 2);
    assert_request(f, 0, HPIF, 1, 1, 0);
    assert_request(f, 1, HPSG, 2, 1, 1);
    teardown((void **)&f);

    {
        static const char *const o2[] = { "heap.hpif_when", "0", "heap.segments", "0", NULL };
        f = setup_with(o2, watch_all);
        fake_host_fire_timers(f->fh);
        assert_int_equal(fake_host_n_requests(f->fh), 0);
        teardown((void **)&f);
    }
    {
        static const char *const o3[] = { "heap.hpif_when", "7", "heap.bitmap_width", "0",
                                          "heap.always", "2", "heap.grace_ms", "x", NULL };
        f = setup_with(o3, watch_all);
        assert_on_requests(f, 0);
        assert_true(fake_host_log_contains(f->fh, "option hpif_when=7"));
        assert_true(fake_host_log_contains(f->fh, "option bitmap_width=0"));
        assert_true(fake_host_log_contains(f->fh, "option always=2"));
        assert_true(fake_host_log_contains(f->fh, "option grace_ms=x"));
        assert_int_equal(fake_host_n_timers(f->fh), 1); /* always fell back to 0 */
        teardown((void **)&f);
    }
}

static void disable_hpif(fake_host *fh) { watch_all(fh); fake_host_disable_chunk(fh, HPIF); }
static void disable_hpsg(fake_host *fh) { watch_all(fh); fake_host_disable_chunk(fh, HPSG); }
static void disable_hpso(fake_host *fh) { watch_all(fh); fake_host_disable_chunk(fh, HPSO); }
static void disable_all(fake_host *fh) { watch_all(fh); fake_host_only_chunks(fh, NULL, 0); }

static void test_disabled_chunks(void **state)
{
    fixture *f;
    (void)state;
    f = setup_with(NULL, disable_hpif);
    assert_int_equal(fake_host_find_request(f->fh, NULL, HPIF, 0), -1);
    assert_true(fake_host_find_request(f->fh, NULL, HPSG, 0) >= 0);
    assert_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.segments"));
    teardown((void **)&f);

    f = setup_with(NULL, disable_hpsg);
    assert_true(fake_host_find_request(f->fh, NULL, HPIF, 0) >= 0);
    assert_int_equal(fake_host_find_request(f->fh, NULL, HPSG, 0), -1);
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    teardown((void **)&f);

    {   /* HPSO disabled: objects mode cannot be asked for; merged mode can */
        static const char *const o[] = { "heap.what", "1", NULL };
        f = setup_with(o, disable_hpso);
        assert_int_equal(fake_host_find_request(f->fh, NULL, HPSG, 0), -1);
        teardown((void **)&f);
    }

    f = setup_with(NULL, disable_all);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    assert_int_equal(fake_host_n_views(f->fh, f->vm), 0);
    teardown((void **)&f);
}

static void test_hpif(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1, 2 };
    ddm_view *v = fake_view_find(f->fh, f->vm, "heap.summary");
    send_hpif(f, 2, 2, ids, 32u << 20, 8u << 20, 3 /* trailing bytes ignored */);
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_int_equal(fake_view_cell_int(v, 0, "heap"), 1);
    assert_int_equal(fake_view_cell_int(v, 0, "size"), 32 << 20);
    assert_int_equal(fake_view_cell_int(v, 0, "allocated"), 8 << 20);
    assert_int_equal(fake_view_cell_int(v, 0, "free"), 24 << 20);
    assert_int_equal(fake_view_cell_int(v, 0, "max"), 64 << 20);
    assert_int_equal(fake_view_cell_int(v, 1, "objects"), 1001);
    assert_true(fake_view_cell_double(v, 0, "used") > 24.9 && fake_view_cell_double(v, 0, "used") < 25.1);
    assert_string_equal(fake_view_cell_str(v, 0, "reason"), "every GC");
    assert_int_equal(fake_view_cell_int(v, 0, "timestamp"), 1700000000000ll);
    assert_string_equal(fake_view_col_unit(v, "size"), "B");
    assert_string_equal(fake_view_col_unit(v, "used"), "%");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "heap"), "25% of 64.0 MiB");
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 0);
}

/* An idle VM nobody looked at holds no state at all (views declared, ABI
 * 1.6); made by a look, the state holds no HPIF table and no publication
 * times: both come with the first HPIF and the first published update. */
static void test_idle_vm_tables_lazy(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1, 2 };
    heap_plugin *hp = plugin_of(f->fh);
    const heap_vm *hv = hp->host->vm_get_data(hp->self, f->vm);

    assert_null(hv);
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    hv = hp->host->vm_get_data(hp->self, f->vm);
    assert_non_null(hv);
    assert_true(hv->ready);
    assert_ptr_equal(hv->info, &heap_no_info);
    assert_int_equal(hv->info->n, 0);
    assert_null(hv->published);
    assert_int_equal(heap_published_ms(hv, 1), 0);
    send_hpif(f, 2, 2, ids, 32u << 20, 8u << 20, 0);
    assert_ptr_not_equal(hv->info, &heap_no_info);
    assert_int_equal(hv->info->n, 2);
    assert_int_equal(heap_no_info.n, 0);
    assert_null(hv->published);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_non_null(hv->published);
    assert_int_equal(heap_published_ms(hv, 1), FAKE_WALL_MS);
    assert_int_equal(heap_published_ms(hv, 2), 0);
}

/* Metrics (ABI 1.3): each heap's HPIF figures labelled with its id, and
 * one GC counted per HPIF sent at a GC. */
static void test_hpif_metrics(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1, 2 };
    ddm_metric_family fam;
    double v = 0;
    assert_true(fake_host_metric_family(f->fh, "heap_size_bytes", &fam));
    assert_string_equal(fam.unit, "bytes");
    assert_string_equal(fam.label, "heap");
    assert_string_equal(fam.view, "heap.summary");
    send_hpif(f, 2, 2, ids, 32u << 20, 8u << 20, 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_size_bytes", "2", &v));
    assert_float_equal(v, (32u << 20), 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_allocated_bytes", "1", &v));
    assert_float_equal(v, (8u << 20), 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_max_bytes", "1", &v));
    assert_float_equal(v, (64u << 20), 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_objects", "2", &v));
    assert_float_equal(v, 1001, 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_gcs_total", NULL, &v));
    assert_float_equal(v, 1, 0);
    /* the next GC: one heap left, its figures, the counter one up */
    send_hpif(f, 1, 1, ids, 16u << 20, 4u << 20, 0);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "heap_size_bytes"), 1);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_size_bytes", "1", &v));
    assert_float_equal(v, (16u << 20), 0);
    assert_false(fake_host_metric(f->fh, f->vm, "heap_size_bytes", "2", NULL));
    assert_true(fake_host_metric(f->fh, f->vm, "heap_gcs_total", NULL, &v));
    assert_float_equal(v, 2, 0);
}

/* A VM whose metrics the host keeps refusing is logged once (the VM's
 * metric_logged, ddm_vm_metric_logged), not at every HPIF. */
static void test_metric_refused_logged_once(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1, 2 };
    int before;
    plugin_of(f->fh)->host = refusing_host_of(fake_host_table(f->fh));
    fake_host_log_clear(f->fh);
    send_hpif(f, 2, 2, ids, 32u << 20, 8u << 20, 0);
    before = refused_metrics;
    send_hpif(f, 1, 1, ids, 16u << 20, 4u << 20, 0); /* refused again, not logged again */
    plugin_of(f->fh)->host = fake_host_table(f->fh);
    assert_true(refused_metrics > before);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);
    assert_true(fake_host_log_contains(f->fh, " not set ("));
}

static void test_hpif_truncated(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1, 2 };
    ddm_view *v = fake_view_find(f->fh, f->vm, "heap.summary");
    uint8_t shortbuf[3] = { 0, 0, 0 };

    /* declares 3, carries 2 (and a half) */
    send_hpif(f, 3, 2, ids, 1000, 500, 10);
    assert_int_equal(fake_view_n_rows(v), 2);
    assert_true(fake_host_log_contains(f->fh, "declaring 3 heaps"));

    /* count overrun: 0xffffffff declared, one entry */
    fake_host_log_clear(f->fh);
    send_hpif(f, 0xffffffffu, 1, ids, 1000, 500, 0);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_true(fake_host_log_contains(f->fh, "declaring 4294967295 heaps"));

    /* zero heaps */
    send_hpif(f, 0, 0, ids, 0, 0, 0);
    assert_int_equal(fake_view_n_rows(v), 0);

    /* not even the count */
    fake_host_log_clear(f->fh);
    assert_true(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, shortbuf, 3) < 0);
    assert_true(fake_host_log_contains(f->fh, "too short"));
    assert_true(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, NULL, 0) < 0);
}

static void test_segments_basic(void **state)
{
    fixture *f = *state;
    ddm_view *seg = fake_view_find(f->fh, f->vm, "heap.segments");
    ddm_view *hist = fake_view_find(f->fh, f->vm, "heap.histogram");
    ddm_view *frag = fake_view_find(f->fh, f->vm, "heap.fragmentation");
    int r;

    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    assert_int_equal(fake_view_version(seg), 0); /* nothing published before HPEN */
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(seg), 1);
    assert_int_equal(fake_view_n_rows(seg), 9);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 1);
    assert_int_equal(seg_cell(f, 1, "data object", "bytes"), 32);
    assert_int_equal(seg_cell(f, 1, "free", "bytes"), 16);
    assert_int_equal(seg_cell(f, 1, "1-byte array (byte[], boolean[])", "count"), 1);
    assert_int_equal(seg_cell(f, 1, "1-byte array (byte[], boolean[])", "bytes"), 2400);
    assert_int_equal(seg_cell(f, 1, "1-byte array (byte[], boolean[])", "largest"), 2400);
    assert_int_equal(seg_cell(f, 1, "class object", "count"), 0);
    assert_string_equal(fake_view_col_unit(seg, "bytes"), "B");

    /* histogram: 2400 bytes falls in [2048, 4095] */
    r = row_of(hist, 1, "1-byte array (byte[], boolean[])");
    assert_true(r >= 0);
    assert_int_equal(fake_view_cell_int(hist, r, "from"), 2048);
    assert_int_equal(fake_view_cell_int(hist, r, "to"), 4095);
    assert_int_equal(fake_view_cell_int(hist, r, "count"), 1);
    assert_string_equal(fake_view_cell_str(hist, r, "counts"), "runs");

    r = frag_row(f, 1);
    assert_true(r >= 0);
    assert_int_equal(fake_view_cell_int(frag, r, "free"), 16);
    assert_int_equal(fake_view_cell_int(frag, r, "largest_free"), 16);
    assert_int_equal(fake_view_cell_int(frag, r, "heap_bytes"), PIECE_A_UNITS * 8);
    assert_int_equal(fake_view_cell_int(frag, r, "pieces"), 1);
    assert_int_equal(fake_view_cell_int(frag, r, "rejected"), 0);
    assert_int_equal(fake_view_cell_int(frag, r, "bitmap"), 1);
    assert_true(fake_view_cell_double(frag, r, "fragmentation") < 0.001);

    /* a new update replaces the old one */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 0);
    assert_int_equal(seg_cell(f, 1, "class object", "count"), 1);
    r = frag_row(f, 1);
    assert_int_equal(fake_view_cell_int(frag, r, "updates"), 2);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 0);
}

static void test_reject_rule_keeps_rest(void **state)
{
    fixture *f = *state;
    ddm_view *frag = fake_view_find(f->fh, f->vm, "heap.fragmentation");
    static const uint8_t bad[] = { ST(0, 1), 9, ST(0, 0), 9 }; /* 20 units */
    int r;

    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    /* runs end before the declared units */
    assert_true(send_piece(f, HPSG, 1, 0x20000, 0, 25, bad, sizeof bad) < 0);
    assert_true(fake_host_log_contains(f->fh, "runs end before the declared unit count"));
    assert_true(fake_host_log_contains(f->fh, "heap 1"));
    assert_true(fake_host_log_contains(f->fh, "127.0.0.1:8042"));
    assert_true(fake_host_log_contains(f->fh, "0x00020000"));
    /* runs go past the declared units */
    assert_true(send_piece(f, HPSG, 1, 0x30000, 0, 15, bad, sizeof bad) < 0);
    assert_true(fake_host_log_contains(f->fh, "runs go past the declared unit count"));
    /* state change inside a partial sequence */
    {
        static const uint8_t chg[] = { PARTIAL | ST(2, 1), 255, ST(3, 1), 3 };
        assert_true(send_piece(f, HPSG, 1, 0x40000, 0, 260, chg, sizeof chg) < 0);
        assert_true(fake_host_log_contains(f->fh, "state change inside a partial run"));
    }
    /* an absurd declared unit count with a few runs */
    assert_true(send_piece(f, HPSG, 1, 0x70000, 0, 0xffffffffu, bad, sizeof bad) < 0);
    /* HPST/HPEN with trailing bytes are fine (forward compatible) */
    {
        static const uint8_t hpst_long[8] = { 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef };
        assert_int_equal(fake_host_deliver(f->fh, f->vm, HPST, DDM_ORIGIN_EVENT, hpst_long, 8), DDM_OK);
        assert_true(fake_host_log_contains(f->fh, "before the previous update ended"));
        assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    }
    /* half a pair; and a piece too short for its header */
    assert_true(send_piece(f, HPSG, 1, 0x50000, 0, 10, bad, 3) < 0);
    assert_true(fake_host_deliver(f->fh, f->vm, HPSG, DDM_ORIGIN_EVENT, piece_a, 5) < 0);
    assert_int_equal(send_piece(f, HPSG, 1, 0x60000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);

    r = frag_row(f, 1);
    assert_true(r >= 0);
    assert_int_equal(fake_view_cell_int(frag, r, "pieces"), 2);
    assert_int_equal(fake_view_cell_int(frag, r, "rejected"), 1); /* after the restart: half a pair */
    assert_int_equal(fake_view_cell_int(frag, r, "heap_bytes"), (PIECE_A_UNITS + PIECE_B_UNITS) * 8);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 1);
    assert_int_equal(seg_cell(f, 1, "class object", "count"), 1);
    assert_int_equal(seg_cell(f, 1, "free", "bytes"), (2 + 10) * 8);
}

static void test_reject_log_rate_limited(void **state)
{
    fixture *f = *state;
    static const uint8_t bad[] = { ST(0, 1), 9 };
    int i;
    send_u4(f, HPST, 1, DDM_OK);
    for (i = 0; i < 50; i++)
        assert_true(send_piece(f, HPSG, 1, 0x1000u * (uint32_t)i, 0, 99, bad, sizeof bad) < 0);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), HEAP_REJECT_LOG_MAX + 1);
    assert_true(fake_host_log_contains(f->fh, "45 more pieces rejected"));
}

static void test_out_of_order_and_two_heaps(void **state)
{
    fixture *f = *state;
    ddm_view *frag = fake_view_find(f->fh, f->vm, "heap.fragmentation");

    send_u4(f, HPST, 2, DDM_OK);
    send_u4(f, HPST, 1, DDM_OK);
    /* heap 1: B at the higher address first, then A (ddmlib offset form) */
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, PIECE_A_UNITS * 8, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 2, 0x90000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 2, DDM_OK);
    /* heap 2 is published while heap 1 is still collecting */
    assert_int_equal(fake_view_n_rows(frag), 1);
    assert_int_equal(fake_view_cell_int(frag, 0, "heap"), 2);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_n_rows(frag), 2);
    assert_int_equal(fake_view_cell_int(frag, frag_row(f, 1), "heap_bytes"), (PIECE_A_UNITS + PIECE_B_UNITS) * 8);
    assert_int_equal(fake_view_cell_int(frag, frag_row(f, 2), "heap_bytes"), PIECE_B_UNITS * 8);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 1);
    assert_int_equal(seg_cell(f, 2, "data object", "count"), 0);
    assert_int_equal(seg_cell(f, 2, "class object", "count"), 1);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "heap.segments")), 18);
}

static void test_start_end_mismatch(void **state)
{
    fixture *f = *state;
    ddm_view *seg = fake_view_find(f->fh, f->vm, "heap.segments");

    /* HPEN without HPST: ignored */
    send_u4(f, HPEN, 1, DDM_OK);
    assert_true(fake_host_log_contains(f->fh, "without HPST or pieces"));
    assert_int_equal(fake_view_version(seg), 0);

    /* HPST without HPEN, then a new HPST: the first update is dropped */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    assert_int_equal(fake_view_version(seg), 0);
    send_u4(f, HPST, 1, DDM_OK);
    assert_true(fake_host_log_contains(f->fh, "before the previous update ended"));
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 0);
    assert_int_equal(seg_cell(f, 1, "class object", "count"), 1);

    /* pieces without HPST: collected, published at HPEN */
    fake_host_log_clear(f->fh);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    assert_true(fake_host_log_contains(f->fh, "without HPST; collecting"));
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 1);

    /* short HPST / HPEN */
    assert_true(fake_host_deliver(f->fh, f->vm, HPST, DDM_ORIGIN_EVENT, "\0\0", 2) < 0);
    assert_true(fake_host_deliver(f->fh, f->vm, HPEN, DDM_ORIGIN_EVENT, NULL, 0) < 0);

    /* too many heaps */
    {
        uint32_t id;
        fake_host_log_clear(f->fh);
        for (id = 100; id < 100 + SEG_MAX_HEAPS; id++)
            send_u4(f, HPST, id, id < 100 + SEG_MAX_HEAPS - 1 ? DDM_OK : -ENOSPC);
        assert_true(fake_host_log_contains(f->fh, "one heap too many"));
    }
}

static void test_hpso_objects(void **state)
{
    fixture *f = *state;
    ddm_view *hist = fake_view_find(f->fh, f->vm, "heap.histogram");
    static const uint8_t objs[] = { ST(0, 1), 1, ST(0, 1), 1, ST(0, 1), 3 };
    int r;
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSO, 1, 0x10000, 0, 8, objs, sizeof objs), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 3);
    assert_int_equal(seg_cell(f, 1, "data object", "smallest"), 16);
    assert_int_equal(seg_cell(f, 1, "data object", "largest"), 32);
    assert_int_equal(seg_cell(f, 1, "data object", "average"), 21);
    r = row_of(hist, 1, "data object");
    assert_true(r >= 0);
    assert_string_equal(fake_view_cell_str(hist, r, "counts"), "objects");
    assert_int_equal(fake_view_cell_int(hist, r, "from"), 16);
    assert_int_equal(fake_view_cell_int(hist, r, "count"), 2);
}

/* ------------------------------------------------------------------ bitmap */

#ifdef HAVE_LIBPNG
/* Decode @file with libpng into RGBA; returns the buffer (free) and sizes. */
static uint8_t *decode_png(const char *file, uint32_t *w, uint32_t *h)
{
    png_image img;
    uint8_t *buf;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&img, file));
    img.format = PNG_FORMAT_RGBA;
    buf = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(buf);
    assert_true(png_image_finish_read(&img, NULL, buf, 0, NULL));
    *w = img.width;
    *h = img.height;
    return buf;
}

static void assert_pixel(const uint8_t *rgba, uint32_t w, uint32_t x, uint32_t y, uint8_t r,
                         uint8_t g, uint8_t b)
{
    const uint8_t *p = rgba + 4 * ((size_t)y * w + x);
    if (p[0] != r || p[1] != g || p[2] != b)
        fail_msg("pixel (%u,%u) is %u,%u,%u, want %u,%u,%u", x, y, p[0], p[1], p[2], r, g, b);
}
#endif

static void test_bitmap_command(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    ddm_cmd *cmd;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/heap.png", dir);

    /* heap 1: A at 0x10000 (306 units), gap of 10 units, B (11 units) given first */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000 + (PIECE_A_UNITS + 10) * 8, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    {
        const char *argv[] = { "heap-bitmap", "42", file, "--width", "100", "--raw" };
        cmd = fake_host_run_command(f->fh, 6, argv);
        assert_true(fake_cmd_finished(cmd));
        if (!bm_png_available()) {
            assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
            assert_string_equal(fake_cmd_message(cmd), "built without libpng");
            rmdir(dir);
            return;
        }
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
        assert_non_null(strstr(fake_cmd_message(cmd), "100x4"));
        assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "width"), 100);
        assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "height"), 4);
        assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "heap"), 1);
    }
#ifdef HAVE_LIBPNG
    {
        uint32_t w, h;
        uint8_t *rgba = decode_png(file, &w, &h);
        assert_int_equal(w, 100);
        assert_int_equal(h, 4); /* 306 + 10 gap + 11 = 327 pixels */
        assert_pixel(rgba, w, 0, 0, 0, 0, 255);        /* object: blue */
        assert_pixel(rgba, w, 3, 0, 0, 0, 255);
        assert_pixel(rgba, w, 4, 0, 0, 0, 0);          /* free: black */
        assert_pixel(rgba, w, 5, 0, 0, 0, 0);
        assert_pixel(rgba, w, 6, 0, 255, 0, 0);        /* byte array: red */
        assert_pixel(rgba, w, 5, 3, 255, 0, 0);        /* unit 305 */
        assert_pixel(rgba, w, 6, 3, 192, 192, 192);    /* the gap */
        assert_pixel(rgba, w, 15, 3, 192, 192, 192);
        assert_pixel(rgba, w, 16, 3, 0, 0, 0);         /* B: 10 free */
        assert_pixel(rgba, w, 26, 3, 0, 255, 0);       /* class object: green */
        assert_pixel(rgba, w, 27, 3, 192, 192, 192);   /* padding */
        assert_pixel(rgba, w, 99, 3, 192, 192, 192);
        free(rgba);
    }
#endif
    /* default width, explicit heap, with the caption (a bigger image) */
    {
        const char *argv[] = { "heap-bitmap", "42", file, "--heap", "1" };
        cmd = fake_host_run_command(f->fh, 5, argv);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
        assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bitmap_width"), 512);
        assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bitmap_height"), 1);
        assert_true(fake_view_field_int(fake_cmd_result(cmd), "width") > 512);
        assert_true(fake_view_field_int(fake_cmd_result(cmd), "height") > 1);
    }
    /* errors */
    {
        const char *a1[] = { "heap-bitmap", "42", file, "--heap", "7" };
        const char *a2[] = { "heap-bitmap", "99", file };
        const char *a3[] = { "heap-bitmap", "42" };
        const char *a4[] = { "heap-bitmap", "42", file, "--width", "0" };
        const char *a5[] = { "heap-bitmap", "42", "/nonexistent-dir/x.png" };
        /* no heap 7 yet: it asks for a GC, which brings none (by the end
         * of the grace period after the GC's answer) */
        cmd = fake_host_run_command(f->fh, 5, a1);
        assert_false(fake_cmd_finished(cmd));
        fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, HPGC, 0),
                                  DDM_REPLY_EMPTY);
        fake_host_fire_timers(f->fh);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "heap 7"));
        /* and names the heap that has segments, the --heap meant perhaps */
        assert_non_null(strstr(fake_cmd_message(cmd), "; the VM sent segments of heap 1 (--heap)"));
        cmd = fake_host_run_command(f->fh, 3, a2);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_NOT_FOUND);
        assert_string_equal(fake_cmd_message(cmd), "no VM matches '99' (try 'ddmon vms')");
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, a3)), DDM_CMD_USAGE);
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 5, a4)), DDM_CMD_USAGE);
        cmd = fake_host_run_command(f->fh, 3, a5);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "nonexistent-dir"));
    }
    /* a relative FILE goes to the client's directory, not the monitor's */
    {
        const char *argv[] = { "heap-bitmap", "42", "relative.png" };
        char rel[160];
        fake_host_set_client_cwd(f->fh, dir);
        cmd = fake_host_run_command(f->fh, 3, argv);
        fake_host_set_client_cwd(f->fh, NULL);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
        snprintf(rel, sizeof rel, "%s/relative.png", dir);
        assert_int_equal(access(rel, R_OK), 0);
        assert_non_null(strstr(fake_cmd_message(cmd), rel));
        unlink(rel);
    }
    unlink(file);
    assert_int_equal(rmdir(dir), 0); /* no temporary files left behind */
}

/* ------------------------------------------------------------ bitmap page */

/* A piece as HPSG carries it (caller frees). */
static uint8_t *build_piece(uint32_t heap, uint32_t start, uint32_t units, const uint8_t *pairs,
                            size_t pair_bytes, size_t *len)
{
    ddm_writer w;
    uint8_t *buf;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, heap);
    ddm_write_u1(&w, 8);
    ddm_write_u4(&w, start);
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, units);
    ddm_write_bytes(&w, pairs, pair_bytes);
    buf = ddm_writer_take(&w, len);
    assert_non_null(buf);
    return buf;
}

/* Heap 1: piece A at 0x10000, 10 units of gap, piece B. */
static const seg_gen *collect_ab(seg_collector *c)
{
    const seg_heap *h = NULL;
    seg_piece_report rep;
    uint8_t *buf;
    size_t len;
    seg_collector_init(c, 1, 1u << 20);
    assert_int_equal(seg_collector_start(c, 1), 0);
    buf = build_piece(1, 0x10000, PIECE_A_UNITS, piece_a, sizeof piece_a, &len);
    assert_int_equal(seg_collector_piece(c, buf, len, 0, &rep), 0);
    free(buf);
    buf = build_piece(1, 0x10000 + (PIECE_A_UNITS + 10) * 8, PIECE_B_UNITS, piece_b, sizeof piece_b, &len);
    assert_int_equal(seg_collector_piece(c, buf, len, 0, &rep), 0);
    free(buf);
    assert_int_equal(seg_collector_end(c, 1, &h), 0);
    return &h->current;
}

/* Render every row of @p into a new buffer (free) of width * height indexes. */
static uint8_t *render_page(bm_page *p)
{
    uint8_t *img = malloc((size_t)p->width * p->height);
    uint32_t y;
    assert_non_null(img);
    for (y = 0; y < p->height; y++)
        bm_page_row(p, img + (size_t)y * p->width);
    return img;
}

/* A tiny OCR over our own font: read @n characters drawn at @scale from
 * (@x, @y) of @ink (1 = a text pixel), each cell matched exactly against
 * the glyph table; '#' where no glyph matches. */
static void ocr(const uint8_t *ink, uint32_t w, uint32_t h, uint32_t x, uint32_t y, size_t n,
                unsigned scale, char *out)
{
    size_t k;
    for (k = 0; k < n; k++) {
        uint32_t cx = x + (uint32_t)k * BMF_ADVANCE * scale;
        int c, found = '#';
        for (c = BMF_FIRST; c <= BMF_LAST && found == '#'; c++) {
            unsigned gx, gy;
            int ok = 1;
            for (gy = 0; gy < BMF_GLYPH_H && ok; gy++)
                for (gx = 0; gx < BMF_GLYPH_W && ok; gx++) {
                    uint32_t px = cx + gx * scale, py = y + gy * scale;
                    int on = px < w && py < h && ink[(size_t)py * w + px];
                    ok = on == bmf_pixel((char)c, gx, gy);
                }
            if (ok)
                found = c;
        }
        out[k] = (char)found;
    }
    out[n] = '\0';
}

static uint8_t *ink_of_page(const uint8_t *img, size_t n)
{
    uint8_t *ink = malloc(n);
    size_t i;
    assert_non_null(ink);
    for (i = 0; i < n; i++)
        ink[i] = img[i] == BMP_PIX_TEXT;
    return ink;
}

static void assert_text_at(const uint8_t *ink, uint32_t w, uint32_t h, uint32_t x, uint32_t y,
                           unsigned scale, const char *want)
{
    char got[256];
    assert_true(strlen(want) < sizeof got);
    ocr(ink, w, h, x, y, strlen(want), scale, got);
    assert_string_equal(got, want);
}

/* Every glyph differs from every other (else the OCR, and the reader,
 * could not tell them apart), and drawing follows the table. */
static void test_font(void **state)
{
    uint8_t row[64];
    int a, b;
    unsigned x;
    (void)state;
    for (a = BMF_FIRST; a <= BMF_LAST; a++)
        for (b = a + 1; b <= BMF_LAST; b++)
            if (!memcmp(bmf_glyph((char)a), bmf_glyph((char)b), BMF_GLYPH_W))
                fail_msg("glyphs '%c' and '%c' are the same", a, b);
    assert_memory_equal(bmf_glyph('\n'), bmf_glyph('?'), BMF_GLYPH_W);
    assert_int_equal(bmf_text_width("", 1), 0);
    assert_int_equal(bmf_text_width("abc", 1), 17);
    assert_int_equal(bmf_text_width("abc", 2), 34);
    /* row 0 of "T" is its top bar; of "-" nothing; clipped at both ends */
    memset(row, 0, sizeof row);
    bmf_draw_row(row, sizeof row, 1, "T-", 0, 1, 7);
    for (x = 0; x < sizeof row; x++)
        assert_int_equal(row[x], x >= 1 && x <= 5 ? 7 : 0);
    memset(row, 0, sizeof row);
    bmf_draw_row(row, 4, -3, "TT", 0, 2, 7); /* second T from x 9: off the row */
    assert_int_equal(row[0], 7);
    assert_int_equal(row[4], 0);
    /* scale 2: glyph row 3 of '-' (its bar) covers pixel rows 6 and 7 */
    memset(row, 0, sizeof row);
    bmf_draw_row(row, sizeof row, 0, "-", 7, 2, 7);
    assert_int_equal(row[0], 7);
    assert_int_equal(row[9], 7);
    assert_int_equal(row[10], 0);
    memset(row, 0, sizeof row);
    bmf_draw_row(row, sizeof row, 0, "-", 5, 2, 7);
    assert_int_equal(row[0], 0);
}

/* The page without libpng: legend swatches in the kind colours with the
 * decoder's names, the caption's figures, the address scale. */
static void test_page_layout(void **state)
{
    static const uint8_t want_rgb[BMP_NLEGEND][3] = {
        { 0, 0, 0 }, { 0, 0, 255 }, { 0, 255, 0 }, { 255, 0, 0 }, { 255, 128, 0 },
        { 255, 255, 0 }, { 255, 128, 128 }, { 255, 0, 255 }, { 64, 64, 64 }, { 192, 192, 192 },
    };
    static const char *const want_name[BMP_NLEGEND] = {
        "free", "data object", "class object", "1-byte array (byte[], boolean[])",
        "2-byte array (short[], char[])", "4-byte array (object[], int[], float[])",
        "8-byte array (long[], double[])", "unknown object", "non-Java object",
        "no heap here (gap between segments)",
    };
    const bm_caption cap = { .heap_id = 1, .vm = "app (pid 42, 127.0.0.1:8042)",
                             .captured_ms = FAKE_WALL_MS, .have_hpif = 1, .hpif_objects = 1234,
                             .hpif_max_bytes = 64u << 20 };
    seg_collector c;
    const seg_gen *g = collect_ab(&c);
    bm_page p;
    uint8_t *img, *ink;
    uint32_t x, y, i;
    (void)state;

    assert_int_equal(bm_page_init(&p, g, 16, &cap), 0);
    assert_int_equal(p.bm.width, 16);
    assert_int_equal(p.bm.height, 21); /* 306 + 10 + 11 = 327 pixels */
    assert_true(p.width >= p.bm_x + 16 && p.height > p.bm_y + 21);
    assert_true(p.width < 16 + 1600 && p.height < 21 + 200);
    img = render_page(&p);
    ink = ink_of_page(img, (size_t)p.width * p.height);

    /* legend: each swatch is all its colour, the name follows it */
    for (i = 0; i < BMP_NLEGEND; i++) {
        uint8_t pix = p.legend_pix[i];
        assert_memory_equal(bmp_palette[pix], want_rgb[i], 3);
        for (y = 0; y < BMP_SWATCH_H; y++)
            for (x = 0; x < BMP_SWATCH_W; x++)
                if (img[(size_t)(p.legend_y[i] + y) * p.width + p.legend_x[i] + x] != pix)
                    fail_msg("legend %u: pixel (%u,%u) is %u, want %u", i, x, y,
                             img[(size_t)(p.legend_y[i] + y) * p.width + p.legend_x[i] + x], pix);
        assert_int_equal(img[(size_t)(p.legend_y[i]) * p.width + p.legend_x[i] + BMP_SWATCH_W], BMP_PIX_BG);
        assert_text_at(ink, p.width, p.height, p.legend_x[i] + BMP_SWATCH_W + 4, p.legend_y[i], 1,
                       want_name[i]);
    }
    /* caption: heap and VM (twice the size), time, the figures: 317 units
     * = 2536 bytes from 0x10000 to 0x10000 + 327 * 8 (a gap of 10 units),
     * 12 free (96 bytes, in runs of 2 and 10) */
    assert_int_equal(p.n_lines, 6);
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[0], 2, "Heap 1 - app (pid 42, 127.0.0.1:8042)");
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[1], 1, "Captured 2023-11-14 22:13:20 UTC, after a GC");
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[2], 1,
                   "Size 2.5 KiB (2,536 bytes), addresses 0x00010000 to 0x00010a38");
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[3], 1,
                   "Used 2.4 KiB (96.2%), free 96 B (3.8%), largest free block 80 B");
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[4], 1,
                   "Objects 1,234 (the VM's count), heap may grow to 64.0 MiB");
    assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[5], 1,
                   "One pixel per 8-byte unit, 16 units (128 B) per row; each row starts at the address on its left");
    /* the scale: row 0 is 0x10000, row 16 (pixel 256, in piece A) 0x10800,
     * each label right-aligned against its tick, level with its row */
    assert_text_at(ink, p.width, p.height, p.label_right - 59, p.bm_y, 1, "0x00010000");
    assert_text_at(ink, p.width, p.height, p.label_right - 59, p.bm_y + BMP_SCALE_EVERY, 1, "0x00010800");
    for (x = p.bm_x - 5; x < p.bm_x - 1; x++) {
        assert_int_equal(img[(size_t)p.bm_y * p.width + x], BMP_PIX_TEXT);
        assert_int_equal(img[(size_t)(p.bm_y + 1) * p.width + x], BMP_PIX_BG);
    }
    /* the frame and the bitmap inside it */
    assert_int_equal(img[(size_t)p.bm_y * p.width + p.bm_x - 1], BMP_PIX_FRAME);
    assert_int_equal(img[(size_t)(p.bm_y - 1) * p.width + p.bm_x], BMP_PIX_FRAME);
    assert_int_equal(img[(size_t)(p.bm_y + 21) * p.width + p.bm_x + 16], BMP_PIX_FRAME);
    assert_int_equal(img[(size_t)p.bm_y * p.width + p.bm_x], BM_PIX_KIND(0));
    assert_int_equal(img[(size_t)p.bm_y * p.width + p.bm_x + 4], BM_PIX_FREE);
    assert_int_equal(img[(size_t)(p.bm_y + 20) * p.width + p.bm_x + 6], BM_PIX_KIND(1)); /* unit 326 */
    free(img);
    free(ink);

    /* without the VM's figures: merged allocations, no time */
    {
        const bm_caption bare = { .heap_id = 3 };
        assert_int_equal(bm_page_init(&p, g, 16, &bare), 0);
        img = render_page(&p);
        ink = ink_of_page(img, (size_t)p.width * p.height);
        assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[0], 2, "Heap 3 ");
        assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[1], 1, "Capture time unknown");
        assert_text_at(ink, p.width, p.height, p.line_x, p.line_y[4], 1,
                       "Allocations 3 (adjacent objects of one kind count as one)");
        free(img);
        free(ink);
    }
    /* no caption: the bare bitmap */
    assert_int_equal(bm_page_init(&p, g, 16, NULL), 0);
    assert_int_equal(p.width, 16);
    assert_int_equal(p.height, 21);
    img = render_page(&p);
    assert_int_equal(img[0], BM_PIX_KIND(0));
    assert_int_equal(img[(size_t)20 * 16 + 6], BM_PIX_KIND(1));
    free(img);
    seg_collector_clear(&c);
}

/* A row that starts inside a long gap has no address: no label there. */
static void test_page_scale_gap(void **state)
{
    seg_collector c;
    const seg_heap *h = NULL;
    seg_piece_report rep;
    uint8_t *buf, *img, *ink;
    size_t len;
    bm_page p;
    const bm_caption cap = { .heap_id = 1 };
    uint32_t r;
    (void)state;
    /* B at 0x10000, B again far away: rows 0 (B), 1 (the gap), 2 (B) at width 16;
     * every row labelled when the scale says so: force it with 16 rows of B */
    seg_collector_init(&c, 1, 1u << 20);
    assert_int_equal(seg_collector_start(&c, 1), 0);
    buf = build_piece(1, 0x10000, 16 * 16, (const uint8_t[]){ ST(0, 1), 255 }, 2, &len);
    assert_int_equal(seg_collector_piece(&c, buf, len, 0, &rep), 0);
    free(buf);
    buf = build_piece(1, 0x80000000u, 16, (const uint8_t[]){ ST(1, 1), 15 }, 2, &len);
    assert_int_equal(seg_collector_piece(&c, buf, len, 0, &rep), 0);
    free(buf);
    assert_int_equal(seg_collector_end(&c, 1, &h), 0);
    assert_int_equal(bm_page_init(&p, &h->current, 16, &cap), 0);
    assert_int_equal(p.bm.height, 18); /* 16 rows, the gap row, one row */
    img = render_page(&p);
    ink = ink_of_page(img, (size_t)p.width * p.height);
    assert_text_at(ink, p.width, p.height, p.label_right - 59, p.bm_y, 1, "0x00010000");
    /* row 16 is the gap row: no label, no tick */
    for (r = 0; r < BMF_GLYPH_H; r++)
        assert_int_equal(memchr(ink + (size_t)(p.bm_y + BMP_SCALE_EVERY + r) * p.width, 1, p.bm_x - 1) == NULL, 1);
    free(img);
    free(ink);
    seg_collector_clear(&c);
}

#ifdef HAVE_LIBPNG
/* heap-bitmap's page read back with libpng: its size is the record's and
 * the layout's, the legend has the kind colours, the text reads. */
static void test_bitmap_page_png(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1 };
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file, "--width", "16" };
    heap_plugin *hp = plugin_of(f->fh);
    const heap_vm *hv;
    const seg_heap *sh;
    const bm_caption cap = { .heap_id = 1, .vm = "app (pid 42, 127.0.0.1:8042)",
                             .captured_ms = FAKE_WALL_MS, .have_hpif = 1, .hpif_objects = 1000,
                             .hpif_max_bytes = 64u << 20 };
    bm_page p;
    ddm_cmd *cmd;
    uint32_t w, h, i, n;
    uint8_t *rgba, *ink;

    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/page.png", dir);
    send_hpif(f, 1, 1, ids, 4096, 2440, 0);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000 + (PIECE_A_UNITS + 10) * 8, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    cmd = fake_host_run_command(f->fh, 5, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    hv = hp->host->vm_get_data(hp->self, f->vm);
    assert_non_null(hv);
    sh = seg_collector_heap(&hv->coll, 1);
    assert_non_null(sh);
    assert_int_equal(bm_page_init(&p, &sh->current, 16, &cap), 0);

    rgba = decode_png(file, &w, &h);
    assert_int_equal(w, p.width);
    assert_int_equal(h, p.height);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "width"), w);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "height"), h);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bitmap_width"), 16);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bitmap_height"), 21);
    for (i = 0; i < BMP_NLEGEND; i++) {
        const uint8_t *rgb = bmp_palette[p.legend_pix[i]];
        assert_pixel(rgba, w, p.legend_x[i], p.legend_y[i], rgb[0], rgb[1], rgb[2]);
        assert_pixel(rgba, w, p.legend_x[i] + BMP_SWATCH_W - 1, p.legend_y[i] + BMP_SWATCH_H - 1,
                     rgb[0], rgb[1], rgb[2]);
    }
    assert_pixel(rgba, w, p.legend_x[1], p.legend_y[1], 0, 0, 255); /* data object: blue */
    assert_pixel(rgba, w, p.bm_x, p.bm_y, 0, 0, 255);               /* the first unit */
    assert_pixel(rgba, w, 0, 0, 255, 255, 255);                     /* background */
    /* text is black on white: read it back outside the bitmap */
    n = w * h;
    ink = malloc(n);
    assert_non_null(ink);
    for (i = 0; i < n; i++)
        ink[i] = rgba[4 * i] == 0 && rgba[4 * i + 1] == 0 && rgba[4 * i + 2] == 0;
    assert_text_at(ink, w, h, p.line_x, p.line_y[0], 2, "Heap 1 - app (pid 42, 127.0.0.1:8042)");
    assert_text_at(ink, w, h, p.line_x, p.line_y[1], 1, "Captured 2023-11-14 22:13:20 UTC, after a GC");
    assert_text_at(ink, w, h, p.line_x, p.line_y[4], 1, "Objects 1,000 (the VM's count), heap may grow to 64.0 MiB");
    assert_text_at(ink, w, h, p.label_right - 59, p.bm_y, 1, "0x00010000");
    free(ink);
    free(rgba);
    unlink(file);
    rmdir(dir);
}
#endif

/* heap-bitmap on a VM nobody watched at its last GC: it switches segments
 * on (HPSG before its HPGC), asks for a GC and finishes at heap 1's HPEN;
 * collection goes off again heap.grace_ms later. */
static void test_bitmap_unwatched_asks_gc(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file, "--width", "100" };
    ddm_cmd *cmd;
    int gc;
    if (!bm_png_available())
        return;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/gc.png", dir);
    cmd = fake_host_run_command(f->fh, 5, argv);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_requests(f->fh), 4);
    assert_request(f, 0, HPIF, 1, 1, 0);
    assert_request(f, 1, HPIF, 1, 3, 0);
    assert_request(f, 2, HPSG, 2, 1, 0);
    gc = fake_host_find_request(f->fh, f->vm, HPGC, 0);
    assert_int_equal(gc, 3);
    assert_int_equal(fake_host_request(f->fh, 3)->len, 0);
    /* a second one while it waits is refused */
    {
        const char *a2[] = { "heap-bitmap", "42", file };
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 3, a2)), DDM_CMD_FAILED);
    }
    /* the command holds collection on: no "off" while it waits */
    g_now += 30;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 4);
    /* heap 2 first: still waiting for heap 1 */
    send_u4(f, HPST, 2, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 2, 0x90000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 2, DDM_OK);
    assert_false(fake_cmd_finished(cmd));
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "heap"), 1);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "bitmap_height"), 4); /* 306 units */
    assert_int_equal(access(file, R_OK), 0);
    /* the GC's late answer changes nothing */
    fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_EMPTY);
    /* now that there are segments, the command uses them without a GC */
    cmd = fake_host_run_command(f->fh, 5, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_host_n_requests(f->fh), 4);
    /* the grace period starts at the command's end, then "off" */
    g_now += 9;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 4);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 6);
    assert_request(f, 4, HPIF, 1, 0, 0);
    assert_request(f, 5, HPSG, 2, 0, 0);
    /* no view (data makes none), nothing held: the VM's state goes */
    assert_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), f->vm));
    unlink(file);
    assert_int_equal(rmdir(dir), 0);
}

/* heap-bitmap to a FIFO (or a device): refused at once, before any GC is
 * asked for, and left as it was (the PNG used to be renamed onto it). */
static void test_bitmap_file_not_regular(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file };
    struct stat st;
    size_t n;
    ddm_cmd *cmd;
    if (!bm_png_available())
        return;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/fifo.png", dir);
    assert_int_equal(mkfifo(file, 0600), 0);
    n = fake_host_n_requests(f->fh);
    cmd = fake_host_run_command(f->fh, 3, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not a regular file"));
    assert_non_null(strstr(fake_cmd_message(cmd), file));
    assert_int_equal(fake_host_n_requests(f->fh), n); /* no GC asked for */
    assert_int_equal(lstat(file, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(file);
    assert_int_equal(rmdir(dir), 0);
}

/* The first heap-bitmap of a fresh VM: the VM answers HPGC (Dalvik's empty
 * reply) before the GC's segments reach us. It waits for them a while
 * instead of failing, and fails only when none come. */
static void test_bitmap_gc_reply_before_segments(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file };
    ddm_cmd *cmd;
    int gc;
    if (!bm_png_available())
        return;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/first.png", dir);
    cmd = fake_host_run_command(f->fh, 3, argv);
    gc = fake_host_find_request(f->fh, f->vm, HPGC, 0);
    assert_true(gc > fake_host_find_request(f->fh, f->vm, HPSG, 0));
    fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_EMPTY);
    assert_false(fake_cmd_finished(cmd));
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(access(file, R_OK), 0);
    fake_host_fire_timers(f->fh); /* the grace timer ends quietly */
    unlink(file);

    /* --heap 2, none of heap 2 comes: fails once the grace period is over */
    {
        const char *a2[] = { "heap-bitmap", "42", file, "--heap", "2" };
        cmd = fake_host_run_command(f->fh, 5, a2);
        gc = fake_host_find_request(f->fh, f->vm, HPGC, (size_t)gc + 1);
        assert_true(gc >= 0);
        fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_EMPTY);
        assert_false(fake_cmd_finished(cmd));
        fake_host_fire_timers(f->fh);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "heap 2"));
        /* and the VM going while it waits */
        cmd = fake_host_run_command(f->fh, 5, a2);
        gc = fake_host_find_request(f->fh, f->vm, HPGC, (size_t)gc + 1);
        fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_EMPTY);
        assert_false(fake_cmd_finished(cmd));
        fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "went away"));
        fake_host_fire_timers(f->fh);
    }
    assert_int_equal(access(file, F_OK), -1);
    assert_int_equal(rmdir(dir), 0);
}

static void no_hpgc(fake_host *fh) { fake_host_disable_chunk(fh, HPGC); }

static void test_bitmap_gc_failures(void **state)
{
    const char *argv[] = { "heap-bitmap", "42", "/tmp/ddmon-heap-never.png" };
    const char *argv2[] = { "heap-bitmap", "42", "/tmp/ddmon-heap-never.png", "--heap", "2" };
    fixture *f;
    ddm_cmd *cmd;
    int gc;
    (void)state;
    if (!bm_png_available())
        return;
    /* HPGC disabled: cannot ask, says why */
    f = setup_with(NULL, no_hpgc);
    cmd = fake_host_run_command(f->fh, 3, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "cannot be asked"));
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    teardown((void **)&f);

    f = setup_with(NULL, NULL);
    /* the GC ends without segments of the heap asked for */
    cmd = fake_host_run_command(f->fh, 5, argv2);
    gc = fake_host_find_request(f->fh, f->vm, HPGC, 0);
    assert_true(gc >= 0);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_false(fake_cmd_finished(cmd));
    fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_EMPTY);
    fake_host_fire_timers(f->fh); /* the grace period after the GC's answer */
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "heap 2"));
    assert_int_equal(access(argv[2], F_OK), -1);
    /* no answer in time (ART never answers HPGC): what came is used */
    {
        char file[] = "/tmp/ddmon-heap-timeout-XXXXXX";
        const char *a3[] = { "heap-bitmap", "42", file, "--heap", "2" };
        int fd = mkstemp(file);
        assert_true(fd >= 0);
        close(fd);
        cmd = fake_host_run_command(f->fh, 5, a3);
        gc = fake_host_find_request(f->fh, f->vm, HPGC, (size_t)gc + 1);
        assert_true(gc >= 0);
        send_u4(f, HPST, 2, DDM_OK);
        assert_int_equal(send_piece(f, HPSG, 2, 0x90000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
        assert_false(fake_cmd_finished(cmd));
        /* HPEN of heap 2 finishes it at once */
        send_u4(f, HPEN, 2, DDM_OK);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
        fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_TIMEOUT);
        unlink(file);
    }
    /* refused, then timeout, then the VM goes while it waits */
    {
        const char *a4[] = { "heap-bitmap", "42", "/tmp/ddmon-heap-never.png", "--heap", "9" };
        cmd = fake_host_run_command(f->fh, 5, a4);
        gc = fake_host_find_request(f->fh, f->vm, HPGC, (size_t)gc + 1);
        fake_host_complete_fail(f->fh, (size_t)gc, 1, "no");
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "refused"));
        cmd = fake_host_run_command(f->fh, 5, a4);
        gc = fake_host_find_request(f->fh, f->vm, HPGC, (size_t)gc + 1);
        fake_host_complete_status(f->fh, (size_t)gc, DDM_REPLY_TIMEOUT);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "in time"));
        cmd = fake_host_run_command(f->fh, 5, a4);
        fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(strstr(fake_cmd_message(cmd), "went away"));
    }
    assert_int_equal(access(argv[2], F_OK), -1);
    teardown((void **)&f);
}

static void test_bitmap_big_gap(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file, "--width", "100", "--raw" };
    ddm_cmd *cmd;
    if (!bm_png_available())
        return;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/gap.png", dir);
    /* B at 0x10000 (11 units), then B again 1000 units further: the gap ends
     * the row and adds one full row; overlapping pieces are drawn in turn */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000 + (PIECE_B_UNITS + 1000) * 8, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    cmd = fake_host_run_command(f->fh, 6, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "height"), 3);
#ifdef HAVE_LIBPNG
    {
        uint32_t w, h;
        uint8_t *rgba = decode_png(file, &w, &h);
        assert_int_equal(w, 100);
        assert_int_equal(h, 3);
        assert_pixel(rgba, w, 10, 0, 0, 255, 0);        /* class object */
        assert_pixel(rgba, w, 11, 0, 192, 192, 192);    /* rest of row 0 */
        assert_pixel(rgba, w, 50, 1, 192, 192, 192);    /* the gap row */
        assert_pixel(rgba, w, 0, 2, 0, 0, 0);           /* second piece: free first */
        assert_pixel(rgba, w, 10, 2, 0, 255, 0);
        assert_pixel(rgba, w, 11, 2, 192, 192, 192);
        free(rgba);
    }
#endif
    unlink(file);
    rmdir(dir);
}

/* --width 1 (the bound's low end, as the man page and the help say) on a
 * heap of more than a million units: an image more than a million rows
 * tall, past libpng's default limit on image height (1,000,000 rows,
 * png_set_user_limits), which refused it after the bounds check passed
 * ("Invalid IHDR data"). PNG allows 2^31 - 1 rows. The file's IHDR is read
 * as bytes (libpng's reader has the same default limit). */
static void test_bitmap_width_one_tall(void **state)
{
    fixture *f = *state;
    enum { PAIRS = 3907, UNITS = PAIRS * 256 }; /* 1,000,192 units */
    char dir[] = "/tmp/ddmon-heap-test-XXXXXX";
    char file[128];
    const char *argv[] = { "heap-bitmap", "42", file, "--width", "1", "--raw" };
    uint8_t *pairs = malloc(2 * PAIRS), head[33];
    ddm_cmd *cmd;
    size_t i;
    FILE *fp;

    if (!bm_png_available()) {
        free(pairs);
        skip(); /* (no libpng: the gap shows) */
    }
    assert_non_null(pairs);
    for (i = 0; i < PAIRS; i++) { /* 256 units each: free, then data objects */
        pairs[2 * i] = i % 2 ? ST(1, 1) : ST(0, 0);
        pairs[2 * i + 1] = 255;
    }
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/tall.png", dir);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, UNITS, pairs, 2 * PAIRS), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    free(pairs);
    cmd = fake_host_run_command(f->fh, 6, argv);
    assert_true(fake_cmd_finished(cmd));
    if (fake_cmd_status(cmd) != DDM_CMD_OK)
        fail_msg("heap-bitmap --width 1: %s", fake_cmd_message(cmd));
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "width"), 1);
    assert_int_equal(fake_view_field_int(fake_cmd_result(cmd), "height"), UNITS);
    fp = fopen(file, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(head, 1, sizeof head, fp), sizeof head);
    fclose(fp);
    assert_memory_equal(head + 12, "IHDR", 4);
    assert_int_equal(((uint32_t)head[16] << 24) | ((uint32_t)head[17] << 16) | ((uint32_t)head[18] << 8) | head[19], 1);
    assert_int_equal(((uint32_t)head[20] << 24) | ((uint32_t)head[21] << 16) | ((uint32_t)head[22] << 8) | head[23],
                     UNITS);
    /* the bound's high end is where the help and the man page put it */
    {
        const char *wide[] = { "heap-bitmap", "42", file, "--width", "65537", "--raw" };
        cmd = fake_host_run_command(f->fh, 6, wide);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
        assert_string_equal(fake_cmd_message(cmd), "--width takes 1..65536");
    }
    unlink(file);
    assert_int_equal(rmdir(dir), 0);
}

static void test_bitmap_blob_when_watched(void **state)
{
    fixture *f = *state;
    ddm_view *blob = fake_view_find(f->fh, f->vm, "heap.bitmap");
    const uint8_t *data;
    const char *mt;
    size_t len;
    if (!bm_png_available()) {
        assert_null(blob);
        return;
    }
    assert_non_null(blob);
    /* not watched: not built */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(blob), 0);
    /* watched */
    fake_view_set_watchers(blob, 1);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(blob), 1);
    data = fake_view_blob(blob, &len, &mt);
    assert_non_null(data);
    assert_string_equal(mt, "image/png");
    assert_true(len > 8);
    assert_memory_equal(data, "\x89PNG\r\n\x1a\n", 8);

    /* the next update comes too soon: built later by a one-shot timer */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_version(blob), 1);
    /* (timer 0 is the watch tick) */
    assert_int_equal(fake_host_n_timers(f->fh), 2);
    assert_int_equal(fake_host_timer_interval(f->fh, 1) <= 2000, 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 2);
    assert_int_equal(fake_view_version(blob), 2);
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    /* deferred again, then the VM goes: the timer goes with it */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_B_UNITS, piece_b, sizeof piece_b), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_host_n_timers(f->fh), 2);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_host_n_timers(f->fh), 1);
}

static void test_bitmap_cap(void **state)
{
    /* a 0 MiB cap keeps no pieces: statistics still work, the bitmap is refused */
    static const char *const o[] = { "heap.bitmap_max_mb", "0", NULL };
    fixture *f = setup_with(o, NULL);
    char file[] = "/tmp/ddmon-heap-nobitmap.png";
    const char *argv[] = { "heap-bitmap", "42", file };
    ddm_cmd *cmd;
    (void)state;
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a), DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(seg_cell(f, 1, "data object", "count"), 1);
    cmd = fake_host_run_command(f->fh, 3, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED); /* at once: a GC would not help */
    assert_non_null(strstr(fake_cmd_message(cmd), "bitmap_max_mb"));
    assert_int_equal(fake_host_find_request(f->fh, f->vm, HPGC, 0), -1);
    assert_int_equal(access(file, F_OK), -1);
    teardown((void **)&f);
}

/* --------------------------------------------------------------- heap-info */

static void test_heap_info_command(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1 };
    const char *argv[] = { "heap-info", "42" };
    ddm_cmd *cmd;
    int idx;
    const fake_request *rq;

    /* nobody watches the VM: heap-info still works, with HPIF "now" only
     * (collection is not switched on for it) */
    cmd = fake_host_run_command(f->fh, 2, argv);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(fake_host_n_requests(f->fh), 1);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, 0);
    assert_int_equal(idx, 0);
    rq = fake_host_request(f->fh, (size_t)idx);
    assert_int_equal(rq->len, 1);
    assert_int_equal(rq->data[0], 1);
    /* a second one while the first runs is refused */
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, argv)), DDM_CMD_FAILED);
    /* the HPIF event finishes it; the empty reply afterwards does nothing */
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_n_rows(fake_cmd_result(cmd)), 1);
    assert_int_equal(fake_view_cell_int(fake_cmd_result(cmd), 0, "allocated"), 1024);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);

    /* timeout without data */
    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, (size_t)idx + 1);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);

    /* refused */
    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, (size_t)idx + 1);
    fake_host_complete_fail(f->fh, (size_t)idx, 1, "Unsupported HPIF what");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "Unsupported HPIF what"));

    /* VM gone while waiting */
    cmd = fake_host_run_command(f->fh, 2, argv);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);

    /* usage and unknown VM */
    {
        const char *a1[] = { "heap-info" };
        const char *a2[] = { "heap-info", "42" };
        ddm_cmd *c;
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 1, a1)), DDM_CMD_USAGE);
        c = fake_host_run_command(f->fh, 2, a2);
        assert_int_equal(fake_cmd_status(c), DDM_CMD_NOT_FOUND);
        /* the core's message (cmd_find_vm), as every command gives it: not "no VM 42" */
        assert_string_equal(fake_cmd_message(c), "no VM matches '42' (try 'ddmon vms')");
    }
}

/* The 2007 draft's form: the HPIF chunk is the reply. heap-info finishes
 * with it, and the summary is published from it, also when it answers the
 * HPIF "now" a watch sends. */
static void test_heap_info_in_reply(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1 };
    const char *argv[] = { "heap-info", "42" };
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    ddm_cmd *cmd;
    uint8_t *buf;
    size_t len;
    int idx;

    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, 0);
    assert_true(idx >= 0);
    buf = build_hpif(1, 1, ids, 4096, 1024, 0, &len);
    fake_host_complete_chunk(f->fh, (size_t)idx, HPIF, buf, len);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_n_rows(fake_cmd_result(cmd)), 1);
    assert_int_equal(fake_view_cell_int(fake_cmd_result(cmd), 0, "allocated"), 1024);
    assert_int_equal(fake_view_n_rows(sum), 1);
    assert_int_equal(fake_view_cell_int(sum, 0, "size"), 4096);
    /* the next one starts afresh */
    cmd = fake_host_run_command(f->fh, 2, argv);
    assert_false(fake_cmd_finished(cmd));
    idx = fake_host_find_request(f->fh, f->vm, HPIF, (size_t)idx + 1);
    /* a reply HPIF too short for its count is a failure, not a hang */
    fake_host_complete_chunk(f->fh, (size_t)idx, HPIF, buf, 2);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    free(buf);

    /* a watch's HPIF "now" answered in the reply fills heap.summary */
    {
        static const uint32_t ids2[] = { 1, 2 };
        size_t from = fake_host_n_requests(f->fh);
        fake_view_set_watchers(sum, 1);
        fake_host_fire_timers(f->fh);
        idx = fake_host_find_request(f->fh, f->vm, HPIF, from);
        assert_true(idx >= 0);
        assert_int_equal(fake_host_request(f->fh, (size_t)idx)->data[0], 1);
        buf = build_hpif(2, 2, ids2, 8192, 2048, 0, &len);
        fake_host_complete_chunk(f->fh, (size_t)idx, HPIF, buf, len);
        free(buf);
        assert_int_equal(fake_view_n_rows(sum), 2);
        assert_int_equal(fake_view_cell_int(sum, 0, "size"), 8192);
    }
}

/* The HPIF event may follow the empty reply: heap-info waits a short grace
 * period for it, and fails only when none comes. */
static void test_heap_info_event_after_reply(void **state)
{
    fixture *f = *state;
    static const uint32_t ids[] = { 1 };
    const char *argv[] = { "heap-info", "42" };
    ddm_cmd *cmd;
    int idx;

    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, 0);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    assert_false(fake_cmd_finished(cmd));
    /* still one at a time while it waits */
    assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, argv)), DDM_CMD_FAILED);
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_cell_int(fake_cmd_result(cmd), 0, "allocated"), 1024);
    fake_host_fire_timers(f->fh); /* the grace timer ends quietly */

    /* empty reply and no event within the grace period: fails */
    cmd = fake_host_run_command(f->fh, 2, argv);
    assert_false(fake_cmd_finished(cmd));
    idx = fake_host_find_request(f->fh, f->vm, HPIF, (size_t)idx + 1);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    assert_false(fake_cmd_finished(cmd));
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "no heap info"));
    /* a late event changes nothing; a new command works */
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, HPIF, (size_t)idx + 1);
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    /* the VM goes while it waits */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    fake_host_fire_timers(f->fh);
}

/* Switching off half fails (HPIF(0) goes, HPSG(0) cannot be sent): a new
 * watcher must still get HPIF back on, and HPSG(0) is retried meanwhile. */
static void test_partial_off_then_watched(void **state)
{
    fixture *f = *state;
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    size_t n;
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 0);
    fake_view_set_watchers(sum, 0);
    g_now += 11;
    fake_host_set_request_error_for(f->fh, HPSG, -ENOSPC);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 4); /* HPIF(0) only */
    assert_request(f, 3, HPIF, 1, 0, 0);
    fake_host_set_request_error(f->fh, 0);
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh);
    n = fake_host_n_requests(f->fh);
    assert_int_equal(n, 6); /* HPIF now and every GC again; HPSG was never switched off */
    assert_request(f, 4, HPIF, 1, 1, 0);
    assert_request(f, 5, HPIF, 1, 3, 0);
}

/* heap-info and heap-bitmap on a VM that is not a ready DDM VM: a clear
 * failure at once, no request, and no per-VM state or views made for it. */
static void test_commands_not_ready(void **state)
{
    fixture *f = *state;
    ddm_vm *early = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 50, .ddm = 1, .user_id = -1,
                                                            .key = "127.0.0.1:8050" });
    /* a plain JVM is one the core lists as such (foreach_plain_vm); ddm 0
     * alone is also a DDM VM whose handshake goes on */
    ddm_vm *jvm = fake_host_add_plain_vm(f->fh, &(ddm_vm_info){ .pid = 51, .user_id = -1,
                                                                .key = "127.0.0.1:8051" });
    ddm_vm *coming = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 52, .ddm = 0, .user_id = -1,
                                                             .key = "127.0.0.1:8052" });
    const char *info50[] = { "heap-info", "50" };
    const char *info51[] = { "heap-info", "51" };
    const char *bm50[] = { "heap-bitmap", "50", "/tmp/ddmon-heap-never.png" };
    const char *bm51[] = { "heap-bitmap", "51", "/tmp/ddmon-heap-never.png" };
    const char *info52[] = { "heap-info", "52" };
    const struct {
        const char *const *argv;
        int argc;
        const char *want;
    } cases[] = {
        { info50, 2, "VM 50 is not a ready DDM VM (state: not ready" },
        { bm50, 3, "VM 50 is not a ready DDM VM (state: not ready" },
        { info51, 2, "VM 51 is a plain JVM, not DDM-aware: heap-info needs a DDM VM (Android)" },
        { bm51, 3, "VM 51 is a plain JVM, not DDM-aware: heap-bitmap needs a DDM VM (Android)" },
        { info52, 2, "VM 52 is not a ready DDM VM (state: not ready" },
    };
    size_t i, n0 = fake_host_n_requests(f->fh);
    fake_host_vm_event(f->fh, jvm, DDM_VM_READY); /* known as a plain JVM */
    (void)coming;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ddm_cmd *cmd = fake_host_run_command(f->fh, cases[i].argc, cases[i].argv);
        assert_true(fake_cmd_finished(cmd));
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_non_null(fake_cmd_message(cmd));
        if (strncmp(fake_cmd_message(cmd), cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu: \"%s\"", i, fake_cmd_message(cmd));
    }
    assert_int_equal(fake_host_n_requests(f->fh), n0);
    assert_int_equal(fake_host_n_views(f->fh, early), 0);
    assert_int_equal(fake_host_n_views(f->fh, jvm), 0);
    assert_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), early));
    /* once ready, heap-info asks it */
    fake_host_vm_event(f->fh, early, DDM_VM_READY);
    {
        ddm_cmd *cmd = fake_host_run_command(f->fh, 2, info50);
        assert_false(fake_cmd_finished(cmd));
        assert_true(fake_host_find_request(f->fh, early, HPIF, 0) >= 0);
    }
}

static void test_request_errors(void **state)
{
    fixture *f;
    (void)state;
    f = calloc(1, sizeof(*f));
    f->fh = fake_host_new();
    watch_all(f->fh);
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 42, .ddm = 1 });
    fake_host_set_request_error(f->fh, -ENOSPC);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    assert_true(fake_host_log_contains(f->fh, "cannot send HPIF"));
    {
        const char *argv[] = { "heap-info", "42" };
        ddm_cmd *cmd = fake_host_run_command(f->fh, 2, argv);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    }
    teardown((void **)&f);
}

/* Plugin ABI 1.6: a ready VM nobody asked about holds no heap view; the
 * first look makes all of them as READY made them before (their columns,
 * no rows, no commit), and data arriving first makes them too. */
static void test_views_made_when_asked(void **state)
{
    fixture *f = *state;
    static const char *const names[] = { "heap.summary", "heap.segments", "heap.histogram",
                                         "heap.fragmentation", "heap.map" };
    const uint32_t ids[] = { 1 };
    ddm_vm *other;
    ddm_view *v;
    size_t i;
    int n_made = bm_png_available() ? 6 : 5;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_null(fake_view_find_made(f->fh, f->vm, "heap.summary"));
    v = fake_view_find(f->fh, f->vm, "heap.summary"); /* a frontend asks */
    assert_non_null(v);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), n_made);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        v = fake_view_find_made(f->fh, f->vm, names[i]);
        assert_non_null(v);
        assert_int_equal(fake_view_kind(v), DDM_VIEW_TABLE);
        assert_int_equal(fake_view_version(v), 0); /* no commit but the columns' */
        assert_true(fake_view_n_cols(v) > 0);
        assert_int_equal(fake_view_n_rows(v), 0);
    }
    v = fake_view_find_made(f->fh, f->vm, "heap.summary");
    assert_string_equal(fake_view_title(v), "Heap summary");
    assert_int_equal(fake_view_n_cols(v), 9);
    assert_int_equal(fake_view_col_type(v, "used"), DDM_VAL_DOUBLE);
    assert_string_equal(fake_view_col_unit(v, "timestamp"), "epoch_ms"); /* a point in time, not a duration */
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_version(v), 1);

    /* Data before any look makes no view (review rU2 1); the first look
     * makes them with the rows the plugin holds. */
    other = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 43, .ddm = 1, .user_id = -1,
                                                    .key = "127.0.0.1:8043", .app_name = "b" });
    fake_host_vm_event(f->fh, other, DDM_VM_READY);
    assert_int_equal(fake_host_n_views_made(f->fh, other), 0);
    f->vm = other;
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_int_equal(fake_host_n_views_made(f->fh, other), 0);
    v = fake_view_find(f->fh, other, "heap.summary");
    assert_int_equal(fake_host_n_views_made(f->fh, other), n_made);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_version(v), 1);
}

/* Review rU2 8: a VM whose GCs were counted keeps its state when its views
 * went and collection went off (ddmon_heap_gcs_total never goes back), but
 * only the small struct: the segment updates (up to heap.bitmap_max_mb of
 * pieces) and the HPIF table go. */
static void test_gcs_kept_data_shed(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    const uint32_t ids[] = { 1 };
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    heap_vm *hv;
    double v = 0;

    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh); /* collection on */
    send_hpif(f, 1, 1, ids, 4096, 1024, 0); /* at a GC: counted */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    hv = h->vm_get_data(self, f->vm);
    assert_non_null(hv);
    assert_int_equal(hv->gcs, 1);
    assert_true(hv->coll.n_heaps > 0);
    fake_view_set_watchers(sum, 0);
    assert_true(fake_host_unmake_unwatched(f->fh) > 0);
    g_now += 11; /* heap.grace_ms after the last look: collection off */
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), hv); /* kept for its count */
    assert_int_equal(hv->gcs, 1);
    assert_int_equal(hv->coll.n_heaps, 0); /* its data went */
    assert_int_equal(hv->coll.kept_bytes, 0);
    assert_int_equal(hv->info->n, 0);
    assert_int_equal(hv->have_info, 0);
    assert_null(hv->published);
    /* the next GC counts on from there */
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_true(fake_host_metric(f->fh, f->vm, "heap_gcs_total", NULL, &v));
    assert_float_equal(v, 2, 0);
}

/* Review rU2 1: with one view watched and its siblings taken back, data
 * (HPIF, a segment update) fills the watched one and makes none of the
 * others: made by every HPIF they came and went for ever, an ADDED and a
 * REMOVED each time. */
static void test_views_data_makes_no_sibling(void **state)
{
    fixture *f = *state;
    const uint32_t ids[] = { 1 };
    int n_made = bm_png_available() ? 6 : 5;
    size_t len;
    uint8_t *hpif = build_hpif(1, 1, ids, 4096, 1024, 0, &len);
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");

    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh); /* collection on */
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made - 1);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1);
    for (int round = 0; round < 3; round++) {
        hpif[16] = 1; /* reason "now" */
        assert_int_equal(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, hpif, len), DDM_OK);
        send_u4(f, HPST, 1, DDM_OK);
        assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                         DDM_OK);
        send_u4(f, HPEN, 1, DDM_OK);
        assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1); /* the watched one only */
        assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "heap.summary"), sum);
        assert_int_equal(fake_view_n_rows(sum), 1);
        assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    }
    /* asked for, a sibling shows the update held */
    assert_true(fake_view_n_rows(fake_view_find(f->fh, f->vm, "heap.segments")) > 0);
    free(hpif);
}

/* Views made when asked and unwatched for the core's linger go
 * (vm_view_unmake), and with the last of them the VM's state; the next
 * look makes them again, the same columns. A watched one stays, and so
 * does the state that collects for it. */
static void test_views_unmade_when_unwatched(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    int n_made = bm_png_available() ? 6 : 5;
    ddm_view *seg;

    assert_non_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), n_made);
    assert_non_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm)); /* the state went too */
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);

    /* made again, the same */
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.fragmentation"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), n_made);
    assert_int_equal(fake_view_n_cols(fake_view_find_made(f->fh, f->vm, "heap.summary")), 9);
    assert_string_equal(fake_view_title(fake_view_find_made(f->fh, f->vm, "heap.segments")),
                        "Heap segments by kind");
    /* one watched: collection on for it, it and the state stay */
    seg = fake_view_find_made(f->fh, f->vm, "heap.segments");
    fake_view_set_watchers(seg, 1);
    fake_host_fire_timers(f->fh);
    assert_true(fake_host_n_requests(f->fh) > 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made - 1);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "heap.segments"), seg);
    assert_non_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    /* asked again: those missing are made, the watched one is the same */
    assert_non_null(fake_view_find(f->fh, f->vm, "heap.summary"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), n_made);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "heap.segments"), seg);
}

/* Review rU 1-3: a view the data path makes again after an unmake is taken
 * back too; a view made again shows the data the plugin still holds (not
 * an empty table until the next HPIF); the state kept at an unmake because
 * collection was on goes once collection is off. */
static void test_views_made_again_filled_and_state_freed(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    const uint32_t ids[] = { 1 };
    int n_made = bm_png_available() ? 6 : 5;
    size_t len;
    uint8_t *hpif = build_hpif(1, 1, ids, 4096, 1024, 0, &len);
    ddm_view *sum;

    hpif[16] = 1; /* reason "now": no GC counted, which would keep the state */
    sum = fake_view_find(f->fh, f->vm, "heap.summary");
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh); /* collection on */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, hpif, len), DDM_OK);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_int_equal(fake_view_n_rows(sum), 1);
    fake_view_set_watchers(sum, 0);

    /* the linger: the views go, the state stays (collection still on) */
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_non_null(h->vm_get_data(self, f->vm));
    /* asked for again: made with what the plugin holds */
    sum = fake_view_find(f->fh, f->vm, "heap.summary");
    assert_int_equal(fake_view_n_rows(sum), 1);
    assert_int_equal(fake_view_cell_int(sum, 0, "size"), 4096);
    assert_true(fake_view_n_rows(fake_view_find_made(f->fh, f->vm, "heap.fragmentation")) > 0);
    assert_true(fake_view_n_rows(fake_view_find_made(f->fh, f->vm, "heap.segments")) > 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made);

    /* data after the unmake makes none (review rU2 1): asked for, they are
     * made with it */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, hpif, len), DDM_OK);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    assert_non_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "heap.summary")), 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), n_made);

    /* heap.grace_ms after the last look collection goes off, and the state with it */
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm));
    free(hpif);
}

/* The watch tick frees idle state (heap_vm_release_if_idle), but never an
 * update in progress (HPST came, HPEN not yet) nor, with heap.always=1, a
 * VM's state whose "on" failed (it retries). */
static void test_idle_state_kept_while_needed(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    static const char *const always[] = { "heap.always", "1", NULL };

    send_u4(f, HPST, 1, DDM_OK); /* state made by data, no view yet */
    assert_non_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    fake_host_set_default_watchers(f->fh, 0); /* a watch change: the next tick walks every VM */
    fake_host_fire_timers(f->fh);
    assert_non_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    assert_null(fake_view_find_made(f->fh, f->vm, "heap.fragmentation")); /* data makes none */
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "heap.fragmentation")), 1);

    fixture *g = setup_with(always, NULL);
    fake_host_set_request_error_for(g->fh, HPIF, -ENOTCONN);
    fake_host_set_default_watchers(g->fh, 0);
    fake_host_fire_timers(g->fh);
    assert_non_null(fake_host_table(g->fh)->vm_get_data(fake_host_plugin(g->fh), g->vm));
    teardown((void **)&g);
}

/* Segment data nobody asked for (a late update after HPSG(0), a hostile
 * VM's unsolicited HPST/HPSG/HPEN) makes state that is on no tick list
 * unless it says so: the next tick frees it (review rU3 3: it was kept, up
 * to heap.bitmap_max_mb a VM, until the watches changed). With GCs counted
 * the struct stays and the segments go. */
static void test_unasked_segments_freed_at_tick(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    const uint32_t ids[] = { 1 };
    size_t len;
    uint8_t *hpif = build_hpif(1, 1, ids, 4096, 1024, 0, &len);
    heap_vm *hv;

    assert_null(h->vm_get_data(self, f->vm));
    for (int i = 0; i < 3; i++) { /* the first tick's walk of every VM is over */
        g_now += 1;
        fake_host_fire_timers(f->fh);
    }
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    hv = h->vm_get_data(self, f->vm);
    assert_non_null(hv);
    assert_int_equal(hv->coll.n_heaps, 1);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_host_n_requests(f->fh), 0); /* nothing switched on for it */

    /* a GC counted (an HPIF "at GC"): the struct stays, the segments go */
    hpif[16] = 2; /* reason "next GC" */
    assert_int_equal(fake_host_deliver(f->fh, f->vm, HPIF, DDM_ORIGIN_EVENT, hpif, len), DDM_OK);
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    send_u4(f, HPEN, 1, DDM_OK);
    hv = h->vm_get_data(self, f->vm);
    assert_non_null(hv);
    assert_int_equal(hv->coll.n_heaps, 1);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), hv);
    assert_int_equal(hv->coll.n_heaps, 0);
    assert_int_equal(hv->gcs, 1);
    assert_int_equal(hv->data_came, 0); /* off the list: the next ticks skip it */
    free(hpif);
}

/* An update that never ends (HPST and pieces, no HPEN) is dropped once no
 * piece came for HEAP_UPDATE_STALL_MS, with one log line naming the VM,
 * and the state goes at that tick: it was kept busy forever, with up to
 * heap.bitmap_max_mb of pieces (fU2's open defect). */
static void test_stalled_update_dropped(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    heap_vm *hv;

    for (int i = 0; i < 3; i++) { /* the first tick's walk of every VM is over */
        g_now += 1;
        fake_host_fire_timers(f->fh);
    }
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    hv = h->vm_get_data(self, f->vm);
    assert_non_null(hv);
    g_now += HEAP_UPDATE_STALL_MS / 1000.0 - 0.5; /* quiet, not for long enough */
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), hv);
    assert_int_equal(hv->coll.heaps[0]->collecting, 1);
    assert_false(fake_host_log_contains(f->fh, "no HPEN and no piece"));
    g_now += 0.5;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm)); /* dropped, then idle: freed */
    assert_true(fake_host_log_contains(f->fh, "no HPEN and no piece"));
    assert_true(fake_host_log_contains(f->fh, "limit 10000 ms"));
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);
}

/* ABI 1.7: an idle tick (no VM on its list) sleeps; an update that begins
 * wakes it and it drops the stalled update 10 s later, then sleeps; a
 * watch wakes it and it switches collection on, and after the watch the
 * tick runs until the grace switched it off. */
static void test_idle_tick_sleeps(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    uint32_t tick = plugin_of(f->fh)->watch_timer;
    assert_true(tick != 0);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 0);
    /* an update begins: the tick has a deadline to check */
    send_u4(f, HPST, 1, DDM_OK);
    assert_int_equal(send_piece(f, HPSG, 1, 0x10000, 0, PIECE_A_UNITS, piece_a, sizeof piece_a),
                     DDM_OK);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += HEAP_UPDATE_STALL_MS / 1000.0;
    fake_host_fire_timers(f->fh);
    assert_true(fake_host_log_contains(f->fh, "no HPEN and no piece"));
    assert_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    /* a watch: woken, collection on */
    ddm_view *sum = fake_view_find(f->fh, f->vm, "heap.summary");
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    fake_view_set_watchers(sum, 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    fake_host_fire_timers(f->fh);
    assert_on_requests(f, 0);
    /* the watch ends: ticking through the grace, then off, then asleep */
    fake_view_set_watchers(sum, 0);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 5.1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), 5); /* HPIF(0), HPSG(0) */
    for (int i = 0; i < 3; i++)
        fake_host_complete_status(f->fh, (size_t)i, DDM_REPLY_EMPTY);
    fake_host_complete_status(f->fh, 3, DDM_REPLY_EMPTY);
    fake_host_complete_status(f->fh, 4, DDM_REPLY_EMPTY);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
}

/* A slow update whose pieces keep coming is never cut, however long the
 * whole of it takes: the limit counts from the last piece. */
static void test_slow_update_kept(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    heap_vm *hv;
    const seg_heap *sh;

    send_u4(f, HPST, 1, DDM_OK);
    hv = h->vm_get_data(self, f->vm);
    assert_non_null(hv);
    for (int i = 0; i < 6; i++) { /* 6 pieces 8 s apart: 48 s in all */
        g_now += 8;
        fake_host_fire_timers(f->fh);
        assert_ptr_equal(h->vm_get_data(self, f->vm), hv);
        assert_int_equal(send_piece(f, HPSG, 1, 0x10000 + (uint32_t)i * 0x1000, 0, PIECE_A_UNITS,
                                    piece_a, sizeof piece_a),
                         DDM_OK);
    }
    g_now += 8;
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), hv);
    send_u4(f, HPEN, 1, DDM_OK);
    sh = seg_collector_heap(&hv->coll, 1);
    assert_non_null(sh);
    assert_int_equal(sh->updates, 1);
    assert_int_equal(sh->current.accepted, 6);
    assert_false(fake_host_log_contains(f->fh, "no HPEN and no piece"));
}

static void abi_1_5(fake_host *fh)
{
    fake_host_set_abi_minor(fh, 5);
}

/* A core before 1.6 (no vm_view_declare): every heap view is made at
 * DDM_VM_READY, as before, and HPIF data lands in it. */
static void test_old_core_views_at_ready(void **state)
{
    fixture *f = setup_with(NULL, abi_1_5);
    const uint32_t ids[] = { 1 };
    (void)state;
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), bm_png_available() ? 6 : 5);
    assert_non_null(fake_view_find_made(f->fh, f->vm, "heap.summary"));
    assert_non_null(fake_view_find_made(f->fh, f->vm, "heap.map"));
    send_hpif(f, 1, 1, ids, 4096, 1024, 0);
    assert_int_equal(fake_view_n_rows(fake_view_find_made(f->fh, f->vm, "heap.summary")), 1);
    teardown((void **)&f);
}

/* State made by data (lazy views, 1.6) is not a ready VM's: a chunk that
 * comes before DDM_VM_READY does not let a command, nor a watch, ask that
 * VM anything; READY, or a walk of the ready VMs, makes it ready. */
static void test_data_before_ready_not_ready(void **state)
{
    fixture *f = *state;
    const uint32_t ids[] = { 1 };
    const char *info[] = { "heap-info", "60" };
    ddm_vm *early = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 60, .ddm = 1, .user_id = -1,
                                                            .key = "127.0.0.1:8060" });
    heap_vm *hv;
    ddm_cmd *cmd;

    f->vm = early;
    send_hpif(f, 1, 1, ids, 4096, 1024, 0); /* before READY */
    hv = fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), early);
    assert_non_null(hv);
    assert_int_equal(hv->ready, 0);
    cmd = fake_host_run_command(f->fh, 2, info);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not a ready DDM VM"));
    fake_host_set_default_watchers(f->fh, 1); /* a watch of every view */
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_find_request(f->fh, early, HPIF, 0), -1);
    /* READY: the watched VM is switched on */
    fake_host_vm_event(f->fh, early, DDM_VM_READY);
    assert_int_equal(hv->ready, 1);
    assert_true(fake_host_find_request(f->fh, early, HPIF, 0) >= 0);
}

int main(void)
{
    setenv("TZ", "UTC", 1); /* the caption's capture time */
    tzset();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unwatched_sends_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_made_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_requests, setup, teardown),
        cmocka_unit_test(test_each_view_counts),
        cmocka_unit_test(test_watched_at_ready),
        cmocka_unit_test_setup_teardown(test_grace_then_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_off_then_watched, setup, teardown),
        cmocka_unit_test(test_grace_option),
        cmocka_unit_test_setup_teardown(test_gc_before_tick, setup, teardown),
        cmocka_unit_test(test_always),
        cmocka_unit_test_setup_teardown(test_on_retried, setup, teardown),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_disabled_chunks),
        cmocka_unit_test_setup_teardown(test_hpif, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_vm_tables_lazy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpif_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metric_refused_logged_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpif_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segments_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reject_rule_keeps_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reject_log_rate_limited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order_and_two_heaps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_end_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpso_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commands_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_before_ready_not_ready, setup, teardown),
        cmocka_unit_test(test_old_core_views_at_ready),
        cmocka_unit_test_setup_teardown(test_views_unmade_when_unwatched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_data_makes_no_sibling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gcs_kept_data_shed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_made_again_filled_and_state_freed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_idle_state_kept_while_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unasked_segments_freed_at_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_update_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_tick_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_update_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_unwatched_asks_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_file_not_regular, setup, teardown),
        cmocka_unit_test(test_bitmap_gc_failures),
        cmocka_unit_test_setup_teardown(test_bitmap_gc_reply_before_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_big_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_width_one_tall, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bitmap_blob_when_watched, setup, teardown),
        cmocka_unit_test(test_bitmap_cap),
        cmocka_unit_test(test_font),
        cmocka_unit_test(test_page_layout),
        cmocka_unit_test(test_page_scale_gap),
#ifdef HAVE_LIBPNG
        cmocka_unit_test_setup_teardown(test_bitmap_page_png, setup, teardown),
#endif
        cmocka_unit_test_setup_teardown(test_heap_info_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heap_info_in_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heap_info_event_after_reply, setup, teardown),
        cmocka_unit_test(test_request_errors),
        cmocka_unit_test_setup_teardown(test_heap_map, setup, teardown),
    };
    return cmocka_run_group_tests_name("plugin-heap", tests, NULL, NULL);
}
