/* SPDX-License-Identifier: Apache-2.0
 *
 * The terminal UI's model: everything `ddmon watch` on a terminal shows,
 * as plain data, with no ncurses and no I/O, so it is unit-tested on its
 * own (tests/unit/tui/). Who owns what:
 *   table.c   TuiTable: one view's JSON (table, record or blob) turned into
 *             rows of display strings and numbers, the row identity, and
 *             the change tracking behind the highlight ("blinkenlights")
 *   vmlist.c  the VM list: rows from the "vms" view with the plugins'
 *             headlines split into columns, sorting, the app-name filter
 *   blockmap.c a table of address ranges and kinds laid out as a grid of
 *             cells for the heap-map widget, with its legend
 *   model.c   TuiModel: screens, cursors, tabs from a VM's view list, the
 *             status line
 *   keys.c    the key state machine: a key in, the model changed and an
 *             action for the I/O side out
 * Times are monotonic microseconds handed in by the caller (never read
 * here), so tests control the clock.
 */
#ifndef DDM_TUI_MODEL_H
#define DDM_TUI_MODEL_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* A row stays highlighted this long after it changed. */
#define TUI_HOT_US (3 * G_USEC_PER_SEC)
/* A figure older than this says how old it is. */
#define TUI_STALE_US (5 * G_USEC_PER_SEC)

/* ----------------------------------------------------------- tables */

typedef struct TuiColumn {
    char *name;
    char *type; /* "int", "double", "string", "bool" (as the JSON says) */
    char *unit; /* NULL if none */
} TuiColumn;

typedef struct TuiRow {
    char **cells;      /* display text of each column ("-" for null) */
    double *nums;      /* numeric value of each column (0 if none) */
    gboolean *is_num;
    char *id;          /* identity across updates (see tui_table_from_json) */
    gint64 changed_us; /* last change of the row's state (0: never) */
} TuiRow;

typedef enum { TUI_KIND_TABLE, TUI_KIND_RECORD, TUI_KIND_BLOB } TuiKind;

typedef struct TuiTable {
    char *name;
    char *vm;     /* NULL: global */
    char *title;
    TuiKind kind;
    GPtrArray *columns; /* TuiColumn*; a record: "key", "value" */
    GPtrArray *rows;    /* TuiRow* */
    char *media_type;   /* blob */
    gint64 size;        /* blob bytes */
    guint64 version;
    gint64 received_us; /* when this content arrived */
    int state_col;      /* column named "state", or -1 */
} TuiTable;

/** A view's JSON (ddm_view_to_json's form) as a table. Rows are identified
 *  by the column "id", else "key", else the first column. NULL if @view is
 *  no view. (transfer full) */
TuiTable *tui_table_from_json(JsonNode *view, gint64 now_us);
void tui_table_free(TuiTable *t);
/** Carry the change times of @old (the previous content of the same view,
 *  may be NULL) into @t: a row whose "state" changed, or that is new while
 *  @old existed, changed at @now_us; others keep their time. */
void tui_table_track(TuiTable *t, const TuiTable *old, gint64 now_us);
/** TRUE while @row is highlighted. */
gboolean tui_row_hot(const TuiRow *row, gint64 now_us);
/** Column index of @name, or -1. */
int tui_table_column(const TuiTable *t, const char *name);
/** A column's header: its name, and its unit in brackets when the cells
 *  do not show it ("utime (ms)"; "B", "%", "addr" and "epoch_ms", shown
 *  as a local date and time, are in the cells).
 *  (transfer full) */
char *tui_column_header(const TuiColumn *col);
/** The widths of @t's columns (rows @from to @to) on a terminal @width wide,
 *  each column followed by two spaces: every column its header's and its
 *  cells' width (no cap), and when that is too wide the widest text
 *  columns give way first, down to 6; a number column gives way (down to 6)
 *  only when the text columns can give no more. @w: one per column. */
