/* SPDX-License-Identifier: Apache-2.0
 *
 * The VM a log line is about: while the session handles one VM's socket,
 * timer or connect callback, that VM's key is the log context, and the
 * server's log writer (server/log.c) prints it as a field of every line
 * logged meanwhile, whoever logs it (the session, the plugin host, a
 * plugin, the relay). Main-loop thread only; nesting is allowed (a small
 * bounded stack: deeper pushes are counted but not recorded). Push and pop
 * are inline (every relayed packet pushes and pops); the stack is logctx.c's.
 */
#ifndef DDM_LOGCTX_H
#define DDM_LOGCTX_H

#define DDM_LOGCTX_DEPTH 8

/* logctx.c's stack: use the functions below, not these */
extern const char *ddm_logctx_stack_[DDM_LOGCTX_DEPTH];
extern unsigned ddm_logctx_depth_; /* pushes not yet popped; above DDM_LOGCTX_DEPTH only counted */

/** Make @key (borrowed; must outlive the matching pop) the current VM. */
static inline void ddm_logctx_push_vm(const char *key)
{
    if (ddm_logctx_depth_ < DDM_LOGCTX_DEPTH)
        ddm_logctx_stack_[ddm_logctx_depth_] = key;
    ddm_logctx_depth_++;
}

/** Back to the VM before the matching push (or none). */
static inline void ddm_logctx_pop_vm(void)
{
    if (ddm_logctx_depth_ > 0)
        ddm_logctx_depth_--;
}

/** The current VM's key, or NULL outside any VM's callback. */
const char *ddm_logctx_vm(void);

#endif /* DDM_LOGCTX_H */
