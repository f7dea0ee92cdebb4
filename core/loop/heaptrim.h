/* SPDX-License-Identifier: Apache-2.0
 *
 * The process's malloc_trim: the one place that gives the heap's free pages
 * back to the kernel (glibc's malloc_trim(0); nothing else calls it). Whoever
 * has just freed a lot asks for a trim soon (ddm_heap_trim_soon); the trim
 * runs DDM_HEAP_TRIM_QUIET_MS after the last ask (each ask moves it on, so a
 * burst of asks gives one trim, up to DDM_HEAP_TRIM_LATEST_MS after the
 * first of them) and never sooner than DDM_HEAP_TRIM_GAP_S
 * after the previous trim, whoever asked for that one: all askers together
 * cost one trim per gap at most (a trim costs a few ms with 1,000 VMs,
 * doc/memory.md). Owns one DdmTimer, the time of the last trim and the
 * count of trims; when and why to ask is the askers' (the monitor's round,
 * core/session/monitor.c; large control replies, server/control.c).
 * Main thread only. Without glibc a trim does nothing but count.
 */
#ifndef DDM_LOOP_HEAPTRIM_H
#define DDM_LOOP_HEAPTRIM_H

#include <glib.h>

/** A trim runs this long after the last ask. */
#define DDM_HEAP_TRIM_QUIET_MS 200u
/** ...and at least this long after the previous trim. */
#define DDM_HEAP_TRIM_GAP_S 5u
/** ...but a pending trim is never moved past this long after the ask that
 *  made it pending (the gap aside): asks that keep coming less than
 *  DDM_HEAP_TRIM_QUIET_MS apart (a client polling a large reply) would
 *  otherwise put it off for good, and the monitor's round asks the same. */
#define DDM_HEAP_TRIM_LATEST_MS 1000u

/** Ask for a malloc_trim: DDM_HEAP_TRIM_QUIET_MS from now (no later than
 *  DDM_HEAP_TRIM_LATEST_MS after the ask that made the trim pending), or
 *  at the end of the gap after the previous trim if that is later (a
 *  pending trim moves on to that time). */
void ddm_heap_trim_soon(void);
/** Trims made since the start (or the last ddm_heap_trim_reset). */
guint64 ddm_heap_trim_count(void);
/** When the pending trim is due (monotonic µs), G_MAXINT64 when none is
 *  pending (for tests). */
gint64 ddm_heap_trim_due(void);
/** Cancel a pending trim and forget the past ones (the count, and the last
 *  trim's time: the next ask waits no gap). The server calls it at
 *  shutdown; tests between cases. */
void ddm_heap_trim_reset(void);

#endif /* DDM_LOOP_HEAPTRIM_H */
