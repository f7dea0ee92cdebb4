/* SPDX-License-Identifier: Apache-2.0
 *
 * One heap dump of one VM (hprof.h): the request, the file and the end.
 *
 *   HPDS (stream): FILE.part is opened, HPDS is sent; the VM's HPDS event
 *   comes in pieces (hprof.c hands them here) and goes through
 *   hprof_stream (checked; converted with --format=standard) into the
 *   .part file, hashed as written; then the VM's empty reply. When both the
 *   stream ended complete and checked and the reply said yes, the .part is
 *   renamed to FILE. ART sends the event before the reply; if the reply
 *   comes first, the event may still begin within HPROF_EVENT_GRACE_MS.
 *   HPDU (device): HPDU with the device path; the VM writes the file and
 *   answers u1 0.
 *
 * Any failure (the VM says no, goes away, sends fewer bytes than it
 * declared, a malformed dump, a write error) removes the .part and says how
 * many bytes arrived: no file that looks complete is ever left behind.
 * FILE must be absent or a regular file (partfile.h: a device, FIFO or
 * symlink is refused before HPDS goes out and again at the rename), and a
 * FILE.part that another dump is writing is refused at once.
 *
 * Lifetime: a dump lives until it has finished AND its request's callback
 * has run (the core calls it exactly once, also when the VM goes away);
 * whichever comes last frees it. The VM's state points at it until then, so
 * a second dump of the same VM is refused while one runs.
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
#include "hprof.h"

typedef enum { STREAM_WAITING = 0, STREAM_RUNNING, STREAM_COMPLETE, STREAM_FAILED } stream_state;

struct hprof_dump {
    hprof_plugin *pl;
    hprof_batch *batch;
    ddm_vm *vm;
    hprof_via via;
    hprof_out_format fmt;
    char path[HPROF_PATH_MAX + 1];     /* FILE (stream) */
    char part[HPROF_PATH_MAX + 8];     /* FILE.part */
    char device_path[HPROF_PATH_MAX + 1];
    int fd;                            /* the .part, -1 when closed */
    hprof_stream *conv;
    hprof_hash *hash;
    uint64_t declared, received, written;
    stream_state stream;
    int replied;                       /* the VM's reply said yes */
    int request_pending;               /* our request's callback has not run yet */
    int finished;                      /* the outcome went to the batch */
    uint32_t grace_timer;
    struct timespec started;
};

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void maybe_free(hprof_dump *d)
{
    if (!d->finished || d->request_pending)
        return;
    free(d);
}

static void detach_from_vm(hprof_dump *d)
{
    hprof_vm *vs = d->pl->host->vm_get_data(d->pl->self, d->vm);
    if (vs && vs->dump == d)
        vs->dump = NULL;
}

static void close_file(hprof_dump *d)
{
    if (d->conv) {
        hprof_stream_free(d->conv);
        d->conv = NULL;
    }
    if (d->fd >= 0) { /* still open: the dump failed */
        part_abandon(d->fd, d->part);
        d->fd = -1;
    }
}

/* End the dump with its outcome: success renames the .part; any failure
 * removes it. @error NULL = success. */
static void finish(hprof_dump *d, const char *error)
{
    const ddm_host *h = d->pl->host;
    const ddm_vm_info *info = h->vm_info(d->vm);
    hprof_outcome out;

    if (d->finished)
        return;
    d->finished = 1;
    if (d->grace_timer) {
        h->timer_remove(d->pl->self, d->grace_timer);
        d->grace_timer = 0;
    }
    memset(&out, 0, sizeof out);
    snprintf(out.vm_key, sizeof out.vm_key, "%s", info && info->key ? info->key : "?");
    out.pid = info ? info->pid : 0;
    out.via = d->via;
    out.seconds = seconds_since(&d->started);
    out.bytes = d->written;
    snprintf(out.path, sizeof out.path, "%s", d->via == HPROF_VIA_STREAM ? d->path : d->device_path);

    if (!error && d->via == HPROF_VIA_STREAM) {
        int rc = part_commit(d->fd, d->part, d->path, out.error, sizeof out.error);
        d->fd = -1; /* closed, and on failure the .part removed */
        if (rc != 0)
            error = out.error;
        else
            hprof_hash_hex(d->hash, out.sha256);
    }
    close_file(d); /* a failed dump's .part goes */
    if (error) {
        if (error != out.error)
            snprintf(out.error, sizeof out.error, "%s", error);
        out.ok = 0;
        out.bytes = d->written;
    } else {
        hprof_vm *vs = h->vm_get_data(d->pl->self, d->vm);
        out.ok = 1;
        if (vs)
            vs->dumps++;
    }
    hprof_hash_free(d->hash);
    d->hash = NULL;
    detach_from_vm(d);
    hprof_batch_dump_done(d->batch, d, &out);
    maybe_free(d);
}

