/* SPDX-License-Identifier: Apache-2.0
 *
 * The parts of a plugin test's fixture on the SDK test kit that every
 * plugin writing files shares: a ready VM with a FEAT list, and a scratch
 * folder for the client's files.
 */
#ifndef DDM_TESTS_HARNESS_PLUGIN_FIXTURE_H
#define DDM_TESTS_HARNESS_PLUGIN_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/testkit.h>

/* A tcp VM @key (pid @pid, app @app, ddm, no user id, native debuggable
 * unknown) whose FEAT list is @features (@n_features of them, borrowed:
 * they must outlive the VM), added to @fh and announced DDM_VM_READY. */
ddm_vm *pfx_add_ready_vm(fake_host *fh, const char *key, uint32_t pid, const char *app,
                         const char *const *features, size_t n_features);

/* A fresh folder /tmp/ddmon-@name-test.XXXXXX into @dir (@n bytes), the
 * client's working folder of @fh; fails the test when it cannot be made. */
void pfx_client_dir_new(fake_host *fh, const char *name, char *dir, size_t n);

/* Removes @dir and all below it, without a shell (test_rm_tree,
 * rm-tree.h; compile tests/harness/rm-tree.c in too); fails the test when
 * that fails. */
void pfx_dir_remove(const char *dir);

#endif
