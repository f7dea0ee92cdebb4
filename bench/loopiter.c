/* SPDX-License-Identifier: Apache-2.0
 *
 * loopiter: what one glib main-loop iteration costs with few sources, the
 * floor under any relay that keeps glib as its loop (bench/relay.sh runs it
 * under callgrind and prints instructions per iteration). Each iteration
 * writes one byte into a pipe and runs g_main_context_iteration(), which
 * dispatches the pipe's fd watch (it reads the byte).
 *
 *   loopiter N [TIMEOUTS]
 * N iterations; TIMEOUTS idle g_timeout sources attached besides (250 ms
 * and up, never due in a short run). Exit 0 when every byte was read.
 */
#include <glib-unix.h>
#include <glib.h>
#include <stdlib.h>
#include <unistd.h>

static gboolean on_in(gint fd, GIOCondition cond, gpointer ud)
{
    char b;
    (void)cond;
    if (read(fd, &b, 1) == 1)
        (*(long *)ud)++;
    return G_SOURCE_CONTINUE;
}

static gboolean on_timeout(gpointer ud)
{
    (void)ud;
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0, got = 0;
    int timeouts = argc > 2 ? atoi(argv[2]) : 0;
    int p[2];
    if (pipe(p) != 0)
        return 2;
    g_unix_fd_add(p[0], G_IO_IN, on_in, &got);
    for (int i = 0; i < timeouts; i++)
        g_timeout_add(250 + (guint)i, on_timeout, NULL);
    for (long i = 0; i < n; i++) {
        if (write(p[1], "x", 1) != 1)
            return 2;
        g_main_context_iteration(NULL, TRUE);
    }
    return got == n ? 0 : 1;
}
