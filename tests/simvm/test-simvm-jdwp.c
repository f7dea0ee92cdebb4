/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for ddmon-simvm's JDWP object model (tools/simvm/jdwp_model.c):
 * replies are parsed back with <ddmon/bytes.h> and compared with the thread
 * model and its STKL stacks: threads and groups partition the threads,
 * frames need a suspended thread and match STKL (classes, methods, native
 * methods, line tables), suspend counts, event request ids, JDWP error
 * codes for bad IDs and bounds, and random or truncated payloads for every
 * command never crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jdwp_model.h"
#include "rng.h"

#define PKG "com.example.unit"

typedef struct Fixture {
    SimThreads ts;
    SimJdwpModel *m;
    ddm_writer out; /* the last reply */
    ddm_reader r;   /* reading it */
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);

    sim_threads_init(&f->ts, 4242, 7, 16, 1); /* 14 core threads and 2 workers */
    f->m = sim_jdwp_model_new(PKG);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;

    ddm_writer_reset(&f->out);
    sim_jdwp_model_free(f->m);
    sim_threads_clear(&f->ts);
    free(f);
    return 0;
}

/* ask: send @set/@cmd with @len bytes; the reply is readable in f->r. */
static int ask(Fixture *f, uint8_t set, uint8_t cmd, const void *data, size_t len)
{
    int err;

    ddm_writer_reset(&f->out);
    ddm_writer_init(&f->out, 1 << 20);
    err = sim_jdwp_model_answer(f->m, &f->ts, set, cmd, data, len, &f->out);
    ddm_reader_init(&f->r, f->out.data, f->out.len);
    return err;
}

static int ask_id(Fixture *f, uint8_t set, uint8_t cmd, uint64_t id)
{
    uint8_t b[8];
    int i;

    for (i = 0; i < 8; i++)
        b[i] = (uint8_t)(id >> (56 - 8 * i));
    return ask(f, set, cmd, b, 8);
}

static int ask_two(Fixture *f, uint8_t set, uint8_t cmd, uint64_t a, uint64_t b)
{
    uint8_t p[16];
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(a >> (56 - 8 * i));
        p[8 + i] = (uint8_t)(b >> (56 - 8 * i));
    }
    return ask(f, set, cmd, p, 16);
}

static int ask_frames(Fixture *f, uint64_t thread, int32_t start, int32_t length)
{
    ddm_writer w;
    int err;

    ddm_writer_init(&w, 64);
    ddm_write_u8(&w, thread);
    ddm_write_u4(&w, (uint32_t)start);
    ddm_write_u4(&w, (uint32_t)length);
    err = ask(f, 11, 6, w.data, w.len);
    ddm_writer_reset(&w);
    return err;
}

