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
    if (G_UNLIKELY(reg->stopping_told)) {
        /* The stopping hooks ran and the server waits for the VMs' last
         * answers with its loop running (ddm_daemon_stop_vms): what this
         * command would start in a VM would outlive the server, with no
         * hook left to stop it. */
        g_autofree char *msg = g_strdup_printf("ddmon is stopping: '%s' was not run", argv[0]);
        ddm_registry_cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return TRUE;
    }
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

/* One piece of an argument (the whole, or what follows an '='): a path
 * that starts at the root or the home directory, or climbs with "..". */
static const char *piece_escapes(const char *piece, size_t len)
{
    if (len > 0 && (piece[0] == '/' || piece[0] == '~'))
        return "an absolute path";
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && piece[j] != '/')
            j++;
        if (j - i == 2 && piece[i] == '.' && piece[i + 1] == '.')
            return "a '..' segment";
        i = j + 1;
    }
    return NULL;
}

const char *ddm_command_arg_escapes(const char *arg)
{
    g_return_val_if_fail(arg != NULL, "no argument");
    /* A short option glued to its value: -o/tmp/x. */
    if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && (arg[2] == '/' || arg[2] == '~'))
        return "an absolute path";
    for (const char *p = arg;;) {
        const char *eq = strchr(p, '=');
        size_t len = eq != NULL ? (size_t)(eq - p) : strlen(p);
        const char *why = piece_escapes(p, len);
        if (why != NULL)
            return why;
        if (eq == NULL)
            return NULL;
        p = eq + 1;
    }
}

gboolean ddm_registry_run_command_confined(DdmRegistry *reg, int argc, const char *const *argv,
                                           const char *run_dir, DdmCommandDoneFn done,
                                           DdmCommandProgressFn progress, gpointer ud,
                                           GError **error)
{
    g_return_val_if_fail(reg != NULL && argc > 0 && argv != NULL && argv[0] != NULL, FALSE);
    g_return_val_if_fail(run_dir != NULL && run_dir[0] == '/', FALSE);
    for (int i = 1; i < argc; i++) {
        const char *why = ddm_command_arg_escapes(argv[i]);
        if (why != NULL) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
                        "argument %d (%.64s) is %s: this client may write only into the "
                        "command's own directory, so files are named relative to it",
                        i, argv[i], why);
            return FALSE;
        }
    }
    if (!ddm_registry_run_command_progress(reg, argc, argv, run_dir, run_dir, done, progress, ud)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no command '%.64s'", argv[0]);
        return FALSE;
    }
    return TRUE;
}

gboolean ddm_command_usage_takes_vm(const char *name, const char *usage)
{
    g_return_val_if_fail(name != NULL, FALSE);
    if (usage == NULL)
        return FALSE;
    g_auto(GStrv) words = g_strsplit_set(usage, " \t", -1);
    guint i = 0;
    while (words[i] != NULL && words[i][0] == '\0')
        i++;
    if (words[i] != NULL && strcmp(words[i], name) == 0)
        i++;
    while (words[i] != NULL && words[i][0] == '\0')
        i++;
    if (words[i] == NULL)
        return FALSE;
    /* "VM", "PID", "VM...|all": the operand before any alternative. */
    g_autofree char *first = g_strndup(words[i], strcspn(words[i], "|."));
    return strcmp(first, "VM") == 0 || strcmp(first, "PID") == 0;
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
    if (cmd->result && cmd->vm_key && !cmd->vm_several)
        ddm_view_set_detached_vm(cmd->result, cmd->vm_key);
    cmd->done(status, message, cmd->result, cmd->done_ud);
    if (cmd->result)
        ddm_view_free_detached(cmd->result);
    g_free(cmd->name);
    g_free(cmd->cwd);
    g_free(cmd->out_dir);
    g_free(cmd->vm_key);
    g_free(cmd);
}
