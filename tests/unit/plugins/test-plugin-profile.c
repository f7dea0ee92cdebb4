/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of the profile plugin (plugins/profile/) on the SDK's test
 * kit: what it owns and asks at ready (MPRQ, shown as the headline and
 * figure), a streamed trace from start to file and views, a start the VM
 * refuses, a stop that gets no trace (timeout), a truncated stream, Ctrl-C
 * (the client went away) still saving the file, the device path
 * (MPRS/MPRE), usage errors, trace-summary on good and bad files (a
 * missing one a file error, exit 1), a core too old for streams, and
 * `trace VM --stop [FILE]` for a trace ddmon did not start (saved,
 * dropped, nothing running, a stop with no trace back), and the server
 * stopping (ABI 1.8 stopping hook): a trace ddmon started and has not
 * stopped gets its stop (MPSE, SPSE, MPRE) at the hook, nothing else does;
 * the trace that comes back is saved, marked as cut short, and the command
 * told; one cut off mid-stream is saved up to its last whole record; none
 * starts after the hook.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <ddmon/testkit.h>

#include "tests/harness/plugin-fixture.h"

#include "plugins/profile/profile.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

typedef struct Fx {
    fake_host *fh;
    ddm_vm *vm;     /* streams tracing and sampling */
    ddm_vm *dev;    /* method-trace-profiling only */
    char dir[64];
} Fx;

static const char *const feats_stream[] = {PROFILE_FEATURE_TRACING, PROFILE_FEATURE_STREAMING,
                                           PROFILE_FEATURE_SAMPLING};
static const char *const feats_device[] = {PROFILE_FEATURE_TRACING};

static int setup(void **state)
{
    Fx *f = calloc(1, sizeof *f);
    f->fh = fake_host_new();
    fake_host_set_config(f->fh, "profile.timeout_ms", "500");
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    f->vm = pfx_add_ready_vm(f->fh, "127.0.0.1:8000", 1234, "com.example.notes", feats_stream,
                             sizeof feats_stream / sizeof feats_stream[0]);
    f->dev = pfx_add_ready_vm(f->fh, "127.0.0.1:8001", 2345, "com.example:remote", feats_device, 1);
    pfx_client_dir_new(f->fh, "profile", f->dir, sizeof f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fx *f = *state;
    fake_host_free(f->fh);
    pfx_dir_remove(f->dir);
    free(f);
    return 0;
}

#define SAMPLE_TEXT_LEN 116u /* sample_trace's text header */

/* A small version 3 dual-clock trace: main calls run, which calls f twice. */
static uint8_t *sample_trace(size_t *len)
{
    static const char text[] = "*version\n3\nclock=dual\nvm=art\n*threads\n1\tmain\n*methods\n"
                               "0x100\tcom.a.A\trun\t()V\tA.java\n0x104\tcom.a.A\tf\t(I)I\tA.java\n*end\n";
    static const struct { uint32_t m, t; } recs[] = {
        {0x100, 0}, {0x104, 10}, {0x105, 15}, {0x104, 20}, {0x105, 30}, {0x101, 50}};
    size_t tl = sizeof text - 1, n = tl + 32 + 6 * 14;
    uint8_t *p = calloc(1, n), *h = p + tl;
    memcpy(p, text, tl);
    h[0] = 'S', h[1] = 'L', h[2] = 'O', h[3] = 'W', h[4] = 3, h[6] = 32, h[16] = 14;
    for (size_t i = 0; i < 6; i++) {
        uint8_t *r = p + tl + 32 + 14 * i;
        r[0] = 1;
        for (int b = 0; b < 4; b++) {
            r[2 + b] = (uint8_t)(recs[i].m >> (8 * b));
            r[6 + b] = (uint8_t)(recs[i].t >> (8 * b));
            r[10 + b] = (uint8_t)((recs[i].t * 2) >> (8 * b));
        }
    }
    *len = n;
    return p;
}

/* sample_trace's header with @pairs calls of f (enter, exit): 2 * @pairs
 * records of 14 bytes. */
static uint8_t *long_trace(size_t pairs, size_t *len)
{
    size_t n0;
    uint8_t *t = sample_trace(&n0), *p;
    size_t head = SAMPLE_TEXT_LEN + 32, n = head + 2 * pairs * 14;
    assert_non_null(p = calloc(1, n));
    memcpy(p, t, head);
    free(t);
    for (size_t i = 0; i < 2 * pairs; i++) {
        uint8_t *r = p + head + 14 * i;
        uint32_t m = 0x104 | (uint32_t)(i & 1), tm = (uint32_t)(10 * i);
        r[0] = 1;
        for (int b = 0; b < 4; b++) {
            r[2 + b] = (uint8_t)(m >> (8 * b));
            r[6 + b] = (uint8_t)(tm >> (8 * b));
            r[10 + b] = (uint8_t)(tm >> (8 * b));
        }
    }
    *len = n;
    return p;
}

/* The contents of @name in the fixture's folder (malloc), its size in @len. */
static uint8_t *slurp(const Fx *f, const char *name, size_t *len)
{
    char path[256];
    FILE *fp;
    uint8_t *buf = malloc(1 << 16);
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    assert_non_null(buf);
    assert_non_null(fp = fopen(path, "rb"));
    *len = fread(buf, 1, 1 << 16, fp);
    fclose(fp);
    return buf;
}

static int exists(const Fx *f, const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    return stat(path, &st) == 0;
}

/* Complete the ready-time MPRQ of both VMs (requests 0 and 1) with off. */
static void answer_ready_mprq(Fx *f)
{
    uint8_t off = 0;
    for (size_t i = 0; i < fake_host_n_requests(f->fh); i++) {
        const fake_request *r = fake_host_request(f->fh, i);
        if (r->type == PROFILE_CHUNK_MPRQ && !r->completed)
            fake_host_complete_chunk(f->fh, i, PROFILE_CHUNK_MPRQ, &off, 1);
    }
}

static int pending_index(Fx *f, ddm_vm *vm, uint32_t type)
{
    for (size_t i = 0; i < fake_host_n_requests(f->fh); i++) {
        const fake_request *r = fake_host_request(f->fh, i);
        if (r->vm == vm && r->type == type && !r->completed)
            return (int)i;
    }
    return -1;
}

/* Run `trace` with @args and take it to "running" (MPSS/SPSS/MPRS then MPRQ 1). */
static ddm_cmd *start_trace(Fx *f, int argc, const char *const *argv, ddm_vm *vm, uint32_t start_type,
                            uint8_t mode)
{
    ddm_cmd *cmd;
    int i;
    answer_ready_mprq(f);
    cmd = fake_host_run_command(f->fh, argc, argv);
    assert_false(fake_cmd_finished(cmd));
    i = pending_index(f, vm, start_type);
    assert_true(i >= 0);
    fake_host_complete_status(f->fh, (size_t)i, DDM_REPLY_TIMEOUT); /* ART: no answer */
    i = pending_index(f, vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &mode, 1);
    assert_false(fake_cmd_finished(cmd));
    return cmd;
}

static void test_owns_and_asks(void **state)
{
    Fx *f = *state;
    uint8_t sampling = 2;
    double v;
    assert_true(fake_host_owns_stream(f->fh, PROFILE_CHUNK_MPSE));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_MPRS));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_MPRE));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_MPSS));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_SPSS));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_SPSE));
    assert_true(fake_host_owns(f->fh, PROFILE_CHUNK_MPRQ));
    assert_true(fake_host_has_command(f->fh, "trace"));
    assert_true(fake_host_has_command(f->fh, "trace-summary"));
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &sampling, 1);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "trace"), "sampling");
    assert_null(fake_host_headline(f->fh, f->dev, "trace")); /* not yet answered */
    assert_int_equal(fake_host_headline_figure(f->fh, f->vm, "trace_mode", &v), 1);
    assert_true(v == 2.0);
    ddm_view *info = fake_view_find(f->fh, f->vm, "profile");
    assert_non_null(info);
}

