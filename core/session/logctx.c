/* SPDX-License-Identifier: Apache-2.0
 *
 * The log context's VM (logctx.h): a bounded stack of borrowed keys.
 */
#include "core/session/logctx.h"

#include <stddef.h>

#define LOGCTX_DEPTH 8

static const char *stack[LOGCTX_DEPTH];
static unsigned depth; /* pushes not yet popped; above LOGCTX_DEPTH only counted */

void ddm_logctx_push_vm(const char *key)
{
    if (depth < LOGCTX_DEPTH)
        stack[depth] = key;
    depth++;
}

void ddm_logctx_pop_vm(void)
{
    if (depth > 0)
        depth--;
}

const char *ddm_logctx_vm(void)
{
    if (depth == 0)
        return NULL;
    return stack[depth <= LOGCTX_DEPTH ? depth - 1 : LOGCTX_DEPTH - 1];
}
