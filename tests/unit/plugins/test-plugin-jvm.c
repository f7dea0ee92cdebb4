/* SPDX-License-Identifier: Apache-2.0
 *
 * The jvm plugin (plugins/jvm) on the test kit: a plain JVM whose JDWP
 * commands the test answers. The threads view fills from AllThreads and the
 * per-thread replies and nothing is ever suspended by polling; polling stops
 * while a debugger is attached; jvm-stack suspends one thread only with
 * --suspend, reads its frames and resumes it, also when a reply fails; the
 * vminfo record. All ids are 8 bytes (IDSizes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <ddmon/plugin.h>
#include <ddmon/testkit.h>

#include "plugins/jvm/jvm.h" /* the plugin's clock and host table, swapped by one test */
#include "refusing-host.h"

extern const ddm_plugin_desc ddm_plugin_descriptor;

/* ------------------------------------------------------- reply builder */

typedef struct buf {
    uint8_t d[512];
    size_t n;
} buf;

static void b_u1(buf *b, uint8_t v)
{
    assert_true(b->n < sizeof b->d);
    b->d[b->n++] = v;
}

static void b_u4(buf *b, uint32_t v)
{
    for (int i = 3; i >= 0; i--)
        b_u1(b, (uint8_t)(v >> (8 * i)));
}

static void b_u8(buf *b, uint64_t v)
{
    for (int i = 7; i >= 0; i--)
        b_u1(b, (uint8_t)(v >> (8 * i)));
}

static void b_str(buf *b, const char *s)
{
    b_u4(b, (uint32_t)strlen(s));
    while (*s)
        b_u1(b, (uint8_t)*s++);
}

typedef struct fixture {
    fake_host *fh;
    ddm_vm *vm;
    size_t seen; /* JDWP requests looked at so far */
} fixture;

/* The next JDWP request not yet looked at: it must be @set/@cmd. */
static size_t next_jdwp(fixture *f, uint8_t set, uint8_t cmd)
{
    const fake_jdwp_request *rq = fake_host_jdwp_request(f->fh, f->seen);
    if (!rq)
        fail_msg("no JDWP request %zu (want %u/%u)", f->seen, set, cmd);
    if (rq->cmdset != set || rq->cmd != cmd)
        fail_msg("JDWP request %zu is %u/%u, want %u/%u", f->seen, rq->cmdset, rq->cmd, set, cmd);
    return f->seen++;
}

static void reply(fixture *f, size_t idx, const buf *b)
{
    fake_host_complete_jdwp(f->fh, idx, 0, b ? b->d : NULL, b ? b->n : 0);
}

static uint64_t id_of(const fake_jdwp_request *rq)
{
    uint64_t v = 0;
    assert_true(rq->len >= 8);
    for (int i = 0; i < 8; i++)
        v = v << 8 | rq->data[i];
    return v;
}

static int n_jdwp(fixture *f, uint8_t set, uint8_t cmd)
{
    int n = 0;
    for (int i = fake_host_find_jdwp_request(f->fh, NULL, set, cmd, 0); i >= 0;
         i = fake_host_find_jdwp_request(f->fh, NULL, set, cmd, (size_t)i + 1))
        n++;
    return n;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->fh = fake_host_new();
    fake_host_set_config(f->fh, "jvm.interval", "1000");
    assert_int_equal(fake_host_load(f->fh, &ddm_plugin_descriptor), 0);
    assert_int_equal(fake_host_n_plain_vm_listeners(f->fh), 1);
    assert_int_equal(fake_host_n_vm_listeners(f->fh), 0);
    f->vm = fake_host_add_plain_vm(f->fh, &(ddm_vm_info){.pid = 4242, .app_name = "com.example.Main",
                                                       .key = "127.0.0.1:5005", .user_id = -1});
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fake_host_free(f->fh);
    free(f);
    return 0;
}

