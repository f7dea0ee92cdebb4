/* SPDX-License-Identifier: Apache-2.0
 *
 * The process's malloc_trim (see heaptrim.h): its one timer, the time of
 * the last trim and the count, all static (there is one heap).
 */
#include "core/loop/heaptrim.h" /* glib.h first: it defines __GLIBC__ */

#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include "core/loop/timer.h"

static DdmTimer trim_timer;
static guint64 n_trims;
static gint64 last_trim_us; /* monotonic; valid when n_trims > 0 */
static gint64 first_ask_us; /* the ask that made the pending trim pending; 0: none pending */

static void trim_fire(DdmTimer *t, gpointer ud)
{
    (void)t;
    (void)ud;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    n_trims++;
    last_trim_us = g_get_monotonic_time();
    first_ask_us = 0;
}

void ddm_heap_trim_soon(void)
{
    gint64 now = g_get_monotonic_time();
    gint64 due = now + (gint64)DDM_HEAP_TRIM_QUIET_MS * 1000;
    if (!first_ask_us)
        first_ask_us = now;
    due = MIN(due, first_ask_us + (gint64)DDM_HEAP_TRIM_LATEST_MS * 1000);
    if (n_trims > 0)
        due = MAX(due, last_trim_us + (gint64)DDM_HEAP_TRIM_GAP_S * G_USEC_PER_SEC);
    ddm_timer_init(&trim_timer, trim_fire, NULL);
    ddm_timer_arm_at(&trim_timer, due);
}

guint64 ddm_heap_trim_count(void)
{
    return n_trims;
}

gint64 ddm_heap_trim_due(void)
{
    return ddm_timer_due(&trim_timer);
}

void ddm_heap_trim_reset(void)
{
    ddm_timer_cancel(&trim_timer);
    n_trims = 0;
    last_trim_us = 0;
    first_ask_us = 0;
}
