/* SPDX-License-Identifier: Apache-2.0
 *
 * lazyviews: declare, find and free the views a plugin makes on demand
 * (see lazyviews.h).
 */
#include "lazyviews.h"

#include <string.h>

int lazy_views_declare(const ddm_host *h, ddm_plugin *self, const char *const *names, size_t n,
                       ddm_view_make_fn make, ddm_view_unmake_fn unmake, void *ud)
{
    size_t i;
    int rc;

    if (!DDM_HOST_HAS(h, vm_view_declare))
        return 0;
    for (i = 0; i < n; i++)
        if ((rc = h->vm_view_declare(self, names[i], make, ud, NULL)) != 0 ||
            (DDM_HOST_HAS(h, vm_view_unmake) && (rc = h->vm_view_unmake(self, names[i], unmake)) != 0))
            return rc;
    return 1;
}

ddm_view **lazy_views_slot(const char *const *names, ddm_view **const *slots, size_t n,
                           const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return slots[i];
    return NULL;
}

int lazy_views_free(const ddm_host *h, ddm_view **slot)
{
    if (!slot || !*slot)
        return 0;
    h->view_free(*slot);
    *slot = NULL;
    return 1;
}
