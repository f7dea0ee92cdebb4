/* SPDX-License-Identifier: Apache-2.0
 *
 * Text rendering of a view's JSON (the shape ddm_view_to_json documents)
 * for a terminal: the client renders exactly what the server sent.
 *
 *  - table: one header line (column names upper-cased, the unit in
 *    parentheses: "SIZE (B)"), then one line per row; columns are separated
 *    by two spaces, numbers right-aligned, text left-aligned; doubles get a
 *    fixed number of decimals per column (1 for "%", else 2); null is "-",
 *    booleans "yes"/"no"; an int column of unit "epoch_ms" shows local
 *    dates and times ("2026-11-27 15:13:53"), one of unit "addr" hex
 *    addresses ("0x17000000", as the terminal UI), their headers no unit.
 *  - record: "key: value" lines with the values aligned.
 *  - blob: "<media/type, N bytes>"; a JSON blob that came with its data
 *    (json_blob.h): its document as an indented outline. At the top an
 *    object's members are "key: value" lines; deeper, an object's scalars
 *    (and empty lists and objects) share one line as "key=value", each
 *    list or object member follows on lines of its own, two spaces in;
 *    a list's items are "- " lines. So a tree of objects with "children"
 *    lists reads as an indented tree. Indentation stops growing at 128
 *    columns, and the outline stops (saying so) past 64 MiB of text, so
 *    it stays linear in the document.
 *
 * Invariants: widths are terminal cells (wide CJK characters count 2,
 * combining marks 0), so columns line up; control characters (C0, C1, DEL)
 * and bidi overrides from the data are shown as '?', so a VM cannot move
 * the cursor or reorder the screen; no line ends in spaces; every line ends
 * with '\n'. Malformed input gives a short placeholder, never a crash.
 * Only with a max width are cells shortened (with "…").
 *
 * Non-goals: colours, paging, terminal size detection (the caller passes
 * max_width), locale-specific number formats (always '.').
 */
#include <math.h>
#include <string.h>

#include "core/views/json_blob.h"
#include "core/views/views.h"

#define SEP "  "
#define SEP_WIDTH 2
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one cell */

/* ------------------------------------------------------------ strings */

static gboolean unsafe_char(gunichar c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
           (c >= 0x2066 && c <= 0x2069);
}

/* A copy of @s that is valid UTF-8 without terminal control characters. */
static char *sanitize(const char *s)
{
    char *valid;
    GString *out;

    if (!s)
        return g_strdup("");
    {
        /* fast path: printable ASCII needs no work */
        const char *p = s;
        while (*p >= 0x20 && *p < 0x7f)
            p++;
        if (!*p)
            return g_strdup(s);
    }
    valid = g_utf8_validate(s, -1, NULL) ? g_strdup(s) : g_utf8_make_valid(s, -1);
    out = g_string_sized_new(strlen(valid));
    for (const char *p = valid; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        if (unsafe_char(c))
            g_string_append_c(out, '?');
        else
            g_string_append_unichar(out, c);
    }
    g_free(valid);
    return g_string_free(out, FALSE);
}

static guint char_width(gunichar c)
{
    if (g_unichar_iszerowidth(c))
        return 0;
    return g_unichar_iswide(c) ? 2 : 1;
}

/* Terminal cells taken by @s (valid UTF-8). */
static guint text_width(const char *s)
{
    guint w = 0;
    for (const char *p = s; *p;) {
        if ((guchar)*p < 0x80) {
            w++;
            p++;
        } else {
            w += char_width(g_utf8_get_char(p));
            p = g_utf8_next_char(p);
        }
    }
    return w;
}

/* @s cut to at most @max cells, ending in "…" when cut. (transfer full) */
static char *fit_width(const char *s, guint max)
{
    GString *out;
    guint w = 0;

    if (text_width(s) <= max)
        return g_strdup(s);
    out = g_string_new(NULL);
    if (max == 0)
        return g_string_free(out, FALSE);
    for (const char *p = s; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        guint cw = char_width(c);
        if (w + cw > max - 1)
            break;
        g_string_append_unichar(out, c);
        w += cw;
    }
    g_string_append(out, ELLIPSIS);
    return g_string_free(out, FALSE);
}

