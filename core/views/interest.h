/* SPDX-License-Identifier: Apache-2.0
 *
 * A short "interest" in views: a frontend that shows a view once (ddmon
 * view, a GET of the web API, a Prometheus scrape) keeps it watched for
 * some seconds after, so plugins that poll only while someone watches
 * (threads) have fresh content at the next look. One watch per (name, VM
 * key) noted, renewed by each note and dropped when it has not been noted
 * for the interest's lifetime. Used by server/control_ops.c, web/api.c and
 * web/metrics_source.c.
 */
#ifndef DDM_VIEWS_INTEREST_H
#define DDM_VIEWS_INTEREST_H

#include <glib.h>

#include "core/views/views.h"

typedef struct DdmViewInterest DdmViewInterest;

/** Interests in @store's views (borrowed; outlives it), each kept
 *  @seconds after its last note, at most @max at once. (transfer full) */
DdmViewInterest *ddm_view_interest_new(DdmViews *store, guint seconds, guint max);
/** Drop every watch. */
void ddm_view_interest_free(DdmViewInterest *in);
/** Keep the views named @name of VM @vm_key (NULL: of every VM and the
 *  global one) watched for the interest's seconds from now. TRUE if this
 *  started a watch, FALSE if it renewed one. When @max are held, the
 *  note noted longest ago (not a kept one) is dropped for this one. */
gboolean ddm_view_interest_note(DdmViewInterest *in, const char *name, const char *vm_key);
/** ddm_view_interest_note, and the note is kept: never dropped for room,
 *  not counted against @max (the caller bounds how many it keeps, e.g.
 *  the VM list's: a flood of one-shot views cannot stop its watch). */
gboolean ddm_view_interest_note_kept(DdmViewInterest *in, const char *name, const char *vm_key);
/** Whether a note of (@name, @vm_key) is alive. */
gboolean ddm_view_interest_has(const DdmViewInterest *in, const char *name, const char *vm_key);
/** How many are alive (tests). */
guint ddm_view_interest_count(const DdmViewInterest *in);

#endif /* DDM_VIEWS_INTEREST_H */
