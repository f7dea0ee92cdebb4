/* SPDX-License-Identifier: Apache-2.0
 *
 * Whole-buffer socket reads and writes for the test tools (rawio.h).
 */
#include "rawio.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

int raw_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int raw_read_all(int fd, void *buf, size_t n, int timeout_ms)
{
    uint8_t *p = buf;
    while (n) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, timeout_ms);
        if (r == 0)
            return -2;
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}
