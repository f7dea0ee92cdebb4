/* SPDX-License-Identifier: Apache-2.0
 *
 * Request paths: route patterns and decoded segments (paths.h).
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