/* Plugin ABI 1.6: the "profile" view of a VM nobody asked about is not made
 * at MPRQ's answer (the headline figure is); asked for, it shows what it
 * would have; asked before any answer, there is none, as before. */
static void test_view_made_when_asked(void **state)
{
    Fx *f = *state;
    uint8_t sampling = 2;
    ddm_view *info;
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    assert_null(fake_view_find(f->fh, f->vm, "profile")); /* nothing to show yet */
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &sampling, 1);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "trace"), "sampling");
    assert_null(fake_view_find_made(f->fh, f->vm, "profile"));
    assert_int_equal(fake_host_n_views_made(f->fh, f->vm), 0);
    info = fake_view_find(f->fh, f->vm, "profile");
    assert_non_null(info);
    assert_int_equal(fake_view_kind(info), DDM_VIEW_RECORD);
    assert_string_equal(fake_view_title(info), "Method profiling");
    assert_int_equal(fake_view_n_fields(info), 4);
    assert_string_equal(fake_view_field_str(info, "mode"), "sampling");
    assert_string_equal(fake_view_field_str(info, "ddmon_trace_running"), "false");
    assert_int_equal(fake_view_field_int(info, "traces_saved"), 0);
    assert_true(fake_view_has_field(info, "last_file"));
    assert_int_equal(fake_view_version(info), 1);
}

/* The view made when asked and unwatched for the core's linger goes
 * (vm_view_unmake); the next look makes it again from the state, the same
 * fields; a watched one stays. */
static void test_view_unmade_when_unwatched(void **state)
{
    Fx *f = *state;
    uint8_t sampling = 2;
    ddm_view *info;
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &sampling, 1);
    assert_non_null(fake_view_find(f->fh, f->vm, "profile"));
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 1);
    assert_null(fake_view_find_made(f->fh, f->vm, "profile"));
    info = fake_view_find(f->fh, f->vm, "profile");
    assert_non_null(info);
    assert_int_equal(fake_view_n_fields(info), 4);
    assert_string_equal(fake_view_field_str(info, "mode"), "sampling");
    assert_int_equal(fake_view_field_int(info, "traces_saved"), 0);
    fake_view_set_watchers(info, 1);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 0);
    assert_ptr_equal(fake_view_find_made(f->fh, f->vm, "profile"), info);
}

