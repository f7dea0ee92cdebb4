/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests for core/config.c: every default, and each option parser with
 * good and bad input (table-driven). A failed parse must leave the config
 * as it was and say which part was wrong. Every numeric option bound is
 * tried at its limit and just past it, so a wrong bound fails here.
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
    assert_int_equal(c->max_inflate, 16u * 1024 * 1024);
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

/* ------------------------------------------------------ option bounds */

typedef struct BoundCase {
    const char *option;
    const char *value;
    gboolean ok;
    guint64 expect;       /* the value set, when ok */
    const char *err_part; /* substring the error must contain */
} BoundCase;

/* Each bound from both sides: a case at the limit that must pass and one
 * just past it that must fail, so a wrong bound in the table fails here. */
static const BoundCase bound_cases[] = {
    {"--scan-interval", "100", TRUE, 100, NULL},
    {"--scan-interval", "99", FALSE, 0, "--scan-interval: at least 100 ms"},
    {"--scan-interval", "0", FALSE, 0, "at least 100 ms"},
    {"--scan-interval", "3600000", TRUE, 3600000, NULL},
    {"--scan-interval", "3600001", FALSE, 0, "--scan-interval: '3600001' is not a number from 0 to 3600000"},
    {"--scan-interval", " 2000 ", TRUE, 2000, NULL},
    {"--scan-interval", "", FALSE, 0, "is not a number"},
    {"--scan-interval", "abc", FALSE, 0, "'abc'"},
    {"--scan-interval", "-1", FALSE, 0, "'-1'"},
    {"--scan-interval", "+200", FALSE, 0, "'+200'"},
    {"--scan-interval", "1e3", FALSE, 0, "'1e3'"},
    {"--scan-interval", "1k", FALSE, 0, "'1k'"}, /* suffixes: --max-packet's and --max-stream's */
    {"--request-timeout", "1", TRUE, 1, NULL},
    {"--request-timeout", "0", FALSE, 0, "--request-timeout: must be at least 1 ms"},
    {"--request-timeout", "3600000", TRUE, 3600000, NULL},
    {"--request-timeout", "3600001", FALSE, 0, "not a number from 0 to 3600000"},
    {"--connect-timeout", "1", TRUE, 1, NULL},
    {"--connect-timeout", "15000", TRUE, 15000, NULL},
    {"--connect-timeout", "0", FALSE, 0, "--connect-timeout: must be at least 1 ms"},
    {"--connect-timeout", "3600001", FALSE, 0, "--connect-timeout: '3600001' is not a number from 0 to 3600000"},
    {"--handshake-timeout", "1", TRUE, 1, NULL},
    {"--handshake-timeout", "3600000", TRUE, 3600000, NULL},
    {"--handshake-timeout", "0", FALSE, 0, "--handshake-timeout: must be at least 1 ms"},
    {"--handshake-timeout", "5s", FALSE, 0, "'5s'"},
    {"--max-packet", "11", TRUE, 11, NULL},
    {"--max-packet", "10", FALSE, 0, "--max-packet: at least 11 bytes (a JDWP header)"},
    {"--max-packet", "0k", FALSE, 0, "at least 11 bytes"},
    {"--max-packet", "4294967295", TRUE, 4294967295u, NULL},
    {"--max-stream", "2G", TRUE, 2147483648u, NULL},
    {"--max-stream", "0", FALSE, 0, "--max-stream: at least 1 byte"},
    {"--max-buffers", "64M", TRUE, 67108864u, NULL},
    {"--max-buffers", "1K", FALSE, 0, "--max-buffers: at least 64K (one peer's first buffer)"},
    {"--max-packet", "4294967296", FALSE, 0, "not a number from 0 to 4294967295"},
    {"--max-packet", "1k", TRUE, 1024, NULL},
    {"--max-packet", "1K", TRUE, 1024, NULL},
    {"--max-packet", "10m", TRUE, 10u * 1024 * 1024, NULL},
    {"--max-packet", "256M", TRUE, 256u * 1024 * 1024, NULL},
    {"--max-packet", "3G", TRUE, (guint64)3 * 1024 * 1024 * 1024, NULL},
    {"--max-packet", "3g", TRUE, (guint64)3 * 1024 * 1024 * 1024, NULL},
    {"--max-packet", "4G", FALSE, 0, "'4G'"},
    {"--max-packet", "4194303K", TRUE, (guint64)4194303 * 1024, NULL},
    {"--max-packet", "4194304K", FALSE, 0, "'4194304K'"},
    {"--max-packet", "k", FALSE, 0, "'k'"},
    {"--max-packet", "5x", FALSE, 0, "'5x'"},
    {"--max-packet", "1kk", FALSE, 0, "'1kk'"},
    {"--debug-port-base", "0", TRUE, 0, NULL},
    {"--debug-port-base", "65535", TRUE, 65535, NULL},
    {"--debug-port-base", "65536", FALSE, 0, "--debug-port-base: '65536' is not a number from 0 to 65535"},
    {"--debug-port-base", "-1", FALSE, 0, "'-1'"},
    {"--selected-port", "0", TRUE, 0, NULL},
    {"--selected-port", "65535", TRUE, 65535, NULL},
    {"--selected-port", "65536", FALSE, 0, "--selected-port: '65536' is not a number from 0 to 65535"},
};