static void append_padded(GString *out, const char *s, guint width, gboolean right)
{
    guint w = text_width(s);
    guint pad = width > w ? width - w : 0;

    if (right)
        for (guint i = 0; i < pad; i++)
            g_string_append_c(out, ' ');
    g_string_append(out, s);
    if (!right)
        for (guint i = 0; i < pad; i++)
            g_string_append_c(out, ' ');
}

/* Finish a line: drop trailing spaces, add '\n', cut to @max_width cells. */
static void end_line(GString *out, gsize line_start, guint max_width)
{
    while (out->len > line_start && out->str[out->len - 1] == ' ')
        g_string_truncate(out, out->len - 1);
    if (max_width && text_width(out->str + line_start) > max_width) {
        char *cut = fit_width(out->str + line_start, max_width);
        g_string_truncate(out, line_start);
        g_string_append(out, cut);
        g_free(cut);
    }
    g_string_append_c(out, '\n');
}

/* ------------------------------------------------------------- values */

/* @x with @decimals decimals, '.' as separator, no "-0.0". */
static char *format_double(double x, int decimals)
{
    char fmt[16], buf[G_ASCII_DTOSTR_BUF_SIZE + 32];
    gboolean all_zero = TRUE;

    if (!isfinite(x))
        return g_strdup("-");
    if (fabs(x) >= 1e15) {
        g_ascii_formatd(buf, sizeof buf, "%.3e", x);
        return g_strdup(buf);
    }
    g_snprintf(fmt, sizeof fmt, "%%.%df", decimals);
    g_ascii_formatd(buf, sizeof buf, fmt, x);
    for (const char *p = buf; *p; p++)
        if (*p >= '1' && *p <= '9')
            all_zero = FALSE;
    return g_strdup(buf[0] == '-' && all_zero ? buf + 1 : buf);
}

/* For records: up to 3 decimals, trailing zeros dropped ("0.5", "3"). */
static char *format_double_short(double x)
{
    char *s = format_double(x, 3);
    if (strchr(s, '.') && !strchr(s, 'e')) {
        gsize n = strlen(s);
        while (n > 0 && s[n - 1] == '0')
            s[--n] = '\0';
        if (n > 0 && s[n - 1] == '.')
            s[--n] = '\0';
    }
    return s;
}

typedef enum { FMT_TEXT, FMT_INT, FMT_DOUBLE, FMT_BOOL, FMT_EPOCH_MS, FMT_ADDR } ColFormat;

/* An int column of unit "epoch_ms" (a point in time, ms since the Unix
 * epoch) as a local date and time; NULL for a value no date has (before
 * the epoch, after 9999), which then shows as its number. (transfer full) */
static char *format_epoch_ms(gint64 ms)
{
    if (ms < 0 || ms > G_GINT64_CONSTANT(253402300799999))
        return NULL;
    g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local(ms / 1000);
    return dt != NULL ? g_date_time_format(dt, "%Y-%m-%d %H:%M:%S") : NULL;
}

/* Text for one JSON value. @fmt is the declared type; @decimals < 0 means
 * "short" double formatting. (transfer full) */
static char *format_value(JsonNode *node, ColFormat fmt, int decimals)
{
    if (!node || JSON_NODE_HOLDS_NULL(node))
        return g_strdup("-");
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType t = json_node_get_value_type(node);
        if (t == G_TYPE_BOOLEAN)
            return g_strdup(json_node_get_boolean(node) ? "yes" : "no");
        if (t == G_TYPE_INT64) {
            char *when = fmt == FMT_EPOCH_MS ? format_epoch_ms(json_node_get_int(node)) : NULL;
            if (when != NULL)
                return when;
            if (fmt == FMT_ADDR && json_node_get_int(node) >= 0)
                return g_strdup_printf("0x%" G_GINT64_MODIFIER "x", json_node_get_int(node));
            if (fmt == FMT_DOUBLE)
                return decimals < 0 ? format_double_short((double)json_node_get_int(node))
                                    : format_double((double)json_node_get_int(node), decimals);
            return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
        }
        if (t == G_TYPE_DOUBLE)
            return decimals < 0 || fmt != FMT_DOUBLE ? format_double_short(json_node_get_double(node))
                                                     : format_double(json_node_get_double(node), decimals);
        if (t == G_TYPE_STRING)
            return sanitize(json_node_get_string(node));
    }
    /* An object or array where a scalar belongs: show it compactly. */
    {
        char *raw = json_to_string(node, FALSE);
        char *s = sanitize(raw);
        g_free(raw);
        return s;
    }
}

