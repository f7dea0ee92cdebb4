/* SPDX-License-Identifier: Apache-2.0
 *
 * The profile plugin's commands:
 *   ddmon trace VM FILE --sampling[=INTERVAL_US] | --tracing
 *               [--seconds N] [--buffer SIZE] [--on-device[=PATH]]
 *     A VM whose FEAT lists method-trace-profiling-streaming (tracing) or
 *     method-sample-profiling (sampling) is traced with MPSS/SPSS and its
 *     trace streamed into FILE (profile_job.c); a VM with only
 *     method-trace-profiling, or --on-device, traces into a file on the
 *     device (MPRS/MPRE; default /sdcard/APP.trace, as ddmlib). --seconds
 *     defaults to 10; 0 traces until Ctrl-C. --buffer is the VM's trace
 *     buffer (default 8 MiB; K, M, G suffixes).
 *   ddmon trace VM --stop [FILE]
 *     Stops a trace this ddmon did not start or lost (an app's own, or one
 *     a server that went away left running; profile_job_stop): its trace,
 *     if one comes back, is saved to FILE, or dropped without FILE.
 *   ddmon trace-summary FILE [--top N] [--threads]
 *     Decodes any .trace file, read in blocks from a timer so the main loop
 *     never waits on a big file: the top N methods (default 20) by
 *     inclusive and by exclusive time with their calls, or with --threads
 *     the threads; the message sums the trace up.
 */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/cmdutil.h"
#include "../common/numparse.h"
#include "../common/partfile.h"
#include "profile.h"

#define TRACE_USAGE                                                                       \
    "usage: trace VM FILE --sampling[=INTERVAL_US] | --tracing [--seconds N] [--buffer SIZE] " \
    "[--on-device[=PATH]]\n       trace VM --stop [FILE]"
#define SUMMARY_USAGE "usage: trace-summary FILE [--top N] [--threads]"
#define READ_STEP ((size_t)1 << 20)

static int usage(const ddm_host *h, ddm_cmd *cmd, const char *why, const char *use)
{
    char msg[PROFILE_MSG_MAX];
    snprintf(msg, sizeof msg, "%s\n%s", why, use);
    h->cmd_finish(cmd, DDM_CMD_USAGE, msg);
    return 0;
}

/* A decimal count with an optional K/M/G (binary) suffix, at most @max. */
static int parse_size(const char *s, uint64_t max, uint64_t *out)
{
    return parse_number(s, NUM_SUFFIX, max, out);
}

/* FILE as the client gave it, made absolute into @out: 0, or -1 with the
 * command finished (too long: a usage error; a directory: a file error,
 * exit 1 as hprof's, the arguments being well formed). */
static int client_file(const ddm_host *h, ddm_cmd *cmd, const char *arg, char *out, size_t out_size)
{
    struct stat st;
    if (plugin_client_path(h, cmd, arg, out, out_size, PROFILE_PATH_MAX) != 0) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "path too long");
        return -1;
    }
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
        char msg[PROFILE_MSG_MAX];
        snprintf(msg, sizeof msg, "%s is a directory (give a file name)", out);
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    return 0;
}

