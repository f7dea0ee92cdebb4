/* SPDX-License-Identifier: Apache-2.0
 *
 * The log context's VM (logctx.h): a bounded stack of borrowed keys (pushed
 * and popped by logctx.h's inline functions).
 */
#include "core/session/logctx.h"

#include <stddef.h>

const char *ddm_logctx_stack_[DDM_LOGCTX_DEPTH];
unsigned ddm_logctx_depth_;

const char *ddm_logctx_vm(void)
{
    if (ddm_logctx_depth_ == 0)
        return NULL;
    return ddm_logctx_stack_[ddm_logctx_depth_ <= DDM_LOGCTX_DEPTH ? ddm_logctx_depth_ - 1
                                                                   : DDM_LOGCTX_DEPTH - 1];
}