/* Issue 16: a VM that holds nothing but MPRQ's answer has no state (a
 * shared marker says the answer): asked before the answer, after it, by a
 * look (the view made from the marker, as it would have been) and once
 * the view is taken back. */
static void test_idle_vm_holds_no_state(void **state)
{
    Fx *f = *state;
    uint8_t sampling = 2, bad = 9;
    ddm_view *info;
    int i;

    assert_int_equal(profile_vm_states_alive(), 0); /* both MPRQs out */
    assert_null(fake_view_find(f->fh, f->vm, "profile")); /* nothing to show yet */
    assert_int_equal(profile_vm_states_alive(), 0);
    i = pending_index(f, f->dev, PROFILE_CHUNK_MPRQ);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &sampling, 1);
    answer_ready_mprq(f);
    assert_int_equal(profile_vm_states_alive(), 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(profile_vm_states_alive(), 0);

    info = fake_view_find(f->fh, f->vm, "profile");
    assert_non_null(info);
    assert_int_equal(profile_vm_states_alive(), 1);
    assert_int_equal(fake_view_n_fields(info), 4);
    assert_string_equal(fake_view_field_str(info, "mode"), "off");
    assert_int_equal(fake_view_field_int(info, "traces_saved"), 0);
    info = fake_view_find(f->fh, f->dev, "profile");
    assert_string_equal(fake_view_field_str(info, "mode"), "sampling");
    assert_int_equal(profile_vm_states_alive(), 2);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 2);
    assert_int_equal(profile_vm_states_alive(), 0);
    assert_string_equal(fake_host_headline(f->fh, f->dev, "trace"), "sampling");

    /* watched: polled, the state stays; the watch ends, it goes with the view */
    info = fake_view_find(f->fh, f->vm, "profile");
    fake_view_set_watchers(info, 1);
    fake_host_fire_timers(f->fh);
    i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &bad, 1); /* unknown */
    assert_int_equal(profile_vm_states_alive(), 1);
    fake_view_set_watchers(info, 0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 1);
    assert_int_equal(profile_vm_states_alive(), 0);
    info = fake_view_find(f->fh, f->vm, "profile"); /* made again from the marker */
    assert_non_null(info);
    assert_true(fake_view_has_field(info, "mode"));
    assert_null(fake_view_field_str(info, "mode"));
    assert_int_equal(fake_host_unmake_unwatched(f->fh), 1);
    assert_int_equal(profile_vm_states_alive(), 0);
}

/* MPRQ's byte is checked (0..2) in one place; a VM whose "profile" view is
 * watched is asked again every PROFILE_POLL_MS (an app may start a trace
 * itself), one that nobody watches is not. */
static void test_mprq_checked_and_polled(void **state)
{
    Fx *f = *state;
    uint8_t bad = 7, tracing = 1;
    double v;
    int i;
    answer_ready_mprq(f);
    assert_int_equal(fake_host_headline_figure(f->fh, f->vm, "trace_mode", &v), 1);
    assert_true(v == 0.0);
    fake_host_fire_timers(f->fh);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPRQ), -1); /* nobody watches */
    fake_view_set_watchers(fake_view_find(f->fh, f->vm, "profile"), 1);
    fake_host_fire_timers(f->fh);
    i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    assert_int_equal(pending_index(f, f->dev, PROFILE_CHUNK_MPRQ), -1);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &bad, 1);
    assert_int_equal(fake_host_headline_figure(f->fh, f->vm, "trace_mode", &v), 0); /* unknown */
    fake_host_fire_timers(f->fh);
    i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &tracing, 1);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "trace"), "tracing");
}

/* ABI 1.7: with no "profile" view watched the poll tick sleeps; a watch
 * wakes it and MPRQ goes; it sleeps again once the watch ended. */
static void test_idle_tick_sleeps(void **state)
{
    Fx *f = *state;
    ddm_view *v;
    int i;
    answer_ready_mprq(f);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 0);
    v = fake_view_find(f->fh, f->vm, "profile");
    fake_view_set_watchers(v, 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 0);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_view_set_watchers(v, 0);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 1);
}

