/* SPDX-License-Identifier: Apache-2.0
 *
 * The echo thread of the core/loop watch tests (echo-thread.h).
 */
#include "echo-thread.h"

#include <sys/select.h>
#include <unistd.h>

static gpointer echo_main(gpointer ud)
{
    TestEcho *e = ud;
    char b;
    for (;;) {
        struct timeval tv = { .tv_sec = 5 };
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(e->fd, &rd);
        if (select(e->fd + 1, &rd, NULL, NULL, &tv) <= 0)
            break;
        ssize_t n = read(e->fd, &b, 1);
        if (n == 0)
            break;
        if (n < 0)
            continue; /* EAGAIN */
        gint delay = g_atomic_int_get(&e->delay_us);
        if (delay)
            g_usleep((gulong)delay);
        if (write(e->fd, &b, 1) != 1)
            break;
    }
    return NULL;
}

void test_echo_start(TestEcho *e, int fd, guint delay_us)
{
    e->fd = fd;
    e->delay_us = (gint)delay_us;
    e->thread = g_thread_new("echo", echo_main, e);
}

void test_echo_join(TestEcho *e)
{
    if (e->thread)
        g_thread_join(e->thread);
    e->thread = NULL;
}
