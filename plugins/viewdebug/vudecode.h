/* SPDX-License-Identifier: Apache-2.0
 *
 * The view-debug decoders: pure functions over the bytes a VM sent, no
 * host calls, so that unit tests and fuzz targets drive them alone.
 *
 *  - VULW: u4 count, count x lstr window name. The count is bounded by
 *    the bytes present (each name costs at least its u4 length) and by
 *    VD_MAX_WINDOWS before anything is allocated.
 *  - VURT op 1 text dump (android.view.ViewDebug.dump): one line per
 *    view, its depth as that many leading spaces, "class@hexhash ", then
 *    with properties "NAME=LEN,VALUE " pairs (LEN in UTF-16 code units,
 *    as Java's String.length()); a last line "DONE.". Parsed in one pass
 *    with an ancestor stack: O(n) in the dump's size, capped in depth,
 *    views, properties and line length.
 *  - VURT op 3 theme dump (ViewDebug.dumpTheme): name and value on
 *    alternate lines, then "DONE.".
 *  - The v2 encoded dump (ViewHierarchyEncoder, useV2) is binary; it is
 *    recognised (vd_dump_is_encoded) and refused with a clear reason, not
 *    decoded.
 *
 * Errors: a function that fails returns -1 and writes a one-line reason
 * (with the line number for text) into @why; nothing is left allocated.
 * Ownership: every structure filled here owns its memory; free it with its
 * *_clear function (safe on a zeroed or already-cleared structure).
 */
#ifndef VIEWDEBUG_VUDECODE_H
#define VIEWDEBUG_VUDECODE_H

#include <stddef.h>
#include <stdint.h>

/** Caps on what one reply may make us hold. */
#define VD_MAX_WINDOWS 4096u          /**< window names in a VULW */
#define VD_MAX_NAME_UNITS 4096u       /**< UTF-16 units of one window name */
#define VD_MAX_DEPTH 512u             /**< nesting of the view tree */
#define VD_MAX_VIEWS 200000u          /**< views in one dump */
#define VD_MAX_PROPS 2000000u         /**< properties in one dump, all views together */
#define VD_MAX_LINE ((size_t)1 << 20) /**< bytes of one line */
#define VD_MAX_THEME 100000u          /**< attributes in a theme dump */

/* ------------------------------------------------------------------ VULW */

typedef struct vd_windows {
    size_t n;
    char **names; /* n UTF-8 strings (owned) */
} vd_windows;

/** Decode a VULW reply payload into @out (zeroed first). 0 or -1 with @why. */
int vd_parse_vulw(const uint8_t *data, size_t len, vd_windows *out, char *why, size_t why_len);
void vd_windows_clear(vd_windows *w);

/* ------------------------------------------------------------------ tree */

/** One property as the dump wrote it; strings point into the tree's text. */
typedef struct vd_prop {
    const char *name;  /* "layout:mLeft", "getVisibility()", ... */
    const char *value; /* its value, NUL-terminated (a NUL inside the value ends it early) */
} vd_prop;

#define VD_NO_VALUE INT64_MIN

typedef struct vd_view {
    const char *cls;    /* "android.widget.TextView" */
    const char *hash;   /* "5d2c6f1": as written, lower-case hex */
    const char *id;     /* mID's value ("id/title", "NO_ID"), or NULL without properties */
    uint32_t depth;     /* 0 for the root */
    int64_t parent;     /* index of the parent view, -1 for the root */
    uint32_t children;  /* direct children */
    int64_t left, top, right, bottom; /* from (layout:)mLeft...; VD_NO_VALUE if not sent */
    size_t first_prop;  /* props[first_prop .. first_prop + n_props) */
    size_t n_props;
} vd_view;

typedef struct vd_tree {
    char *text;      /* the dump, copied and cut into strings (owned) */
    vd_view *views;  /* preorder: a view's subtree follows it */
    size_t n_views;
    vd_prop *props;
    size_t n_props;
    size_t lines;    /* lines read, DONE. included */
} vd_tree;

/** 1 if @data looks like a v2 (ViewHierarchyEncoder) binary dump rather than text. */
int vd_dump_is_encoded(const uint8_t *data, size_t len);

/** Parse a VURT op 1 text dump into @out (zeroed first). 0 or -1 with @why. */
int vd_parse_tree(const uint8_t *data, size_t len, vd_tree *out, char *why, size_t why_len);
void vd_tree_clear(vd_tree *t);
/** The property @name of @v, or NULL. Linear in the view's properties. */
const char *vd_view_prop(const vd_tree *t, const vd_view *v, const char *name);

/* ----------------------------------------------------------------- theme */

typedef struct vd_theme {
    char *text;          /* copied, cut into strings (owned) */
    const char **names;  /* n attribute names, e.g. "android:attr/colorPrimary" */
    const char **values; /* n values ("#ff6200ee", "@android:style/...", "null") */
    size_t n;
} vd_theme;

/** Parse a VURT op 3 theme dump into @out (zeroed first). 0 or -1 with @why. */
int vd_parse_theme(const uint8_t *data, size_t len, vd_theme *out, char *why, size_t why_len);
void vd_theme_clear(vd_theme *t);

#endif /* VIEWDEBUG_VUDECODE_H */