static void test_streamed_trace(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "out.trace", "--tracing", "--seconds", "1", "--buffer", "1M"};
    size_t len;
    uint8_t *t = sample_trace(&len);
    ddm_cmd *cmd = start_trace(f, 8, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    const fake_request *r = fake_host_request(f->fh, (size_t)fake_host_find_request(f->fh, f->vm, PROFILE_CHUNK_MPSS, 0));
    assert_int_equal(r->len, 8);
    assert_memory_equal(r->data, "\0\x10\0\0\0\0\0\0", 8); /* 1 MiB, flags 0 */
    assert_true(exists(f, "out.trace.part"));
    assert_string_equal(fake_host_headline(f->fh, f->vm, "trace"), "tracing (ddmon)");
    fake_host_fire_timers(f->fh);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPSE), -1); /* not yet: 1 s */
    usleep(1050 * 1000);
    fake_host_fire_timers(f->fh);
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_MPSE) >= 0);
    /* the event comes before the (ART: no) reply */
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 7, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "written to"));
    assert_non_null(strstr(fake_cmd_message(cmd), "6 records"));
    assert_true(exists(f, "out.trace"));
    assert_false(exists(f, "out.trace.part"));
    ddm_view *m = fake_view_find(f->fh, f->vm, "profile.methods");
    assert_non_null(m);
    assert_int_equal(fake_view_n_rows(m), 2);
    assert_string_equal(fake_view_cell_str(m, 0, "method"), "com.a.A.run");
    assert_int_equal(fake_view_cell_int(m, 0, "calls"), 1);
    assert_int_equal(fake_view_cell_int(m, 0, "inclusive_us"), 50);
    assert_int_equal(fake_view_cell_int(m, 1, "calls"), 2);
    assert_int_equal(fake_view_cell_int(m, 1, "exclusive_us"), 15);
    assert_non_null(fake_view_find(f->fh, f->vm, "profile.threads"));
    /* MPRQ is asked again after the stop */
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_MPRQ) >= 0);
    free(t);
}

static void test_start_refused(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "x.trace", "--sampling=250"};
    uint8_t on = 1;
    answer_ready_mprq(f);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 4, argv);
    int i = pending_index(f, f->vm, PROFILE_CHUNK_SPSS);
    assert_true(i >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)i)->len, 12);
    assert_memory_equal(fake_host_request(f->fh, (size_t)i)->data + 8, "\0\0\0\xfa", 4);
    fake_host_complete_fail(f->fh, (size_t)i, 1, "Trace already in progress");
    fake_host_complete_chunk(f->fh, (size_t)pending_index(f, f->vm, PROFILE_CHUNK_MPRQ),
                             PROFILE_CHUNK_MPRQ, &on, 1);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "Trace already in progress"));
    /* MPRQ says something runs that is not ours: the message says how to stop it */
    assert_non_null(strstr(fake_cmd_message(cmd), "'ddmon trace 1234 --stop'"));
    assert_false(exists(f, "x.trace"));
    assert_false(exists(f, "x.trace.part"));
}

static void test_stop_gets_nothing(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "y.trace", "--tracing", "--seconds", "0"};
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    fake_cmd_cancel(cmd); /* Ctrl-C */
    fake_host_fire_timers(f->fh);
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPSE);
    assert_true(i >= 0);
    assert_int_equal(fake_host_request(f->fh, (size_t)i)->timeout_ms, 500); /* profile.timeout */
    fake_host_complete_status(f->fh, (size_t)i, DDM_REPLY_TIMEOUT);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "no trace came back"));
    assert_false(exists(f, "y.trace"));
    assert_false(exists(f, "y.trace.part"));
}

static void test_truncated_stream(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "z.trace", "--tracing", "--seconds", "0"};
    size_t len;
    uint8_t *t = sample_trace(&len);
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    fake_cmd_cancel(cmd);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 5, -EPROTO), -EPROTO);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "no file written"));
    assert_false(exists(f, "z.trace"));
    assert_false(exists(f, "z.trace.part"));
    free(t);
}

/* A complete trace the decoder refuses is still saved (the decoder's caps
 * are not dmtracedump's): OK, summary_error, no views, no .part. */
static void test_undecodable_kept(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "u.trace", "--tracing", "--seconds", "0"};
    static const uint8_t junk[] = "*version\n3\n*methods\nnot a method line\n*end\n";
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    fake_cmd_cancel(cmd);
    fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, junk, sizeof junk - 1, 3, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "no summary"));
    assert_true(exists(f, "u.trace"));
    assert_false(exists(f, "u.trace.part"));
    assert_null(fake_view_find(f->fh, f->vm, "profile.methods"));
}

static void test_cancel_saves(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "c.trace", "--sampling", "--seconds", "0"};
    size_t len;
    uint8_t *t = sample_trace(&len);
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_SPSS, 2);
    fake_host_fire_timers(f->fh);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_SPSE), -1); /* runs until Ctrl-C */
    fake_cmd_cancel(cmd);
    fake_host_fire_timers(f->fh);
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_SPSE) >= 0);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 0, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_true(exists(f, "c.trace"));
    assert_true(fake_host_log_contains(f->fh, "c.trace"));
    free(t);
}

static void test_device_path(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "127.0.0.1:8001", "--tracing", "--seconds", "1"};
    uint8_t ok = 0;
    ddm_cmd *cmd = start_trace(f, 5, argv, f->dev, PROFILE_CHUNK_MPRS, 1);
    const fake_request *r = fake_host_request(f->fh, (size_t)fake_host_find_request(f->fh, f->dev, PROFILE_CHUNK_MPRS, 0));
    /* u4 buffer, u4 flags, lstr "/sdcard/com.example_remote.trace" */
    assert_int_equal(r->len, 8 + 4 + 2 * strlen("/sdcard/com.example_remote.trace"));
    usleep(1050 * 1000);
    fake_host_fire_timers(f->fh);
    int i = pending_index(f, f->dev, PROFILE_CHUNK_MPRE);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRE, &ok, 1);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "on the device to /sdcard/com.example_remote.trace"));
}

