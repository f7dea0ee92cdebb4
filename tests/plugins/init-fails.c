/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "init-fails": registers one of everything (chunk IFCK, a
 * tap, a listener, the command "init-fails-cmd", a timer, a global view,
 * plugin data) and then fails. The registry must leave nothing behind.
 */
#include <errno.h>
#include <stdlib.h>

#include <ddmon/plugin.h>

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
    return -ENOSYS;
}

static int on_timer(ddm_plugin *self, void *ud)
{
    return 1;
}

static int fails_init(ddm_plugin *self, const ddm_host *host)
{
    host->register_chunk(self, DDM_CHUNK('I', 'F', 'C', 'K'), on_chunk, malloc(4), free);
    host->register_tap(self, 0, on_chunk, malloc(4), free);
    host->register_vm_listener(self, on_vm, malloc(4), free);
    host->register_command(self, "init-fails-cmd", NULL, NULL, on_cmd, malloc(4), free);
    host->timer_add(self, 1000, on_timer, malloc(4), free);
    host->view_new(self, NULL, "init-fails.view", DDM_VIEW_RECORD, "never seen");
    host->set_data(self, malloc(4), free);
    return -EIO;
}

DDM_PLUGIN_DEFINE("init-fails", "1.0", "Apache-2.0", "init fails", fails_init, NULL);
