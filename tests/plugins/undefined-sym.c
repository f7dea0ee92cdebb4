/* SPDX-License-Identifier: Apache-2.0
 *
 * Test-only shared object "undefined-sym": calls a function nothing
 * defines, so dlopen(RTLD_NOW) fails with the dynamic linker's "undefined
 * symbol" message (tests/unit/pluginhost/test-loader-module.c checks that
 * the loader's error carries it). Not a plugin: it has no descriptor.
 */
#include <ddmon/plugin.h>

int ddm_test_no_such_symbol(void); /* defined nowhere */

DDM_EXPORT int undefined_sym_function(void);
DDM_EXPORT int undefined_sym_function(void)
{
    return ddm_test_no_such_symbol();
}
