/* SPDX-License-Identifier: Apache-2.0
 *
 * Rate-limited log lines: a peer that misbehaves in a loop (a VM that
 * sends bad packets, a debugger port hammered by connects) must not fill
 * the log. Each line has a key (the peer and what happened, e.g.
 * "127.0.0.1:8001 bad packet"); per key at most DDM_RATELOG_BURST lines
 * are printed in a window of DDM_RATELOG_WINDOW_MS, the rest are counted,
 * and when the window ends one line says how many were suppressed.
 *
 * The table is an object with an explicit clock (DdmRateLog, unit-tested)
 * and a process-wide instance on the main loop's clock (ddm_ratelog()).
 * Invariants: at most max_keys keys are tracked (keys cut to
 * DDM_RATELOG_KEY_MAX bytes); when the table is full, the keys whose
 * window ended are forgotten first, then lines of new keys share one
 * overflow key; memory is bounded whatever the callers log. Main-loop
 * thread only.
 */
#ifndef DDM_RATELOG_H
#define DDM_RATELOG_H

#include <glib.h>

#include "core/loop/accept.h"

/** Lines printed per key per window. */
#define DDM_RATELOG_BURST 5u
/** The window, in milliseconds. */
#define DDM_RATELOG_WINDOW_MS 10000u
/** Keys tracked at once by the process-wide table. */
#define DDM_RATELOG_MAX_KEYS 1024u
/** Longest key kept, in bytes. */
#define DDM_RATELOG_KEY_MAX 160u
/** The key lines of untracked keys share when the table is full. */
#define DDM_RATELOG_OVERFLOW_KEY "(other peers)"

typedef struct DdmRateLog DdmRateLog;

/** A table allowing @burst lines per key per @window_ms, tracking at most
 *  @max_keys keys (each >= 1). (transfer full) */
DdmRateLog *ddm_ratelog_new(guint burst, guint window_ms, guint max_keys);
void ddm_ratelog_free(DdmRateLog *rl);
/** May a line with @key be printed at @now_us (monotonic microseconds)?
 *  TRUE: print it. FALSE: it is counted as suppressed. When @key's earlier
 *  window ended with lines suppressed, *@suppressed (may be NULL) gets
 *  their count (print that summary before the line), else 0. */
gboolean ddm_ratelog_check(DdmRateLog *rl, const char *key, gint64 now_us, guint *suppressed);
/** The summaries due at @now_us: @fn(key, count, level, ud) for every key
 *  whose window ended with lines suppressed (@level: the last suppressed
 *  line's, as given to ddm_ratelog_note_level); every key whose window
 *  ended is forgotten. Returns the number of keys still tracked. */
guint ddm_ratelog_expire(DdmRateLog *rl, gint64 now_us,
                         void (*fn)(const char *key, guint count, GLogLevelFlags level,
                                    gpointer ud),
                         gpointer ud);
/** Remember @level for @key's summary (after a check that returned FALSE). */
void ddm_ratelog_note_level(DdmRateLog *rl, const char *key, GLogLevelFlags level);
/** Keys tracked now. */
guint ddm_ratelog_keys(const DdmRateLog *rl);
/** How often a full table was walked for keys to forget (for tests: at
 *  most once per window's end, not once per new key). */
guint ddm_ratelog_sweeps(const DdmRateLog *rl);

/** Log through the process-wide table: g_log(@level) of the message when
 *  @key allows it; the summary of suppressed lines ("KEY: N more such
 *  lines suppressed in the last S s") is logged at the same level when the
 *  window ends (a main-loop timer) or before the key's next line. */
void ddm_ratelog(const char *key, GLogLevelFlags level, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/** The line of a listener's trouble (core/loop/listener.h), through
 *  ddm_ratelog at G_LOG_LEVEL_WARNING, keyed "@what accept @where": for
 *  DDM_ACCEPT_SHED "@what: out of descriptors (ERR): refused a connection
 *  @where", for DDM_ACCEPT_ERROR "@what: accept @where: ERR (paused N ms)"
 *  (ERR: @err's text; N: @paused_ms). @where (e.g. "on port 8700") may be
 *  NULL. The one wording every accept loop logs. */
void ddm_ratelog_accept(const char *what, const char *where, DdmAcceptResult r, int err,
                        guint paused_ms);
/** Forget every key of the process-wide table (tests: a fresh budget). */
void ddm_ratelog_reset(void);

#endif /* DDM_RATELOG_H */