/* What each setter sets, read back. */
static guint64 bound_field(const DdmConfig *c, const char *option)
{
    if (strcmp(option, "--scan-interval") == 0)
        return c->scan_interval_ms;
    if (strcmp(option, "--request-timeout") == 0)
        return c->request_timeout_ms;
    if (strcmp(option, "--connect-timeout") == 0)
        return c->connect_timeout_ms;
    if (strcmp(option, "--handshake-timeout") == 0)
        return c->handshake_timeout_ms;
    if (strcmp(option, "--max-packet") == 0)
        return c->max_packet;
    if (strcmp(option, "--max-stream") == 0)
        return c->max_stream;
    if (strcmp(option, "--max-buffers") == 0)
        return c->max_buffers;
    if (strcmp(option, "--debug-port-base") == 0)
        return c->debug_port_base;
    if (strcmp(option, "--selected-port") == 0)
        return c->selected_port;
    fail_msg("no field for %s", option);
    return 0;
}

static gboolean bound_set(DdmConfig *c, const char *option, const char *value, GError **error)
{
    if (strcmp(option, "--scan-interval") == 0)
        return ddm_config_set_scan_interval(c, value, error);
    if (strcmp(option, "--request-timeout") == 0)
        return ddm_config_set_request_timeout(c, value, error);
    if (strcmp(option, "--connect-timeout") == 0)
        return ddm_config_set_connect_timeout(c, value, error);
    if (strcmp(option, "--handshake-timeout") == 0)
        return ddm_config_set_handshake_timeout(c, value, error);
    if (strcmp(option, "--max-packet") == 0)
        return ddm_config_set_max_packet(c, value, error);
    if (strcmp(option, "--max-stream") == 0)
        return ddm_config_set_max_stream(c, value, error);
    if (strcmp(option, "--max-buffers") == 0)
        return ddm_config_set_max_buffers(c, value, error);
    if (strcmp(option, "--debug-port-base") == 0)
        return ddm_config_set_debug_port_base(c, value, error);
    if (strcmp(option, "--selected-port") == 0)
        return ddm_config_set_selected_port(c, value, error);
    fail_msg("no setter for %s", option);
    return FALSE;
}

static void test_config_bounded_setters(void **state)
{
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(bound_cases); i++) {
        const BoundCase *tc = &bound_cases[i];
        DdmConfig *c = ddm_config_new();
        guint64 before = bound_field(c, tc->option);
        GError *err = NULL;
        gboolean ok = bound_set(c, tc->option, tc->value, &err);

        if (ok != tc->ok)
            fail_msg("case %zu %s=\"%s\": expected %s, got %s (%s)", i, tc->option, tc->value,
                     tc->ok ? "ok" : "error", ok ? "ok" : "error", err ? err->message : "");
        if (ok) {
            assert_null(err);
            if (bound_field(c, tc->option) != tc->expect)
                fail_msg("case %zu %s=\"%s\": set %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                         i, tc->option, tc->value, bound_field(c, tc->option), tc->expect);
        } else {
            assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
            if (!strstr(err->message, tc->err_part))
                fail_msg("case %zu: message \"%s\" does not contain \"%s\"", i, err->message,
                         tc->err_part);
            assert_true(bound_field(c, tc->option) == before); /* unchanged */
            g_error_free(err);
        }
        ddm_config_free(c);
    }
}

