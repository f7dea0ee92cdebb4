/* SPDX-License-Identifier: Apache-2.0
 *
 * One trace of one VM (profile.h): start, run, stop, save.
 *
 *   streamed (MPSS/SPSS ... MPSE/SPSE): FILE.part is opened; the start
 *   request goes out, then MPRQ, whose answer says whether the VM really
 *   started (ART answers a start with nothing at all; a FAIL to the start
 *   arrives before MPRQ's answer, replies keep their order). The trace
 *   runs --seconds (0: until the client goes away, i.e. Ctrl-C), with a
 *   progress line; then the stop. The VM sends the whole trace as an MPSE
 *   event before its reply to the stop: it goes into the .part and through
 *   the decoder as it arrives; complete, the .part becomes FILE and the
 *   VM gets the summary views. A complete trace the decoder refuses (its
 *   caps are its own) is still saved: the answer carries the decoder's
 *   complaint as summary_error, and the views are left alone. A VM with nothing running
 *   sends no event and no reply: after profile.timeout_ms the job fails
 *   instead of waiting forever.
 *   device (MPRS ... MPRE): the VM writes the trace to a file on the
 *   device; MPRE's u1 0 says it did.
 *
 *   stop only (`trace VM --stop [FILE]`, profile_job_stop): for a trace
 *   ddmon did not start or lost (an app's own, or one a server that went
 *   away left running). MPRQ says what runs; tracing gets MPSE, sampling
 *   SPSE, then MPRQ again. A trace that comes back is saved to FILE as
 *   above, or read and dropped without FILE; if none comes and MPRQ then
 *   says off, the VM stopped it (a device trace, or one with nothing
 *   recorded) and that is the answer.
 *
 * The server stopping (profile_job_server_stopping, the plugin's ABI 1.8
 * stopping hook) stops a starting or running trace at once, as its end
 * would: the core then waits a bounded time (DDM_STOPPING_WAIT_MS) for the
 * VMs' answers with the loop running, so the trace comes back, is saved
 * and the command (its client still connected) is told where; the saved
 * trace gets PROFILE_CUT_SHORT_LINE in its "*version" section. A trace
 * whose stream the VM had not finished when its connection closed is
 * saved up to its last whole record (a valid, shorter trace) and the log
 * says so; one that had not begun is lost, and the log says that. No new
 * trace starts once the server stops.
 *
 * Ctrl-C (the client went away, host.cmd_cancelled) stops the trace at
 * the next tick and still saves it: the file and the views are the
 * result, and the log says where it went. Any failure (FAIL, the VM
 * gone, a truncated trace, a write error) removes the
 * .part: no file that looks complete is ever left behind. FILE must be
 * absent or a regular file (partfile.h: a device, FIFO or symlink is
 * refused before the start and again at the rename), and a FILE.part that
 * another command is writing is refused at once.
 */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ddmon/bytes.h>

#include "../common/partfile.h"
#include "profile.h"

#define TICK_MS 250u
#define START_TIMEOUT_MS 5000u

typedef enum { J_STARTING = 0, J_RUNNING, J_STOPPING, J_STREAMING, J_DONE, J_QUERYING } job_state;

struct profile_job {
    profile_plugin *pl;
    ddm_cmd *cmd;                      /* NULL once finished */
    ddm_vm *vm;                        /* NULL once the VM went away */
    int sampling, device;
    int stop_only;                     /* `trace --stop`: no start, a stop of what runs */
    int discard;                       /* stop_only without FILE: the trace is read, not kept */
    int nothing_ran;                   /* stop_only: MPRQ said off before any stop */
    uint32_t seconds, interval_us, buffer;
    char path[PROFILE_PATH_MAX + 1];
    char part[PROFILE_PATH_MAX + 8];
    char device_path[PROFILE_PATH_MAX + 1];
    char vm_key[128];
    char vm_spec[128];                 /* what a user types for it: the pid, else the key */
    uint32_t pid;
    int fd;
    trace_decoder *dec;
    job_state state;
    int pending;                       /* requests whose callback has not run */
    int start_failed;
    char start_error[320];
    char summary_error[320];           /* complete, saved, but not decoded */
    int server_stopping;               /* stopped by the server's stop (ABI 1.8 hook) */
    int mark_state;                    /* PROFILE_CUT_SHORT_LINE: 0 not yet, 1 written, -1 none */
    unsigned mark_newlines;            /* newlines of the stream seen before it */
    char cut_note[160];                /* a stream cut short and saved: what was kept */
    uint32_t tick;
    struct timespec t0, running_since;
    uint64_t declared, received;
};

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static const char *kind_name(const profile_job *j)
{
    return j->sampling ? "sampling" : "tracing";
}

