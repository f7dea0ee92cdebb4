/* SPDX-License-Identifier: Apache-2.0
 *
 * rssfloor: the smallest program built on the libraries ddmon must use
 * (glib, gio, json-glib) that does what any server on them does at rest:
 * GObject's type system up, a socket made, a JSON document parsed and
 * written, a main loop waiting. Its resident memory is the floor under
 * ddmon's RSS that no change to ddmon's own code can take away (mapped
 * library pages and the libraries' own start-up allocations);
 * bench/vmmem.sh runs it beside the servers it measures and prints their
 * RSS above it too.
 *
 *   rssfloor          waits in its main loop until SIGTERM or SIGINT
 *   rssfloor --once   prints its VmRSS in kB after one loop iteration
 * Exit 0, or 1 when a library call failed.
 */
#include <gio/gio.h>
#include <glib-unix.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

static gboolean on_stop(gpointer ud)
{
    g_main_loop_quit(ud);
    return G_SOURCE_REMOVE;
}

/* print_vmrss: this process's VmRSS line's figure (kB) on stdout. */
static int print_vmrss(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    int found = 0;

    if (f == NULL)
        return 1;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        long kb;
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) {
            printf("%ld\n", kb);
            found = 1;
        }
    }
    fclose(f);
    return found ? 0 : 1;
}

int main(int argc, char **argv)
{
    gboolean once = argc > 1 && strcmp(argv[1], "--once") == 0;
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    GSocket *sock;
    int rc = 0;

    if (!json_parser_load_from_data(parser, "{\"vms\":[{\"pid\":1,\"name\":\"a\"}]}", -1, &err)) {
        g_printerr("rssfloor: %s\n", err->message);
        g_clear_error(&err);
        rc = 1;
    } else {
        JsonGenerator *gen = json_generator_new();
        gchar *text;
        json_generator_set_root(gen, json_parser_get_root(parser));
        text = json_generator_to_data(gen, NULL);
        g_free(text);
        g_object_unref(gen);
    }
    sock = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &err);
    if (sock == NULL) {
        g_printerr("rssfloor: %s\n", err->message);
        g_clear_error(&err);
        rc = 1;
    }
    g_unix_signal_add(SIGTERM, on_stop, loop);
    g_unix_signal_add(SIGINT, on_stop, loop);
    if (once) {
        g_main_context_iteration(NULL, FALSE);
        if (print_vmrss() != 0)
            rc = 1;
    } else {
        g_main_loop_run(loop);
    }
    g_clear_object(&sock);
    g_object_unref(parser);
    g_main_loop_unref(loop);
    return rc;
}
