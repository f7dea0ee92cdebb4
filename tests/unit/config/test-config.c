/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/config.c: every default, and each option parser with
 * good and bad input (table-driven). A failed parse must leave the config
 * as it was and say which part was wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "core/config/config.h"

static void test_config_defaults(void **state)
{
    DdmConfig *c = ddm_config_new();
    const DdmPortRange *r;

    assert_true(c->scan_local);
    assert_true(c->scan_adb);
    assert_string_equal(c->scan_host, "127.0.0.1");
    assert_int_equal(c->scan_ranges->len, 1);
    r = &g_array_index(c->scan_ranges, DdmPortRange, 0);
    assert_int_equal(r->first, 8000);
    assert_int_equal(r->last, 8040);
    assert_int_equal(c->scan_interval_ms, 2000);
    assert_non_null(c->connect);
    assert_int_equal(c->connect->len, 0);
    assert_null(c->adb_path);
    assert_true(c->adb_start);
    assert_int_equal(c->connect_timeout_ms, 3000);
    assert_int_equal(c->handshake_timeout_ms, 5000);
    assert_int_equal(c->request_timeout_ms, 10000);
    assert_int_equal(c->max_pending, 1024);
    assert_int_equal(c->max_packet, 256u * 1024 * 1024);
    assert_int_equal(c->max_inflate, 64u * 1024 * 1024);
    assert_int_equal(c->max_write_queue, 512u * 1024 * 1024);
    assert_string_equal(c->listen_host, "127.0.0.1");
    assert_int_equal(c->debug_port_base, 8600);
    assert_int_equal(c->selected_port, 8700);
    assert_null(c->select);
    assert_non_null(c->plugin_dirs);
    assert_int_equal(c->plugin_dirs->len, 0);
    assert_true(c->use_env_plugin_path);
    assert_string_equal(c->installed_plugin_dir, DDM_PLUGINDIR);
    assert_int_equal(c->plugins_only->len, 0);
    assert_int_equal(c->plugins_disabled->len, 0);
    assert_null(c->chunks);
    assert_non_null(c->plugin_opts);
    assert_int_equal(g_hash_table_size(c->plugin_opts), 0);
    assert_null(c->socket_path);
    ddm_config_free(c);
    ddm_config_free(NULL);
}

typedef struct RangeCase {
    const char *spec;
    gboolean ok;
    guint n;                 /* ranges expected when ok */
    DdmPortRange r[3];
    const char *err_part;    /* substring the error must contain */
} RangeCase;

static const RangeCase range_cases[] = {
    {"8000-8040", TRUE, 1, {{8000, 8040}}, NULL},
    {"8000-8040,9000", TRUE, 2, {{8000, 8040}, {9000, 9000}}, NULL},
    {"1", TRUE, 1, {{1, 1}}, NULL},
    {"65535", TRUE, 1, {{65535, 65535}}, NULL},
    {"1-65535", TRUE, 1, {{1, 65535}}, NULL},
    {" 8000 - 8001 , 9000", TRUE, 2, {{8000, 8001}, {9000, 9000}}, NULL},
    {"5-5", TRUE, 1, {{5, 5}}, NULL},
    {"", FALSE, 0, {{0, 0}}, "empty"},
    {"0", FALSE, 0, {{0, 0}}, "\"0\""},
    {"65536", FALSE, 0, {{0, 0}}, "65536"},
    {"99999999999999999999", FALSE, 0, {{0, 0}}, "9999"},
    {"8040-8000", FALSE, 0, {{0, 0}}, "8040-8000"},
    {"8000-", FALSE, 0, {{0, 0}}, "8000-"},
    {"-8000", FALSE, 0, {{0, 0}}, "-8000"},
    {"8000,,9000", FALSE, 0, {{0, 0}}, "\"\""},
    {"8000,abc", FALSE, 0, {{0, 0}}, "abc"},
    {"+80", FALSE, 0, {{0, 0}}, "+80"},
    {"80x", FALSE, 0, {{0, 0}}, "80x"},
    {"1-2-3", FALSE, 0, {{0, 0}}, "1-2-3"},
    {"1-65535,7", FALSE, 0, {{0, 0}}, "too many"},
    {",", FALSE, 0, {{0, 0}}, "\"\""},
};

static void test_config_scan_ranges(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(range_cases); i++) {
        const RangeCase *tc = &range_cases[i];
        DdmConfig *c = ddm_config_new();
        GError *err = NULL;
        gboolean ok = ddm_config_set_scan_ranges(c, tc->spec, &err);

        if (ok != tc->ok)
            fail_msg("case %zu \"%s\": expected %s, got %s (%s)", i, tc->spec, tc->ok ? "ok" : "error",
                     ok ? "ok" : "error", err ? err->message : "");
        if (ok) {
            assert_null(err);
            assert_int_equal(c->scan_ranges->len, tc->n);
            for (guint k = 0; k < tc->n; k++) {
                assert_int_equal(g_array_index(c->scan_ranges, DdmPortRange, k).first, tc->r[k].first);
                assert_int_equal(g_array_index(c->scan_ranges, DdmPortRange, k).last, tc->r[k].last);
            }
        } else {
            assert_non_null(err);
            assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
            if (!strstr(err->message, tc->err_part))
                fail_msg("case %zu: message \"%s\" does not name \"%s\"", i, err->message, tc->err_part);
            /* unchanged */
            assert_int_equal(c->scan_ranges->len, 1);
            assert_int_equal(g_array_index(c->scan_ranges, DdmPortRange, 0).first, 8000);
            g_error_free(err);
        }
        ddm_config_free(c);
    }
}

