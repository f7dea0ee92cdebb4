/* SPDX-License-Identifier: Apache-2.0
 *
 * The terminal UI's model (tui/model.h) without a terminal: views as
 * tables, the highlight of rows whose state changed, the VM list from the
 * "vms" view (headlines split, sorting, the app filter), the key state
 * machine (screens, tabs, actions) and the block map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "tui/model.h"

#define S (G_USEC_PER_SEC)

static JsonNode *parse(const char *json)
{
    g_autoptr(GError) error = NULL;
    JsonNode *n = json_from_string(json, &error);
    assert_non_null(n);
    return n;
}

static const char *threads_json(const char *state_of_2, gboolean with_3)
{
    static char buf[1024];
    g_snprintf(buf, sizeof buf,
               "{\"name\":\"threads\",\"vm\":\"k1\",\"kind\":\"table\",\"version\":3,"
               "\"columns\":[{\"name\":\"id\",\"type\":\"int\",\"unit\":null},"
               "{\"name\":\"name\",\"type\":\"str\",\"unit\":null},"
               "{\"name\":\"state\",\"type\":\"str\",\"unit\":null},"
               "{\"name\":\"utime\",\"type\":\"int\",\"unit\":\"ms\"},"
               "{\"name\":\"cpu\",\"type\":\"double\",\"unit\":\"%%\"}],"
               "\"rows\":[[1,\"main\",\"running\",100,1.5],[2,\"worker\",\"%s\",7,0.0]%s]}",
               state_of_2, with_3 ? ",[3,\"new\",\"wait\",0,null]" : "");
    return buf;
}

static void test_table_cells(void **state)
{
    (void)state;
    JsonNode *v = parse(threads_json("wait", FALSE));
    TuiTable *t = tui_table_from_json(v, 5 * S);
    assert_non_null(t);
    assert_int_equal(t->kind, TUI_KIND_TABLE);
    assert_int_equal(t->columns->len, 5);
    assert_int_equal(t->rows->len, 2);
    assert_int_equal(t->state_col, 2);
    TuiRow *r = g_ptr_array_index(t->rows, 0);
    assert_string_equal(r->id, "1");
    assert_string_equal(r->cells[1], "main");
    assert_string_equal(r->cells[4], "1.5%");
    assert_true(r->is_num[3]);
    assert_int_equal((int)r->nums[3], 100);
    assert_false(tui_row_hot(r, 5 * S)); /* a first look highlights nothing */
    tui_table_free(t);
    json_node_unref(v);

    v = parse("{\"name\":\"vminfo\",\"vm\":\"k1\",\"kind\":\"record\",\"version\":1,"
              "\"fields\":[{\"key\":\"pid\",\"type\":\"int\",\"value\":42},"
              "{\"key\":\"abi\",\"type\":\"str\",\"value\":null}]}");
    t = tui_table_from_json(v, 0);
    assert_int_equal(t->kind, TUI_KIND_RECORD);
    assert_int_equal(t->rows->len, 2);
    assert_string_equal(((TuiRow *)g_ptr_array_index(t->rows, 0))->cells[1], "42");
    assert_string_equal(((TuiRow *)g_ptr_array_index(t->rows, 1))->cells[1], "-");
    tui_table_free(t);
    json_node_unref(v);

    char *b = tui_fmt_bytes(1536);
    assert_string_equal(b, "1.5 KiB");
    g_free(b);
    b = tui_fmt_age(125 * S);
    assert_string_equal(b, "2m");
    g_free(b);
    assert_null(tui_table_from_json(NULL, 0));
}

static void test_highlight_on_change(void **state)
{
    (void)state;
    JsonNode *a = parse(threads_json("wait", FALSE));
    TuiTable *t1 = tui_table_from_json(a, 1 * S);
    JsonNode *b = parse(threads_json("running", TRUE));
    TuiTable *t2 = tui_table_from_json(b, 2 * S);
    tui_table_track(t2, t1, 2 * S);
    TuiRow *main_row = g_ptr_array_index(t2->rows, 0), *worker = g_ptr_array_index(t2->rows, 1),
           *born = g_ptr_array_index(t2->rows, 2);
    assert_false(tui_row_hot(main_row, 2 * S)); /* same state, other figures moved: quiet */
    assert_true(tui_row_hot(worker, 2 * S));    /* wait -> running */
    assert_true(tui_row_hot(born, 2 * S));      /* a new thread */
    assert_false(tui_row_hot(worker, 2 * S + TUI_HOT_US)); /* and it fades */
    /* a later update with no change keeps the time of the change */
    JsonNode *c = parse(threads_json("running", TRUE));
    TuiTable *t3 = tui_table_from_json(c, 3 * S);
    tui_table_track(t3, t2, 3 * S);
    assert_int_equal(((TuiRow *)g_ptr_array_index(t3->rows, 1))->changed_us, 2 * S);
    assert_true(tui_row_hot(g_ptr_array_index(t3->rows, 1), 3 * S));
    tui_table_free(t1);
    tui_table_free(t2);
    tui_table_free(t3);
    json_node_unref(a);
    json_node_unref(b);
    json_node_unref(c);
}