static void maybe_free(profile_job *j)
{
    if (j->state != J_DONE || j->pending > 0)
        return;
    trace_decoder_free(j->dec);
    free(j);
}

static void close_part(profile_job *j)
{
    part_abandon(j->fd, j->part);
    j->fd = -1;
}

/* A new job of @cmd for @vm (@info its VM's), started now, with no part
 * yet; NULL with @cmd finished when out of memory. */
static profile_job *job_new(profile_plugin *pl, ddm_cmd *cmd, ddm_vm *vm, const ddm_vm_info *info)
{
    profile_job *j = calloc(1, sizeof *j);
    if (!j) {
        pl->host->cmd_finish(cmd, DDM_CMD_FAILED, "out of memory");
        return NULL;
    }
    j->pl = pl;
    j->cmd = cmd;
    j->vm = vm;
    j->fd = -1;
    snprintf(j->vm_key, sizeof j->vm_key, "%s", info->key ? info->key : "?");
    j->pid = info->pid;
    clock_gettime(CLOCK_MONOTONIC, &j->t0);
    return j;
}

/* A job that fails before its first request went out: its command finishes
 * with @msg, its part (if made) is removed, and the job is freed. -1. */
static int job_fail_unsent(profile_job *j, const char *msg)
{
    j->pl->host->cmd_finish(j->cmd, DDM_CMD_FAILED, msg);
    close_part(j);
    trace_decoder_free(j->dec);
    free(j);
    return -1;
}

static void publish_views(profile_job *j, profile_vm *pv)
{
    const ddm_host *h = j->pl->host;
    if (!pv->summary)
        pv->summary = h->view_new(j->pl->self, j->vm, "profile.trace", DDM_VIEW_RECORD, "Last trace");
    if (!pv->methods)
        pv->methods = h->view_new(j->pl->self, j->vm, "profile.methods", DDM_VIEW_TABLE,
                                  "Last trace: top methods");
    if (!pv->threads)
        pv->threads = h->view_new(j->pl->self, j->vm, "profile.threads", DDM_VIEW_TABLE,
                                  "Last trace: threads");
    if (pv->summary) {
        h->view_begin(pv->summary);
        h->view_field_str(pv->summary, "path", j->path);
        h->view_field_str(pv->summary, "kind", kind_name(j));
        h->view_field_int(pv->summary, "bytes", (int64_t)j->received);
        profile_summary_fields(h, pv->summary, j->dec);
        h->view_commit(pv->summary);
    }
    if (pv->methods)
        profile_fill_methods(h, pv->methods, j->dec, PROFILE_DEFAULT_TOP);
    if (pv->threads)
        profile_fill_threads(h, pv->threads, j->dec);
}

/* End the job: the command's answer (@error NULL = success), the VM's
 * state and views. */