void tui_table_widths(const TuiTable *t, guint from, guint to, int width, int *w);
/* The narrowest a column gives way to (tui_table_widths). */
#define TUI_COLUMN_MIN 6
/** Take *@excess characters off the columns of @w marked in @may (@n of
 *  them), the widest first (of equals, the first), none below @floor: as
 *  taking one off the widest at a time would, in O(@n log(widest)). What
 *  they could not give stays in *@excess. For tui_table_widths and its
 *  tests. */
void tui_table_cut_widths(int *w, const gboolean *may, guint n, gint64 *excess, int floor);
/** @s in @width characters at most: when longer, its start and its end
 *  with "~" between ("com.exa~ple.app"). (transfer full) */
char *tui_middle_ellipsis(const char *s, int width);
/** "1.5 MiB"-style text for @bytes. (transfer full) */
char *tui_fmt_bytes(double bytes);
/** "12s", "3m", "2h" for an age in microseconds. (transfer full) */
char *tui_fmt_age(gint64 age_us);

/* ------------------------------------------------------- block map */

/* A table is drawn as a block map when it has an int column with unit
 * "addr" (where a range starts), an int column with unit "B" (its length)
 * and a string column "kind"; an optional string column "color"
 * ("#rrggbb") gives each kind its colour (the first row of a kind wins). */
typedef struct TuiBlockMap {
    guint cols, rows;      /* grid size */
    guint8 *cells;         /* cols * rows kind indexes; 0 = nothing there */
    GPtrArray *kinds;      /* char*: kind names, index + 1 = cell value */
    gint32 *rgb;           /* per kind: 0xRRGGBB from a "color" column
                            * ("#rrggbb", the plugin's colour), -1 if none */
    guint64 start, end;    /* address range covered */
    guint64 bytes_per_cell;
} TuiBlockMap;

/** TRUE if @t has the columns of a block map. */
gboolean tui_blockmap_fits(const TuiTable *t);
/** Lay @t out on a grid @cols wide and at most @max_rows high: each cell
 *  shows the kind covering most of its bytes. NULL if @t does not fit or is
 *  empty. (transfer full) */
TuiBlockMap *tui_blockmap_new(const TuiTable *t, guint cols, guint max_rows);
void tui_blockmap_free(TuiBlockMap *m);

/* ---------------------------------------------------------- VM list */

typedef enum {
    TUI_VMCOL_PID = 0,
    TUI_VMCOL_APP,
    TUI_VMCOL_VM,
    TUI_VMCOL_DEVICE,
    TUI_VMCOL_STATE,
    TUI_VMCOL_DEBUGGER,
    TUI_VMCOL_THREADS,
    TUI_VMCOL_HEAP,
    TUI_VMCOL_NATIVE,
    TUI_VMCOL_COUNT
} TuiVmColumn;

typedef struct TuiVm {
    char *key;
    gint64 pid; /* 0: unknown */
    char *app, *vm, *device, *state;
    gint64 debug_port; /* 0: none */
    gboolean debugger; /* a debugger is attached through ddmon's relay */
    char *threads, *heap, *native; /* headline figures, NULL if none */
    char *info;                    /* the other headlines */
    gint64 heap_since_us;          /* when the heap figure last changed */
} TuiVm;

/** Column titles, for the header and the sort indicator. */
const char *tui_vm_column_title(TuiVmColumn c);
/** The VM list's column widths on a terminal @width wide, each column and
 *  a space after it: 0 for a column left out. @want: each column's content
 *  width (tui_vm_want_widths), or NULL for fixed widths. Each column starts
 *  at its content's width (capped); a long APP shrinks to 24, then VM,
 *  DEVICE and NATIVE go (DEVICE
 *  not when @need_device: it then shrinks instead, down to 8), then APP and
 *  HEAP shrink; DEBUGGER (the port and the attached mark) goes only when
 *  they can give no more. Room to spare goes to the columns that were
 *  capped, up to their content, then to APP. The number of columns shown. */
guint tui_vm_layout(int width, const int want[TUI_VMCOL_COUNT], gboolean need_device, int w[TUI_VMCOL_COUNT]);
/** The content widths of the VM list's columns over @vms (TuiVm*): each
 *  column's header (and sort mark) and its widest cell; HEAP with room for
 *  its age (" (12m)"). TRUE if the rows are on more than one device (the
 *  DEVICE column then tells rows apart and stays). */
