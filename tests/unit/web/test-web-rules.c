/* SPDX-License-Identifier: Apache-2.0
 *
 * The dashboard's request rules (web/auth.c) and the listener address
 * syntax (core/config/listen_addr.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/config/listen_addr.h"
#include "web/auth.h"
#include "web/paths.h"

static void test_token(void **state)
{
    (void)state;
    g_autoptr(GError) error = NULL;
    g_autofree char *a = ddm_web_token_new(&error);
    g_autofree char *b = ddm_web_token_new(&error);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(strlen(a), 2 * DDM_WEB_TOKEN_BYTES);
    for (const char *p = a; *p; p++)
        assert_true(g_ascii_isxdigit(*p) && !g_ascii_isupper(*p));
    assert_string_not_equal(a, b);
    assert_true(ddm_web_token_equal(a, a));
    g_autofree char *c = g_strdup(a);
    c[strlen(c) - 1] = c[strlen(c) - 1] == '0' ? '1' : '0';
    assert_false(ddm_web_token_equal(a, c));
    c[5] = '\0'; /* a prefix */
    assert_false(ddm_web_token_equal(a, c));
    assert_false(ddm_web_token_equal(a, ""));
    assert_false(ddm_web_token_equal(a, NULL));
    assert_false(ddm_web_token_equal(NULL, a));
    g_autofree char *longer = g_strconcat(a, "0", NULL);
    assert_false(ddm_web_token_equal(a, longer));
}

static void test_cookie(void **state)
{
    (void)state;
    g_autofree char *name = ddm_web_cookie_name(8585);
    assert_string_equal(name, "ddmon_token_8585");
    g_autofree char *v1 = ddm_web_cookie_get("a=1; ddmon_token_8585=abc; b=2", name);
    assert_string_equal(v1, "abc");
    g_autofree char *v2 = ddm_web_cookie_get("ddmon_token_8585=\"q\"", name);
    assert_string_equal(v2, "q");
    /* Another port's cookie, a longer name, or none at all. */
    assert_null(ddm_web_cookie_get("ddmon_token_8586=abc", name));
    assert_null(ddm_web_cookie_get("xddmon_token_8585=abc", name));
    assert_null(ddm_web_cookie_get("ddmon_token_85850=abc", name));
    assert_null(ddm_web_cookie_get("", name));
    assert_null(ddm_web_cookie_get(NULL, name));
    g_autofree char *empty = ddm_web_cookie_get("ddmon_token_8585=", name);
    assert_null(empty); /* no value is no token */
}

static void test_bearer(void **state)
{
    (void)state;
    g_autofree char *t = ddm_web_bearer_token("Bearer abc");
    assert_string_equal(t, "abc");
    g_autofree char *t2 = ddm_web_bearer_token("bearer   xyz  ");
    assert_string_equal(t2, "xyz");
    assert_null(ddm_web_bearer_token("Basic abc"));
    assert_null(ddm_web_bearer_token("Bearer "));
    assert_null(ddm_web_bearer_token("Bearerabc"));
    assert_null(ddm_web_bearer_token(NULL));
}

