/* SPDX-License-Identifier: Apache-2.0
 *
 * The viewdebug plugin: the view hierarchy of a running app over DDM, as
 * Hierarchy Viewer and Layout Inspector read it (android.ddm.
 * DdmHandleViewDebug). One command, `ddmon ui VM ...`:
 *   windows                      VULW: the app's windows (view roots)
 *   dump WINDOW [--properties]   VURT op 1: the view tree (a JSON document)
 *   theme WINDOW                 VURT op 3: the theme's attributes
 *   capture WINDOW VIEW [FILE]   VUOP op 1: the view as PNG, to FILE
 * WINDOW is a window's name (TITLE/CLASS@HASH, with a '/'), or, without a
 * '/', a selector: its index in `windows` or a part of one name only;
 * a selector costs a VULW first (the request chain: VULW, then the op).
 * Only for VMs whose FEAT lists "view-hierarchy". Every request times out
 * (ddmlib waits forever and never sees a FAIL); a FAIL is shown with the
 * VM's message. Formats and limits: doc/viewdebug.md.
 *
 * An SDK client only. Ownership: a ui_call (a request's ud) belongs to the
 * request until its reply callback, which finishes the command and frees it.
 */
#ifndef VIEWDEBUG_VIEWDEBUG_H
#define VIEWDEBUG_VIEWDEBUG_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>

#define VD_CHUNK_VULW DDM_CHUNK('V', 'U', 'L', 'W')
#define VD_CHUNK_VURT DDM_CHUNK('V', 'U', 'R', 'T')
#define VD_CHUNK_VUOP DDM_CHUNK('V', 'U', 'O', 'P')
#define VD_FEATURE "view-hierarchy"
/** DdmHandleViewDebug's error codes (FAIL, as signed u4). */
#define VD_ERR_INVALID_OP (-1)
#define VD_ERR_INVALID_PARAM (-2)
#define VD_ERR_EXCEPTION (-3)
#define VD_PATH_MAX 4096
/** A window name in UTF-8: VD_MAX_NAME_UNITS UTF-16 units (vudecode.h), 3 bytes each. */
#define VD_WINDOW_MAX (3 * 4096 + 1)

typedef struct vd_plugin {
    const ddm_host *host;
    ddm_plugin *self;
    unsigned timeout_ms; /* per request; 0: the core's default */
    int png_missing_logged; /* said once that libpng could not be loaded (capture.c) */
} vd_plugin;

typedef enum vd_op { VD_OP_WINDOWS, VD_OP_DUMP, VD_OP_THEME, VD_OP_CAPTURE } vd_op;

typedef struct ui_call {
    vd_plugin *pl;
    ddm_cmd *cmd;
    vd_op op;
    int properties;          /* dump --properties */
    char vm_name[64];        /* for messages: "pid 1234" */
    char vm_spec[128];       /* the VM as the user named it (cut) */
    int resolving;           /* the VULW that resolves a selector is out */
    char window[VD_WINDOW_MAX]; /* the window's name (the selector until resolved) */
    char view[512];
    char path[VD_PATH_MAX];  /* capture: FILE, absolute */
    char part[VD_PATH_MAX + 8];
    int fd;                  /* capture: the open FILE.part, else -1 */
} ui_call;

/** A FAIL, timeout or other non-answer as one line for the user; the
 *  status the command finishes with. */
ddm_cmd_status vd_describe_failure(const ui_call *call, const ddm_reply *reply, char *buf, size_t n);

/* ui-cmd.c: the replies of windows, dump and theme. */
void vd_finish_windows(ui_call *call, const ddm_reply *reply);
void vd_finish_dump(ui_call *call, const ddm_reply *reply);
void vd_finish_theme(ui_call *call, const ddm_reply *reply);

/* capture.c */
/** Open @call->path's .part before the request (so that a file error is
 *  reported before the VM works); 0 or finishes @call->cmd and -1. */
int vd_capture_prepare(ui_call *call);
/** The VUOP reply: check the PNG, write it, rename; finishes the command. */
void vd_finish_capture(ui_call *call, const ddm_reply *reply);
/** Remove the .part of a capture that will not happen. */
void vd_capture_abandon(ui_call *call);

#endif /* VIEWDEBUG_VIEWDEBUG_H */