static void finish(profile_job *j, const char *error)
{
    const ddm_host *h = j->pl->host;
    profile_vm *pv;
    char msg[PROFILE_MSG_MAX], line[256];
    int cancelled;
    ddm_view *res;

    if (j->state == J_DONE)
        return;
    /* after the check: a finished job's late callback (a VM_GONE confirm)
     * makes no state that nothing would settle */
    pv = j->vm ? profile_vm_state(j->pl, j->vm) : NULL;
    j->state = J_DONE;
    if (j->tick) {
        h->timer_remove(j->pl->self, j->tick);
        j->tick = 0;
    }
    cancelled = j->cmd && h->cmd_cancelled(j->cmd);
    if (!error && !j->device && !j->discard && !(j->stop_only && j->received == 0)) {
        int rc = part_commit(j->fd, j->part, j->path, msg, sizeof msg);
        j->fd = -1; /* closed, and on failure the .part removed */
        if (rc != 0)
            error = msg;
    }
    close_part(j);
    if (pv) {
        if (pv->job == j)
            pv->job = NULL;
        if (!error && !j->discard && !(j->stop_only && j->received == 0)) {
            pv->traces++;
            char *path = strdup(j->device ? j->device_path : j->path);
            if (path) { /* else the previous name stays */
                free(pv->last_path);
                pv->last_path = path;
            }
            if (!j->device && !j->summary_error[0])
                publish_views(j, pv);
        }
        profile_show_state(j->pl, j->vm, pv);
        profile_query(j->pl, j->vm); /* what runs now, after the stop or failure; @pv
                                        may be back to a marker after it */
    }
    if (j->cmd) {
        res = h->cmd_result(j->cmd, DDM_VIEW_RECORD, "Method trace");
        if (res) {
            h->view_begin(res);
            h->view_field_str(res, "vm", j->vm_key);
            h->view_field_int(res, "pid", j->pid);
            h->view_field_str(res, "kind", kind_name(j));
            h->view_field_str(res, "via", j->device ? "device" : "stream");
            if (!j->discard)
                h->view_field_str(res, j->device ? "device_path" : "path",
                                  j->device ? j->device_path : j->path);
            if (j->stop_only)
                h->view_field_bool(res, "stop_only", 1);
            h->view_field_int(res, "bytes", (int64_t)j->received);
            h->view_field_double(res, "seconds", seconds_since(&j->t0));
            if (!error && !j->device && !j->summary_error[0] && !j->discard &&
                !(j->stop_only && j->received == 0))
                profile_summary_fields(h, res, j->dec);
            if (!error && j->summary_error[0])
                h->view_field_str(res, "summary_error", j->summary_error);
            if (error)
                h->view_field_str(res, "error", error);
            h->view_commit(res);
        }
        if (error) {
            char e[PROFILE_MSG_MAX + 256];
            snprintf(e, sizeof e, "%s of %s failed: %s", j->stop_only ? "the stop" : kind_name(j),
                     j->vm_key, error);
            h->cmd_finish(j->cmd, DDM_CMD_FAILED, e);
        } else if (j->stop_only && (j->nothing_ran || j->received == 0 || j->discard)) {
            if (j->nothing_ran)
                snprintf(msg, sizeof msg, "no trace runs in %s (MPRQ says off): nothing to stop",
                         j->vm_key);
            else if (j->received == 0)
                snprintf(msg, sizeof msg, "%s of %s stopped; the VM sent no trace (MPRQ now says off)",
                         kind_name(j), j->vm_key);
            else
                snprintf(msg, sizeof msg, "%s of %s stopped; its trace (%" PRIu64 " bytes) was "
                         "discarded (give a FILE to keep it)", kind_name(j), j->vm_key, j->received);
            h->cmd_finish(j->cmd, DDM_CMD_OK, msg);
        } else if (j->device) {
            snprintf(msg, sizeof msg,
                     "trace of %s written on the device to %s (fetch it with: adb pull %s)",
                     j->vm_key, j->device_path, j->device_path);
            h->cmd_finish(j->cmd, DDM_CMD_OK, msg);
        } else {
            if (j->summary_error[0])
                snprintf(line, sizeof line, "no summary: %.200s", j->summary_error);
            else
                profile_summary_line(j->dec, line, sizeof line);
            snprintf(msg, sizeof msg, "%s of %s written to %s (%" PRIu64 " bytes, %.1f s): %s%s%s",
                     kind_name(j), j->vm_key, j->path, j->received, seconds_since(&j->t0), line,
                     j->server_stopping ? " (cut short: ddmon is stopping)"
                     : cancelled        ? " (stopped: the client went away)"
                                        : "",
                     j->cut_note);
            h->cmd_finish(j->cmd, DDM_CMD_OK, msg);
        }
        /* the client may not hear it (gone, or the server stopping): the
         * log says where the trace went */
        if (cancelled || j->server_stopping)
            h->log(j->pl->self, error ? DDM_LOG_WARNING : DDM_LOG_MESSAGE, "%s",
                   error ? error : msg);
        j->cmd = NULL;
    }
    /* the caller frees it (maybe_free) once it no longer touches it */
}

/* The VM closed with a request of @j unanswered: the server's stop closed
 * it (its wait for the answers ran out), or the VM went away. */
static void finish_gone(profile_job *j)
{
    char msg[160];
    if (j->pl->stopping) {
        snprintf(msg, sizeof msg, "ddmon is stopping and the VM did not answer within %.1f s",
                 (double)DDM_STOPPING_WAIT_MS / 1000.0);
        finish(j, msg);
    } else {
        finish(j, "the VM went away");
    }
}

static void fail_with_reply(profile_job *j, const char *what, const ddm_reply *reply)
{
    char buf[320], msg[PROFILE_MSG_MAX];
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL)
        snprintf(msg, sizeof msg, "%s: the VM said: %s", what, ddm_reply_describe(reply, buf, sizeof buf));
    else
        snprintf(msg, sizeof msg, "%s: %s", what, ddm_reply_describe(reply, buf, sizeof buf));
    finish(j, msg);
}

/* ------------------------------------------------------------ stopping */

static void on_stop_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    char msg[PROFILE_MSG_MAX];
    (void)self;
    (void)vm;
    j->pending--;
    /* stop only: the MPRQ after the stop decides, unless the stop failed */
    if (j->state == J_STOPPING &&
        (!j->stop_only || (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL))) {
        if (reply->status == DDM_REPLY_VM_GONE && j->server_stopping) {
            snprintf(msg, sizeof msg, "ddmon stopped before the VM sent the trace (it waited %.1f s "
                     "for it): nothing saved", (double)DDM_STOPPING_WAIT_MS / 1000.0);
            finish(j, msg);
        } else if (reply->status == DDM_REPLY_TIMEOUT) {
            snprintf(msg, sizeof msg,
                     "no trace came back within %.1f s of the stop: a VM with no trace running "
                     "sends nothing (option profile.timeout_ms)",
                     (double)j->pl->timeout_ms / 1000.0);
            finish(j, msg);
        } else if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL) {
            fail_with_reply(j, "the stop failed", reply);
        } else if (reply->status == DDM_REPLY_EMPTY ||
                   (reply->status == DDM_REPLY_CHUNK && reply->type != DDM_CHUNK_FAIL)) {
            finish(j, "the VM answered the stop but sent no trace");
        } else {
            fail_with_reply(j, "the stop failed", reply);
        }
    }
    maybe_free(j);
}

