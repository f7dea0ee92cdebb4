/* SPDX-License-Identifier: Apache-2.0
 *
 * The key state machine: one key changes the model (cursors, screens,
 * tabs, filter, sort, help) and says what the I/O side must do about it
 * (TuiAction). Pure. See model.h; the keys are listed in ddmon(1), KEYS.
 */
#include <build-config.h>

#include <string.h>

#include "tui/model.h"

static void move_cursor(guint *cursor, guint n, int key, guint page)
{
    if (n == 0) {
        *cursor = 0;
        return;
    }
    guint c = MIN(*cursor, n - 1);
    switch (key) {
    case TUI_KEY_UP: c = c > 0 ? c - 1 : 0; break;
    case TUI_KEY_DOWN: c = c + 1 < n ? c + 1 : c; break;
    case TUI_KEY_PGUP: c = c > page ? c - page : 0; break;
    case TUI_KEY_PGDN: c = MIN(c + page, n - 1); break;
    case TUI_KEY_HOME: c = 0; break;
    case TUI_KEY_END: c = n - 1; break;
    default: break;
    }
    *cursor = c;
}

static gboolean is_motion(int key)
{
    return key == TUI_KEY_UP || key == TUI_KEY_DOWN || key == TUI_KEY_PGUP || key == TUI_KEY_PGDN ||
           key == TUI_KEY_HOME || key == TUI_KEY_END;
}

static void set_action_vm(TuiModel *m, const char *key)
{
    g_free(m->action_vm);
    m->action_vm = g_strdup(key);
}

/* g, h, t, r and s: the same on both screens, for @vm_key. */
static TuiAction vm_command_key(TuiModel *m, int key, const char *vm_key, gint64 now_us)
{
    if (key == 'r')
        return TUI_ACT_REFRESH;
    if (vm_key == NULL)
        return TUI_ACT_NONE;
    set_action_vm(m, vm_key);
    switch (key) {
    case 'g': return TUI_ACT_GC;
    case 'h': return TUI_ACT_HPROF;
    case 's': return TUI_ACT_SELECT;
    case 't':
        if (!tui_model_has_command(m, "trace")) {
            tui_model_set_status(m, now_us, "trace: not available (no plugin has a trace command)");
            return TUI_ACT_REDRAW;
        }
        if (m->trace_vm != NULL) { /* one at a time: its status line says how far it is */
            tui_model_set_status(m, now_us, "trace: one is running already (%s); t again when it is done",
                                 m->trace_vm);
            return TUI_ACT_REDRAW;
        }
        return TUI_ACT_TRACE;
    default: return TUI_ACT_NONE;
    }
}

int tui_key_from_escape(const char *seq, gsize len)
{
    if (len == 0)
        return TUI_KEY_ESC;
    static const struct { const char *seq; int key; } known[] = {
        {"[1~", TUI_KEY_HOME}, {"[7~", TUI_KEY_HOME}, {"[H", TUI_KEY_HOME}, {"OH", TUI_KEY_HOME},
        {"[4~", TUI_KEY_END},  {"[8~", TUI_KEY_END},  {"[F", TUI_KEY_END},  {"OF", TUI_KEY_END},
        {"[A", TUI_KEY_UP},    {"[B", TUI_KEY_DOWN},  {"[C", TUI_KEY_RIGHT}, {"[D", TUI_KEY_LEFT},
        {"OA", TUI_KEY_UP},    {"OB", TUI_KEY_DOWN},  {"OC", TUI_KEY_RIGHT}, {"OD", TUI_KEY_LEFT},
        {"[5~", TUI_KEY_PGUP}, {"[6~", TUI_KEY_PGDN}, {"[Z", TUI_KEY_BTAB},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(known); i++)
        if (strlen(known[i].seq) == len && memcmp(known[i].seq, seq, len) == 0)
            return known[i].key;
    return TUI_KEY_IGNORE;
}

gboolean tui_escape_incomplete(const char *seq, gsize len)
{
    if (len == 0)
        return FALSE;
    if (seq[0] == '[') /* CSI: parameters and intermediates up to a final byte 0x40-0x7e */
        return len == 1 || !((guchar)seq[len - 1] >= 0x40 && (guchar)seq[len - 1] <= 0x7e);
    if (seq[0] == 'O') /* SS3: one more */
        return len == 1;
    return FALSE; /* Alt+key: ESC and the key */
}

static TuiAction filter_key(TuiModel *m, int key)
{
    switch (key) {
    case TUI_KEY_ESC:
        g_clear_pointer(&m->filter, g_free);
        m->editing_filter = FALSE;
        break;
    case TUI_KEY_ENTER:
        m->editing_filter = FALSE;
        if (m->filter != NULL && m->filter[0] == '\0')
            g_clear_pointer(&m->filter, g_free);
        break;
    case TUI_KEY_BACKSPACE:
        if (m->filter != NULL && m->filter[0] != '\0') {
            char *end = m->filter + strlen(m->filter);
            *g_utf8_find_prev_char(m->filter, end) = '\0';
        }
        break;
    default:
        if (key >= 0x20 && key < 0x7f && strlen(m->filter != NULL ? m->filter : "") < 64) {
            char *f = g_strdup_printf("%s%c", m->filter != NULL ? m->filter : "", key);
            g_free(m->filter);
            m->filter = f;
        } else {
            return TUI_ACT_NONE;
        }
    }
    tui_model_refilter(m);
    return TUI_ACT_REDRAW;
}

static void sort_by(TuiModel *m, TuiVmColumn col)
{
    if (m->sort_col == col)
        m->sort_desc = !m->sort_desc;
    else {
        m->sort_col = col;
        m->sort_desc = FALSE;
    }
    tui_model_refilter(m);
}

