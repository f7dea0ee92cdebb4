/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulated app's windows and view trees (view-debug chunks), as pure
 * bytes: VULW's window list, the VURT op 1 text dump (with and without
 * properties) in android.view.ViewDebug's format, the op 3 theme dump and
 * a PNG capture of one view (libpng). Everything follows from the VM's
 * pid, package and --seed, so a test can rebuild what was sent.
 *
 * Ownership: a SimViews owns its windows and nodes; strings handed out
 * are borrowed from it. Non-goal: layouts that change over time.
 */
#ifndef SIMVM_VIEW_MODEL_H
#define SIMVM_VIEW_MODEL_H

#include <glib.h>
#include <stdint.h>

#include <ddmon/bytes.h>

#include "simvm.h"

typedef struct SimViewNode {
    const char *cls;    /* "android.widget.TextView" (static) */
    char hash[12];      /* hex identity hash, as Integer.toHexString */
    char *id;           /* "id/title", "NO_ID" (owned) */
    char *text;         /* text:mText of text views, or NULL (owned) */
    int left, top, right, bottom; /* relative to the parent, as mLeft.. */
    unsigned depth;
    int parent;         /* index, -1 for the root */
} SimViewNode;

typedef struct SimViewWindow {
    char *name;         /* "TITLE/android.view.ViewRootImpl@HASH" */
    SimViewNode *nodes; /* preorder */
    size_t n;
} SimViewWindow;

#define SIM_VIEW_WINDOWS 2

typedef struct SimViews {
    SimViewWindow win[SIM_VIEW_WINDOWS];
    size_t n_windows;
} SimViews;

/** The windows of the VM with @pid, @package and world seed @seed. (transfer full) */
SimViews *sim_views_new(uint32_t pid, const char *package, guint64 seed);
void sim_views_free(SimViews *v);

/** The window named @name, or NULL. */
const SimViewWindow *sim_views_find_window(const SimViews *v, const char *name);
/** The node ViewDebug.findView finds for @spec: "CLASS@HEXHASH" or a
 *  resource name "PACKAGE:id/NAME"; -1 if none. */
int sim_views_find_view(const SimViewWindow *w, const char *spec, const char *package);

/** VULW's payload: u4 count, lstr names. */
void sim_views_write_vulw(const SimViews *v, ddm_writer *w);
/** VURT op 1: the text dump, "DONE." last. (transfer full) */
GBytes *sim_views_dump(const SimViewWindow *w, gboolean properties);
/** VURT op 3: the theme dump, "DONE." last. (transfer full) */
GBytes *sim_views_theme(const SimViewWindow *w);
/** VUOP op 1: node @i as a PNG of its size (1x1 for an empty view, as
 *  ViewDebug.capture); NULL with @error without libpng. (transfer full) */
GBytes *sim_views_capture(const SimViewWindow *w, int i, unsigned *width, unsigned *height,
                          GError **error);

/** --view-fault's names: none, indent, no-done, huge-vulw, not-png, silent. */
const char *sim_view_fault_name(SimViewFault fault);
/** Parse a --view-fault name into *@out; FALSE with @error. */
gboolean sim_view_fault_parse(const char *name, SimViewFault *out, GError **error);

#endif /* SIMVM_VIEW_MODEL_H */
