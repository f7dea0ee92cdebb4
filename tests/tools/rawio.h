/* SPDX-License-Identifier: Apache-2.0
 *
 * Whole-buffer reads and writes on a blocking socket for the test tools
 * (jdwpc, evilvm): retried on EINTR, reads bounded by a poll timeout.
 */
#ifndef DDM_TESTS_TOOLS_RAWIO_H
#define DDM_TESTS_TOOLS_RAWIO_H

#include <stddef.h>

/* All @n bytes of @buf to @fd: 0, or -1 (an error, or the peer went away;
 * errno as write left it). */
int raw_write_all(int fd, const void *buf, size_t n);

/* Exactly @n bytes from @fd into @buf, each wait at most @timeout_ms
 * (negative: no limit): 0, -1 EOF or error, -2 timeout. */
int raw_read_all(int fd, void *buf, size_t n, int timeout_ms);

#endif
