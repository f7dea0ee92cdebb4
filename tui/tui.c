/* SPDX-License-Identifier: Apache-2.0
 *
 * The terminal UI's run: ncurses set up and restored, one GLib main loop
 * with the keyboard, the signals, a tick (highlights fade, ages count) and
 * the control-socket connections (conn.h): the VM list's watch, the open
 * tab's watch (so a plugin polls only while its view is on screen), and
 * one short connection per command. Nothing here blocks on the server.
 * See tui.h.
 */
#include <build-config.h>

#include "tui/tui.h"

#include <curses.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <glib-unix.h>

#include "tui/conn.h"
#include "tui/draw.h"
#include "tui/model.h"

#define TICK_MS 500
#define RECONNECT_MS 1000
#define LIST_ANSWER_MS 5000 /* a server that took the watch but never answers it */
#define VIEWS_EVERY_MS 3000
#define REDRAW_DELAY_MS 30
#define COMMAND_TIMEOUT_NOTE "(still running)"

typedef struct Tui {
    char *socket;
    TuiModel *m;
    GMainLoop *loop;
    TuiConn *list;      /* watch "vms" */
    TuiConn *tab;       /* watch the current tab's view of the open VM */
    TuiConn *views;     /* a `views` request for the open VM, or NULL */
    GPtrArray *cmds;    /* TuiConn*: commands running */
    guint tick, reconnect, redraw, views_timer, list_answer;
    gboolean lost;      /* the list's connection was lost: say so when back */
    int status;
} Tui;

static gint64 now(void)
{
    return g_get_monotonic_time();
}

static gboolean on_redraw(gpointer data)
{
    Tui *t = data;
    t->redraw = 0;
    tui_draw(t->m, now());
    return G_SOURCE_REMOVE;
}

static void schedule_redraw(Tui *t)
{
    if (t->redraw == 0)
        t->redraw = g_timeout_add(REDRAW_DELAY_MS, on_redraw, t);
}

static void quit(Tui *t, int status)
{
    t->status = status;
    g_main_loop_quit(t->loop);
}

