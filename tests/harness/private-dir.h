/* SPDX-License-Identifier: Apache-2.0
 *
 * A private scratch directory for tests that put files where the loader's
 * trust rules look at them (mode 0700, so neither it nor a file in it is
 * writable by others unless a test makes it so): made in a cmocka setup,
 * removed with all it holds in the teardown. Include after <cmocka.h>.
 * Link tests/harness/libddmtestutil.la.
 */
#ifndef DDM_TEST_PRIVATE_DIR_H
#define DDM_TEST_PRIVATE_DIR_H

/** A new directory from g_dir_make_tmp(@tmpl) with mode 0700 (g_free);
 *  fails the current test if it cannot be made. */
char *test_private_dir_new(const char *tmpl);

/** Remove @dir and everything below it (symbolic links are removed, never
 *  followed; test_rm_tree), then g_free(@dir); fails the current test if
 *  something could not be removed. NULL is ignored. */
void test_private_dir_free(char *dir);

#endif /* DDM_TEST_PRIVATE_DIR_H */
