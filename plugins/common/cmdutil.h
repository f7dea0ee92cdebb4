/* SPDX-License-Identifier: Apache-2.0
 *
 * Small helpers the plugins' commands share: whether a VM's FEAT lists a
 * feature, a name made safe for a file, a path taken relative to the
 * client's directory. SDK headers only.
 */
#ifndef DDM_PLUGINS_COMMON_CMDUTIL_H
#define DDM_PLUGINS_COMMON_CMDUTIL_H

#include <stddef.h>

#include <ddmon/plugin.h>

/* 1 if @info's FEAT list names @feature (a VM without FEAT lists none). */
int plugin_has_feature(const ddm_vm_info *info, const char *feature);

/* @s (NULL: "") with anything but [A-Za-z0-9._-] and the characters of
 * @extra (NULL: none) replaced by '_', cut to fit @out (@n >= 2); never
 * empty, "." or "..": @fallback then. */
void plugin_safe_file_name(const char *s, const char *extra, const char *fallback, char *out,
                           size_t n);

/* @path as the client means it: absolute as is, else under the client's
 * directory (host.cmd_cwd; as is if unknown). 0, or -ENAMETOOLONG if it
 * does not fit @out or is longer than @max bytes. */
int plugin_client_path(const ddm_host *h, ddm_cmd *cmd, const char *path, char *out, size_t n,
                       size_t max);

#endif
