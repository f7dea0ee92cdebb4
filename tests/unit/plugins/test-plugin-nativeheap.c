/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the nativeheap plugin through the fake host: the NHSG
 * request on READY (and none when the type is disabled), native segment
 * updates, and the NHGT reply in both header versions with 4- and 8-byte
 * pointers, grouped views and library+offset frames, plus malformed
 * replies (sizes past the end, bad version, pointer size 3, short records),
 * and NHGT by itself only while an NHGT view is watched (once when the
 * watch begins, then every nativeheap.interval).
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

#include <ddmon/testkit.h>
#include "plugins/nativeheap/nativeheap.h"
#include "plugins/nativeheap/nhmaps.h"
#include "refusing-host.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

#define NHGT NH_CHUNK_NHGT
#define NHSG NH_CHUNK_NHSG
#define NHST NH_CHUNK_NHST
#define NHEN NH_CHUNK_NHEN

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
} fixture;

static double g_now;

static double fake_now(void)
{
    return g_now;
}

static fixture *setup_with(const char *const *opts, void (*before)(fake_host *))
{
    fixture *f = calloc(1, sizeof(*f));
    size_t i;
    assert_non_null(f);
    f->fh = fake_host_new();
    for (i = 0; opts && opts[i]; i += 2)
        fake_host_set_config(f->fh, opts[i], opts[i + 1]);
    if (before)
        before(f->fh);
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    ((nh_plugin *)fake_host_table(f->fh)->get_data(fake_host_plugin(f->fh)))->now = fake_now;
    g_now = 100.0;
    f->vm = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 7, .ddm = 1, .user_id = -1,
                                                    .key = "127.0.0.1:8007" });
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    return f;
}

/* The plugin's own state. */
static nh_plugin *plugin_nh(fixture *f)
{
    return fake_host_table(f->fh)->get_data(fake_host_plugin(f->fh));
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

/* ------------------------------------------------------------ NHGT builder */

typedef struct rec {
    uint64_t size;
    int zygote;
    uint64_t count;
    uint64_t frames[4];
} rec;

typedef struct nhgt_spec {
    int version;             /* 1 or 2 */
    unsigned ptr;            /* 4 or 8: width of records (and v2 header fields) */
    unsigned hdr_ptr;        /* v2: pointerSize field written (0 = ptr) */
    unsigned hdr_version;    /* v2: version written (0 = 2) */
    const char *maps;
    const rec *recs;
    size_t n;
    unsigned bt;             /* backtrace depth */
    int64_t map_size_delta;  /* added to the declared mapSize */
    int64_t alloc_size_delta;
    int64_t info_size_delta;
    uint64_t total_memory;
    int info_zero;           /* allocInfoSize 0 */
} nhgt_spec;

static uint8_t *build_nhgt(const nhgt_spec *s, size_t *len)
{
    ddm_writer w;
    unsigned hw = s->version == 2 ? s->ptr : 4;
    uint64_t info = s->info_zero ? 0 : (2 + s->bt) * (uint64_t)s->ptr;
    size_t maps_len = s->maps ? strlen(s->maps) : 0;
    size_t i, k;
    uint8_t *out;

    ddm_writer_init(&w, 0);
    if (s->version == 2) {
        ddm_write_le(&w, 0x812345DD, 4);
        ddm_write_le(&w, s->hdr_version ? s->hdr_version : 2, 2);
        ddm_write_le(&w, s->hdr_ptr ? s->hdr_ptr : s->ptr, 2);
    }
    ddm_write_le(&w, (uint64_t)((int64_t)maps_len + s->map_size_delta), hw);
    ddm_write_le(&w, (uint64_t)((int64_t)(s->info_zero ? 0 : info * s->n) + s->alloc_size_delta), hw);
    ddm_write_le(&w, (uint64_t)((int64_t)info + s->info_size_delta), hw);
    ddm_write_le(&w, s->total_memory, hw);
    ddm_write_le(&w, s->bt, hw);
    ddm_write_bytes(&w, s->maps ? s->maps : "", maps_len);
    for (i = 0; !s->info_zero && i < s->n; i++) {
        uint64_t top = (uint64_t)1 << (8 * s->ptr - 1);
        ddm_write_le(&w, s->recs[i].size | (s->recs[i].zygote ? top : 0), s->ptr);
        ddm_write_le(&w, s->recs[i].count, s->ptr);
        for (k = 0; k < s->bt; k++)
            ddm_write_le(&w, k < 4 ? s->recs[i].frames[k] : 0, s->ptr);
    }
    out = ddm_writer_take(&w, len);
    assert_non_null(out);
    return out;
}

static const char maps_text[] =
    "10000000-10010000 r-xp 00000000 fd:01 123   /system/lib/libc.so\n"
    "10010000-10020000 r-xp 00010000 fd:01 123   /system/lib/libc.so\n"
    "20000000-20001000 rw-p 00000000 00:00 0     [stack]\n"
    "garbage line\n"
    "30000000-30008000 r-xp 00002000 fd:01 456   /data/app/libfoo.so\n";

static const rec recs[] = {
    { 32, 0, 10, { 0x10000100, 0x30000010, 0, 0 } },
    { 32, 0, 5, { 0x10000100, 0x30000010, 0, 0 } },  /* same size, same backtrace */
    { 4096, 1, 2, { 0x10010200, 0x50000000, 0, 0 } }, /* zygote; unmapped frame */
    { 32, 1, 1, { 0, 0, 0, 0 } },                    /* zygote 32: a group of its own */
};

/* Run native-heap, answer with @payload; returns the finished command. */
static ddm_cmd *run_nhgt(fixture *f, const uint8_t *payload, size_t len)
{
    const char *argv[] = { "native-heap", "7" };
    ddm_cmd *cmd;
    int idx;

    /* somebody looks at the NHGT views first: the reply fills only the
     * views that exist (review rU2 1), and the plugin keeps no copy */
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.summary"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.allocations"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.backtraces"));
    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, 0);
    const fake_request *rq;
    assert_non_null(cmd);
    assert_true(idx >= 0);
    rq = fake_host_request(f->fh, (size_t)idx);
    assert_int_equal(rq->len, 0);
    assert_false(fake_cmd_finished(cmd));
    fake_host_complete_chunk(f->fh, (size_t)idx, NHGT, payload, len);
    assert_true(fake_cmd_finished(cmd));
    return cmd;
}

static void check_views(fixture *f, const nhgt_spec *s)
{
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    ddm_view *al = fake_view_find(f->fh, f->vm, "nativeheap.allocations");
    ddm_view *bt = fake_view_find(f->fh, f->vm, "nativeheap.backtraces");
    int r;
    assert_int_equal(fake_view_field_int(sum, "total_memory"), 123456);
    assert_int_equal(fake_view_field_int(sum, "records"), 4);
    assert_int_equal(fake_view_field_int(sum, "allocations"), 18);
    assert_int_equal(fake_view_field_int(sum, "allocated"), 15 * 32 + 2 * 4096 + 32);
    assert_int_equal(fake_view_field_int(sum, "zygote"), 2 * 4096 + 32);
    assert_int_equal(fake_view_field_int(sum, "header_version"), s->version);
    assert_int_equal(fake_view_field_int(sum, "pointer_size"), s->ptr);
    assert_int_equal(fake_view_field_int(sum, "backtrace_depth"), s->bt);
    assert_int_equal(fake_view_field_int(sum, "mappings"), 3);
    assert_int_equal(fake_view_field_int(sum, "malloc_debug"), 1);

    /* by size: 4096 zygote (8192 B), 32 (480 B, 2 records), 32 zygote (32 B) */
    assert_int_equal(fake_view_n_rows(al), 3);
    assert_int_equal(fake_view_cell_int(al, 0, "size"), 4096);
    assert_int_equal(fake_view_cell_int(al, 0, "zygote"), 1);
    assert_int_equal(fake_view_cell_int(al, 0, "total"), 8192);
    assert_int_equal(fake_view_cell_int(al, 1, "size"), 32);
    assert_int_equal(fake_view_cell_int(al, 1, "zygote"), 0);
    assert_int_equal(fake_view_cell_int(al, 1, "count"), 15);
    assert_int_equal(fake_view_cell_int(al, 1, "records"), 2);
    assert_int_equal(fake_view_cell_int(al, 2, "zygote"), 1);
    assert_string_equal(fake_view_col_unit(al, "total"), "B");

    /* by backtrace */
    assert_int_equal(fake_view_n_rows(bt), 3);
    assert_string_equal(fake_view_cell_str(bt, 0, "frames"), "libc.so+0x10200 <- 0x50000000");
    assert_int_equal(fake_view_cell_int(bt, 0, "total"), 8192);
    r = fake_view_find_row(bt, "frames", "libc.so+0x100 <- libfoo.so+0x2010");
    assert_true(r >= 0);
    assert_int_equal(fake_view_cell_int(bt, r, "count"), 15);
    assert_int_equal(fake_view_cell_int(bt, r, "records"), 2);
    assert_true(fake_view_find_row(bt, "frames", "(no backtrace)") >= 0);
}

