/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "abi-newer-minor": built against a newer minor than the
 * core provides, so it may use host members the core lacks: refused
 * (ABI_MISMATCH).
 */
#include <stdlib.h>

#include <ddmon/plugin.h>

static int newer_init(ddm_plugin *self, const ddm_host *host)
{
    abort(); /* must never run */
}

DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor;
DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor = {
    DDM_PLUGIN_MAGIC, DDM_ABI_MAJOR, DDM_ABI_MINOR + 1, (uint32_t)sizeof(ddm_plugin_desc),
    "abi-newer-minor", "1.0", "Apache-2.0", "newer minor", newer_init, NULL};
