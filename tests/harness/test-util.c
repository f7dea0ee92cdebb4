/* SPDX-License-Identifier: Apache-2.0
 *
 * Shared cmocka test helpers (test-util.h): hexdump-on-fail comparison,
 * hex text to bytes, reading fixtures from the source tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "test-util.h"

void test_util_hexdump(const char *label, const uint8_t *p, size_t len)
{
    size_t i, j;

    fprintf(stderr, "# %s (%zu bytes)\n", label, len);
    for (i = 0; i < len; i += 16) {
        fprintf(stderr, "#   %06zx ", i);
        for (j = i; j < i + 16; j++) {
            if (j < len)
                fprintf(stderr, " %02x", p[j]);
            else
                fprintf(stderr, "   ");
        }
        fprintf(stderr, "  ");
        for (j = i; j < i + 16 && j < len; j++)
            fputc(p[j] >= 0x20 && p[j] < 0x7f ? p[j] : '.', stderr);
        fputc('\n', stderr);
    }
}

void test_util_assert_bytes_equal(const uint8_t *got, size_t got_len, const uint8_t *want,
                                  size_t want_len, const char *file, int line)
{
    size_t i;

    if (got_len == want_len && (want_len == 0 || memcmp(got, want, want_len) == 0))
        return;
    for (i = 0; i < got_len && i < want_len && got[i] == want[i]; i++)
        ;
    fprintf(stderr, "# bytes differ at offset %zu (got %zu bytes, want %zu)\n", i, got_len,
            want_len);
    test_util_hexdump("got", got, got_len);
    test_util_hexdump("want", want, want_len);
    _fail(file, line);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

uint8_t *test_util_unhex(const char *hex, size_t *len)
{
    size_t n = 0, cap = strlen(hex) / 2 + 1;
    uint8_t *out = g_malloc(cap);
    int hi = -1;

    for (; *hex; hex++) {
        int v;
        if (*hex == '#') {
            while (hex[1] && hex[1] != '\n')
                hex++;
            continue;
        }
        if (strchr(" \t\r\n|:-", *hex))
            continue;
        v = hexval(*hex);
        if (v < 0) {
            fprintf(stderr, "# bad hex character '%c'\n", *hex);
            g_free(out);
            fail();
            return NULL;
        }
        if (hi < 0) {
            hi = v;
        } else {
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0) {
        fprintf(stderr, "# odd number of hex digits\n");
        g_free(out);
        fail();
        return NULL;
    }
    if (len)
        *len = n;
    return out;
}

uint8_t *test_util_read_srcfile(const char *relpath, const char *fallback_dir, size_t *len)
{
    const char *top = g_getenv("DDM_TOP_SRCDIR");
    char *path = g_build_filename(top ? top : fallback_dir, relpath, NULL);
    gchar *contents = NULL;
    gsize n = 0;
    GError *err = NULL;

    if (!g_file_get_contents(path, &contents, &n, &err)) {
        fprintf(stderr, "# cannot read %s: %s\n", path, err->message);
        g_error_free(err);
        g_free(path);
        fail();
        return NULL;
    }
    g_free(path);
    if (len)
        *len = n;
    return (uint8_t *)contents;
}