/* ------------------------------------------------------------------- tests */

static void test_ready_nhsg(void **state)
{
    fixture *f = *state;
    /* nobody watches the segments view: no NHSG at READY */
    assert_int_equal(fake_host_find_request(f->fh, f->vm, NHSG, 0), -1);
    assert_true(fake_host_owns(f->fh, NHST));
    assert_true(fake_host_owns(f->fh, NHSG));
    assert_true(fake_host_owns(f->fh, NHEN));
    assert_true(fake_host_owns(f->fh, NHGT));
    assert_true(fake_host_has_command(f->fh, "native-heap"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.segments"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.summary"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.allocations"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.backtraces"));
}

static void disable_nhsg(fake_host *fh) { fake_host_disable_chunk(fh, NHSG); }
static void disable_nhgt(fake_host *fh) { fake_host_disable_chunk(fh, NHGT); }
static void disable_nhgt_watched(fake_host *fh)
{
    fake_host_set_default_watchers(fh, 1);
    fake_host_disable_chunk(fh, NHGT);
}

static void test_disabled(void **state)
{
    fixture *f;
    (void)state;
    f = setup_with(NULL, disable_nhsg);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    assert_null(fake_view_find(f->fh, f->vm, "nativeheap.segments"));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.summary"));
    teardown((void **)&f);

    f = setup_with(NULL, disable_nhgt);
    assert_null(fake_view_find(f->fh, f->vm, "nativeheap.summary"));
    {
        const char *argv[] = { "native-heap", "7" };
        ddm_cmd *cmd = fake_host_run_command(f->fh, 2, argv);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        assert_int_equal(fake_host_find_request(f->fh, NULL, NHGT, 0), -1);
    }
    teardown((void **)&f);

    {
        static const char *const o[] = { "nativeheap.segments", "0", NULL };
        f = setup_with(o, NULL);
        assert_int_equal(fake_host_n_requests(f->fh), 0);
        teardown((void **)&f);
    }
}

static void send_u4(fixture *f, uint32_t type, uint32_t v)
{
    uint8_t b[4];
    ddm_put_u4(b, v);
    fake_host_deliver(f->fh, f->vm, type, DDM_ORIGIN_EVENT, b, 4);
}

static int send_piece(fixture *f, uint32_t heap, uint32_t units, const uint8_t *pairs, size_t n)
{
    ddm_writer w;
    uint8_t *buf;
    size_t len;
    int rc;
    ddm_writer_init(&w, 0);
    ddm_write_u4(&w, heap);
    ddm_write_u1(&w, 8);
    ddm_write_u4(&w, 0x40000000);
    ddm_write_u4(&w, 0);
    ddm_write_u4(&w, units);
    ddm_write_bytes(&w, pairs, n);
    buf = ddm_writer_take(&w, &len);
    rc = fake_host_deliver(f->fh, f->vm, NHSG, DDM_ORIGIN_EVENT, buf, len);
    free(buf);
    return rc;
}

/* An idle VM nobody looked at holds no state at all (views declared, ABI
 * 1.6); made by a look, the state holds no segment collector: an NHEN
 * alone makes none (it is only logged), the first NHST does. */
static void test_collector_lazy(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    nh_vm *nv = h->vm_get_data(fake_host_plugin(f->fh), f->vm);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };

    assert_null(nv);
    assert_int_equal(fake_host_n_views(f->fh, f->vm), 4);
    nv = h->vm_get_data(fake_host_plugin(f->fh), f->vm);
    assert_non_null(nv);
    assert_true(nv->ready);
    assert_null(nv->coll);
    send_u4(f, NHEN, 0);
    assert_true(fake_host_log_contains(f->fh, "NHEN for heap 0 without NHST"));
    assert_null(nv->coll);
    send_u4(f, NHST, 0);
    assert_non_null(nv->coll);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_int_equal(nv->coll->n_heaps, 1);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "nativeheap.segments")), 1);
}

static void test_segments(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "nativeheap.segments");
    /* free 4, native 2, free 3, free 1 (adjacent: extent 4), native 300 (partial) */
    static const uint8_t good[] = { 0x00, 3, 0x39, 1, 0x00, 2, 0x00, 0, 0xB9, 255, 0x39, 43 };
    static const uint8_t bad[] = { 0x00, 3 };

    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 310, good, sizeof good), DDM_OK);
    assert_true(send_piece(f, 0, 5, bad, sizeof bad) < 0);
    assert_true(fake_host_log_contains(f->fh, "rejected NHSG piece of heap 0"));
    assert_int_equal(fake_view_version(v), 0);
    send_u4(f, NHEN, 0);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_int_equal(fake_view_cell_int(v, 0, "free"), 8 * 8);
    assert_int_equal(fake_view_cell_int(v, 0, "free_count"), 3);
    assert_int_equal(fake_view_cell_int(v, 0, "native"), 302 * 8);
    assert_int_equal(fake_view_cell_int(v, 0, "native_count"), 2);
    assert_int_equal(fake_view_cell_int(v, 0, "largest_free"), 4 * 8);
    assert_int_equal(fake_view_cell_int(v, 0, "total"), 310 * 8);
    assert_int_equal(fake_view_cell_int(v, 0, "rejected"), 1);
    assert_int_equal(fake_view_cell_int(v, 0, "other"), 0);
    /* the native column of a VM list: NHSG's native bytes until an NHGT came */
    assert_string_equal(fake_host_headline(f->fh, f->vm, "native"), "2.4 KiB");

    /* NHEN without NHST; short chunks */
    send_u4(f, NHEN, 5);
    assert_true(fake_host_log_contains(f->fh, "NHEN for heap 5 without NHST"));
    assert_true(fake_host_deliver(f->fh, f->vm, NHST, DDM_ORIGIN_EVENT, "\1", 1) < 0);
    assert_true(fake_host_deliver(f->fh, f->vm, NHSG, DDM_ORIGIN_EVENT, "\1\2\3", 3) < 0);
    assert_true(fake_host_log_contains(f->fh, "too short"));
}

static void test_nhgt_variants(void **state)
{
    static const struct { int version; unsigned ptr; } variants[] = {
        { 1, 4 }, { 2, 4 }, { 2, 8 }, { 1, 8 } /* v1 from a 64-bit process: stride decides */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        fixture *f = setup_with(NULL, NULL);
        nhgt_spec s = { .version = variants[i].version, .ptr = variants[i].ptr,
                        .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                        .total_memory = 123456 };
        size_t len;
        uint8_t *p = build_nhgt(&s, &len);
        ddm_cmd *cmd;
        print_message("NHGT v%d, %u-byte pointers\n", s.version, s.ptr);
        cmd = run_nhgt(f, p, len);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
        assert_non_null(strstr(fake_cmd_message(cmd), "4 records, 18 allocations"));
        check_views(f, &s);
        free(p);
        teardown((void **)&f);
    }
}

