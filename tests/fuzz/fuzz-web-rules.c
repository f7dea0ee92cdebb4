/* SPDX-License-Identifier: Apache-2.0
 *
 * Fuzz target: the web dashboard's request rules (web/auth.c), which read
 * headers any local program or web page may send (Cookie, Authorization,
 * Host, Origin, Sec-Fetch-Site) and the request path (web/paths.c),
 * and the listener address syntax (core/config/listen_addr.c), which reads
 * the command line.
 *
 * Input: a selector byte, then the text (cut at its first NUL: a header
 * holds none). Invariants: a cookie or bearer token found is a non-empty
 * piece of the header; an allowed Host carries the port asked for; an
 * allowed Origin is http:// and the Host; a path's decoded segments are
 * non-empty and hold no "/"; a path matches the pattern made of its own
 * segments with any of them "*"; a parsed address is an IP literal that
 * parses again from its authority form to the same address.
 */
#include <string.h>

#include "core/config/listen_addr.h"
#include "tests/fuzz/fuzz.h"
#include "web/auth.h"
#include "web/paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzIn in = fuzz_in(data, size);
    uint8_t which = fuzz_u8(&in);
    char *text = g_strndup((const char *)in.p, in.n); /* up to the first NUL */
    switch (which % 6) {
    case 0: {
        char *v = ddm_web_cookie_get(text, "ddmon_token_8585");
        FUZZ_CHECK(v == NULL || (*v != '\0' && strchr(v, ';') == NULL && strstr(text, v) != NULL));
        g_free(v);
        break;
    }
    case 1: {
        char *t = ddm_web_bearer_token(text);
        FUZZ_CHECK(t == NULL || (*t != '\0' && *t != ' ' && strstr(text, t) != NULL));
        FUZZ_CHECK(t == NULL || ddm_web_token_equal(t, t));
        g_free(t);
        break;
    }
    case 2: {
        gboolean a = ddm_web_host_allowed(text, 8585, TRUE);
        gboolean b = ddm_web_host_allowed(text, 8585, FALSE);
        FUZZ_CHECK(!a || b); /* loopback is the stricter */
        FUZZ_CHECK(!b || strstr(text, ":8585") != NULL);
        break;
    }
    case 3: {
        gboolean ok = ddm_web_origin_allowed(text, "127.0.0.1:8585");
        FUZZ_CHECK(!ok || g_ascii_strncasecmp(text, "http://127.0.0.1:8585", 21) == 0);
        (void)ddm_web_fetch_site_allowed(text);
        break;
    }
    case 4: {
        char **seg = ddm_web_path_segments(text);
        for (char **p = seg; p != NULL && *p != NULL; p++)
            FUZZ_CHECK(**p != '\0' && strchr(*p, '/') == NULL);
        g_strfreev(seg);
        /* A raw path matches itself, and with its second segment a "*". */
        if (text[0] == '/' && strstr(text, "//") == NULL && strchr(text, '*') == NULL) {
            FUZZ_CHECK(ddm_web_path_matches(text, text));
            char **raw = g_strsplit(text, "/", -1);
            if (raw[1] != NULL && raw[1][0] != '\0' && raw[2] != NULL && raw[2][0] != '\0') {
                g_free(raw[2]);
                raw[2] = g_strdup("*");
                char *pattern = g_strjoinv("/", raw);
                FUZZ_CHECK(ddm_web_path_matches(pattern, text));
                g_free(pattern);
            }
            g_strfreev(raw);
        }
        (void)ddm_web_path_matches(text, "/api/vms/x/views/y");
        break;
    }
    default: {
        DdmListenAddr a = {0};
        if (ddm_listen_addr_parse("--http", text, &a, NULL)) {
            FUZZ_CHECK(a.host != NULL && g_hostname_is_ip_address(a.host));
            char *auth = ddm_listen_addr_authority(a.host, a.port);
            DdmListenAddr b = {0};
            FUZZ_CHECK(ddm_listen_addr_parse("--http", auth, &b, NULL));
            FUZZ_CHECK(strcmp(a.host, b.host) == 0 && a.port == b.port &&
                       a.loopback == b.loopback && a.wildcard == b.wildcard);
            ddm_listen_addr_clear(&b);
            g_free(auth);
        } else {
            FUZZ_CHECK(a.host == NULL);
        }
        ddm_listen_addr_clear(&a);
        break;
    }
    }
    g_free(text);
    return 0;
}
