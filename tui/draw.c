/* SPDX-License-Identifier: Apache-2.0
 *
 * The ncurses side of the terminal UI: every screen drawn from the model
 * in one pass (erase, draw, refresh; ncurses sends only what changed).
 * See draw.h.
 */
#include <build-config.h>

#include "tui/draw.h"

#include <curses.h>
#include <string.h>

enum {
    PAIR_HEADER = 1,
    PAIR_HOT,
    PAIR_STALE,
    PAIR_TARGET,
    PAIR_TAB,
    PAIR_FREE,
    PAIR_KIND0, /* PAIR_KIND0 + i: the i-th kind of a block map */
    PAIR_RGB0 = PAIR_KIND0 + 7, /* PAIR_RGB0 + i: the i-th kind in its own colour */
};
static const short kind_colors[] = {COLOR_BLUE, COLOR_GREEN,   COLOR_RED,  COLOR_YELLOW,
                                    COLOR_MAGENTA, COLOR_CYAN, COLOR_WHITE};

void tui_draw_init(void)
{
    if (!has_colors())
        return;
    start_color();
    use_default_colors();
    init_pair(PAIR_HEADER, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_HOT, COLOR_BLACK, COLOR_YELLOW);
    init_pair(PAIR_STALE, COLOR_YELLOW, -1);
    init_pair(PAIR_TARGET, COLOR_GREEN, -1);
    init_pair(PAIR_TAB, COLOR_BLACK, COLOR_WHITE);
    init_pair(PAIR_FREE, COLOR_WHITE, COLOR_BLACK);
    for (gsize i = 0; i < G_N_ELEMENTS(kind_colors); i++)
        init_pair((short)(PAIR_KIND0 + i), COLOR_BLACK, kind_colors[i]);
}

/* @s cut to @width characters (padded with spaces when @pad). (transfer full) */
static char *fit(const char *s, int width, gboolean pad)
{
    if (width <= 0)
        return g_strdup("");
    GString *out = g_string_new(NULL);
    int n = 0;
    for (const char *p = s != NULL ? s : ""; *p && n < width; p = g_utf8_next_char(p), n++) {
        if ((guchar)*p < 0x20)
            g_string_append_c(out, ' ');
        else
            g_string_append_len(out, p, g_utf8_next_char(p) - p);
    }
    if (s != NULL && (int)g_utf8_strlen(s, -1) > width && width > 1) {
        /* show it was cut */
        g_string_truncate(out, (gsize)(g_utf8_offset_to_pointer(out->str, width - 1) - out->str));
        g_string_append(out, "~");
    }
    while (pad && n++ < width)
        g_string_append_c(out, ' ');
    return g_string_free(out, FALSE);
}

static void put(int y, int x, const char *s, int width)
{
    if (y < 0 || y >= LINES || x >= COLS)
        return;
    g_autofree char *f = fit(s, MIN(width, COLS - x), FALSE);
    mvaddstr(y, x, f);
}

static void bar(int y, const char *s, int pair)
{
    g_autofree char *f = fit(s, COLS, TRUE);
    attron(COLOR_PAIR(pair) | A_BOLD);
    mvaddstr(y, 0, f);
    attroff(COLOR_PAIR(pair) | A_BOLD);
}

/* ------------------------------------------------------------ VM list */

/* The VM list's column widths at this width, from the rows shown. */
static void list_layout(const TuiModel *m, int w[TUI_VMCOL_COUNT])
{
    int want[TUI_VMCOL_COUNT];
    gboolean need_device = tui_vm_want_widths(m->shown, want);
    tui_vm_layout(COLS, want, need_device, w);
}