static void test_nhgt_malloc_debug_off(void **state)
{
    fixture *f = *state;
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .bt = 0, .info_zero = 1,
                    .total_memory = 999 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    ddm_cmd *cmd = run_nhgt(f, p, len);
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "malloc debugging is off"));
    assert_int_equal(fake_view_field_int(sum, "total_memory"), 999);
    assert_int_equal(fake_view_field_int(sum, "malloc_debug"), 0);
    assert_int_equal(fake_view_n_rows(fake_view_find(f->fh, f->vm, "nativeheap.allocations")), 0);
    free(p);
}

typedef struct bad_case {
    const char *name;
    nhgt_spec spec;
    size_t cut;            /* if non-zero: truncate the payload to this length */
    const char *want;      /* substring of the failure message */
} bad_case;

static void test_nhgt_malformed(void **state)
{
    static const bad_case cases[] = {
        { "maps past end", { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3, .map_size_delta = 100000 }, 0, "maps" },
        { "allocations past end", { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3, .alloc_size_delta = 8 }, 0, "allocations" },
        { "v1 allocations past end", { .version = 1, .ptr = 4, .maps = maps_text, .recs = recs, .n = 4, .bt = 3, .alloc_size_delta = 1000 }, 0, "allocations" },
        { "record too small", { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3, .info_size_delta = -8 }, 0, "record size" },
        { "pointer size 3", { .version = 2, .ptr = 4, .hdr_ptr = 3, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 0, "pointer size 3" },
        { "version 3", { .version = 2, .ptr = 8, .hdr_version = 3, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 0, "version 3" },
        { "v2 header cut", { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 20, "cut short" },
        { "signature only", { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 6, "cut short" },
        { "v1 header cut", { .version = 1, .ptr = 4, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 19, "cut short" },
        { "bad signature, 3 bytes", { .version = 1, .ptr = 4, .maps = maps_text, .recs = recs, .n = 4, .bt = 3 }, 3, "cut short" },
        { "huge backtrace", { .version = 2, .ptr = 8, .recs = recs, .n = 0, .bt = 100000 }, 0, "backtrace size" },
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture *f = setup_with(NULL, NULL);
        size_t len;
        uint8_t *p = build_nhgt(&cases[i].spec, &len);
        ddm_cmd *cmd;
        print_message("case: %s\n", cases[i].name);
        if (cases[i].cut)
            len = cases[i].cut;
        cmd = run_nhgt(f, p, len);
        assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
        if (!strstr(fake_cmd_message(cmd), cases[i].want))
            fail_msg("%s: message '%s' lacks '%s'", cases[i].name, fake_cmd_message(cmd), cases[i].want);
        assert_true(fake_host_log_contains(f->fh, "bad NHGT reply"));
        assert_int_equal(fake_view_version(fake_view_find(f->fh, f->vm, "nativeheap.summary")), 0);
        free(p);
        teardown((void **)&f);
    }
}

static void test_nhgt_ragged_and_wide_records(void **state)
{
    fixture *f = *state;
    /* records with 8 extra bytes each (forward compatible), plus a stray tail */
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    ddm_cmd *cmd;
    /* declare 2 records of 48 bytes + 16 tail bytes over the 4*40 = 160 bytes present */
    {
        const unsigned hdr = 8;
        uint64_t info = 48, alloc = 48 * 3 + 16; /* 160 bytes: 3 records and a 16-byte tail */
        size_t k;
        for (k = 0; k < 8; k++) {
            p[hdr + 8 + k] = (uint8_t)(alloc >> (8 * k));
            p[hdr + 16 + k] = (uint8_t)(info >> (8 * k));
        }
    }
    cmd = run_nhgt(f, p, len);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(fake_view_find(f->fh, f->vm, "nativeheap.summary"), "records"), 3);
    assert_true(fake_host_log_contains(f->fh, "not a whole number of records"));
    free(p);
}

static void test_nhgt_reply_statuses(void **state)
{
    fixture *f = *state;
    const char *argv[] = { "native-heap", "7" };
    ddm_cmd *cmd;
    int idx = -1;

    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)(idx + 1));
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_TIMEOUT);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);

    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)(idx + 1));
    fake_host_complete_fail(f->fh, (size_t)idx, 1, "Something went wrong");
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "Something went wrong"));

    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)(idx + 1));
    fake_host_complete_status(f->fh, (size_t)idx, DDM_REPLY_EMPTY);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);

    cmd = fake_host_run_command(f->fh, 2, argv);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    {
        const char *a1[] = { "native-heap" };
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 1, a1)), DDM_CMD_USAGE);
        assert_int_equal(fake_cmd_status(fake_host_run_command(f->fh, 2, argv)), DDM_CMD_NOT_FOUND);
    }
}

/* A plain JVM (one the core lists as such) has no native heap: native-heap
 * says so, as hprof, gc and trace do, sends nothing and keeps no state for
 * it (it used to answer the request's "Transport endpoint is not
 * connected"). */
static void test_plain_jvm_refused(void **state)
{
    fixture *f = *state;
    ddm_vm *jvm = fake_host_add_plain_vm(f->fh, &(ddm_vm_info){ .pid = 61, .user_id = -1,
                                                                .native_debuggable = -1,
                                                                .key = "127.0.0.1:8061" });
    const char *argv[] = { "native-heap", "61" };
    size_t n0 = fake_host_n_requests(f->fh);
    ddm_cmd *cmd;

    fake_host_vm_event(f->fh, jvm, DDM_VM_READY); /* known as a plain JVM */
    cmd = fake_host_run_command(f->fh, 2, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_string_equal(fake_cmd_message(cmd),
                        "VM 61 is a plain JVM, not DDM-aware: native-heap needs a DDM VM (Android)");
    assert_int_equal(fake_host_n_requests(f->fh), n0);
    assert_null(fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), jvm));
}

static void test_nhsg_off_after_nhgt(void **state)
{
    /* segments off: NHGT is followed by NHSG(0, 1) as ddmlib does */
    static const char *const o[] = { "nativeheap.segments", "0", NULL };
    fixture *f = setup_with(o, NULL);
    const char *argv[] = { "native-heap", "7" };
    int i;
    const fake_request *rq;
    (void)state;
    fake_host_run_command(f->fh, 2, argv);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, NHGT, 0), 0);
    i = fake_host_find_request(f->fh, f->vm, NHSG, 0);
    assert_int_equal(i, 1);
    rq = fake_host_request(f->fh, (size_t)i);
    assert_int_equal(rq->data[0], 0);
    assert_int_equal(rq->data[1], 1);
    teardown((void **)&f);
    /* segments on (the default) but unwatched: off, so NHSG(0, 1) too */
    f = setup_with(NULL, NULL);
    fake_host_run_command(f->fh, 2, argv);
    i = fake_host_find_request(f->fh, f->vm, NHSG, 0);
    assert_true(i >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)i)->data[0], 0);
    teardown((void **)&f);
    /* watched: on, and no NHSG(0, 1) after NHGT */
    f = setup_with(NULL, NULL);
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.segments"), 1);
    fake_host_fire_timers(f->fh);
    i = fake_host_find_request(f->fh, f->vm, NHSG, 0);
    assert_true(i >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)i)->data[0], 1);
    fake_host_run_command(f->fh, 2, argv);
    assert_int_equal(fake_host_find_request(f->fh, f->vm, NHSG, (size_t)i + 1), -1);
    teardown((void **)&f);
}