static void test_usage(void **state)
{
    Fx *f = *state;
    const char *a1[] = {"trace", "notes", "f.trace"};
    const char *a2[] = {"trace", "127.0.0.1:8001", "f.trace", "--sampling"};
    const char *a3[] = {"trace", "notes", "f.trace", "--tracing", "--seconds", "x"};
    const char *a4[] = {"trace", "notes", "--tracing"};
    ddm_cmd *c = fake_host_run_command(f->fh, 3, a1);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_USAGE);
    c = fake_host_run_command(f->fh, 4, a2);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(c), "cannot sample"));
    c = fake_host_run_command(f->fh, 6, a3);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_USAGE);
    c = fake_host_run_command(f->fh, 3, a4);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_USAGE);
    assert_false(exists(f, "f.trace.part"));
}

static ddm_cmd *summary(Fx *f, int argc, const char *const *argv)
{
    ddm_cmd *cmd = fake_host_run_command(f->fh, argc, argv);
    for (int i = 0; i < 100 && !fake_cmd_finished(cmd); i++)
        fake_host_fire_timers(f->fh);
    assert_true(fake_cmd_finished(cmd));
    return cmd;
}

static void test_trace_summary(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *t = sample_trace(&len);
    char path[256];
    FILE *fp;
    snprintf(path, sizeof path, "%s/s.trace", f->dir);
    fp = fopen(path, "wb");
    fwrite(t, 1, len, fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/bad.trace", f->dir);
    fp = fopen(path, "wb");
    fwrite(t, 1, len - 3, fp);
    fclose(fp);

    const char *a1[] = {"trace-summary", "s.trace", "--top", "1"};
    ddm_cmd *c = summary(f, 4, a1);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_OK);
    ddm_view *v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 1); /* run: top by inclusive (50) and by exclusive (35) */
    assert_int_equal(fake_view_cell_int(v, 0, "exclusive_us"), 35);
    assert_int_equal(fake_view_cell_int(v, 0, "rank_exclusive"), 1);
    assert_non_null(strstr(fake_cmd_message(c), "version 3, dual clock, 6 records"));
    const char *a2[] = {"trace-summary", "s.trace", "--threads"};
    c = summary(f, 3, a2);
    v = fake_cmd_result(c);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_string_equal(fake_view_cell_str(v, 0, "name"), "main");
    assert_int_equal(fake_view_cell_int(v, 0, "calls"), 3);
    const char *a3[] = {"trace-summary", "bad.trace"};
    c = summary(f, 2, a3);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(c), "truncated"));
    const char *a4[] = {"trace-summary", "missing.trace"};
    c = fake_host_run_command(f->fh, 2, a4);
    /* a file error (1), not "no VM or view matched" (3) */
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED);
    const char *a5[] = {"trace", "notes", ".", "--tracing"};
    answer_ready_mprq(f);
    c = fake_host_run_command(f->fh, 4, a5);
    assert_int_equal(fake_cmd_status(c), DDM_CMD_FAILED); /* as hprof's: not usage (2) */
    assert_non_null(strstr(fake_cmd_message(c), "is a directory"));
    free(t);
}

static void test_stray_trace(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *t = sample_trace(&len);
    fake_host_log_clear(f->fh);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 0, 0), -ENOENT);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 0, 0), -ENOENT);
    assert_true(fake_host_log_contains(f->fh, "127.0.0.1:8000: a method trace of"));
    const char *log = fake_host_log_text(f->fh);
    const char *first = strstr(log, "no command asked for");
    assert_non_null(first);
    assert_null(strstr(first + 1, "no command asked for")); /* once per VM */
    free(t);
}

/* `trace VM --stop [FILE]`: MPRQ, then the stop MPRQ's mode calls for. */
static ddm_cmd *stop_cmd(Fx *f, const char *file, uint8_t mode, uint32_t want_stop)
{
    const char *argv[] = {"trace", "notes", "--stop", file};
    ddm_cmd *cmd;
    int i;
    answer_ready_mprq(f);
    cmd = fake_host_run_command(f->fh, file ? 4 : 3, argv);
    assert_false(fake_cmd_finished(cmd));
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_SPSS), -1); /* nothing starts */
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPSS), -1);
    i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &mode, 1);
    if (want_stop)
        assert_true(pending_index(f, f->vm, want_stop) >= 0);
    return cmd;
}

static void test_stop_only_saves(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *t = sample_trace(&len);
    ddm_cmd *cmd = stop_cmd(f, "kept.trace", PROFILE_MODE_SAMPLING, PROFILE_CHUNK_SPSE);
    assert_true(exists(f, "kept.trace.part"));
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 7, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "sampling of 127.0.0.1:8000 written to"));
    assert_true(exists(f, "kept.trace"));
    assert_false(exists(f, "kept.trace.part"));
    free(t);
}