static const char vms_json[] =
    "{\"name\":\"vms\",\"vm\":null,\"kind\":\"table\",\"version\":9,\"columns\":["
    "{\"name\":\"key\",\"type\":\"str\"},{\"name\":\"pid\",\"type\":\"int\"},{\"name\":\"app\",\"type\":\"str\"},"
    "{\"name\":\"vm\",\"type\":\"str\"},{\"name\":\"ddm\",\"type\":\"bool\"},{\"name\":\"transport\",\"type\":\"str\"},"
    "{\"name\":\"device\",\"type\":\"str\"},{\"name\":\"state\",\"type\":\"str\"},"
    "{\"name\":\"debug port\",\"type\":\"int\"},{\"name\":\"debugger\",\"type\":\"bool\"},"
    "{\"name\":\"info\",\"type\":\"str\"}],\"rows\":["
    "[\"a:1\",300,\"com.example.notes\",\"ART\",true,\"tcp\",null,\"ready\",8601,true,"
    "\"heap: 41% of 8.0 MiB, threads: 12, native: 3.1 MiB\"],"
    "[\"a:2\",100,\"com.android.systemui\",\"ART\",true,\"tcp\",null,\"ready\",8602,false,\"threads: 30, alloc: off\"],"
    "[\"a:3\",200,\"com.example.mail\",\"ART\",true,\"tcp\",null,\"ready\",null,null,"
    "\"pid unknown: another user's process (uid 0); heap: 7% of 1.0 MiB\"]]}";

static TuiModel *model_with_vms(void)
{
    TuiModel *m = tui_model_new();
    JsonNode *v = parse(vms_json);
    tui_model_set_vms(m, v, 1 * S);
    json_node_unref(v);
    return m;
}

static const char *shown_app(TuiModel *m, guint i)
{
    return ((TuiVm *)g_ptr_array_index(m->shown, i))->app;
}

static void test_vm_list(void **state)
{
    (void)state;
    TuiModel *m = model_with_vms();
    assert_int_equal(m->shown->len, 3);
    /* sorted by pid */
    assert_string_equal(shown_app(m, 0), "com.android.systemui");
    const TuiVm *notes = g_ptr_array_index(m->shown, 2);
    assert_string_equal(notes->heap, "41% of 8.0 MiB");
    assert_string_equal(notes->threads, "12");
    assert_string_equal(notes->native, "3.1 MiB");
    assert_true(notes->debugger);
    char *star = tui_vm_cell(notes, TUI_VMCOL_DEBUGGER, 0);
    assert_string_equal(star, "8601*"); /* a debugger is attached */
    g_free(star);
    const TuiVm *ui = g_ptr_array_index(m->shown, 0);
    assert_string_equal(ui->info, "alloc: off");
    /* a note in front ("NOTE; headlines") stays a note; the figures still parse */
    const TuiVm *mail = g_ptr_array_index(m->shown, 1);
    assert_string_equal(mail->heap, "7% of 1.0 MiB");
    assert_string_equal(mail->info, "pid unknown: another user's process (uid 0)");
    char *cell = tui_vm_cell(ui, TUI_VMCOL_DEBUGGER, 8700);
    assert_string_equal(cell, "8602 8700");
    g_free(cell);
    /* the selected-VM port is the server's, not a fixed 8700 */
    assert_int_equal(tui_model_target_port(m, ui), 0); /* not known yet */
    m->selected_target = g_strdup(ui->key);
    assert_int_equal(tui_model_target_port(m, ui), 0);
    m->selected_port = 0; /* off */
    assert_int_equal(tui_model_target_port(m, ui), 0);
    m->selected_port = 41234;
    assert_int_equal(tui_model_target_port(m, ui), 41234);
    assert_int_equal(tui_model_target_port(m, notes), 0); /* not the target */
    cell = tui_vm_cell(ui, TUI_VMCOL_DEBUGGER, tui_model_target_port(m, ui));
    assert_string_equal(cell, "8602 41234");
    g_free(cell);
    cell = tui_vm_cell(g_ptr_array_index(m->shown, 1), TUI_VMCOL_DEBUGGER, 0);
    assert_string_equal(cell, "-");
    g_free(cell);

    /* sort by threads (column 7), then the other way */
    assert_int_equal(tui_model_key(m, '7', 2 * S), TUI_ACT_REDRAW);
    assert_int_equal(m->sort_col, TUI_VMCOL_THREADS);
    assert_string_equal(shown_app(m, 0), "com.example.mail"); /* no figure: first */
    assert_string_equal(shown_app(m, 2), "com.android.systemui");
    tui_model_key(m, '7', 2 * S);
    assert_true(m->sort_desc);
    assert_string_equal(shown_app(m, 0), "com.android.systemui");
    tui_model_key(m, '<', 2 * S);
    assert_int_equal(m->sort_col, TUI_VMCOL_DEBUGGER);
    tui_model_key(m, '2', 2 * S); /* by app */
    assert_string_equal(shown_app(m, 0), "com.android.systemui");
    assert_string_equal(shown_app(m, 2), "com.example.notes");

    /* the cursor stays on its VM across an update */
    tui_model_key(m, TUI_KEY_END, 3 * S);
    assert_string_equal(tui_model_cursor_vm(m)->app, "com.example.notes");
    JsonNode *v = parse(vms_json);
    tui_model_set_vms(m, v, 4 * S);
    json_node_unref(v);
    assert_string_equal(tui_model_cursor_vm(m)->app, "com.example.notes");
    /* the heap figure did not change: its age counts from the first */
    assert_int_equal(tui_model_cursor_vm(m)->heap_since_us, 1 * S);
    tui_model_free(m);
}