static void draw_list(TuiModel *m, gint64 now_us)
{
    int w[TUI_VMCOL_COUNT];
    list_layout(m, w);
    /* the columns shown, for the sort keys (1 is the first on screen) */
    m->n_list_cols = 0;
    for (int c = 0; c < TUI_VMCOL_COUNT; c++)
        if (w[c] > 0)
            m->list_cols[m->n_list_cols++] = (TuiVmColumn)c;
    int x = 0;
    attron(A_BOLD | A_UNDERLINE);
    move(1, 0);
    clrtoeol();
    for (int c = 0; c < TUI_VMCOL_COUNT; c++) {
        if (w[c] == 0)
            continue;
        g_autofree char *t = g_strdup_printf("%s%s", tui_vm_column_title((TuiVmColumn)c),
                                             m->sort_col == (TuiVmColumn)c ? (m->sort_desc ? "v" : "^") : "");
        put(1, x, t, w[c]);
        x += w[c] + 1;
    }
    attroff(A_BOLD | A_UNDERLINE);
    int first = 2, room = LINES - first - 1;
    if (room < 1)
        return;
    m->page_rows = (guint)MAX(room - 1, 1);
    if (m->shown->len == 0) {
        put(first, 0,
            !m->connected          ? "waiting for the server"
            : m->vms->len == 0     ? "no VMs found yet; discovery is running"
                                   : "no VM matches the filter (Esc clears it)",
            COLS);
        return;
    }
    if (m->cursor < m->top)
        m->top = m->cursor;
    if (m->cursor >= m->top + (guint)room)
        m->top = m->cursor - (guint)room + 1;
    if (m->top + (guint)room > m->shown->len)
        m->top = m->shown->len > (guint)room ? m->shown->len - (guint)room : 0;
    for (guint i = m->top; i < m->shown->len && (int)(i - m->top) < room; i++) {
        const TuiVm *vm = g_ptr_array_index(m->shown, i);
        int y = first + (int)(i - m->top);
        gboolean target = g_strcmp0(m->selected_target, vm->key) == 0;
        if (i == m->cursor)
            attron(A_REVERSE);
        g_autofree char *blank = fit("", COLS, TRUE);
        mvaddstr(y, 0, blank);
        x = 0;
        for (int c = 0; c < TUI_VMCOL_COUNT; c++) {
            if (w[c] == 0)
                continue;
            g_autofree char *cell = tui_vm_cell(vm, (TuiVmColumn)c, tui_model_target_port(m, vm));
            if (c == TUI_VMCOL_HEAP && vm->heap != NULL && now_us - vm->heap_since_us > TUI_STALE_US) {
                /* the heap figure moves only while someone looks at a heap view */
                g_autofree char *age = tui_fmt_age(now_us - vm->heap_since_us);
                g_autofree char *with = g_strdup_printf("%s (%s)", cell, age);
                g_free(cell);
                cell = g_steal_pointer(&with);
            }
            if (c == TUI_VMCOL_DEVICE && (int)g_utf8_strlen(cell, -1) > w[c] && w[c] > 1) {
                /* cut on the left: "~0.0.1:27002", the port is what differs */
                const char *tail = g_utf8_offset_to_pointer(cell, g_utf8_strlen(cell, -1) - (w[c] - 1));
                g_autofree char *cut = g_strdup_printf("~%s", tail);
                g_free(cell);
                cell = g_steal_pointer(&cut);
            }
            if (c == TUI_VMCOL_DEBUGGER && target && i != m->cursor)
                attron(COLOR_PAIR(PAIR_TARGET));
            put(y, x, cell, w[c]);
            if (c == TUI_VMCOL_DEBUGGER && target && i != m->cursor)
                attroff(COLOR_PAIR(PAIR_TARGET));
            x += w[c] + 1;
        }
        if (i == m->cursor)
            attroff(A_REVERSE);
    }
}

/* ------------------------------------------------------------- tables */