/* READY asks Version, ClassPaths, CapabilitiesNew once: skip past them. */
static void skip_info(fixture *f, int answer)
{
    size_t v = next_jdwp(f, 1, 1), c = next_jdwp(f, 1, 13), k = next_jdwp(f, 1, 17);
    if (!answer)
        return;
    buf b = {{0}, 0};
    b_str(&b, "Java Debug Wire Protocol (Reference Implementation) version 17.0");
    b_u4(&b, 17);
    b_u4(&b, 0);
    b_str(&b, "17.0.9+9");
    b_str(&b, "OpenJDK 64-Bit Server VM");
    reply(f, v, &b);
    b.n = 0;
    b_str(&b, "/home/u");
    b_u4(&b, 2);
    b_str(&b, "app.jar");
    b_str(&b, "lib.jar");
    b_u4(&b, 0);
    reply(f, c, &b);
    b.n = 0;
    for (int i = 0; i < 32; i++)
        b_u1(&b, i == 0 || i == 2);
    reply(f, k, &b);
}

static void answer_idsizes(fixture *f)
{
    buf b = {{0}, 0};
    size_t i = next_jdwp(f, 1, 7);
    for (int k = 0; k < 5; k++)
        b_u4(&b, 8);
    reply(f, i, &b);
}

/* One polling round: AllThreads (1 "main", 2 "worker"), then the four
 * per-thread commands each, then (the first round) the group's name. */
static void answer_round_of(fixture *f, int group_asked)
{
    buf b = {{0}, 0};
    size_t i = next_jdwp(f, 1, 4);
    b_u4(&b, 2);
    b_u8(&b, 1);
    b_u8(&b, 2);
    reply(f, i, &b);
    for (size_t t = 0; t < 8; t++) {
        const fake_jdwp_request *rq = fake_host_jdwp_request(f->fh, f->seen);
        assert_non_null(rq);
        assert_int_equal(rq->cmdset, 11);
        assert_int_equal(rq->len, 8);
        i = f->seen++;
        b.n = 0;
        switch (rq->cmd) {
        case 1:
            b_str(&b, id_of(rq) == 1 ? "main" : "worker");
            reply(f, i, &b);
            break;
        case 4:
            b_u4(&b, id_of(rq) == 1 ? 1 : 2); /* running, sleeping */
            b_u4(&b, 0);
            reply(f, i, &b);
            break;
        case 5:
            b_u8(&b, 100);
            reply(f, i, &b);
            break;
        case 7: /* FrameCount of a running thread */
            fake_host_complete_jdwp(f->fh, i, 13, NULL, 0); /* THREAD_NOT_SUSPENDED */
            break;
        default:
            fail_msg("unexpected ThreadReference command %u", rq->cmd);
        }
    }
    if (!group_asked)
        return;
    i = next_jdwp(f, 12, 1);
    b.n = 0;
    b_str(&b, "main");
    reply(f, i, &b);
}

static void answer_round(fixture *f)
{
    answer_round_of(f, 1);
}

/* ------------------------------------------------------------- tests */

/* The vminfo record: pid and main class at once, then what the JVM says. */
static void test_vminfo(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "vminfo");
    assert_non_null(v);
    assert_int_equal(fake_view_field_int(v, "pid"), 4242); /* a number, as ART's vminfo */
    assert_string_equal(fake_view_field_str(v, "main class"), "com.example.Main");
    skip_info(f, 1);
    assert_string_equal(fake_view_field_str(v, "vm"), "OpenJDK 64-Bit Server VM");
    assert_string_equal(fake_view_field_str(v, "vm version"), "17.0.9+9");
    assert_string_equal(fake_view_field_str(v, "jdwp"), "17.0");
    assert_string_equal(fake_view_field_str(v, "classpath"), "app.jar:lib.jar");
    assert_non_null(fake_view_field_str(v, "capabilities"));
    assert_int_equal(fake_host_n_jdwp_pending(f->fh, f->vm), 0);
}

/* The threads view fills from AllThreads and the per-thread replies, only
 * while watched, and polling never suspends anything. */
