/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's commands: running a registered command as a client would,
 * its result view, cwd, progress (1.2) and finish, and what a test reads
 * back.
 */
#include "kit-private.h"

ddm_view *fh_cmd_result(ddm_cmd *cmd, ddm_view_kind kind, const char *title)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_result after cmd_finish");
    if (!cmd->result) {
        cmd->result = fh_view_alloc(cmd->fh, NULL, "result", kind, title);
        cmd->result->is_cmd_result = 1;
    } else if (cmd->result->kind != kind) {
        fh_view_error(cmd->result, 0, "cmd_result asked again with another kind");
    }
    return cmd->result;
}

const char *fh_cmd_cwd(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    return cmd->fh->client_cwd;
}

void fh_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_finish called twice (second: %d %s)", (int)status,
                 message ? message : "");
    cmd->finished = 1;
    cmd->status = status;
    cmd->message = xstrdup(message);
}

const char *fh_cmd_out_dir(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_out_dir after cmd_finish");
    return cmd->fh->client_out_dir;
}

int fh_cmd_cancelled(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_cancelled after cmd_finish");
    return cmd->cancelled;
}

void fake_cmd_cancel(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    cmd->cancelled = 1;
}

void fake_host_set_client_out_dir(fake_host *fh, const char *dir)
{
    free(fh->client_out_dir);
    fh->client_out_dir = xstrdup(dir);
}

int fh_cmd_progress(ddm_cmd *cmd, uint64_t done, uint64_t total, const char *unit)
{
    assert_non_null(cmd);
    if (cmd->finished) {
        fh_logf(cmd->fh, DDM_LOG_DEBUG, "fake-host: cmd_progress after cmd_finish");
        return -EINVAL;
    }
    /* Every call is recorded: the core's rate limit (a few a second, the
     * last figures always before the finish) is the core's business, and
     * the kit has no clock. */
    cmd->progress_calls++;
    cmd->progress_done = done;
    cmd->progress_total = total;
    cmd->progress_unit[0] = unit != NULL && strcmp(unit, "B") == 0 ? 'B' : '\0';
    cmd->progress_unit[1] = '\0';
    return 0;
}

ddm_cmd *fake_host_run_command(fake_host *fh, int argc, const char *const *argv)
{
    fh_reg *r;
    ddm_cmd *cmd;
    int rc;
    assert_true(argc >= 1);
    r = fh_find_command(fh, argv[0]);
    if (!r)
        return NULL;
    cmd = xcalloc(1, sizeof *cmd);
    cmd->fh = fh;
    vec_push(&fh->cmds, cmd);
    rc = r->cmd_fn(&fh->plugin, cmd, argc, argv, r->ud);
    if (rc < 0 && !cmd->finished) {
        char msg[64];
        snprintf(msg, sizeof msg, "failed: %s", strerror(-rc));
        fh_cmd_finish(cmd, DDM_CMD_FAILED, msg);
    }
    return cmd;
}

int fake_cmd_finished(ddm_cmd *cmd)
{
    return cmd->finished;
}

ddm_cmd_status fake_cmd_status(ddm_cmd *cmd)
{
    if (!cmd->finished)
        fail_msg("fake-host: command not finished");
    return cmd->status;
}

const char *fake_cmd_message(ddm_cmd *cmd)
{
    return cmd->message;
}

ddm_view *fake_cmd_result(ddm_cmd *cmd)
{
    fh_note_view_miss(cmd->result ? ""
                                  : (cmd->finished ? "the command finished without a result view"
                                                   : "the command has no result view (yet)"));
    return cmd->result;
}

int fake_cmd_progress(ddm_cmd *cmd, uint64_t *done, uint64_t *total)
{
    assert_non_null(cmd);
    if (done)
        *done = cmd->progress_done;
    if (total)
        *total = cmd->progress_total;
    return cmd->progress_calls > 0;
}

int fake_cmd_progress_count(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    return cmd->progress_calls;
}

const char *fake_cmd_progress_unit(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    return cmd->progress_unit;
}