static void draw_rows(const TuiTable *t, int y0, int room, guint top, gint64 cursor, gint64 now_us)
{
    int *w = g_new0(int, t->columns->len + 1);
    tui_table_widths(t, top, top + (guint)room, COLS, w);
    int x = 0;
    attron(A_BOLD | A_UNDERLINE);
    for (guint c = 0; c < t->columns->len; c++) {
        g_autofree char *head = tui_column_header(g_ptr_array_index(t->columns, c));
        put(y0, x, head, w[c]);
        x += w[c] + 2;
    }
    attroff(A_BOLD | A_UNDERLINE);
    for (guint r = top; r < t->rows->len && (int)(r - top) < room - 1; r++) {
        const TuiRow *row = g_ptr_array_index(t->rows, r);
        int y = y0 + 1 + (int)(r - top);
        attr_t a = (gint64)r == cursor ? A_REVERSE : 0;
        if (tui_row_hot(row, now_us))
            a |= COLOR_PAIR(PAIR_HOT);
        attron(a);
        if (a != 0) {
            g_autofree char *blank = fit("", COLS, TRUE);
            mvaddstr(y, 0, blank);
        }
        x = 0;
        for (guint c = 0; c < t->columns->len; c++) {
            const TuiColumn *col = g_ptr_array_index(t->columns, c);
            gboolean right = row->is_num[c] && g_strcmp0(col->unit, "addr") != 0;
            g_autofree char *cell = right ? g_strdup_printf("%*s", w[c], row->cells[c]) : g_strdup(row->cells[c]);
            put(y, x, cell, w[c]);
            x += w[c] + 2;
        }
        attroff(a);
    }
    g_free(w);
}

/* The terminal colour nearest to 0xRRGGBB: the 6x6x6 cube or the grey ramp
 * of a 256-colour terminal, else one of the 8 basic colours. */