static void test_threads_view(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "threads");
    assert_non_null(v);
    skip_info(f, 1);
    fake_host_fire_timers(f->fh); /* nobody watches: nothing asked */
    assert_int_equal(fake_host_n_jdwp_requests(f->fh), f->seen);
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_fire_timers(f->fh);
    answer_idsizes(f);
    fake_host_fire_timers(f->fh);
    answer_round(f);
    assert_int_equal(fake_view_n_rows(v), 2);
    int r = fake_view_find_row(v, "name", "main");
    assert_true(r >= 0);
    assert_int_equal(fake_view_cell_int(v, r, "id"), 1);
    assert_string_equal(fake_view_cell_str(v, r, "state"), "running");
    assert_string_equal(fake_view_cell_str(v, r, "group"), "main");
    assert_true(fake_view_cell_is_null(v, r, "frames"));
    assert_true(fake_view_cell_is_null(v, r, "tid"));
    r = fake_view_find_row(v, "name", "worker");
    assert_true(r >= 0);
    assert_string_equal(fake_view_cell_str(v, r, "state"), "sleeping");
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "2");
    double count = -1;
    assert_true(fake_host_headline_figure(f->fh, f->vm, "threads_count", &count));
    assert_true(count == 2);
    /* the metric family the threads plugin shares (1.3): threads by JDWP status */
    ddm_metric_family fam;
    assert_true(fake_host_metric_family(f->fh, "threads", &fam));
    assert_string_equal(fam.label, "state");
    assert_true(fake_host_metric(f->fh, f->vm, "threads", "running", &count) && count == 1);
    assert_true(fake_host_metric(f->fh, f->vm, "threads", "sleeping", &count) && count == 1);
    assert_int_equal(fake_host_metric_samples(f->fh, f->vm, "threads"), 2);
    assert_int_equal(fake_host_n_jdwp_pending(f->fh, f->vm), 0);
    /* never a Suspend (nor a Resume) without --suspend */
    assert_int_equal(n_jdwp(f, 11, 2), 0);
    assert_int_equal(n_jdwp(f, 11, 3), 0);
    assert_null(fake_host_jdwp_held(f->fh, f->vm, NULL));
}

static double g_now;
static double fake_now(void)
{
    return g_now;
}

/* A JVM whose metric the host keeps refusing is logged once (the VM's
 * metric_logged, ddm_vm_metric_logged), not at every round. */
static void test_metric_refused_logged_once(void **state)
{
    fixture *f = *state;
    jvm_plugin *pl = fake_host_table(f->fh)->get_data(fake_host_plugin(f->fh));
    pl->host = refusing_host_of(fake_host_table(f->fh));
    pl->now = fake_now;
    g_now = 100.0;
    skip_info(f, 1);
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_fire_timers(f->fh);
    answer_idsizes(f);
    fake_host_fire_timers(f->fh);
    answer_round(f);
    for (int round = 0; round < 2; round++) {
        g_now += 1.0; /* jvm.interval */
        fake_host_fire_timers(f->fh);
        answer_round_of(f, 0); /* the group's name is known */
    }
    pl->host = fake_host_table(f->fh);
    assert_int_equal(refused_metrics, 3);
    assert_int_equal(fake_host_log_count(f->fh, DDM_LOG_WARNING), 1);
    assert_true(fake_host_log_contains(f->fh, "metric threads not set"));
    assert_true(fake_host_log_contains(f->fh, "127.0.0.1:5005"));
}

/* A watch that begins (ABI 1.5) runs the poll tick at once; its first step
 * asks for the ID sizes, and their answer starts the round at once, not a
 * tick later: a snapshot's first look waits for that round, so it shows
 * the threads. */
static void test_first_look_round_without_a_tick(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "threads");
    skip_info(f, 1);
    fake_host_set_default_watchers(f->fh, 1);
    assert_int_equal(fake_host_watch_begins(f->fh), 1);
    answer_idsizes(f);               /* asked by the woken tick */
    answer_round(f);                 /* AllThreads went out with the answer */
    assert_int_equal(fake_view_n_rows(v), 2);
}

/* ABI 1.7: with no JVM watched the poll tick sleeps; a watch wakes it and
 * the poll goes; a watched JVM keeps it ticking. */
static void test_idle_tick_sleeps(void **state)
{
    fixture *f = *state;
    skip_info(f, 1);
    assert_int_equal(fake_host_n_timers(f->fh), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 1);
    assert_int_equal(fake_host_fire_timers(f->fh), 0); /* asleep */
    assert_int_equal(fake_host_n_jdwp_requests(f->fh), f->seen);
    fake_host_set_default_watchers(f->fh, 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 0);
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    answer_idsizes(f); /* asked by the woken tick */
    assert_int_equal(fake_host_fire_timers(f->fh), 1);
    assert_int_equal(fake_host_n_timers_sleeping(f->fh), 0);
}