/* Fail with @what, and how far the dump got once bytes were coming. */
static void finish_failed(hprof_dump *d, const char *what)
{
    char msg[HPROF_MSG_MAX];
    if (d->via == HPROF_VIA_STREAM && d->stream != STREAM_WAITING)
        snprintf(msg, sizeof msg, "%s (%" PRIu64 " of %" PRIu64 " bytes arrived; no file written)",
                 what, d->received, d->declared);
    else
        snprintf(msg, sizeof msg, "%s", what);
    finish(d, msg);
}

/* ------------------------------------------------------------ the file */

/* Append to the .part; @hash: hash the bytes as they go (android format:
 * the output is final as written). */
static int append(hprof_dump *d, const uint8_t *p, size_t n, int hash)
{
    while (n > 0) {
        ssize_t w = write(d->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (hash)
            hprof_hash_update(d->hash, p, (size_t)w);
        d->written += (uint64_t)w;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_out(void *ud, const uint8_t *p, size_t n)
{
    return append(ud, p, n, 1);
}

/* Standard format: lengths are patched later, so the file is hashed when
 * complete (hash_file). */
static int write_out_unhashed(void *ud, const uint8_t *p, size_t n)
{
    return append(ud, p, n, 0);
}

/* Patch bytes written earlier (a converted record's length). The hash
 * must cover the final bytes, so a standard-format dump is hashed when it
 * is complete, from the file (hprof_dump_stream_end). */
static int patch_out(void *ud, uint64_t off, const uint8_t *p, size_t n)
{
    hprof_dump *d = ud;
    while (n > 0) {
        ssize_t w = pwrite(d->fd, p, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        off += (uint64_t)w;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Hash the finished file from disk (standard format: lengths were patched). */
static int hash_file(hprof_dump *d)
{
    uint8_t buf[1 << 16];
    off_t off = 0;
    for (;;) {
        ssize_t r = pread(d->fd, buf, sizeof buf, off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return 0;
        hprof_hash_update(d->hash, buf, (size_t)r);
        off += r;
    }
}

/* ------------------------------------------------------------ requests */

static const char *reply_problem(const ddm_reply *reply, char *buf, size_t n)
{
    if (reply->status == DDM_REPLY_TIMEOUT)
        return "no answer from the VM in time (option hprof.timeout)";
    if (reply->status == DDM_REPLY_CHUNK && reply->type != DDM_CHUNK_FAIL)
        return "the VM answered with an unexpected chunk";
    return ddm_reply_describe(reply, buf, n);
}

static int grace_over(ddm_plugin *self, void *ud)
{
    hprof_dump *d = ud;
    (void)self;
    d->grace_timer = 0;
    if (!d->finished && d->stream == STREAM_WAITING)
        finish_failed(d, "the VM said the dump was done but sent no dump");
    return 0;
}

static void hpds_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    hprof_dump *d = ud;
    char buf[320];
    (void)self;
    (void)vm;
    d->request_pending = 0;
    if (d->finished) {
        maybe_free(d);
        return;
    }
    if (reply->status == DDM_REPLY_EMPTY ||
        (reply->status == DDM_REPLY_CHUNK && reply->type == HPROF_CHUNK_HPDS)) {
        d->replied = 1;
        if (d->stream == STREAM_COMPLETE)
            finish(d, NULL);
        else if (d->stream == STREAM_WAITING)
            d->grace_timer = d->pl->host->timer_add(d->pl->self, HPROF_EVENT_GRACE_MS, grace_over,
                                                    d, NULL);
        /* STREAM_RUNNING cannot be (the reply queues behind the event) */
        return;
    }
    {
        char msg[HPROF_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", reply_problem(reply, buf, sizeof buf));
        finish_failed(d, msg);
    }
}

static void hpdu_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    hprof_dump *d = ud;
    char buf[320], msg[HPROF_MSG_MAX];
    (void)self;
    (void)vm;
    d->request_pending = 0;
    if (d->finished) {
        maybe_free(d);
        return;
    }
    if (reply->status == DDM_REPLY_CHUNK && reply->type == HPROF_CHUNK_HPDU && reply->len >= 1) {
        if (reply->data[0] == 0) {
            finish(d, NULL);
        } else {
            snprintf(msg, sizeof msg, "the VM could not write %s (result %u)", d->device_path,
                     (unsigned)reply->data[0]);
            finish(d, msg);
        }
        return;
    }
    snprintf(msg, sizeof msg, "heap dump to the device failed: %s",
             reply_problem(reply, buf, sizeof buf));
    finish(d, msg);
}

hprof_dump *hprof_dump_start(hprof_plugin *pl, hprof_batch *batch, ddm_vm *vm, hprof_via via,
                             const char *path, hprof_out_format fmt, const char *device_path,
                             char *err, size_t err_len)
{
    const ddm_host *h = pl->host;
    hprof_vm *vs = hprof_vm_state(pl, vm);
    hprof_dump *d;
    int rc;

    if (!vs) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (vs->dump) {
        snprintf(err, err_len, "a heap dump of this VM is already running");
        return NULL;
    }
    d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    d->pl = pl;
    d->batch = batch;
    d->vm = vm;
    d->via = via;
    d->fmt = fmt;
    d->fd = -1;
    clock_gettime(CLOCK_MONOTONIC, &d->started);

    if (via == HPROF_VIA_STREAM) {
        snprintf(d->path, sizeof d->path, "%s", path);
        snprintf(d->part, sizeof d->part, "%s.part", path);
        d->hash = hprof_hash_new();
        /* FILE a device, FIFO or symlink: refused before the VM works */
        rc = part_check_target(path);
        if (rc != 0) {
            snprintf(err, err_len, "cannot write %s: %s", path, part_strerror(rc));
            hprof_hash_free(d->hash);
            free(d);
            return NULL;
        }
        /* a FIFO or device named FILE.part is refused, never waited on;
         * one that another dump is writing is refused (PART_BUSY) */
        d->fd = part_open(d->part, 1, 0600);
        if (d->fd < 0 || !d->hash) {
            snprintf(err, err_len, "cannot create %s: %s", d->part,
                     d->fd < 0 ? part_strerror(d->fd) : "out of memory");
            close_file(d);
            hprof_hash_free(d->hash);
            free(d);
            return NULL;
        }
        d->conv = hprof_stream_new(fmt, fmt == HPROF_OUT_STANDARD ? write_out_unhashed : write_out,
                                   patch_out, d);
        if (!d->conv) {
            snprintf(err, err_len, "out of memory");
            close_file(d);
            hprof_hash_free(d->hash);
            free(d);
            return NULL;
        }
        rc = h->request(pl->self, vm, HPROF_CHUNK_HPDS, NULL, 0, pl->timeout_ms, hpds_reply, d,
                        NULL);
    } else {
        ddm_writer w;
        uint8_t *payload;
        size_t len = 0;
        snprintf(d->device_path, sizeof d->device_path, "%s", device_path);
        ddm_writer_init(&w, 4 * HPROF_PATH_MAX + 8);
        ddm_write_lstr(&w, device_path);
        payload = ddm_writer_take(&w, &len);
        rc = payload ? h->request(pl->self, vm, HPROF_CHUNK_HPDU, payload, len, pl->timeout_ms,
                                  hpdu_reply, d, NULL)
                     : -ENOMEM;
        free(payload);
    }
    if (rc != 0) {
        snprintf(err, err_len, "%s not sent: %s", via == HPROF_VIA_STREAM ? "HPDS" : "HPDU",
                 rc == -ENOTCONN ? "the VM is not ready for DDM requests"
                 : rc == -EPERM  ? "that chunk type is disabled (--chunks)"
                 : rc == -ENOSPC ? "too many requests pending for that VM"
                                 : strerror(-rc));
        if (via == HPROF_VIA_STREAM)
            close_file(d);
        hprof_hash_free(d->hash);
        free(d);
        return NULL;
    }
    d->request_pending = 1;
    vs->dump = d;
    return d;
}

/* ------------------------------------------------------------ the stream */

static hprof_dump *streaming_dump(hprof_plugin *pl, ddm_vm *vm)
{
    hprof_vm *vs = pl->host->vm_get_data(pl->self, vm);
    hprof_dump *d = vs ? vs->dump : NULL;
    return d && !d->finished && d->via == HPROF_VIA_STREAM ? d : NULL;
}

int hprof_dump_stream_begin(hprof_plugin *pl, ddm_vm *vm, uint64_t declared)
{
    hprof_dump *d = streaming_dump(pl, vm);
    if (d && d->stream == STREAM_WAITING && hprof_batch_cancelled(d->batch)) {
        finish_failed(d, "cancelled: the client went away");
        return -ECANCELED;
    }
    if (!d || d->stream != STREAM_WAITING) {
        pl->host->log(pl->self, DDM_LOG_INFO,
                      "a heap dump of %" PRIu64 " bytes that no command asked for; skipped",
                      declared);
        return -ENOENT;
    }
    if (d->grace_timer) {
        pl->host->timer_remove(pl->self, d->grace_timer);
        d->grace_timer = 0;
    }
    d->stream = STREAM_RUNNING;
    d->declared = declared;
    hprof_batch_progress(d->batch);
    return 0;
}

/* The checker refused the dump (-EPROTO: "the VM sent a @what heap dump:
 * WHY AT BYTE N") or the file failed (-errno). */
static void fail_dump_error(hprof_dump *d, int rc, const char *what)
{
    char msg[HPROF_MSG_MAX];
    d->stream = STREAM_FAILED;
    if (rc == -EPROTO)
        snprintf(msg, sizeof msg, "the VM sent a%s %s heap dump: %s",
                 what[0] == 'i' ? "n" : "", what, hprof_stream_error(d->conv));
    else
        snprintf(msg, sizeof msg, "cannot write %s: %s", d->part, strerror(-rc));
    finish_failed(d, msg);
}

int hprof_dump_stream_data(hprof_plugin *pl, ddm_vm *vm, const uint8_t *data, size_t len)
{
    hprof_dump *d = streaming_dump(pl, vm);
    int rc;
    if (!d || d->stream != STREAM_RUNNING)
        return -ECANCELED;
    if (hprof_batch_cancelled(d->batch)) {
        d->stream = STREAM_FAILED;
        finish_failed(d, "cancelled: the client went away");
        return -ECANCELED;
    }
    d->received += len;
    rc = hprof_stream_feed(d->conv, data, len);
    if (rc < 0) {
        fail_dump_error(d, rc, "malformed");
        return rc;
    }
    hprof_batch_progress(d->batch);
    return 0;
}

void hprof_dump_stream_end(hprof_plugin *pl, ddm_vm *vm, int status, uint64_t received)
{
    hprof_dump *d = streaming_dump(pl, vm);
    char msg[HPROF_MSG_MAX];
    (void)received;
    if (!d || d->stream != STREAM_RUNNING)
        return;
    if (status == 0) {
        int rc = hprof_stream_finish(d->conv);
        if (rc == 0 && d->fmt == HPROF_OUT_STANDARD)
            rc = hash_file(d);
        if (rc < 0) {
            fail_dump_error(d, rc, "incomplete");
            return;
        }
        d->stream = STREAM_COMPLETE;
        if (d->replied)
            finish(d, NULL);
        return;
    }
    d->stream = STREAM_FAILED;
    switch (status) {
    case -EPROTO:
        snprintf(msg, sizeof msg, "the VM's packet ended before the %" PRIu64 " bytes it declared",
                 d->declared);
        break;
    case -EPIPE:
        snprintf(msg, sizeof msg, "the VM went away during the dump");
        break;
    case -ETIMEDOUT:
        snprintf(msg, sizeof msg, "the VM stopped sending in the middle of the dump");
        break;
    case -EFBIG:
        snprintf(msg, sizeof msg, "the dump of %" PRIu64 " bytes is larger than ddmon accepts "
                 "(--max-stream)", d->declared);
        break;
    default:
        snprintf(msg, sizeof msg, "the dump stopped: %s", strerror(-status));
        break;
    }
    finish_failed(d, msg);
}

void hprof_dump_progress(const hprof_dump *d, uint64_t *received, uint64_t *declared)
{
    *received = d->finished ? d->declared : d->received;
    *declared = d->declared;
}
