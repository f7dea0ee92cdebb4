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

/* plugin_vm_is_plain's visitor: stops at the VM looked for. */
typedef struct plugin_plain_find {
    const ddm_vm *vm;
    int found;
} plugin_plain_find;

static inline int plugin_plain_visit(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    plugin_plain_find *f = (plugin_plain_find *)ud;
    (void)self;
    if (vm != f->vm)
        return 0;
    f->found = 1;
    return 1;
}

/* 1 if @vm is known to be a plain JVM (no DDM), else 0. ddm_vm_info.ddm is
 * 0 for a plain JVM and also for a DDM VM whose handshake has not finished
 * (connecting, HELO, retried), so it alone would call an Android VM on its
 * way up a plain JVM: a VM is plain when foreach_plain_vm lists it (1.2);
 * an older core has only the flag. */
static inline int plugin_vm_is_plain(const ddm_host *h, ddm_plugin *self, ddm_vm *vm)
{
    const ddm_vm_info *info = h->vm_info(vm);
    if (info == NULL || info->ddm)
        return 0;
    if (!DDM_HOST_HAS(h, foreach_plain_vm) || h->foreach_plain_vm == NULL)
        return 1;
    plugin_plain_find f = {vm, 0};
    h->foreach_plain_vm(self, plugin_plain_visit, &f);
    return f.found;
}

/* If @vm (named @spec by the user) is a plain JVM: finish @cmd FAILED with
 * PLUGIN_PLAIN_JVM_FMT (@what: the command or request, e.g. "hprof") and
 * return 1; else 0 (a DDM VM not ready yet is the command's own to refuse,
 * as "not ready"). */
static inline int plugin_refuse_plain_jvm(const ddm_host *h, ddm_plugin *self, ddm_cmd *cmd,
                                          ddm_vm *vm, const char *spec, const char *what)
{
    char msg[320];
    if (!plugin_vm_is_plain(h, self, vm))
        return 0;
    snprintf(msg, sizeof msg, PLUGIN_PLAIN_JVM_FMT, spec, what);
    h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
    return 1;
}

#endif
