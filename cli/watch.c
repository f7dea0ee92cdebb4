/* SPDX-License-Identifier: Apache-2.0
 *
 * The live view and the JSON event stream of `ddmon watch`. See watch.h.
 */
#include <build-config.h>

#include "cli/watch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cli/jsonout.h"
#include "core/views/views.h"

#define ALT_SCREEN_ON "\033[?1049h\033[?25l"
#define ALT_SCREEN_OFF "\033[?25h\033[?1049l"

typedef struct Watch {
    DdmClient *client;
    GMainLoop *loop;
    gboolean json;
    gboolean tty;
    gboolean screen_on;
    JsonNode *vms;          /* latest "vms" view */
    const char *note;       /* under the headline on a terminal, or NULL (borrowed) */
    gint64 last_draw_us;
    guint redraw_timer;
    guint n_events;
    int status;
} Watch;

static void terminal_restore(Watch *w)
{
    if (w->screen_on) {
        fputs(ALT_SCREEN_OFF, stdout);
        fflush(stdout);
        w->screen_on = FALSE;
    }
}

static void stop(Watch *w, int status)
{
    w->status = status;
    g_main_loop_quit(w->loop);
}

static void term_size(guint *cols, guint *rows)
{
    struct winsize ws;
    *cols = 80;
    *rows = 24;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        *cols = ws.ws_col;
        *rows = ws.ws_row;
    }
}

static guint count_rows(JsonNode *view)
{
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return 0;
    JsonNode *rows = json_object_get_member(json_node_get_object(view), "rows");
    return rows != NULL && JSON_NODE_HOLDS_ARRAY(rows) ? json_array_get_length(json_node_get_array(rows))
                                                      : 0;
}

/* On a narrow terminal the live view gives up these columns first, in this
 * order, before it shortens app names and headline figures. */
static const char *const droppable_columns[] = {"transport", "ddm", "device", "vm", "key", NULL};

/* A copy of table view @view without column @name. (transfer full) */
static JsonNode *without_column(JsonNode *view, const char *name)
{
    JsonObject *o = json_node_get_object(view);
    JsonNode *cols_node = json_object_get_member(o, "columns");
    JsonNode *rows_node = json_object_get_member(o, "rows");
    if (cols_node == NULL || rows_node == NULL || !JSON_NODE_HOLDS_ARRAY(cols_node) ||
        !JSON_NODE_HOLDS_ARRAY(rows_node))
        return json_node_ref(view);
    JsonArray *cols = json_node_get_array(cols_node);
    gint drop = -1;
    for (guint i = 0; i < json_array_get_length(cols) && drop < 0; i++) {
        JsonNode *c = json_array_get_element(cols, i);
        JsonNode *n = JSON_NODE_HOLDS_OBJECT(c) ? json_object_get_member(json_node_get_object(c), "name")
                                                : NULL;
        if (n != NULL && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING &&
            strcmp(json_node_get_string(n), name) == 0)
            drop = (gint)i;
    }
    if (drop < 0)
        return json_node_ref(view);
    JsonNode *copy = json_node_copy(view);
    JsonObject *co = json_node_get_object(copy);
    json_array_remove_element(json_node_get_array(json_object_get_member(co, "columns")), (guint)drop);
    JsonArray *rows = json_node_get_array(json_object_get_member(co, "rows"));
    for (guint r = 0; r < json_array_get_length(rows); r++) {
        JsonNode *row = json_array_get_element(rows, r);
        if (JSON_NODE_HOLDS_ARRAY(row) && (guint)drop < json_array_get_length(json_node_get_array(row)))
            json_array_remove_element(json_node_get_array(row), (guint)drop);
    }
    return copy;
}

static guint widest_line(const char *text)
{
    guint widest = 0, cur = 0;
    for (const char *p = text; *p; p = g_utf8_next_char(p)) {
        if (*p == '\n') {
            widest = MAX(widest, cur);
            cur = 0;
        } else {
            cur++;
        }
    }
    return MAX(widest, cur);
}