gboolean tui_vm_want_widths(GPtrArray *vms, int want[TUI_VMCOL_COUNT]);
/** The text of column @c of @vm. @selected_port: the server's selected-VM
 *  port when @vm is the selected debugger target, shown after its own port
 *  (0: not the target, or no such port is known). (transfer full) */
char *tui_vm_cell(const TuiVm *vm, TuiVmColumn c, gint64 selected_port);
/** The VMs of a "vms" view's JSON, keeping the figure times of @old (may
 *  be NULL; TuiVm*). (transfer full: a GPtrArray freeing its TuiVm) */
GPtrArray *tui_vms_from_json(JsonNode *view, GPtrArray *old, gint64 now_us);
void tui_vm_free(TuiVm *vm);
/** The value of a headline figure's text for sorting: its leading number,
 *  scaled by the unit after it ("402.8 KiB" 412467, "9.0 MiB" 9437184,
 *  "41% of 8.0 MiB" 41, "12" 12); -1 for NULL or text without a number. */
double tui_figure_value(const char *text);
/** The file name `t` traces @vm into: "APP-PID.trace" (the app name with
 *  characters other than letters, digits, '.', '_' and '-' as '_'; the
 *  key when there is no app). (transfer full) */
char *tui_trace_file_name(const TuiVm *vm);

/* ------------------------------------------------------------ model */

typedef enum { TUI_SCREEN_LIST, TUI_SCREEN_DETAIL } TuiScreen;

typedef enum {
    TUI_ACT_NONE = 0,
    TUI_ACT_REDRAW,     /* only the screen changed */
    TUI_ACT_QUIT,
    TUI_ACT_OPEN_VM,    /* detail of m->detail_vm opened: list its views, watch its tab */
    TUI_ACT_CLOSE_VM,   /* back to the list: stop watching the tab */
    TUI_ACT_TAB,        /* another tab: watch its view instead */
    TUI_ACT_SELECT,     /* make m->action_vm the selected debugger target */
    TUI_ACT_GC,         /* gc m->action_vm */
    TUI_ACT_HPROF,      /* heap dump of m->action_vm into the current directory */
    TUI_ACT_TRACE,      /* method trace (only if a command exists) */
    TUI_ACT_REFRESH,    /* ask again now */
    TUI_ACT_STACK,      /* the stack of thread m->action_row in m->action_vm */
} TuiAction;

/* Keys the model knows (the frontend maps its own codes to these;
 * printable ASCII is itself). */
enum {
    TUI_KEY_UP = 0x1000,
    TUI_KEY_DOWN,
    TUI_KEY_LEFT,
    TUI_KEY_RIGHT,
    TUI_KEY_PGUP,
    TUI_KEY_PGDN,
    TUI_KEY_HOME,
    TUI_KEY_END,
    TUI_KEY_ENTER,
    TUI_KEY_ESC,
    TUI_KEY_BACKSPACE,
    TUI_KEY_TAB,
    TUI_KEY_BTAB,
    TUI_KEY_IGNORE, /* an escape sequence (Alt+key, a key terminfo does not
                     * name) read whole: nothing to do */
};

/** The key of an escape sequence the frontend read whole: @seq the bytes
 *  after ESC (@len of them, 0 for a lone ESC, which is TUI_KEY_ESC). Home
 *  and End in their other spellings (ESC [ 1 ~, ESC [ 4 ~, ESC [ H, ESC [ F,
 *  ESC O H, ESC O F) are those keys; anything else (Alt+x, an unknown
 *  function key) is TUI_KEY_IGNORE, never a lone ESC that would quit. */
int tui_key_from_escape(const char *seq, gsize len);
/** TRUE while @seq (the bytes after ESC, @len of them) is an escape sequence
 *  not yet complete: a CSI (ESC [) without its final byte, ESC O without
 *  its key. */
gboolean tui_escape_incomplete(const char *seq, gsize len);

