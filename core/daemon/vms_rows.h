/* SPDX-License-Identifier: Apache-2.0
 *
 * The rows of the "vms" view (vms_view.c) kept in the view itself: the
 * view's committed content is the one copy of the list. Its rows are in
 * two groups, group 0 (the targets retrying after an error) before group
 * 1 (the VMs), each in key order (strcmp of the key, column 0). A
 * publication copies the committed rows that did not change, as they are,
 * and merges in, in order, the rows written again: N rows with d changed
 * cost O(N) copying plus O(d log d), and no row is computed again unless
 * it changed. (Before, the rows were kept a second time in a tree of
 * their own between publications: ~250 bytes a VM and three blocks more,
 * beside the view's ~220: doc/memory.md.)
 */
#ifndef DDM_VMS_ROWS_H
#define DDM_VMS_ROWS_H

#include <glib.h>

#include "core/views/views.h"

/** Write the row of @key in @group (0 or 1) into @view's content being
 *  built: ddm_view_row, then one cell a column, the key first. TRUE if it
 *  wrote that one row, FALSE if it wrote none (the key went meanwhile):
 *  the rows counted in DdmVmsRowsKept are those written. */
typedef gboolean (*DdmVmsRowWriteFn)(ddm_view *view, guint group, const char *key, gpointer ud);

/** What the last publication left in the view. */
typedef struct DdmVmsRowsKept {
    guint64 version; /* the view's version after it; 0: none, or it failed */
    guint n_rows;    /* rows copied and written (some may have been dropped at the view's caps) */
    guint n_group0;  /* of which group 0: the first ones */
} DdmVmsRowsKept;

/** TRUE if @view holds the rows the last publication with @kept left:
 *  nobody committed it since and its caps dropped none. */
gboolean ddm_vms_rows_still_kept(const DdmVmsRowsKept *kept, const ddm_view *view);

/** What a publication keeps and writes. */
typedef struct DdmVmsRowsPlan {
    gboolean keep;        /* keep the committed rows (only if ddm_vms_rows_still_kept;
                             FALSE: a full rebuild, none kept) */
    GHashTable *replaced; /* with keep: a set of keys whose committed rows go, or NULL (borrowed) */
    GPtrArray *write[2];  /* per group, the keys (const char *, borrowed) whose rows
                             write_row writes, each once and none that a kept row has;
                             sorted here (strcmp) */
} DdmVmsRowsPlan;

/** Publish @view's next content (begin .. commit) as @plan says: per
 *  group, its kept rows merged in key order with the rows written, and
 *  record in @kept what it left (@kept tells where group 1 begins in the
 *  rows kept). 0, or the first -errno of copying or committing (then
 *  @kept keeps nothing: the next publication must be a full one). */
int ddm_vms_rows_publish(ddm_view *view, const DdmVmsRowsPlan *plan, DdmVmsRowWriteFn write_row,
                         gpointer ud, DdmVmsRowsKept *kept);

#endif /* DDM_VMS_ROWS_H */
