/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb host protocol as a pure codec (no I/O): requests are 4 hex digits
 * of payload length then the payload; answers are OKAY, or FAIL with a
 * hex4-framed reason; streams such as host:track-devices and track-jdwp
 * send hex4-framed updates, each the full current list. Hex digits are
 * accepted in either case (adbd writes lower case, ddmlib upper case).
 * Also: where the adb server is (ANDROID_ADB_SERVER_PORT, ADB_SERVER_SOCKET,
 * as adb itself reads them), device lists and pid lists with diffing, and
 * track-app's protobuf AppProcesses updates (API 31+).
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

/** One process of a track-app update (adb's proto/app_processes.proto,
 *  message ProcessEntry: pid=1 int64, debuggable=2, profileable=3,
 *  architecture=4 string, process_name=6 string; other fields skipped).
 *  Strings are valid UTF-8, cut at a character boundary to fit. */
#define DDM_ADB_APP_ARCH_MAX 32    /* bytes incl. the NUL */
#define DDM_ADB_APP_NAME_MAX 128   /* bytes incl. the NUL */
typedef struct DdmAdbApp {
    guint32 pid;                              /* 1..2^31-1 */
    gboolean debuggable;                      /* JDWP-debuggable: offered as a VM */
    gboolean profileable;
    char architecture[DDM_ADB_APP_ARCH_MAX];  /* "arm64", "x86_64"; "" = not sent */
    char process_name[DDM_ADB_APP_NAME_MAX];  /* "" = not sent (older adbd) */
} DdmAdbApp;

/** Decode one track-app update: the binary protobuf `AppProcesses { repeated
 *  ProcessEntry process = 1; }` (the hex4 framing already removed). Varints
 *  are at most 10 bytes and must fit 64 bits; every length is bounded by the
 *  bytes that remain; unknown fields are skipped by wire type (0, 1, 2, 5);
 *  groups (3, 4), wire types 6/7 and field number 0 are malformed. Entries
 *  whose pid is missing or outside 1..2^31-1 are left out; for a pid listed
 *  twice the first entry is kept. On success *out (transfer full: GArray of
 *  DdmAdbApp sorted by pid) gets the list (empty for an empty message); on
 *  malformed input FALSE and *out is untouched. */
gboolean ddm_adb_parse_app_processes(const guint8 *buf, size_t len, GArray **out);
/** The pids of @apps (sorted, as from ddm_adb_parse_app_processes) that are
 *  debuggable. (transfer full: GArray of guint32, sorted) */
GArray *ddm_adb_app_debuggable_pids(const GArray *apps);
/** The entry for @pid in sorted @apps, or NULL. (transfer none) */
const DdmAdbApp *ddm_adb_app_find(const GArray *apps, guint32 pid);

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
