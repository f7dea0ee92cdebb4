/* SPDX-License-Identifier: Apache-2.0
 *
 * The VM a log line is about: while the session handles one VM's socket,
 * timer or connect callback, that VM's key is the log context, and the
 * server's log writer (server/log.c) prints it as a field of every line
 * logged meanwhile, whoever logs it (the session, the plugin host, a
 * plugin, the relay). Main-loop thread only; nesting is allowed (a small
 * bounded stack: deeper pushes are counted but not recorded).
 */
#ifndef DDM_LOGCTX_H
#define DDM_LOGCTX_H

/** Make @key (borrowed; must outlive the matching pop) the current VM. */
void ddm_logctx_push_vm(const char *key);
/** Back to the VM before the matching push (or none). */
void ddm_logctx_pop_vm(void);
/** The current VM's key, or NULL outside any VM's callback. */
const char *ddm_logctx_vm(void);

#endif /* DDM_LOGCTX_H */
