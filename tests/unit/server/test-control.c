/* SPDX-License-Identifier: Apache-2.0
 *
 * The control protocol's wire format (core/wire/ctlproto.c): line framing at
 * every split point, the line cap, request validation (table-driven, good
 * and bad requests), the nesting guard, and response encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/wire/ctlproto.h"

/* ------------------------------------------------------------- framing */

static void test_control_framer_every_split(void **state)
{
    const char stream[] = "{\"op\":\"vms\"}\n\n{\"op\":\"views\"}\r\n{\"op\":\"kill\"}\n";
    const char *want[] = {"{\"op\":\"vms\"}", "{\"op\":\"views\"}", "{\"op\":\"kill\"}"};
    gsize n = strlen(stream);
    for (gsize split = 0; split <= n; split++) {
        DdmLineFramer *f = ddm_line_framer_new(1024);
        guint got = 0;
        for (int part = 0; part < 2; part++) {
            if (part == 0)
                ddm_line_framer_push(f, stream, split);
            else
                ddm_line_framer_push(f, stream + split, n - split);
            gsize len = 0;
            gboolean overflow = TRUE;
            char *line;
            while ((line = ddm_line_framer_next(f, &len, &overflow)) != NULL) {
                assert_true(got < G_N_ELEMENTS(want));
                assert_string_equal(line, want[got]);
                assert_int_equal(len, strlen(want[got]));
                got++;
                g_free(line);
            }
            assert_false(overflow);
        }
        assert_int_equal(got, 3);
        assert_int_equal(ddm_line_framer_pending(f), 0);
        ddm_line_framer_free(f);
    }
}

static void test_control_framer_byte_by_byte(void **state)
{
    const char stream[] = "abc\ndef\nghi";
    DdmLineFramer *f = ddm_line_framer_new(16);
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    for (gsize i = 0; i < strlen(stream); i++) {
        ddm_line_framer_push(f, stream + i, 1);
        char *l;
        while ((l = ddm_line_framer_next(f, NULL, NULL)) != NULL)
            g_ptr_array_add(lines, l);
    }
    assert_int_equal(lines->len, 2);
    assert_string_equal(g_ptr_array_index(lines, 0), "abc");
    assert_string_equal(g_ptr_array_index(lines, 1), "def");
    assert_int_equal(ddm_line_framer_pending(f), 3); /* "ghi": incomplete */
    g_ptr_array_unref(lines);
    ddm_line_framer_free(f);
}

static void test_control_framer_cap(void **state)
{
    /* A line of exactly the cap passes; one byte more is refused for good. */
    const gsize cap = 64;
    char *ok = g_strnfill(cap, 'a');
    DdmLineFramer *f = ddm_line_framer_new(cap);
    ddm_line_framer_push(f, ok, cap);
    ddm_line_framer_push(f, "\n", 1);
    gboolean overflow = TRUE;
    gsize len = 0;
    char *line = ddm_line_framer_next(f, &len, &overflow);
    assert_non_null(line);
    assert_int_equal(len, cap);
    assert_false(overflow);
    g_free(line);

    ddm_line_framer_push(f, ok, cap);
    ddm_line_framer_push(f, "b", 1);
    assert_null(ddm_line_framer_next(f, &len, &overflow));
    assert_true(overflow);
    /* Once overflowed, later lines are not trusted (the stream is out of step). */
    ddm_line_framer_push(f, "\n{\"op\":\"vms\"}\n", 14);
    assert_null(ddm_line_framer_next(f, &len, &overflow));
    assert_true(overflow);
    ddm_line_framer_free(f);
    g_free(ok);
}

