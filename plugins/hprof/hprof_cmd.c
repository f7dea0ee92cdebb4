/* SPDX-License-Identifier: Apache-2.0
 *
 * The hprof command and its batch:
 *   ddmon hprof VM [FILE] [--format=android|standard] [--on-device[=PATH]]
 *   ddmon hprof --out-dir=DIR VM... | all    (several VMs at once)
 * A VM whose FEAT lists hprof-heap-dump-streaming is dumped with HPDS to
 * FILE (default: APP-PID.hprof in the client's directory, or in DIR, and
 * APP-PID-2.hprof, -3... for further VMs of the command with that name); a VM
 * without it, or any VM with --on-device, writes the dump on the device
 * with HPDU (default /sdcard/APP.hprof, as ddmlib), and the message says
 * where it went. --out-dir is the command's own option or ddmon's global
 * one (host.cmd_out_dir).
 *
 * A batch is one command: it owns its outcomes, passes the bytes of all its
 * streams on as progress, and finishes the command when its last dump
 * ended: a record (one VM) or a table (several) with vm, pid, via, path,
 * bytes, sha256, seconds (and error). The status is OK only if every dump
 * landed.
 */
#include "build-config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/cmdutil.h"
#include "hprof.h"

#define USAGE                                                                              \
    "usage: hprof VM [FILE] [--format=android|standard] [--on-device[=PATH]]\n"            \
    "       hprof --out-dir=DIR VM...|all"

struct hprof_batch {
    hprof_plugin *pl;
    ddm_cmd *cmd;
    hprof_out_format fmt;
    size_t n, n_done;
    hprof_dump *dumps[HPROF_BATCH_MAX];     /* running; NULL once done */
    hprof_outcome *outcomes[HPROF_BATCH_MAX];
    int several;                            /* a table result, not a record */
    int starting;                           /* still starting dumps: do not finish yet */
    int asked_device;                       /* --on-device: HPDU by choice */
};

static const char *via_name(hprof_via v)
{
    return v == HPROF_VIA_STREAM ? "stream" : "device";
}

/* mkdir -p @dir (mode 0700: dumps hold the app's memory). 0 or -errno. */
static int make_dirs(const char *dir)
{
    char p[HPROF_PATH_MAX + 1];
    size_t len = strlen(dir);
    if (len == 0 || len > HPROF_PATH_MAX)
        return -ENAMETOOLONG;
    memcpy(p, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -errno;
        p[i] = c;
    }
    return 0;
}

