/* SPDX-License-Identifier: Apache-2.0
 *
 * The simulated app's windows and view trees: a main activity window of
 * an inbox-like app (DecorView > LinearLayout > FrameLayout > the AppCompat
 * frame > a ConstraintLayout with toolbar, a RecyclerView of cards, a
 * floating button and a button; 48 views) and a popup window (3 views),
 * with ViewDebug's text formats and PNG captures; see view_model.h.
 */
#include "build-config.h"

#include "view_model.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_LIBPNG
#include <png.h>
#endif

#include "rng.h"

/* One view of a template: its depth, class, id and bounds relative to its parent. */
typedef struct Tmpl {
    unsigned depth;
    const char *cls;
    const char *id;
    int l, t, r, b;
    const char *text;
} Tmpl;

static const char *const item_titles[] = {
    "Welcome, Ada", "Meeting = 3pm", "Caf\xC3\xA9 order", "Launch \xF0\x9F\x9A\x80 today",
    "Re: budget (Q3)", "Photos from Jos\xC3\xA9",
};
static const char *const item_subtitles[] = {
    "2 new messages", "Room 4, floor 2", "Latte, croissant", "Countdown at 09:00",
    "Numbers attached", "12 photos",
};
#define N_ITEMS G_N_ELEMENTS(item_titles)

static const Tmpl main_head[] = {
    {0, "com.android.internal.policy.DecorView", "NO_ID", 0, 0, 1080, 2400, NULL},
    {1, "android.widget.LinearLayout", "NO_ID", 0, 0, 1080, 2274, NULL},
    {2, "android.view.ViewStub", "id/action_mode_bar_stub", 0, 0, 0, 0, NULL},
    {2, "android.widget.FrameLayout", "NO_ID", 0, 63, 1080, 2274, NULL},
    {3, "androidx.appcompat.widget.ActionBarOverlayLayout", "id/decor_content_parent", 0, 0, 1080, 2211, NULL},
    {4, "androidx.appcompat.widget.ContentFrameLayout", "id/content", 0, 0, 1080, 2211, NULL},
    {5, "androidx.constraintlayout.widget.ConstraintLayout", "id/main", 0, 0, 1080, 2211, NULL},
    {6, "com.google.android.material.appbar.AppBarLayout", "id/app_bar", 0, 0, 1080, 147, NULL},
    {7, "androidx.appcompat.widget.Toolbar", "id/toolbar", 0, 0, 1080, 147, NULL},
    {8, "androidx.appcompat.widget.AppCompatTextView", "NO_ID", 42, 41, 400, 106, "Inbox"},
    {8, "androidx.appcompat.widget.ActionMenuView", "NO_ID", 954, 0, 1080, 147, NULL},
    {9, "androidx.appcompat.view.menu.ActionMenuItemView", "id/action_search", 0, 10, 126, 136, NULL},
    {6, "androidx.recyclerview.widget.RecyclerView", "id/list", 0, 147, 1080, 2001, NULL},
};
/* then per item: a card, its row, an icon and two texts (depth 7..9) */
static const Tmpl main_tail[] = {
    {6, "com.google.android.material.floatingactionbutton.FloatingActionButton", "id/fab", 891, 2022, 1038, 2169, NULL},
    {6, "android.widget.Button", "id/refresh", 42, 2043, 420, 2169, "Refresh"},
    {4, "androidx.appcompat.widget.ActionBarContainer", "id/action_bar_container", 0, 0, 1080, 0, NULL},
    {1, "android.view.View", "id/navigationBarBackground", 0, 2274, 1080, 2400, NULL},
    {1, "android.view.View", "id/statusBarBackground", 0, 0, 1080, 63, NULL},
};
static const Tmpl popup[] = {
    {0, "android.widget.PopupWindow$PopupDecorView", "NO_ID", 0, 0, 630, 189, NULL},
    {1, "android.widget.PopupWindow$PopupBackgroundView", "NO_ID", 0, 0, 630, 189, NULL},
    {2, "android.widget.TextView", "id/tooltip", 24, 24, 606, 165, "Tip: swipe a card to archive it"},
};