static const char *member_string(JsonObject *o, const char *name)
{
    JsonNode *n = o ? json_object_get_member(o, name) : NULL;
    if (n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
        return json_node_get_string(n);
    return NULL;
}

static JsonArray *member_array(JsonObject *o, const char *name)
{
    JsonNode *n = o ? json_object_get_member(o, name) : NULL;
    return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static ColFormat format_of(const char *type)
{
    if (g_strcmp0(type, "int") == 0)
        return FMT_INT;
    if (g_strcmp0(type, "double") == 0)
        return FMT_DOUBLE;
    if (g_strcmp0(type, "bool") == 0)
        return FMT_BOOL;
    return FMT_TEXT;
}

/* -------------------------------------------------------------- table */

typedef struct Col {
    char *header;
    ColFormat fmt;
    int decimals;
    gboolean right;
    guint width;
} Col;

static void render_table(GString *out, JsonObject *o, guint max_width)
{
    JsonArray *jcols = member_array(o, "columns");
    JsonArray *jrows = member_array(o, "rows");
    guint ncols = jcols ? json_array_get_length(jcols) : 0;
    guint nrows = jrows ? json_array_get_length(jrows) : 0;
    Col *cols;
    char **cells; /* nrows * ncols */
    gsize total;

    if (ncols == 0) {
        g_string_append(out, "(no columns)\n");
        return;
    }
    cols = g_new0(Col, ncols);
    for (guint c = 0; c < ncols; c++) {
        JsonNode *jc = json_array_get_element(jcols, c);
        JsonObject *co = JSON_NODE_HOLDS_OBJECT(jc) ? json_node_get_object(jc) : NULL;
        const char *name = member_string(co, "name");
        const char *unit = member_string(co, "unit");
        char *upper = g_utf8_strup(name ? name : "?", -1);
        /* "list" (a str column of comma-separated names) is no unit to show,
         * nor "epoch_ms" (its cells are dates), nor "addr" (its cells are hex) */
        gboolean epoch = g_strcmp0(unit, "epoch_ms") == 0;
        gboolean addr = g_strcmp0(unit, "addr") == 0;
        char *raw = unit && *unit && strcmp(unit, "list") != 0 && !epoch && !addr
                        ? g_strdup_printf("%s (%s)", upper, unit)
                        : g_strdup(upper);

        cols[c].header = sanitize(raw);
        g_free(raw);
        g_free(upper);
        cols[c].fmt = format_of(member_string(co, "type"));
        if (epoch && cols[c].fmt == FMT_INT)
            cols[c].fmt = FMT_EPOCH_MS;
        if (addr && cols[c].fmt == FMT_INT)
            cols[c].fmt = FMT_ADDR; /* left-aligned, as the terminal UI has it */
        cols[c].decimals = g_strcmp0(unit, "%") == 0 ? 1 : 2;
        cols[c].right = cols[c].fmt == FMT_INT || cols[c].fmt == FMT_DOUBLE;
        cols[c].width = text_width(cols[c].header);
    }
    cells = g_new0(char *, (gsize)nrows * ncols);
    for (guint r = 0; r < nrows; r++) {
        JsonNode *jr = json_array_get_element(jrows, r);
        JsonArray *row = JSON_NODE_HOLDS_ARRAY(jr) ? json_node_get_array(jr) : NULL;
        guint have = row ? json_array_get_length(row) : 0;
        for (guint c = 0; c < ncols; c++) {
            char *s = format_value(c < have ? json_array_get_element(row, c) : NULL, cols[c].fmt,
                                   cols[c].decimals);
            guint w = text_width(s);
            if (w > cols[c].width)
                cols[c].width = w;
            cells[(gsize)r * ncols + c] = s;
        }
    }

    /* Too wide: shrink the widest text column step by step, not below its
     * header or 8 cells; end_line cuts whatever still does not fit. */
    total = (gsize)SEP_WIDTH * (ncols - 1);
    for (guint c = 0; c < ncols; c++)
        total += cols[c].width;
    while (max_width && total > max_width) {
        guint best = ncols;
        for (guint c = 0; c < ncols; c++) {
            guint floor_w = MAX(text_width(cols[c].header), 8u);
            if (cols[c].right || cols[c].width <= floor_w)
                continue;
            if (best == ncols || cols[c].width > cols[best].width)
                best = c;
        }
        if (best == ncols)
            break;
        cols[best].width--;
        total--;
    }

    for (guint r = 0; r <= nrows; r++) {
        gsize start = out->len;
        for (guint c = 0; c < ncols; c++) {
            const char *s = r == 0 ? cols[c].header : cells[(gsize)(r - 1) * ncols + c];
            guint w = text_width(s);
            if (c > 0)
                g_string_append(out, SEP);
            if (w > cols[c].width) {
                char *fitted = fit_width(s, cols[c].width);
                append_padded(out, fitted, cols[c].width, cols[c].right);
                g_free(fitted);
            } else {
                /* the common case: pad without copying */
                guint pad = cols[c].width - w;
                if (cols[c].right)
                    for (guint i = 0; i < pad; i++)
                        g_string_append_c(out, ' ');
                g_string_append(out, s);
                if (!cols[c].right && c + 1 < ncols)
                    for (guint i = 0; i < pad; i++)
                        g_string_append_c(out, ' ');
            }
        }
        end_line(out, start, max_width);
    }

    for (gsize i = 0; i < (gsize)nrows * ncols; i++)
        g_free(cells[i]);
    g_free(cells);
    for (guint c = 0; c < ncols; c++)
        g_free(cols[c].header);
    g_free(cols);
}

/* ------------------------------------------------------------- record */

static void render_record(GString *out, JsonObject *o, guint max_width)
{
    JsonArray *fields = member_array(o, "fields");
    guint n = fields ? json_array_get_length(fields) : 0;
    char **keys, **values;
    guint key_width = 0;

    if (n == 0) {
        g_string_append(out, "(empty)\n");
        return;
    }
    keys = g_new0(char *, n);
    values = g_new0(char *, n);
    for (guint i = 0; i < n; i++) {
        JsonNode *jf = json_array_get_element(fields, i);
        JsonObject *fo = JSON_NODE_HOLDS_OBJECT(jf) ? json_node_get_object(jf) : NULL;
        const char *key = member_string(fo, "key");
        keys[i] = g_strconcat(key ? key : "?", ":", NULL);
        {
            char *k = sanitize(keys[i]);
            g_free(keys[i]);
            keys[i] = k;
        }
        values[i] = format_value(fo ? json_object_get_member(fo, "value") : NULL,
                                 format_of(member_string(fo, "type")), -1);
        key_width = MAX(key_width, text_width(keys[i]));
    }
    for (guint i = 0; i < n; i++) {
        gsize start = out->len;
        append_padded(out, keys[i], key_width, FALSE);
        g_string_append_c(out, ' ');
        if (max_width && max_width > key_width + 1) {
            char *fitted = fit_width(values[i], MAX(max_width - key_width - 1, 1u));
            g_string_append(out, fitted);
            g_free(fitted);
        } else {
            g_string_append(out, values[i]);
        }
        end_line(out, start, max_width);
        g_free(keys[i]);
        g_free(values[i]);
    }
    g_free(keys);
    g_free(values);
}

/* --------------------------------------------------------------- blob */

/* A scalar, or a list or object with nothing in it: fits on a line. */
static gboolean outline_leaf(JsonNode *n)
{
    if (JSON_NODE_HOLDS_OBJECT(n))
        return json_object_get_size(json_node_get_object(n)) == 0;
    if (JSON_NODE_HOLDS_ARRAY(n))
        return json_array_get_length(json_node_get_array(n)) == 0;
    return TRUE;
}

static char *outline_value(JsonNode *n)
{
    if (JSON_NODE_HOLDS_OBJECT(n))
        return g_strdup("{}");
    if (JSON_NODE_HOLDS_ARRAY(n))
        return g_strdup("[]");
    return format_value(n, FMT_TEXT, -1);
}

/* Bounds on the outline, so that its text grows no faster than the
 * document: indentation stops growing past OUTLINE_MAX_INDENT columns (64
 * levels), and the outline stops, saying so, past OUTLINE_MAX_BYTES. */
#define OUTLINE_MAX_INDENT 128u
#define OUTLINE_MAX_BYTES ((gsize)64u << 20)

typedef struct Outline {
    GString *out;
    gsize start;     /* where the outline began in @out */
    guint max_width;
    gboolean cut;    /* OUTLINE_MAX_BYTES reached: nothing more is written */
} Outline;

static gboolean outline_full(Outline *ol)
{
    if (!ol->cut && ol->out->len - ol->start > OUTLINE_MAX_BYTES)
        ol->cut = TRUE;
    return ol->cut;
}

/* @n on a line that starts with @lead ("key: " or "- ") at @indent; its
 * nested members on lines below, two spaces further in. Recursion is
 * bounded by the parser's depth cap (DDM_JSON_BLOB_MAX_DEPTH). */
static void outline_node(Outline *ol, const char *lead, guint indent, JsonNode *n)
{
    GString *out = ol->out;
    gsize start = out->len;

    if (outline_full(ol))
        return;
    for (guint i = 0; i < MIN(indent, OUTLINE_MAX_INDENT); i++)
        g_string_append_c(out, ' ');
    g_string_append(out, lead);
    if (outline_leaf(n)) {
        char *v = outline_value(n);
        g_string_append(out, v);
        g_free(v);
        end_line(out, start, ol->max_width);
        return;
    }
    if (JSON_NODE_HOLDS_ARRAY(n)) {
        JsonArray *a = json_node_get_array(n);
        end_line(out, start, ol->max_width);
        for (guint i = 0; i < json_array_get_length(a) && !ol->cut; i++)
            outline_node(ol, "- ", indent + 2, json_array_get_element(a, i));
        return;
    }
    JsonObject *o = json_node_get_object(n);
    GList *names = json_object_get_members(o);
    gboolean first = TRUE;
    for (GList *l = names; l != NULL; l = l->next) {
        JsonNode *m = json_object_get_member(o, l->data);
        if (!outline_leaf(m))
            continue;
        char *k = sanitize(l->data), *v = outline_value(m);
        g_string_append_printf(out, "%s%s=%s", first ? "" : " ", k, v);
        first = FALSE;
        g_free(k);
        g_free(v);
    }
    end_line(out, start, ol->max_width);
    for (GList *l = names; l != NULL && !ol->cut; l = l->next) {
        JsonNode *m = json_object_get_member(o, l->data);
        if (outline_leaf(m))
            continue;
        char *k = sanitize(l->data);
        char *lead2 = g_strdup_printf("%s: ", k);
        outline_node(ol, lead2, indent + 2, m);
        g_free(lead2);
        g_free(k);
    }
    g_list_free(names);
}

/* A JSON document: an object's members one a line at the top. */
static void render_outline(GString *out, JsonNode *doc, guint max_width)
{
    Outline ol = {out, out->len, max_width, FALSE};

    if (!JSON_NODE_HOLDS_OBJECT(doc) || outline_leaf(doc)) {
        outline_node(&ol, "", 0, doc);
    } else {
        JsonObject *o = json_node_get_object(doc);
        GList *names = json_object_get_members(o);
        for (GList *l = names; l != NULL && !ol.cut; l = l->next) {
            char *k = sanitize(l->data);
            char *lead = g_strdup_printf("%s: ", k);
            outline_node(&ol, lead, 0, json_object_get_member(o, l->data));
            g_free(lead);
            g_free(k);
        }
        g_list_free(names);
    }
    if (outline_full(&ol)) {
        gsize start = out->len;
        g_string_append_printf(out, "(the outline stops at %" G_GSIZE_FORMAT
                               " MiB; --json or --out-dir give the whole document)",
                               (gsize)(OUTLINE_MAX_BYTES >> 20));
        end_line(out, start, max_width);
    }
}

static void render_blob(GString *out, JsonObject *o, guint max_width)
{
    const char *mt = member_string(o, "media_type");
    JsonNode *size = json_object_get_member(o, "size");
    gint64 n = 0;
    char *smt = sanitize(mt ? mt : "application/octet-stream");
    gsize start = out->len;

    if (size && JSON_NODE_HOLDS_VALUE(size) && json_node_get_value_type(size) == G_TYPE_INT64)
        n = json_node_get_int(size);
    if (member_string(o, "file") == NULL) {
        GError *error = NULL;
        JsonNode *doc = ddm_json_blob_of_view(o, &error);
        if (doc != NULL) {
            render_outline(out, doc, max_width);
            json_node_unref(doc);
            g_free(smt);
            return;
        }
        if (error != NULL) {
            char *why = sanitize(error->message);
            g_string_append_printf(out, "<%s, %" G_GINT64_FORMAT " %s: %s>", smt, n,
                                   n == 1 ? "byte" : "bytes", why);
            end_line(out, start, max_width);
            g_free(why);
            g_error_free(error);
            g_free(smt);
            return;
        }
    }
    g_string_append_printf(out, "<%s, %" G_GINT64_FORMAT " %s>", smt, n, n == 1 ? "byte" : "bytes");
    const char *file = member_string(o, "file"); /* written out (--out-dir) */
    if (file != NULL) {
        char *sfile = sanitize(file);
        g_string_append_printf(out, " written to %s", sfile);
        g_free(sfile);
    }
    end_line(out, start, max_width);
    g_free(smt);
}

/* ---------------------------------------------------------------- API */

char *ddm_view_json_to_text_full(JsonNode *view_json, const DdmRenderOptions *opts)
{
    static const DdmRenderOptions defaults = {0, FALSE};
    JsonObject *o;
    const char *kind;
    GString *out;

    if (!opts)
        opts = &defaults;
    if (!view_json || !JSON_NODE_HOLDS_OBJECT(view_json))
        return g_strdup("(not a view)\n");
    o = json_node_get_object(view_json);
    kind = member_string(o, "kind");
    out = g_string_new(NULL);
    if (opts->show_title) {
        const char *title = member_string(o, "title");
        const char *name = member_string(o, "name");
        const char *vm = member_string(o, "vm");
        char *raw = vm ? g_strdup_printf("%s (%s)", title ? title : name ? name : "?", vm)
                       : g_strdup(title ? title : name ? name : "?");
        char *t = sanitize(raw);
        gsize start = out->len;
        g_string_append(out, t);
        end_line(out, start, opts->max_width);
        g_free(t);
        g_free(raw);
    }
    if (g_strcmp0(kind, "table") == 0) {
        render_table(out, o, opts->max_width);
    } else if (g_strcmp0(kind, "record") == 0) {
        render_record(out, o, opts->max_width);
    } else if (g_strcmp0(kind, "blob") == 0) {
        render_blob(out, o, opts->max_width);
    } else {
        char *k = sanitize(kind ? kind : "");
        g_string_append_printf(out, "(unknown view kind \"%s\")\n", k);
        g_free(k);
    }
    return g_string_free(out, FALSE);
}

char *ddm_view_json_to_text(JsonNode *view_json)
{
    return ddm_view_json_to_text_full(view_json, NULL);
}
