/* SPDX-License-Identifier: Apache-2.0
 *
 * Files a plugin writes or reads from the main loop, safely: the FILE.part
 * a streamed payload (heap dump, trace, capture) goes into and that is
 * renamed to FILE only when complete, and a user's file read in blocks.
 * Every open is non-blocking until fstat says it is a regular file: a
 * FIFO or a device under that name is refused instead of stalling the
 * loop (an open of a FIFO waits for its other end).
 *
 * FILE itself must be absent or a regular file: a device, FIFO, socket,
 * directory or symbolic link there is refused before the work starts
 * (part_check_target) and again just before the rename (part_commit), so
 * that `hprof VM /dev/null` can never replace a device with a dump. A
 * symbolic link is refused rather than replaced (rename would replace the
 * link itself, not what it points to) or followed (the .part would be
 * written elsewhere than FILE).
 *
 * One writer per FILE.part: part_open creates it exclusively and holds a
 * flock(2) on it until part_commit or part_abandon, so a second command
 * (of this server, another plugin or another process) writing the same
 * FILE is refused (PART_BUSY) instead of truncating the first one's part.
 * A FILE.part that nobody holds locked is stale (left by a crash) and is
 * replaced.
 */
#ifndef DDM_PLUGINS_COMMON_PARTFILE_H
#define DDM_PLUGINS_COMMON_PARTFILE_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

/* The error a refused non-regular file gets (part_strerror names it). */
#define PART_NOT_REGULAR (-ENODEV)
/* FILE (or FILE.part) is a symbolic link: refused, never followed. */
#define PART_SYMLINK (-ELOOP)
/* FILE.part is being written by another open (its flock is held). */
#define PART_BUSY (-EBUSY)

/* May a finished FILE.part be renamed onto @path? 0 if @path does not
 * exist or is a regular file; PART_SYMLINK for a symbolic link (lstat:
 * not followed); PART_NOT_REGULAR for a directory, FIFO, device or
 * socket; or -errno of lstat. Touches nothing. */
int part_check_target(const char *path);

/* Create @part for writing (@read_too: O_RDWR), mode @mode, never through
 * a symlink (O_NOFOLLOW), and lock it (flock LOCK_EX) for as long as the
 * fd is open. A blocking fd of a new, empty regular file, or -errno:
 * PART_BUSY if another open holds @part; PART_NOT_REGULAR or PART_SYMLINK
 * for anything but a regular file there (that file is left alone). An
 * unlocked regular @part (stale) is removed and created afresh. The caller
 * owns the fd: part_commit or part_abandon it. */
int part_open(const char *part, int read_too, mode_t mode);

/* Open @path read-only (symlinks followed): a blocking fd of a regular
 * file and its size in *@size, or -errno (PART_NOT_REGULAR). */
int part_open_read(const char *path, unsigned long long *size);

/* strerror, and words for PART_NOT_REGULAR, PART_SYMLINK and PART_BUSY.
 * @rc < 0. */
const char *part_strerror(int rc);

/* Write all @n bytes (retrying on EINTR and short writes). 0 or -errno. */
int part_write_all(int fd, const void *p, size_t n);

/* Check @path again (part_check_target), rename @part (fd @fd, from
 * part_open, still locked) to @path and close @fd. 0, or -errno with
 * @err (@err_len bytes) saying what failed and naming the file: @path not
 * a regular file any more, the rename, or the close (a write error; @path
 * is then removed). On any failure @part is gone too and @fd closed. */
int part_commit(int fd, const char *part, const char *path, char *err, size_t err_len);

/* Remove @part and close @fd (if >= 0; @part is not touched when < 0):
 * the payload did not complete. The unlink comes first, while the lock
 * still says the name is ours. */
void part_abandon(int fd, const char *part);

#endif
