/* SPDX-License-Identifier: Apache-2.0
 *
 * Request paths: route patterns and decoded segments; a download's
 * Content-Disposition (paths.h).
 */
#include "web/paths.h"

#include <string.h>

gboolean ddm_web_path_matches(const char *pattern, const char *path)
{
    while (*pattern != '\0' && *path != '\0') {
        if (pattern[0] == '*' && (pattern[1] == '/' || pattern[1] == '\0')) {
            const char *end = strchr(path, '/');
            gsize len = end != NULL ? (gsize)(end - path) : strlen(path);
            if (len == 0)
                return FALSE;
            path += len;
            pattern++;
        } else if (*pattern++ != *path++) {
            return FALSE;
        }
    }
    return *pattern == '\0' && *path == '\0';
}

char **ddm_web_path_segments(const char *path)
{
    g_auto(GStrv) raw = g_strsplit(path != NULL ? path : "", "/", -1);
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (char **p = raw; *p != NULL; p++) {
        if (**p == '\0')
            continue;
        char *seg = g_uri_unescape_string(*p, "/"); /* NULL on a bad escape, %2F or %00 */
        if (seg == NULL || *seg == '\0') {
            g_free(seg);
            g_ptr_array_free(out, TRUE);
            return NULL;
        }
        g_ptr_array_add(out, seg);
    }
    g_ptr_array_set_free_func(out, NULL);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

char *ddm_web_content_disposition(const char *name)
{
    gboolean utf8 = g_utf8_validate(name, -1, NULL);
    GString *ascii = g_string_new(NULL);
    for (const char *p = name; *p != '\0';) {
        unsigned char c = (unsigned char)*p;
        g_string_append_c(ascii, c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '_');
        p = utf8 ? g_utf8_next_char(p) : p + 1;
    }
    GString *out = g_string_new("attachment; filename=\"");
    g_string_append(out, ascii->str);
    g_string_append_c(out, '"');
    if (utf8 && strcmp(ascii->str, name) != 0) {
        /* RFC 5987 attr-char: ALPHA DIGIT "!#$&+-.^_`|~"; the rest %XX */
        static const char attr[] = "!#$&+-.^_`|~";
        g_string_append(out, "; filename*=UTF-8''");
        for (const char *p = name; *p != '\0'; p++) {
            unsigned char c = (unsigned char)*p;
            if (g_ascii_isalnum((char)c) || (c != '\0' && strchr(attr, c) != NULL))
                g_string_append_c(out, (char)c);
            else
                g_string_append_printf(out, "%%%02X", c);
        }
    }
    g_string_free(ascii, TRUE);
    return g_string_free(out, FALSE);
}