/* NHGT's figures replace NHSG's in the headline, and stay. */
static void test_nhgt_headline(void **state)
{
    fixture *f = *state;
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    double fig = 0;
    assert_null(fake_host_headline(f->fh, f->vm, "native")); /* no figures yet */
    run_nhgt(f, p, len);
    check_views(f, &s);
    /* the headline: the bytes allocated (15 x 32 + 2 x 4096 + 32) */
    assert_string_equal(fake_host_headline(f->fh, f->vm, "native"), "8.5 KiB");
    assert_true(fake_host_headline_figure(f->fh, f->vm, "native_bytes", &fig));
    assert_true(fig == 8704.0);
    assert_true(fake_host_headline_figure(f->fh, f->vm, "native_allocations", &fig));
    assert_true(fig == 18.0);
    /* the same figures as metrics (1.3) */
    assert_true(fake_host_metric(f->fh, f->vm, "native_heap_bytes", NULL, &fig) && fig == 8704.0);
    assert_true(fake_host_metric(f->fh, f->vm, "native_heap_allocations", NULL, &fig) && fig == 18.0);
    /* a later NHSG update does not replace NHGT's figure */
    {
        static const uint8_t one[] = { 0x39, 0 };
        send_u4(f, NHST, 0);
        assert_int_equal(send_piece(f, 0, 1, one, sizeof one), DDM_OK);
        send_u4(f, NHEN, 0);
        assert_string_equal(fake_host_headline(f->fh, f->vm, "native"), "8.5 KiB");
    }
    free(p);
}

/* How many times @needle is in the log. */
static int log_occurrences(fixture *f, const char *needle)
{
    int n = 0;
    for (const char *p = fake_host_log_text(f->fh); (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* A VM whose metrics the host keeps refusing is logged once (the VM's
 * metric_logged, ddm_vm_metric_logged), not at every update; and each VM
 * once: a second VM refused after the first is logged too (a flag kept per
 * plugin would hide it). */
static void test_metric_refused_logged_once(void **state)
{
    fixture *f = *state;
    static const uint8_t one[] = { 0x39, 0 };
    ddm_vm *vms[2];
    int i;
    vms[0] = f->vm;
    vms[1] = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 8, .ddm = 1, .user_id = -1,
                                                     .key = "127.0.0.1:8008" });
    fake_host_vm_event(f->fh, vms[1], DDM_VM_READY);
    plugin_nh(f)->host = refusing_host_of(fake_host_table(f->fh));
    fake_host_log_clear(f->fh);
    for (i = 0; i < 6; i++) { /* the first VM's three updates, then the second's */
        f->vm = vms[i / 3];
        send_u4(f, NHST, 0);
        assert_int_equal(send_piece(f, 0, 1, one, sizeof one), DDM_OK);
        send_u4(f, NHEN, 0);
    }
    f->vm = vms[0];
    plugin_nh(f)->host = fake_host_table(f->fh);
    assert_int_equal(refused_metrics, 12); /* two families, three updates, two VMs */
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 2);
    assert_int_equal(log_occurrences(f, "VM 127.0.0.1:8007: metric native_heap_bytes not set"), 1);
    assert_int_equal(log_occurrences(f, "VM 127.0.0.1:8008: metric native_heap_bytes not set"), 1);
}

/* Issue 15, fault 2: an NHGT ddmon did not ask for (a VM can send a 64 MiB
 * one inside a 65 KB ZLIB chunk) is not processed: no view, no headline,
 * one warning naming the VM, then at most one a minute. */
static void test_nhgt_unsolicited_ignored(void **state)
{
    fixture *f = *state;
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    unsigned v0 = fake_view_version(sum);
    int i;

    fake_host_log_clear(f->fh);
    for (i = 0; i < 100; i++)
        assert_int_equal(fake_host_deliver(f->fh, f->vm, NHGT, DDM_ORIGIN_EVENT, p, len), DDM_OK);
    assert_int_equal(fake_view_version(sum), v0);
    assert_false(fake_view_has_field(sum, "records"));
    assert_null(fake_host_headline(f->fh, f->vm, "native"));
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);
    assert_true(fake_host_log_contains(f->fh, "127.0.0.1:8007"));
    assert_true(fake_host_log_contains(f->fh, "did not ask for"));
    g_now += 30; /* within the minute: quiet */
    fake_host_deliver(f->fh, f->vm, NHGT, DDM_ORIGIN_EVENT, p, len);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);
    g_now += 31; /* a minute later: one more line, saying more were ignored */
    fake_host_deliver(f->fh, f->vm, NHGT, DDM_ORIGIN_EVENT, p, 10); /* even a bad one */
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 2);
    assert_true(fake_host_log_contains(f->fh, "more were ignored"));
    assert_int_equal(fake_view_version(sum), v0);
    free(p);
}

/* A big NHGT that was asked for: 1,000,000 records, all of different sizes
 * and backtraces. Only the first NH_GROUP_RECORDS_MAX are grouped, and the
 * groups kept stay at the cap (here lowered to 1000):
 * memory does not follow the record count, the figures of every record
 * still count in the totals, the rest are counted as ungrouped, and the
 * grouping's work is linear (probes per record bounded, no per-record array
 * and qsort). */
static void test_nhgt_huge_bounded(void **state)
{
    fixture *f = *state;
    nh_plugin *np = fake_host_table(f->fh)->get_data(fake_host_plugin(f->fh));
    const size_t n = 1000000, cap = 1000;
    rec *many = calloc(n, sizeof *many);
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .n = n, .bt = 2,
                    .total_memory = 1 };
    ddm_view *al = fake_view_find(f->fh, f->vm, "nativeheap.allocations");
    ddm_view *bt = fake_view_find(f->fh, f->vm, "nativeheap.backtraces");
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    size_t i, len;
    uint8_t *p;
    ddm_cmd *cmd;

    assert_non_null(many);
    for (i = 0; i < n; i++) {
        many[i].size = 8 + i;
        many[i].count = 1;
        many[i].frames[0] = 0x10000000 + i;
        many[i].frames[1] = 0x30000000;
    }
    s.recs = many;
    p = build_nhgt(&s, &len);
    np->group_max = cap;
    cmd = run_nhgt(f, p, len);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_view_field_int(sum, "records"), (int64_t)n);
    assert_int_equal(fake_view_field_int(sum, "allocations"), (int64_t)n);
    assert_int_equal(fake_view_field_int(sum, "ungrouped"), (int64_t)(n - cap));
    /* every record's bytes count: sum of 8 + i */
    assert_int_equal(fake_view_field_int(sum, "allocated"), (int64_t)(8 * n + n * (n - 1) / 2));
    assert_int_equal(fake_view_n_rows(al), 500); /* max_rows */
    assert_int_equal(fake_view_n_rows(bt), 500);
    /* the biggest group kept first (groups are the first 1000 sizes met) */
    assert_int_equal(fake_view_cell_int(al, 0, "size"), 8 + (int64_t)cap - 1);
    /* linear work: a few probes per record and grouping, not n log n */
    assert_true(np->last_group_ops <= 8 * 2 * n);
    free(p);
    free(many);
}

/* Only the first NH_GROUP_RECORDS_MAX records are grouped (here 2): the
 * main loop's time per NHGT is bounded; the totals count every record. */
static void test_nhgt_grouping_budget(void **state)
{
    fixture *f = *state;
    nh_plugin *np = fake_host_table(f->fh)->get_data(fake_host_plugin(f->fh));
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    ddm_view *al = fake_view_find(f->fh, f->vm, "nativeheap.allocations");
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    np->group_records_max = 2;
    run_nhgt(f, p, len);
    assert_int_equal(fake_view_field_int(sum, "records"), 4);
    assert_int_equal(fake_view_field_int(sum, "ungrouped"), 2);
    assert_int_equal(fake_view_field_int(sum, "allocated"), 15 * 32 + 2 * 4096 + 32);
    assert_int_equal(fake_view_n_rows(al), 1); /* the first two records: one group */
    assert_int_equal(fake_view_cell_int(al, 0, "count"), 15);
    free(p);
}

/* ------------------------------------------------------------ NHGT poll */

static int n_nhgt(fixture *f)
{
    int n = 0, i = -1;
    while ((i = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)(i + 1))) >= 0)
        n++;
    return n;
}

