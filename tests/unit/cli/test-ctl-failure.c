/* SPDX-License-Identifier: Apache-2.0
 *
 * Client failures as JSON (core/wire/ctlproto.c, "client failures"): the kind
 * name of every exit status, the failure object's exact encoding, adding
 * the failure members to another object, turning a "ddmon: ..." stderr
 * line into the message, and finding --json before the option parser.
 * Table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/wire/ctlproto.h"

static char *encode(JsonNode *node)
{
    gsize len = 0;
    return ddm_ctl_encode(node, &len);
}

static void test_failure_kinds(void **state)
{
    static const struct {
        int code;
        const char *kind;
    } cases[] = {
        {DDM_EXIT_OK, "ok"},           {DDM_EXIT_FAILED, "failed"},
        {DDM_EXIT_USAGE, "usage"},     {DDM_EXIT_NOT_FOUND, "not-found"},
        {DDM_EXIT_NO_SERVER, "no-server"}, {DDM_EXIT_INTERRUPTED, "interrupted"},
        {5, "failed"},                 {-1, "failed"},
        {255, "failed"},
    };
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_string_equal(ddm_ctl_exit_kind(cases[i].code), cases[i].kind);
}

static void test_failure_object(void **state)
{
    static const struct {
        int code;
        const char *message;
        const char *want;
    } cases[] = {
        {DDM_EXIT_NOT_FOUND, "no VM matches 'foo'",
         "{\"ok\":false,\"error\":\"no VM matches 'foo'\",\"code\":3,\"kind\":\"not-found\"}\n"},
        {DDM_EXIT_NO_SERVER, "no server",
         "{\"ok\":false,\"error\":\"no server\",\"code\":4,\"kind\":\"no-server\"}\n"},
        {DDM_EXIT_USAGE, "a \"quoted\"\nline",
         "{\"ok\":false,\"error\":\"a \\\"quoted\\\"\\nline\",\"code\":2,\"kind\":\"usage\"}\n"},
        /* no message: a generic one, never an empty or missing "error" */
        {DDM_EXIT_FAILED, NULL,
         "{\"ok\":false,\"error\":\"the command failed\",\"code\":1,\"kind\":\"failed\"}\n"},
        {DDM_EXIT_FAILED, "",
         "{\"ok\":false,\"error\":\"the command failed\",\"code\":1,\"kind\":\"failed\"}\n"},
        {DDM_EXIT_INTERRUPTED, NULL,
         "{\"ok\":false,\"error\":\"interrupted\",\"code\":130,\"kind\":\"interrupted\"}\n"},
        /* a failure is never "ok": status 0 becomes 1 */
        {DDM_EXIT_OK, "x", "{\"ok\":false,\"error\":\"x\",\"code\":1,\"kind\":\"failed\"}\n"},
    };
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(JsonNode) node = ddm_ctl_failure_new(cases[i].code, cases[i].message);
        g_autofree char *line = encode(node);
        assert_string_equal(line, cases[i].want);
    }
}

static void test_failure_set_keeps_other_members(void **state)
{
    (void)state;
    /* A plugin command's answer: the failure members are replaced in
     * place, the others kept, "kind" added. */
    const char *in = "{\"ok\":true,\"status\":3,\"code\":7,\"error\":\"old\",\"result\":null}";
    g_autoptr(JsonNode) node = ddm_ctl_parse_object(in, strlen(in), NULL);
    assert_non_null(node);
    ddm_ctl_failure_set(json_node_get_object(node), DDM_EXIT_NOT_FOUND, "new");
    g_autofree char *line = encode(node);
    assert_string_equal(line, "{\"ok\":false,\"status\":3,\"code\":3,\"error\":\"new\","
                              "\"result\":null,\"kind\":\"not-found\"}\n");
}

static void test_failure_message(void **state)
{
    static const struct {
        const char *line;
        const char *want; /* NULL: not a failure line */
    } cases[] = {
        {"ddmon: no VM matches 'foo'\n", "no VM matches 'foo'"},
        {"ddmon: usage: ddmon view NAME (try 'ddmon help')\n", "usage: ddmon view NAME"},
        {"ddmon: unknown command 'x' (try 'ddmon help')", "unknown command 'x'"},
        {"ddmon: a (try 'ddmon help') b\n", "a (try 'ddmon help') b"},
        {"ddmon: the log says:\n  one\n  two\n", "the log says:\n  one\n  two"},
        {"ddmon: crlf\r\n", "crlf"},
        {"ddmon: \n", ""},
        {"ddmon: ", ""},
        {"* ddmon server not running; starting it now *\n", NULL},
        {"ddmon:no space\n", NULL},
        {"error: ddmon: x\n", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = ddm_ctl_failure_message(cases[i].line);
        if (cases[i].want == NULL)
            assert_null(got);
        else
            assert_string_equal(got, cases[i].want);
    }
}

static void test_argv_wants_json(void **state)
{
    static const char *const a0[] = {"ddmon", "--json", NULL};
    static const char *const a1[] = {"ddmon", "--wait=abc", "snapshot", "--json", NULL};
    static const char *const a2[] = {"ddmon", "--", "gc", "--json", NULL};
    static const char *const a3[] = {"ddmon", "--json", "--", "gc", NULL};
    static const char *const a4[] = {"ddmon", "--jsonx", "--json=1", "-json", "json", NULL};
    static const char *const a5[] = {"ddmon", NULL};
    static const char *const a6[] = {"--json", NULL}; /* argv[0] is the program */
    static const char *const a7[] = {NULL};
    static const struct {
        const char *const *argv;
        gboolean want;
    } cases[] = {
        {a0, TRUE}, {a1, TRUE}, {a2, FALSE}, {a3, TRUE}, {a4, FALSE},
        {a5, FALSE}, {a6, FALSE}, {a7, FALSE}, {NULL, FALSE},
    };
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_int_equal(ddm_ctl_argv_wants_json((char *const *)cases[i].argv), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_kinds),
        cmocka_unit_test(test_failure_object),
        cmocka_unit_test(test_failure_set_keeps_other_members),
        cmocka_unit_test(test_failure_message),
        cmocka_unit_test(test_argv_wants_json),
    };
    return cmocka_run_group_tests_name("ctl-failure", tests, NULL, NULL);
}
