/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "good": a well-formed plugin that exercises every kind of
 * registration (chunk owner GOOD, a tap on every type, a VM listener, the
 * command "good-cmd", plugin data). Loaded by tests/unit/pluginhost/test-loader.
 */
#include <errno.h>
#include <stdlib.h>

#include <ddmon/plugin.h>

#define GOOD_TYPE DDM_CHUNK('G', 'O', 'O', 'D')

static int on_chunk(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                    size_t len, void *ud)
{
    return DDM_OK;
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
}

static int on_cmd(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    const ddm_host *host = ud;
    host->cmd_finish(cmd, DDM_CMD_OK, "good");
    return 0;
}

static int good_init(ddm_plugin *self, const ddm_host *host)
{
    int rc;
    if ((rc = host->register_chunk(self, GOOD_TYPE, on_chunk, malloc(8), free)) < 0)
        return rc;
    if ((rc = host->register_tap(self, 0, on_chunk, NULL, NULL)) < 0)
        return rc;
    if ((rc = host->register_vm_listener(self, on_vm, NULL, NULL)) < 0)
        return rc;
    if ((rc = host->register_command(self, "good-cmd", "good-cmd", "answers good", on_cmd,
                                     (void *)host, NULL)) < 0)
        return rc;
    host->set_data(self, malloc(16), free);
    return 0;
}

static void good_fini(ddm_plugin *self)
{
}

DDM_PLUGIN_DEFINE("good", "1.2.3", "Apache-2.0", "test plugin that loads", good_init, good_fini);