static void test_control_framer_huge_line_bounded_memory(void **state)
{
    /* 8 MiB without a newline, in 64 KiB reads, against a 1 MiB cap: the
     * overflow is seen and the framer never holds more than cap + one read. */
    DdmLineFramer *f = ddm_line_framer_new(DDM_CTL_MAX_REQUEST);
    char *chunk = g_strnfill(65536, 'x');
    gboolean overflow = FALSE;
    gsize max_pending = 0;
    for (int i = 0; i < 128; i++) {
        ddm_line_framer_push(f, chunk, 65536);
        max_pending = MAX(max_pending, ddm_line_framer_pending(f));
        char *l = ddm_line_framer_next(f, NULL, &overflow);
        assert_null(l);
        if (overflow)
            break;
    }
    assert_true(overflow);
    assert_true(max_pending <= DDM_CTL_MAX_REQUEST + 65536);
    g_free(chunk);
    ddm_line_framer_free(f);
}

/* ------------------------------------------------------------ requests */

typedef struct {
    const char *line;
    gboolean ok;
    DdmCtlOp op;
    const char *name, *vm, *spec, *argv0, *error_part;
    gboolean blobs;
} RequestCase;

static const RequestCase request_cases[] = {
    {"{\"op\":\"vms\"}", TRUE, DDM_CTL_OP_VMS, NULL, NULL, NULL, NULL, NULL, FALSE},
    {"{\"op\":\"version\"}", TRUE, DDM_CTL_OP_VERSION, NULL, NULL, NULL, NULL, NULL, FALSE},
    {"{\"op\":\"views\",\"vm\":\"1234\"}", TRUE, DDM_CTL_OP_VIEWS, NULL, "1234", NULL, NULL, NULL,
     FALSE},
    {"{\"op\":\"view\",\"name\":\"threads\",\"vm\":\"1234\"}", TRUE, DDM_CTL_OP_VIEW, "threads",
     "1234", NULL, NULL, NULL, FALSE},
    {"{\"op\":\"view\",\"name\":\"threads\",\"vm\":1234,\"blobs\":true}", TRUE, DDM_CTL_OP_VIEW,
     "threads", "1234", NULL, NULL, NULL, TRUE},
    {"{\"op\":\"view\",\"name\":\"heap\",\"vm\":null}", TRUE, DDM_CTL_OP_VIEW, "heap", NULL, NULL,
     NULL, NULL, FALSE},
    {"{\"op\":\"watch\",\"name\":null}", TRUE, DDM_CTL_OP_WATCH, NULL, NULL, NULL, NULL, NULL,
     FALSE},
    {"{\"op\":\"watch\",\"name\":\"vms\",\"future\":[1,2,{}]}", TRUE, DDM_CTL_OP_WATCH, "vms",
     NULL, NULL, NULL, NULL, FALSE},
    {"{\"op\":\"command\",\"argv\":[\"gc\",\"1234\"]}", TRUE, DDM_CTL_OP_COMMAND, NULL, NULL, NULL,
     "gc", NULL, FALSE},
    {"{\"op\":\"commands\"}", TRUE, DDM_CTL_OP_COMMANDS, NULL, NULL, NULL, NULL, NULL, FALSE},
    {"{\"op\":\"kill\"}", TRUE, DDM_CTL_OP_KILL, NULL, NULL, NULL, NULL, NULL, FALSE},
    {"{\"op\":\"scan\",\"spec\":\"local\"}", TRUE, DDM_CTL_OP_SCAN, NULL, NULL, "local", NULL,
     NULL, FALSE},
    {"{\"op\":\"select\",\"spec\":\"com.example\"}", TRUE, DDM_CTL_OP_SELECT, NULL, NULL,
     "com.example", NULL, NULL, FALSE},
    {"{\"op\":\"select\"}", TRUE, DDM_CTL_OP_SELECT, NULL, NULL, NULL, NULL, NULL, FALSE},
    {"  {\"op\" : \"plugins\"}  ", TRUE, DDM_CTL_OP_PLUGINS, NULL, NULL, NULL, NULL, NULL, FALSE},
    /* bad */
    {"", FALSE, 0, NULL, NULL, NULL, NULL, "JSON", FALSE},
    {"{", FALSE, 0, NULL, NULL, NULL, NULL, "not JSON", FALSE},
    {"{\"op\":\"vms\"", FALSE, 0, NULL, NULL, NULL, NULL, "not JSON", FALSE},
    {"not json at all", FALSE, 0, NULL, NULL, NULL, NULL, "not JSON", FALSE},
    {"[\"op\",\"vms\"]", FALSE, 0, NULL, NULL, NULL, NULL, "object", FALSE},
    {"\"vms\"", FALSE, 0, NULL, NULL, NULL, NULL, "object", FALSE},
    {"42", FALSE, 0, NULL, NULL, NULL, NULL, "object", FALSE},
    {"null", FALSE, 0, NULL, NULL, NULL, NULL, "object", FALSE},
    {"{}", FALSE, 0, NULL, NULL, NULL, NULL, "op", FALSE},
    {"{\"op\":7}", FALSE, 0, NULL, NULL, NULL, NULL, "op", FALSE},
    {"{\"op\":null}", FALSE, 0, NULL, NULL, NULL, NULL, "op", FALSE},
    {"{\"op\":\"frobnicate\"}", FALSE, 0, NULL, NULL, NULL, NULL, "unknown op", FALSE},
    {"{\"op\":\"view\"}", FALSE, 0, NULL, NULL, NULL, NULL, "name", FALSE},
    {"{\"op\":\"view\",\"name\":\"\"}", FALSE, 0, NULL, NULL, NULL, NULL, "name", FALSE},
    {"{\"op\":\"view\",\"name\":5}", FALSE, 0, NULL, NULL, NULL, NULL, "name", FALSE},
    {"{\"op\":\"view\",\"name\":\"x\",\"vm\":[1]}", FALSE, 0, NULL, NULL, NULL, NULL, "vm", FALSE},
    {"{\"op\":\"view\",\"name\":\"x\",\"vm\":1.5}", FALSE, 0, NULL, NULL, NULL, NULL, "vm", FALSE},
    {"{\"op\":\"view\",\"name\":\"x\",\"blobs\":\"yes\"}", FALSE, 0, NULL, NULL, NULL, NULL,
     "blobs", FALSE},
    {"{\"op\":\"command\"}", FALSE, 0, NULL, NULL, NULL, NULL, "argv", FALSE},
    {"{\"op\":\"command\",\"argv\":\"gc 1\"}", FALSE, 0, NULL, NULL, NULL, NULL, "argv", FALSE},
    {"{\"op\":\"command\",\"argv\":[]}", FALSE, 0, NULL, NULL, NULL, NULL, "argv", FALSE},
    {"{\"op\":\"command\",\"argv\":[\"gc\",1]}", FALSE, 0, NULL, NULL, NULL, NULL, "argv", FALSE},
    {"{\"op\":\"command\",\"argv\":[\"gc\",null]}", FALSE, 0, NULL, NULL, NULL, NULL, "argv",
     FALSE},
    {"{\"op\":\"command\",\"argv\":[\"\"]}", FALSE, 0, NULL, NULL, NULL, NULL, "empty", FALSE},
    {"{\"op\":\"scan\"}", FALSE, 0, NULL, NULL, NULL, NULL, "spec", FALSE},
    {"{\"op\":\"select\",\"spec\":42}", FALSE, 0, NULL, NULL, NULL, NULL, "spec", FALSE},
};

