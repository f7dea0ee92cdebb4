/* SPDX-License-Identifier: Apache-2.0
 *
 * `watch`, the default command: on a terminal the terminal UI (the module
 * ddmon-tui.so, loaded here only: tui_module.h; when built with ncurses
 * and TERM is known), else — with --plain, --json, on a pipe, without
 * ncurses, or when the module does not load — the live view of watch.c
 * over a connection to the server.
 */
#include <build-config.h>

#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/watch.h"
#ifdef HAVE_NCURSES
#include "cli/tui_module.h"
#endif

#ifdef HAVE_NCURSES
/* The terminal UI's module, when the UI may run here: a terminal both
 * ways, no --json or --plain, a TERM that names a terminal (checked before
 * loading anything; the module then asks terminfo). NULL for the plain
 * view; a module that does not load says so in one line, on stderr (seen
 * once the live view's alternate screen is gone) and in *@note for the
 * live view to show under its headline, wrapped (g_free). */
static const DdmTuiModule *tui_for(const DdmCli *cli, char **note)
{
    const char *term = g_getenv("TERM");
    if (cli->json || cli->plain || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) ||
        term == NULL || term[0] == '\0' || strcmp(term, "dumb") == 0)
        return NULL;
    g_autoptr(GError) error = NULL;
    const DdmTuiModule *tui = ddm_cli_tui_module_load(&error);
    if (tui == NULL) {
        /* Short, the reason right after the prefix: the live view wraps
         * it under its headline, and stderr is hidden until the end. */
        *note = g_strdup_printf("terminal UI not loaded: %s", error->message);
        g_printerr("ddmon: %s\n", *note);
        return NULL;
    }
    return tui->available() ? tui : NULL;
}
#endif

int ddm_cli_cmd_watch(DdmCli *cli, char **args)
{
    (void)args;
    int status = 0;
    DdmClient *c = ddm_cli_client(cli, &status);
    if (c == NULL)
        return status;
    g_autofree char *note = NULL;
#ifdef HAVE_NCURSES
    const DdmTuiModule *tui = tui_for(cli, &note);
    if (tui != NULL) {
        /* The server answers (started if need be): the UI makes its own
         * connections, and makes them again if the server restarts. */
        ddm_client_free(c);
        g_autofree char *socket = ddm_cli_socket_path(cli);
        status = tui->run(socket);
        if (status >= 0)
            return status;
        c = ddm_cli_client(cli, &status); /* the terminal would not do: the plain view */
        if (c == NULL)
            return status;
    }
#endif
    status = ddm_watch_run(c, cli->json, note);
    ddm_client_free(c);
    return status;
}