typedef struct ScanCase {
    const char *spec;
    gboolean ok, local, adb;
} ScanCase;

static const ScanCase scan_cases[] = {
    {"local", TRUE, TRUE, FALSE},
    {"adb", TRUE, FALSE, TRUE},
    {"local,adb", TRUE, TRUE, TRUE},
    {"adb,local", TRUE, TRUE, TRUE},
    {"none", TRUE, FALSE, FALSE},
    {"local,local", TRUE, TRUE, FALSE},
    {"", FALSE, TRUE, TRUE},
    {"usb", FALSE, TRUE, TRUE},
    {"local,usb", FALSE, TRUE, TRUE},
    {"none,adb", FALSE, TRUE, TRUE},
    {"LOCAL", FALSE, TRUE, TRUE},
    {"local,", FALSE, TRUE, TRUE},
};

static void test_config_scan(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(scan_cases); i++) {
        const ScanCase *tc = &scan_cases[i];
        DdmConfig *c = ddm_config_new();
        GError *err = NULL;
        gboolean ok = ddm_config_set_scan(c, tc->spec, &err);

        if (ok != tc->ok)
            fail_msg("case %zu \"%s\"", i, tc->spec);
        assert_int_equal(c->scan_local, tc->local);
        assert_int_equal(c->scan_adb, tc->adb);
        if (!ok) {
            assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
            g_error_free(err);
        } else {
            assert_null(err);
        }
        ddm_config_free(c);
    }
}

typedef struct ChunkCase {
    const char *spec;
    gboolean ok;
    const char *expect; /* joined with ',' ; NULL = c->chunks NULL */
    const char *err_part;
} ChunkCase;

static const ChunkCase chunk_cases[] = {
    {"THCR", TRUE, "THCR", NULL},
    {"THCR,THST", TRUE, "THCR,THST", NULL},
    {"THCR,THST,THCR", TRUE, "THCR,THST", NULL},
    {"HPSG,NHSG,HPIF,REAQ", TRUE, "HPSG,NHSG,HPIF,REAQ", NULL},
    {"a b!", TRUE, "a b!", NULL},
    {"all", TRUE, NULL, NULL},
    {"", FALSE, NULL, "empty"},
    {"THC", FALSE, NULL, "THC"},
    {"THCRX", FALSE, NULL, "THCRX"},
    {"THCR,,THST", FALSE, NULL, "\"\""},
    {"THCR,TH\tR", FALSE, NULL, "TH\tR"},
    {"THCR,", FALSE, NULL, "\"\""},
    {"none", FALSE, NULL, "none"},
    {"TH\xc3\xa9", FALSE, NULL, "TH"},
};

static void test_config_chunks(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(chunk_cases); i++) {
        const ChunkCase *tc = &chunk_cases[i];
        DdmConfig *c = ddm_config_new();
        GError *err = NULL;
        gboolean ok;

        /* Start from a non-default value to see failures leave it alone. */
        assert_true(ddm_config_set_chunks(c, "ZZZZ", NULL));
        ok = ddm_config_set_chunks(c, tc->spec, &err);
        if (ok != tc->ok)
            fail_msg("case %zu \"%s\": %s", i, tc->spec, err ? err->message : "accepted");
        if (ok) {
            assert_null(err);
            if (!tc->expect) {
                assert_null(c->chunks);
            } else {
                GString *joined = g_string_new(NULL);
                assert_non_null(c->chunks);
                for (guint k = 0; k < c->chunks->len; k++)
                    g_string_append_printf(joined, "%s%s", k ? "," : "",
                                           (const char *)g_ptr_array_index(c->chunks, k));
                assert_string_equal(joined->str, tc->expect);
                g_string_free(joined, TRUE);
            }
        } else {
            assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
            if (!strstr(err->message, tc->err_part))
                fail_msg("case %zu: \"%s\" does not name \"%s\"", i, err->message, tc->err_part);
            assert_non_null(c->chunks);
            assert_int_equal(c->chunks->len, 1);
            assert_string_equal(g_ptr_array_index(c->chunks, 0), "ZZZZ");
            g_error_free(err);
        }
        ddm_config_free(c);
    }
}

typedef struct OptCase {
    const char *spec;
    gboolean ok;
    const char *key, *value;
} OptCase;