static void test_control_request_table(void **state)
{
    for (gsize i = 0; i < G_N_ELEMENTS(request_cases); i++) {
        const RequestCase *tc = &request_cases[i];
        DdmCtlRequest req;
        GError *error = NULL;
        gboolean ok = ddm_ctl_request_parse(tc->line, strlen(tc->line), &req, &error);
        if (ok != tc->ok)
            fail_msg("case %zu (%s): expected %s, got %s (%s)", i, tc->line,
                     tc->ok ? "ok" : "error", ok ? "ok" : "error",
                     error != NULL ? error->message : "-");
        if (!ok) {
            assert_non_null(error);
            assert_true(g_error_matches(error, DDM_CTL_ERROR, DDM_EXIT_USAGE));
            if (strstr(error->message, tc->error_part) == NULL)
                fail_msg("case %zu (%s): error '%s' lacks '%s'", i, tc->line, error->message,
                         tc->error_part);
            /* cleared on failure: nothing to free, nothing dangling */
            assert_null(req.name);
            assert_null(req.vm);
            assert_null(req.argv);
            g_error_free(error);
            continue;
        }
        assert_null(error);
        assert_int_equal(req.op, tc->op);
        assert_string_equal(req.name != NULL ? req.name : "(null)",
                            tc->name != NULL ? tc->name : "(null)");
        assert_string_equal(req.vm != NULL ? req.vm : "(null)", tc->vm != NULL ? tc->vm : "(null)");
        assert_string_equal(req.spec != NULL ? req.spec : "(null)",
                            tc->spec != NULL ? tc->spec : "(null)");
        if (tc->argv0 != NULL) {
            assert_non_null(req.argv);
            assert_string_equal(req.argv[0], tc->argv0);
        } else {
            assert_null(req.argv);
        }
        assert_int_equal(req.blobs, tc->blobs);
        ddm_ctl_request_clear(&req);
    }
}