static void on_mpre(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    char msg[PROFILE_MSG_MAX];
    (void)self;
    (void)vm;
    j->pending--;
    if (j->state == J_STOPPING) {
        if (reply->status == DDM_REPLY_CHUNK && reply->type == PROFILE_CHUNK_MPRE && reply->len >= 1) {
            if (reply->data[0] == 0) {
                finish(j, NULL);
            } else {
                snprintf(msg, sizeof msg, "the VM could not write %s (MPRE result %u)",
                         j->device_path, (unsigned)reply->data[0]);
                finish(j, msg);
            }
        } else {
            fail_with_reply(j, "MPRE failed", reply);
        }
    }
    maybe_free(j);
}

static void stop(profile_job *j)
{
    const ddm_host *h = j->pl->host;
    uint32_t type = j->device ? PROFILE_CHUNK_MPRE : j->sampling ? PROFILE_CHUNK_SPSE : PROFILE_CHUNK_MPSE;
    int rc;

    if (j->tick) {
        h->timer_remove(j->pl->self, j->tick);
        j->tick = 0;
    }
    j->state = J_STOPPING;
    rc = h->request(j->pl->self, j->vm, type, NULL, 0, j->pl->timeout_ms,
                    j->device ? on_mpre : on_stop_reply, j, NULL);
    if (rc != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "the stop was not sent: %s", strerror(-rc));
        finish(j, msg);
        return;
    }
    j->pending++;
}

static int on_tick(ddm_plugin *self, void *ud)
{
    profile_job *j = ud;
    const ddm_host *h = j->pl->host;
    double ran = seconds_since(&j->running_since);
    (void)self;
    if (h->cmd_cancelled(j->cmd) || (j->seconds > 0 && ran >= (double)j->seconds)) {
        j->tick = 0; /* returning 0 removes it */
        stop(j);
        maybe_free(j);
        return 0;
    }
    h->cmd_progress(j->cmd, (uint64_t)(ran * 1000.0), (uint64_t)j->seconds * 1000u, "ms");
    return 1;
}

/* ------------------------------------------------------------ starting */

static void on_start_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    char buf[320];
    (void)self;
    (void)vm;
    j->pending--;
    if (reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_FAIL) {
        j->start_failed = 1;
        snprintf(j->start_error, sizeof j->start_error, "%s", ddm_reply_describe(reply, buf, sizeof buf));
    } else if (reply->status == DDM_REPLY_ERROR || reply->status == DDM_REPLY_BAD) {
        j->start_failed = 1;
        snprintf(j->start_error, sizeof j->start_error, "%s", ddm_reply_describe(reply, buf, sizeof buf));
    }
    /* EMPTY (Dalvik) and TIMEOUT (ART answers nothing) say nothing: MPRQ does */
    maybe_free(j);
}

static void on_confirm(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    const ddm_host *h = j->pl->host;
    profile_vm *pv;
    char msg[PROFILE_MSG_MAX];
    int mode;

    j->pending--;
    if (reply->status == DDM_REPLY_VM_GONE || !j->vm) {
        finish_gone(j);
        maybe_free(j);
        return;
    }
    mode = profile_mprq_mode(reply);
    if (mode >= 0 && (pv = profile_vm_state(j->pl, vm)) != NULL) {
        pv->mode = (int8_t)mode;
        profile_show_state(j->pl, vm, pv);
        (void)profile_vm_settle(j->pl, pv); /* kept while its job runs */
    }
    (void)self;
    if (j->state != J_STARTING) {
        maybe_free(j);
        return;
    }
    if (j->start_failed) {
        /* a trace runs that is not ours (an app's own, or one a server that
         * went away left running): say how to stop it */
        if (mode > PROFILE_MODE_OFF)
            snprintf(msg, sizeof msg, "the VM did not start %s: %s; a trace that this ddmon did "
                     "not start runs (MPRQ says %s): stop it with 'ddmon trace %s --stop'",
                     kind_name(j), j->start_error,
                     mode == PROFILE_MODE_SAMPLING ? "sampling" : "tracing", j->vm_spec);
        else
            snprintf(msg, sizeof msg, "the VM did not start %s: %s", kind_name(j), j->start_error);
        finish(j, msg);
    } else if (mode == PROFILE_MODE_OFF) {
        snprintf(msg, sizeof msg, "the VM did not start %s (MPRQ says nothing runs)", kind_name(j));
        finish(j, msg);
    } else {
        j->state = J_RUNNING;
        clock_gettime(CLOCK_MONOTONIC, &j->running_since);
        if (h->cmd_cancelled(j->cmd)) {
            stop(j);
        } else {
            j->tick = h->timer_add(j->pl->self, TICK_MS, on_tick, j, NULL);
            if (!j->tick)
                stop(j);
            else
                h->cmd_progress(j->cmd, 0, (uint64_t)j->seconds * 1000u, "ms");
        }
    }
    maybe_free(j);
}