int profile_cmd_trace(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    profile_plugin *pl = ud;
    const ddm_host *h = pl->host;
    const char *pos[3];
    size_t n_pos = 0;
    int tracing = 0, sampling = 0, stop = 0;
    uint64_t v;
    profile_args a;
    char dev[PROFILE_PATH_MAX + 1], name[96], why[160];
    ddm_vm *vm;
    const ddm_vm_info *info;

    (void)self;
    memset(&a, 0, sizeof a);
    a.interval_us = PROFILE_DEFAULT_INTERVAL_US;
    a.seconds = PROFILE_DEFAULT_SECONDS;
    a.buffer = PROFILE_DEFAULT_BUFFER;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--tracing") == 0) {
            tracing = 1;
        } else if (strcmp(s, "--stop") == 0) {
            stop = 1;
        } else if (strcmp(s, "--sampling") == 0) {
            sampling = 1;
        } else if (strncmp(s, "--sampling=", 11) == 0) {
            sampling = 1;
            if (parse_size(s + 11, 10000000, &v) != 0 || v == 0)
                return usage(h, cmd, "--sampling=INTERVAL_US: 1 to 10000000 microseconds", TRACE_USAGE);
            a.interval_us = (uint32_t)v;
        } else if (strcmp(s, "--seconds") == 0 || strncmp(s, "--seconds=", 10) == 0) {
            const char *val = s[9] == '=' ? s + 10 : (i + 1 < argc ? argv[++i] : "");
            if (parse_size(val, 86400, &v) != 0)
                return usage(h, cmd, "--seconds: 0 (until Ctrl-C) to 86400", TRACE_USAGE);
            a.seconds = (uint32_t)v;
        } else if (strcmp(s, "--buffer") == 0 || strncmp(s, "--buffer=", 9) == 0) {
            const char *val = s[8] == '=' ? s + 9 : (i + 1 < argc ? argv[++i] : "");
            if (parse_size(val, UINT32_MAX, &v) != 0 || v < 1024)
                return usage(h, cmd, "--buffer: 1K to 4G - 1 bytes (K, M, G suffixes)", TRACE_USAGE);
            a.buffer = (uint32_t)v;
        } else if (strcmp(s, "--on-device") == 0) {
            a.on_device = 1;
        } else if (strncmp(s, "--on-device=", 12) == 0) {
            a.on_device = 1;
            a.device_path = s + 12;
            if (a.device_path[0] != '/' || strlen(a.device_path) > PROFILE_PATH_MAX)
                return usage(h, cmd, "--on-device=PATH: an absolute path on the device", TRACE_USAGE);
        } else if (s[0] == '-' && s[1] != '\0') {
            snprintf(why, sizeof why, "unknown option %.64s", s);
            return usage(h, cmd, why, TRACE_USAGE);
        } else if (n_pos < 2) {
            pos[n_pos++] = s;
        } else {
            return usage(h, cmd, "too many arguments", TRACE_USAGE);
        }
    }
    if (stop && (tracing || sampling || a.on_device))
        return usage(h, cmd, "--stop stops what runs: no --tracing, --sampling or --on-device",
                     TRACE_USAGE);
    if (tracing == sampling && !stop)
        return usage(h, cmd, "say --tracing or --sampling (or --stop)", TRACE_USAGE);
    if (n_pos < 1)
        return usage(h, cmd, "which VM?", TRACE_USAGE);
    a.sampling = sampling;
    vm = h->cmd_find_vm(cmd, pos[0]);
    if (!vm)
        return 0; /* cmd_find_vm finished the command */
    if (plugin_refuse_plain_jvm(h, self, cmd, vm, pos[0], "trace"))
        return 0;
    if (stop) {
        if (n_pos == 2 && client_file(h, cmd, pos[1], a.path, sizeof a.path) != 0)
            return 0;
        profile_job_stop(pl, cmd, vm, n_pos == 2 ? a.path : NULL);
        return 0;
    }
    info = h->vm_info(vm);
    if (sampling && !plugin_has_feature(info, PROFILE_FEATURE_SAMPLING)) {
        /* --tracing only where it would work */
        int can_trace = plugin_has_feature(info, PROFILE_FEATURE_STREAMING) ||
                        plugin_has_feature(info, PROFILE_FEATURE_TRACING);
        char msg[PROFILE_MSG_MAX];
        snprintf(msg, sizeof msg,
                 "this VM cannot sample (its FEAT does not list method-sample-profiling)%s",
                 can_trace ? "; try --tracing"
                 : info->n_features ? ", nor method tracing"
                                    : " (it sent no features yet)");
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (!a.on_device && !plugin_has_feature(info, sampling ? PROFILE_FEATURE_SAMPLING
                                                            : PROFILE_FEATURE_STREAMING)) {
        if (!plugin_has_feature(info, PROFILE_FEATURE_TRACING)) {
            char msg[PROFILE_MSG_MAX];
            snprintf(msg, sizeof msg,
                     "this VM offers no method tracing (its FEAT lists none of "
                     "method-trace-profiling, -streaming, method-sample-profiling)%s",
                     info->n_features ? "" : " (it sent no features yet)");
            h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
            return 0;
        }
        a.on_device = 1; /* it can only write the trace on the device */
    }
    if (n_pos < 2 && !a.on_device)
        return usage(h, cmd, "which file? (or --on-device)", TRACE_USAGE);
    if (a.on_device && sampling) {
        h->cmd_finish(cmd, DDM_CMD_USAGE, "sampling is only streamed (SPSS): no --on-device");
        return 0;
    }
    if (a.on_device && !a.device_path) {
        plugin_safe_file_name(info->app_name && *info->app_name ? info->app_name : info->key, NULL,
                              "vm", name, sizeof name);
        snprintf(dev, sizeof dev, "/sdcard/%s.trace", name);
        a.device_path = dev;
    }
    if (!a.on_device && client_file(h, cmd, pos[1], a.path, sizeof a.path) != 0)
        return 0;
    profile_job_start(pl, cmd, vm, &a);
    return 0;
}

/* ------------------------------------------------------------ trace-summary */

typedef struct summary_job {
    profile_plugin *pl;
    ddm_cmd *cmd;
    int fd;
    uint64_t size;
    size_t top;
    int threads;
    char path[PROFILE_PATH_MAX + 1];
    trace_decoder *dec;
    uint8_t *buf;
} summary_job;