static void batch_finish(hprof_batch *b)
{
    const ddm_host *h = b->pl->host;
    ddm_view *res;
    size_t ok = 0;
    const hprof_outcome *first_bad = NULL;
    char msg[2 * HPROF_MSG_MAX];

    for (size_t i = 0; i < b->n; i++) {
        if (b->outcomes[i]->ok)
            ok++;
        else if (!first_bad)
            first_bad = b->outcomes[i];
    }
    if (!b->several && b->n == 1) {
        const hprof_outcome *o = b->outcomes[0];
        res = h->cmd_result(b->cmd, DDM_VIEW_RECORD, "Heap dump");
        if (res) {
            h->view_begin(res);
            h->view_field_str(res, "vm", o->vm_key);
            h->view_field_int(res, "pid", o->pid);
            h->view_field_str(res, "via", via_name(o->via));
            h->view_field_str(res, "format", o->via == HPROF_VIA_DEVICE ? "android"
                                             : b->fmt == HPROF_OUT_STANDARD ? "standard"
                                                                            : "android");
            h->view_field_str(res, o->via == HPROF_VIA_STREAM ? "path" : "device_path", o->path);
            h->view_field_int(res, "bytes", (int64_t)o->bytes);
            h->view_field_str(res, "sha256", o->ok && o->via == HPROF_VIA_STREAM ? o->sha256 : NULL);
            h->view_field_double(res, "seconds", o->seconds);
            if (!o->ok)
                h->view_field_str(res, "error", o->error);
            h->view_commit(res);
        }
        if (!o->ok)
            snprintf(msg, sizeof msg, "heap dump of %s failed: %s", o->vm_key, o->error);
        else if (o->via == HPROF_VIA_DEVICE)
            snprintf(msg, sizeof msg,
                     "heap dump of %s written on the device to %s (%sfetch it with: adb pull %s)",
                     o->vm_key, o->path, b->asked_device ? "" : "the VM cannot stream dumps; ",
                     o->path);
        else
            snprintf(msg, sizeof msg, "heap dump of %s written to %s (%" PRIu64 " bytes, %.1f s)",
                     o->vm_key, o->path, o->bytes, o->seconds);
    } else {
        static const ddm_column cols[] = {
            {"vm", DDM_VAL_STR, NULL},      {"pid", DDM_VAL_INT, NULL},
            {"ok", DDM_VAL_BOOL, NULL},     {"via", DDM_VAL_STR, NULL},
            {"path", DDM_VAL_STR, NULL},    {"bytes", DDM_VAL_INT, "B"},
            {"sha256", DDM_VAL_STR, NULL},  {"seconds", DDM_VAL_DOUBLE, "s"},
            {"error", DDM_VAL_STR, NULL}};
        res = h->cmd_result(b->cmd, DDM_VIEW_TABLE, "Heap dumps");
        if (res) {
            h->view_set_columns(res, cols, sizeof cols / sizeof cols[0]);
            h->view_begin(res);
            for (size_t i = 0; i < b->n; i++) {
                const hprof_outcome *o = b->outcomes[i];
                h->view_row(res);
                h->view_str(res, o->vm_key);
                h->view_int(res, o->pid);
                h->view_bool(res, o->ok);
                h->view_str(res, via_name(o->via));
                h->view_str(res, o->path);
                h->view_int(res, (int64_t)o->bytes);
                h->view_str(res, o->ok && o->via == HPROF_VIA_STREAM ? o->sha256 : NULL);
                h->view_double(res, o->seconds);
                h->view_str(res, o->ok ? NULL : o->error);
            }
            h->view_commit(res);
        }
        if (first_bad)
            snprintf(msg, sizeof msg, "%zu of %zu heap dumps written; %s: %s", ok, b->n,
                     first_bad->vm_key, first_bad->error);
        else
            snprintf(msg, sizeof msg, "%zu heap dump%s written", b->n, b->n == 1 ? "" : "s");
    }
    h->cmd_finish(b->cmd, ok == b->n ? DDM_CMD_OK : DDM_CMD_FAILED, msg);
    for (size_t i = 0; i < b->n; i++)
        free(b->outcomes[i]);
    free(b);
}

void hprof_batch_dump_done(hprof_batch *b, hprof_dump *d, const hprof_outcome *out)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->dumps[i] != d)
            continue;
        b->dumps[i] = NULL;
        memcpy(b->outcomes[i], out, sizeof *out);
        b->n_done++;
        break;
    }
    if (b->n_done == b->n && !b->starting)
        batch_finish(b);
}

int hprof_batch_cancelled(const hprof_batch *b)
{
    const ddm_host *h = b->pl->host;
    return DDM_HOST_HAS(h, cmd_cancelled) && h->cmd_cancelled && h->cmd_cancelled(b->cmd);
}

void hprof_batch_progress(hprof_batch *b)
{
    uint64_t done = 0, total = 0;
    int total_known = 1;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t r, t;
        if (b->dumps[i]) {
            hprof_dump_progress(b->dumps[i], &r, &t);
            if (t == 0 && b->outcomes[i]->via == HPROF_VIA_STREAM)
                total_known = 0;
        } else {
            r = t = b->outcomes[i]->bytes;
        }
        done += r;
        total += t;
    }
    b->pl->host->cmd_progress(b->cmd, done, total_known ? total : 0, "B");
}

/* ------------------------------------------------------------ arguments */

typedef struct args {
    const char *vms[HPROF_BATCH_MAX];
    size_t n_vms;
    int all;
    const char *file;
    const char *out_dir;
    const char *device_path;   /* --on-device=PATH */
    int on_device;             /* --on-device given */
    hprof_out_format fmt;
} args;

static int usage(const ddm_host *h, ddm_cmd *cmd, const char *why)
{
    char msg[HPROF_MSG_MAX];
    snprintf(msg, sizeof msg, "%s\n%s", why, USAGE);
    h->cmd_finish(cmd, DDM_CMD_USAGE, msg);
    return 0;
}