static int send_start(profile_job *j)
{
    const ddm_host *h = j->pl->host;
    ddm_writer w;
    uint8_t *payload;
    size_t len = 0;
    uint32_t type;
    int rc;

    ddm_writer_init(&w, 4 * PROFILE_PATH_MAX + 16);
    ddm_write_u4(&w, j->buffer);
    ddm_write_u4(&w, 0); /* flags: no allocation counts */
    if (j->device) {
        ddm_write_lstr(&w, j->device_path);
        type = PROFILE_CHUNK_MPRS;
    } else if (j->sampling) {
        ddm_write_u4(&w, j->interval_us);
        type = PROFILE_CHUNK_SPSS;
    } else {
        type = PROFILE_CHUNK_MPSS;
    }
    payload = ddm_writer_take(&w, &len);
    if (!payload)
        return -ENOMEM;
    rc = h->request(j->pl->self, j->vm, type, payload, len, START_TIMEOUT_MS, on_start_reply, j, NULL);
    free(payload);
    if (rc != 0)
        return rc;
    j->pending++;
    rc = h->request(j->pl->self, j->vm, PROFILE_CHUNK_MPRQ, NULL, 0, 0, on_confirm, j, NULL);
    if (rc != 0)
        return rc; /* the start went: its callback still comes */
    j->pending++;
    return 0;
}

int profile_job_start(profile_plugin *pl, ddm_cmd *cmd, ddm_vm *vm, const profile_args *a)
{
    const ddm_host *h = pl->host;
    const ddm_vm_info *info = h->vm_info(vm);
    profile_vm *pv = profile_vm_find(pl, vm); /* made below, once the job is */
    profile_job *j;
    char msg[PROFILE_MSG_MAX];
    int rc;

    if (pl->stopping) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "ddmon is stopping: no new trace starts");
        return -1;
    }
    if (pv && pv->job) {
        snprintf(msg, sizeof msg, "a trace of %s is already running", info->key);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    if (!(j = job_new(pl, cmd, vm, info)))
        return -1;
    j->sampling = a->sampling;
    j->device = a->on_device;
    j->seconds = a->seconds;
    j->interval_us = a->interval_us;
    j->buffer = a->buffer;
    if (info->pid)
        snprintf(j->vm_spec, sizeof j->vm_spec, "%" PRIu32, info->pid);
    else
        snprintf(j->vm_spec, sizeof j->vm_spec, "%s", j->vm_key);
    if (j->device) {
        snprintf(j->device_path, sizeof j->device_path, "%s", a->device_path);
    } else {
        snprintf(j->path, sizeof j->path, "%s", a->path);
        snprintf(j->part, sizeof j->part, "%s.part", a->path);
        j->dec = trace_decoder_new();
        /* FILE a device, FIFO or symlink: refused before the VM works; a
         * FIFO or device named FILE.part is refused, never waited on; one
         * that another command is writing is refused (PART_BUSY) */
        rc = part_check_target(j->path);
        if (rc < 0)
            snprintf(msg, sizeof msg, "cannot write %s: %s", j->path, part_strerror(rc));
        else if ((rc = part_open(j->part, 0, 0600)) < 0 || !j->dec)
            snprintf(msg, sizeof msg, "cannot create %s: %s", j->part,
                     rc < 0 ? part_strerror(rc) : "out of memory");
        if (rc >= 0)
            j->fd = rc;
        if (rc < 0 || !j->dec)
            return job_fail_unsent(j, msg);
    }
    if (!(pv = profile_vm_state(pl, vm)))
        return job_fail_unsent(j, "out of memory");
    pv->job = j;
    rc = send_start(j);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "the start was not sent: %s",
                 rc == -ENOTCONN ? "the VM is not ready for DDM requests"
                 : rc == -EPERM  ? "that chunk type is disabled (--chunks)"
                 : rc == -ENOSPC ? "too many requests pending for that VM"
                                 : strerror(-rc));
        finish(j, msg);
        maybe_free(j); /* or once the requests it sent have answered */
        return -1;
    }
    profile_show_state(pl, vm, pv);
    return 0;
}

