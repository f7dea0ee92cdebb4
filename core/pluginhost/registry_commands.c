/* SPDX-License-Identifier: Apache-2.0
 *
 * User commands registered by plugins (registry-private.h): names reserved
 * for the core, lookup and listing, and commands in flight from
 * ddm_registry_run_command to their completion (ddm_registry_cmd_finish).
 *
 * Invariant: a user command's done callback runs exactly once: at
 * cmd_finish, when the handler fails, or when its plugin is unloaded
 * (registry.c finishes it as FAILED).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <errno.h>
#include <string.h>

#include "core/pluginhost/registry-private.h"
#include "core/views/views.h"

/* Names the core's own client commands use (frontend). */
static const char *const reserved_commands[] = {
    "vms", "view", "views", "plugins", "watch", "snapshot", "server", "start-server",
    "kill-server", "help", "version", "connect", "disconnect", "scan", NULL,
};

gboolean ddm_registry_command_reserved(const char *name)
{
    for (const char *const *r = reserved_commands; *r; r++)
        if (strcmp(*r, name) == 0)
            return TRUE;
    return FALSE;
}

DdmCommandReg *ddm_registry_find_command(DdmRegistry *reg, const char *name)
{
    for (guint i = 0; i < reg->commands->len; i++) {
        DdmCommandReg *c = g_ptr_array_index(reg->commands, i);
        if (strcmp(c->name, name) == 0)
            return c;
    }
    return NULL;
}

static gint cmp_command_info(gconstpointer a, gconstpointer b)
{
    return strcmp(((const DdmCommandInfo *)a)->name, ((const DdmCommandInfo *)b)->name);
}

GArray *ddm_registry_commands(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, NULL);
    GArray *out = g_array_new(FALSE, TRUE, sizeof(DdmCommandInfo));
    for (guint i = 0; i < reg->commands->len; i++) {
        DdmCommandReg *c = g_ptr_array_index(reg->commands, i);
        DdmCommandInfo info = {c->name, c->usage, c->summary, c->plugin->name};
        g_array_append_val(out, info);
    }
    g_array_sort(out, cmp_command_info);
    return out;
}

gboolean ddm_registry_run_command(DdmRegistry *reg, int argc, const char *const *argv,
                                  DdmCommandDoneFn done, gpointer ud)
{
    return ddm_registry_run_command_in(reg, argc, argv, NULL, done, ud);
}

gboolean ddm_registry_run_command_in(DdmRegistry *reg, int argc, const char *const *argv,
                                     const char *cwd, DdmCommandDoneFn done, gpointer ud)
{
    return ddm_registry_run_command_progress(reg, argc, argv, cwd, NULL, done, NULL, ud);
}

gboolean ddm_registry_run_command_progress(DdmRegistry *reg, int argc, const char *const *argv,
                                           const char *cwd, const char *out_dir,
                                           DdmCommandDoneFn done, DdmCommandProgressFn progress,
                                           gpointer ud)
{
    g_return_val_if_fail(reg != NULL && argc > 0 && argv != NULL && argv[0] != NULL, FALSE);
    g_return_val_if_fail(done != NULL, FALSE);
    DdmCommandReg *c = ddm_registry_find_command(reg, argv[0]);
    if (!c || c->plugin->status != DDM_PLUGIN_LOADED)
        return FALSE;
    ddm_cmd *cmd = g_new0(ddm_cmd, 1);
    cmd->magic = DDM_CMD_MAGIC;
    cmd->serial = ++reg->next_cmd_serial;
    cmd->reg = reg;
    cmd->plugin = c->plugin;
    cmd->name = g_strdup(c->name);
    cmd->done = done;
    cmd->done_ud = ud;
    cmd->cwd = g_strdup(cwd);
    cmd->progress = progress;
    cmd->out_dir = g_strdup(out_dir);
    guint serial = cmd->serial;
    g_hash_table_insert(reg->cmds, GUINT_TO_POINTER(serial), cmd);
    int rc = c->fn(c->plugin, cmd, argc, argv, c->ud);
    /* The handler may have finished (and freed) it already. */
    cmd = g_hash_table_lookup(reg->cmds, GUINT_TO_POINTER(serial));
    if (rc < 0 && cmd) {
        g_autofree char *msg = g_strdup_printf("%s: %s", argv[0], g_strerror(-rc));
        ddm_registry_cmd_finish(cmd, DDM_CMD_FAILED, msg);
    } else if (rc < 0) {
        g_debug("plugin %s: command %s returned %d after finishing", c->plugin->name, argv[0], rc);
    }
    return TRUE;
}

static void progress_pass_on(ddm_cmd *cmd, gint64 now)
{
    cmd->progress_last_us = now;
    cmd->progress_held = FALSE;
    cmd->progress(cmd->progress_done, cmd->progress_total, cmd->progress_unit, cmd->done_ud);
}

void ddm_registry_cancel_commands_of(DdmRegistry *reg, gpointer ud)
{
    GHashTableIter it;
    gpointer key, value;
    g_return_if_fail(reg != NULL);
    g_hash_table_iter_init(&it, reg->cmds);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        ddm_cmd *cmd = value;
        if (cmd->done_ud == ud && !cmd->cancelled) {
            cmd->cancelled = TRUE;
            g_debug("command %s: its client went away; cancelled", cmd->name);
        }
    }
}

int ddm_registry_cmd_progress(ddm_cmd *cmd, guint64 done, guint64 total, const char *unit)
{
    gint64 now;

    if (cmd->finished)
        return -EINVAL;
    cmd->progress_done = done;
    cmd->progress_total = total;
    g_strlcpy(cmd->progress_unit, unit != NULL && strcmp(unit, "B") == 0 ? "B" : "",
              sizeof cmd->progress_unit);
    if (!cmd->progress)
        return 0;
    now = g_get_monotonic_time();
    if (cmd->progress_last_us != 0 &&
        now - cmd->progress_last_us < (gint64)DDM_PROGRESS_INTERVAL_MS * 1000) {
        cmd->progress_held = TRUE; /* passed on at finish if nothing newer goes first */
        return 0;
    }
    progress_pass_on(cmd, now);
    return 0;
}

void ddm_registry_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message)
{
    if (cmd->finished)
        return;
    if (cmd->progress && cmd->progress_held)
        progress_pass_on(cmd, g_get_monotonic_time());
    cmd->finished = TRUE;
    cmd->magic = 0;
    g_hash_table_remove(cmd->reg->cmds, GUINT_TO_POINTER(cmd->serial));
    if (status > DDM_CMD_NOT_FOUND)
        status = DDM_CMD_FAILED;
    cmd->done(status, message, cmd->result, cmd->done_ud);
    if (cmd->result)
        ddm_view_free_detached(cmd->result);
    g_free(cmd->name);
    g_free(cmd->cwd);
    g_free(cmd->out_dir);
    g_free(cmd);
}