static JsonObject *as_object(JsonNode *n)
{
    return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

/* ----------------------------------------------------------- the list */

static void open_list(Tui *t);
static void open_tab(Tui *t);
static void ask_views(Tui *t);
static void ask_once(Tui *t);

static void on_list_message(TuiConn *c, JsonNode *msg, gpointer ud)
{
    Tui *t = ud;
    JsonObject *o = as_object(msg);
    const char *event = o ? ddm_json_get_string(o, "event") : NULL;
    if (event == NULL) {
        if (t->list_answer != 0)
            g_source_remove(t->list_answer);
        t->list_answer = 0;
        if (o && ddm_json_get_bool(o, "ok", FALSE)) {
            t->m->connected = TRUE;
            if (t->lost) /* replaces "...; reconnecting" */
                tui_model_set_status(t->m, now(), "the server is back: reconnected");
            t->lost = FALSE;
        } else if (o) {
            const char *err = ddm_json_get_string(o, "error");
            tui_model_set_status(t->m, now(), "the server refused to watch: %s", err ? err : "?");
        }
        schedule_redraw(t);
        return;
    }
    JsonNode *view = json_object_get_member(o, "view");
    JsonObject *vo = as_object(view);
    if (vo == NULL || g_strcmp0(ddm_json_get_string(vo, "name"), "vms") != 0 ||
        ddm_json_get_string(vo, "vm") != NULL)
        return;
    if (strcmp(event, "removed") == 0)
        tui_model_set_vms(t->m, NULL, now());
    else
        tui_model_set_vms(t->m, view, now());
    schedule_redraw(t);
}

static gboolean on_reconnect(gpointer data)
{
    Tui *t = data;
    t->reconnect = 0;
    open_list(t);
    if (t->list != NULL) {
        ask_once(t);
        if (t->m->screen == TUI_SCREEN_DETAIL) {
            ask_views(t);
            open_tab(t);
        }
    }
    return G_SOURCE_REMOVE;
}

static void schedule_reconnect(Tui *t)
{
    if (t->reconnect == 0)
        t->reconnect = g_timeout_add(RECONNECT_MS, on_reconnect, t);
}

static void on_list_closed(TuiConn *c, const char *why, gpointer ud)
{
    Tui *t = ud;
    if (t->list_answer != 0)
        g_source_remove(t->list_answer);
    t->list_answer = 0;
    tui_conn_free(c);
    t->list = NULL;
    t->m->connected = FALSE;
    t->lost = TRUE;
    g_clear_pointer(&t->tab, tui_conn_free);
    g_clear_pointer(&t->views, tui_conn_free);
    tui_model_set_status(t->m, now(), "%s; reconnecting...", why);
    schedule_reconnect(t);
    schedule_redraw(t);
}

/* The list's watch was taken (a socket accepts before its server reads:
 * one stopping, or wedged) but not answered: drop it and try again, or
 * the UI would wait on it for ever. */
static gboolean on_list_answer_timeout(gpointer data)
{
    Tui *t = data;
    t->list_answer = 0;
    if (t->list != NULL)
        on_list_closed(t->list, "the server does not answer", t);
    return G_SOURCE_REMOVE;
}

static void open_list(Tui *t)
{
    g_clear_pointer(&t->list, tui_conn_free);
    if (t->list_answer != 0)
        g_source_remove(t->list_answer);
    t->list_answer = 0;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.name = (char *)"vms";
    g_autoptr(GError) error = NULL;
    t->list = tui_conn_new(t->socket, &req, on_list_message, on_list_closed, t, &error);
    if (t->list == NULL) {
        t->m->connected = FALSE;
        t->lost = TRUE;
        tui_model_set_status(t->m, now(), "no server (%s); retrying...", error->message);
        schedule_reconnect(t);
    } else {
        t->list_answer = g_timeout_add(LIST_ANSWER_MS, on_list_answer_timeout, t);
    }
    schedule_redraw(t);
}

/* ------------------------------------------------------------ the tab */

static void on_tab_message(TuiConn *c, JsonNode *msg, gpointer ud)
{
    Tui *t = ud;
    JsonObject *o = as_object(msg);
    const char *event = o ? ddm_json_get_string(o, "event") : NULL;
    if (event == NULL) {
        if (o && !ddm_json_get_bool(o, "ok", FALSE)) {
            const char *err = ddm_json_get_string(o, "error");
            tui_model_set_status(t->m, now(), "%s", err ? err : "the server refused to watch");
            schedule_redraw(t);
        }
        return;
    }
    JsonNode *view = json_object_get_member(o, "view");
    JsonObject *vo = as_object(view);
    if (vo == NULL)
        return;
    if (strcmp(event, "removed") == 0)
        tui_model_view_removed(t->m, ddm_json_get_string(vo, "name"), ddm_json_get_string(vo, "vm"));
    else
        tui_model_set_view(t->m, view, now());
    schedule_redraw(t);
}

static void on_tab_closed(TuiConn *c, const char *why, gpointer ud)
{
    Tui *t = ud;
    tui_conn_free(c);
    t->tab = NULL; /* the VM went away, or the server: the list's connection says which */
    schedule_redraw(t);
}

static void open_tab(Tui *t)
{
    g_clear_pointer(&t->tab, tui_conn_free);
    const char *name = tui_model_tab_name(t->m);
    if (t->m->screen != TUI_SCREEN_DETAIL || name == NULL)
        return;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    req.name = (char *)name;
    req.vm = t->m->detail_vm;
    t->tab = tui_conn_new(t->socket, &req, on_tab_message, on_tab_closed, t, NULL);
}

/* ---------------------------------------------------------- the views */

static void on_views_message(TuiConn *c, JsonNode *msg, gpointer ud)
{
    Tui *t = ud;
    JsonObject *o = as_object(msg);
    if (o && ddm_json_get_bool(o, "ok", FALSE) && t->m->screen == TUI_SCREEN_DETAIL) {
        JsonNode *vn = json_object_get_member(o, "views");
        GPtrArray *names = g_ptr_array_new();
        if (vn != NULL && JSON_NODE_HOLDS_ARRAY(vn)) {
            JsonArray *a = json_node_get_array(vn);
            for (guint i = 0; i < json_array_get_length(a); i++) {
                JsonObject *v = as_object(json_array_get_element(a, i));
                if (v && g_strcmp0(ddm_json_get_string(v, "vm"), t->m->detail_vm) == 0)
                    g_ptr_array_add(names, (gpointer)ddm_json_get_string(v, "name"));
            }
        }
        gboolean had = t->tab != NULL;
        if (tui_model_set_tabs(t->m, (const char *const *)names->pdata, names->len) || !had)
            open_tab(t);
        g_ptr_array_unref(names);
    } else if (o && !ddm_json_get_bool(o, "ok", FALSE)) {
        const TuiVm *vm = tui_model_detail_vm(t->m);
        const char *err = ddm_json_get_string(o, "error");
        /* a target listed but not connected (retrying) has no views: the
         * detail page says its state and why, not "no VM matches" */
        if (vm == NULL || g_strcmp0(vm->state, "ready") == 0)
            tui_model_set_status(t->m, now(), "%s", err ? err : "no views");
    }
    tui_conn_free(c);
    t->views = NULL;
    schedule_redraw(t);
}

static void on_views_closed(TuiConn *c, const char *why, gpointer ud)
{
    Tui *t = ud;
    tui_conn_free(c);
    t->views = NULL;
}

static void ask_views(Tui *t)
{
    if (t->views != NULL || t->m->screen != TUI_SCREEN_DETAIL || t->m->detail_vm == NULL)
        return;
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_VIEWS;
    req.vm = t->m->detail_vm;
    t->views = tui_conn_new(t->socket, &req, on_views_message, on_views_closed, t, NULL);
}

static gboolean on_views_timer(gpointer data)
{
    Tui *t = data;
    ask_views(t); /* plugins add views as data arrives (a first GC, a stack) */
    return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------- the commands */

typedef enum { CMD_GC, CMD_HPROF, CMD_STACK, CMD_SELECT, CMD_TRACE, CMD_COMMANDS } CmdKind;

typedef struct Cmd {
    Tui *t;
    CmdKind kind;
    char *label; /* "gc com.example.app" */
    char *vm, *file; /* a trace's VM and file (to try again with --tracing) */
    gboolean tracing;
} Cmd;

static void cmd_free(gpointer p)
{
    Cmd *cmd = p;
    g_free(cmd->label);
    g_free(cmd->vm);
    g_free(cmd->file);
    g_free(cmd);
}

static void start_trace(Tui *t, const char *label, const char *vm, const char *file, gboolean tracing,
                        const char *const *argv);

static void cmd_done(TuiConn *c)
{
    Cmd *cmd = tui_conn_get_data(c);
    g_ptr_array_remove(cmd->t->cmds, c); /* frees c (and cmd) */
}

static void on_cmd_message(TuiConn *c, JsonNode *msg, gpointer ud)
{
    Tui *t = ud;
    Cmd *cmd = tui_conn_get_data(c);
    JsonObject *o = as_object(msg);
    if (o == NULL)
        return;
    JsonObject *p = as_object(json_object_get_member(o, "progress"));
    if (p != NULL) {
        gint64 done = ddm_json_get_int(p, "done", 0), total = ddm_json_get_int(p, "total", 0);
        const char *unit = ddm_json_get_string(p, "unit");
        gboolean bytes = g_strcmp0(unit, "B") == 0, ms = g_strcmp0(unit, "ms") == 0;
        g_autofree char *d = bytes ? tui_fmt_bytes((double)done)
                             : ms  ? g_strdup_printf("%.0f s", done / 1000.0)
                                   : g_strdup_printf("%" G_GINT64_FORMAT, done);
        g_autofree char *tt = bytes ? tui_fmt_bytes((double)total)
                              : ms  ? g_strdup_printf("%.0f s", total / 1000.0)
                                    : g_strdup_printf("%" G_GINT64_FORMAT, total);
        if (cmd->kind == CMD_TRACE) /* what it does and where, with how far it is */
            tui_model_set_status(t->m, now(), "%s: %s into %s, %s of %s", cmd->label,
                                 cmd->tracing ? "tracing" : "sampling", cmd->file, d, tt);
        else if (total > 0)
            tui_model_set_status(t->m, now(), "%s: %d%% (%s of %s)", cmd->label, (int)(100.0 * done / total), d, tt);
        else
            tui_model_set_status(t->m, now(), "%s: %s so far", cmd->label, d);
        schedule_redraw(t);
        return;
    }
    gboolean ok = ddm_json_get_bool(o, "ok", FALSE);
    const char *err = ddm_json_get_string(o, "error");
    const char *message = ddm_json_get_string(o, "message");
    JsonNode *result = json_object_get_member(o, "result");
    switch (cmd->kind) {
    case CMD_COMMANDS: {
        JsonNode *cn = json_object_get_member(o, "commands");
        g_ptr_array_set_size(t->m->commands, 0);
        if (cn != NULL && JSON_NODE_HOLDS_ARRAY(cn)) {
            JsonArray *a = json_node_get_array(cn);
            for (guint i = 0; i < json_array_get_length(a); i++) {
                JsonObject *ci = as_object(json_array_get_element(a, i));
                if (ci && ddm_json_get_string(ci, "name"))
                    g_ptr_array_add(t->m->commands, g_strdup(ddm_json_get_string(ci, "name")));
            }
        }
        break;
    }
    case CMD_SELECT: {
        JsonObject *vm = as_object(json_object_get_member(o, "vm"));
        g_free(t->m->selected_target);
        t->m->selected_target = vm ? g_strdup(ddm_json_get_string(vm, "key")) : NULL;
        if (ok) /* the server's selected-VM port: 0 when it is off */
            t->m->selected_port = MAX(ddm_json_get_int(o, "port", -1), -1);
        if (ok && strcmp(cmd->label, "select") != 0 && t->m->selected_port > 0)
            tui_model_set_status(t->m, now(), "%s: the debugger port %" G_GINT64_FORMAT " reaches it now",
                                 cmd->label, t->m->selected_port);
        else if (ok && strcmp(cmd->label, "select") != 0)
            tui_model_set_status(t->m, now(), "%s: selected (the server's selected-VM port is off)", cmd->label);
        else if (!ok)
            tui_model_set_status(t->m, now(), "%s (%s)", err ? err : "failed", cmd->label);
        break;
    }
    case CMD_STACK:
        if (ok && result != NULL && JSON_NODE_HOLDS_OBJECT(result)) {
            tui_model_set_popup(t->m, result, now());
            g_clear_pointer(&t->m->status, g_free); /* no "running..." under the stack */
        } else
            tui_model_set_status(t->m, now(), "%s (%s)", err ? err : "no stack", cmd->label);
        break;
    case CMD_HPROF: {
        const char *path = NULL;
        JsonObject *r = as_object(result);
        JsonNode *fields = r ? json_object_get_member(r, "fields") : NULL;
        for (guint i = 0; fields && JSON_NODE_HOLDS_ARRAY(fields) && i < json_array_get_length(json_node_get_array(fields)); i++) {
            JsonObject *f = as_object(json_array_get_element(json_node_get_array(fields), i));
            if (f && g_strcmp0(ddm_json_get_string(f, "key"), "path") == 0)
                path = ddm_json_get_string(f, "value");
        }
        if (ok && message != NULL) /* the plugin's own sentence ("... written to PATH", or on the device) */
            tui_model_set_status(t->m, now(), "%s", message);
        else if (ok)
            tui_model_set_status(t->m, now(), "%s: wrote %s", cmd->label, path ? path : "the dump");
        else
            tui_model_set_status(t->m, now(), "%s (%s)", err ? err : "failed", cmd->label);
        break;
    }
    case CMD_TRACE:
        if (!ok && !cmd->tracing && err != NULL && strstr(err, "cannot sample") != NULL) {
            /* a VM without sampling: a method trace instead */
            g_autofree char *label = g_strdup(cmd->label);
            g_autofree char *vm = g_strdup(cmd->vm), *file = g_strdup(cmd->file);
            cmd_done(c); /* frees cmd: argv from the copies */
            const char *argv[] = {"trace", vm, file, "--tracing", NULL};
            start_trace(t, label, vm, file, TRUE, argv);
            schedule_redraw(t);
            return;
        }
        g_clear_pointer(&t->m->trace_vm, g_free);
        if (ok)
            tui_model_set_status(t->m, now(), "%s", message ? message : "trace written");
        else
            tui_model_set_status(t->m, now(), "%s (%s)", err ? err : "failed", cmd->label);
        break;
    default:
        if (ok)
            tui_model_set_status(t->m, now(), "%s: %s", cmd->label, message ? message : "done");
        else /* the error first: a long app name does not cut it off */
            tui_model_set_status(t->m, now(), "%s (%s)", err ? err : "failed", cmd->label);
    }
    cmd_done(c);
    schedule_redraw(t);
}

static void on_cmd_closed(TuiConn *c, const char *why, gpointer ud)
{
    Tui *t = ud;
    Cmd *cmd = tui_conn_get_data(c);
    if (cmd->kind != CMD_COMMANDS)
        tui_model_set_status(t->m, now(), "%s (%s)", why, cmd->label);
    if (cmd->kind == CMD_TRACE)
        g_clear_pointer(&t->m->trace_vm, g_free);
    cmd_done(c);
    schedule_redraw(t);
}

static Cmd *run_request(Tui *t, CmdKind kind, const char *label, DdmCtlRequest *req)
{
    g_autoptr(GError) error = NULL;
    TuiConn *c = tui_conn_new(t->socket, req, on_cmd_message, on_cmd_closed, t, &error);
    if (c == NULL) {
        tui_model_set_status(t->m, now(), "%s (%s)", error->message, label);
        return NULL;
    }
    Cmd *cmd = g_new0(Cmd, 1);
    cmd->t = t;
    cmd->kind = kind;
    cmd->label = g_strdup(label);
    tui_conn_set_data(c, cmd, cmd_free);
    g_ptr_array_add(t->cmds, c);
    if (kind != CMD_COMMANDS && kind != CMD_SELECT)
        tui_model_set_status(t->m, now(), "%s: running...", label);
    return cmd;
}

static Cmd *run_command(Tui *t, CmdKind kind, const char *label, const char *const *argv)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMAND;
    req.argv = (char **)argv;
    g_autofree char *cwd = g_get_current_dir();
    req.cwd = strlen(cwd) <= DDM_CTL_MAX_STRING ? cwd : NULL;
    return run_request(t, kind, label, &req);
}

/* `t`: a trace of @vm into @file (relative: the UI's directory), sampling
 * first (--tracing when @tracing, after a VM said it cannot sample), for
 * the profile plugin's default time; m->trace_vm while it runs. */
static void start_trace(Tui *t, const char *label, const char *vm, const char *file, gboolean tracing,
                        const char *const *argv)
{
    Cmd *cmd = run_command(t, CMD_TRACE, label, argv);
    if (cmd == NULL) {
        /* none runs (the fallback's first try had set it): t may start one */
        g_clear_pointer(&t->m->trace_vm, g_free);
        return;
    }
    cmd->vm = g_strdup(vm);
    cmd->file = g_strdup(file);
    cmd->tracing = tracing;
    g_free(t->m->trace_vm);
    t->m->trace_vm = g_strdup(label + strlen("trace "));
    tui_model_set_status(t->m, now(), "%s: %s into %s...", label, tracing ? "tracing" : "sampling", file);
}

/* What the server knows once per connection: its commands, the selection. */
static void ask_once(Tui *t)
{
    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_COMMANDS;
    run_request(t, CMD_COMMANDS, "commands", &req);
    DdmCtlRequest sel = {0};
    sel.op = DDM_CTL_OP_SELECT;
    run_request(t, CMD_SELECT, "select", &sel);
}

static const TuiVm *find_vm(Tui *t, const char *key)
{
    for (guint i = 0; i < t->m->vms->len; i++) {
        const TuiVm *vm = g_ptr_array_index(t->m->vms, i);
        if (strcmp(vm->key, key) == 0)
            return vm;
    }
    return NULL;
}

static const char *vm_label(Tui *t, const char *key)
{
    for (guint i = 0; i < t->m->vms->len; i++) {
        const TuiVm *vm = g_ptr_array_index(t->m->vms, i);
        if (strcmp(vm->key, key) == 0 && vm->app != NULL)
            return vm->app;
    }
    return key;
}

static void act(Tui *t, TuiAction a)
{
    TuiModel *m = t->m;
    const char *vm = m->action_vm;
    switch (a) {
    case TUI_ACT_NONE:
        return;
    case TUI_ACT_QUIT:
        quit(t, 0);
        return;
    case TUI_ACT_OPEN_VM:
        ask_views(t);
        if (t->views_timer == 0)
            t->views_timer = g_timeout_add(VIEWS_EVERY_MS, on_views_timer, t);
        break;
    case TUI_ACT_CLOSE_VM:
        g_clear_pointer(&t->tab, tui_conn_free);
        g_clear_pointer(&t->views, tui_conn_free);
        if (t->views_timer != 0)
            g_source_remove(t->views_timer);
        t->views_timer = 0;
        break;
    case TUI_ACT_TAB:
        open_tab(t);
        break;
    case TUI_ACT_REFRESH:
        /* first: a failed reconnect below says so instead */
        tui_model_set_status(m, now(), "refreshed");
        open_list(t);
        if (m->screen == TUI_SCREEN_DETAIL) {
            ask_views(t);
            open_tab(t);
        }
        break;
    case TUI_ACT_GC: {
        const char *argv[] = {"gc", vm, NULL};
        g_autofree char *label = g_strdup_printf("gc %s", vm_label(t, vm));
        run_command(t, CMD_GC, label, argv);
        break;
    }
    case TUI_ACT_HPROF: {
        const char *argv[] = {"hprof", vm, NULL};
        g_autofree char *label = g_strdup_printf("hprof %s", vm_label(t, vm));
        run_command(t, CMD_HPROF, label, argv);
        break;
    }
    case TUI_ACT_TRACE: {
        const TuiVm *v = find_vm(t, vm);
        TuiVm bare = {.key = (char *)vm};
        g_autofree char *file = tui_trace_file_name(v != NULL ? v : &bare);
        const char *argv[] = {"trace", vm, file, "--sampling", NULL};
        g_autofree char *label = g_strdup_printf("trace %s", vm_label(t, vm));
        start_trace(t, label, vm, file, FALSE, argv);
        break;
    }
    case TUI_ACT_STACK: {
        const char *argv[] = {"stack", vm, m->action_row, NULL};
        g_autofree char *label = g_strdup_printf("stack of thread %s", m->action_row);
        run_command(t, CMD_STACK, label, argv);
        break;
    }
    case TUI_ACT_SELECT: {
        DdmCtlRequest req = {0};
        req.op = DDM_CTL_OP_SELECT;
        req.spec = (char *)vm;
        g_autofree char *label = g_strdup_printf("select %s", vm_label(t, vm));
        run_request(t, CMD_SELECT, label, &req);
        break;
    }
    case TUI_ACT_REDRAW:
        break;
    }
    schedule_redraw(t);
}

/* ------------------------------------------------- keys, signals, tick */

static int map_key(int ch)
{
    switch (ch) {
    case KEY_UP: return TUI_KEY_UP;
    case KEY_DOWN: return TUI_KEY_DOWN;
    case KEY_LEFT: return TUI_KEY_LEFT;
    case KEY_RIGHT: return TUI_KEY_RIGHT;
    case KEY_PPAGE: return TUI_KEY_PGUP;
    case KEY_NPAGE: return TUI_KEY_PGDN;
    case KEY_HOME: return TUI_KEY_HOME;
    case KEY_END: return TUI_KEY_END;
    case KEY_ENTER: case '\n': case '\r': return TUI_KEY_ENTER;
    case 27: return TUI_KEY_ESC;
    case KEY_BACKSPACE: case 127: case 8: return TUI_KEY_BACKSPACE;
    case '\t': return TUI_KEY_TAB;
    case KEY_BTAB: return TUI_KEY_BTAB;
    default: return ch;
    }
}

/* Keys taken per wakeup of the keyboard source at most: the loop must give
 * the main loop (signals, the server's messages) a turn whatever getch()
 * returns; keys left over wake it again at once. */
#define KEYS_PER_WAKEUP 64

/* A resize is handled in one place: here, on SIGWINCH (GLib's handler
 * replaces ncurses' own, see ddm_tui_run), once per new size. resizeterm()
 * queues a KEY_RESIZE for the application; on_stdin only redraws for it.
 * resizeterm() called again when getch() returned that KEY_RESIZE (as
 * on_stdin once did) queues yet another (ncurses 6.4, even for the same
 * size): getch() returned KEY_RESIZE for ever, the UI took no key, and q
 * and Ctrl-C (a GLib source, which needs the loop) no longer worked. */
static void resize(Tui *t)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
        is_term_resized(ws.ws_row, ws.ws_col))
        resizeterm(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE); /* repaint all: no garbage from the old size */
    tui_draw(t->m, now());
}

