/* SPDX-License-Identifier: Apache-2.0
 *
 * Non-blocking conversations with the adb server: open a socket to it, send
 * a sequence of requests each of which must answer OKAY ("host:transport:
 * SERIAL", then "jdwp:PID" or "track-jdwp"), and hand over the socket; and
 * read hex4-framed update streams (host:track-devices, track-jdwp) from a
 * socket so handed over. Never blocks; every wait has a deadline; a FAIL
 * is reported with adb's reason text.
 */
#ifndef DDM_ADB_CONN_H
#define DDM_ADB_CONN_H

#include <gio/gio.h>

#include "core/wire/adb_proto.h"

#define DDM_ADB_ERROR (ddm_adb_error_quark())
GQuark ddm_adb_error_quark(void);

typedef enum {
    DDM_ADB_ERROR_NO_SERVER,   /* connect refused / no such socket */
    DDM_ADB_ERROR_FAIL,        /* the server answered FAIL (message = its reason) */
    DDM_ADB_ERROR_PROTOCOL,    /* neither OKAY nor FAIL, or a malformed frame */
    DDM_ADB_ERROR_TIMEOUT,
    DDM_ADB_ERROR_IO
} DdmAdbError;

typedef struct DdmAdbConn DdmAdbConn;

/** Called once: @fd >= 0 on success (ownership passes to the callee; any
 *  bytes the server sent after the last OKAY are in @extra), or @error. */
typedef void (*DdmAdbConnDone)(int fd, GBytes *extra, const GError *error, gpointer ud);

/** Connect to @addr and send @requests (NULL-terminated, copied) in order.
 *  (transfer none: the conversation frees itself after @done; cancel with
 *  ddm_adb_conn_cancel before then, and @done is not called) */
DdmAdbConn *ddm_adb_conn_open(const DdmAdbServerAddr *addr, const char *const *requests,
                              unsigned timeout_ms, DdmAdbConnDone done, gpointer ud);
void ddm_adb_conn_cancel(DdmAdbConn *c);

typedef struct DdmAdbStream DdmAdbStream;
/** One hex4-framed update (payload borrowed for the call). */
typedef void (*DdmAdbFrameFn)(const char *payload, size_t len, gpointer ud);
/** The stream ended (EOF, error, bad frame); @reason says which. Called once;
 *  free the stream afterwards (not from inside the callback). */
typedef void (*DdmAdbClosedFn)(const char *reason, gpointer ud);

/** Read frames of at most @max_frame bytes from @fd (taken over); @initial
 *  holds bytes already read (may be NULL). */
DdmAdbStream *ddm_adb_stream_new(int fd, GBytes *initial, size_t max_frame, DdmAdbFrameFn on_frame,
                                 DdmAdbClosedFn on_closed, gpointer ud);
/** Stop reading now: no callback runs after this returns (safe inside a
 *  callback of the stream; free it later). */
void ddm_adb_stream_close(DdmAdbStream *s);
void ddm_adb_stream_free(DdmAdbStream *s);

#endif /* DDM_ADB_CONN_H */