static void test_stop_only_discards(void **state)
{
    Fx *f = *state;
    size_t len;
    uint8_t *t = sample_trace(&len);
    ddm_cmd *cmd = stop_cmd(f, NULL, PROFILE_MODE_TRACING, PROFILE_CHUNK_MPSE);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_SPSE), -1);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 7, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "discarded"));
    free(t);
}

static void test_stop_only_nothing_runs(void **state)
{
    Fx *f = *state;
    ddm_cmd *cmd = stop_cmd(f, "none.trace", PROFILE_MODE_OFF, 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "nothing to stop"));
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPSE), -1);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_SPSE), -1);
    assert_false(exists(f, "none.trace"));
    assert_false(exists(f, "none.trace.part"));
}

/* No trace back (a device trace, ART sends nothing): MPRQ after the stop decides. */
static void test_stop_only_no_trace_back(void **state)
{
    Fx *f = *state;
    uint8_t mode;
    ddm_cmd *cmd = stop_cmd(f, "gone.trace", PROFILE_MODE_TRACING, PROFILE_CHUNK_MPSE);
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPRQ);
    assert_true(i >= 0);
    mode = PROFILE_MODE_TRACING; /* still runs: the stop did not work */
    fake_host_complete_chunk(f->fh, (size_t)i, PROFILE_CHUNK_MPRQ, &mode, 1);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "still says tracing"));
    fake_host_complete_status(f->fh, (size_t)pending_index(f, f->vm, PROFILE_CHUNK_MPSE),
                              DDM_REPLY_TIMEOUT);
    assert_false(exists(f, "gone.trace"));
    assert_false(exists(f, "gone.trace.part"));

    cmd = stop_cmd(f, NULL, PROFILE_MODE_TRACING, PROFILE_CHUNK_MPSE);
    mode = PROFILE_MODE_OFF;
    fake_host_complete_chunk(f->fh, (size_t)pending_index(f, f->vm, PROFILE_CHUNK_MPRQ),
                             PROFILE_CHUNK_MPRQ, &mode, 1);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "sent no trace"));
    fake_host_complete_status(f->fh, (size_t)pending_index(f, f->vm, PROFILE_CHUNK_MPSE),
                              DDM_REPLY_TIMEOUT);
}

/* `--stop FILE` with a FIFO at FILE: refused before the VM is asked (as a
 * trace's start is), so a trace the stop brings back is never read into a
 * file that cannot be written; the FIFO is left as it was. */
static void test_stop_only_refuses_fifo(void **state)
{
    Fx *f = *state;
    char path[4096];
    struct stat st;
    const char *argv[] = {"trace", "notes", "--stop", "pipe.trace"};
    snprintf(path, sizeof path, "%s/pipe.trace", f->dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    answer_ready_mprq(f);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 4, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "not a regular file"));
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPRQ), -1); /* the VM not asked */
    assert_false(exists(f, "pipe.trace.part"));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

static void test_stop_usage(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "--stop", "--sampling"};
    ddm_cmd *cmd = fake_host_run_command(f->fh, 4, argv);
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
}

/* Requests of @type to @vm so far, completed or not. */
static int n_requests_of(Fx *f, ddm_vm *vm, uint32_t type)
{
    int n = 0;
    for (size_t i = 0; i < fake_host_n_requests(f->fh); i++) {
        const fake_request *r = fake_host_request(f->fh, i);
        n += r->vm == vm && r->type == type;
    }
    return n;
}

/* The server stops while a streamed trace runs (--seconds 0: until
 * Ctrl-C, which never comes): its stop goes out at the hook, while the VM
 * is still there; the job ends when the VM goes (the closes that follow). */
static void test_stopping_stops_trace(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "s.trace", "--tracing", "--seconds", "0"};
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    size_t before;
    fake_host_fire_timers(f->fh);
    assert_int_equal(pending_index(f, f->vm, PROFILE_CHUNK_MPSE), -1); /* runs on */
    assert_int_equal(fake_host_n_stopping_hooks(f->fh), 1);
    before = fake_host_n_requests(f->fh);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_MPSE) >= 0);
    assert_int_equal(fake_host_n_requests(f->fh), before + 1); /* the stop, nothing else */
    assert_int_equal(n_requests_of(f, f->dev, PROFILE_CHUNK_MPRE), 0); /* nothing ran there */
    assert_true(fake_host_log_contains(f->fh, "ddmon is stopping: tracing stopped (MPSE sent)"));
    assert_int_equal(fake_host_stopping(f->fh), 0); /* once */
    assert_int_equal(n_requests_of(f, f->vm, PROFILE_CHUNK_MPSE), 1);
    assert_false(fake_cmd_finished(cmd));
    /* the core's wait ended before the VM sent anything: nothing to keep */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "ddmon stopped before the VM sent the trace"));
    assert_true(fake_host_log_contains(f->fh, "ddmon stopped before the VM sent the trace"));
    assert_false(exists(f, "s.trace"));
    assert_false(exists(f, "s.trace.part"));
}

