/* SPDX-License-Identifier: Apache-2.0
 *
 * `watch`, the default command: on a terminal the terminal UI (tui/, when
 * built with ncurses and TERM is known), else — with --plain, --json, on
 * a pipe, or without ncurses — the live view of watch.c over a connection
 * to the server.
 */
#include <unistd.h>

#include "cli/cli.h"
#include "cli/watch.h"
#include "tui/tui.h"

int ddm_cli_cmd_watch(DdmCli *cli, char **args)
{
    (void)args;
    int status = 0;
    DdmClient *c = ddm_cli_client(cli, &status);
    if (c == NULL)
        return status;
    if (!cli->json && !cli->plain && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
        ddm_tui_available()) {
        /* The server answers (started if need be): the UI makes its own
         * connections, and makes them again if the server restarts. */
        ddm_client_free(c);
        g_autofree char *socket = ddm_cli_socket_path(cli);
        status = ddm_tui_run(socket);
        if (status >= 0)
            return status;
        c = ddm_cli_client(cli, &status); /* the terminal would not do: the plain view */
        if (c == NULL)
            return status;
    }
    status = ddm_watch_run(c, cli->json);
    ddm_client_free(c);
    return status;
}
