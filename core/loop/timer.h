/* SPDX-License-Identifier: Apache-2.0
 *
 * Timers: every deadline of the daemon in one binary min-heap, driven by a
 * single GSource that computes the poll timeout from the earliest deadline
 * (arming never wakes the context: no eventfd write). A DdmTimer is embedded in its owner's struct: arming allocates nothing, and each armed
 * timer knows its heap index, so arming, re-arming and cancelling are
 * O(log n). Deadlines are on the monotonic clock (g_get_monotonic_time, µs).
 *
 * Order: timers fire in deadline order; equal deadlines fire in the order
 * they were armed. A zero delay means "at the next loop iteration" (this
 * replaces per-event idle sources). One dispatch fires only timers armed
 * before it started, so a callback that re-arms itself with a zero delay
 * runs again at the next iteration, never in a loop within one; a deadline
 * in the past armed during a dispatch counts as just after it, so it never
 * holds back the other timers already due.
 *
 * Ownership and re-entrancy: the owner must cancel an armed timer before
 * freeing the memory that holds it (ddm_timer_cancel is a no-op on an
 * unarmed timer). A timer is disarmed before its callback runs, so the
 * callback may free its owner, re-arm itself, and arm or cancel any other
 * timer. Main thread only; the single GSource lives on the global default
 * main context at G_PRIORITY_DEFAULT.
 */
#ifndef DDM_LOOP_TIMER_H
#define DDM_LOOP_TIMER_H

#include <glib.h>

typedef struct DdmTimer DdmTimer;
typedef void (*DdmTimerFn)(DdmTimer *t, gpointer ud);

struct DdmTimer {
    /*< private >*/
    gint64 due_us;    /* monotonic deadline while armed */
    guint64 seq;      /* arming order: ties, and "armed during this dispatch" */
    guint index;      /* 1 + position in the heap; 0 = not armed */
    DdmTimerFn fn;
    gpointer ud;
};

/** Prepare @t to call @fn(@t, @ud), unarmed. On a timer that is armed it
 *  changes only the callback (so it may run before every arming). A zeroed
 *  DdmTimer (g_new0) is unarmed: cancel and ddm_timer_armed work on it. */
void ddm_timer_init(DdmTimer *t, DdmTimerFn fn, gpointer ud);
/** (Re-)arm @t to fire @delay_ms from now (0: next iteration). */
void ddm_timer_arm(DdmTimer *t, guint delay_ms);
/** (Re-)arm @t to fire at monotonic time @due_us. */
void ddm_timer_arm_at(DdmTimer *t, gint64 due_us);
/** Disarm @t if armed. */
void ddm_timer_cancel(DdmTimer *t);
/** TRUE while @t is armed. */
static inline gboolean ddm_timer_armed(const DdmTimer *t)
{
    return t->index != 0;
}
/* timer.c's: use ddm_timer_next_due, not this (the earliest armed
 * deadline, G_MAXINT64 when none is armed: one load for the socket round,
 * which asks after every batch) */
extern gint64 ddm_timer_next_due_us_;

/** The deadline of an armed timer, G_MAXINT64 when unarmed. */
gint64 ddm_timer_due(const DdmTimer *t);
/** The earliest deadline of all armed timers, G_MAXINT64 when none is
 *  armed (the watches' socket round ends there, watch.h). */
static inline gint64 ddm_timer_next_due(void)
{
    return ddm_timer_next_due_us_;
}
/** Armed timers (for tests). */
guint ddm_timer_count(void);

#endif /* DDM_LOOP_TIMER_H */
