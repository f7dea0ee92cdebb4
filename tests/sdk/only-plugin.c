/* SPDX-License-Identifier: Apache-2.0
 *
 * <ddmon/plugin.h> alone, first and only include: it must bring everything it needs.
 */
#include <ddmon/plugin.h>

int sdk_only_plugin(void);

int sdk_only_plugin(void)
{
    return (int)sizeof(ddm_plugin_desc) > 0 && DDM_PLUGIN_MAGIC == 0x44444D50u;
}