/* A JVM nobody has looked at shows no thread count at all (no "threads: 0",
 * no threads_count 0): no headline, figure nor table until a round answered,
 * not even when the first round fails. A round that answers 0 threads is a
 * true 0 and is shown. */
static void test_no_count_before_a_round(void **state)
{
    fixture *f = *state;
    ddm_view *v = fake_view_find(f->fh, f->vm, "threads");
    assert_non_null(v);
    skip_info(f, 1);
    fake_host_fire_timers(f->fh);
    assert_null(fake_host_headline(f->fh, f->vm, "threads"));
    assert_false(fake_host_headline_figure(f->fh, f->vm, "threads_count", NULL));
    assert_int_equal(fake_view_version(v), 0);
    /* watched; the first AllThreads fails: still nothing shown */
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_fire_timers(f->fh);
    answer_idsizes(f);
    fake_host_fire_timers(f->fh);
    fake_host_complete_jdwp(f->fh, next_jdwp(f, 1, 4), 112, NULL, 0); /* VM_DEAD */
    assert_null(fake_host_headline(f->fh, f->vm, "threads"));
    assert_false(fake_host_headline_figure(f->fh, f->vm, "threads_count", NULL));
    assert_int_equal(fake_view_version(v), 0);
    /* READY again (ddmon reconnected): still no false 0 */
    fake_host_vm_event(f->fh, f->vm, DDM_VM_READY);
    assert_null(fake_host_headline(f->fh, f->vm, "threads"));
    assert_int_equal(fake_view_version(v), 0);
    /* a round that answers: the count is shown, as text and as a figure */
    for (int i = 0; i < 300 && fake_host_n_jdwp_requests(f->fh) == f->seen; i++) {
        const struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
        fake_host_fire_timers(f->fh);
    }
    buf b = {{0}, 0};
    b_u4(&b, 0); /* no threads at all: a true 0 */
    reply(f, next_jdwp(f, 1, 4), &b);
    assert_int_equal(fake_view_version(v), 1);
    assert_int_equal(fake_view_n_rows(v), 0);
    assert_string_equal(fake_host_headline(f->fh, f->vm, "threads"), "0");
    double count = -1;
    assert_true(fake_host_headline_figure(f->fh, f->vm, "threads_count", &count));
    assert_true(count == 0);
}

/* A debugger attaches: the round in flight ends, nothing more is asked
 * until it leaves. */
static void test_debugger_stops_polling(void **state)
{
    fixture *f = *state;
    size_t n;
    buf b = {{0}, 0};
    skip_info(f, 1);
    fake_host_set_default_watchers(f->fh, 1);
    fake_host_fire_timers(f->fh);
    answer_idsizes(f);
    fake_host_fire_timers(f->fh);
    size_t all = next_jdwp(f, 1, 4);
    fake_host_set_debugger(f->fh, f->vm, 1);
    assert_true(fake_host_log_contains(f->fh, "a debugger is attached"));
    b_u4(&b, 1);
    b_u8(&b, 1);
    reply(f, all, &b); /* a late reply of the ended round: ignored */
    n = fake_host_n_jdwp_requests(f->fh);
    assert_int_equal(n, f->seen);
    for (int i = 0; i < 5; i++)
        fake_host_fire_timers(f->fh);
    assert_int_equal(fake_host_n_jdwp_requests(f->fh), n);
    /* jvm-stack refuses too, before sending anything */
    const char *argv[] = {"jvm-stack", "4242", "1", "--suspend"};
    ddm_cmd *cmd = fake_host_run_command(f->fh, 4, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_int_equal(fake_host_n_jdwp_requests(f->fh), n);
    /* it leaves: polling goes on (at the next period: the plugin's clock is real) */
    fake_host_set_debugger(f->fh, f->vm, 0);
    for (int i = 0; i < 300 && fake_host_n_jdwp_requests(f->fh) == n; i++) {
        const struct timespec ms10 = {0, 10 * 1000 * 1000};
        nanosleep(&ms10, NULL);
        fake_host_fire_timers(f->fh);
    }
    assert_true(fake_host_n_jdwp_requests(f->fh) > n);
    assert_int_equal(fake_host_jdwp_request(f->fh, n)->cmdset, 1);
    assert_int_equal(fake_host_jdwp_request(f->fh, n)->cmd, 4);
}

/* Without --suspend: a usage message, nothing sent. */
static void test_stack_needs_suspend(void **state)
{
    fixture *f = *state;
    const char *argv[] = {"jvm-stack", "4242", "1"};
    size_t n = fake_host_n_jdwp_requests(f->fh);
    ddm_cmd *cmd = fake_host_run_command(f->fh, 3, argv);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_USAGE);
    assert_non_null(strstr(fake_cmd_message(cmd), "--suspend"));
    assert_int_equal(fake_host_n_jdwp_requests(f->fh), n);
}

