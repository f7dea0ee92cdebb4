/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only plugin "no-desc": a valid shared object without the
 * ddm_plugin_descriptor symbol: refused as NOT_A_PLUGIN.
 */
#include <ddmon/plugin.h>

DDM_EXPORT int no_desc_function(void);
DDM_EXPORT int no_desc_function(void)
{
    return 42;
}