static void test_control_request_limits(void **state)
{
    DdmCtlRequest req;
    GError *error = NULL;
    /* Too many arguments. */
    GString *s = g_string_new("{\"op\":\"command\",\"argv\":[\"x\"");
    for (int i = 0; i < DDM_CTL_MAX_ARGS; i++)
        g_string_append(s, ",\"a\"");
    g_string_append(s, "]}");
    assert_false(ddm_ctl_request_parse(s->str, s->len, &req, &error));
    assert_non_null(strstr(error->message, "argv"));
    g_clear_error(&error);
    g_string_free(s, TRUE);

    /* An over-long name. */
    char *big = g_strnfill(DDM_CTL_MAX_STRING + 1, 'n');
    char *line = g_strdup_printf("{\"op\":\"view\",\"name\":\"%s\"}", big);
    assert_false(ddm_ctl_request_parse(line, strlen(line), &req, &error));
    assert_non_null(strstr(error->message, "too long"));
    g_clear_error(&error);
    g_free(line);
    g_free(big);

    /* An embedded NUL. */
    const char nul[] = "{\"op\":\"vms\"}\0junk";
    assert_false(ddm_ctl_request_parse(nul, sizeof(nul) - 1, &req, &error));
    assert_non_null(strstr(error->message, "NUL"));
    g_clear_error(&error);

    /* Invalid UTF-8 is refused by the JSON parser, not passed on. */
    const char bad_utf8[] = "{\"op\":\"view\",\"name\":\"\xff\xfe\"}";
    assert_false(ddm_ctl_request_parse(bad_utf8, strlen(bad_utf8), &req, &error));
    g_clear_error(&error);
}

static void test_control_depth_guard(void **state)
{
    /* A nesting bomb is refused before the (recursive) JSON parser sees it. */
    gsize depth = 200000;
    GString *s = g_string_new("{\"op\":\"vms\",\"x\":");
    for (gsize i = 0; i < depth; i++)
        g_string_append_c(s, '[');
    for (gsize i = 0; i < depth; i++)
        g_string_append_c(s, ']');
    g_string_append_c(s, '}');
    DdmCtlRequest req;
    GError *error = NULL;
    assert_false(ddm_ctl_request_parse(s->str, s->len, &req, &error));
    assert_non_null(strstr(error->message, "nested"));
    g_clear_error(&error);
    g_string_free(s, TRUE);

    /* Brackets inside strings (with escaped quotes) do not count. */
    const char *tricky = "{\"op\":\"view\",\"name\":\"[[[[\\\"[[[[{{{{\"}";
    assert_true(ddm_ctl_json_depth_ok(tricky, strlen(tricky), 1));
    assert_true(ddm_ctl_request_parse(tricky, strlen(tricky), &req, &error));
    assert_string_equal(req.name, "[[[[\"[[[[{{{{");
    ddm_ctl_request_clear(&req);
    assert_false(ddm_ctl_json_depth_ok("[[[]]]", 6, 2));
    assert_true(ddm_ctl_json_depth_ok("[[[]]]", 6, 3));
}

