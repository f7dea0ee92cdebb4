/* SPDX-License-Identifier: Apache-2.0
 *
 * Small helpers the plugins' commands share: whether a VM's FEAT lists a
 * feature, a name made safe for a file, a path taken relative to the
 * client's directory, and the one answer for a command that needs DDM
 * given a plain JVM. SDK headers only.
 */
#ifndef DDM_PLUGINS_COMMON_CMDUTIL_H
#define DDM_PLUGINS_COMMON_CMDUTIL_H

#include <stddef.h>
#include <stdio.h>

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

/* The one message for a DDM command given a plain JVM (HotSpot, OpenJ9:
 * ddm_vm_info.ddm 0), which answers no DDM chunk at all: said at once, and
 * as what it is, not as a VM "not ready" or without FEAT yet. Header-only
 * (every plugin may use it without linking this library). */
#define PLUGIN_PLAIN_JVM_FMT "VM %s is a plain JVM, not DDM-aware: %s needs a DDM VM (Android)"

/* 1 if @info is a plain JVM (no DDM), else 0. */
static inline int plugin_vm_is_plain(const ddm_vm_info *info)
{
    return info != NULL && !info->ddm;
}

/* If @vm (named @spec by the user) is a plain JVM: finish @cmd FAILED with
 * PLUGIN_PLAIN_JVM_FMT (@what: the command or request, e.g. "hprof") and
 * return 1; else 0. */
static inline int plugin_refuse_plain_jvm(const ddm_host *h, ddm_cmd *cmd, ddm_vm *vm,
                                          const char *spec, const char *what)
{
    char msg[320];
    if (!plugin_vm_is_plain(h->vm_info(vm)))
        return 0;
    snprintf(msg, sizeof msg, PLUGIN_PLAIN_JVM_FMT, spec, what);
    h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
    return 1;
}

#endif