static void add_node(GArray *nodes, const Tmpl *t, int top_offset)
{
    SimViewNode n = {0};
    int parent = -1;

    /* the parent is the last node one level up */
    for (guint i = nodes->len; i > 0; i--) {
        if (g_array_index(nodes, SimViewNode, i - 1).depth + 1 == t->depth) {
            parent = (int)(i - 1);
            break;
        }
    }
    n.cls = t->cls;
    n.id = g_strdup(t->id);
    n.text = g_strdup(t->text);
    n.left = t->l;
    n.top = t->t + top_offset;
    n.right = t->r;
    n.bottom = t->b + top_offset;
    n.depth = t->depth;
    n.parent = t->depth ? parent : -1;
    g_array_append_val(nodes, n);
}

/* Identity hashes: random 31-bit values, unique within the window. */
static void set_hashes(SimViewWindow *w, SimRng *rng)
{
    for (size_t i = 0; i < w->n; i++) {
        uint32_t h;
        gboolean again;
        do {
            h = (uint32_t)(sim_rng_next(rng) & 0x7fffffffu);
            again = h == 0;
            for (size_t j = 0; j < i && !again; j++)
                again = strtoul(w->nodes[j].hash, NULL, 16) == h;
        } while (again);
        snprintf(w->nodes[i].hash, sizeof w->nodes[i].hash, "%x", h);
    }
}

static void build_window(SimViewWindow *w, GArray *nodes, const char *title, SimRng *rng)
{
    w->n = nodes->len;
    w->nodes = (SimViewNode *)(void *)g_array_free(nodes, FALSE);
    set_hashes(w, rng);
    w->name = g_strdup_printf("%s/android.view.ViewRootImpl@%x", title,
                              (unsigned)(sim_rng_next(rng) & 0x7fffffffu));
}

SimViews *sim_views_new(uint32_t pid, const char *package, guint64 seed)
{
    SimViews *v = g_new0(SimViews, 1);
    SimRng rng;
    GArray *nodes;
    g_autofree char *title = NULL, *popup_title = NULL;

    sim_rng_seed(&rng, sim_rng_mix(seed, 0x56494557u ^ pid)); /* "VIEW" */
    nodes = g_array_new(FALSE, TRUE, sizeof(SimViewNode));
    for (size_t i = 0; i < G_N_ELEMENTS(main_head); i++)
        add_node(nodes, &main_head[i], 0);
    for (size_t k = 0; k < N_ITEMS; k++) {
        int y = 24 + (int)k * 300;
        Tmpl card = {7, "androidx.cardview.widget.CardView", "NO_ID", 24, 0, 1056, 276, NULL};
        Tmpl row = {8, "android.widget.LinearLayout", "NO_ID", 0, 0, 1032, 276, NULL};
        Tmpl icon = {9, "android.widget.ImageView", "id/icon", 24, 54, 192, 222, NULL};
        Tmpl title_t = {9, "android.widget.TextView", "id/item_title", 216, 54, 1008, 126, item_titles[k]};
        Tmpl sub = {9, "android.widget.TextView", "id/item_subtitle", 216, 138, 1008, 198,
                    item_subtitles[k]};
        add_node(nodes, &card, y);
        add_node(nodes, &row, 0);
        add_node(nodes, &icon, 0);
        add_node(nodes, &title_t, 0);
        add_node(nodes, &sub, 0);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(main_tail); i++)
        add_node(nodes, &main_tail[i], 0);
    title = g_strdup_printf("%s/%s.MainActivity", package, package);
    build_window(&v->win[0], nodes, title, &rng);

    nodes = g_array_new(FALSE, TRUE, sizeof(SimViewNode));
    for (size_t i = 0; i < G_N_ELEMENTS(popup); i++)
        add_node(nodes, &popup[i], 0);
    popup_title = g_strdup_printf("PopupWindow:%x", (unsigned)(sim_rng_next(&rng) & 0xfffffffu));
    build_window(&v->win[1], nodes, popup_title, &rng);
    v->n_windows = 2;
    return v;
}

void sim_views_free(SimViews *v)
{
    if (!v)
        return;
    for (size_t w = 0; w < v->n_windows; w++) {
        for (size_t i = 0; i < v->win[w].n; i++) {
            g_free(v->win[w].nodes[i].id);
            g_free(v->win[w].nodes[i].text);
        }
        g_free(v->win[w].nodes);
        g_free(v->win[w].name);
    }
    g_free(v);
}