/* The list's columns at a width: 80 keeps the debugger column (port and
 * the attached mark) and shrinks APP and HEAP; the sort keys number the
 * columns on screen. */
static void test_vm_layout(void **state)
{
    (void)state;
    int w[TUI_VMCOL_COUNT];
    for (int width = 60; width <= 200; width++) {
        guint n = tui_vm_layout(width, NULL, FALSE, w);
        int total = 0;
        guint shown = 0;
        for (int c = 0; c < TUI_VMCOL_COUNT; c++) {
            total += w[c] > 0 ? w[c] + 1 : 0;
            shown += w[c] > 0;
        }
        assert_int_equal(n, shown);
        assert_true(total <= width);
        assert_true(w[TUI_VMCOL_PID] > 0 && w[TUI_VMCOL_APP] >= 8 && w[TUI_VMCOL_STATE] > 0 &&
                    w[TUI_VMCOL_THREADS] > 0);
        if (width >= 80) {
            assert_true(w[TUI_VMCOL_DEBUGGER] >= (int)strlen("27400* 65535"));
            assert_true(w[TUI_VMCOL_HEAP] >= (int)strlen("50% of 7.2 MiB"));
            assert_true(w[TUI_VMCOL_APP] >= 12);
        }
        if (width >= 120)
            assert_int_equal(n, TUI_VMCOL_COUNT);
    }
    assert_int_equal(tui_vm_layout(80, NULL, FALSE, w), 6); /* PID APP STATE DEBUGGER THREADS HEAP */
    assert_int_equal(w[TUI_VMCOL_VM] + w[TUI_VMCOL_DEVICE] + w[TUI_VMCOL_NATIVE], 0);
    assert_true(w[TUI_VMCOL_APP] < 22 || w[TUI_VMCOL_HEAP] < 20); /* they gave way */
    tui_vm_layout(68, NULL, FALSE, w);
    assert_true(w[TUI_VMCOL_DEBUGGER] > 0);
    tui_vm_layout(67, NULL, FALSE, w);
    assert_int_equal(w[TUI_VMCOL_DEBUGGER], 0); /* only when APP and HEAP can give no more */

    /* the keys at 80 columns: 1-6 are the columns shown, left to right */
    TuiModel *m = model_with_vms();
    tui_vm_layout(80, NULL, FALSE, w);
    m->n_list_cols = 0;
    for (int c = 0; c < TUI_VMCOL_COUNT; c++)
        if (w[c] > 0)
            m->list_cols[m->n_list_cols++] = (TuiVmColumn)c;
    assert_int_equal(tui_model_key(m, '4', S), TUI_ACT_REDRAW);
    assert_int_equal(m->sort_col, TUI_VMCOL_DEBUGGER);
    assert_int_equal(tui_model_key(m, '3', S), TUI_ACT_REDRAW);
    assert_int_equal(m->sort_col, TUI_VMCOL_STATE);
    assert_int_equal(tui_model_key(m, '7', S), TUI_ACT_NONE); /* no 7th column */
    assert_int_equal(m->sort_col, TUI_VMCOL_STATE);
    tui_model_key(m, '6', S);
    assert_int_equal(m->sort_col, TUI_VMCOL_HEAP);
    tui_model_key(m, '>', S); /* past the last: the first */
    assert_int_equal(m->sort_col, TUI_VMCOL_PID);
    tui_model_key(m, '<', S);
    assert_int_equal(m->sort_col, TUI_VMCOL_HEAP);
    tui_model_key(m, '<', S); /* steps over the columns not shown */
    assert_int_equal(m->sort_col, TUI_VMCOL_THREADS);
    tui_model_key(m, '<', S);
    assert_int_equal(m->sort_col, TUI_VMCOL_DEBUGGER);
    tui_model_key(m, '<', S);
    assert_int_equal(m->sort_col, TUI_VMCOL_STATE);
    tui_model_key(m, '<', S);
    assert_int_equal(m->sort_col, TUI_VMCOL_APP);
    tui_model_free(m);
}