/* The VM list for a terminal @cols wide: low-value columns dropped first. */
static char *vms_text(JsonNode *vms, guint cols)
{
    DdmRenderOptions full = {0, FALSE}, fitted = {cols, FALSE};
    JsonNode *v = json_node_ref(vms);
    for (guint i = 0; cols > 0 && droppable_columns[i] != NULL; i++) {
        g_autofree char *text = ddm_view_json_to_text_full(v, &full);
        if (text == NULL || widest_line(text) <= cols)
            break;
        JsonNode *smaller = without_column(v, droppable_columns[i]);
        json_node_unref(v);
        v = smaller;
    }
    char *out = ddm_view_json_to_text_full(v, &fitted);
    json_node_unref(v);
    return out;
}

/* Terminal cells of @c: 0 for a combining mark, 2 for a wide one. */
static guint cell_width(gunichar c)
{
    if (g_unichar_iszerowidth(c))
        return 0;
    return g_unichar_iswide(c) ? 2 : 1;
}

char **ddm_watch_wrap(const char *text, guint cols, guint max_lines)
{
    GPtrArray *lines = g_ptr_array_new();
    if (text == NULL || cols == 0 || max_lines == 0) {
        g_ptr_array_add(lines, NULL);
        return (char **)g_ptr_array_free(lines, FALSE);
    }
    /* Valid UTF-8, and no control character reaches the terminal. */
    g_autofree char *valid = g_utf8_make_valid(text, -1);
    GString *clean = g_string_sized_new(strlen(valid));
    for (const char *p = valid; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        if (c < 0x20 || (c >= 0x7f && c < 0xa0))
            g_string_append_c(clean, '?');
        else
            g_string_append_unichar(clean, c);
    }
    const char *p = clean->str;
    while (*p != '\0' && lines->len < max_lines) {
        gboolean last = lines->len + 1 == max_lines;
        /* The longest run from p that fits; the last space in it. */
        const char *end = p, *space = NULL;
        guint w = 0;
        while (*end != '\0') {
            guint cw = cell_width(g_utf8_get_char(end));
            if (w + cw > cols)
                break;
            if (*end == ' ')
                space = end;
            w += cw;
            end = g_utf8_next_char(end);
        }
        if (*end == ' ')
            space = end; /* the run ends at a word's end */
        if (*end == '\0') {
            g_ptr_array_add(lines, g_strdup(p));
            p = end;
        } else if (last) {
            /* Cut where "…" still fits after it (at a character). */
            const char *cut = p;
            guint cw_sum = 0;
            while (cut < end) {
                guint cw = cell_width(g_utf8_get_char(cut));
                if (cw_sum + cw + 1 > cols)
                    break;
                cw_sum += cw;
                cut = g_utf8_next_char(cut);
            }
            g_ptr_array_add(lines, g_strdup_printf("%.*s\u2026", (int)(cut - p), p));
            p = end;
        } else if (space != NULL && space > p) {
            g_ptr_array_add(lines, g_strndup(p, (gsize)(space - p)));
            p = space + 1; /* the space the line broke at */
        } else {
            if (end == p) /* a wide character in one column: it alone */
                end = g_utf8_next_char(end);
            g_ptr_array_add(lines, g_strndup(p, (gsize)(end - p)));
            p = end;
        }
    }
    g_string_free(clean, TRUE);
    g_ptr_array_add(lines, NULL);
    return (char **)g_ptr_array_free(lines, FALSE);
}

