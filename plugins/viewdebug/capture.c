/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: `ui VM capture WINDOW VIEW [FILE]`. FILE.part is opened
 * before VUOP op 1 goes out (a file error shows before the VM works); the
 * reply (ViewDebug.capture's PNG, one JDWP reply that the core holds, at
 * most --max-packet bytes) is checked to be a PNG, its size read with
 * libpng (by hand without it), written to the .part and renamed to FILE.
 * Any failure removes the .part. The result record: file, size_bytes,
 * width, height, window, view.
 */
#include "build-config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBPNG
#include <png.h>
#endif

#include <ddmon/bytes.h>

#include "viewdebug.h"

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

#ifdef HAVE_LIBPNG
typedef struct png_mem {
    const uint8_t *p;
    size_t n, off;
} png_mem;

static void read_mem(png_structp png, png_bytep out, size_t len)
{
    png_mem *m = png_get_io_ptr(png);
    if (len > m->n - m->off)
        png_error(png, "the image ends early");
    memcpy(out, m->p + m->off, len);
    m->off += len;
}

static void no_warnings(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* libpng's reason for a bad image, for the user. */
static void keep_error(png_structp png, png_const_charp msg)
{
    char *why = png_get_error_ptr(png);
    snprintf(why, 200, "%s", msg);
    png_longjmp(png, 1);
}
#endif

int vd_png_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height, char *why,
                size_t why_len)
{
    if (len < 8 || memcmp(data, png_signature, 8) != 0) {
        snprintf(why, why_len, "no PNG signature (%zu bytes)", len);
        return -1;
    }
#ifdef HAVE_LIBPNG
    {
        char err[200] = "";
        png_mem m = {data, len, 0};
        png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, err, keep_error, no_warnings);
        png_infop info = png ? png_create_info_struct(png) : NULL;
        if (!info) {
            png_destroy_read_struct(&png, NULL, NULL);
            snprintf(why, why_len, "out of memory");
            return -1;
        }
        if (setjmp(png_jmpbuf(png))) {
            png_destroy_read_struct(&png, &info, NULL);
            snprintf(why, why_len, "not a valid PNG: %s", err[0] ? err : "libpng refused it");
            return -1;
        }
        png_set_read_fn(png, &m, read_mem);
        png_read_info(png, info); /* signature, IHDR (checked by libpng) up to the image data */
        *width = png_get_image_width(png, info);
        *height = png_get_image_height(png, info);
        png_destroy_read_struct(&png, &info, NULL);
    }
#else
    {
        /* without libpng: the IHDR chunk that must come first */
        ddm_reader r;
        ddm_reader_init(&r, data + 8, len - 8);
        uint32_t ihdr_len = ddm_read_u4(&r), type = ddm_read_u4(&r);
        *width = ddm_read_u4(&r);
        *height = ddm_read_u4(&r);
        if (!ddm_reader_ok(&r) || ihdr_len != 13 || type != DDM_CHUNK('I', 'H', 'D', 'R') ||
            *width == 0 || *height == 0) {
            snprintf(why, why_len, "not a valid PNG: no IHDR chunk first");
            return -1;
        }
    }
#endif
    return 0;
}

int vd_capture_prepare(ui_call *call)
{
    const ddm_host *h = call->pl->host;
    char msg[VD_PATH_MAX + 128];

    snprintf(call->part, sizeof call->part, "%s.part", call->path);
    call->fd = open(call->part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (call->fd < 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", call->part, strerror(errno));
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    return 0;
}

void vd_capture_abandon(ui_call *call)
{
    if (call->fd < 0)
        return;
    close(call->fd);
    call->fd = -1;
    unlink(call->part);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

void vd_finish_capture(ui_call *call, const ddm_reply *reply)
{
    const ddm_host *h = call->pl->host;
    char msg[VD_PATH_MAX + 1024], why[256];
    uint32_t width = 0, height = 0;
    ddm_view *res;
    int rc;

    if (!(reply->status == DDM_REPLY_CHUNK && reply->type == VD_CHUNK_VUOP)) {
        ddm_cmd_status st = vd_describe_failure(call, reply, msg, sizeof msg);
        vd_capture_abandon(call);
        h->cmd_finish(call->cmd, st, msg);
        return;
    }
    if (vd_png_size(reply->data, reply->len, &width, &height, why, sizeof why) != 0) {
        h->log(call->pl->self, DDM_LOG_WARNING, "%s: VUOP capture of %zu bytes rejected: %s",
               call->vm_name, reply->len, why);
        snprintf(msg, sizeof msg, "%s: the capture of %.300s is not an image: %s", call->vm_name,
                 call->view, why);
        vd_capture_abandon(call);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return;
    }
    rc = write_all(call->fd, reply->data, reply->len);
    if (rc == 0 && close(call->fd) != 0)
        rc = -errno;
    else if (rc != 0)
        close(call->fd);
    call->fd = -1;
    if (rc == 0 && rename(call->part, call->path) != 0)
        rc = -errno;
    if (rc != 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", call->path, strerror(-rc));
        unlink(call->part);
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return;
    }
    res = h->cmd_result(call->cmd, DDM_VIEW_RECORD, "View capture");
    if (res) {
        h->view_begin(res);
        h->view_field_str(res, "file", call->path);
        h->view_field_int(res, "size_bytes", (int64_t)reply->len);
        h->view_field_int(res, "width", width);
        h->view_field_int(res, "height", height);
        h->view_field_str(res, "window", call->window);
        h->view_field_str(res, "view", call->view);
        h->view_commit(res);
    }
    snprintf(msg, sizeof msg, "%s: %.300s captured, %ux%u, %zu bytes, written to %s", call->vm_name,
             call->view, (unsigned)width, (unsigned)height, reply->len, call->path);
    h->cmd_finish(call->cmd, DDM_CMD_OK, msg);
}