/* Start jvm-stack on thread 1 and answer up to its Suspend (accepted). */
static ddm_cmd *stack_until_suspend(fixture *f, size_t *suspend_idx)
{
    const char *argv[] = {"jvm-stack", "4242", "1", "--suspend"};
    buf b = {{0}, 0};
    ddm_cmd *cmd;
    size_t i;
    const uint8_t *held;
    size_t held_len;
    skip_info(f, 1);
    cmd = fake_host_run_command(f->fh, 4, argv);
    assert_false(fake_cmd_finished(cmd));
    answer_idsizes(f);
    i = next_jdwp(f, 1, 4);
    b_u4(&b, 2);
    b_u8(&b, 1);
    b_u8(&b, 2);
    reply(f, i, &b);
    *suspend_idx = next_jdwp(f, 11, 2);
    assert_int_equal(id_of(fake_host_jdwp_request(f->fh, *suspend_idx)), 1);
    held = fake_host_jdwp_held(f->fh, f->vm, &held_len);
    assert_non_null(held);
    assert_int_equal(held_len, 8);
    assert_int_equal(held[7], 1);
    assert_int_equal(n_jdwp(f, 11, 2), 1); /* exactly one thread */
    return cmd;
}

/* --suspend: one thread suspended, frames read, resumed at once, then the
 * frames named. */
static void test_stack_suspend(void **state)
{
    fixture *f = *state;
    size_t i, sus;
    buf b = {{0}, 0};
    ddm_cmd *cmd = stack_until_suspend(f, &sus);
    reply(f, sus, NULL);
    i = next_jdwp(f, 11, 6); /* Frames */
    assert_int_equal(id_of(fake_host_jdwp_request(f->fh, i)), 1);
    b_u4(&b, 1);
    b_u8(&b, 0x77);  /* frame id */
    b_u1(&b, 1);     /* class */
    b_u8(&b, 0x500); /* class id */
    b_u8(&b, 0x600); /* method id */
    b_u8(&b, 3);     /* code index */
    reply(f, i, &b);
    i = next_jdwp(f, 11, 3); /* Resume, right after the frames */
    assert_int_equal(id_of(fake_host_jdwp_request(f->fh, i)), 1);
    assert_null(fake_host_jdwp_held(f->fh, f->vm, NULL));
    reply(f, i, NULL);
    /* names: Signature, SourceFile, Methods, LineTable */
    for (int k = 0; k < 4; k++) {
        const fake_jdwp_request *rq = fake_host_jdwp_request(f->fh, f->seen);
        assert_non_null(rq);
        i = f->seen++;
        b.n = 0;
        if (rq->cmdset == 2 && rq->cmd == 1) {
            b_str(&b, "Lcom/example/Main;");
        } else if (rq->cmdset == 2 && rq->cmd == 7) {
            b_str(&b, "Main.java");
        } else if (rq->cmdset == 2 && rq->cmd == 5) {
            b_u4(&b, 1);
            b_u8(&b, 0x600);
            b_str(&b, "run");
            b_str(&b, "()V");
            b_u4(&b, 1);
        } else if (rq->cmdset == 6 && rq->cmd == 1) {
            b_u8(&b, 0);
            b_u8(&b, 10);
            b_u4(&b, 1);
            b_u8(&b, 0);
            b_u4(&b, 42);
        } else {
            fail_msg("unexpected JDWP %u/%u", rq->cmdset, rq->cmd);
        }
        reply(f, i, &b);
    }
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_OK);
    ddm_view *v = fake_cmd_result(cmd);
    assert_non_null(v);
    assert_int_equal(fake_view_n_rows(v), 1);
    assert_string_equal(fake_view_cell_str(v, 0, "class"), "com.example.Main");
    assert_string_equal(fake_view_cell_str(v, 0, "method"), "run");
    assert_string_equal(fake_view_cell_str(v, 0, "file"), "Main.java");
    assert_int_equal(fake_view_cell_int(v, 0, "line"), 42); /* a number, not "42" */
    assert_int_equal(fake_view_cell_int(v, 0, "native"), 0);
    assert_int_equal(n_jdwp(f, 11, 2), 1);
    assert_int_equal(n_jdwp(f, 11, 3), 1);
    assert_int_equal(fake_host_n_jdwp_pending(f->fh, f->vm), 0);
}