static void test_filter_keys(void **state)
{
    (void)state;
    TuiModel *m = model_with_vms();
    assert_int_equal(tui_model_key(m, '/', 0), TUI_ACT_REDRAW);
    assert_true(m->editing_filter);
    tui_model_key(m, 'E', 0);
    tui_model_key(m, 'x', 0);
    assert_int_equal(m->shown->len, 2); /* case-insensitive: notes, mail */
    tui_model_key(m, 'a', 0);
    tui_model_key(m, 'm', 0);
    tui_model_key(m, 'p', 0);
    tui_model_key(m, 'l', 0);
    tui_model_key(m, 'e', 0);
    tui_model_key(m, '.', 0);
    tui_model_key(m, 'm', 0);
    assert_int_equal(m->shown->len, 1);
    assert_string_equal(shown_app(m, 0), "com.example.mail");
    tui_model_key(m, TUI_KEY_BACKSPACE, 0);
    assert_int_equal(m->shown->len, 2);
    /* 'q' while typing is a letter, not quit */
    assert_int_equal(tui_model_key(m, 'q', 0), TUI_ACT_REDRAW);
    assert_int_equal(m->shown->len, 0);
    tui_model_key(m, TUI_KEY_BACKSPACE, 0);
    tui_model_key(m, TUI_KEY_ENTER, 0);
    assert_false(m->editing_filter);
    assert_string_equal(m->filter, "Example.");
    /* Esc clears the filter first, then quits */
    assert_int_equal(tui_model_key(m, TUI_KEY_ESC, 0), TUI_ACT_REDRAW);
    assert_null(m->filter);
    assert_int_equal(m->shown->len, 3);
    assert_int_equal(tui_model_key(m, TUI_KEY_ESC, 0), TUI_ACT_QUIT);
    tui_model_free(m);
}

static void test_screens_and_tabs(void **state)
{
    (void)state;
    TuiModel *m = model_with_vms();
    /* help: any key closes it and does nothing else */
    tui_model_key(m, '?', 0);
    assert_true(m->help);
    assert_int_equal(tui_model_key(m, 'q', 0), TUI_ACT_REDRAW);
    assert_false(m->help);

    tui_model_key(m, TUI_KEY_DOWN, 0); /* the mail app (pid 200) */
    assert_int_equal(tui_model_key(m, TUI_KEY_ENTER, 0), TUI_ACT_OPEN_VM);
    assert_int_equal(m->screen, TUI_SCREEN_DETAIL);
    assert_string_equal(m->detail_vm, "a:3");
    assert_string_equal(tui_model_detail_vm(m)->app, "com.example.mail");
    assert_null(tui_model_tab_name(m));

    /* tabs are the VM's views, sorted, no name hard-coded but the first look */
    const char *names[] = {"vminfo", "threads", "heap.summary", "heap.map"};
    assert_true(tui_model_set_tabs(m, names, 4));
    assert_string_equal(tui_model_tab_name(m), "threads");
    /* a view list with more views keeps the current tab */
    const char *more[] = {"vminfo", "threads", "heap.summary", "heap.map", "stack"};
    assert_false(tui_model_set_tabs(m, more, 5));
    assert_string_equal(tui_model_tab_name(m), "threads");

    JsonNode *v = parse(threads_json("wait", FALSE));
    tui_model_set_view(m, v, 1 * S);
    json_node_unref(v);
    assert_null(m->table); /* another VM's threads: ignored */
    JsonNode *mine = parse(
        "{\"name\":\"threads\",\"vm\":\"a:3\",\"kind\":\"table\",\"columns\":[{\"name\":\"id\",\"type\":\"int\"},"
        "{\"name\":\"state\",\"type\":\"str\"}],\"rows\":[[7,\"wait\"],[9,\"running\"]]}");
    tui_model_set_view(m, mine, 1 * S);
    json_node_unref(mine);
    assert_non_null(m->table);

    /* Enter on a thread: a stack only if the server has the command */
    assert_int_equal(tui_model_key(m, TUI_KEY_ENTER, 0), TUI_ACT_NONE);
    g_ptr_array_add(m->commands, g_strdup("stack"));
    tui_model_key(m, TUI_KEY_DOWN, 0);
    assert_int_equal(tui_model_key(m, TUI_KEY_ENTER, 0), TUI_ACT_STACK);
    assert_string_equal(m->action_row, "9");
    assert_string_equal(m->action_vm, "a:3");

    /* commands act on the open VM; trace without a command says so */
    assert_int_equal(tui_model_key(m, 'g', 0), TUI_ACT_GC);
    assert_int_equal(tui_model_key(m, 'h', 0), TUI_ACT_HPROF);
    assert_int_equal(tui_model_key(m, 's', 0), TUI_ACT_SELECT);
    assert_int_equal(tui_model_key(m, 'r', 0), TUI_ACT_REFRESH);
    assert_int_equal(tui_model_key(m, 't', 5 * S), TUI_ACT_REDRAW);
    assert_non_null(strstr(m->status, "not available"));
    g_ptr_array_add(m->commands, g_strdup("trace"));
    assert_int_equal(tui_model_key(m, 't', 0), TUI_ACT_TRACE);

    /* tabs wrap both ways and drop the old content */
    assert_int_equal(tui_model_key(m, TUI_KEY_RIGHT, 0), TUI_ACT_TAB);
    assert_string_equal(tui_model_tab_name(m), "vminfo");
    assert_null(m->table);
    tui_model_key(m, TUI_KEY_RIGHT, 0);
    assert_string_equal(tui_model_tab_name(m), "heap.map");
    tui_model_key(m, TUI_KEY_LEFT, 0);
    assert_string_equal(tui_model_tab_name(m), "vminfo");

    /* q: back to the list; q again: quit */
    assert_int_equal(tui_model_key(m, 'q', 0), TUI_ACT_CLOSE_VM);
    assert_int_equal(m->screen, TUI_SCREEN_LIST);
    assert_null(m->detail_vm);
    assert_int_equal(tui_model_key(m, 'q', 0), TUI_ACT_QUIT);
    tui_model_free(m);
}

