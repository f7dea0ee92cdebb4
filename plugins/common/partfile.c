/* SPDX-License-Identifier: Apache-2.0
 *
 * FILE.part handling for plugins (partfile.h): the check that FILE is
 * absent or a regular file, the exclusive, locked, non-blocking open +
 * fstat regular-file check of FILE.part (a stale one replaced), the write
 * loop, the rename or removal at the end.
 */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
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

int part_check_target(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISLNK(st.st_mode))
        return PART_SYMLINK;
    return S_ISREG(st.st_mode) ? 0 : PART_NOT_REGULAR;
}

/* Does @path still name the file open as @fd? */
static int still_named(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* Tries before giving up as busy: each lost race (another opener created,
 * replaced or removed @part between our open and our lock) costs one. */
#define PART_OPEN_TRIES 8

int part_open(const char *part, int read_too, mode_t mode)
{
    int acc = read_too ? O_RDWR : O_WRONLY;
    for (int i = 0; i < PART_OPEN_TRIES; i++) {
        int created = 1, fd;
        /* O_EXCL: a FIFO, device or symlink there is EEXIST, not opened */
        fd = open(part, acc | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
        if (fd < 0 && errno == EEXIST) {
            /* there already: a FIFO, device or symlink is refused without
             * being opened; a regular file is opened read-only (never
             * written, never truncated) only to see whether its lock is
             * held */
            int rc = part_check_target(part);
            if (rc < 0)
                return rc;
            created = 0;
            fd = open(part, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
            if (fd < 0 && errno == ENOENT)
                continue; /* gone meanwhile */
        }
        fd = keep_if_regular(fd, NULL);
        if (fd < 0)
            return fd == -ELOOP ? PART_SYMLINK : fd;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            if (e != EWOULDBLOCK && created)
                return fd; /* no locks on this file system: ours, unlocked */
            close(fd);
            /* held: another writer's. Unsupported: stale and busy cannot
             * be told apart, so an existing part is left alone */
            return e == EWOULDBLOCK ? PART_BUSY : -e;
        }
        if (!still_named(fd, part)) {
            close(fd); /* replaced by another opener after our open */
            continue;
        }
        if (!created) {
            /* nobody holds it: a crash's leftover. Removed while we hold
             * its lock (an opener waiting for that lock then sees the name
             * gone), created afresh with our mode and owner */
            int e = unlink(part) != 0 && errno != ENOENT ? errno : 0;
            close(fd);
            if (e)
                return -e;
            continue;
        }
        return fd;
    }
    return PART_BUSY;
}

int part_open_read(const char *path, unsigned long long *size)
{
    return keep_if_regular(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), size);
}

const char *part_strerror(int rc)
{
    if (rc == PART_NOT_REGULAR)
        return "not a regular file";
    if (rc == PART_SYMLINK)
        return "a symbolic link, not a regular file";
    if (rc == PART_BUSY)
        return "in use: another command is writing the same file";
    return strerror(-rc);
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

int part_commit(int fd, const char *part, const char *path, char *err, size_t err_len)
{
    int rc;
    /* again: a device or FIFO may have appeared since part_check_target */
    rc = part_check_target(path);
    if (rc != 0) {
        snprintf(err, err_len, "cannot replace %s: %s", path, part_strerror(rc));
        part_abandon(fd, part);
        return rc;
    }
    /* renamed while still locked: once closed, another opener could take
     * the name as stale and replace it under us */
    if (rename(part, path) != 0) {
        rc = -errno;
        snprintf(err, err_len, "cannot rename %s to %s: %s", part, path, strerror(-rc));
        part_abandon(fd, part);
        return rc;
    }
    if (close(fd) != 0 && errno != EINTR) {
        rc = -errno;
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(-rc));
        unlink(path); /* ours, incomplete */
        return rc;
    }
    return 0;
}

void part_abandon(int fd, const char *part)
{
    if (fd < 0)
        return;
    unlink(part);
    close(fd);
}
