/* SPDX-License-Identifier: Apache-2.0
 *
 * Files a plugin writes or reads from the main loop, safely: the FILE.part
 * a streamed payload (heap dump, trace, capture) goes into and that is
 * renamed to FILE only when complete, and a user's file read in blocks.
 * Every open is non-blocking until fstat says it is a regular file: a
 * FIFO or a device under that name is refused instead of stalling the
 * loop (an open of a FIFO waits for its other end).
 */
#ifndef DDM_PLUGINS_COMMON_PARTFILE_H
#define DDM_PLUGINS_COMMON_PARTFILE_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

/* The error a refused non-regular file gets (part_strerror names it). */
#define PART_NOT_REGULAR (-ENODEV)

/* Create (truncate) @part for writing (@read_too: O_RDWR), mode @mode,
 * never through a symlink (O_NOFOLLOW). A blocking fd of a regular file,
 * or -errno (PART_NOT_REGULAR for anything else; that file is left
 * alone). The caller owns the fd: part_commit or part_abandon it. */
int part_open(const char *part, int read_too, mode_t mode);

/* Open @path read-only (symlinks followed): a blocking fd of a regular
 * file and its size in *@size, or -errno (PART_NOT_REGULAR). */
int part_open_read(const char *path, unsigned long long *size);

/* strerror, and "not a regular file" for PART_NOT_REGULAR. @rc < 0. */
const char *part_strerror(int rc);

/* Write all @n bytes (retrying on EINTR and short writes). 0 or -errno. */
int part_write_all(int fd, const void *p, size_t n);

/* Close @fd and rename @part to @path; on any failure @part is removed.
 * 0, or -errno with *@what set to "write" (close) or "rename". */
int part_commit(int fd, const char *part, const char *path, const char **what);

/* Close @fd (if >= 0) and remove @part: the payload did not complete. */
void part_abandon(int fd, const char *part);

#endif
