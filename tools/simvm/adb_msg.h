/* SPDX-License-Identifier: Apache-2.0
 *
 * The adb TRANSPORT message codec, as spoken between an adb server and a
 * device (adbd): a 24-byte little-endian header (command, arg0, arg1, data
 * length, data checksum, magic = command ^ 0xffffffff) and the data. Also
 * the small text helpers the simulated device needs (service names,
 * hex4-framed lists, getprop answers). Pure bytes: no I/O, no globals.
 *
 * Invariants: a decoded header has a valid magic and a data length no
 * larger than the caller's cap; a checksum of 0 is accepted (newer adb
 * sends 0 and does not check), any other value must be the byte sum.
 * Non-goals: AUTH/STLS (Debian's adb 29 accepts a device that answers its
 * CNXN with a CNXN), the device side of sync:.
 */
#ifndef SIMVM_ADB_MSG_H
#define SIMVM_ADB_MSG_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_ADB_HEADER_LEN 24u

#define SIM_ADB_CNXN 0x4e584e43u
#define SIM_ADB_OPEN 0x4e45504fu
#define SIM_ADB_OKAY 0x59414b4fu
#define SIM_ADB_WRTE 0x45545257u
#define SIM_ADB_CLSE 0x45534c43u
#define SIM_ADB_AUTH 0x48545541u
#define SIM_ADB_SYNC 0x434e5953u
#define SIM_ADB_STLS 0x534c5453u

/** The protocol version the device announces (checksums in use). */
#define SIM_ADB_VERSION 0x01000000u
/** The largest payload the device announces (and sends). */
#define SIM_ADB_DEVICE_MAX_PAYLOAD 4096u
/** The largest payload accepted from an adb server (adb's MAX_PAYLOAD). */
#define SIM_ADB_MAX_PAYLOAD_ACCEPTED (1024u * 1024u)
/** Longest service name accepted in an OPEN. */
#define SIM_ADB_MAX_SERVICE 1024u
/** Hex4 frames carry at most this much text. */
#define SIM_ADB_HEX4_MAX 0xffffu

typedef struct SimAdbHeader {
    uint32_t command;
    uint32_t arg0;
    uint32_t arg1;
    uint32_t data_length;
    uint32_t data_check;
    uint32_t magic;
} SimAdbHeader;

typedef enum {
    SIM_ADB_MSG_OK = 0,
    SIM_ADB_MSG_NEED_MORE,     /* not a whole message yet */
    SIM_ADB_MSG_BAD_MAGIC,     /* magic != command ^ 0xffffffff */
    SIM_ADB_MSG_TOO_LONG,      /* data length above the cap */
    SIM_ADB_MSG_BAD_CHECKSUM,  /* non-zero checksum that is not the byte sum */
} SimAdbMsgStatus;

/** Sum of the bytes, as adb's calculate_apacket_checksum(). */
uint32_t sim_adb_checksum(const uint8_t *data, size_t len);
/** "CNXN", "OPEN", ... or "????" for unknown commands. (transfer none) */
const char *sim_adb_command_name(uint32_t command);
/** A short description of @st for logs. (transfer none) */
const char *sim_adb_msg_status_name(SimAdbMsgStatus st);

void sim_adb_header_encode(const SimAdbHeader *h, uint8_t out[SIM_ADB_HEADER_LEN]);
/** Decode and check magic and length (<= @max_data). */
SimAdbMsgStatus sim_adb_header_decode(const uint8_t in[SIM_ADB_HEADER_LEN], uint32_t max_data, SimAdbHeader *h);

/** Append one message (header with checksum and magic, then @len bytes of @data) to @out. */
void sim_adb_msg_append(GByteArray *out, uint32_t command, uint32_t arg0, uint32_t arg1, const uint8_t *data,
                        size_t len);

/** Take one whole message from the front of @buf: on SIM_ADB_MSG_OK, @h is
 *  filled, *@data points into @buf at its data and *@consumed is the total
 *  size; NEED_MORE when @buf holds only part of it; an error otherwise (the
 *  stream is then unusable). */
SimAdbMsgStatus sim_adb_msg_take(const uint8_t *buf, size_t len, uint32_t max_data, SimAdbHeader *h,
                                 const uint8_t **data, size_t *consumed);

/** The service name in an OPEN's data: bytes up to the first NUL (or all of
 *  them), which must be non-empty printable ASCII of at most
 *  SIM_ADB_MAX_SERVICE bytes. NULL if not. (transfer full) */
char *sim_adb_service_name(const uint8_t *data, size_t len);

/** Parse "jdwp:PID" style decimal: digits only, 1..2^31-1. */
gboolean sim_adb_parse_pid(const char *s, uint32_t *pid);

/** Append "%04x" + text for the pid list (one "PID\n" each); lines that
 *  would push the text past SIM_ADB_HEX4_MAX are left off. Returns the
 *  number of pids written. */
guint sim_adb_append_pid_frame(GByteArray *out, const uint32_t *pids, guint n);

/** One process of a track-app update (adb's proto/app_processes.proto). */
typedef struct SimAdbApp {
    uint32_t pid;
    gboolean debuggable;
    gboolean profileable;
    const char *architecture;  /* e.g. "x86_64"; NULL = left out */
    const char *process_name;  /* NULL = left out */
    const char *package_name;  /* NULL = left out */
    gboolean waiting_for_debugger;
} SimAdbApp;

/** Append "%04x" + the AppProcesses protobuf for @apps (field 1: a
 *  ProcessEntry each: pid=1 varint, debuggable=2, profileable=3,
 *  architecture=4, user_id=5 (0), process_name=6, package_names=7,
 *  waiting_for_debugger=8). Entries that would push the message past
 *  SIM_ADB_HEX4_MAX are left off. Returns the number written. */
guint sim_adb_append_app_frame(GByteArray *out, const SimAdbApp *apps, guint n);

typedef struct SimAdbProp {
    const char *key;
    const char *value;
} SimAdbProp;

/** The output of a shell command line, for the handful a device is asked:
 *  "getprop" (all, "[k]: [v]" lines), "getprop KEY" (the value or an empty
 *  line), anything else "sh: CMD: not found". @props ends with {NULL,NULL}.
 *  (transfer full) */
char *sim_adb_shell_output(const char *cmdline, const SimAdbProp *props);

#endif /* SIMVM_ADB_MSG_H */
