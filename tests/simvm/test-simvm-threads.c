/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddmon-simvm's thread model and its encoders
 * (tools/simvm/threads.c): THST tables, STKL stacks and THCR names are
 * parsed back with <ddmon/bytes.h> and compared with the model; the model
 * creates, renames, kills threads and burns CPU; same seed, same threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "threads.h"

static void test_simvm_threads_thst_roundtrip(void **state)
{
    SimThreads ts;
    ddm_writer w;
    ddm_reader r;
    uint32_t i;
    int art;

    (void)state;
    for (art = 0; art <= 1; art++) {
        sim_threads_init(&ts, 4321, 11, 20, art);
        sim_threads_step(&ts, 1000, 0.0, NULL, NULL);
        assert_int_equal(ts.n, 20);
        ddm_writer_init(&w, 0);
        sim_threads_write_thst(&ts, &w);
        ddm_reader_init(&r, w.data, w.len);
        assert_int_equal(ddm_read_u1(&r), 4);
        assert_int_equal(ddm_read_u1(&r), 18);
        assert_int_equal(ddm_read_u2(&r), ts.n);
        assert_int_equal(w.len, 4 + 18 * ts.n);
        for (i = 0; i < ts.n; i++) {
            const SimThread *t = &ts.v[i];
            uint8_t st;
            assert_int_equal(ddm_read_u4(&r), t->id);
            st = ddm_read_u1(&r);
            assert_int_equal(st, sim_thread_wire_status(&ts, t));
            assert_true(art ? st <= 4 : st <= 9);
            assert_int_equal(ddm_read_u4(&r), t->tid);
            assert_int_equal(ddm_read_u4(&r), t->utime_milli / 1000);
            assert_int_equal(ddm_read_u4(&r), t->stime_milli / 1000);
            assert_int_equal(ddm_read_u1(&r), t->daemon);
        }
        assert_true(ddm_reader_ok(&r));
        assert_int_equal(ddm_reader_remaining(&r), 0);
        /* main is thread 1 with the pid as its tid */
        assert_int_equal(ts.v[0].id, 1);
        assert_int_equal(ts.v[0].tid, 4321);
        assert_string_equal(ts.v[0].name, "main");
        ddm_writer_reset(&w);
        sim_threads_clear(&ts);
    }
}

static void test_simvm_threads_stkl(void **state)
{
    SimThreads ts;
    ddm_writer w;
    ddm_reader r;
    uint32_t n, i;
    int native = 0, unknown_line = 0, empty_file = 0;

    (void)state;
    sim_threads_init(&ts, 100, 1, 14, 1);
    ddm_writer_init(&w, 0);
    assert_int_equal(sim_threads_write_stkl(&ts, 1, &w), 0);
    ddm_reader_init(&r, w.data, w.len);
    assert_int_equal(ddm_read_u4(&r), 0);
    assert_int_equal(ddm_read_u4(&r), 1);
    n = ddm_read_u4(&r);
    assert_true(n >= 3);
    for (i = 0; i < n; i++) {
        char *cls = ddm_read_lstr(&r), *method = ddm_read_lstr(&r), *file = ddm_read_lstr(&r);
        int32_t line = ddm_read_i4(&r);
        assert_non_null(cls);
        assert_non_null(method);
        assert_non_null(file);
        assert_non_null(strchr(cls, '.')); /* dotted class names */
        native |= line == -2;
        free(cls);
        free(method);
        free(file);
    }
    assert_true(ddm_reader_ok(&r));
    assert_int_equal(ddm_reader_remaining(&r), 0);
    assert_true(native);
    ddm_writer_reset(&w);

    /* a worker stack has an unknown line and an empty file name */
    sim_threads_clear(&ts);
    sim_threads_init(&ts, 100, 1, 16, 1);
    assert_int_equal(sim_threads_write_stkl(&ts, ts.v[15].id, &w), 0);
    ddm_reader_init(&r, w.data, w.len);
    ddm_read_skip(&r, 8);
    n = ddm_read_u4(&r);
    for (i = 0; i < n; i++) {
        char *cls = ddm_read_lstr(&r), *method = ddm_read_lstr(&r), *file = ddm_read_lstr(&r);
        int32_t line = ddm_read_i4(&r);
        unknown_line |= line == -1;
        empty_file |= file && file[0] == '\0';
        free(cls);
        free(method);
        free(file);
    }
    assert_true(ddm_reader_ok(&r));
    assert_true(unknown_line);
    assert_true(empty_file);
    ddm_writer_reset(&w);

    /* unknown thread: nothing written (the VM answers FAIL) */
    assert_int_equal(sim_threads_write_stkl(&ts, 9999, &w), -1);
    assert_int_equal(w.len, 0);
    sim_threads_clear(&ts);
}

static void test_simvm_threads_thcr_payload(void **state)
{
    SimThreads ts;
    ddm_writer w;
    ddm_reader r;
    char *name;

    (void)state;
    sim_threads_init(&ts, 77, 1, 14, 1);
    ddm_writer_init(&w, 0);
    sim_thread_write_name(&w, &ts.v[9]);
    ddm_reader_init(&r, w.data, w.len);
    assert_int_equal(ddm_read_u4(&r), ts.v[9].id);
    name = ddm_read_lstr(&r);
    assert_non_null(name);
    assert_string_equal(name, "Binder:77_1");
    assert_int_equal(ddm_reader_remaining(&r), 0);
    free(name);
    ddm_writer_reset(&w);
    sim_threads_clear(&ts);
}