static void draw(Watch *w)
{
    w->last_draw_us = g_get_monotonic_time();
    guint cols = 0, rows = 0;
    if (w->tty)
        term_size(&cols, &rows);
    g_autofree char *table = w->vms != NULL ? vms_text(w->vms, w->tty ? cols : 0) : NULL;
    char clock[16] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) != NULL)
        strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
    guint n = count_rows(w->vms);
    g_autofree char *head = g_strdup_printf("ddmon %s  %u VM%s  %s%s", PACKAGE_VERSION, n,
                                            n == 1 ? "" : "s", clock,
                                            w->tty ? "  (Ctrl-C to quit)" : "");
    if (!w->tty) {
        printf("%s\n%s\n", head, table != NULL ? table : "(no VM list yet)\n");
        if (fflush(stdout) != 0 || ferror(stdout))
            stop(w, 0); /* the reader went away (`| head`): done */
        return;
    }
    GString *s = g_string_new("\033[H");
    g_string_append_printf(s, "%.*s\033[K\n", (int)MIN(strlen(head), cols), head); /* ASCII */
    /* The note (why the terminal UI is not running) whole, over the lines
     * it needs, up to DDM_WATCH_NOTE_LINES; one blank line without one. */
    g_auto(GStrv) note = ddm_watch_wrap(w->note, cols, DDM_WATCH_NOTE_LINES);
    guint used = 1;
    for (guint i = 0; note[i] != NULL; i++, used++)
        g_string_append_printf(s, "%s\033[K\n", note[i]);
    if (note[0] == NULL) {
        g_string_append(s, "\033[K\n");
        used++;
    }
    if (table == NULL || n == 0) {
        g_string_append(s, n == 0 && table != NULL ? "no VMs found yet; discovery is running\033[K\n"
                                                   : "waiting for the server\033[K\n");
        used++;
    }
    if (table != NULL && n > 0) {
        g_auto(GStrv) lines = g_strsplit(table, "\n", -1);
        guint total = g_strv_length(lines);
        if (total > 0 && lines[total - 1][0] == '\0')
            total--; /* the table ends with a newline */
        /* Lines that fit (the last terminal line stays free); when some do
         * not, the last one that fits says how many VMs are not shown. */
        guint room = rows > used + 1 ? rows - used - 1 : 0;
        guint shown = total <= room ? total : (room > 0 ? room - 1 : 0);
        for (guint i = 0; i < shown; i++) {
            g_string_append(s, lines[i]); /* already cut to the width by the renderer */
            g_string_append(s, "\033[K\n");
            used++;
        }
        if (shown < total && room > 0) {
            g_autofree char *more = g_strdup_printf("... %u more not shown (a taller terminal, or `ddmon vms`)",
                                                    total - shown);
            g_string_append_printf(s, "%.*s\033[K\n", (int)MIN(strlen(more), cols), more);
            used++;
        }
    }
    g_string_append(s, "\033[J");
    fwrite(s->str, 1, s->len, stdout);
    fflush(stdout);
    g_string_free(s, TRUE);
}

static gboolean on_redraw(gpointer data)
{
    Watch *w = data;
    w->redraw_timer = 0;
    draw(w);
    return G_SOURCE_REMOVE;
}

static void schedule_draw(Watch *w)
{
    if (w->redraw_timer != 0)
        return;
    gint64 since = (g_get_monotonic_time() - w->last_draw_us) / 1000;
    guint delay = since >= DDM_WATCH_MIN_REDRAW_MS ? 0 : (guint)(DDM_WATCH_MIN_REDRAW_MS - since);
    w->redraw_timer = g_timeout_add(delay, on_redraw, w);
}

static void handle_message(Watch *w, JsonNode *msg)
{
    JsonObject *o = json_node_get_object(msg);
    const char *event = ddm_json_get_string(o, "event");
    if (event == NULL) {
        if (!ddm_json_get_bool(o, "ok", FALSE)) {
            const char *err = ddm_json_get_string(o, "error");
            terminal_restore(w);
            g_printerr("ddmon: %s\n", err != NULL ? err : "the server refused to watch");
            stop(w, (int)ddm_json_get_int(o, "code", 1));
        }
        return;
    }
    w->n_events++;
    if (w->json) {
        gsize len = 0;
        g_autoptr(JsonNode) doc = ddm_jq_event(msg);
        g_autofree char *line = ddm_ctl_encode(doc, &len);
        if (fwrite(line, 1, len, stdout) != len || fflush(stdout) != 0)
            stop(w, errno == EPIPE ? 0 : 1); /* reader gone (`| head`): done */
        return;
    }
    JsonNode *view = json_object_get_member(o, "view");
    if (view == NULL || !JSON_NODE_HOLDS_OBJECT(view))
        return;
    JsonObject *vo = json_node_get_object(view);
    if (g_strcmp0(ddm_json_get_string(vo, "name"), "vms") != 0 ||
        ddm_json_get_string(vo, "vm") != NULL)
        return;
    if (strcmp(event, "removed") == 0) {
        g_clear_pointer(&w->vms, json_node_unref);
    } else {
        g_clear_pointer(&w->vms, json_node_unref);
        w->vms = json_node_copy(view);
    }
    schedule_draw(w);
}

