/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb host protocol as a pure codec (no I/O): requests are 4 hex digits
 * of payload length then the payload; answers are OKAY, or FAIL with a
 * hex4-framed reason; streams such as host:track-devices and track-jdwp
 * send hex4-framed updates, each the full current list. Hex digits are
 * accepted in either case (adbd writes lower case, ddmlib upper case).
 * Also: where the adb server is (ANDROID_ADB_SERVER_PORT, ADB_SERVER_SOCKET,
 * as adb itself reads them), device lists and pid lists with diffing.
 */
#ifndef DDM_ADB_PROTO_H
#define DDM_ADB_PROTO_H

#include <gio/gio.h>
#include <stdint.h>

#define DDM_ADB_DEFAULT_PORT 5037
/** The longest payload a hex4 length can carry. */
#define DDM_ADB_MAX_FRAME 0xFFFF

/** Append "%04x" + @service to @out; FALSE if the service is longer than 0xFFFF. */
gboolean ddm_adb_format_request(GString *out, const char *service);
/** Parse 4 hex digits (either case); -1 if any is not a hex digit. */
int ddm_adb_parse_hex4(const uint8_t *p);

typedef enum {
    DDM_ADB_NEED_MORE = 0,
    DDM_ADB_OKAY = 1,
    DDM_ADB_FAIL = 2,
    DDM_ADB_ERR_PROTOCOL = -1   /* neither OKAY nor FAIL, or a bad FAIL length */
} DdmAdbStatus;

/** Parse a status at the start of @buf. On OKAY/FAIL sets *consumed; on FAIL
 *  *reason gets the reason text (transfer full, valid UTF-8). */
DdmAdbStatus ddm_adb_parse_status(const uint8_t *buf, size_t len, size_t *consumed, char **reason);

typedef enum {
    DDM_ADB_FRAME_NEED_MORE = 0,
    DDM_ADB_FRAME_OK = 1,
    DDM_ADB_FRAME_ERR = -1      /* not hex, or length above @max */
} DdmAdbFrameResult;

/** One hex4-framed payload at the start of @buf; payload borrowed from @buf. */
DdmAdbFrameResult ddm_adb_next_frame(const uint8_t *buf, size_t len, size_t max, size_t *consumed,
                                     const uint8_t **payload, size_t *payload_len);

/** One device of a track-devices update. */
typedef struct DdmAdbDevice {
    char *serial;
    char *state;   /* "device", "offline", "unauthorized", ... any string */
} DdmAdbDevice;

/** Parse "SERIAL\tSTATE\n" lines (a missing final newline tolerated; blank
 *  and malformed lines skipped; later duplicates of a serial ignored).
 *  (transfer full: GPtrArray of DdmAdbDevice*, frees its elements) */
GPtrArray *ddm_adb_parse_devices(const char *text, size_t len);
void ddm_adb_device_free(DdmAdbDevice *d);

/** Parse a track-jdwp list "PID\n..." into sorted unique pids (1..2^31-1);
 *  bad lines skipped. (transfer full: GArray of guint32) */
GArray *ddm_adb_parse_pids(const char *text, size_t len);
/** Sorted-set difference: @added = new - old, @removed = old - new (both
 *  GArray of guint32, appended to). */
void ddm_adb_diff_pids(const GArray *old_pids, const GArray *new_pids, GArray *added, GArray *removed);

/** Where the adb server is. */
typedef struct DdmAdbServerAddr {
    char *host;        /* TCP host, or NULL for a UNIX socket */
    guint16 port;
    char *unix_path;   /* for localfilesystem: */
    gboolean abstract; /* unix_path is an abstract socket name (localabstract:) */
} DdmAdbServerAddr;

/** Resolve the server address from ADB_SERVER_SOCKET ("tcp:PORT",
 *  "tcp:HOST:PORT", "localabstract:NAME", "localfilesystem:PATH"), else
 *  ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037. @env_socket / @env_port are
 *  the variables' values (NULL = unset), so tests need no environment. */
gboolean ddm_adb_server_addr(const char *env_socket, const char *env_port, DdmAdbServerAddr *out,
                             GError **error);
void ddm_adb_server_addr_clear(DdmAdbServerAddr *a);
/** "127.0.0.1:5037" or "unix:PATH" for messages. (transfer full) */
char *ddm_adb_server_addr_to_string(const DdmAdbServerAddr *a);

#endif /* DDM_ADB_PROTO_H */
