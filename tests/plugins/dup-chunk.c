/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "dup-chunk": owns DUPC, then claims GOOD, which the
 * "good" plugin already owns, and ignores the -EEXIST. The registry must
 * refuse it anyway (CHUNK_CONFLICT) and undo DUPC.
 */
#include <stdlib.h>

#include <ddmon/plugin.h>

static int on_chunk(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                    size_t len, void *ud)
{
    return DDM_OK;
}

static int dup_init(ddm_plugin *self, const ddm_host *host)
{
    host->register_chunk(self, DDM_CHUNK('D', 'U', 'P', 'C'), on_chunk, malloc(4), free);
    (void)host->register_chunk(self, DDM_CHUNK('G', 'O', 'O', 'D'), on_chunk, malloc(4), free);
    return 0;
}

static void dup_fini(ddm_plugin *self)
{
}

DDM_PLUGIN_DEFINE("dup-chunk", "1.0", "Apache-2.0", "claims GOOD too", dup_init, dup_fini);
