/* SPDX-License-Identifier: Apache-2.0
 *
 * The socket round (core/loop/watch.c) in a process whose seccomp filter
 * refuses timerfd_create and epoll_pwait2 with EPERM (as container
 * runtimes with an old profile do): the round falls back to epoll_wait
 * with a timeout, and a ping-pong against an echo thread still runs within
 * one main-context iteration, and a round that went on for another budget
 * waits that budget, not more. Its own program: the filter cannot be undone,
 * and the round's timerfd is made once a process.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/loop/watch.h"
#include "tests/harness/echo-thread.h"

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef __NR_epoll_pwait2
#define __NR_epoll_pwait2 441 /* the same number on every architecture */
#endif

/* timerfd_create and epoll_pwait2 fail with EPERM; the rest is allowed. */
static gboolean refuse_timerfd_and_pwait2(void)
{
#ifdef FILTER_ARCH
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_timerfd_create, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_epoll_pwait2, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = { .len = G_N_ELEMENTS(code), .filter = code };
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    return FALSE;
#endif
}

typedef struct Pinger {
    guint calls, left;
    gboolean hint_always; /* hints with no ping left too (an answer that never comes) */
} Pinger;

static gboolean pinger_cb(gint fd, GIOCondition cond, gpointer ud)
{
    Pinger *p = ud;
    char b;
    (void)cond;
    while (read(fd, &b, 1) == 1)
        p->calls++;
    if (p->left) {
        p->left--;
        assert_int_equal(write(fd, "p", 1), 1);
        ddm_watch_expect_more();
    } else if (p->hint_always) {
        ddm_watch_expect_more();
    }
    return G_SOURCE_CONTINUE;
}

static void test_round_without_timerfd_nor_pwait2(void **state)
{
    int sv[2];
    Pinger p = { .left = 20 };
    guint64 b0, b1;
    (void)state;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    DdmWatch *w = ddm_watch_add(sv[0], G_IO_IN, pinger_cb, &p);
    TestEcho echo;
    test_echo_start(&echo, sv[1], 0);
    ddm_watch_set_round_budget(5 * G_USEC_PER_SEC); /* sanitizers, a busy machine */
    while (g_main_context_iteration(NULL, FALSE))
        ; /* the wake-up of the source's attaching */
    ddm_watch_round_stats(&b0, NULL);
    assert_int_equal(write(sv[0], "p", 1), 1);
    g_main_context_iteration(NULL, TRUE);
    ddm_watch_round_stats(&b1, NULL);
    assert_int_equal(p.calls, 21); /* all 20 in the first iteration's round */
    assert_int_equal(b1 - b0, 20);
    ddm_watch_remove(w);
    shutdown(sv[0], SHUT_WR);
    test_echo_join(&echo);
    close(sv[0]);
    close(sv[1]);
}

/* After the round went on for another budget, its wait without a timerfd
 * lasts that budget, counted from when it went on (review rR 3: from the
 * time read after the last batch, so the wait lasted the budget plus the
 * silent end of the one before). Two answers in a 250 ms budget, then
 * silence while the last callback still hints: the budget ends, the round
 * goes on once (nobody else waits), and the next budget ends it, 500 ms
 * after the start (750 ms before the fix). */
static void test_round_extension_waits_one_budget(void **state)
{
    int sv[2];
    Pinger p = { .left = 2, .hint_always = TRUE };
    (void)state;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    DdmWatch *w = ddm_watch_add(sv[0], G_IO_IN, pinger_cb, &p);
    TestEcho echo;
    test_echo_start(&echo, sv[1], 0);
    ddm_watch_set_round_budget(250000);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    guint64 x0 = ddm_watch_round_extensions();
    gint64 t0 = g_get_monotonic_time();
    assert_int_equal(write(sv[0], "p", 1), 1);
    g_main_context_iteration(NULL, TRUE);
    gint64 took = g_get_monotonic_time() - t0;
    assert_int_equal(p.calls, 3); /* all in the first iteration */
    assert_int_equal(ddm_watch_round_extensions() - x0, 1);
    if (took >= 625000)
        fail_msg("the round took %" G_GINT64_FORMAT " us: two budgets are 500,000", took);
    ddm_watch_remove(w);
    shutdown(sv[0], SHUT_WR);
    test_echo_join(&echo);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    if (!refuse_timerfd_and_pwait2()) {
        g_printerr("no seccomp filter here: skipped\n");
        return 77;
    }
    /* the filter works: */
    if (syscall(__NR_timerfd_create, 1, 0) != -1 || errno != EPERM)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_without_timerfd_nor_pwait2),
        cmocka_unit_test(test_round_extension_waits_one_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
