/* SPDX-License-Identifier: Apache-2.0
 *
 * viewdebug: `ui VM capture WINDOW VIEW [FILE]`. FILE.part is opened
 * before VUOP op 1 goes out (a file error shows before the VM works); the
 * reply (ViewDebug.capture's PNG, one JDWP reply that the core holds, at
 * most --max-packet bytes) is checked to be a PNG (pngcheck.c), written
 * to the .part and renamed to FILE (partfile.h: FILE a device, FIFO or
 * symlink is refused, at the start and again at the rename; a FILE.part
 * another command is writing is refused). Any failure removes the .part.
 * The result record: file, size_bytes, width, height, window, view.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/partfile.h"
#include "pngcheck.h"
#ifdef HAVE_LIBPNG
#include "../common/pnglib.h"
#endif
#include "viewdebug.h"

int vd_capture_prepare(ui_call *call)
{
    const ddm_host *h = call->pl->host;
    char msg[VD_PATH_MAX + 128];
    int rc;

    snprintf(call->part, sizeof call->part, "%s.part", call->path);
    /* FILE a device, FIFO or symlink: refused before the VM works */
    rc = part_check_target(call->path);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", call->path, part_strerror(rc));
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    /* a FIFO or device named FILE.part is refused, never waited on; one
     * that another command is writing is refused (PART_BUSY) */
    rc = part_open(call->part, 0, 0644);
    if (rc < 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", call->part, part_strerror(rc));
        h->cmd_finish(call->cmd, DDM_CMD_FAILED, msg);
        return -1;
    }
    call->fd = rc;
    return 0;
}

void vd_capture_abandon(ui_call *call)
{
    part_abandon(call->fd, call->part);
    call->fd = -1;
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
#ifdef HAVE_LIBPNG
    if (ddm_pnglib_failure() != NULL && !call->pl->png_missing_logged) {
        call->pl->png_missing_logged = 1;
        h->log(call->pl->self, DDM_LOG_WARNING, "captures are checked by their PNG header only: %s",
               ddm_pnglib_failure());
    }
#endif
    rc = part_write_all(call->fd, reply->data, reply->len);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", call->part, strerror(-rc));
        vd_capture_abandon(call);
    } else {
        rc = part_commit(call->fd, call->part, call->path, msg, sizeof msg);
        call->fd = -1; /* closed, and on failure the .part removed */
    }
    if (rc != 0) {
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