/* The trace that comes back while the core waits for the answers is saved
 * (marked as cut short in its *version section), its command told where,
 * and the log says so too (the client may be gone). */
static void test_stopping_saves_trace(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "k.trace", "--tracing", "--seconds", "0"};
    static const char mark[] = "ddmon-cut-short=server-stopped\n";
    size_t len, got;
    uint8_t *t = sample_trace(&len), *file;
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPSE);
    assert_true(i >= 0);
    /* in pieces of 5: the version line's newline is inside a piece */
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 5, 0), 0);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "written to"));
    assert_non_null(strstr(fake_cmd_message(cmd), "k.trace"));
    assert_non_null(strstr(fake_cmd_message(cmd), "6 records"));
    assert_non_null(strstr(fake_cmd_message(cmd), "cut short: ddmon is stopping"));
    assert_true(fake_host_log_contains(f->fh, "k.trace"));
    assert_false(exists(f, "k.trace.part"));
    file = slurp(f, "k.trace", &got);
    assert_int_equal(got, len + sizeof mark - 1);
    assert_memory_equal(file, "*version\n3\n", 11);
    assert_memory_equal(file + 11, mark, sizeof mark - 1);
    assert_memory_equal(file + 11 + sizeof mark - 1, t + 11, len - 11);
    fake_host_complete_status(f->fh, (size_t)i, DDM_REPLY_EMPTY); /* the stop's answer */
    free(file);
    free(t);
}

/* The VM's connection closed in the middle of the trace (the core's wait
 * ended, or the VM went): what arrived is kept up to its last whole
 * record, a valid shorter trace, and the message and log say so. */
static void test_stopping_keeps_cut_stream(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "h.trace", "--tracing", "--seconds", "0"};
    static const char mark[] = "ddmon-cut-short=server-stopped\n";
    size_t len, got, whole;
    uint8_t *t = long_trace(20, &len), *file;
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    /* half arrives: the headers and some records, the last one cut */
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 64, -EPIPE), -EPIPE);
    whole = (len / 2 - SAMPLE_TEXT_LEN - 32) / 14;
    assert_true(whole > 0 && (len / 2 - SAMPLE_TEXT_LEN - 32) % 14 != 0);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    assert_non_null(strstr(fake_cmd_message(cmd), "only"));
    assert_non_null(strstr(fake_cmd_message(cmd), "last whole record"));
    assert_true(fake_host_log_contains(f->fh, "h.trace"));
    assert_false(exists(f, "h.trace.part"));
    file = slurp(f, "h.trace", &got);
    assert_int_equal(got, SAMPLE_TEXT_LEN + sizeof mark - 1 + 32 + whole * 14);
    assert_memory_equal(file + 11, mark, sizeof mark - 1);
    assert_memory_equal(file + 11 + sizeof mark - 1, t + 11, got - 11 - (sizeof mark - 1));
    free(file);
    free(t);
}

/* Cut before the headers were through: nothing valid to keep. */
static void test_stopping_cut_in_header(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "e.trace", "--tracing", "--seconds", "0"};
    size_t len;
    uint8_t *t = sample_trace(&len); /* half of it ends inside the text header */
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 0, -EPIPE), -EPIPE);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "nothing saved"));
    assert_true(fake_host_log_contains(f->fh, "nothing saved"));
    assert_false(exists(f, "e.trace"));
    assert_false(exists(f, "e.trace.part"));
    free(t);
}

/* While stopping, a stream error the stop did not cause (the VM's packet
 * ended short: -EPROTO) is reported as what it is, not as cut by the stop. */
static void test_stopping_other_error_not_cut(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "p.trace", "--tracing", "--seconds", "0"};
    size_t len;
    uint8_t *t = long_trace(20, &len);
    ddm_cmd *cmd = start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_int_equal(fake_host_stream(f->fh, f->vm, PROFILE_CHUNK_MPSE, t, len, 64, -EPROTO), -EPROTO);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "packet ended before"));
    assert_null(strstr(fake_cmd_message(cmd), "before ddmon stopped"));
    assert_false(exists(f, "p.trace"));
    assert_false(exists(f, "p.trace.part"));
    free(t);
}

/* After the hook no trace starts (the core closes the VMs soon after). */
static void test_stopping_refuses_new(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "n.trace", "--tracing", "--seconds", "0"};
    const char *sargv[] = {"trace", "notes", "--stop"};
    answer_ready_mprq(f);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    size_t before = fake_host_n_requests(f->fh);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 6, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_non_null(strstr(fake_cmd_message(cmd), "ddmon is stopping"));
    cmd = fake_host_run_command(f->fh, 3, sargv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_int_equal(fake_host_n_requests(f->fh), before);
    assert_false(exists(f, "n.trace.part"));
}

