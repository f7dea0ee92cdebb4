/* SPDX-License-Identifier: Apache-2.0
 *
 * The log context's VM (logctx.h): the current key, borrowed (entered and
 * left by logctx.h's inline functions).
 */
#include "core/session/logctx.h"

#include <stddef.h>

const char *ddm_logctx_current_;

const char *ddm_logctx_vm(void)
{
    return ddm_logctx_current_;
}