/* The same cases through the generic parser, and the table itself. */
static void test_config_bound_table(void **state)
{
    (void)state;
    static const struct {
        const char *option;
        guint64 min, max;
    } expect[] = {
        {"--scan-interval", 100, 3600000},   {"--request-timeout", 1, 3600000},
        {"--max-packet", 11, 4294967295u},   {"--debug-port-base", 0, 65535},
        {"--selected-port", 0, 65535},       {"--wait", 0, G_MAXINT},
        {"--max-stream", 1, 4294967295u},    {"--max-buffers", 65536, G_MAXSIZE},
        {"--connect-timeout", 1, 3600000},   {"--handshake-timeout", 1, 3600000},
    };
    guint n = 0;
    for (const DdmOptionBound *b = ddm_config_option_bounds(); b->option != NULL; b++, n++) {
        assert_true(b->min <= b->max);
        assert_true(g_str_has_prefix(b->option, "--"));
        assert_ptr_equal(ddm_config_option_bound(b->option), b);
        /* A min above 0 has a message for the values under it. */
        assert_true(b->min == 0 || b->below_min != NULL);
    }
    assert_int_equal(n, G_N_ELEMENTS(expect));
    for (size_t i = 0; i < G_N_ELEMENTS(expect); i++) {
        const DdmOptionBound *b = ddm_config_option_bound(expect[i].option);
        assert_non_null(b);
        if (b->min != expect[i].min || b->max != expect[i].max)
            fail_msg("%s: %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT
                     "..%" G_GUINT64_FORMAT, b->option, b->min, b->max, expect[i].min, expect[i].max);
        assert_int_equal(b->size_suffix, strcmp(b->option, "--max-packet") == 0 ||
                                             strcmp(b->option, "--max-stream") == 0 ||
                                             strcmp(b->option, "--max-buffers") == 0);
    }
    assert_null(ddm_config_option_bound("--scan"));
    assert_null(ddm_config_option_bound("scan-interval"));
    assert_null(ddm_config_option_bound(NULL));

    for (size_t i = 0; i < G_N_ELEMENTS(bound_cases); i++) {
        const BoundCase *tc = &bound_cases[i];
        guint64 v = 12345;
        GError *err = NULL;
        gboolean ok = ddm_config_parse_bounded(tc->option, tc->value, &v, &err);
        assert_int_equal(ok, tc->ok);
        if (ok)
            assert_true(v == tc->expect);
        else
            assert_true(v == 12345); /* untouched */
        g_clear_error(&err);
    }
}

/* --wait: an int from GOption, checked against the same table. */
static void test_config_check_bound(void **state)
{
    (void)state;
    GError *err = NULL;
    assert_true(ddm_config_check_bound("--wait", 0, &err));
    assert_true(ddm_config_check_bound("--wait", 3000, &err));
    assert_true(ddm_config_check_bound("--wait", G_MAXINT, &err));
    assert_null(err);
    assert_false(ddm_config_check_bound("--wait", -2, &err));
    assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
    assert_string_equal(err->message, "--wait must be 0 or more");
    g_clear_error(&err);
    assert_false(ddm_config_check_bound("--wait", (gint64)G_MAXINT + 1, &err));
    assert_non_null(strstr(err->message, "not a number from 0 to 2147483647"));
    g_clear_error(&err);
    assert_true(ddm_config_check_bound("--selected-port", 65535, &err));
    assert_false(ddm_config_check_bound("--selected-port", 65536, &err));
    assert_string_equal(err->message, "--selected-port: '65536' is not a number from 0 to 65535");
    g_clear_error(&err);
    assert_false(ddm_config_check_bound("--scan-interval", 99, &err));
    assert_string_equal(err->message, "--scan-interval: at least 100 ms");
    g_clear_error(&err);
}

static void test_config_connect_and_probe(void **state)
{
    (void)state;
    DdmConfig *c = ddm_config_new();
    GError *err = NULL;

    assert_true(ddm_config_add_connect(c, "10.0.0.1:8700", &err));
    assert_true(ddm_config_add_connect(c, "localhost:8000=8600", &err));
    assert_null(err);
    assert_int_equal(c->connect->len, 2);
    assert_string_equal(g_ptr_array_index(c->connect, 1), "localhost:8000=8600");
    assert_false(ddm_config_add_connect(c, "localhost", &err));
    assert_true(g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE));
    assert_string_equal(err->message, "--connect: expected HOST:PORT, got 'localhost'");
    g_clear_error(&err);
    assert_int_equal(c->connect->len, 2);

    assert_true(c->tcp_version_probe);
    assert_true(ddm_config_set_tcp_probe(c, "helo", &err));
    assert_false(c->tcp_version_probe);
    assert_false(ddm_config_set_tcp_probe(c, "Version", &err));
    assert_string_equal(err->message, "--tcp-probe: 'version' (default) or 'helo', not 'Version'");
    g_clear_error(&err);
    assert_false(c->tcp_version_probe);
    assert_true(ddm_config_set_tcp_probe(c, "version", &err));
    assert_true(c->tcp_version_probe);
    ddm_config_free(c);
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
        cmocka_unit_test(test_config_bounded_setters),
        cmocka_unit_test(test_config_bound_table),
        cmocka_unit_test(test_config_check_bound),
        cmocka_unit_test(test_config_connect_and_probe),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