static void test_poll_unwatched(void **state)
{
    fixture *f = *state;
    int i;
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_interval(f->fh, 0), NH_TICK_MS);
    /* the segments view is not an NHGT view: watching it asks for no NHGT */
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.segments"), 1);
    for (i = 0; i < 40; i++) {
        g_now += 1;
        fake_host_fire_timers(f->fh);
    }
    assert_int_equal(n_nhgt(f), 0);
}

/* ABI 1.4: with nobody watching, ticks ask no VM's watchers; a watch makes
 * one tick look at every VM, and then only the watched one is looked at.
 * (The plugin needs 1.4: on an older core it does not load, so the
 * walk-every-tick fallback of <ddmon/ticklist.h> is for plugins built
 * with a lower DDM_ABI_MINOR_REQUIRED.) */
static void test_tick_only_watched(void **state)
{
    enum { N = 50 };
    fake_host *fh = fake_host_new();
    nh_plugin *np;
    ddm_vm *vms[N];
    unsigned long q;
    int i;
    (void)state;
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    np = fake_host_table(fh)->get_data(fake_host_plugin(fh));
    np->now = fake_now;
    g_now = 100.0;
    for (i = 0; i < N; i++) {
        char key[32];
        snprintf(key, sizeof key, "127.0.0.1:%d", 9000 + i);
        vms[i] = fake_host_add_vm(fh, &(ddm_vm_info){ .pid = (uint32_t)(100 + i), .ddm = 1,
                                                      .user_id = -1, .key = key });
        fake_host_vm_event(fh, vms[i], DDM_VM_READY);
        /* its views made (as a frontend listing them would, ABI 1.6), so
         * that a walk's watcher queries count the VMs it visits */
        assert_int_equal(fake_host_n_views(fh, vms[i]), 4);
    }
    fake_host_fire_timers(fh); /* the first tick walks every VM */
    q = fake_host_watcher_queries(fh);
    for (i = 0; i < 20; i++) {
        g_now += 0.25;
        fake_host_fire_timers(fh);
    }
    assert_int_equal(fake_host_watcher_queries(fh) - q, 0);
    /* a watch on one VM: one full walk, then that VM only */
    fake_view_set_watchers(fake_view_find(fh, vms[7], "nativeheap.summary"), 1);
    g_now += 0.25;
    fake_host_fire_timers(fh);
    assert_true(fake_host_watcher_queries(fh) - q >= (unsigned long)N);
    q = fake_host_watcher_queries(fh);
    for (i = 0; i < 10; i++) {
        g_now += 0.25;
        fake_host_fire_timers(fh);
    }
    assert_true(fake_host_watcher_queries(fh) - q > 0);
    assert_true(fake_host_watcher_queries(fh) - q <= 10u * 4u); /* its four views at most */
    assert_true(fake_host_find_request(fh, vms[7], NHGT, 0) >= 0);
    assert_int_equal(fake_host_find_request(fh, vms[8], NHGT, 0), -1);
    /* the watch ends: one more walk, then nothing again */
    fake_view_set_watchers(fake_view_find(fh, vms[7], "nativeheap.summary"), 0);
    g_now += 0.25;
    fake_host_fire_timers(fh);
    q = fake_host_watcher_queries(fh);
    for (i = 0; i < 10; i++) {
        g_now += 0.25;
        fake_host_fire_timers(fh);
    }
    assert_int_equal(fake_host_watcher_queries(fh) - q, 0);
    /* a VM that goes away leaves no trace on the tick list: its state is
     * freed at GONE, so a node left behind would be walked after the free */
    fake_view_set_watchers(fake_view_find(fh, vms[9], "nativeheap.summary"), 1);
    g_now += 0.25;
    fake_host_fire_timers(fh);
    assert_non_null(np->ticks.head); /* watched: on the list, alone */
    assert_ptr_equal(DDM_TICK_OWNER(np->ticks.head, nh_vm, tick)->vm, vms[9]);
    assert_null(np->ticks.head->next);
    fake_host_vm_event(fh, vms[9], DDM_VM_GONE);
    assert_null(np->ticks.head);
    for (i = 0; i < 5; i++) {
        g_now += 0.25;
        fake_host_fire_timers(fh);
    }
    assert_null(np->ticks.head);
    fake_host_free(fh);
}

static void test_poll_watched(void **state)
{
    fixture *f = *state;
    ddm_view *sum = fake_view_find(f->fh, f->vm, "nativeheap.summary");
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    int idx;

    /* the watch begins: one NHGT at the next tick */
    fake_view_set_watchers(sum, 1);
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 1);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)idx)->len, 0);
    /* one in flight at a time */
    g_now = 100.5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 1);
    /* its reply fills the views, as the command's does */
    fake_host_complete_chunk(f->fh, (size_t)idx, NHGT, p, len);
    check_views(f, &s);
    /* the interval (10 s) counts from the last NHGT sent */
    g_now = 105.0;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 1);
    g_now = 109.8;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 1);
    g_now = 110.0;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 2);
    /* a refusal is logged once per VM, not at every interval */
    idx = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)idx + 1);
    fake_host_complete_fail(f->fh, (size_t)idx, 1, "Something went wrong");
    g_now = 120.0;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 3);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, (size_t)idx + 1);
    fake_host_complete_fail(f->fh, (size_t)idx, 1, "Something went wrong");
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_INFO), 1);
    assert_true(fake_host_log_contains(f->fh, "Something went wrong"));
    /* unwatched: none, however long */
    fake_view_set_watchers(sum, 0);
    g_now = 500.0;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 3);
    /* watched again (another NHGT view): at once */
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.backtraces"), 1);
    g_now = 500.3;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 4);
    /* the VM goes with one in flight: its reply is dropped quietly */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_int_equal(fake_host_n_pending(f->fh, NULL, NHGT), 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 4);
    free(p);
}

static void watch_all(fake_host *fh) { fake_host_set_default_watchers(fh, 1); }

static void test_poll_options(void **state)
{
    fixture *f;
    (void)state;
    /* watched when it becomes ready (a snapshot): NHGT at once */
    f = setup_with(NULL, watch_all);
    assert_int_equal(n_nhgt(f), 1);
    teardown((void **)&f);
    {   /* interval 0: NHGT on demand only; the tick stays for NHSG */
        static const char *const o[] = { "nativeheap.interval", "0", NULL };
        f = setup_with(o, watch_all);
        assert_int_equal(fake_host_n_timers(f->fh), 1);
        fake_host_fire_timers(f->fh);
        assert_int_equal(n_nhgt(f), 0);
        teardown((void **)&f);
    }
    {   /* ... and without NHSG switching: no timer */
        static const char *const o[] = { "nativeheap.interval", "0", "nativeheap.segments", "0",
                                         NULL };
        f = setup_with(o, watch_all);
        assert_int_equal(fake_host_n_timers(f->fh), 0);
        assert_int_equal(n_nhgt(f), 0);
        teardown((void **)&f);
    }
    {   /* 2000 ms */
        static const char *const o[] = { "nativeheap.interval", "2000", NULL };
        f = setup_with(o, watch_all);
        assert_int_equal(n_nhgt(f), 1);
        fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, NHGT, 0),
                                  DDM_REPLY_EMPTY);
        g_now += 1.5;
        fake_host_fire_timers(f->fh);
        assert_int_equal(n_nhgt(f), 1);
        g_now += 0.5;
        fake_host_fire_timers(f->fh);
        assert_int_equal(n_nhgt(f), 2);
        teardown((void **)&f);
    }
    {   /* too small: the minimum, with a warning */
        static const char *const o[] = { "nativeheap.interval", "5", NULL };
        f = setup_with(o, watch_all);
        assert_true(fake_host_log_contains(f->fh, "option interval=5"));
        assert_int_equal(n_nhgt(f), 1);
        fake_host_complete_status(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, NHGT, 0),
                                  DDM_REPLY_TIMEOUT);
        g_now += 0.5;
        fake_host_fire_timers(f->fh);
        assert_int_equal(n_nhgt(f), 1);
        g_now += 0.5;
        fake_host_fire_timers(f->fh);
        assert_int_equal(n_nhgt(f), 2);
        teardown((void **)&f);
    }
    /* NHGT disabled: never */
    f = setup_with(NULL, disable_nhgt_watched);
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 0);
    teardown((void **)&f);
}

