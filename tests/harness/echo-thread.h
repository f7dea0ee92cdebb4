/* SPDX-License-Identifier: Apache-2.0
 *
 * The far end of a socketpair, in a thread, for the tests of core/loop's
 * watches: every byte read is written back (after a delay the test may
 * change while it runs), until EOF or 5 s without a byte. Compiled into
 * each test that uses it (tests/unit/loop/local.mk).
 */
#ifndef DDM_TEST_ECHO_THREAD_H
#define DDM_TEST_ECHO_THREAD_H

#include <glib.h>

typedef struct TestEcho {
    int fd;        /* borrowed: the test closes it after test_echo_join */
    gint delay_us; /* atomic (g_atomic_int_set): a test may change it while the echo runs */
    GThread *thread; /* NULL until test_echo_start */
} TestEcho;

/** Start echoing on @fd, each byte @delay_us after it was read. */
void test_echo_start(TestEcho *e, int fd, guint delay_us);
/** Wait for the echo to end (the test shut its end down for writing) and
 *  forget the thread. No-op if none runs. */
void test_echo_join(TestEcho *e);

#endif /* DDM_TEST_ECHO_THREAD_H */
