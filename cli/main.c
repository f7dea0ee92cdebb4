/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon's main(): parse the options (options.c), pick the command from the
 * command table (commands.c), make the checks every command shares, run
 * it, and with --json print the failure object when it failed (output.c).
 * Exit codes: ctlproto.h (DDM_EXIT_*), documented in doc/ddmon.1.
 *
 * Precedence, as ddmon(1) has it: `version` (or --version) first, then
 * --check-plugin, then --list-plugins, then the command (watch when none
 * is given). For ddmon's own commands: an argument that looks like an
 * option is a usage error, --vm only where the table allows it, then
 * --wait's bound (every command), then the table's argument count.
 * --json counts wherever the option parser takes it, and also when the
 * option parser itself fails.
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cli/cli.h"

/* The checks every one of ddmon's own commands shares, in this order. */
static int check_command(DdmCli *cli, const DdmCliCommand *command, char **args)
{
    g_autoptr(GError) error = NULL;
    if (command->name != NULL) {
        for (char **a = args; *a != NULL; a++)
            if ((*a)[0] == '-' && (*a)[1] != '\0')
                return ddm_cli_usage_error("unknown option %s for '%s'", *a, command->name);
        if (cli->vm != NULL && !(command->flags & DDM_CLI_CMD_VM)) {
            g_autofree char *which = ddm_cli_commands_taking_vm();
            return ddm_cli_usage_error("--vm applies to %s only", which);
        }
    }
    if (cli->wait_ms != -1 && !ddm_config_check_bound("--wait", cli->wait_ms, &error))
        return ddm_cli_usage_error("%s", error->message);
    if (command->name != NULL) {
        int n = (int)g_strv_length(args);
        if (n < command->min_args || (command->max_args >= 0 && n > command->max_args))
            return command->bad_args != NULL
                       ? ddm_cli_usage_error("%s", command->bad_args)
                       : ddm_cli_usage_error("'%s' takes no arguments", command->name);
    }
    return DDM_EXIT_OK;
}

static int run(DdmCli *cli, char **args)
{
    /* args[0] is the program; args[1] the command. A "--" separator may stay. */
    char **rest = args + 1;
    if (*rest != NULL && strcmp(*rest, "--") == 0)
        rest++;
    if (*rest != NULL && (*rest)[0] == '-' && (*rest)[1] != '\0')
        return ddm_cli_usage_error("unknown option %s", *rest);
    const char *word = *rest;
    char **cmd_args = word != NULL ? rest + 1 : rest;

    const DdmCliCommand *command = cli->version ? ddm_cli_command_find("version")
                                                : ddm_cli_command_find(word);
    /* --version goes with any command line; the word version, like every
     * other command of ddmon's own, takes no arguments. */
    if (!cli->version && command != NULL && command->run == ddm_cli_cmd_version &&
        *cmd_args != NULL)
        return ddm_cli_usage_error("'%s' takes no arguments", command->name);
    /* Every command but the server takes the whole locale (numbers, dates
     * and messages for people). The server keeps only LC_CTYPE (main()):
     * its output is logs and JSON, and each other category loaded is one
     * more mapped file (eleven, 44 kB resident with C.UTF-8; doc/memory.md). */
    if (command == NULL || command->run != ddm_cli_cmd_server)
        setlocale(LC_ALL, "");
    if (command == NULL || !(command->flags & DDM_CLI_CMD_FIRST)) {
        if (cli->check_plugin != NULL)
            return ddm_cli_check_plugin(cli);
        if (cli->list_plugins)
            return ddm_cli_list_plugins(cli);
        if (word == NULL)
            command = ddm_cli_command_default();
        else if (command == NULL)
            command = ddm_cli_command_plugin();
        int status = check_command(cli, command, cmd_args);
        if (status != DDM_EXIT_OK)
            return status;
    }
    cli->command = command;
    /* A plugin's command gets its own word too. */
    return command->run(cli, command->name != NULL ? cmd_args : rest);
}

int main(int argc, char **argv)
{
    /* The charset (UTF-8 arguments, glib's conversions) from the start; the
     * rest of the locale once the command is known (run()). */
    setlocale(LC_CTYPE, "");
    signal(SIGPIPE, SIG_IGN);
#if GLIB_CHECK_VERSION(2, 68, 0)
    /* Logs go to stderr at every level: glib's default sends info and
     * debug to stdout, where they would mix with tables and --json. */
    g_log_writer_default_set_use_stderr(TRUE);
#endif

    /* Before the option parser, which may fail before it saw --json. */
    gboolean json_early = ddm_ctl_argv_wants_json(argv);
    if (json_early)
        ddm_cli_capture_failures();

    DdmCli cli = {0};
    cli.config = ddm_config_new();
    cli.server_args = g_ptr_array_new_with_free_func(g_free);
    cli.wait_ms = -1;
    cli.ctx = ddm_cli_options_new(&cli);

    int status = DDM_EXIT_OK;
    g_autoptr(GError) error = NULL;
    char **args = g_new0(char *, (gsize)argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    ddm_cli_options_bare_optional(args, &cli.bare_hint);
    if (!g_option_context_parse_strv(cli.ctx, &args, &error)) {
        cli.json = json_early;
        status = ddm_cli_usage_error("%s", error->message);
    } else if (cli.vm != NULL && !g_utf8_validate(cli.vm, -1, NULL)) {
        cli.json = json_early || cli.json;
        status = ddm_cli_usage_error("--vm: not UTF-8");
    } else {
        if (cli.json)
            ddm_cli_capture_failures();
        if (cli.out_dir != NULL) {
            char *abs = ddm_cli_absolute(cli.out_dir);
            g_free(cli.out_dir);
            cli.out_dir = abs;
        }
        status = run(&cli, args);
    }

    if (cli.json && status != DDM_EXIT_OK && !ddm_cli_failure.object_printed) {
        g_autoptr(JsonNode) fail = ddm_ctl_failure_new(status, ddm_cli_failure.message);
        fflush(stdout);
        ddm_cli_print_json(fail);
    }
    fflush(stdout);
    g_clear_pointer(&ddm_cli_failure.message, g_free);
    g_strfreev(args);
    g_option_context_free(cli.ctx);
    if (cli.config != NULL)
        ddm_config_free(cli.config);
    g_ptr_array_unref(cli.server_args);
    g_free(cli.check_plugin);
    g_free(cli.vm);
    g_free(cli.out_dir);
    g_free(cli.bare_hint);
    return status;
}