/* ------------------------------------------------- NHSG while watched */

/* Number of NHSG requests to f->vm; *last gets the last one's "when" byte. */
static int n_nhsg(fixture *f, int *last)
{
    int n = 0, i = -1;
    while ((i = fake_host_find_request(f->fh, f->vm, NHSG, (size_t)(i + 1))) >= 0) {
        const fake_request *rq = fake_host_request(f->fh, (size_t)i);
        assert_int_equal(rq->len, 2);
        /* only the two forms: on (when 1, what 0), off (when 0, what 1) */
        assert_true((rq->data[0] == 1 && rq->data[1] == 0) || (rq->data[0] == 0 && rq->data[1] == 1));
        if (last)
            *last = rq->data[0];
        n++;
    }
    return n;
}

static void tick_at(fixture *f, double t)
{
    g_now = t;
    fake_host_fire_timers(f->fh);
}

static void test_segments_watch(void **state)
{
    fixture *f = *state;
    ddm_view *seg = fake_view_find(f->fh, f->vm, "nativeheap.segments");
    int last = -1;
    double t;

    /* unwatched: none, however long (other views watched do not count) */
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.summary"), 1);
    for (t = 101; t < 140; t += 1)
        tick_at(f, t);
    assert_int_equal(n_nhsg(f, NULL), 0);
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.summary"), 0);
    /* watched: NHSG(1, 0) at the next tick, once */
    fake_view_set_watchers(seg, 1);
    tick_at(f, 140);
    assert_int_equal(n_nhsg(f, &last), 1);
    assert_int_equal(last, 1);
    for (t = 141; t < 200; t += 1)
        tick_at(f, t);
    assert_int_equal(n_nhsg(f, NULL), 1);
    /* unwatched: still on during the grace period (10 s from the last look) */
    fake_view_set_watchers(seg, 0);
    tick_at(f, 205);
    tick_at(f, 208.9);
    assert_int_equal(n_nhsg(f, NULL), 1);
    /* a look during the grace period restarts it */
    fake_view_set_watchers(seg, 1);
    tick_at(f, 209);
    fake_view_set_watchers(seg, 0);
    tick_at(f, 218.9);
    assert_int_equal(n_nhsg(f, NULL), 1);
    /* past the grace period: NHSG(0, 1), once */
    tick_at(f, 219);
    assert_int_equal(n_nhsg(f, &last), 2);
    assert_int_equal(last, 0);
    tick_at(f, 300);
    assert_int_equal(n_nhsg(f, NULL), 2);
    /* watched again: on again */
    fake_view_set_watchers(seg, 1);
    tick_at(f, 301);
    assert_int_equal(n_nhsg(f, &last), 3);
    assert_int_equal(last, 1);
    /* a failed "off" is retried at the next tick, logged once */
    fake_view_set_watchers(seg, 0);
    fake_host_set_request_error_for(f->fh, NHSG, -ENOTCONN);
    tick_at(f, 320);
    tick_at(f, 321);
    assert_int_equal(n_nhsg(f, NULL), 3);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_INFO), 1);
    assert_true(fake_host_log_contains(f->fh, "cannot send NHSG(0, 1)"));
    fake_host_set_request_error_for(f->fh, NHSG, 0);
    tick_at(f, 322);
    assert_int_equal(n_nhsg(f, &last), 4);
    assert_int_equal(last, 0);
    /* a failed "on" too */
    fake_view_set_watchers(seg, 1);
    fake_host_set_request_error_for(f->fh, NHSG, -ENOTCONN);
    tick_at(f, 330);
    assert_int_equal(n_nhsg(f, NULL), 4);
    fake_host_set_request_error_for(f->fh, NHSG, 0);
    tick_at(f, 331);
    assert_int_equal(n_nhsg(f, &last), 5);
    assert_int_equal(last, 1);
    /* a refusal is logged */
    fake_host_complete_fail(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, NHSG, 0), 1,
                            "no native heap here");
    assert_true(fake_host_log_contains(f->fh, "no native heap here"));
    /* the VM goes while on: nothing more is sent to it */
    fake_view_set_watchers(seg, 0);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    tick_at(f, 400);
    assert_int_equal(n_nhsg(f, NULL), 5);
}

static void watch_segments_only(fake_host *fh)
{
    fake_host_set_default_watchers(fh, 1);
    fake_host_disable_chunk(fh, NHGT);
}

static void watch_none_enabled(fake_host *fh)
{
    watch_segments_only(fh);
    fake_host_disable_chunk(fh, NHSG);
}

static void fail_nhsg(fake_host *fh) { fake_host_set_request_error_for(fh, NHSG, -ENOTCONN); }

static void test_segments_watch_options(void **state)
{
    fixture *f;
    int last = -1;
    (void)state;
    /* already watched when it becomes ready (a snapshot): NHSG(1, 0) at once */
    f = setup_with(NULL, watch_segments_only);
    assert_int_equal(n_nhsg(f, &last), 1);
    assert_int_equal(last, 1);
    teardown((void **)&f);
    /* NHSG disabled (--chunks): never, watched or not */
    f = setup_with(NULL, watch_none_enabled);
    tick_at(f, 101);
    assert_int_equal(fake_host_n_requests(f->fh), 0);
    teardown((void **)&f);
    {   /* nativeheap.grace_ms */
        static const char *const o[] = { "nativeheap.grace_ms", "1000", NULL };
        f = setup_with(o, NULL);
        fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.segments"), 1);
        tick_at(f, 101);
        fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.segments"), 0);
        tick_at(f, 101.9);
        assert_int_equal(n_nhsg(f, NULL), 1);
        tick_at(f, 102);
        assert_int_equal(n_nhsg(f, &last), 2);
        assert_int_equal(last, 0);
        teardown((void **)&f);
    }
    {   /* nativeheap.always=1: on at READY, watched or not, never off */
        static const char *const o[] = { "nativeheap.always", "1", "nativeheap.interval", "0",
                                         NULL };
        f = setup_with(o, fail_nhsg);
        assert_int_equal(n_nhsg(f, NULL), 0);
        /* a failed "on" is retried at the next tick (there is one, even with
         * interval 0) */
        fake_host_set_request_error_for(f->fh, NHSG, 0);
        tick_at(f, 101);
        assert_int_equal(n_nhsg(f, &last), 1);
        assert_int_equal(last, 1);
        tick_at(f, 1000);
        assert_int_equal(n_nhsg(f, NULL), 1);
        teardown((void **)&f);
    }
    {   /* nativeheap.segments=0: never, even watched */
        static const char *const o[] = { "nativeheap.segments", "0", NULL };
        f = setup_with(o, watch_segments_only);
        tick_at(f, 101);
        assert_int_equal(n_nhsg(f, NULL), 0);
        teardown((void **)&f);
    }
}

static void test_maps(void **state)
{
    nh_maps m;
    char buf[64];
    (void)state;
    assert_int_equal(nh_maps_parse(&m, maps_text, sizeof maps_text - 1), 0);
    assert_int_equal(m.n, 3);
    nh_maps_symbolize(&m, 0x30000000, buf, sizeof buf);
    assert_string_equal(buf, "libfoo.so+0x2000");
    nh_maps_symbolize(&m, 0x30008000, buf, sizeof buf);
    assert_string_equal(buf, "0x30008000");
    nh_maps_symbolize(&m, 0x20000010, buf, sizeof buf);
    assert_string_equal(buf, "0x20000010");
    nh_maps_free(&m);
    assert_int_equal(nh_maps_parse(&m, NULL, 0), 0);
    assert_int_equal(m.n, 0);
    /* no trailing newline, CRLF, overlong hex */
    {
        static const char t[] = "1-2 r 0 0 0 /a/b\r\nffffffffffffffffff-1 r 0 0 0 /x\n3-4 r 0 0 0 /c";
        assert_int_equal(nh_maps_parse(&m, t, sizeof t - 1), 0);
        assert_int_equal(m.n, 2);
        nh_maps_symbolize(&m, 1, buf, sizeof buf);
        assert_string_equal(buf, "b+0x0");
        nh_maps_symbolize(&m, 3, buf, sizeof buf);
        assert_string_equal(buf, "c+0x0");
        nh_maps_free(&m);
    }
}