typedef struct TuiModel {
    TuiScreen screen;
    gboolean help;           /* the help overlay is up */
    gboolean connected;      /* the VM list's connection is up */
    /* VM list */
    GPtrArray *vms;          /* TuiVm*, as the server sent them */
    GPtrArray *shown;        /* borrowed TuiVm*: filtered and sorted */
    guint cursor, top;       /* in shown */
    TuiVmColumn sort_col;
    gboolean sort_desc;
    TuiVmColumn list_cols[TUI_VMCOL_COUNT]; /* the columns on screen, left to
                                             * right (the frontend sets them;
                                             * all until then): key N sorts
                                             * by the N-th, < > step in them */
    guint n_list_cols;
    char *filter;            /* app-name substring (case-insensitive), NULL: none */
    gboolean editing_filter; /* typing after '/' */
    char *selected_target;   /* key of the VM the selected-VM port reaches, or NULL */
    gint64 selected_port;    /* that port, from the server's `select` answer:
                              * 0 off (--selected-port 0), -1 not known */
    gint64 vms_received_us;
    /* detail */
    char *detail_vm;         /* key */
    GPtrArray *tabs;         /* char*: view names of the VM, sorted */
    guint tab;
    TuiTable *table;         /* content of the current tab's view, or NULL */
    guint row_cursor, row_top;
    TuiTable *popup;         /* a command's result (a stack), or NULL */
    guint popup_top;
    GPtrArray *commands;     /* char*: command names the server has */
    /* the last action's arguments */
    char *action_vm;
    char *action_row;
    char *trace_vm;          /* the VM a trace started by `t` runs on (the
                              * frontend sets it), NULL: none; `t` starts no
                              * second one meanwhile */
    /* status line */
    char *status;
    gint64 status_us;
    guint page_rows;         /* rows a page moves (the frontend sets it) */
} TuiModel;

TuiModel *tui_model_new(void);
void tui_model_free(TuiModel *m);
/** A new "vms" view: rows replaced, filter and sort applied, the cursor
 *  kept on the same VM where it still exists. */
void tui_model_set_vms(TuiModel *m, JsonNode *view, gint64 now_us);
/** Re-apply filter and sort (after a change of either). */
void tui_model_refilter(TuiModel *m);
/** The VM under the cursor of the list, or NULL. */
const TuiVm *tui_model_cursor_vm(const TuiModel *m);
/** The selected-VM port if @vm is the selected debugger target and the
 *  port is known and on, else 0. */
gint64 tui_model_target_port(const TuiModel *m, const TuiVm *vm);
/** The VM whose detail is open, or NULL (it may have gone). */
const TuiVm *tui_model_detail_vm(const TuiModel *m);
/** The view names of the open VM (from a `views` answer's metadata): the
 *  tabs, the current one kept when it still exists. TRUE if the current
 *  tab's name changed (watch another view). */
gboolean tui_model_set_tabs(TuiModel *m, const char *const *names, guint n);
/** The current tab's view name, or NULL. */
const char *tui_model_tab_name(const TuiModel *m);
/** New content for the current tab (view JSON), tracked against the last.
 *  Ignored unless it is the current tab's view of the open VM. */
void tui_model_set_view(TuiModel *m, JsonNode *view, gint64 now_us);
/** The current tab's view was removed. */
void tui_model_view_removed(TuiModel *m, const char *name, const char *vm);
/** Show a command's result (a view) over the detail screen. */
void tui_model_set_popup(TuiModel *m, JsonNode *view, gint64 now_us);
void tui_model_set_status(TuiModel *m, gint64 now_us, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/** TRUE if the server has command @name (see m->commands). */
gboolean tui_model_has_command(const TuiModel *m, const char *name);
/** TRUE if the current table's rows can be opened as a thread's stack: it
 *  has "id" and "state" columns and the server has a "stack" command. */
gboolean tui_model_rows_have_stacks(const TuiModel *m);

/** Handle one key (TUI_KEY_* or ASCII) at @now_us. */
TuiAction tui_model_key(TuiModel *m, int key, gint64 now_us);

#endif /* DDM_TUI_MODEL_H */