/* ------------------------------------------------------------ the stream */

static profile_job *vm_job(profile_plugin *pl, ddm_vm *vm)
{
    profile_vm *pv = profile_vm_find(pl, vm);
    return pv && pv->job && !pv->job->device ? pv->job : NULL;
}

int profile_job_stream_begin(profile_plugin *pl, ddm_vm *vm, uint64_t declared)
{
    profile_job *j = vm_job(pl, vm);
    if (!j || (j->state != J_STOPPING && j->state != J_RUNNING)) {
        profile_vm *pv = profile_vm_state(pl, vm); /* kept: it remembers the log line */
        if (!pv || !pv->stray_logged) { /* once per VM */
            if (pv)
                pv->stray_logged = 1;
            pl->host->log(pl->self, DDM_LOG_INFO,
                          "%s: a method trace of %" PRIu64 " bytes that no command asked for; "
                          "skipped (logged once)",
                          pl->host->vm_info(vm)->key, declared);
        }
        return -ENOENT;
    }
    if (j->tick) {
        pl->host->timer_remove(pl->self, j->tick);
        j->tick = 0;
    }
    j->state = J_STREAMING;
    j->declared = declared;
    if (j->cmd)
        pl->host->cmd_progress(j->cmd, 0, declared, "B");
    return 0;
}

/* Write @data to the .part; a trace the server's stop cut short gets
 * PROFILE_CUT_SHORT_LINE after its version number (the stream's second
 * line: "*version", the number, then the section's key=value lines). A
 * stream that does not start with "*version" gets none. */
static int write_part(profile_job *j, const uint8_t *data, size_t len)
{
    static const char line[] = PROFILE_CUT_SHORT_LINE;
    size_t i;
    int rc;

    if (!j->server_stopping || j->mark_state != 0)
        return part_write_all(j->fd, data, len);
    if (j->received < 9) { /* the stream's first 9 bytes, in as many pieces as they come */
        size_t k = len < 9 - j->received ? len : 9 - (size_t)j->received;
        if (memcmp(data, "*version\n" + j->received, k) != 0) {
            j->mark_state = -1;
            return part_write_all(j->fd, data, len);
        }
    }
    for (i = 0; i < len; i++)
        if (data[i] == '\n' && ++j->mark_newlines == 2)
            break;
    if (i == len)
        return part_write_all(j->fd, data, len);
    if ((rc = part_write_all(j->fd, data, i + 1)) != 0 ||
        (rc = part_write_all(j->fd, line, sizeof line - 1)) != 0)
        return rc;
    j->mark_state = 1;
    return i + 1 < len ? part_write_all(j->fd, data + i + 1, len - i - 1) : 0;
}

int profile_job_stream_data(profile_plugin *pl, ddm_vm *vm, const uint8_t *data, size_t len)
{
    profile_job *j = vm_job(pl, vm);
    int rc;
    if (!j || j->state != J_STREAMING)
        return -ECANCELED;
    rc = j->discard ? 0 : write_part(j, data, len);
    if (rc != 0)
        return rc;
    j->received += len;
    /* a decoding error is kept (sticky) and reported when the trace ends */
    (void)trace_decoder_feed(j->dec, data, len);
    if (j->cmd)
        pl->host->cmd_progress(j->cmd, j->received, j->declared, "B");
    return 0;
}

/* The server's stop cut @j's stream short (@status): keep what arrived up
 * to its last whole record, a valid shorter trace. 0 with the .part cut
 * there and j->cut_note set; -1 (the headers were not through, or the
 * file cannot be cut) with @msg saying so. */
static int keep_cut_stream(profile_job *j, int status, char *msg, size_t n)
{
    uint64_t keep;

    if (j->discard || j->fd < 0 || trace_decoder_finish_cut(j->dec) != 0) {
        snprintf(msg, n, "ddmon stopped while the VM sent the trace (%" PRIu64 " of %" PRIu64
                 " bytes arrived: %s): nothing saved", j->received, j->declared,
                 j->discard ? "no FILE" : trace_decoder_error(j->dec) ? trace_decoder_error(j->dec)
                                                                      : strerror(-status));
        return -1;
    }
    keep = trace_decoder_bytes(j->dec) + (j->mark_state == 1 ? sizeof PROFILE_CUT_SHORT_LINE - 1 : 0);
    if (ftruncate(j->fd, (off_t)keep) != 0) {
        snprintf(msg, n, "ddmon stopped while the VM sent the trace and %s could not be cut to "
                 "its last whole record: %s", j->part, strerror(errno));
        return -1;
    }
    snprintf(j->cut_note, sizeof j->cut_note,
             "; only %" PRIu64 " of the %" PRIu64 " bytes arrived before ddmon stopped: kept up "
             "to the last whole record (%" PRIu64 " records)", j->received, j->declared,
             trace_decoder_info(j->dec)->records);
    return 0;
}