/* Plugin ABI 1.6: a ready VM nobody asked about holds no nativeheap view;
 * the first look at one makes the four as READY made them before (the
 * tables' columns, the summary record empty), and the tick then sees the
 * watch and polls. */
static void test_views_made_when_asked(void **state)
{
    fixture *f = *state;
    ddm_view *v;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0); /* a tick makes none */
    v = fake_view_find(f->fh, f->vm, "nativeheap.allocations");
    assert_non_null(v);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_string_equal(fake_view_title(v), "Native allocations by size");
    assert_int_equal(fake_view_n_cols(v), 5);
    assert_int_equal(fake_view_n_rows(v), 0);
    v = fake_view_find_made(f->fh, f->vm, "nativeheap.summary");
    assert_non_null(v);
    assert_int_equal(fake_view_kind(v), DDM_VIEW_RECORD);
    assert_int_equal(fake_view_n_fields(v), 0);
    assert_int_equal(fake_view_version(v), 0);
    v = fake_view_find_made(f->fh, f->vm, "nativeheap.segments");
    assert_non_null(v);
    assert_string_equal(fake_view_col_unit(v, "native"), "B");
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.summary"), 1);
    fake_host_fire_timers(f->fh);
    assert_true(fake_host_find_request(f->fh, f->vm, NHGT, 0) >= 0);
}

/* Views made when asked and unwatched for the core's linger go
 * (vm_view_unmake), and with the last of them the VM's state; the next
 * look makes them again, the same; a watched one stays with the state. */
static void test_views_unmade_when_unwatched(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_view *seg;

    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.summary"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
    assert_non_null(fake_view_find(f->fh, f->vm, "nativeheap.allocations"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_int_equal(fake_view_n_cols(fake_view_find_made(f->fh, f->vm, "nativeheap.allocations")), 5);
    seg = fake_view_find_made(f->fh, f->vm, "nativeheap.segments");
    fake_view_set_watchers(seg, 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 3);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "nativeheap.segments"), seg);
    assert_non_null(h->vm_get_data(fake_host_plugin(f->fh), f->vm));
}

/* Review rU 1-3 for nativeheap: a segments view made again shows the last
 * update the plugin holds; a view the data path makes after an unmake is
 * taken back too; the state kept at an unmake because NHSG was on goes
 * once NHSG is off. */
static void test_views_made_again_filled_and_state_freed(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };
    ddm_view *seg = fake_view_find(f->fh, f->vm, "nativeheap.segments");

    fake_view_set_watchers(seg, 1);
    fake_host_fire_timers(f->fh); /* NHSG on */
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_int_equal(fake_view_n_rows(seg), 1);
    fake_view_set_watchers(seg, 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_non_null(h->vm_get_data(self, f->vm)); /* NHSG still on */

    seg = fake_view_find(f->fh, f->vm, "nativeheap.segments");
    assert_int_equal(fake_view_n_rows(seg), 1); /* the update it holds */
    assert_int_equal(fake_view_cell_int(seg, 0, "total"), 6 * 8);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    /* an update after the unmake makes no view (review rU2 1) */
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    assert_non_null(h->vm_get_data(self, f->vm));
    /* with segments watched, an update fills it and makes none of the others */
    seg = fake_view_find(f->fh, f->vm, "nativeheap.segments");
    fake_view_set_watchers(seg, 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 3);
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 1);
    assert_int_equal(fake_view_n_rows(seg), 1);
    fake_view_set_watchers(seg, 0);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 1);
    /* nativeheap.grace_ms after the last look NHSG goes off, the state with it */
    g_now += 11;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm));
}

/* `ddmon native-heap` with no view open (review rU3 2): the reply makes
 * the views it fills, so a later look shows it; with nativeheap.interval=0
 * nothing else would ever ask NHGT. They are taken back after the linger. */
static void test_nhgt_command_makes_its_views(void **state)
{
    static const char *const opts[] = { "nativeheap.interval", "0", NULL };
    fixture *f = setup_with(opts, NULL);
    const char *argv[] = { "native-heap", "7" };
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p = build_nhgt(&s, &len);
    ddm_cmd *cmd;
    int idx;
    (void)state;

    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    cmd = fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, 0);
    assert_true(idx >= 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, NHGT, p, len);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    check_views(f, &s); /* the look finds them made and filled */
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    free(p);
    teardown((void **)&f);
}

/* Segment data nobody asked for (an update after NHSG off, a VM's
 * unsolicited NHST/NHSG/NHEN) is freed at the next tick (review rU3 3: the
 * state was on no tick list, kept until the watches changed); with NHGT's
 * headline the struct stays and the segments go. */
static void test_unasked_segments_freed_at_tick(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };
    const char *argv[] = { "native-heap", "7" };
    nhgt_spec s = { .version = 2, .ptr = 8, .maps = maps_text, .recs = recs, .n = 4, .bt = 3,
                    .total_memory = 123456 };
    size_t len;
    uint8_t *p;
    nh_vm *nv;
    int idx;

    for (int i = 0; i < 3; i++) { /* the first tick's walk of every VM is over */
        g_now += 1;
        fake_host_fire_timers(f->fh);
    }
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_non_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm));

    /* NHGT's headline keeps the struct: the segments go */
    p = build_nhgt(&s, &len);
    fake_host_run_command(f->fh, 2, argv);
    idx = fake_host_find_request(f->fh, f->vm, NHGT, 0);
    assert_true(idx >= 0);
    fake_host_complete_chunk(f->fh, (size_t)idx, NHGT, p, len);
    free(p);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 4);
    nv = h->vm_get_data(self, f->vm);
    assert_non_null(nv);
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_non_null(nv->coll);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), nv);
    assert_null(nv->coll);
    assert_int_equal(nv->data_came, 0); /* off the list: the next ticks skip it */
}

/* An update that never ends (NHST and pieces, no NHEN) is dropped once no
 * piece came for NH_UPDATE_STALL_MS, with one log line naming the VM, and
 * the state goes at that tick (it was kept busy forever: fU2's open defect);
 * one whose pieces keep coming is kept however long it takes, and ends. */
static void test_stalled_update_dropped(void **state)
{
    fixture *f = *state;
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };
    nh_vm *nv;
    const seg_heap *sh;

    for (int i = 0; i < 3; i++) { /* the first tick's walk of every VM is over */
        g_now += 1;
        fake_host_fire_timers(f->fh);
    }
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    nv = h->vm_get_data(self, f->vm);
    assert_non_null(nv);
    g_now += NH_UPDATE_STALL_MS / 1000.0 - 0.5; /* quiet, not for long enough */
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), nv);
    assert_false(fake_host_log_contains(f->fh, "no NHEN and no piece"));
    g_now += 0.5;
    fake_host_fire_timers(f->fh);
    assert_null(h->vm_get_data(self, f->vm)); /* dropped, then idle: freed */
    assert_true(fake_host_log_contains(f->fh, "no NHEN and no piece"));
    assert_true(fake_host_log_contains(f->fh, "limit 10000 ms"));
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);

    /* pieces 8 s apart for 48 s: kept, and NHEN publishes them all */
    send_u4(f, NHST, 0);
    nv = h->vm_get_data(self, f->vm);
    assert_non_null(nv);
    for (int i = 0; i < 6; i++) {
        g_now += 8;
        fake_host_fire_timers(f->fh);
        assert_ptr_equal(h->vm_get_data(self, f->vm), nv);
        assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    }
    g_now += 8;
    fake_host_fire_timers(f->fh);
    assert_ptr_equal(h->vm_get_data(self, f->vm), nv);
    send_u4(f, NHEN, 0);
    sh = seg_collector_heap(nv->coll, 0);
    assert_non_null(sh);
    assert_int_equal(sh->updates, 1);
    assert_int_equal(sh->current.accepted, 6);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1); /* the first one's */
}