/* ESC came (ncurses gives it alone when, after its ESCDELAY, what followed
 * is no key terminfo names): the rest of the sequence is read with it, so
 * that Alt+x or an unknown function key is one key (ignored, or Home/End
 * in another spelling), not a lone ESC that quits and then letters taken
 * as commands. A lone ESC is ESC. */
static int read_escape(Tui *t)
{
    char seq[16];
    gsize len = 0;
    (void)t;
    for (;;) {
        int ch = getch();
        if (ch == ERR)
            break;
        if (ch > 0xff || (len == 0 && ch == 27)) { /* a key of its own: for the next round */
            ungetch(ch);
            break;
        }
        seq[len++] = (char)ch;
        /* full: an over-long sequence is one unknown key (the bytes after
         * it are read as keys), not a wait that swallows what is typed */
        if (len == sizeof seq || !tui_escape_incomplete(seq, len))
            break;
    }
    return tui_key_from_escape(seq, len);
}

static gboolean on_stdin(gint fd, GIOCondition cond, gpointer data)
{
    Tui *t = data;
    if (cond & (G_IO_HUP | G_IO_ERR)) {
        quit(t, 0);
        return G_SOURCE_REMOVE;
    }
    for (int n = 0; n < KEYS_PER_WAKEUP; n++) {
        int ch = getch();
        if (ch == ERR)
            break;
        if (ch == KEY_RESIZE) {
            /* the size is already taken (on_winch): show it, and let the
             * main loop run before reading on */
            clearok(curscr, TRUE);
            tui_draw(t->m, now());
            break;
        }
        int key = map_key(ch);
        if (key == TUI_KEY_ESC)
            key = read_escape(t);
        act(t, tui_model_key(t->m, key, now()));
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_quit_signal(gpointer data)
{
    quit(data, 0);
    return G_SOURCE_CONTINUE;
}

static gboolean on_winch(gpointer data)
{
    resize(data);
    return G_SOURCE_CONTINUE;
}

static gboolean on_tick(gpointer data)
{
    Tui *t = data;
    if (t->m->status != NULL && now() - t->m->status_us > 10 * G_USEC_PER_SEC &&
        t->m->connected)
        g_clear_pointer(&t->m->status, g_free);
    tui_draw(t->m, now()); /* highlights fade, ages count */
    return G_SOURCE_CONTINUE;
}

int ddm_tui_run(const char *socket_path)
{
    if (!ddm_tui_available())
        return -1;
    setlocale(LC_ALL, "");
    /* ncurses drops what a non-blocking terminal does not take at once:
     * the terminal is ours while the UI runs, so writes wait for it */
    int fl = fcntl(STDOUT_FILENO, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        (void)fcntl(STDOUT_FILENO, F_SETFL, fl & ~O_NONBLOCK);
    SCREEN *screen = newterm(NULL, stdout, stdin);
    if (screen == NULL)
        return -1;
    set_term(screen);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    tui_draw_init();

    Tui t = {0};
    t.socket = g_strdup(socket_path);
    t.m = tui_model_new();
    t.loop = g_main_loop_new(NULL, FALSE);
    t.cmds = g_ptr_array_new_with_free_func((GDestroyNotify)tui_conn_free);
    guint sources[5];
    sources[0] = g_unix_fd_add(STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, &t);
    /* after newterm: GLib's handlers replace ncurses' own */
    sources[1] = g_unix_signal_add(SIGINT, on_quit_signal, &t);
    sources[2] = g_unix_signal_add(SIGTERM, on_quit_signal, &t);
    sources[3] = g_unix_signal_add(SIGHUP, on_quit_signal, &t);
    sources[4] = g_unix_signal_add(SIGWINCH, on_winch, &t);
    t.tick = g_timeout_add(TICK_MS, on_tick, &t);
    open_list(&t);
    if (t.list != NULL)
        ask_once(&t);
    tui_draw(t.m, now());

    g_main_loop_run(t.loop);

    endwin();
    fflush(stdout);
    for (gsize i = 0; i < G_N_ELEMENTS(sources); i++) {
        GSource *s = g_main_context_find_source_by_id(NULL, sources[i]);
        if (s != NULL && !g_source_is_destroyed(s))
            g_source_remove(sources[i]);
    }
    guint *timers[] = {&t.tick, &t.reconnect, &t.redraw, &t.views_timer, &t.list_answer};
    for (gsize i = 0; i < G_N_ELEMENTS(timers); i++)
        if (*timers[i] != 0)
            g_source_remove(*timers[i]);
    tui_conn_free(t.list);
    tui_conn_free(t.tab);
    tui_conn_free(t.views);
    g_ptr_array_unref(t.cmds);
    tui_model_free(t.m);
    g_main_loop_unref(t.loop);
    g_free(t.socket);
    delscreen(screen);
    return t.status;
}
