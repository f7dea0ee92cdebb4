/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugins' shared command helpers (cmdutil.h): FEAT lookup, safe file
 * names, client-relative paths. One copy instead of one per plugin.
 */
#include "build-config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmdutil.h"

int plugin_has_feature(const ddm_vm_info *info, const char *feature)
{
    for (size_t i = 0; info->features && i < info->n_features; i++)
        if (info->features[i] && strcmp(info->features[i], feature) == 0)
            return 1;
    return 0;
}

void plugin_safe_file_name(const char *s, const char *extra, const char *fallback, char *out,
                           size_t n)
{
    size_t i = 0;
    for (const char *p = s ? s : ""; *p && i + 1 < n; p++)
        out[i++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-' ||
                    (extra && strchr(extra, *p)))
                       ? *p
                       : '_';
    out[i] = '\0';
    if (i == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        snprintf(out, n, "%s", fallback);
}

int plugin_client_path(const ddm_host *h, ddm_cmd *cmd, const char *path, char *out, size_t n,
                       size_t max)
{
    const char *cwd = h->cmd_cwd(cmd);
    int len = path[0] == '/' || !cwd ? snprintf(out, n, "%s", path)
                                     : snprintf(out, n, "%s/%s", cwd, path);
    return len < 0 || (size_t)len >= n || (size_t)len > max ? -ENAMETOOLONG : 0;
}