typedef struct Seen {
    int created, renamed, died;
    SimThreads *ts;
} Seen;

static void on_event(SimThreadEvent ev, const SimThread *t, void *ud)
{
    Seen *s = ud;

    assert_non_null(sim_threads_find(s->ts, t->id)); /* still there during the call */
    assert_true(strlen(t->name) <= SIM_THREAD_NAME_MAX);
    assert_false(t->core);
    if (ev == SIM_THREAD_CREATED)
        s->created++;
    else if (ev == SIM_THREAD_RENAMED)
        s->renamed++;
    else
        s->died++;
}

static void test_simvm_threads_lifecycle(void **state)
{
    SimThreads ts;
    Seen seen = { 0, 0, 0, &ts };
    uint64_t main_cpu0, total0 = 0, total1 = 0;
    uint32_t i, k, next_id;

    (void)state;
    sim_threads_init(&ts, 500, 3, 14, 1);
    main_cpu0 = ts.v[0].utime_milli + ts.v[0].stime_milli;
    for (i = 0; i < ts.n; i++)
        total0 += ts.v[i].utime_milli + ts.v[i].stime_milli;
    for (k = 0; k < 400; k++)
        sim_threads_step(&ts, 100, 1.0, on_event, &seen);
    assert_true(seen.created > 0);
    assert_true(seen.renamed > 0);
    assert_true(seen.died > 0);
    /* core threads survive; ids are unique and never reused */
    assert_string_equal(ts.v[0].name, "main");
    for (i = 0; i < 14; i++)
        assert_true(ts.v[i].core);
    next_id = ts.next_id;
    for (i = 0; i < ts.n; i++) {
        uint32_t j;
        assert_true(ts.v[i].id < next_id);
        for (j = i + 1; j < ts.n; j++)
            assert_true(ts.v[i].id != ts.v[j].id);
        total1 += ts.v[i].utime_milli + ts.v[i].stime_milli;
    }
    assert_true(total1 > total0); /* CPU was burnt */
    assert_true(ts.v[0].utime_milli + ts.v[0].stime_milli >= main_cpu0);
    sim_threads_clear(&ts);
}

static void test_simvm_threads_deterministic(void **state)
{
    SimThreads a, b;
    uint32_t i, k;

    (void)state;
    sim_threads_init(&a, 900, 17, 18, 0);
    sim_threads_init(&b, 900, 17, 18, 0);
    for (k = 0; k < 50; k++) {
        sim_threads_step(&a, 100, 0.5, NULL, NULL);
        sim_threads_step(&b, 100, 0.5, NULL, NULL);
    }
    assert_int_equal(a.n, b.n);
    for (i = 0; i < a.n; i++) {
        assert_int_equal(a.v[i].id, b.v[i].id);
        assert_string_equal(a.v[i].name, b.v[i].name);
        assert_int_equal(a.v[i].status, b.v[i].status);
        assert_int_equal(a.v[i].utime_milli, b.v[i].utime_milli);
    }
    sim_threads_clear(&a);
    sim_threads_clear(&b);
}

/* --main-state-every: with main scripted, the model never moves it; each
 * switch alternates waiting and runnable, which ART reports apart too. */
static void test_simvm_threads_switch_main(void **state)
{
    SimThreads ts;
    uint32_t k;
    int art;

    (void)state;
    for (art = 0; art <= 1; art++) {
        sim_threads_init(&ts, 77, 5, 14, art);
        ts.main_scripted = 1;
        assert_int_equal(ts.v[0].id, 1);
        uint8_t before = ts.v[0].status;
        for (k = 0; k < 400; k++) { /* unscripted, main moves with p 1/40 per step */
            sim_threads_step(&ts, 100, 0.0, NULL, NULL);
            assert_int_equal(ts.v[0].status, before);
        }
        assert_int_equal(sim_threads_switch_main(&ts), 1);
        uint8_t a = sim_thread_wire_status(&ts, &ts.v[0]);
        assert_int_equal(sim_threads_switch_main(&ts), 1);
        uint8_t b = sim_thread_wire_status(&ts, &ts.v[0]);
        assert_int_equal(sim_threads_switch_main(&ts), 1);
        assert_int_equal(sim_thread_wire_status(&ts, &ts.v[0]), a);
        assert_int_not_equal(a, b);
        assert_string_equal(sim_thread_status_name(a, art), art ? "waiting" : "wait");
        assert_string_equal(sim_thread_status_name(b, art), art ? "runnable" : "running");
        sim_threads_clear(&ts);
    }
    /* no main thread: nothing to switch */
    memset(&ts, 0, sizeof ts);
    assert_int_equal(sim_threads_switch_main(&ts), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simvm_threads_thst_roundtrip),
        cmocka_unit_test(test_simvm_threads_stkl),
        cmocka_unit_test(test_simvm_threads_thcr_payload),
        cmocka_unit_test(test_simvm_threads_lifecycle),
        cmocka_unit_test(test_simvm_threads_deterministic),
        cmocka_unit_test(test_simvm_threads_switch_main),
    };
    return cmocka_run_group_tests_name("simvm-threads", tests, NULL, NULL);
}