/* An update begins (NHST, a piece) and stalls, with the poll tick @tick
 * asleep: the update wakes the tick, which keeps the young update, then
 * NH_UPDATE_STALL_MS later drops it with a warning, frees the idle VM's
 * state and sleeps again. */
static void stalled_update(fixture *f, uint32_t tick)
{
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    assert_non_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_non_null(h->vm_get_data(self, f->vm)); /* young */
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += NH_UPDATE_STALL_MS / 1000.0;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_true(fake_host_log_contains(f->fh, "no NHEN and no piece"));
    assert_null(h->vm_get_data(self, f->vm)); /* dropped, then idle: freed */
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
}

/* ABI 1.7: an idle tick (no VM on its list) sleeps; data that came wakes
 * it and it drops the stalled update 10 s later, then sleeps again; a
 * watch of an NHGT view wakes it and the NHGT goes. */
static void test_idle_tick_sleeps(void **state)
{
    fixture *f = *state;
    uint32_t tick = plugin_nh(f)->poll_timer;
    assert_true(tick != 0);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 0); /* asleep: nothing runs */
    stalled_update(f, tick); /* the tick has a deadline to check */
    /* a watch of an NHGT view: woken, and it asks */
    assert_int_equal(n_nhgt(f), 0);
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "nativeheap.summary"), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    g_now += 1;
    fake_host_fire_timers(f->fh);
    assert_int_equal(n_nhgt(f), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
}

/* The tick runs (nativeheap.interval > 0) but has nothing to send: NHGT
 * disabled, nativeheap.segments=0. Data that came still goes: a stalled
 * update is dropped, an unasked one freed, and the tick sleeps again (it
 * returned before its list, so the VM stayed on it and the tick kept at
 * 4 a second for good: review rI 3). */
static void test_tick_without_polls_sheds(void **state)
{
    static const char *const o[] = { "nativeheap.segments", "0", NULL };
    fixture *f = setup_with(o, disable_nhgt);
    const ddm_host *h = fake_host_table(f->fh);
    ddm_plugin *self = fake_host_plugin(f->fh);
    static const uint8_t good[] = { 0x00, 3, 0x39, 1 };
    uint32_t tick = plugin_nh(f)->poll_timer;
    (void)state;
    assert_true(tick != 0);
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    stalled_update(f, tick);
    /* a whole update nobody asked for: freed at the next tick */
    send_u4(f, NHST, 0);
    assert_int_equal(send_piece(f, 0, 6, good, sizeof good), DDM_OK);
    send_u4(f, NHEN, 0);
    assert_non_null(h->vm_get_data(self, f->vm));
    g_now += 1;
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_null(h->vm_get_data(self, f->vm));
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 1);
    assert_int_equal(fake_host_n_requests(f->fh), 0); /* nothing was sent */
    teardown((void **)&f);
}

static void abi_1_6(fake_host *fh)
{
    fake_host_set_abi_minor(fh, 6);
}

/* On a core before 1.7 DDM_TIMER_SLEEP is "keep": the tick runs on. */
static void test_idle_tick_keeps_on_old_core(void **state)
{
    fixture *f = setup_with(NULL, abi_1_6);
    uint32_t tick = plugin_nh(f)->poll_timer;
    (void)state;
    for (int i = 0; i < 3; i++) {
        g_now += 1;
        assert_int_equal(fake_host_fire_timers(f->fh), 1);
    }
    assert_int_equal(fake_host_timer_sleeping(f->fh, tick), 0);
    teardown((void **)&f);
}

static void abi_1_5(fake_host *fh)
{
    fake_host_set_abi_minor(fh, 5);
}

/* A core before 1.6 (no vm_view_declare): the four nativeheap views are
 * made at DDM_VM_READY, as before. */
static void test_old_core_views_at_ready(void **state)
{
    fixture *f = setup_with(NULL, abi_1_5);
    (void)state;
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 4);
    assert_non_null(fake_view_find_made(f->fh, f->vm, "nativeheap.summary"));
    assert_non_null(fake_view_find_made(f->fh, f->vm, "nativeheap.allocations"));
    assert_non_null(fake_view_find_made(f->fh, f->vm, "nativeheap.segments"));
    teardown((void **)&f);
}

/* State made by data (lazy views, 1.6) is not a ready VM's: an NHST that
 * comes before DDM_VM_READY leaves it not ready (unpolled) until READY. */
static void test_data_before_ready_not_ready(void **state)
{
    fixture *f = *state;
    ddm_vm *early = fake_host_add_vm(f->fh, &(ddm_vm_info){ .pid = 60, .ddm = 1, .user_id = -1,
                                                            .key = "127.0.0.1:8060" });
    size_t n0 = fake_host_n_requests(f->fh);
    nh_vm *nv;

    f->vm = early;
    send_u4(f, NHST, 1); /* before READY */
    nv = fake_host_table(f->fh)->vm_get_data(fake_host_plugin(f->fh), early);
    assert_non_null(nv);
    assert_int_equal(nv->ready, 0);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    /* a piece on the way: the update is not stalled (NH_UPDATE_STALL_MS) */
    assert_int_equal(send_piece(f, 1, 6, (const uint8_t[]){ 0x00, 3, 0x39, 1 }, 4), DDM_OK);
    g_now += 5;
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_requests(f->fh), n0);
    assert_int_equal(nv->ready, 0);
    fake_host_vm_event(f->fh, early, DDM_VM_READY);
    assert_int_equal(nv->ready, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_views_made_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_before_ready_not_ready, setup, teardown),
        cmocka_unit_test(test_old_core_views_at_ready),
        cmocka_unit_test_setup_teardown(test_views_unmade_when_unwatched, setup, teardown),
        cmocka_unit_test(test_nhgt_command_makes_its_views),
        cmocka_unit_test_setup_teardown(test_unasked_segments_freed_at_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_update_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_tick_sleeps, setup, teardown),
        cmocka_unit_test(test_tick_without_polls_sheds),
        cmocka_unit_test(test_idle_tick_keeps_on_old_core),
        cmocka_unit_test_setup_teardown(test_views_made_again_filled_and_state_freed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ready_nhsg, setup, teardown),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test_setup_teardown(test_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collector_lazy, setup, teardown),
        cmocka_unit_test(test_nhgt_variants),
        cmocka_unit_test_setup_teardown(test_nhgt_malloc_debug_off, setup, teardown),
        cmocka_unit_test(test_nhgt_malformed),
        cmocka_unit_test_setup_teardown(test_nhgt_ragged_and_wide_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nhgt_reply_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plain_jvm_refused, setup, teardown),
        cmocka_unit_test(test_nhsg_off_after_nhgt),
        cmocka_unit_test_setup_teardown(test_nhgt_headline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metric_refused_logged_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nhgt_unsolicited_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nhgt_huge_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nhgt_grouping_budget, setup, teardown),
        cmocka_unit_test(test_maps),
        cmocka_unit_test_setup_teardown(test_poll_unwatched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_watched, setup, teardown),
        cmocka_unit_test(test_tick_only_watched),
        cmocka_unit_test(test_poll_options),
        cmocka_unit_test_setup_teardown(test_segments_watch, setup, teardown),
        cmocka_unit_test(test_segments_watch_options),
    };
    return cmocka_run_group_tests_name("plugin-nativeheap", tests, NULL, NULL);
}
