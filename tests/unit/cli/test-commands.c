/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for the ddmon command table (cli/commands.c): its rows are
 * well formed, lookups find what main() dispatches to, and the usage text
 * made from it is the text ddmon(1) and the integration tests know.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/cli.h"

static void test_rows(void **state)
{
    (void)state;
    guint n = 0;
    const DdmCliCommand *cmds = ddm_cli_commands(&n);
    guint defaults = 0;
    assert_true(n > 1);
    for (guint i = 0; i < n; i++) {
        const DdmCliCommand *c = &cmds[i];
        assert_non_null(c->run);
        /* Only the last row has no name: it runs plugins' commands. */
        assert_int_equal(c->name == NULL, i == n - 1);
        if (c->name != NULL) {
            assert_ptr_equal(ddm_cli_command_find(c->name), c);
            for (guint k = 0; k < i; k++)
                assert_false(cmds[k].name != NULL && strcmp(cmds[k].name, c->name) == 0);
        }
        /* A listed command's usage starts with its name. */
        if (c->usage != NULL && c->name != NULL) {
            assert_true(g_str_has_prefix(c->usage, c->name));
            assert_non_null(c->summary);
        }
        assert_true(c->min_args >= 0);
        assert_true(c->max_args < 0 || c->max_args >= c->min_args);
        /* A command that takes arguments says how to call it. */
        if (c->name != NULL && c->max_args > 0)
            assert_non_null(c->bad_args);
        if (c->flags & DDM_CLI_CMD_DEFAULT) {
            defaults++;
            assert_int_equal(c->min_args, 0); /* it runs with none */
        }
    }
    assert_int_equal(defaults, 1);
    assert_string_equal(ddm_cli_command_default()->name, "watch");
    assert_ptr_equal(ddm_cli_command_plugin(), &cmds[n - 1]);
    assert_int_equal(ddm_cli_command_plugin()->server, DDM_CLI_SERVER_NEEDED);
}

static void test_lookup(void **state)
{
    (void)state;
    static const char *const own[] = {"watch", "vms", "view", "views", "plugins",
                                      "snapshot", "scan", "select", "start-server",
                                      "kill-server", "server", "help", "version"};
    for (gsize i = 0; i < G_N_ELEMENTS(own); i++)
        assert_non_null(ddm_cli_command_find(own[i]));
    assert_null(ddm_cli_command_find("gc"));
    assert_null(ddm_cli_command_find("VMS"));
    assert_null(ddm_cli_command_find(""));
    assert_null(ddm_cli_command_find(NULL));
    assert_true(ddm_cli_command_find("version")->flags & DDM_CLI_CMD_FIRST);
    assert_string_equal(ddm_cli_command_find("version")->usage, "version"); /* listed: help version */
    g_autofree char *vm = ddm_cli_commands_taking_vm();
    assert_string_equal(vm, "'view' and 'views'");
}

static void test_usage_text(void **state)
{
    (void)state;
    static const char expect[] =
        "Commands:\n"
        "  watch                  live view of the VMs (the default)\n"
        "  vms                    the VM list\n"
        "  view NAME [--vm VM]    one view (of one VM, or of every VM)\n"
        "  views [--vm VM]        the names of the views, per VM\n"
        "  plugins                the plugin list\n"
        "  snapshot [--wait MS] [--out-dir DIR] [--in-process] [--gc] [--hprof]\n"
        "                         discover, wait until views settle, print all, exit\n"
        "  scan MODES             switch discovery modes of the running server\n"
        "  select [PID|APP|none]  the VM the selected debugger port (8700) reaches\n"
        "  start-server           start a background server if none runs\n"
        "  kill-server            stop the server\n"
        "  server [--foreground] [--replace]\n"
        "                         run the server; --replace stops the running one first\n"
        "  web-url                the web dashboard's URL with its token (server --http)\n"
        "  help [COMMAND]         this text, with the commands plugins add; or one command's usage\n"
        "  version                this ddmon's version, and the running server's\n"
        "  COMMAND ARGS...        a command registered by a plugin (e.g. gc PID)\n"
        "Every command takes --json; a failure is then one JSON object too:\n"
        "{\"ok\":false,\"error\":...,\"code\":STATUS,\"kind\":...}. Exit status: 0 ok,\n"
        "1 failed, 2 usage, 3 VM or view not found, 4 no server and none could be\n"
        "started.";
    g_autofree char *text = ddm_cli_commands_help();
    assert_string_equal(text, expect);
    /* Every listed row is in the text. */
    guint n = 0;
    const DdmCliCommand *cmds = ddm_cli_commands(&n);
    for (guint i = 0; i < n; i++)
        if (cmds[i].usage != NULL)
            assert_non_null(strstr(text, cmds[i].usage));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_usage_text),
    };
    return cmocka_run_group_tests_name("cli-commands", tests, NULL, NULL);
}