/* A JDWP string from the reply (u4 bytes, UTF-8). (transfer full) */
static char *read_string(ddm_reader *r)
{
    uint32_t n = ddm_read_u4(r);
    const uint8_t *p = ddm_read_bytes(r, n);
    char *s;

    assert_true(ddm_reader_ok(r));
    s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static void assert_done(Fixture *f)
{
    assert_true(ddm_reader_ok(&f->r));
    assert_int_equal(ddm_reader_remaining(&f->r), 0);
}

static uint64_t thread_oid(const SimThread *t)
{
    return SIM_JDWP_THREAD_BASE + t->id;
}

static char *group_name(Fixture *f, uint64_t group)
{
    char *s;

    assert_int_equal(ask_id(f, 12, 1, group), 0);
    s = read_string(&f->r);
    assert_done(f);
    return s;
}

static void test_simvm_jdwp_threads_and_groups(void **state)
{
    Fixture *f = *state;
    uint64_t system, main_group, gid;
    uint32_t i, n, in_groups = 0;
    char *s;

    assert_int_equal(ask(f, 1, 4, NULL, 0), 0); /* AllThreads */
    n = ddm_read_u4(&f->r);
    assert_int_equal(n, f->ts.n);
    for (i = 0; i < n; i++)
        assert_int_equal(ddm_read_u8(&f->r), thread_oid(&f->ts.v[i]));
    assert_done(f);

    for (i = 0; i < f->ts.n; i++) { /* names and statuses */
        assert_int_equal(ask_id(f, 11, 1, thread_oid(&f->ts.v[i])), 0);
        s = read_string(&f->r);
        assert_string_equal(s, f->ts.v[i].name);
        free(s);
        assert_done(f);
        assert_int_equal(ask_id(f, 11, 4, thread_oid(&f->ts.v[i])), 0);
        assert_true(ddm_read_u4(&f->r) <= 4);
        assert_int_equal(ddm_read_u4(&f->r), 0); /* not suspended */
        assert_done(f);
    }

    assert_int_equal(ask(f, 1, 5, NULL, 0), 0); /* TopLevelThreadGroups */
    assert_int_equal(ddm_read_u4(&f->r), 1);
    system = ddm_read_u8(&f->r);
    assert_done(f);
    s = group_name(f, system);
    assert_string_equal(s, "system");
    free(s);
    assert_int_equal(ask_id(f, 12, 2, system), 0); /* Parent: none */
    assert_int_equal(ddm_read_u8(&f->r), 0);

    assert_int_equal(ask_id(f, 11, 5, thread_oid(&f->ts.v[0])), 0); /* main's group */
    main_group = ddm_read_u8(&f->r);
    s = group_name(f, main_group);
    assert_string_equal(s, "main");
    free(s);
    assert_int_equal(ask_id(f, 12, 2, main_group), 0);
    assert_int_equal(ddm_read_u8(&f->r), system);

    /* Children: every thread is in exactly the group ThreadGroup names */
    for (gid = 0; gid < 2; gid++) {
        uint64_t g = gid ? main_group : system, kids[64];
        uint32_t groups;
        assert_int_equal(ask_id(f, 12, 3, g), 0);
        n = ddm_read_u4(&f->r);
        assert_true(n <= 64);
        for (i = 0; i < n; i++)
            kids[i] = ddm_read_u8(&f->r);
        groups = ddm_read_u4(&f->r);
        assert_int_equal(groups, gid ? 0 : 1);
        if (groups)
            assert_int_equal(ddm_read_u8(&f->r), main_group);
        assert_done(f);
        for (i = 0; i < n; i++) {
            assert_int_equal(ask_id(f, 11, 5, kids[i]), 0);
            assert_int_equal(ddm_read_u8(&f->r), g);
            in_groups++;
        }
    }
    assert_int_equal(in_groups, f->ts.n);

    /* a thread's reference type is java.lang.Thread */
    assert_int_equal(ask_id(f, 9, 1, thread_oid(&f->ts.v[3])), 0);
    assert_int_equal(ddm_read_u1(&f->r), 1);
    gid = ddm_read_u8(&f->r);
    assert_int_equal(ask_id(f, 2, 1, gid), 0);
    s = read_string(&f->r);
    assert_string_equal(s, "Ljava/lang/Thread;");
    free(s);
}

typedef struct StklFrame {
    char *cls, *method;
    int32_t line;
} StklFrame;

/* The STKL frames of thread @id, decoded. Returns the count. */
static uint32_t stkl(const SimThreads *ts, uint32_t id, StklFrame *out, uint32_t max)
{
    ddm_writer w;
    ddm_reader r;
    uint32_t n, i;

    ddm_writer_init(&w, 0);
    assert_int_equal(sim_threads_write_stkl(ts, id, &w), 0);
    ddm_reader_init(&r, w.data, w.len);
    (void)ddm_read_u4(&r);
    (void)ddm_read_u4(&r);
    n = ddm_read_u4(&r);
    assert_true(n <= max);
    for (i = 0; i < n; i++) {
        char *file;
        out[i].cls = ddm_read_lstr(&r);
        out[i].method = ddm_read_lstr(&r);
        file = ddm_read_lstr(&r);
        free(file);
        out[i].line = ddm_read_i4(&r);
    }
    assert_true(ddm_reader_ok(&r));
    ddm_writer_reset(&w);
    return n;
}

static void test_simvm_jdwp_frames(void **state)
{
    Fixture *f = *state;
    uint64_t main_oid = thread_oid(&f->ts.v[0]);
    StklFrame want[32];
    uint32_t n, i;

    assert_int_equal(ask_frames(f, main_oid, 0, -1), SIM_JDWP_THREAD_NOT_SUSPENDED);
    assert_int_equal(ask_id(f, 11, 7, main_oid), SIM_JDWP_THREAD_NOT_SUSPENDED);
    assert_int_equal(ask(f, 1, 8, NULL, 0), 0); /* VirtualMachine.Suspend */
    assert_int_equal(ask_id(f, 11, 4, main_oid), 0);
    (void)ddm_read_u4(&f->r);
    assert_int_equal(ddm_read_u4(&f->r), 1);

    n = stkl(&f->ts, f->ts.v[0].id, want, 32);
    assert_true(n > 3);
    assert_int_equal(ask_id(f, 11, 7, main_oid), 0);
    assert_int_equal(ddm_read_u4(&f->r), n);
    assert_int_equal(ask_frames(f, main_oid, 0, -1), 0);
    {
        ddm_writer copy;
        ddm_reader fr;
        uint32_t got;

        ddm_writer_init(&copy, 0); /* ask() reuses the reply buffer */
        ddm_write_bytes(&copy, f->out.data, f->out.len);
        ddm_reader_init(&fr, copy.data, copy.len);
        got = ddm_read_u4(&fr);
        assert_int_equal(got, n);
        for (i = 0; i < n; i++) {
            uint64_t cid, mid, index;
            uint32_t methods, k, line_found = 0;
            char *s;

            (void)ddm_read_u8(&fr); /* frameID */
            assert_int_equal(ddm_read_u1(&fr), 1);
            cid = ddm_read_u8(&fr);
            mid = ddm_read_u8(&fr);
            index = ddm_read_u8(&fr);
            assert_true(ddm_reader_ok(&fr));

            assert_int_equal(ask_id(f, 2, 1, cid), 0); /* the frame's class */
            s = read_string(&f->r);
            assert_int_equal(s[0], 'L');
            assert_int_equal(strlen(s), strlen(want[i].cls) + 2);
            free(s);

            assert_int_equal(ask_id(f, 2, 15, cid), 0); /* its method */
            methods = ddm_read_u4(&f->r);
            for (k = 0; k < methods; k++) {
                uint64_t id = ddm_read_u8(&f->r);
                char *name = read_string(&f->r), *sig = read_string(&f->r), *gen = read_string(&f->r);
                uint32_t mods = ddm_read_u4(&f->r);
                if (id == mid) {
                    assert_string_equal(name, want[i].method);
                    assert_int_equal((mods & 0x100) != 0, want[i].line == -2);
                    line_found = 1;
                }
                free(name);
                free(sig);
                free(gen);
            }
            assert_done(f);
            assert_int_equal(line_found, 1);

            if (want[i].line == -2) {
                assert_int_equal(index, UINT64_MAX);
                assert_int_equal(ask_two(f, 6, 1, cid, mid), SIM_JDWP_NATIVE_METHOD);
            } else if (want[i].line > 0) {
                uint32_t lines;
                line_found = 0;
                assert_int_equal(index, (uint64_t)want[i].line);
                assert_int_equal(ask_two(f, 6, 1, cid, mid), 0);
                (void)ddm_read_u8(&f->r);
                (void)ddm_read_u8(&f->r);
                lines = ddm_read_u4(&f->r);
                for (k = 0; k < lines; k++) {
                    uint64_t ci = ddm_read_u8(&f->r);
                    uint32_t ln = ddm_read_u4(&f->r);
                    if (ci == index && ln == (uint32_t)want[i].line)
                        line_found = 1;
                }
                assert_done(f);
                assert_int_equal(line_found, 1);
            }
            free(want[i].cls);
            free(want[i].method);
        }
        assert_int_equal(ddm_reader_remaining(&fr), 0);
        ddm_writer_reset(&copy);
    }

    /* bounds */
    assert_int_equal(ask_frames(f, main_oid, (int32_t)n, -1), 0);
    assert_int_equal(ddm_read_u4(&f->r), 0);
    assert_int_equal(ask_frames(f, main_oid, (int32_t)n + 1, 1), SIM_JDWP_INVALID_INDEX);
    assert_int_equal(ask_frames(f, main_oid, -1, 1), SIM_JDWP_INVALID_INDEX);
    assert_int_equal(ask_frames(f, main_oid, 1, (int32_t)n), SIM_JDWP_INVALID_LENGTH);
    assert_int_equal(ask_frames(f, main_oid, 1, -2), SIM_JDWP_INVALID_LENGTH);
    assert_int_equal(ask_frames(f, main_oid, 1, 2), 0);
    assert_int_equal(ddm_read_u4(&f->r), 2);

    /* thread suspend counts on top of the VM's */
    assert_int_equal(ask_id(f, 11, 2, main_oid), 0);
    assert_int_equal(ask_id(f, 11, 12, main_oid), 0);
    assert_int_equal(ddm_read_u4(&f->r), 2);
    assert_int_equal(ask(f, 1, 9, NULL, 0), 0); /* VirtualMachine.Resume */
    assert_int_equal(ask_id(f, 11, 7, main_oid), 0); /* still suspended once */
    assert_int_equal(ask_id(f, 11, 3, main_oid), 0);
    assert_int_equal(ask_id(f, 11, 3, main_oid), 0); /* below zero: stays 0 */
    assert_int_equal(ask_id(f, 11, 12, main_oid), 0);
    assert_int_equal(ddm_read_u4(&f->r), 0);
    assert_int_equal(ask_frames(f, main_oid, 0, -1), SIM_JDWP_THREAD_NOT_SUSPENDED);

    /* Dispose forgets suspensions */
    assert_int_equal(ask(f, 1, 8, NULL, 0), 0);
    sim_jdwp_model_reset(f->m);
    assert_int_equal(ask_id(f, 11, 12, main_oid), 0);
    assert_int_equal(ddm_read_u4(&f->r), 0);
}

static void test_simvm_jdwp_classes(void **state)
{
    Fixture *f = *state;
    uint32_t n, i, found = 0;
    uint64_t activity = 0, thread = 0;
    static const char thread_sig[] = "Ljava/lang/Thread;";
    uint8_t q[64];
    char *s;

    assert_int_equal(ask(f, 1, 20, NULL, 0), 0); /* AllClassesWithGeneric */
    n = ddm_read_u4(&f->r);
    assert_true(n > 10);
    for (i = 0; i < n; i++) {
        uint64_t id;
        char *sig, *gen;
        assert_int_equal(ddm_read_u1(&f->r), 1);
        id = ddm_read_u8(&f->r);
        sig = read_string(&f->r);
        gen = read_string(&f->r);
        assert_int_equal(ddm_read_u4(&f->r), 7);
        assert_int_equal(sig[0], 'L');
        assert_int_equal(sig[strlen(sig) - 1], ';');
        assert_null(strchr(sig, '.'));
        if (strcmp(sig, "Lcom/example/unit/MainActivity;") == 0) {
            activity = id;
            found++;
        }
        if (strcmp(sig, thread_sig) == 0) {
            thread = id;
            found++;
        }
        free(sig);
        free(gen);
    }
    assert_done(f);
    assert_int_equal(found, 2);

    q[0] = q[1] = q[2] = 0; /* ClassesBySignature */
    q[3] = (uint8_t)strlen(thread_sig);
    memcpy(q + 4, thread_sig, strlen(thread_sig));
    assert_int_equal(ask(f, 1, 2, q, 4 + strlen(thread_sig)), 0);
    assert_int_equal(ddm_read_u4(&f->r), 1);
    assert_int_equal(ddm_read_u1(&f->r), 1);
    assert_int_equal(ddm_read_u8(&f->r), thread);
    assert_int_equal(ddm_read_u4(&f->r), 7);
    assert_done(f);
    q[4] = 'X';
    assert_int_equal(ask(f, 1, 2, q, 4 + strlen(thread_sig)), 0);
    assert_int_equal(ddm_read_u4(&f->r), 0);
    assert_int_equal(ask(f, 1, 2, q, 3 + strlen(thread_sig)), SIM_JDWP_ILLEGAL_ARGUMENT);

    assert_int_equal(ask_id(f, 2, 7, activity), 0); /* SourceFile */
    s = read_string(&f->r);
    assert_string_equal(s, "MainActivity.java");
    free(s);
    assert_int_equal(ask_id(f, 3, 1, activity), 0); /* Superclass: Object, whose is none */
    {
        uint64_t object = ddm_read_u8(&f->r);
        assert_int_equal(ask_id(f, 2, 1, object), 0);
        s = read_string(&f->r);
        assert_string_equal(s, "Ljava/lang/Object;");
        free(s);
        assert_int_equal(ask_id(f, 3, 1, object), 0);
        assert_int_equal(ddm_read_u8(&f->r), 0);
    }
    assert_int_equal(ask_id(f, 2, 12, activity), SIM_JDWP_ABSENT_INFORMATION);
    assert_int_equal(ask_id(f, 2, 1, 12345), SIM_JDWP_INVALID_CLASS);
    assert_int_equal(ask_two(f, 6, 1, activity, 1), SIM_JDWP_INVALID_METHODID);
}

static void test_simvm_jdwp_errors_and_requests(void **state)
{
    Fixture *f = *state;
    uint8_t set[6] = { 8, 0, 0, 0, 0, 0 }; /* CLASS_PREPARE, no modifiers */
    uint8_t clear[5] = { 8, 0, 0, 0, 1 };
    uint32_t a, b;
    SimThread *last;

    assert_int_equal(ask(f, 15, 1, set, sizeof set), 0);
    a = ddm_read_u4(&f->r);
    assert_int_equal(ask(f, 15, 1, set, sizeof set), 0);
    b = ddm_read_u4(&f->r);
    assert_true(a > 0 && b > a);
    assert_int_equal(ask(f, 15, 2, clear, sizeof clear), 0);
    assert_int_equal(ask(f, 15, 3, NULL, 0), 0);
    set[0] = 77;
    assert_int_equal(ask(f, 15, 1, set, sizeof set), SIM_JDWP_INVALID_EVENT_TYPE);
    assert_int_equal(ask(f, 15, 1, set, 5), SIM_JDWP_ILLEGAL_ARGUMENT);
    sim_jdwp_model_reset(f->m);
    set[0] = 99; /* VM_DEATH */
    assert_int_equal(ask(f, 15, 1, set, sizeof set), 0);
    assert_int_equal(ddm_read_u4(&f->r), 1);

    assert_int_equal(ask_id(f, 11, 1, 77), SIM_JDWP_INVALID_THREAD);
    assert_int_equal(ask_id(f, 11, 1, SIM_JDWP_THREAD_BASE + 100000), SIM_JDWP_INVALID_THREAD);
    assert_int_equal(ask_id(f, 12, 1, 77), SIM_JDWP_INVALID_THREAD_GROUP);
    assert_int_equal(ask_id(f, 9, 1, 77), SIM_JDWP_INVALID_OBJECT);
    assert_int_equal(ask(f, 11, 1, "\0\0\0", 3), SIM_JDWP_ILLEGAL_ARGUMENT);
    /* a thread that died after the model saw it: terminated, as on a real VM */
    last = &f->ts.v[f->ts.n - 1];
    {
        uint64_t oid = thread_oid(last);
        char *name;
        assert_int_equal(ask(f, 1, 4, NULL, 0), 0);
        name = last->name;
        f->ts.n--;
        f->ts.next_id++; /* and one that nobody saw */
        assert_int_equal(ask_id(f, 11, 1, oid), 0);
        {
            char *s = read_string(&f->r);
            assert_string_equal(s, name);
            free(s);
        }
        free(name);
        assert_int_equal(ask_id(f, 11, 4, oid), 0);
        assert_int_equal(ddm_read_u4(&f->r), 0); /* ZOMBIE */
        assert_int_equal(ddm_read_u4(&f->r), 0);
        assert_int_equal(ask_id(f, 11, 5, oid), 0);
        assert_int_equal(ddm_read_u8(&f->r), 0);
        assert_int_equal(ask_id(f, 9, 1, oid), 0);
        assert_int_equal(ask_id(f, 11, 2, oid), SIM_JDWP_INVALID_THREAD);
        assert_int_equal(ask_id(f, 11, 7, oid), SIM_JDWP_INVALID_THREAD);
        assert_int_equal(ask_id(f, 11, 1, SIM_JDWP_THREAD_BASE + f->ts.next_id - 1), SIM_JDWP_INVALID_OBJECT);
    }
    /* left to the caller */
    assert_int_equal(ask(f, 1, 1, NULL, 0), SIM_JDWP_UNHANDLED);
    assert_int_equal(ask(f, 1, 7, NULL, 0), SIM_JDWP_UNHANDLED);
    assert_int_equal(ask(f, 16, 1, NULL, 0), SIM_JDWP_UNHANDLED);
    assert_int_equal(ask(f, 64, 100, NULL, 0), SIM_JDWP_UNHANDLED);
}

static void test_simvm_jdwp_random_payloads(void **state)
{
    Fixture *f = *state;
    static const uint64_t ids[] = { 0, 0x100, 0x101, 0x2000, 0x2003, 0x3000, 0x3005, 0x4001,
                                    SIM_JDWP_THREAD_BASE + 1, SIM_JDWP_THREAD_BASE + 2, UINT64_MAX };
    SimRng rng;
    unsigned set, cmd, len, k;
    uint8_t buf[40];

    sim_rng_seed(&rng, 99);
    assert_int_equal(ask(f, 1, 8, NULL, 0), 0); /* suspended: frames are answered too */
    for (set = 0; set < 20; set++)
        for (cmd = 0; cmd < 24; cmd++)
            for (len = 0; len <= sizeof buf; len++)
                for (k = 0; k < 3; k++) {
                    unsigned i;
                    int err;
                    for (i = 0; i < len; i++)
                        buf[i] = (uint8_t)sim_rng_below(&rng, 256);
                    if (k > 0 && len >= 8) { /* a plausible ID first */
                        uint64_t id = ids[sim_rng_below(&rng, sizeof ids / sizeof ids[0])];
                        for (i = 0; i < 8; i++)
                            buf[i] = (uint8_t)(id >> (56 - 8 * i));
                    }
                    if (k == 2 && len >= 16) { /* and a small count after it */
                        memset(buf + 8, 0, 4);
                        buf[11] = (uint8_t)sim_rng_below(&rng, 12);
                    }
                    err = ask(f, (uint8_t)set, (uint8_t)cmd, buf, len);
                    assert_true(err == SIM_JDWP_UNHANDLED || (err >= 0 && err < 1000));
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_simvm_jdwp_threads_and_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simvm_jdwp_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simvm_jdwp_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simvm_jdwp_errors_and_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_simvm_jdwp_random_payloads, setup, teardown),
    };

    return cmocka_run_group_tests_name("simvm-jdwp", tests, NULL, NULL);
}