static const OptCase opt_cases[] = {
    {"heap.interval=500", TRUE, "heap.interval", "500"},
    {"threads.poll_ms=", TRUE, "threads.poll_ms", ""},
    {"a.b=c=d", TRUE, "a.b", "c=d"},
    {"a.b.c=1", TRUE, "a.b.c", "1"},
    {"a.b=x y", TRUE, "a.b", "x y"},
    {"", FALSE, NULL, NULL},
    {"heap", FALSE, NULL, NULL},
    {"heap=1", FALSE, NULL, NULL},
    {".key=1", FALSE, NULL, NULL},
    {"heap.=1", FALSE, NULL, NULL},
    {"=1", FALSE, NULL, NULL},
    {"he ap.k=1", FALSE, NULL, NULL},
    {"heap.k\n=1", FALSE, NULL, NULL},
    {"heap.k=\xff", FALSE, NULL, NULL},
};

static void test_config_plugin_opts(void **state)
{
    for (size_t i = 0; i < G_N_ELEMENTS(opt_cases); i++) {
        const OptCase *tc = &opt_cases[i];
        DdmConfig *c = ddm_config_new();
        GError *err = NULL;
        gboolean ok = ddm_config_add_plugin_opt(c, tc->spec, &err);

        if (ok != tc->ok)
            fail_msg("case %zu \"%s\"", i, tc->spec);
        if (ok) {
            assert_int_equal(g_hash_table_size(c->plugin_opts), 1);
            assert_string_equal(g_hash_table_lookup(c->plugin_opts, tc->key), tc->value);
        } else {
            assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
            assert_int_equal(g_hash_table_size(c->plugin_opts), 0);
            g_error_free(err);
        }
        ddm_config_free(c);
    }
}

static void test_config_plugin_opt_replaces(void **state)
{
    DdmConfig *c = ddm_config_new();

    assert_true(ddm_config_add_plugin_opt(c, "heap.interval=500", NULL));
    assert_true(ddm_config_add_plugin_opt(c, "heap.mode=ddms", NULL));
    assert_true(ddm_config_add_plugin_opt(c, "heap.interval=750", NULL));
    assert_int_equal(g_hash_table_size(c->plugin_opts), 2);
    assert_string_equal(g_hash_table_lookup(c->plugin_opts, "heap.interval"), "750");
    assert_false(ddm_config_add_plugin_opt(c, NULL, NULL));
    ddm_config_free(c);
}

static void test_config_socket_path(void **state)
{
    char *saved = g_strdup(g_getenv("XDG_RUNTIME_DIR"));
    char *tmp = g_dir_make_tmp("ddmon-test-config-XXXXXX", NULL);
    char *fallback = g_strdup_printf("/tmp/ddmon-%u/ddmon.sock", (unsigned)getuid());
    char *expect, *p, *file;

    assert_non_null(tmp);

    /* A directory we own: used. */
    g_setenv("XDG_RUNTIME_DIR", tmp, TRUE);
    p = ddm_config_default_socket_path();
    expect = g_build_filename(tmp, "ddmon", "ddmon.sock", NULL);
    assert_string_equal(p, expect);
    g_free(p);
    g_free(expect);

    /* Unset, missing, relative, or not a directory: the /tmp fallback. */
    g_unsetenv("XDG_RUNTIME_DIR");
    p = ddm_config_default_socket_path();
    assert_string_equal(p, fallback);
    g_free(p);

    file = g_build_filename(tmp, "missing", NULL);
    g_setenv("XDG_RUNTIME_DIR", file, TRUE);
    p = ddm_config_default_socket_path();
    assert_string_equal(p, fallback);
    g_free(p);

    g_setenv("XDG_RUNTIME_DIR", "relative/dir", TRUE);
    p = ddm_config_default_socket_path();
    assert_string_equal(p, fallback);
    g_free(p);

    g_setenv("XDG_RUNTIME_DIR", "", TRUE);
    p = ddm_config_default_socket_path();
    assert_string_equal(p, fallback);
    g_free(p);

    assert_true(g_file_set_contents(file, "x", 1, NULL));
    g_setenv("XDG_RUNTIME_DIR", file, TRUE);
    p = ddm_config_default_socket_path();
    assert_string_equal(p, fallback);
    g_free(p);
    g_unlink(file);
    g_free(file);

    /* Owned by someone else (root's "/" when we are not root). */
    if (getuid() != 0) {
        g_setenv("XDG_RUNTIME_DIR", "/", TRUE);
        p = ddm_config_default_socket_path();
        assert_string_equal(p, fallback);
        g_free(p);
    }

    if (saved)
        g_setenv("XDG_RUNTIME_DIR", saved, TRUE);
    else
        g_unsetenv("XDG_RUNTIME_DIR");
    g_rmdir(tmp);
    g_free(tmp);
    g_free(saved);
    g_free(fallback);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_scan_ranges),
        cmocka_unit_test(test_config_scan),
        cmocka_unit_test(test_config_chunks),
        cmocka_unit_test(test_config_plugin_opts),
        cmocka_unit_test(test_config_plugin_opt_replaces),
        cmocka_unit_test(test_config_socket_path),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
