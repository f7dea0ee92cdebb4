/* SPDX-License-Identifier: Apache-2.0
 *
 * FILE.part handling for plugins (partfile.h): non-blocking open + fstat
 * regular-file check, the write loop, the rename or removal at the end.
 */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partfile.h"

/* @fd just opened with O_NONBLOCK: keep it only if it is a regular file,
 * and then make it blocking (regular files never block anyway). */
static int keep_if_regular(int fd, unsigned long long *size)
{
    struct stat st;
    int flags;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return PART_NOT_REGULAR;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (size)
        *size = (unsigned long long)st.st_size;
    return fd;
}

int part_open(const char *part, int read_too, mode_t mode)
{
    /* O_TRUNC does nothing to a FIFO or a device; a FIFO without a reader
     * fails (ENXIO), one with a reader is refused by the fstat */
    int fd = open(part, (read_too ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC | O_CLOEXEC |
                            O_NOFOLLOW | O_NONBLOCK, mode);
    return keep_if_regular(fd, NULL);
}

int part_open_read(const char *path, unsigned long long *size)
{
    return keep_if_regular(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), size);
}

const char *part_strerror(int rc)
{
    return rc == PART_NOT_REGULAR ? "not a regular file" : strerror(-rc);
}

int part_write_all(int fd, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int part_commit(int fd, const char *part, const char *path, const char **what)
{
    int e;
    if (close(fd) != 0) {
        e = errno;
        *what = "write";
        unlink(part);
        return -e;
    }
    if (rename(part, path) != 0) {
        e = errno;
        *what = "rename";
        unlink(part);
        return -e;
    }
    return 0;
}

void part_abandon(int fd, const char *part)
{
    if (fd < 0)
        return;
    close(fd);
    unlink(part);
}