/* ----------------------------------------------------------- responses */

static void test_control_request_roundtrip(void **state)
{
    char *argv[] = {(char *)"gc", (char *)"12 34", (char *)"\"q\"\n", NULL};
    DdmCtlRequest in = {DDM_CTL_OP_COMMAND, (char *)"name", (char *)"app:1", argv, NULL, TRUE};
    JsonNode *node = ddm_ctl_request_to_json(&in);
    gsize len = 0;
    char *line = ddm_ctl_encode(node, &len);
    json_node_unref(node);
    /* One line: exactly one newline, at the end. */
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1));
    DdmCtlRequest out;
    GError *error = NULL;
    assert_true(ddm_ctl_request_parse(line, len - 1, &out, &error));
    assert_int_equal(out.op, DDM_CTL_OP_COMMAND);
    assert_string_equal(out.vm, "app:1");
    assert_int_equal(g_strv_length(out.argv), 3);
    assert_string_equal(out.argv[2], "\"q\"\n");
    assert_true(out.blobs);
    ddm_ctl_request_clear(&out);
    g_free(line);
}

static void test_control_error_response(void **state)
{
    JsonNode *err = ddm_ctl_error_new(DDM_EXIT_NOT_FOUND, "no VM matches '%s'", "x\"y");
    gsize len = 0;
    char *line = ddm_ctl_encode(err, &len);
    json_node_unref(err);
    GError *error = NULL;
    JsonNode *back = ddm_ctl_parse_object(line, len, &error);
    assert_non_null(back);
    JsonObject *o = json_node_get_object(back);
    assert_false(ddm_json_get_bool(o, "ok", TRUE));
    assert_int_equal(ddm_json_get_int(o, "code", -1), DDM_EXIT_NOT_FOUND);
    assert_string_equal(ddm_json_get_string(o, "error"), "no VM matches 'x\"y'");
    /* Tolerant getters on missing or mistyped members. */
    assert_null(ddm_json_get_string(o, "code"));
    assert_int_equal(ddm_json_get_int(o, "error", 7), 7);
    assert_true(ddm_json_get_bool(o, "nope", TRUE));
    json_node_unref(back);
    g_free(line);

    JsonBuilder *b = ddm_ctl_ok_begin();
    json_builder_set_member_name(b, "n");
    json_builder_add_int_value(b, 5);
    JsonNode *ok = ddm_ctl_ok_end(b);
    assert_true(ddm_json_get_bool(json_node_get_object(ok), "ok", FALSE));
    assert_int_equal(ddm_json_get_int(json_node_get_object(ok), "n", 0), 5);
    json_node_unref(ok);
}

/* A number that is not an exact int64 (1e300, -1e300, 2^63, a fraction, or
 * anything json-glib reads as a double) is as good as a mistyped member:
 * the fallback, never an overflowing float-to-integer conversion (UB). */
