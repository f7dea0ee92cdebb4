/* SPDX-License-Identifier: Apache-2.0
 *
 * Counting the GSources attached to a main context, for tests and
 * benchmarks that check that the number of sources does not grow with the
 * number of VMs. GLib has no API to list sources; ids are handed out in
 * increasing order, so the live sources attached between two marks are the
 * ids between them that g_main_context_find_source_by_id() still finds.
 */
#ifndef DDM_LOOP_CENSUS_H
#define DDM_LOOP_CENSUS_H

#include <glib.h>

/** A mark: the next source id of @ctx (NULL: the default context). */
guint ddm_census_mark(GMainContext *ctx);
/** How many sources attached after @mark are still attached to @ctx. */
guint ddm_census_live_since(GMainContext *ctx, guint mark);

#endif /* DDM_LOOP_CENSUS_H */
