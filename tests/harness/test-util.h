/* SPDX-License-Identifier: Apache-2.0
 *
 * Small helpers shared by cmocka tests: compare byte buffers with a
 * hexdump of both sides on failure, and turn hex text into bytes.
 * Include after <cmocka.h>. Link tests/harness/libddmtestutil.la.
 */
#ifndef DDM_TEST_UTIL_H
#define DDM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/** Print @len bytes at @p as a hexdump to stderr, prefixed by @label. */
void test_util_hexdump(const char *label, const uint8_t *p, size_t len);

/** Fail the current cmocka test (with hexdumps) unless the buffers are equal. */
void test_util_assert_bytes_equal(const uint8_t *got, size_t got_len, const uint8_t *want,
                                  size_t want_len, const char *file, int line);
#define assert_bytes_equal(got, got_len, want, want_len) \
    test_util_assert_bytes_equal((const uint8_t *)(got), (got_len), \
                                 (const uint8_t *)(want), (want_len), __FILE__, __LINE__)

/**
 * Parse hex text ("00 0a|FF", whitespace, '|', ':' and '-' ignored, '#'
 * starts a comment to the end of the line) into a
 * new buffer (g_free). Aborts the test on a malformed string (a test bug).
 */
uint8_t *test_util_unhex(const char *hex, size_t *len);

/** Read a whole file under $DDM_TOP_SRCDIR (or @fallback_dir) into a new buffer (g_free). */
uint8_t *test_util_read_srcfile(const char *relpath, const char *fallback_dir, size_t *len);

#endif /* DDM_TEST_UTIL_H */