static int parse(hprof_plugin *pl, ddm_cmd *cmd, int argc, const char *const *argv, args *a)
{
    const ddm_host *h = pl->host;
    const char *pos[HPROF_BATCH_MAX + 1];
    size_t n_pos = 0;

    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strncmp(s, "--format", 8) == 0 && (s[8] == '=' || s[8] == '\0')) {
            const char *v = s[8] == '=' ? s + 9 : (i + 1 < argc ? argv[++i] : "");
            if (strcmp(v, "android") == 0)
                a->fmt = HPROF_OUT_ANDROID;
            else if (strcmp(v, "standard") == 0)
                a->fmt = HPROF_OUT_STANDARD;
            else
                return usage(h, cmd, "--format: android or standard"), -1;
        } else if (strcmp(s, "--on-device") == 0) {
            a->on_device = 1;
            if (i + 1 < argc && argv[i + 1][0] == '/')
                a->device_path = argv[++i]; /* --on-device PATH */
        } else if (strncmp(s, "--on-device=", 12) == 0) {
            a->on_device = 1;
            a->device_path = s + 12;
            if (a->device_path[0] != '/')
                return usage(h, cmd, "--on-device: an absolute path on the device"), -1;
        } else if (strncmp(s, "--out-dir", 9) == 0 && (s[9] == '=' || s[9] == '\0')) {
            a->out_dir = s[9] == '=' ? s + 10 : (i + 1 < argc ? argv[++i] : "");
            if (!*a->out_dir)
                return usage(h, cmd, "--out-dir: a directory"), -1;
        } else if (s[0] == '-' && s[1] != '\0') {
            char why[128];
            snprintf(why, sizeof why, "unknown option %.64s", s);
            return usage(h, cmd, why), -1;
        } else {
            if (n_pos > HPROF_BATCH_MAX)
                return usage(h, cmd, "too many VMs"), -1;
            pos[n_pos++] = s;
        }
    }
    if (!a->out_dir && DDM_HOST_HAS(h, cmd_out_dir) && h->cmd_out_dir) {
        /* ddmon's own --out-dir: `VM FILE` keeps its meaning (FILE wins) */
        a->out_dir = h->cmd_out_dir(cmd);
        if (a->out_dir && n_pos == 2 && strcmp(pos[0], "all") != 0 &&
            !h->find_vm(pl->self, pos[1]))
            a->out_dir = NULL;
    }
    if (n_pos == 0)
        return usage(h, cmd, "which VM?"), -1;
    if (a->out_dir) {
        for (size_t i = 0; i < n_pos; i++) {
            if (strcmp(pos[i], "all") == 0)
                a->all = 1;
            else if (a->n_vms < HPROF_BATCH_MAX)
                a->vms[a->n_vms++] = pos[i];
            else
                return usage(h, cmd, "too many VMs"), -1;
        }
        return 0;
    }
    if (n_pos > 2)
        return usage(h, cmd, "several VMs need --out-dir=DIR"), -1;
    if (strcmp(pos[0], "all") == 0)
        return usage(h, cmd, "'all' needs --out-dir=DIR"), -1;
    a->vms[a->n_vms++] = pos[0];
    a->file = n_pos == 2 ? pos[1] : NULL;
    return 0;
}

/* ------------------------------------------------------------ running */

typedef struct collect {
    ddm_vm *vms[HPROF_BATCH_MAX];
    size_t n;
} collect;

static int collect_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    collect *c = ud;
    (void)self;
    if (c->n < HPROF_BATCH_MAX)
        c->vms[c->n++] = vm;
    return c->n >= HPROF_BATCH_MAX;
}

/* Is @path the local file of one of the first @n dumps of @b? */
static int name_taken(const hprof_batch *b, size_t n, const char *path)
{
    for (size_t k = 0; k < n; k++)
        if (b->outcomes[k]->via == HPROF_VIA_STREAM && strcmp(b->outcomes[k]->path, path) == 0)
            return 1;
    return 0;
}