void profile_job_stream_end(profile_plugin *pl, ddm_vm *vm, int status, uint64_t received)
{
    profile_job *j = vm_job(pl, vm);
    char msg[PROFILE_MSG_MAX];
    (void)received;
    if (!j || j->state != J_STREAMING)
        return;
    /* cut by the stop: only the close of the VM's connection (-EPIPE) is
     * the stop's doing; a short packet (-EPROTO), a write error on the
     * .part, the cap keep their own messages below */
    if (status == -EPIPE && j->server_stopping) {
        if (keep_cut_stream(j, status, msg, sizeof msg) == 0)
            finish(j, NULL);
        else
            finish(j, msg);
        maybe_free(j);
        return;
    }
    switch (status) {
    case 0:
        /* the bytes are complete: the file is kept whatever the decoder says */
        if (trace_decoder_finish(j->dec) != 0) {
            snprintf(j->summary_error, sizeof j->summary_error, "%s", trace_decoder_error(j->dec));
            if (j->discard) /* --stop without FILE: nothing was saved */
                pl->host->log(pl->self, DDM_LOG_WARNING,
                              "%s: the stopped trace was discarded; it does not decode here: %s",
                              j->vm_key, j->summary_error);
            else
                pl->host->log(pl->self, DDM_LOG_WARNING,
                              "%s: the trace was saved to %s but does not decode here: %s",
                              j->vm_key, j->path, j->summary_error);
        }
        finish(j, NULL);
        maybe_free(j);
        return;
    case -EPROTO:
        snprintf(msg, sizeof msg, "the VM's packet ended before the %" PRIu64 " bytes it declared "
                 "(%" PRIu64 " arrived; no file written)", j->declared, j->received);
        break;
    case -EPIPE:
        snprintf(msg, sizeof msg, "the VM went away during the trace (%" PRIu64 " of %" PRIu64
                 " bytes arrived; no file written)", j->received, j->declared);
        break;
    case -ETIMEDOUT:
        snprintf(msg, sizeof msg, "the VM stopped sending in the middle of the trace (%" PRIu64
                 " of %" PRIu64 " bytes arrived; no file written)", j->received, j->declared);
        break;
    case -EFBIG:
        snprintf(msg, sizeof msg, "the trace of %" PRIu64 " bytes is larger than ddmon accepts "
                 "(--max-stream)", j->declared);
        break;
    default:
        snprintf(msg, sizeof msg, "the trace stopped: %s (no file written)", strerror(-status));
        break;
    }
    finish(j, msg);
    maybe_free(j);
}

void profile_job_vm_gone(profile_plugin *pl, ddm_vm *vm)
{
    profile_vm *pv = profile_vm_find(pl, vm);
    profile_job *j = pv ? pv->job : NULL;
    if (!j)
        return;
    pv->job = NULL;
    j->vm = NULL; /* pending callbacks still come (VM_GONE) and free the job */
    finish_gone(j);
    maybe_free(j);
}

void profile_job_server_stopping(profile_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    profile_vm *pv = profile_vm_find(pl, vm);
    profile_job *j = pv ? pv->job : NULL;

    /* a start that went out counts: the VM handles requests in order, so
     * a stop behind it stops what it started; a stop already sent (or a
     * `trace --stop` still asking what runs) is left as it is, and so is a
     * start the VM refused (its MPRQ not answered yet): what runs then is
     * not ddmon's (the app's own trace, "already in progress") */
    if (!j || j->stop_only || j->start_failed || (j->state != J_STARTING && j->state != J_RUNNING))
        return;
    /* as at its end, with the answer read: the core waits for it
     * (DDM_STOPPING_WAIT_MS), the trace is saved and the command told */
    j->server_stopping = 1;
    stop(j);
    if (j->state == J_DONE) { /* not sent: finish() said so */
        h->log(pl->self, DDM_LOG_WARNING,
               "%s: ddmon is stopping and could not stop the %s it started; stop it with "
               "'ddmon trace %s --stop'", j->vm_key, kind_name(j), j->vm_spec);
        maybe_free(j);
        return;
    }
    h->log(pl->self, DDM_LOG_MESSAGE, "%s: ddmon is stopping: %s stopped (%s sent)", j->vm_key,
           kind_name(j), j->device ? "MPRE" : j->sampling ? "SPSE" : "MPSE");
}

/* ------------------------------------------------------------ stop only */

/* MPRQ after the stop: no trace came (the stream would have begun before
 * this answer, replies keep their order); off means the VM stopped it. */