static void test_host(void **state)
{
    (void)state;
    /* Loopback: IP literals and localhost names with the right port. */
    assert_true(ddm_web_host_allowed("127.0.0.1:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("localhost:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("LOCALHOST:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("app.localhost:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("[::1]:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("localhost.:8585", 8585, TRUE));
    assert_true(ddm_web_host_allowed("127.0.0.1", 80, TRUE));
    /* DNS rebinding: the attacker's name, with our port. */
    assert_false(ddm_web_host_allowed("evil.example:8585", 8585, TRUE));
    assert_false(ddm_web_host_allowed("localhost.evil.example:8585", 8585, TRUE));
    assert_false(ddm_web_host_allowed("127.0.0.1.nip.io:8585", 8585, TRUE));
    /* Wrong or missing port, malformed. */
    assert_false(ddm_web_host_allowed("127.0.0.1:8586", 8585, TRUE));
    assert_false(ddm_web_host_allowed("127.0.0.1", 8585, TRUE));
    assert_false(ddm_web_host_allowed("127.0.0.1:", 8585, TRUE));
    assert_false(ddm_web_host_allowed("127.0.0.1:85x85", 8585, TRUE));
    assert_false(ddm_web_host_allowed("127.0.0.1:999999", 8585, TRUE));
    assert_false(ddm_web_host_allowed("[::1:8585", 8585, TRUE));
    assert_false(ddm_web_host_allowed(":8585", 8585, TRUE));
    assert_false(ddm_web_host_allowed("", 8585, TRUE));
    assert_false(ddm_web_host_allowed(NULL, 8585, TRUE));
    /* This host's name only when listening off loopback. */
    g_autofree char *self = g_strdup_printf("%s:8585", g_get_host_name());
    if (!g_hostname_is_ip_address(g_get_host_name()) && strcmp(g_get_host_name(), "localhost") != 0) {
        assert_false(ddm_web_host_allowed(self, 8585, TRUE));
        assert_true(ddm_web_host_allowed(self, 8585, FALSE));
    }
    assert_false(ddm_web_host_allowed("evil.example:8585", 8585, FALSE));
}

/* A read-only listener off loopback: any well-formed Host, no page script. */
static void test_host_wellformed_and_page_scripts(void **state)
{
    (void)state;
    assert_true(ddm_web_host_wellformed("vm.lab.example:9585"));
    assert_true(ddm_web_host_wellformed("vm.lab.example:19585")); /* a port forward */
    assert_true(ddm_web_host_wellformed("vm.lab.example"));
    assert_true(ddm_web_host_wellformed("[fd00::1]:9585"));
    assert_false(ddm_web_host_wellformed("vm.lab.example:"));
    assert_false(ddm_web_host_wellformed("vm.lab.example:9x"));
    assert_false(ddm_web_host_wellformed("a:b:c"));
    assert_false(ddm_web_host_wellformed("[::1"));
    assert_false(ddm_web_host_wellformed(""));
    assert_false(ddm_web_host_wellformed(NULL));
    assert_false(ddm_web_from_page_script(NULL, NULL));          /* Prometheus, curl */
    assert_false(ddm_web_from_page_script(NULL, "navigate"));    /* a person opens it */
    assert_false(ddm_web_from_page_script(NULL, "NAVIGATE"));
    assert_true(ddm_web_from_page_script(NULL, "cors"));         /* fetch() */
    assert_true(ddm_web_from_page_script(NULL, "same-origin"));  /* a rebound page's fetch */
    assert_true(ddm_web_from_page_script(NULL, "no-cors"));      /* <img> */
    assert_true(ddm_web_from_page_script("http://evil.example", NULL));
    assert_true(ddm_web_from_page_script("null", "navigate"));
}

/* The one host:port splitter of listener options and Host headers. */
static void test_host_port_split(void **state)
{
    (void)state;
    static const struct {
        const char *in, *host;
        gint port;
    } ok[] = {{"a.example:8585", "a.example", 8585}, {"a.example", "a.example", -1},
              {"[::1]:80", "::1", 80},               {"[::1]", "::1", -1},
              {":0", "", 0},                          {"8585", "8585", -1},
              {"h:65535", "h", 65535}};
    for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
        g_autofree char *h = NULL;
        gint p = -2;
        assert_true(ddm_host_port_split(ok[i].in, &h, &p));
        assert_string_equal(h, ok[i].host);
        assert_int_equal(p, ok[i].port);
    }
    static const char *const bad[] = {"a:b:c", "::1", "[::1", "[::1]x", "[::1]:", "h:",
                                      "h:65536", "h:123456", "h:8x", NULL};
    for (const char *const *b = bad; *b != NULL; b++) {
        char *h = NULL;
        gint p = -2;
        assert_false(ddm_host_port_split(*b, &h, &p));
        assert_null(h);
        assert_int_equal(p, -2);
    }
    char *h = NULL;
    gint p = -2;
    assert_false(ddm_host_port_split(NULL, &h, &p));
}

static void test_origin(void **state)
{
    (void)state;
    assert_true(ddm_web_origin_allowed(NULL, "127.0.0.1:8585"));
    assert_true(ddm_web_origin_allowed("http://127.0.0.1:8585", "127.0.0.1:8585"));
    assert_true(ddm_web_origin_allowed("http://LOCALHOST:8585", "localhost:8585"));
    assert_false(ddm_web_origin_allowed("http://localhost:8585", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("http://127.0.0.1:8586", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("https://127.0.0.1:8585", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("null", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("http://evil.example", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("http://127.0.0.1:8585.evil", "127.0.0.1:8585"));
    assert_false(ddm_web_origin_allowed("http://127.0.0.1:8585", NULL));
    assert_true(ddm_web_fetch_site_allowed(NULL));
    assert_true(ddm_web_fetch_site_allowed("same-origin"));
    assert_true(ddm_web_fetch_site_allowed("none"));
    assert_false(ddm_web_fetch_site_allowed("same-site"));
    assert_false(ddm_web_fetch_site_allowed("cross-site"));
}

static void test_listen_addr(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *host;
        guint port;
        gboolean loopback, wildcard;
    } good[] = {
        {"127.0.0.1:8585", "127.0.0.1", 8585, TRUE, FALSE},
        {"8585", "127.0.0.1", 8585, TRUE, FALSE},
        {":0", "127.0.0.1", 0, TRUE, FALSE},
        {"localhost:9585", "127.0.0.1", 9585, TRUE, FALSE},
        {"[::1]:8585", "::1", 8585, TRUE, FALSE},
        {"0.0.0.0:80", "0.0.0.0", 80, FALSE, TRUE},
        {"[::]:80", "::", 80, FALSE, TRUE},
        {"192.168.1.2:65535", "192.168.1.2", 65535, FALSE, FALSE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
        DdmListenAddr a = {0};
        g_autoptr(GError) error = NULL;
        assert_true(ddm_listen_addr_parse("--http", good[i].spec, &a, &error));
        assert_string_equal(a.host, good[i].host);
        assert_int_equal(a.port, good[i].port);
        assert_int_equal(a.loopback, good[i].loopback);
        assert_int_equal(a.wildcard, good[i].wildcard);
        ddm_listen_addr_clear(&a);
    }
    static const char *const bad[] = {"", "example.com:80", "127.0.0.1:65536", "127.0.0.1:",
                                      "::1:8585", "[::1]8585", "[::1", "127.0.0.1:-1",
                                      "127.0.0.1:8585x", "1.2.3:80", "127.0.0.1:123456"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        DdmListenAddr a = {0};
        g_autoptr(GError) error = NULL;
        assert_false(ddm_listen_addr_parse("--metrics", bad[i], &a, &error));
        assert_non_null(error);
        assert_non_null(strstr(error->message, "--metrics"));
        assert_null(a.host);
    }
    assert_false(ddm_listen_addr_parse("--http", NULL, &(DdmListenAddr){0}, NULL));
    g_autofree char *v4 = ddm_listen_addr_authority("127.0.0.1", 8585);
    g_autofree char *v6 = ddm_listen_addr_authority("::1", 8585);
    assert_string_equal(v4, "127.0.0.1:8585");
    assert_string_equal(v6, "[::1]:8585");
}

static void test_paths(void **state)
{
    (void)state;
    assert_true(ddm_web_path_matches("/api/vms", "/api/vms"));
    assert_true(ddm_web_path_matches("/api/vms/*", "/api/vms/127.0.0.1%3A8601"));
    assert_true(ddm_web_path_matches("/api/vms/*/views/*", "/api/vms/k/views/threads"));
    assert_false(ddm_web_path_matches("/api/vms/*/views/*", "/api/vms/k/views/threads/data"));
    assert_false(ddm_web_path_matches("/api/vms/*/views/*", "/api/vms//views/threads"));
    assert_false(ddm_web_path_matches("/api/vms/*", "/api/vms/"));
    assert_false(ddm_web_path_matches("/api/vms/*", "/api/vms"));
    assert_false(ddm_web_path_matches("/api/vms", "/api/vmsx"));
    g_auto(GStrv) s = ddm_web_path_segments("/api/vms/127.0.0.1%3A8601//views/heap.bitmap/");
    assert_non_null(s);
    assert_int_equal(g_strv_length(s), 5);
    assert_string_equal(s[2], "127.0.0.1:8601");
    assert_string_equal(s[4], "heap.bitmap");
    assert_null(ddm_web_path_segments("/api/downloads/1-x/..%2F..%2Fsecret"));
    assert_null(ddm_web_path_segments("/api/x%00y"));
    assert_null(ddm_web_path_segments("/api/%zz"));
    g_auto(GStrv) root = ddm_web_path_segments("/");
    assert_non_null(root);
    assert_int_equal(g_strv_length(root), 0);
}

/* A download's name in Content-Disposition: ASCII as is; otherwise an
 * ASCII fallback and the UTF-8 name percent-encoded (RFC 5987). */
static void test_content_disposition(void **state)
{
    (void)state;
    g_autofree char *plain = ddm_web_content_disposition("com.example-12.hprof");
    assert_string_equal(plain, "attachment; filename=\"com.example-12.hprof\"");
    g_autofree char *u = ddm_web_content_disposition("\xc3\xa9 \xc3\xbc.hprof"); /* "é ü.hprof" */
    assert_string_equal(u, "attachment; filename=\"_ _.hprof\"; "
                           "filename*=UTF-8''%C3%A9%20%C3%BC.hprof");
    g_autofree char *q = ddm_web_content_disposition("a\"b\\c\r\nd");
    assert_string_equal(q, "attachment; filename=\"a_b_c__d\"; "
                           "filename*=UTF-8''a%22b%5Cc%0D%0Ad");
    g_autofree char *bad = ddm_web_content_disposition("x\xff.bin"); /* not UTF-8 */
    assert_string_equal(bad, "attachment; filename=\"x_.bin\"");
    for (const char *p = u; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token),       cmocka_unit_test(test_cookie),
        cmocka_unit_test(test_bearer),      cmocka_unit_test(test_host),
        cmocka_unit_test(test_origin),      cmocka_unit_test(test_listen_addr),
        cmocka_unit_test(test_paths),       cmocka_unit_test(test_content_disposition),
        cmocka_unit_test(test_host_wellformed_and_page_scripts),
        cmocka_unit_test(test_host_port_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
