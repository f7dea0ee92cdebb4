/* SPDX-License-Identifier: Apache-2.0
 *
 * The rows of the "vms" view, kept between publications (vms_view.c): an
 * ordered map from (group, key) to a row of typed cells, where the rows of
 * group 0 come before those of group 1 and each group is in key order
 * (strcmp). A change to one VM replaces or removes its one row, O(log N);
 * publishing copies the rows into a view without computing any of them
 * again. The text and JSON forms of what is published are those of the
 * same rows built into the view by hand, in the same order.
 */
#ifndef DDM_VMS_ROWS_H
#define DDM_VMS_ROWS_H

#include <glib.h>

#include "core/views/views.h"

typedef struct DdmVmsRows DdmVmsRows;
typedef struct DdmVmsRow DdmVmsRow;

/** An empty set of rows of @n_cols cells each. (transfer full) */
DdmVmsRows *ddm_vms_rows_new(guint n_cols);
void ddm_vms_rows_free(DdmVmsRows *rows);
guint ddm_vms_rows_count(const DdmVmsRows *rows);

/** The row of (@group 0 or 1, @key), created or emptied: fill it with
 *  exactly n_cols cells with the ddm_vms_row_* calls below, in column order.
 *  (transfer none: valid until the next call on @rows) */
DdmVmsRow *ddm_vms_rows_set(DdmVmsRows *rows, guint group, const char *key);
/** Remove the row of (@group, @key); FALSE if there was none. */
gboolean ddm_vms_rows_remove(DdmVmsRows *rows, guint group, const char *key);
void ddm_vms_rows_clear(DdmVmsRows *rows);

/** The next cell of @row: a string (copied; NULL = a null cell), an
 *  integer, a boolean, or null. */
void ddm_vms_row_str(DdmVmsRow *row, const char *s);
void ddm_vms_row_int(DdmVmsRow *row, gint64 i);
void ddm_vms_row_bool(DdmVmsRow *row, gboolean b);

/** Publish every row, in order, as @view's new content (begin .. commit).
 *  0 or the view builder's -errno. */
int ddm_vms_rows_publish(DdmVmsRows *rows, ddm_view *view);

#endif /* DDM_VMS_ROWS_H */