static void on_stop_confirm(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    char msg[PROFILE_MSG_MAX];
    int mode = profile_mprq_mode(reply);
    (void)self;
    (void)vm;
    j->pending--;
    if (reply->status == DDM_REPLY_VM_GONE || !j->vm) {
        finish_gone(j);
    } else if (j->state == J_STOPPING) {
        if (mode == PROFILE_MODE_OFF) {
            finish(j, NULL);
        } else {
            snprintf(msg, sizeof msg, "the VM sent no trace and MPRQ still says %s after the stop",
                     mode == PROFILE_MODE_TRACING ? "tracing" : mode == PROFILE_MODE_SAMPLING
                                                                  ? "sampling" : "nothing clear");
            finish(j, msg);
        }
    }
    maybe_free(j);
}

/* MPRQ before the stop: what runs decides MPSE or SPSE. */
static void on_stop_query(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    profile_job *j = ud;
    const ddm_host *h = j->pl->host;
    char buf[320], msg[PROFILE_MSG_MAX];
    int mode = profile_mprq_mode(reply), rc;
    (void)self;
    (void)vm;
    j->pending--;
    if (j->state != J_QUERYING) {
        maybe_free(j);
        return;
    }
    if (reply->status == DDM_REPLY_VM_GONE || !j->vm) {
        finish_gone(j);
    } else if (mode == PROFILE_MODE_UNKNOWN) {
        snprintf(msg, sizeof msg, "MPRQ did not say what runs: %s",
                 ddm_reply_describe(reply, buf, sizeof buf));
        finish(j, msg);
    } else if (mode == PROFILE_MODE_OFF) {
        j->nothing_ran = 1;
        finish(j, NULL);
    } else {
        j->sampling = mode == PROFILE_MODE_SAMPLING;
        j->state = J_STOPPING;
        rc = h->request(j->pl->self, j->vm, j->sampling ? PROFILE_CHUNK_SPSE : PROFILE_CHUNK_MPSE,
                        NULL, 0, j->pl->timeout_ms, on_stop_reply, j, NULL);
        if (rc == 0) {
            j->pending++;
            rc = h->request(j->pl->self, j->vm, PROFILE_CHUNK_MPRQ, NULL, 0, 0, on_stop_confirm, j,
                            NULL);
            if (rc == 0)
                j->pending++;
        }
        if (rc != 0) {
            snprintf(msg, sizeof msg, "the stop was not sent: %s", strerror(-rc));
            finish(j, msg);
        }
    }
    maybe_free(j);
}

int profile_job_stop(profile_plugin *pl, ddm_cmd *cmd, ddm_vm *vm, const char *path)
{
    const ddm_host *h = pl->host;
    const ddm_vm_info *info = h->vm_info(vm);
    profile_vm *pv = profile_vm_find(pl, vm);
    profile_job *j;
    char msg[PROFILE_MSG_MAX];
    int rc;

    if (pl->stopping) {
        h->cmd_finish(cmd, DDM_CMD_FAILED, "ddmon is stopping: stop the trace once a server runs");
        return -1;
    }
    if (pv && pv->job) {
        snprintf(msg, sizeof msg, "the trace of %s is ddmon's own: it stops when its 'ddmon trace' "
                 "command ends (--seconds, or Ctrl-C it)", info->key);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    if (!(j = job_new(pl, cmd, vm, info)))
        return -1;
    if (!(j->dec = trace_decoder_new()))
        return job_fail_unsent(j, "out of memory");
    j->stop_only = 1;
    j->discard = path == NULL;
    j->state = J_QUERYING;
    if (path) {
        snprintf(j->path, sizeof j->path, "%s", path);
        snprintf(j->part, sizeof j->part, "%s.part", path);
        /* as a trace's start: FILE checked before the VM is asked */
        rc = part_check_target(j->path);
        if (rc < 0) {
            snprintf(msg, sizeof msg, "cannot write %s: %s", j->path, part_strerror(rc));
            return job_fail_unsent(j, msg);
        }
        rc = part_open(j->part, 0, 0600);
        if (rc < 0) {
            snprintf(msg, sizeof msg, "cannot create %s: %s", j->part, part_strerror(rc));
            return job_fail_unsent(j, msg);
        }
        j->fd = rc;
    }
    if (!(pv = profile_vm_state(pl, vm)))
        return job_fail_unsent(j, "out of memory");
    pv->job = j;
    rc = h->request(pl->self, vm, PROFILE_CHUNK_MPRQ, NULL, 0, 0, on_stop_query, j, NULL);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "MPRQ was not sent: %s",
                 rc == -ENOTCONN ? "the VM is not ready for DDM requests"
                 : rc == -EPERM  ? "that chunk type is disabled (--chunks)"
                                 : strerror(-rc));
        finish(j, msg);
        maybe_free(j);
        return -1;
    }
    j->pending++;
    return 0;
}