static gboolean on_server(gint fd, GIOCondition cond, gpointer data)
{
    Watch *w = data;
    g_autoptr(GError) error = NULL;
    gboolean alive = ddm_client_read_some(w->client, &error);
    for (;;) {
        g_autoptr(GError) perr = NULL;
        JsonNode *msg = ddm_client_next(w->client, &perr);
        if (msg == NULL) {
            if (perr != NULL) {
                terminal_restore(w);
                g_printerr("ddmon: %s\n", perr->message);
                stop(w, 1);
                return G_SOURCE_REMOVE;
            }
            break;
        }
        handle_message(w, msg);
        json_node_unref(msg);
    }
    if (!alive) {
        terminal_restore(w);
        g_printerr("ddmon: the server went away (%s)\n", error->message);
        stop(w, 1);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_quit_signal(gpointer data)
{
    stop(data, 0);
    return G_SOURCE_CONTINUE;
}

static gboolean on_winch(gpointer data)
{
    Watch *w = data;
    if (w->tty)
        schedule_draw(w);
    return G_SOURCE_CONTINUE;
}

int ddm_watch_run(DdmClient *client, gboolean json, const char *note)
{
    Watch w = {0};
    w.client = client;
    w.json = json;
    w.note = note;
    w.tty = !json && isatty(STDOUT_FILENO);
    w.loop = g_main_loop_new(NULL, FALSE);
    w.status = 0;

    DdmCtlRequest req = {0};
    req.op = DDM_CTL_OP_WATCH;
    /* The live view shows the VM list only: watch just that, so plugins do
     * not render views (heap bitmaps, thread CPU polls) nobody sees. The
     * JSON stream is for everything. */
    req.name = json ? NULL : (char *)"vms";
    g_autoptr(GError) error = NULL;
    if (!ddm_client_send(client, &req, &error)) {
        g_printerr("ddmon: %s\n", error->message);
        g_main_loop_unref(w.loop);
        return DDM_EXIT_FAILED;
    }
    guint sources[5];
    sources[0] = g_unix_fd_add(ddm_client_fd(client), G_IO_IN | G_IO_HUP | G_IO_ERR, on_server, &w);
    sources[1] = g_unix_signal_add(SIGINT, on_quit_signal, &w);
    sources[2] = g_unix_signal_add(SIGTERM, on_quit_signal, &w);
    sources[3] = g_unix_signal_add(SIGHUP, on_quit_signal, &w);
    sources[4] = g_unix_signal_add(SIGWINCH, on_winch, &w);
    if (w.tty) {
        fputs(ALT_SCREEN_ON, stdout);
        w.screen_on = TRUE;
        draw(&w);
    }
    g_main_loop_run(w.loop);
    terminal_restore(&w);
    for (gsize i = 0; i < G_N_ELEMENTS(sources); i++) {
        /* on_server may have removed itself already */
        GSource *s = g_main_context_find_source_by_id(NULL, sources[i]);
        if (s != NULL && !g_source_is_destroyed(s))
            g_source_remove(sources[i]);
    }
    if (w.redraw_timer != 0)
        g_source_remove(w.redraw_timer);
    g_clear_pointer(&w.vms, json_node_unref);
    g_main_loop_unref(w.loop);
    return w.status;
}
