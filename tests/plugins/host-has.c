/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "host-has": built with this SDK (1.1 or later) for cores
 * from 1.0 on (DDM_ABI_MINOR_REQUIRED 0), so it must test members newer
 * than 1.0 with DDM_HOST_HAS() before calling them. Its command "host-has"
 * answers a record: "abi_minor" (the core's), "foreach_vm" (whether the
 * table has it) and "vms" (how many VMs foreach_vm visited; null without
 * it). Loaded into the real core by tests/unit/pluginhost/test-registry and
 * into the test kit, as a 1.1 and as a 1.0 host, by test-host-has.
 */
#define DDM_ABI_MINOR_REQUIRED 0
#include <errno.h>
#include <stdint.h>

#include <ddmon/plugin.h>

static int count_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    (void)self;
    (void)vm;
    ++*(int64_t *)ud;
    return 0;
}

static int on_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    const ddm_host *host = ud;
    ddm_view *res = host->cmd_result(cmd, DDM_VIEW_RECORD, "host-has");
    int has = DDM_HOST_HAS(host, foreach_vm);
    (void)argc;
    (void)argv;
    if (!res)
        return -ENOMEM;
    host->view_begin(res);
    host->view_field_int(res, "abi_minor", host->abi_minor);
    host->view_field_bool(res, "foreach_vm", has);
    if (has) {
        int64_t n = 0;
        size_t calls = host->foreach_vm(self, count_vm, &n);
        host->view_field_int(res, "vms", (int64_t)calls == n ? n : -1);
    } else {
        host->view_field_str(res, "vms", NULL); /* a 1.0 core cannot say */
    }
    host->view_commit(res);
    host->cmd_finish(cmd, DDM_CMD_OK, has ? "1.1 host" : "1.0 host");
    return 0;
}

static int host_has_init(ddm_plugin *self, const ddm_host *host)
{
    return host->register_command(self, "host-has", "host-has", "what the host table has",
                                  on_cmd, (void *)host, NULL);
}

DDM_PLUGIN_DEFINE("host-has", "1.0", "Apache-2.0", "built for ABI 1.0 with SDK 1.1",
                  host_has_init, NULL);
