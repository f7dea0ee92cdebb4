/* SPDX-License-Identifier: Apache-2.0
 *
 * Shared pieces of plugin test fixtures (plugin-fixture.h).
 */
#include "plugin-fixture.h"
#include "rm-tree.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

ddm_vm *pfx_add_ready_vm(fake_host *fh, const char *key, uint32_t pid, const char *app,
                         const char *const *features, size_t n_features)
{
    ddm_vm_info info;
    ddm_vm *vm;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    info.key = key;
    info.transport = "tcp";
    info.pid = pid;
    info.ddm = 1;
    info.app_name = app;
    info.user_id = -1;
    info.native_debuggable = -1;
    info.n_features = n_features;
    info.features = features;
    vm = fake_host_add_vm(fh, &info);
    fake_host_vm_event(fh, vm, DDM_VM_READY);
    return vm;
}

void pfx_client_dir_new(fake_host *fh, const char *name, char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/ddmon-%s-test.XXXXXX", name);
    assert_non_null(mkdtemp(dir));
    fake_host_set_client_cwd(fh, dir);
}

void pfx_dir_remove(const char *dir)
{
    int rc = test_rm_tree(dir);
    if (rc != 0)
        fail_msg("removing %s: %s", dir, strerror(-rc));
}