/* Start one VM's dump; on failure its outcome is recorded at once. */
static void start_one(hprof_batch *b, const args *a, ddm_vm *vm)
{
    const ddm_host *h = b->pl->host;
    const ddm_vm_info *info = h->vm_info(vm);
    size_t i = b->n++;
    hprof_outcome *o = calloc(1, sizeof *o);
    char name[96], rel[HPROF_PATH_MAX + 1], path[HPROF_PATH_MAX + 1], dev[HPROF_PATH_MAX + 1];
    char err[HPROF_MSG_MAX];
    hprof_via via = !a->on_device && plugin_has_feature(info, HPROF_FEATURE_STREAMING)
                        ? HPROF_VIA_STREAM : HPROF_VIA_DEVICE;

    b->outcomes[i] = o;
    if (!o) {
        b->n--;
        return;
    }
    snprintf(o->vm_key, sizeof o->vm_key, "%s", info->key ? info->key : "?");
    o->pid = info->pid;
    o->via = via;
    plugin_safe_file_name(info->app_name && *info->app_name ? info->app_name : info->key, NULL, "vm",
                          name, sizeof name);
    if (a->file)
        snprintf(rel, sizeof rel, "%s", a->file);
    else if (a->out_dir)
        snprintf(rel, sizeof rel, "%s/%s-%" PRIu32 ".hprof", a->out_dir, name, info->pid);
    else
        snprintf(rel, sizeof rel, "%s-%" PRIu32 ".hprof", name, info->pid);
    if (via == HPROF_VIA_STREAM && a->out_dir && !a->file) {
        char dir[HPROF_PATH_MAX + 1];
        int rc = plugin_client_path(h, b->cmd, a->out_dir, dir, sizeof dir, HPROF_PATH_MAX);
        if (rc == 0)
            rc = make_dirs(dir);
        if (rc != 0) {
            snprintf(o->error, sizeof o->error, "cannot create the directory %s: %s", a->out_dir,
                     strerror(-rc));
            b->n_done++;
            return;
        }
    }
    if (a->device_path)
        snprintf(dev, sizeof dev, "%s", a->device_path);
    else
        snprintf(dev, sizeof dev, "/sdcard/%s.hprof", name);
    if (plugin_client_path(h, b->cmd, rel, path, sizeof path, HPROF_PATH_MAX) != 0) {
        snprintf(o->error, sizeof o->error, "path too long");
        b->n_done++;
        return;
    }
    /* Two VMs of one command with the same default name (the same app
     * and pid on two devices): the later ones get APP-PID-2.hprof, -3...
     * instead of a second dump to the same file. */
    for (unsigned k = 2; via == HPROF_VIA_STREAM && !a->file && name_taken(b, i, path); k++) {
        if (a->out_dir)
            snprintf(rel, sizeof rel, "%s/%s-%" PRIu32 "-%u.hprof", a->out_dir, name, info->pid, k);
        else
            snprintf(rel, sizeof rel, "%s-%" PRIu32 "-%u.hprof", name, info->pid, k);
        if (plugin_client_path(h, b->cmd, rel, path, sizeof path, HPROF_PATH_MAX) != 0) {
            snprintf(o->error, sizeof o->error, "path too long");
            b->n_done++;
            return;
        }
    }
    if (via == HPROF_VIA_STREAM) {
        snprintf(o->path, sizeof o->path, "%s", path); /* for name_taken */
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(o->error, sizeof o->error, "%s is a directory (give a file name, or "
                     "--out-dir=%s)", path, path);
            snprintf(o->path, sizeof o->path, "%s", path);
            b->n_done++;
            return;
        }
    }
    b->dumps[i] = hprof_dump_start(b->pl, b, vm, via, path, b->fmt, dev, err, sizeof err);
    if (!b->dumps[i]) {
        snprintf(o->error, sizeof o->error, "%s", err);
        snprintf(o->path, sizeof o->path, "%s", via == HPROF_VIA_STREAM ? path : dev);
        b->n_done++;
    }
}

int hprof_cmd_run(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud)
{
    hprof_plugin *pl = ud;
    const ddm_host *h = pl->host;
    hprof_batch *b;
    collect c;
    args a;

    (void)self;
    if (parse(pl, cmd, argc, argv, &a) != 0)
        return 0;
    memset(&c, 0, sizeof c);
    if (a.all)
        h->foreach_vm(pl->self, collect_vm, &c);
    for (size_t i = 0; i < a.n_vms; i++) {
        /* the core's resolution and message: one VM, or why not */
        ddm_vm *vm = h->cmd_find_vm(cmd, a.vms[i]);
        size_t j;
        if (!vm)
            return 0; /* cmd_find_vm finished the command */
        if (plugin_refuse_plain_jvm(h, self, cmd, vm, a.vms[i], "hprof"))
            return 0;
        for (j = 0; j < c.n && c.vms[j] != vm; j++)
            ;
        if (j == c.n && c.n < HPROF_BATCH_MAX)
            c.vms[c.n++] = vm;
    }
    if (c.n == 0) {
        h->cmd_finish(cmd, DDM_CMD_NOT_FOUND, "no DDM VM to dump");
        return 0;
    }
    b = calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->pl = pl;
    b->cmd = cmd;
    b->fmt = a.fmt;
    b->several = a.out_dir != NULL && (a.all || c.n > 1);
    b->asked_device = a.on_device;
    b->starting = 1;
    for (size_t i = 0; i < c.n; i++)
        start_one(b, &a, c.vms[i]);
    b->starting = 0;
    if (b->n_done == b->n)
        batch_finish(b);
    return 0;
}