/* Frames fails: the thread is resumed all the same and the command fails. */
static void test_stack_resumes_when_frames_fail(void **state)
{
    fixture *f = *state;
    size_t i, sus;
    ddm_cmd *cmd = stack_until_suspend(f, &sus);
    reply(f, sus, NULL);
    i = next_jdwp(f, 11, 6);
    fake_host_complete_jdwp(f->fh, i, 13, NULL, 0);
    i = next_jdwp(f, 11, 3);
    assert_int_equal(id_of(fake_host_jdwp_request(f->fh, i)), 1);
    assert_null(fake_host_jdwp_held(f->fh, f->vm, NULL));
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    fake_host_complete_jdwp(f->fh, i, 0, NULL, 0);
    assert_int_equal(fake_host_n_jdwp_pending(f->fh, f->vm), 0);
}

/* A Suspend that times out may have happened: it is resumed to be sure. */
static void test_stack_resumes_after_suspend_timeout(void **state)
{
    fixture *f = *state;
    size_t i, sus;
    ddm_cmd *cmd = stack_until_suspend(f, &sus);
    fake_host_complete_jdwp_status(f->fh, sus, DDM_REPLY_TIMEOUT);
    i = next_jdwp(f, 11, 3);
    assert_int_equal(id_of(fake_host_jdwp_request(f->fh, i)), 1);
    assert_null(fake_host_jdwp_held(f->fh, f->vm, NULL));
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    /* the Resume's own failure is only logged */
    fake_host_complete_jdwp(f->fh, i, 10, NULL, 0);
    assert_true(fake_host_log_contains(f->fh, "Resume of thread 1 failed"));
    assert_int_equal(n_jdwp(f, 11, 6), 0); /* no Frames of a thread maybe not suspended */
}

/* The VM goes mid-command: the command fails, nothing is left held. */
static void test_stack_vm_gone(void **state)
{
    fixture *f = *state;
    size_t sus;
    ddm_cmd *cmd = stack_until_suspend(f, &sus);
    reply(f, sus, NULL);
    (void)next_jdwp(f, 11, 6);
    fake_host_vm_event(f->fh, f->vm, DDM_VM_GONE);
    assert_true(fake_cmd_finished(cmd));
    assert_int_equal(fake_cmd_status(cmd), DDM_CMD_FAILED);
    assert_int_equal(fake_host_n_jdwp_pending(f->fh, NULL), 0);
}

/* A 1.1 core has no jdwp_request: the plugin declines to load. */
static void test_needs_abi_1_2(void **state)
{
    fake_host *fh = fake_host_new();
    (void)state;
    fake_host_set_abi_minor(fh, 1);
    assert_int_not_equal(fake_host_load(fh, &ddm_plugin_descriptor), 0);
    fake_host_free(fh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vminfo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metric_refused_logged_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_tick_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_look_round_without_a_tick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_count_before_a_round, setup, teardown),
        cmocka_unit_test_setup_teardown(test_debugger_stops_polling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_needs_suspend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_suspend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_resumes_when_frames_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_resumes_after_suspend_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stack_vm_gone, setup, teardown),
        cmocka_unit_test(test_needs_abi_1_2),
    };
    return cmocka_run_group_tests_name("plugin-jvm", tests, NULL, NULL);
}