static void test_blockmap(void **state)
{
    (void)state;
    JsonNode *v = parse(
        "{\"name\":\"heap.map\",\"vm\":\"a:1\",\"kind\":\"table\",\"columns\":["
        "{\"name\":\"start\",\"type\":\"int\",\"unit\":\"addr\"},{\"name\":\"bytes\",\"type\":\"int\",\"unit\":\"B\"},"
        "{\"name\":\"kind\",\"type\":\"str\",\"unit\":null}],\"rows\":["
        "[4096,1024,\"object\"],[5120,512,\"free\"],[5632,2560,\"class object\"]]}");
    TuiTable *t = tui_table_from_json(v, 0);
    assert_true(tui_blockmap_fits(t));
    TuiBlockMap *map = tui_blockmap_new(t, 8, 2); /* 4096 bytes on 16 cells: 256 per cell */
    assert_non_null(map);
    assert_int_equal(map->start, 4096);
    assert_int_equal(map->end, 8192);
    assert_int_equal(map->bytes_per_cell, 256);
    assert_int_equal(map->rows, 2);
    assert_int_equal(map->kinds->len, 3);
    assert_string_equal(g_ptr_array_index(map->kinds, 0), "object");
    guint8 want[16] = {1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
    assert_memory_equal(map->cells, want, 16);
    tui_blockmap_free(map);
    /* a narrow grid: a cell shows the kind covering most of it */
    map = tui_blockmap_new(t, 2, 1);
    assert_int_equal(map->cells[0], 1 /* object: 1024 of 2048, free 512, class 512 */);
    assert_int_equal(map->cells[1], 3);
    tui_blockmap_free(map);
    tui_table_free(t);
    json_node_unref(v);
    /* tables without the columns are no map */
    v = parse(threads_json("wait", FALSE));
    t = tui_table_from_json(v, 0);
    assert_false(tui_blockmap_fits(t));
    assert_null(tui_blockmap_new(t, 8, 2));
    tui_table_free(t);
    json_node_unref(v);
    /* the heap plugin's heap.map: a "color" column gives each kind its colour */
    v = parse("{\"name\":\"heap.map\",\"vm\":\"a:1\",\"kind\":\"table\",\"columns\":["
              "{\"name\":\"heap\",\"type\":\"int\",\"unit\":null},"
              "{\"name\":\"addr\",\"type\":\"int\",\"unit\":\"addr\"},"
              "{\"name\":\"length\",\"type\":\"int\",\"unit\":\"B\"},"
              "{\"name\":\"kind\",\"type\":\"str\",\"unit\":null},"
              "{\"name\":\"color\",\"type\":\"str\",\"unit\":null}],\"rows\":["
              "[1,4096,1024,\"data object\",\"#0000ff\"],[1,5120,512,\"free\",\"#000000\"],"
              "[1,5632,2560,\"2-byte array (short[], char[])\",\"#ff8000\"],[1,8192,16,\"odd\",\"red\"]]}");
    t = tui_table_from_json(v, 0);
    assert_true(tui_blockmap_fits(t));
    map = tui_blockmap_new(t, 8, 2);
    assert_non_null(map);
    assert_int_equal(map->kinds->len, 4);
    assert_int_equal(map->rgb[0], 0x0000ff);
    assert_int_equal(map->rgb[1], 0x000000);
    assert_int_equal(map->rgb[2], 0xff8000);
    assert_int_equal(map->rgb[3], -1); /* not "#rrggbb": the TUI's own colours */
    tui_blockmap_free(map);
    tui_table_free(t);
    json_node_unref(v);
}

/* NATIVE (and HEAP, THREADS) sort by the figure's value: "402.8 KiB" is
 * less than "9.0 MiB", which is less than "33.4 MiB" (the text's order,
 * as the list once sorted, puts 9.0 MiB after 33.4 MiB). */
static const char vms_native_json[] =
    "{\"name\":\"vms\",\"vm\":null,\"kind\":\"table\",\"version\":1,\"columns\":["
    "{\"name\":\"key\",\"type\":\"str\"},{\"name\":\"pid\",\"type\":\"int\"},{\"name\":\"app\",\"type\":\"str\"},"
    "{\"name\":\"info\",\"type\":\"str\"}],\"rows\":["
    "[\"n:1\",1,\"nine\",\"native: 9.0 MiB\"],"
    "[\"n:2\",2,\"seven\",\"native: 7.3 MiB, heap: 9% of 100.0 MiB\"],"
    "[\"n:3\",3,\"kib\",\"native: 402.8 KiB, heap: 60% of 14.3 MiB\"],"
    "[\"n:4\",4,\"big\",\"native: 33.4 MiB, heap: 10% of 1.0 GiB\"],"
    "[\"n:5\",5,\"none\",\"threads: 3\"]]}";

static void test_sort_by_value(void **state)
{
    (void)state;
    assert_true(tui_figure_value("402.8 KiB") < tui_figure_value("9.0 MiB"));
    assert_true(tui_figure_value("9.0 MiB") < tui_figure_value("33.4 MiB"));
    assert_true(tui_figure_value("33.4 MiB") < tui_figure_value("1.0 GiB"));
    assert_true(tui_figure_value("900 B") < tui_figure_value("1.0 KiB"));
    assert_int_equal((int)tui_figure_value("41% of 8.0 MiB"), 41);
    assert_int_equal((int)tui_figure_value("12"), 12);
    assert_int_equal((int)tui_figure_value(NULL), -1);
    assert_int_equal((int)tui_figure_value("-"), -1);
    TuiModel *m = tui_model_new();
    JsonNode *v = parse(vms_native_json);
    tui_model_set_vms(m, v, S);
    json_node_unref(v);
    m->sort_col = TUI_VMCOL_NATIVE;
    tui_model_refilter(m);
    assert_string_equal(shown_app(m, 0), "none"); /* no figure: first */
    assert_string_equal(shown_app(m, 1), "kib");
    assert_string_equal(shown_app(m, 2), "seven");
    assert_string_equal(shown_app(m, 3), "nine");
    assert_string_equal(shown_app(m, 4), "big");
    m->sort_col = TUI_VMCOL_HEAP; /* the percentage, the figure shown first */
    tui_model_refilter(m);
    assert_string_equal(shown_app(m, 4), "kib");
    assert_string_equal(shown_app(m, 3), "big");
    tui_model_free(m);
}

/* `t` traces to APP-PID.trace; one at a time. */
static void test_trace_key(void **state)
{
    (void)state;
    TuiModel *m = model_with_vms();
    TuiVm odd = {.key = (char *)"k", .app = (char *)"../a b:c", .pid = 7};
    char *f = tui_trace_file_name(&odd);
    assert_string_equal(f, "_._a_b_c-7.trace");
    g_free(f);
    f = tui_trace_file_name(tui_model_cursor_vm(m));
    assert_string_equal(f, "com.android.systemui-100.trace");
    g_free(f);
    assert_int_equal(tui_model_key(m, 't', S), TUI_ACT_REDRAW); /* no trace command */
    assert_non_null(strstr(m->status, "not available"));
    g_ptr_array_add(m->commands, g_strdup("trace"));
    assert_int_equal(tui_model_key(m, 't', S), TUI_ACT_TRACE);
    assert_string_equal(m->action_vm, "a:2");
    m->trace_vm = g_strdup("com.android.systemui"); /* the frontend: it runs */
    assert_int_equal(tui_model_key(m, 't', S), TUI_ACT_REDRAW); /* no second one */
    assert_non_null(strstr(m->status, "running already"));
    g_clear_pointer(&m->trace_vm, g_free);
    assert_int_equal(tui_model_key(m, 't', S), TUI_ACT_TRACE);
    tui_model_free(m);
}

/* An escape sequence read whole is one key: Alt+x and unknown function
 * keys are ignored (they once quit the list as a lone ESC); Home and End
 * in their other spellings are those keys; a lone ESC is ESC. */
static void test_escape_keys(void **state)
{
    (void)state;
    assert_int_equal(tui_key_from_escape("", 0), TUI_KEY_ESC);
    assert_int_equal(tui_key_from_escape("x", 1), TUI_KEY_IGNORE);
    assert_int_equal(tui_key_from_escape("[4~", 3), TUI_KEY_END);
    assert_int_equal(tui_key_from_escape("[1~", 3), TUI_KEY_HOME);
    assert_int_equal(tui_key_from_escape("OF", 2), TUI_KEY_END);
    assert_int_equal(tui_key_from_escape("[24;5~", 6), TUI_KEY_IGNORE);
    assert_true(tui_escape_incomplete("[", 1));
    assert_true(tui_escape_incomplete("[24;", 4));
    assert_false(tui_escape_incomplete("[24;5~", 6));
    assert_true(tui_escape_incomplete("O", 1));
    assert_false(tui_escape_incomplete("OF", 2));
    assert_false(tui_escape_incomplete("x", 1));
    TuiModel *m = model_with_vms();
    assert_int_equal(tui_model_key(m, tui_key_from_escape("x", 1), S), TUI_ACT_NONE); /* M-x does not quit */
    assert_int_equal(tui_model_key(m, tui_key_from_escape("[4~", 3), S), TUI_ACT_REDRAW);
    assert_string_equal(tui_model_cursor_vm(m)->app, "com.example.notes"); /* End: the last */
    assert_int_equal(tui_model_key(m, tui_key_from_escape("", 0), S), TUI_ACT_QUIT);
    tui_model_free(m);
}

/* Columns from their content: two devices that differ only in the port
 * both show in full when there is room, the VM name is not cut, HEAP keeps
 * room for its age; at 80 columns DEVICE stays (two devices) and the extra
 * width of a wide terminal is shared, not all APP's. */
static const char vms_devices_json[] =
    "{\"name\":\"vms\",\"vm\":null,\"kind\":\"table\",\"version\":1,\"columns\":["
    "{\"name\":\"key\",\"type\":\"str\"},{\"name\":\"pid\",\"type\":\"int\"},{\"name\":\"app\",\"type\":\"str\"},"
    "{\"name\":\"vm\",\"type\":\"str\"},{\"name\":\"device\",\"type\":\"str\"},{\"name\":\"state\",\"type\":\"str\"},"
    "{\"name\":\"debug port\",\"type\":\"int\"},{\"name\":\"info\",\"type\":\"str\"}],\"rows\":["
    "[\"d:1\",4242,\"Hello\",\"OpenJDK 64-Bit Server VM\",\"127.0.0.1:27001\",\"ready\",27400,"
    "\"heap: 60% of 14.3 MiB, threads: 12, native: 9.0 MiB\"],"
    "[\"d:2\",4242,\"Hello\",\"OpenJDK 64-Bit Server VM\",\"127.0.0.1:27002\",\"ready\",27401,"
    "\"heap: 6% of 14.3 MiB, threads: 9\"]]}";

static void test_vm_content_widths(void **state)
{
    (void)state;
    TuiModel *m = tui_model_new();
    JsonNode *v = parse(vms_devices_json);
    tui_model_set_vms(m, v, S);
    json_node_unref(v);
    int want[TUI_VMCOL_COUNT], w[TUI_VMCOL_COUNT];
    gboolean need_device = tui_vm_want_widths(m->shown, want);
    assert_true(need_device);
    assert_true(want[TUI_VMCOL_DEVICE] >= (int)strlen("127.0.0.1:27001"));
    for (int width = 300; width >= 60; width -= 20) {
        tui_vm_layout(width, want, need_device, w);
        int total = 0;
        for (int c = 0; c < TUI_VMCOL_COUNT; c++)
            total += w[c] > 0 ? w[c] + 1 : 0;
        assert_true(total <= width);
        assert_true(w[TUI_VMCOL_DEVICE] >= 8); /* it tells the rows apart: never left out */
        if (width >= 140) {
            assert_int_equal(w[TUI_VMCOL_DEVICE], want[TUI_VMCOL_DEVICE]);
            assert_int_equal(w[TUI_VMCOL_VM], want[TUI_VMCOL_VM]);
            assert_true(w[TUI_VMCOL_HEAP] >= (int)strlen("60% of 14.3 MiB (12m)"));
        }
    }
    tui_vm_layout(80, want, need_device, w);
    assert_true(w[TUI_VMCOL_DEVICE] > 0);
    /* one device: it may go at 80 */
    TuiVm *second = g_ptr_array_index(m->vms, 1);
    g_free(second->device);
    second->device = g_strdup("127.0.0.1:27001");
    assert_false(tui_vm_want_widths(m->shown, want));
    tui_model_free(m);
}

/* An int column of unit "epoch_ms": the cell is the local date and time
 * (TZ=UTC here), sorted by its number, and the header has no unit; a value
 * no date has stays a number. */
static void test_table_epoch_ms(void **state)
{
    (void)state;
    g_setenv("TZ", "UTC", TRUE);
    tzset();
    JsonNode *v = parse("{\"name\":\"heap.summary\",\"vm\":\"k\",\"kind\":\"table\",\"version\":1,"
                        "\"columns\":[{\"name\":\"heap\",\"type\":\"int\",\"unit\":null},"
                        "{\"name\":\"timestamp\",\"type\":\"int\",\"unit\":\"epoch_ms\"}],"
                        "\"rows\":[[1,1795792241818],[2,-5]]}");
    TuiTable *t = tui_table_from_json(v, S);
    json_node_unref(v);
    assert_non_null(t);
    TuiRow *r = g_ptr_array_index(t->rows, 0);
    assert_string_equal(r->cells[1], "2026-11-27 15:10:41");
    assert_true(r->is_num[1]);
    assert_true(r->nums[1] == 1795792241818.0);
    r = g_ptr_array_index(t->rows, 1);
    assert_string_equal(r->cells[1], "-5");
    char *h = tui_column_header(g_ptr_array_index(t->columns, 1));
    assert_string_equal(h, "timestamp");
    g_free(h);
    tui_table_free(t);
}

/* The model tui_table_cut_widths must match: one character off the widest
 * eligible column (the first of equals) at a time, none below the floor
 * (what tui_table_widths did before, in O(excess x columns): a VM's string
 * of a million characters cost a million passes a redraw). */
static void cut_one_at_a_time(int *w, const gboolean *may, guint n, gint64 *excess, int floor)
{
    while (*excess > 0) {
        int widest = -1;
        for (guint c = 0; c < n; c++) {
            if (!may[c] || w[c] <= floor)
                continue;
            if (widest < 0 || w[c] > w[widest])
                widest = (int)c;
        }
        if (widest < 0)
            break;
        w[widest]--;
        (*excess)--;
    }
}

static void test_table_cut_widths_model(void **state)
{
    (void)state;
    GRand *r = g_rand_new_with_seed(16);
    for (int round = 0; round < 20000; round++) {
        guint n = (guint)g_rand_int_range(r, 1, 9);
        int w[8], want[8];
        gboolean may[8];
        gint64 total = 0;
        for (guint c = 0; c < n; c++) {
            /* small widths collide often (ties), some are huge */
            w[c] = g_rand_int_range(r, 0, 5) == 0 ? g_rand_int_range(r, 0, 100000)
                                                 : g_rand_int_range(r, 0, 20);
            may[c] = g_rand_int_range(r, 0, 4) != 0;
            want[c] = w[c];
            total += w[c];
        }
        gint64 excess = g_rand_int_range(r, -3, (gint32)MIN(total + 5, 200000)), want_excess = excess;
        int floor = g_rand_int_range(r, 0, 8);
        if (want_excess < 2000 || total < 2000) /* (the model is slow on the huge ones) */
            cut_one_at_a_time(want, may, n, &want_excess, floor);
        else
            continue;
        tui_table_cut_widths(w, may, n, &excess, floor);
        assert_int_equal(excess, want_excess);
        for (guint c = 0; c < n; c++)
            assert_int_equal(w[c], want[c]);
    }
    /* a huge column against the model, once */
    int w[3] = {3000000, 40, 12}, want[3] = {3000000, 40, 12};
    gboolean may[3] = {TRUE, TRUE, FALSE};
    gint64 excess = 3000000 - 20, want_excess = excess;
    cut_one_at_a_time(want, may, 3, &want_excess, TUI_COLUMN_MIN);
    tui_table_cut_widths(w, may, 3, &excess, TUI_COLUMN_MIN);
    assert_int_equal(excess, want_excess);
    for (int c = 0; c < 3; c++)
        assert_int_equal(w[c], want[c]);
    g_rand_free(r);
}

/* A tab's columns use the width there is (no cap of 40), and at 80 a
 * number column keeps its values' width while a text column can give. */
static void test_table_widths(void **state)
{
    (void)state;
    GString *desc = g_string_new(NULL);
    for (int i = 0; i < 20; i++)
        g_string_append(desc, "word ");
    g_autofree char *json = g_strdup_printf(
        "{\"name\":\"t\",\"vm\":\"k\",\"kind\":\"table\",\"version\":1,\"columns\":["
        "{\"name\":\"id\",\"type\":\"int\",\"unit\":null},{\"name\":\"description\",\"type\":\"str\",\"unit\":null},"
        "{\"name\":\"size\",\"type\":\"int\",\"unit\":\"B\"},{\"name\":\"utime\",\"type\":\"int\",\"unit\":\"ms\"}],"
        "\"rows\":[[1,\"%s\",5662310,1234567]]}", desc->str);
    g_string_free(desc, TRUE);
    JsonNode *v = parse(json);
    TuiTable *t = tui_table_from_json(v, S);
    json_node_unref(v);
    int w[4];
    tui_table_widths(t, 0, 1, 250, w);
    assert_int_equal(w[1], 100); /* the whole description */
    char *h = tui_column_header(g_ptr_array_index(t->columns, 3));
    assert_string_equal(h, "utime (ms)");
    g_free(h);
    h = tui_column_header(g_ptr_array_index(t->columns, 2));
    assert_string_equal(h, "size"); /* "5.4 MiB" says it */
    g_free(h);
    tui_table_widths(t, 0, 1, 80, w);
    int total = 0;
    for (int c = 0; c < 4; c++)
        total += w[c] + 2;
    assert_true(total <= 80);
    assert_int_equal(w[2], (int)strlen("5.4 MiB"));
    assert_int_equal(w[3], (int)strlen("utime (ms)"));
    tui_table_free(t);
    /* a middle ellipsis keeps both ends */
    char *e = tui_middle_ellipsis("com.example.verylongapplicationname", 15);
    assert_int_equal(g_utf8_strlen(e, -1), 15);
    assert_true(g_str_has_prefix(e, "com.exa"));
    assert_true(g_str_has_suffix(e, "ionname"));
    g_free(e);
    e = tui_middle_ellipsis("short", 15);
    assert_string_equal(e, "short");
    g_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_cells),    cmocka_unit_test(test_highlight_on_change),
        cmocka_unit_test(test_vm_list),        cmocka_unit_test(test_vm_layout),
        cmocka_unit_test(test_filter_keys),
        cmocka_unit_test(test_screens_and_tabs), cmocka_unit_test(test_blockmap),
        cmocka_unit_test(test_sort_by_value),  cmocka_unit_test(test_trace_key),
        cmocka_unit_test(test_escape_keys),    cmocka_unit_test(test_vm_content_widths),
        cmocka_unit_test(test_table_widths),
        cmocka_unit_test(test_table_cut_widths_model),
        cmocka_unit_test(test_table_epoch_ms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
