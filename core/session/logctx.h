/* SPDX-License-Identifier: Apache-2.0
 *
 * The VM a log line is about: while the session handles one VM's socket,
 * timer or connect callback, that VM's key is the log context, and the
 * server's log writer (server/log.c) prints it as a field of every line
 * logged meanwhile, whoever logs it (the session, the plugin host, a
 * plugin, the relay). Main-loop thread only; nesting is allowed, to any
 * depth: each enter returns the key it replaces, which its leave puts back
 * (the callers' frames are the stack). Enter and leave are inline (every
 * relayed packet enters and leaves); the current key is logctx.c's.
 */
#ifndef DDM_LOGCTX_H
#define DDM_LOGCTX_H

/* logctx.c's current key: use the functions below, not this */
extern const char *ddm_logctx_current_;

/** Make @key (borrowed; must outlive the matching leave) the current VM.
 *  Returns the key it replaces (NULL: none), for ddm_logctx_leave. */
static inline const char *ddm_logctx_enter(const char *key)
{
    const char *before = ddm_logctx_current_;
    ddm_logctx_current_ = key;
    return before;
}

/** Back to @before, what the matching ddm_logctx_enter returned. */
static inline void ddm_logctx_leave(const char *before)
{
    ddm_logctx_current_ = before;
}

/** The current VM's key, or NULL outside any VM's callback. */
const char *ddm_logctx_vm(void);

#endif /* DDM_LOGCTX_H */
