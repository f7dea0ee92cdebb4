/* SPDX-License-Identifier: Apache-2.0
 *
 * The "vms" view's rows kept in the view (vms_rows.h): a publication walks
 * each group's committed rows beside its sorted new keys, copying every
 * run of kept rows with one ddm_view_copy_rows and writing a new row where
 * its key falls.
 */
#include "core/daemon/vms_rows.h"

#include <string.h>

typedef struct Merge {
    ddm_view *view;
    DdmVmsRowWriteFn write_row;
    gpointer ud;
    guint rows; /* rows published so far */
    int rc;
} Merge;

static gint cmp_keys(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Copy the kept committed rows [@from, @to). */
static void copy_run(Merge *m, guint from, guint to)
{
    int rc;
    if (to <= from)
        return;
    rc = ddm_view_copy_rows(m->view, from, to - from);
    if (rc && !m->rc)
        m->rc = rc;
    m->rows += to - from;
}

/* One group: committed rows [@lo, @hi) (none kept when @lo == @hi) and
 * @keys (sorted), in key order. */
static void merge_group(Merge *m, guint group, guint lo, guint hi, GHashTable *replaced, GPtrArray *keys)
{
    guint i = lo, run = lo, j = 0;

    while (i < hi || j < keys->len) {
        const char *old = i < hi ? ddm_view_row_str(m->view, i, 0) : NULL;
        if (i < hi && (!old || (replaced && g_hash_table_contains(replaced, old)))) {
            /* replaced (or a row without a key, which nothing could replace) */
            copy_run(m, run, i);
            run = ++i;
        } else if (j < keys->len && (i >= hi || strcmp(keys->pdata[j], old) < 0)) {
            copy_run(m, run, i);
            run = i;
            if (m->write_row(m->view, group, keys->pdata[j++], m->ud))
                m->rows++;
        } else {
            i++;
        }
    }
    copy_run(m, run, hi);
}

gboolean ddm_vms_rows_still_kept(const DdmVmsRowsKept *kept, const ddm_view *view)
{
    return kept->version != 0 && ddm_view_version(view) == kept->version &&
           ddm_view_n_rows(view) == kept->n_rows;
}

int ddm_vms_rows_publish(ddm_view *view, const DdmVmsRowsPlan *plan, DdmVmsRowWriteFn write_row,
                         gpointer ud, DdmVmsRowsKept *kept)
{
    Merge m = {view, write_row, ud, 0, 0};
    gboolean keep = plan->keep && ddm_vms_rows_still_kept(kept, view);
    guint old_rows = keep ? ddm_view_n_rows(view) : 0;
    guint old0 = keep ? MIN(kept->n_group0, old_rows) : 0;
    guint n_group0;
    int rc;

    kept->version = 0;
    rc = ddm_view_begin(view);
    if (rc)
        return rc;
    for (guint g = 0; g < 2; g++)
        g_ptr_array_sort(plan->write[g], cmp_keys);
    merge_group(&m, 0, 0, old0, keep ? plan->replaced : NULL, plan->write[0]);
    n_group0 = m.rows;
    merge_group(&m, 1, old0, old_rows, keep ? plan->replaced : NULL, plan->write[1]);
    rc = ddm_view_commit(view);
    if (rc || m.rc)
        return m.rc ? m.rc : rc;
    kept->version = ddm_view_version(view);
    kept->n_rows = m.rows;
    kept->n_group0 = n_group0;
    return 0;
}