/* Sampling gets SPSE, a device trace MPRE (the VM writes its file). */
static void test_stopping_sampling_and_device(void **state)
{
    Fx *f = *state;
    const char *sargv[] = {"trace", "notes", "p.trace", "--sampling", "--seconds", "0"};
    const char *dargv[] = {"trace", "127.0.0.1:8001", "--tracing", "--seconds", "0"};
    (void)start_trace(f, 6, sargv, f->vm, PROFILE_CHUNK_SPSS, 2);
    (void)start_trace(f, 5, dargv, f->dev, PROFILE_CHUNK_MPRS, 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_SPSE) >= 0);
    assert_int_equal(n_requests_of(f, f->vm, PROFILE_CHUNK_MPSE), 0);
    assert_true(pending_index(f, f->dev, PROFILE_CHUNK_MPRE) >= 0);
}

/* A start that went out and was not confirmed yet is stopped too (the VM
 * handles requests in order); a trace whose stop went already gets none
 * again, and a trace ddmon did not start (MPRQ says tracing, no job) is
 * none of ddmon's business. */
static void test_stopping_sends_only_what_is_due(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "q.trace", "--tracing", "--seconds", "1"};
    const char *dargv[] = {"trace", "127.0.0.1:8001", "--tracing", "--seconds", "0"};
    uint8_t tracing = 1;
    ddm_cmd *cmd;
    int i;
    (void)start_trace(f, 6, argv, f->vm, PROFILE_CHUNK_MPSS, 1);
    cmd = fake_host_run_command(f->fh, 5, dargv); /* starting: MPRS and MPRQ out */
    assert_false(fake_cmd_finished(cmd));
    usleep(1050 * 1000);
    fake_host_fire_timers(f->fh); /* its second is up: MPSE sent */
    assert_int_equal(n_requests_of(f, f->vm, PROFILE_CHUNK_MPSE), 1);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_int_equal(n_requests_of(f, f->vm, PROFILE_CHUNK_MPSE), 1);
    assert_int_equal(n_requests_of(f, f->dev, PROFILE_CHUNK_MPRE), 1);
    /* another host: an app's own trace (MPRQ at ready says tracing) */
    fake_host *fh = fake_host_new();
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    ddm_vm *vm = pfx_add_ready_vm(fh, "127.0.0.1:8002", 3456, "com.example.app", feats_stream,
                                  sizeof feats_stream / sizeof feats_stream[0]);
    i = fake_host_find_request(fh, vm, PROFILE_CHUNK_MPRQ, 0);
    assert_true(i >= 0);
    fake_host_complete_chunk(fh, (size_t)i, PROFILE_CHUNK_MPRQ, &tracing, 1);
    size_t before = fake_host_n_requests(fh);
    assert_int_equal(fake_host_stopping(fh), 1);
    assert_int_equal(fake_host_n_requests(fh), before);
    fake_host_free(fh);
}

/* A start the VM refused (FAIL: the app traces already), its MPRQ not
 * answered yet when the server stops: the trace that runs is not ddmon's,
 * and no stop goes out (review rS 1). */
static void test_stopping_leaves_a_refused_start(void **state)
{
    Fx *f = *state;
    const char *argv[] = {"trace", "notes", "r.trace", "--tracing", "--seconds", "0"};
    answer_ready_mprq(f);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 6, argv);
    assert_false(fake_cmd_finished(cmd));
    int i = pending_index(f, f->vm, PROFILE_CHUNK_MPSS);
    assert_true(i >= 0);
    fake_host_complete_fail(f->fh, (size_t)i, 1, "Trace already in progress");
    assert_true(pending_index(f, f->vm, PROFILE_CHUNK_MPRQ) >= 0); /* not answered yet */
    size_t before = fake_host_n_requests(f->fh);
    assert_int_equal(fake_host_stopping(f->fh), 1);
    assert_int_equal(fake_host_n_requests(f->fh), before);
    assert_int_equal(n_requests_of(f, f->vm, PROFILE_CHUNK_MPSE), 0);
}

/* A 1.7 core has no stopping hook: the plugin loads without one. */
static void test_stopping_old_core(void **state)
{
    fake_host *fh = fake_host_new();
    (void)state;
    fake_host_set_abi_minor(fh, 7);
    assert_int_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    assert_int_equal(fake_host_n_stopping_hooks(fh), 0);
    assert_int_equal(fake_host_stopping(fh), 0);
    fake_host_free(fh);
}

static void test_old_core(void **state)
{
    fake_host *fh = fake_host_new();
    (void)state;
    fake_host_set_abi_minor(fh, 1);
    assert_true(fake_host_load(fh, &ddm_plugin_descriptor) != 0);
    assert_false(fake_host_has_command(fh, "trace"));
    fake_host_free(fh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_owns_and_asks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_made_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_unmade_when_unwatched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_vm_holds_no_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mprq_checked_and_polled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_tick_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streamed_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_gets_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undecodable_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_saves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trace_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stray_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_only_saves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_only_discards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_only_nothing_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_only_no_trace_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_only_refuses_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_stops_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_saves_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_keeps_cut_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_cut_in_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_other_error_not_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_refuses_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_sampling_and_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_sends_only_what_is_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stopping_leaves_a_refused_start, setup, teardown),
        cmocka_unit_test(test_stopping_old_core),
        cmocka_unit_test(test_old_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