static void summary_free(summary_job *s)
{
    if (s->fd >= 0)
        close(s->fd);
    trace_decoder_free(s->dec);
    free(s->buf);
    free(s);
}

static void summary_finish(summary_job *s)
{
    const ddm_host *h = s->pl->host;
    char line[256], msg[PROFILE_MSG_MAX];
    ddm_view *res;

    if (trace_decoder_finish(s->dec) != 0) {
        snprintf(msg, sizeof msg, "%s: %s", s->path, trace_decoder_error(s->dec));
        h->cmd_finish(s->cmd, DDM_CMD_FAILED, msg);
        return;
    }
    res = h->cmd_result(s->cmd, DDM_VIEW_TABLE, s->threads ? "Threads" : "Top methods");
    if (res) {
        if (s->threads)
            profile_fill_threads(h, res, s->dec);
        else
            profile_fill_methods(h, res, s->dec, s->top);
    }
    profile_summary_line(s->dec, line, sizeof line);
    snprintf(msg, sizeof msg, "%s: %s", s->path, line);
    h->cmd_finish(s->cmd, DDM_CMD_OK, msg);
}

/* A block of the file per tick: the loop never waits on a whole file. */
static int summary_tick(ddm_plugin *self, void *ud)
{
    summary_job *s = ud;
    const ddm_host *h = s->pl->host;
    char msg[PROFILE_MSG_MAX];
    ssize_t r;
    (void)self;

    if (h->cmd_cancelled(s->cmd)) {
        h->cmd_finish(s->cmd, DDM_CMD_FAILED, "cancelled");
        return 0;
    }
    r = read(s->fd, s->buf, READ_STEP);
    if (r < 0 && errno == EINTR)
        return 1;
    if (r < 0) {
        snprintf(msg, sizeof msg, "cannot read %s: %s", s->path, strerror(errno));
        h->cmd_finish(s->cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    if (r == 0) {
        summary_finish(s);
        return 0;
    }
    if (trace_decoder_feed(s->dec, s->buf, (size_t)r) != 0) {
        snprintf(msg, sizeof msg, "%s: %s", s->path, trace_decoder_error(s->dec));
        h->cmd_finish(s->cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    h->cmd_progress(s->cmd, trace_decoder_bytes(s->dec), s->size, "B");
    return 1;
}

static void summary_ud_free(void *ud)
{
    summary_free(ud);
}

int profile_cmd_summary(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    profile_plugin *pl = ud;
    const ddm_host *h = pl->host;
    const char *file = NULL;
    summary_job *s;
    uint64_t v;
    unsigned long long size = 0;
    int rc;
    char msg[PROFILE_MSG_MAX];

    (void)self;
    s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->fd = -1;
    s->pl = pl;
    s->cmd = cmd;
    s->top = PROFILE_DEFAULT_TOP;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--top") == 0 || strncmp(a, "--top=", 6) == 0) {
            const char *val = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : "");
            if (parse_size(val, PROFILE_MAX_TOP, &v) != 0 || v == 0) {
                summary_free(s);
                return usage(h, cmd, "--top: 1 to 1000", SUMMARY_USAGE);
            }
            s->top = (size_t)v;
        } else if (strcmp(a, "--threads") == 0) {
            s->threads = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            char why[128];
            snprintf(why, sizeof why, "unknown option %.64s", a);
            summary_free(s);
            return usage(h, cmd, why, SUMMARY_USAGE);
        } else if (!file) {
            file = a;
        } else {
            summary_free(s);
            return usage(h, cmd, "one file at a time", SUMMARY_USAGE);
        }
    }
    if (!file) {
        summary_free(s);
        return usage(h, cmd, "which file?", SUMMARY_USAGE);
    }
    if (plugin_client_path(h, cmd, file, s->path, sizeof s->path, PROFILE_PATH_MAX) != 0) {
        summary_free(s);
        h->cmd_finish(cmd, DDM_CMD_USAGE, "path too long");
        return 0;
    }
    /* never blocks: a FIFO under that name is refused, not waited on */
    rc = part_open_read(s->path, &size);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "cannot read %s: %s", s->path, part_strerror(rc));
        summary_free(s);
        /* a file error (exit 1): NOT_FOUND (3) means no VM or view matched */
        h->cmd_finish(cmd, DDM_CMD_FAILED, msg);
        return 0;
    }
    s->fd = rc;
    s->size = (uint64_t)size;
    s->dec = trace_decoder_new();
    s->buf = malloc(READ_STEP);
    if (!s->dec || !s->buf) {
        summary_free(s);
        return -ENOMEM;
    }
    /* the timer owns the job from here (its ud_free closes it) */
    if (!h->timer_add(pl->self, 0, summary_tick, s, summary_ud_free))
        h->cmd_finish(cmd, DDM_CMD_FAILED, "cannot schedule the read");
    return 0;
}
