/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "bad-magic": its descriptor carries the wrong magic, so
 * the loader must refuse it (BAD_DESCRIPTOR) without calling init.
 */
#include <stdlib.h>

#include <ddmon/plugin.h>

static int bad_init(ddm_plugin *self, const ddm_host *host)
{
    abort(); /* must never run */
}

DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor;
DDM_EXPORT const ddm_plugin_desc ddm_plugin_descriptor = {
    0xDEADBEEFu, DDM_ABI_MAJOR, DDM_ABI_MINOR, (uint32_t)sizeof(ddm_plugin_desc),
    "bad-magic", "1.0", "Apache-2.0", "wrong magic", bad_init, NULL};