static short term_color(gint32 rgb)
{
    int c[3] = {(rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255};
    if (COLORS >= 256) {
        if (c[0] == c[1] && c[1] == c[2] && c[0] > 4 && c[0] < 247)
            return (short)(232 + MIN(23, (c[0] - 8 + 5) / 10)); /* grey ramp */
        int idx = 16;
        for (int i = 0; i < 3; i++) {
            int v = c[i] < 48 ? 0 : c[i] < 115 ? 1 : (c[i] - 35) / 40;
            idx += v * (i == 0 ? 36 : i == 1 ? 6 : 1);
        }
        return (short)idx;
    }
    return (short)((c[0] >= 128 ? COLOR_RED : 0) | (c[1] >= 128 ? COLOR_GREEN : 0) |
                   (c[2] >= 128 ? COLOR_BLUE : 0));
}

/* The colour pair of kind @k (1-based) of @map: the kind's own colour when
 * the view gives one, else one of a fixed set; 0 for no colour. */
static int kind_pair(const TuiBlockMap *map, guint k)
{
    const char *kind = g_ptr_array_index(map->kinds, k - 1);
    gint32 rgb = map->rgb[k - 1];
    if (!has_colors())
        return 0;
    if (rgb >= 0 && PAIR_RGB0 + (int)k - 1 < COLOR_PAIRS) {
        int lum = (299 * ((rgb >> 16) & 255) + 587 * ((rgb >> 8) & 255) + 114 * (rgb & 255)) / 1000;
        init_pair((short)(PAIR_RGB0 + k - 1), lum < 128 ? COLOR_WHITE : COLOR_BLACK, term_color(rgb));
        return PAIR_RGB0 + (int)k - 1;
    }
    return strcmp(kind, "free") == 0 ? PAIR_FREE : PAIR_KIND0 + (int)((k - 1) % G_N_ELEMENTS(kind_colors));
}

/* What a cell of kind @kind shows besides its colour (a monochrome
 * terminal, capture-pane without -e): "." for free, else the first letter. */
static char kind_glyph(const char *kind)
{
    return kind == NULL ? ' ' : strcmp(kind, "free") == 0 ? '.' : kind[0];
}

#define LEGEND_X 8

/* Lines the legend of @map takes at this width. */
static int legend_lines(const TuiBlockMap *map)
{
    int lines = 1, x = LEGEND_X;
    for (guint k = 1; k <= map->kinds->len; k++) {
        int len = (int)strlen(g_ptr_array_index(map->kinds, k - 1)) + 3;
        if (x + len > COLS && x > LEGEND_X) {
            lines++;
            x = LEGEND_X;
        }
        x += len;
    }
    return lines;
}

/* Hex digits of the address scale for addresses below @end (8 at least). */
static int scale_digits(guint64 end)
{
    int digits = 8;
    for (guint64 e = end >> 32; e != 0; e >>= 4)
        digits++;
    return digits;
}

static void draw_blockmap(const TuiTable *t, int y0, int room)
{
    int digits = 8, scale_w = 0, legend_rows = 1;
    TuiBlockMap *map = NULL;
    /* the scale's width follows the addresses, the rows the legend's
     * length: build again when the first guess was wrong */
    for (int pass = 0; pass < 3; pass++) {
        scale_w = digits + 4; /* "0x12345678 |" */
        int cols = COLS - scale_w - 1;
        if (cols < 8 || room < 3 + legend_rows) {
            tui_blockmap_free(map);
            put(y0, 0, "(the terminal is too small for the map)", COLS);
            return;
        }
        tui_blockmap_free(map);
        map = tui_blockmap_new(t, (guint)cols, (guint)(room - 1 - legend_rows));
        if (map == NULL) {
            put(y0, 0, "(no ranges yet)", COLS);
            return;
        }
        int want_digits = scale_digits(map->end), want_legend = MIN(legend_lines(map), room - 2);
        if (want_digits == digits && want_legend <= legend_rows)
            break;
        digits = want_digits;
        legend_rows = MAX(legend_rows, want_legend);
    }
    int map_rows = (int)MIN(map->rows, (guint)MAX(1, room - 1 - legend_rows));
    g_autofree char *bpc = tui_fmt_bytes((double)map->bytes_per_cell);
    g_autofree char *span = tui_fmt_bytes((double)(map->end - map->start));
    g_autofree char *head = g_strdup_printf("%s from 0x%" G_GINT64_MODIFIER "x over %u rows, one cell = %s",
                                            span, map->start, map->rows, bpc);
    put(y0, 0, head, COLS);
    for (int r = 0; r < map_rows; r++) {
        int y = y0 + 1 + r;
        guint64 addr = map->start + (guint64)r * map->cols * map->bytes_per_cell;
        g_autofree char *scale = g_strdup_printf("0x%0*" G_GINT64_MODIFIER "x |", digits, addr);
        put(y, 0, scale, scale_w);
        for (guint c = 0; c < map->cols; c++) {
            guint8 k = map->cells[(guint)r * map->cols + c];
            const char *kind = k > 0 ? g_ptr_array_index(map->kinds, k - 1) : NULL;
            int pair = kind != NULL ? kind_pair(map, k) : 0;
            char glyph[2] = {kind_glyph(kind), 0};
            if (pair != 0)
                attron(COLOR_PAIR(pair));
            mvaddstr(y, scale_w + (int)c, glyph);
            if (pair != 0)
                attroff(COLOR_PAIR(pair));
        }
    }
    /* legend: each kind's cell, then its name */
    int y = y0 + 1 + map_rows;
    int x = LEGEND_X;
    put(y, 0, "legend:", LEGEND_X);
    for (guint k = 1; k <= map->kinds->len; k++) {
        const char *kind = g_ptr_array_index(map->kinds, k - 1);
        int pair = kind_pair(map, k);
        int len = (int)strlen(kind) + 3;
        if (x + len > COLS && x > LEGEND_X) {
            y++;
            x = LEGEND_X;
            if (y >= y0 + room)
                break;
        }
        char glyph[2] = {kind_glyph(kind), 0};
        if (pair != 0)
            attron(COLOR_PAIR(pair));
        mvaddstr(y, x, glyph);
        if (pair != 0)
            attroff(COLOR_PAIR(pair));
        put(y, x + 2, kind, COLS - x - 2);
        x += len;
    }
    tui_blockmap_free(map);
}

/* -------------------------------------------------------------- detail */

static void draw_tabs(TuiModel *m)
{
    move(2, 0);
    clrtoeol();
    /* scroll the bar so the current tab shows */
    guint first = 0;
    int width = 0;
    for (guint i = m->tab < m->tabs->len ? m->tab + 1 : 0; i-- > 0;) { /* no tabs yet: none */
        width += (int)strlen(g_ptr_array_index(m->tabs, i)) + 3;
        if (width > COLS - 4)
            break;
        first = i;
    }
    int x = 0;
    if (first > 0) {
        put(2, 0, "< ", 2);
        x = 2;
    }
    for (guint i = first; i < m->tabs->len && x < COLS; i++) {
        g_autofree char *label = g_strdup_printf(" %s ", (const char *)g_ptr_array_index(m->tabs, i));
        if (i == m->tab)
            attron(COLOR_PAIR(PAIR_TAB) | A_BOLD);
        put(2, x, label, COLS - x);
        if (i == m->tab)
            attroff(COLOR_PAIR(PAIR_TAB) | A_BOLD);
        x += (int)strlen(label) + 1;
    }
}

static void draw_detail(TuiModel *m, gint64 now_us)
{
    const TuiVm *vm = tui_model_detail_vm(m);
    g_autofree char *port = vm != NULL && vm->debug_port > 0
                                ? g_strdup_printf("port %" G_GINT64_FORMAT "%s", vm->debug_port,
                                                  vm->debugger ? " (attached)" : "")
                                : g_strdup(vm != NULL && vm->debugger ? "attached" : "-");
    /* the selected debugger target: the server's selected-VM port (its
     * `select` answer), nothing while it is not known */
    g_autofree char *selected =
        vm == NULL || g_strcmp0(m->selected_target, vm->key) != 0 || m->selected_port < 0 ? g_strdup("")
        : m->selected_port == 0 ? g_strdup(" (selected; the selected-VM port is off)")
                                : g_strdup_printf(" (selected: port %" G_GINT64_FORMAT ")", m->selected_port);
    g_autofree char *pid = vm != NULL && vm->pid > 0 ? g_strdup_printf("%" G_GINT64_FORMAT, vm->pid) : g_strdup("-");
    g_autofree char *rest = vm != NULL
        ? g_strdup_printf("  pid %s  %s  %s  debugger %s%s", pid, vm->vm ? vm->vm : "", vm->state ? vm->state : "",
                          port, selected)
        : NULL;
    /* a long app name is shortened in its middle, so pid, VM, state and
     * the debugger port still show */
    g_autofree char *app = vm != NULL ? tui_middle_ellipsis(vm->app ? vm->app : vm->key,
                                                            MAX(COLS - (int)g_utf8_strlen(rest, -1), 12))
                                      : NULL;
    g_autofree char *line = vm != NULL
        ? g_strdup_printf("%s%s", app, rest)
        : g_strdup_printf("%s: gone (q: back to the list)", m->detail_vm ? m->detail_vm : "?");
    put(1, 0, line, COLS);
    draw_tabs(m);
    if (m->tabs->len == 0) {
        /* a target that is not connected (retrying: nothing listens) has no
         * views: its state and why, not a question that never ends */
        g_autofree char *why = vm != NULL && g_strcmp0(vm->state, "ready") != 0
            ? g_strdup_printf("no views: this VM is %s%s%s%s", vm->state ? vm->state : "?", vm->info ? " (" : "",
                              vm->info ? vm->info : "", vm->info ? ")" : "")
            : NULL;
        put(4, 0, why != NULL ? why : "asking the server for this VM's views...", COLS);
        return;
    }
    const TuiTable *t = m->table;
    if (t == NULL) {
        put(4, 0, "waiting for the view...", COLS);
        return;
    }
    gint64 age = now_us - t->received_us;
    g_autofree char *agetext = tui_fmt_age(age);
    g_autofree char *when = age > TUI_STALE_US ? g_strdup_printf("updated %s ago", agetext)
                                               : g_strdup("live, updated now");
    g_autofree char *title = g_strdup_printf("%s  (v%" G_GUINT64_FORMAT ", %s)", t->title ? t->title : t->name,
                                             t->version, when);
    if (age > TUI_STALE_US)
        attron(COLOR_PAIR(PAIR_STALE));
    put(3, 0, title, COLS);
    if (age > TUI_STALE_US)
        attroff(COLOR_PAIR(PAIR_STALE));
    int y0 = 4, room = LINES - y0 - 1;
    if (room < 2)
        return;
    m->page_rows = (guint)MAX(room - 2, 1);
    if (t->kind == TUI_KIND_BLOB) {
        g_autofree char *sz = tui_fmt_bytes((double)t->size);
        g_autofree char *b = g_strdup_printf("a blob: %s, %s (not drawn in a terminal; `ddmon view %s --vm %s "
                                             "--out-dir DIR` saves it)", t->media_type ? t->media_type : "?", sz,
                                             t->name, m->detail_vm);
        put(y0, 0, b, COLS);
        return;
    }
    if (tui_blockmap_fits(t)) {
        draw_blockmap(t, y0, room);
        return;
    }
    if (t->rows->len == 0) {
        put(y0, 0, "(empty)", COLS);
        return;
    }
    guint body = (guint)(room - 1);
    if (m->row_cursor < m->row_top)
        m->row_top = m->row_cursor;
    if (m->row_cursor >= m->row_top + body)
        m->row_top = m->row_cursor - body + 1;
    draw_rows(t, y0, room, m->row_top, t->kind == TUI_KIND_TABLE ? (gint64)m->row_cursor : -1, now_us);
}

/* A border of plain ASCII: the line-drawing set (ACS) comes out as "lqqk"
 * where the locale or the terminal (a multiplexer, a log of the screen)
 * does not map it. */
static void ascii_box(WINDOW *win)
{
    wborder(win, '|', '|', '-', '-', '+', '+', '+', '+');
}

static void draw_popup(TuiModel *m, gint64 now_us)
{
    const TuiTable *t = m->popup;
    int h = LINES - 4, w = COLS - 4;
    if (h < 4 || w < 20)
        return;
    WINDOW *win = newwin(h, w, 2, 2);
    werase(win);
    ascii_box(win);
    g_autofree char *title = g_strdup_printf(" %s (q closes) ", t->title ? t->title : t->name);
    mvwaddnstr(win, 0, 2, title, w - 4);
    /* the rows, as text: "#frame class.method (file:line)" for a stack, else cells */
    int cls = tui_table_column(t, "class"), meth = tui_table_column(t, "method"), file = tui_table_column(t, "file"),
        ln = tui_table_column(t, "line"), native = tui_table_column(t, "native");
    for (guint r = m->popup_top; r < t->rows->len && (int)(r - m->popup_top) < h - 2; r++) {
        const TuiRow *row = g_ptr_array_index(t->rows, r);
        g_autofree char *text = NULL;
        if (cls >= 0 && meth >= 0 && native >= 0 && g_strcmp0(row->cells[native], "yes") == 0)
            text = g_strdup_printf("at %s.%s(Native Method)", row->cells[cls], row->cells[meth]);
        else if (cls >= 0 && meth >= 0) {
            /* as Java prints a frame: no file is "Unknown Source", no line
             * (a null cell) leaves the file alone */
            const char *fc = file >= 0 ? row->cells[file] : NULL, *lc = ln >= 0 ? row->cells[ln] : NULL;
            gboolean has_file = fc != NULL && *fc != '\0' && strcmp(fc, "-") != 0;
            gboolean has_line = lc != NULL && *lc != '\0' && strcmp(lc, "-") != 0;
            if (!has_file)
                text = g_strdup_printf("at %s.%s(Unknown Source)", row->cells[cls], row->cells[meth]);
            else if (!has_line)
                text = g_strdup_printf("at %s.%s(%s)", row->cells[cls], row->cells[meth], fc);
            else
                text = g_strdup_printf("at %s.%s(%s:%s)", row->cells[cls], row->cells[meth], fc, lc);
        }
        else
            text = g_strjoinv("  ", row->cells);
        g_autofree char *f = fit(text, w - 4, FALSE);
        mvwaddstr(win, 1 + (int)(r - m->popup_top), 2, f);
    }
    if (t->rows->len == 0)
        mvwaddstr(win, 1, 2, "(no frames)");
    wnoutrefresh(win);
    delwin(win);
    (void)now_us;
}

static const char *const help_lines[] = {
    "ddmon: keys",
    "",
    "  Up/Down PgUp/PgDn Home/End   move",
    "  Enter     open the VM / a thread's stack",
    "  Left/Right, Tab   previous / next tab",
    "  /         filter the VM list by app name",
    "  1-9 < >   sort by the N-th column shown; I invert",
    "  s         make this VM the selected-port target",
    "  g         garbage collection",
    "  h         heap dump (HPROF) into the current dir",
    "  t         method trace: 10 s sampling, APP-PID.trace",
    "  r         refresh now",
    "  ?         this help",
    "  q, Esc    back / quit",
    "",
    "  highlighted rows changed state in the last 3 s",
    "  (any key closes this help)",
};

static void draw_help(void)
{
    int h = (int)G_N_ELEMENTS(help_lines) + 2, w = 56;
    h = MIN(h, LINES);
    w = MIN(w, COLS);
    WINDOW *win = newwin(h, w, MAX((LINES - h) / 2, 0), MAX((COLS - w) / 2, 0));
    werase(win);
    ascii_box(win);
    for (int i = 0; i < (int)G_N_ELEMENTS(help_lines) && i + 1 < h - 1; i++)
        mvwaddnstr(win, i + 1, 2, help_lines[i], w - 4);
    wnoutrefresh(win);
    delwin(win);
}

void tui_draw(TuiModel *m, gint64 now_us)
{
    erase();
    if (LINES < 5 || COLS < 20) {
        put(0, 0, "terminal too small", COLS);
        wnoutrefresh(stdscr);
        doupdate();
        return;
    }
    g_autofree char *head = NULL;
    if (m->screen == TUI_SCREEN_LIST) {
        /* sorted by a column this width leaves out: say which */
        int w[TUI_VMCOL_COUNT];
        list_layout(m, w);
        g_autofree char *sort = w[m->sort_col] == 0
                                    ? g_strdup_printf("  sorted by %s%s", tui_vm_column_title(m->sort_col),
                                                      m->sort_desc ? "v" : "^")
                                    : g_strdup("");
        head = g_strdup_printf("ddmon %s  %u VM%s%s%s%s%s%s   ?:help q:quit", PACKAGE_VERSION, m->shown->len,
                               m->shown->len == 1 ? "" : "s", m->filter ? "  filter: " : "",
                               m->filter ? m->filter : "", m->editing_filter ? "_" : "", sort,
                               m->connected ? "" : "  (server not reachable)");
    } else {
        head = g_strdup_printf("ddmon %s  VM %s%s   Left/Right:tabs q:back ?:help", PACKAGE_VERSION,
                               m->detail_vm ? m->detail_vm : "", m->connected ? "" : "  (server not reachable)");
    }
    bar(0, head, PAIR_HEADER);
    if (m->screen == TUI_SCREEN_LIST)
        draw_list(m, now_us);
    else
        draw_detail(m, now_us);
    if (m->status != NULL)
        put(LINES - 1, 0, m->status, COLS);
    wnoutrefresh(stdscr);
    if (m->screen == TUI_SCREEN_DETAIL && m->popup != NULL)
        draw_popup(m, now_us);
    if (m->help)
        draw_help();
    doupdate();
}