static void test_control_json_int_range(void **state)
{
    (void)state;
    static const char *const bad[] = { "1e300", "-1e300", "9223372036854775808.0", "1.5e19",
                                        "-9.3e18", "2.5", "-0.5", "1e-300" };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *line = g_strdup_printf("{\"code\":%s}", bad[i]);
        GError *error = NULL;
        JsonNode *n = ddm_ctl_parse_object(line, strlen(line), &error);
        assert_non_null(n);
        assert_int_equal(ddm_json_get_int(json_node_get_object(n), "code", 42), 42);
        json_node_unref(n);
    }
    /* Integral doubles within range are taken as they are. */
    static const struct { const char *text; gint64 value; } good[] = {
        { "3.0", 3 }, { "-7e0", -7 }, { "1e18", 1000000000000000000LL },
        { "-9223372036854775808.0", G_MININT64 }, { "9223372036854775807", G_MAXINT64 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
        g_autofree char *line = g_strdup_printf("{\"code\":%s}", good[i].text);
        GError *error = NULL;
        JsonNode *n = ddm_ctl_parse_object(line, strlen(line), &error);
        assert_non_null(n);
        assert_true(ddm_json_get_int(json_node_get_object(n), "code", 42) == good[i].value);
        json_node_unref(n);
    }
    /* NaN and infinities cannot come from JSON text; built by hand. */
    static const double odd[] = { NAN, INFINITY, -INFINITY };
    for (gsize i = 0; i < G_N_ELEMENTS(odd); i++) {
        JsonObject *o = json_object_new();
        json_object_set_double_member(o, "code", odd[i]);
        assert_int_equal(ddm_json_get_int(o, "code", 42), 42);
        json_object_unref(o);
    }
}

static void test_control_op_names(void **state)
{
    for (int op = DDM_CTL_OP_VERSION; op <= DDM_CTL_OP_SELECT; op++) {
        const char *name = ddm_ctl_op_name((DdmCtlOp)op);
        assert_string_not_equal(name, "?");
        char *line = g_strdup_printf("{\"op\":\"%s\",\"name\":\"n\",\"argv\":[\"c\"],"
                                     "\"spec\":\"local\"}",
                                     name);
        DdmCtlRequest req;
        assert_true(ddm_ctl_request_parse(line, strlen(line), &req, NULL));
        assert_int_equal(req.op, op);
        ddm_ctl_request_clear(&req);
        g_free(line);
    }
}

/* ddm_ctl_encode drops json-glib's ".0" after an exponent ("1e+17.0")
 * in every number of an answer, however many come before: after the first
 * drop, each look back reads the output written so far (review rF1 4). */
static void test_control_encode_exponents(void **state)
{
    (void)state;
    static const double ds[] = {1e17, 12345678.0, 3e17, 50.0, 2e22, 1e300, 12.5, 4e-20, 7e+100};
    JsonArray *a = json_array_new();
    for (gsize i = 0; i < G_N_ELEMENTS(ds); i++)
        json_array_add_double_element(a, ds[i]);
    json_array_add_string_element(a, "9e9.0");
    json_array_add_int_element(a, 100);
    JsonNode *node = json_node_init_array(json_node_alloc(), a);
    json_array_unref(a);
    gsize len = 0;
    char *line = ddm_ctl_encode(node, &len);
    json_node_unref(node);
    assert_string_equal(line, "[1e+17,12345678.0,3e+17,50.0,2e+22,1.0000000000000001e+300,12.5,"
                              "3.9999999999999998e-20,6.9999999999999995e+100,\"9e9.0\",100]\n");
    assert_int_equal(len, strlen(line));
    g_free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_framer_every_split),
        cmocka_unit_test(test_control_framer_byte_by_byte),
        cmocka_unit_test(test_control_framer_cap),
        cmocka_unit_test(test_control_framer_huge_line_bounded_memory),
        cmocka_unit_test(test_control_request_table),
        cmocka_unit_test(test_control_request_limits),
        cmocka_unit_test(test_control_depth_guard),
        cmocka_unit_test(test_control_request_roundtrip),
        cmocka_unit_test(test_control_error_response),
        cmocka_unit_test(test_control_json_int_range),
        cmocka_unit_test(test_control_op_names),
        cmocka_unit_test(test_control_encode_exponents),
    };
    return cmocka_run_group_tests_name("control", tests, NULL, NULL);
}
