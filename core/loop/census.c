/* SPDX-License-Identifier: Apache-2.0
 *
 * Counting live GSources by id (see census.h). Owns nothing.
 */
#include "core/loop/census.h"

static gboolean never(gpointer ud)
{
    (void)ud;
    return G_SOURCE_REMOVE;
}

guint ddm_census_mark(GMainContext *ctx)
{
    GSource *probe = g_idle_source_new();
    guint id;

    g_source_set_callback(probe, never, NULL, NULL);
    id = g_source_attach(probe, ctx);
    g_source_destroy(probe);
    g_source_unref(probe);
    return id;
}

guint ddm_census_live_since(GMainContext *ctx, guint mark)
{
    guint end = ddm_census_mark(ctx);
    guint live = 0;

    if (!ctx)
        ctx = g_main_context_default();
    for (guint id = mark + 1; id != end; id++)
        if (id && g_main_context_find_source_by_id(ctx, id))
            live++;
    return live;
}