/* Where the sort column is among the columns shown, or -1. */
static int shown_index(const TuiModel *m, TuiVmColumn col)
{
    for (guint i = 0; i < m->n_list_cols; i++)
        if (m->list_cols[i] == col)
            return (int)i;
    return -1;
}

/* < and >: the sort column one step left or right among those shown
 * (from a column not shown: the first, or the last). */
static void sort_step(TuiModel *m, int delta)
{
    int n = (int)m->n_list_cols;
    if (n == 0)
        return;
    int i = shown_index(m, m->sort_col);
    i = i < 0 ? (delta > 0 ? 0 : n - 1) : (i + delta + n) % n;
    sort_by(m, m->list_cols[i]);
}

static TuiAction list_key(TuiModel *m, int key, gint64 now_us)
{
    const TuiVm *vm = tui_model_cursor_vm(m);
    if (is_motion(key)) {
        move_cursor(&m->cursor, m->shown->len, key, m->page_rows);
        return TUI_ACT_REDRAW;
    }
    switch (key) {
    case 'q':
        return TUI_ACT_QUIT;
    case TUI_KEY_ESC:
        if (m->filter == NULL)
            return TUI_ACT_QUIT;
        g_clear_pointer(&m->filter, g_free);
        tui_model_refilter(m);
        return TUI_ACT_REDRAW;
    case '/':
        m->editing_filter = TRUE;
        g_free(m->filter);
        m->filter = g_strdup("");
        tui_model_refilter(m);
        return TUI_ACT_REDRAW;
    case TUI_KEY_ENTER:
        if (vm == NULL)
            return TUI_ACT_NONE;
        g_free(m->detail_vm);
        m->detail_vm = g_strdup(vm->key);
        m->screen = TUI_SCREEN_DETAIL;
        g_ptr_array_set_size(m->tabs, 0);
        m->tab = 0;
        g_clear_pointer(&m->table, tui_table_free);
        g_clear_pointer(&m->popup, tui_table_free);
        m->row_cursor = m->row_top = 0;
        return TUI_ACT_OPEN_VM;
    case '<':
        sort_step(m, -1);
        return TUI_ACT_REDRAW;
    case '>':
        sort_step(m, 1);
        return TUI_ACT_REDRAW;
    case 'I':
        m->sort_desc = !m->sort_desc;
        tui_model_refilter(m);
        return TUI_ACT_REDRAW;
    default:
        if (key >= '1' && key <= '9') { /* the N-th column on screen */
            if ((guint)(key - '1') >= m->n_list_cols)
                return TUI_ACT_NONE;
            sort_by(m, m->list_cols[key - '1']);
            return TUI_ACT_REDRAW;
        }
        return vm_command_key(m, key, vm != NULL ? vm->key : NULL, now_us);
    }
}

static TuiAction switch_tab(TuiModel *m, int delta)
{
    if (m->tabs->len < 2)
        return TUI_ACT_NONE;
    m->tab = (guint)((int)m->tab + (int)m->tabs->len + delta) % m->tabs->len;
    g_clear_pointer(&m->table, tui_table_free);
    m->row_cursor = m->row_top = 0;
    return TUI_ACT_TAB;
}

static TuiAction detail_key(TuiModel *m, int key, gint64 now_us)
{
    if (m->popup != NULL) {
        if (key == 'q' || key == TUI_KEY_ESC || key == TUI_KEY_ENTER) {
            g_clear_pointer(&m->popup, tui_table_free);
            return TUI_ACT_REDRAW;
        }
        if (is_motion(key)) {
            move_cursor(&m->popup_top, m->popup->rows->len, key, m->page_rows);
            return TUI_ACT_REDRAW;
        }
        return TUI_ACT_NONE;
    }
    if (is_motion(key)) {
        move_cursor(&m->row_cursor, m->table != NULL ? m->table->rows->len : 0, key, m->page_rows);
        return TUI_ACT_REDRAW;
    }
    switch (key) {
    case 'q':
    case TUI_KEY_ESC:
        m->screen = TUI_SCREEN_LIST;
        g_clear_pointer(&m->detail_vm, g_free);
        g_ptr_array_set_size(m->tabs, 0);
        m->tab = 0;
        g_clear_pointer(&m->table, tui_table_free);
        return TUI_ACT_CLOSE_VM;
    case TUI_KEY_LEFT:
    case TUI_KEY_BTAB:
        return switch_tab(m, -1);
    case TUI_KEY_RIGHT:
    case TUI_KEY_TAB:
        return switch_tab(m, 1);
    case TUI_KEY_ENTER: {
        if (!tui_model_rows_have_stacks(m) || m->row_cursor >= m->table->rows->len)
            return TUI_ACT_NONE;
        const TuiRow *row = g_ptr_array_index(m->table->rows, m->row_cursor);
        g_free(m->action_row);
        m->action_row = g_strdup(row->cells[tui_table_column(m->table, "id")]);
        set_action_vm(m, m->detail_vm);
        return TUI_ACT_STACK;
    }
    default:
        return vm_command_key(m, key, m->detail_vm, now_us);
    }
}

TuiAction tui_model_key(TuiModel *m, int key, gint64 now_us)
{
    if (key == TUI_KEY_IGNORE)
        return TUI_ACT_NONE;
    if (m->help) {
        m->help = FALSE; /* any key closes the help */
        return TUI_ACT_REDRAW;
    }
    if (m->editing_filter)
        return filter_key(m, key);
    if (key == '?') {
        m->help = TRUE;
        return TUI_ACT_REDRAW;
    }
    return m->screen == TUI_SCREEN_LIST ? list_key(m, key, now_us) : detail_key(m, key, now_us);
}
