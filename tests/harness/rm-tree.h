/* SPDX-License-Identifier: Apache-2.0
 *
 * Recursive removal of a test's scratch folder without a shell (no
 * system("rm -rf ..."): a quote or a long name in the path cannot break
 * it). libc only (no glib, no cmocka), so any test may compile
 * tests/harness/rm-tree.c in, whatever else it links.
 */
#ifndef DDM_TESTS_HARNESS_RM_TREE_H
#define DDM_TESTS_HARNESS_RM_TREE_H

/** Remove @path and, if it is a directory, everything below it, depth
 *  first. Symbolic links are removed, never followed; a directory a test
 *  left unreadable is made readable (0700) first. An absent @path is not
 *  an error. 0, or -errno of the first entry that could not be removed
 *  (the rest is still tried). */
int test_rm_tree(const char *path);

#endif
