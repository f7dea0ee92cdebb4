/* SPDX-License-Identifier: Apache-2.0
 *
 * `watch`, the default command: the live view of the VMs (watch.c) over a
 * connection to the server.
 */
#include "cli/cli.h"
#include "cli/watch.h"

int ddm_cli_cmd_watch(DdmCli *cli, char **args)
{
    (void)args;
    int status = 0;
    DdmClient *c = ddm_cli_client(cli, &status);
    if (c == NULL)
        return status;
    status = ddm_watch_run(c, cli->json);
    ddm_client_free(c);
    return status;
}