const SimViewWindow *sim_views_find_window(const SimViews *v, const char *name)
{
    for (size_t w = 0; w < v->n_windows; w++)
        if (strcmp(v->win[w].name, name) == 0)
            return &v->win[w];
    return NULL;
}

int sim_views_find_view(const SimViewWindow *w, const char *spec, const char *package)
{
    const char *at = strchr(spec, '@'), *colon;

    if (at) {
        /* ViewDebug.findView: CLASS@HASH, the hash parsed as hex */
        char *end;
        unsigned long h;
        if (at[1] == '\0')
            return -1;
        h = strtoul(at + 1, &end, 16);
        if (*end)
            return -1;
        for (size_t i = 0; i < w->n; i++)
            if (strncmp(w->nodes[i].cls, spec, (size_t)(at - spec)) == 0 &&
                w->nodes[i].cls[at - spec] == '\0' && strtoul(w->nodes[i].hash, NULL, 16) == h)
                return (int)i;
        return -1;
    }
    /* else a resource name, "PACKAGE:id/NAME" (Resources.getIdentifier) */
    colon = strchr(spec, ':');
    if (!colon || !(strncmp(spec, package, (size_t)(colon - spec)) == 0 &&
                    package[colon - spec] == '\0') ||
        strncmp(colon + 1, "id/", 3) != 0)
        return -1;
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->nodes[i].id, colon + 1) == 0)
            return (int)i;
    return -1;
}

static const char *const fault_names[] = {"none", "indent", "no-done", "huge-vulw", "not-png", "silent"};

const char *sim_view_fault_name(SimViewFault fault)
{
    return (unsigned)fault < G_N_ELEMENTS(fault_names) ? fault_names[fault] : "?";
}

gboolean sim_view_fault_parse(const char *name, SimViewFault *out, GError **error)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(fault_names); i++) {
        if (g_ascii_strcasecmp(name, fault_names[i]) == 0) {
            *out = (SimViewFault)i;
            return TRUE;
        }
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--view-fault must be none, indent, no-done, huge-vulw, not-png or silent");
    return FALSE;
}

void sim_views_write_vulw(const SimViews *v, ddm_writer *w)
{
    ddm_write_u4(w, (uint32_t)v->n_windows);
    for (size_t i = 0; i < v->n_windows; i++)
        ddm_write_lstr(w, v->win[i].name);
}

/* One property as ViewDebug.writeEntry: NAME=LEN,VALUE and a space; LEN
 * counts UTF-16 units (String.length()). */
static void prop(GString *s, const char *name, const char *value)
{
    glong units = 0;
    gunichar2 *u = g_utf8_to_utf16(value, -1, NULL, &units, NULL);

    g_free(u);
    g_string_append_printf(s, "%s=%ld,%s ", name, units, value);
}

static void prop_int(GString *s, const char *name, int v)
{
    char buf[16];

    snprintf(buf, sizeof buf, "%d", v);
    prop(s, name, buf);
}

static void write_props(GString *s, const SimViewNode *n)
{
    gboolean gone = n->right == n->left && n->bottom == n->top;

    prop(s, "mID", n->id);
    prop_int(s, "layout:mLeft", n->left);
    prop_int(s, "layout:mTop", n->top);
    prop_int(s, "layout:mRight", n->right);
    prop_int(s, "layout:mBottom", n->bottom);
    prop(s, "getVisibility()", gone ? "GONE" : "VISIBLE");
    prop(s, "drawing:getAlpha()", "1.0");
    prop(s, "focus:hasFocus()", "false");
    prop_int(s, "layout:getWidth()", n->right - n->left);
    prop_int(s, "layout:getHeight()", n->bottom - n->top);
    if (n->text)
        prop(s, "text:mText", n->text);
}

GBytes *sim_views_dump(const SimViewWindow *w, gboolean properties)
{
    GString *s = g_string_sized_new(properties ? 16384 : 4096);

    for (size_t i = 0; i < w->n; i++) {
        const SimViewNode *n = &w->nodes[i];
        for (unsigned d = 0; d < n->depth; d++)
            g_string_append_c(s, ' ');
        g_string_append_printf(s, "%s@%s ", n->cls, n->hash);
        if (properties)
            write_props(s, n);
        g_string_append_c(s, '\n');
    }
    g_string_append(s, "DONE.\n");
    return g_string_free_to_bytes(s);
}

static const char *const theme_attrs[][2] = {
    {"android:attr/colorPrimary", "#ff6200ee"},
    {"android:attr/colorPrimaryDark", "#ff3700b3"},
    {"android:attr/colorAccent", "#ff03dac5"},
    {"android:attr/windowBackground", "android:drawable/screen_background_selector_light"},
    {"android:attr/textColorPrimary", "android:color/primary_text_light"},
    {"android:attr/textSize", "14.0sp"},
    {"android:attr/windowActionBar", "false"},
    {"android:attr/windowNoTitle", "true"},
    {"android:attr/statusBarColor", "#ff3700b3"},
    {"android:attr/fontFamily", "null"},
    {"com.example:attr/cardCornerRadius", "12.0dip"},
};

GBytes *sim_views_theme(const SimViewWindow *w)
{
    GString *s = g_string_new(NULL);

    (void)w; /* one theme for every window of the app */
    for (size_t i = 0; i < G_N_ELEMENTS(theme_attrs); i++)
        g_string_append_printf(s, "%s\n%s\n", theme_attrs[i][0], theme_attrs[i][1]);
    g_string_append(s, "DONE.\n");
    return g_string_free_to_bytes(s);
}

#ifdef HAVE_LIBPNG
static void png_to_bytes(png_structp png, png_bytep data, size_t len)
{
    g_byte_array_append(png_get_io_ptr(png), data, (guint)len);
}

static void png_flush_none(png_structp png)
{
    (void)png;
}

/* The PNG of a @wd x @ht view coloured after @base into @out; @row holds
 * one row. 0, or -1 if libpng failed. */
static int write_png(GByteArray *out, unsigned wd, unsigned ht, const uint8_t *base, uint8_t *row)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;

    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, out, png_to_bytes, png_flush_none);
    png_set_compression_level(png, 6);
    png_set_IHDR(png, info, wd, ht, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (unsigned y = 0; y < ht; y++) {
        for (unsigned x = 0; x < wd; x++) {
            /* the view's colour, a 4-pixel border and diagonal stripes */
            gboolean edge = x < 4 || y < 4 || x + 4 >= wd || y + 4 >= ht;
            gboolean stripe = ((x + y) / 24) % 2 == 0;
            uint8_t *p = row + (gsize)x * 4;
            for (int c = 0; c < 3; c++)
                p[c] = edge ? (uint8_t)(base[c] / 2) : stripe ? base[c] : (uint8_t)(base[c] / 2 + 128);
            p[3] = 0xff;
        }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

GBytes *sim_views_capture(const SimViewWindow *w, int i, unsigned *width, unsigned *height,
                          GError **error)
{
    const SimViewNode *n = &w->nodes[i];
    unsigned wd = (unsigned)(n->right - n->left), ht = (unsigned)(n->bottom - n->top);
    uint32_t h = (uint32_t)strtoul(n->hash, NULL, 16);
    uint8_t base[3] = {(uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h};
    GByteArray *out = g_byte_array_new();
    uint8_t *row;
    int rc;

    if (wd == 0 || ht == 0) /* ViewDebug.capture sends a 1x1 bitmap then */
        wd = ht = 1;
    row = g_malloc((gsize)wd * 4);
    rc = write_png(out, wd, ht, base, row);
    g_free(row);
    if (rc < 0) {
        g_byte_array_unref(out);
        g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "libpng failed");
        return NULL;
    }
    *width = wd;
    *height = ht;
    return g_byte_array_free_to_bytes(out);
}
#else
GBytes *sim_views_capture(const SimViewWindow *w, int i, unsigned *width, unsigned *height,
                          GError **error)
{
    (void)w;
    (void)i;
    *width = *height = 0;
    g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_NOSYS, "built without libpng");
    return NULL;
}
#endif
