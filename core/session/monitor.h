/* SPDX-License-Identifier: Apache-2.0
 *
 * The monitor: the table of VM sessions of one ddmon process (key ->
 * ddm_vm, at most one session per key), with per-key reconnect backoff.
 * Discovery offers it targets; it starts a session for each, and tells
 * whoever assembled it (core/daemon) what its sessions report through a
 * DdmSessionEvents table handed down at creation: the session layer never
 * calls up by name. DdmMonitor is opaque outside core/session/: others ask
 * it questions (find, resolve, list, retrying targets) and never walk its
 * fields. Everything runs on the default GMainContext.
 */
#ifndef DDM_MONITOR_H
#define DDM_MONITOR_H

#include <glib.h>

#include "core/config/config.h"
#include "core/session/vm.h"
#include "core/transport/target.h"
#include "core/wire/jdwp.h"

/* What the sessions of a monitor report upward. Every member may be NULL.
 * Calls happen on the main loop, never from inside a ddm_monitor_* call
 * made by the receiver unless stated. @ud is the pointer given to
 * ddm_monitor_new. The VM is borrowed for the duration of the call. */
typedef struct DdmSessionEvents {
    /* The VM reached READY (DDM) or PLAIN (a JVM that refused DDM). */
    void (*vm_up)(gpointer ud, DdmVm *vm);
    /* The identity (name, pid...) of a READY or PLAIN VM changed. */
    void (*vm_changed)(gpointer ud, DdmVm *vm);
    /* The VM's connection closed; it is still in the table. Return TRUE to
     * have the monitor retry its key at once (a debugger session ended). */
    gboolean (*vm_closed)(gpointer ud, DdmVm *vm);
    /* What a VM list shows may have changed: states, names, headlines,
     * a target retrying after an error. @key: the one target whose row
     * may have changed (borrowed), or NULL: any row may have. Cheap:
     * coalesce on your side. */
    void (*list_changed)(gpointer ud, const char *key);
    /* A DDM chunk from the VM that is not the reply to one of our
     * requests with a callback (events, and replies' extra chunks). */
    void (*ddm_chunk)(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci,
                      const uint8_t *data, size_t len);
    /* A chunk seen on its way elsewhere (our requests, replies delivered
     * to a request's callback): for observers only. */
    void (*tap_chunk)(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci,
                      const uint8_t *data, size_t len);
    /* A JDWP command from the VM that is not DDM (an event for a debugger).
     * NULL: dropped and counted. */
    void (*jdwp_command)(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt);
    /* A reply whose id ddmon did not send: TRUE if claimed (a debugger's).
     * @pkt's bytes are writable for this call (the session's own: its
     * reader's consumed packet or its read buffer; the relay writes the
     * debugger's id there, relay.h); nothing reads them after it returns. */
    gboolean (*foreign_reply)(gpointer ud, DdmVm *vm, const DdmJdwpPacket *pkt);
    /* Everything queued for the VM has been written (ddm_vm_notify_when_drained). */
    void (*output_drained)(gpointer ud, DdmVm *vm);
    /* Streamed DDM events (core/session/vm_stream.c). A DDM event packet
     * whose first chunk is @ci->type, with @declared payload bytes, is
     * arriving and has not arrived whole: 1 = an owner takes it as a
     * stream (stream_data, then exactly one stream_end follow), 0 = no
     * stream owner (the packet is read whole as usual), negative errno =
     * the owner refuses it (its bytes are skipped). A stream whose declared
     * length is past max_stream is never offered: the owner (asked with
     * @declared anyway) gets stream_end(-EFBIG) at once. */
    int (*stream_begin)(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, guint64 declared);
    /* The next bytes of the stream (borrowed for the call). Negative errno:
     * stop; stream_end follows at once with that status. */
    int (*stream_data)(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                       size_t len);
    /* The stream ended: 0 complete, -EPROTO the packet carried fewer bytes
     * than the chunk declared, -EPIPE the VM went away, -ETIMEDOUT the VM
     * sent nothing for the request timeout mid-packet (it is closed next),
     * -EFBIG past the cap, or the error stream_data returned. @received: payload bytes
     * handed over. */
    void (*stream_end)(gpointer ud, DdmVm *vm, const ddm_chunk_info *ci, int status,
                       guint64 received);
    /* The head of a reply that has not arrived whole (@head: its header,
     * len the declared length): TRUE if claimed (a debugger's, forwarded
     * cut-through): its remaining bytes then come to reply_part as they
     * arrive, the call with @last TRUE ending it. FALSE: read whole as usual. */
    gboolean (*reply_head)(gpointer ud, DdmVm *vm, const DdmJdwpPacket *head);
    void (*reply_part)(gpointer ud, DdmVm *vm, const uint8_t *data, size_t len, gboolean last);
    /* Optional. A claimed reply whose remaining bytes are all still in the
     * VM's socket @fd (none read into ddmon): the claimer may move up to @max
     * of them itself, socket to socket (splice(2)), instead of having them
     * read and handed to reply_part. Returns the bytes moved (> 0; with
     * *@socket_empty TRUE when fewer came than it asked the kernel for), 0 at
     * the VM's end of file, -EAGAIN when the socket holds none now, -ENOTSUP
     * when it will not now (they are then read and go to reply_part as
     * usual), or another negative errno: reading @fd failed. The bytes it
     * moved are counted as the reply's; its end still comes to reply_part. */
    gssize (*reply_splice)(gpointer ud, DdmVm *vm, int fd, size_t max, gboolean *socket_empty);
    /* Optional: the fused path of a debugger's reply (issue 16). @bytes/@len
     * is a read of the VM's socket that holds one whole reply and nothing
     * else, of a VM with relay state (vm->relay), whose id is none of
     * ddmon's (the pending requests and the late HELO were checked first,
     * as for foreign_reply). TRUE: handled as foreign_reply would have
     * (sent on, or dropped); FALSE: nothing was done, and the packet goes
     * the general way (foreign_reply). Writable for this call, as there. */
    gboolean (*reply_alone)(gpointer ud, DdmVm *vm, uint8_t *bytes, size_t len);
} DdmSessionEvents;

typedef struct DdmMonitor DdmMonitor;

/** An empty table. @config and @events are borrowed and must outlive it. */
DdmMonitor *ddm_monitor_new(const DdmConfig *config, const DdmSessionEvents *events, gpointer ud);
/** Close every VM (@reason), refuse new targets from now on. Idempotent.
 *  Stopping is final: the key watchers (ddm_monitor_watch_keys) are not
 *  told reliably that the keys lost their sessions (the table is emptied
 *  without them), and must not count on it; nothing is offered again. */
void ddm_monitor_stop(DdmMonitor *mon, const char *reason);
/** When the server starts to stop, before the plugins' stopping hooks:
 *  no session starts from now on (discovery's offers, fast retries and
 *  reconnects are refused), so a VM found during the stop's wait for
 *  answers is not connected without the hooks that ran for the others.
 *  The VMs connected now keep running until ddm_monitor_stop. Idempotent. */
void ddm_monitor_refuse_new(DdmMonitor *mon);
/** Before ddm_monitor_stop, when the server stops: write what the VMs'
 *  write queues hold (the plugins' last requests, ABI 1.8 stopping hooks)
 *  as their sockets take it, waiting at most @budget_ms for all VMs
 *  together (poll, no loop iteration: nothing else runs meanwhile). What a
 *  socket did not take by then is dropped by the close. */
void ddm_monitor_flush_output(DdmMonitor *mon, guint budget_ms);
/** Stop, then free. */
void ddm_monitor_free(DdmMonitor *mon);
/** A VM that broke the protocol waits this long before its next session,
 *  doubling with each violation in a row up to the max; a session that
 *  ends without one resets it (doc/protocol.md, "Limits"). */
#define DDM_MONITOR_VIOLATION_BACKOFF_FIRST_MS 2000u
#define DDM_MONITOR_VIOLATION_BACKOFF_MAX_MS 300000u
/** Every this many seconds the read buffer of each VM that sent nothing
 *  since the previous round is freed (ddm_jdwp_reader_trim): an idle VM
 *  holds none, a busy one keeps reusing its own; and the round asks for a
 *  malloc_trim (core/loop/heaptrim.h). */
#define DDM_MONITOR_TRIM_S 10u
/** Run that round now (what its timer runs every DDM_MONITOR_TRIM_S; tests). */
void ddm_monitor_trim_round(DdmMonitor *mon);
/** The memory budget every peer's JDWP reader is charged to (VMs and
 *  debuggers; config max_buffers). (transfer none: lives as long as @mon) */
DdmJdwpBudget *ddm_monitor_read_budget(DdmMonitor *mon);
/** ddmon listens (@listening TRUE) or stopped listening on TCP @port (the
 *  relay's debugger ports, the web dashboard): a local scan never connects
 *  there. Counted: each TRUE needs one FALSE. */
void ddm_monitor_own_port(DdmMonitor *mon, guint16 port, gboolean listening);
/** TRUE while ddmon listens on @port itself. */
gboolean ddm_monitor_is_own_port(const DdmMonitor *mon, guint16 port);
const DdmConfig *ddm_monitor_config(const DdmMonitor *mon);
/** TRUE once ddm_monitor_stop has run. */
gboolean ddm_monitor_stopping(const DdmMonitor *mon);

/** Discovery found @target: connect unless its key is connected or backing
 *  off. Returns TRUE if a session was started. (target: transfer none) */
gboolean ddm_monitor_offer_target(DdmMonitor *mon, DdmTarget *target);
/** Discovery lost @key (adb pid gone, device unplugged): close it. */
void ddm_monitor_forget_target(DdmMonitor *mon, const char *key, const char *reason);
/** Close every VM found by discovery @origin (mode switched off). */
void ddm_monitor_forget_origin(DdmMonitor *mon, const char *origin);
/** Someone waits for VM @key (a debugger on its fixed relay port, or the
 *  relay just ended a debugger session): retry connecting it quickly (tens
 *  of milliseconds at first, backing off), bypassing the normal backoff. */
void ddm_monitor_retry_fast(DdmMonitor *mon, const char *key);

DdmVm *ddm_monitor_find_vm(DdmMonitor *mon, const char *key);
/** What a key watcher is told about a key's session. */
typedef enum {
    DDM_KEY_LOST = 0,     /* the session left the table: the key may be offered
                           * again, its backoff permitting */
    DDM_KEY_HELD = 1,     /* the key got its session: ddm_monitor_offer_target
                           * refuses the key from then on */
    DDM_KEY_ANSWERED = 2, /* that session got past its handshake (HELO, READY or
                           * PLAIN): no longer a connection attempt in flight.
                           * At most once per session, never for one closed first */
} DdmKeyChange;
/** Told as a key's session changes (@change). @target is the session's
 *  (borrowed, for the call only): it may be another object than the one a
 *  module offers for the same key (--connect, a fast retry). The callback
 *  must not call the monitor. */
typedef void (*DdmMonitorKeyFn)(gpointer ud, const DdmTarget *target, DdmKeyChange change);
/** Add a watcher (a port scan keeps the ports it must still try with it);
 *  remove it with the same @fn and @ud before @mon is freed
 *  (ddm_monitor_free warns of one left). */
void ddm_monitor_watch_keys(DdmMonitor *mon, DdmMonitorKeyFn fn, gpointer ud);
void ddm_monitor_unwatch_keys(DdmMonitor *mon, DdmMonitorKeyFn fn, gpointer ud);
/** The monotonic time (g_get_monotonic_time, us) before which @key's
 *  backoff makes ddm_monitor_offer_target refuse it; 0 when an offer is
 *  not held back by a backoff (a fast retry due soon counts as none: it
 *  starts the session itself). */
gint64 ddm_monitor_backoff_until(DdmMonitor *mon, const char *key);
/** Every VM in the table, in no particular order. (transfer full: the
 *  array holds a reference to each VM and drops them when freed) */
GPtrArray *ddm_monitor_list_vms(DdmMonitor *mon);
/** The VMs a VM list shows, sorted by key: JDWP peers (HELO, READY,
 *  PLAIN), and targets known to be VMs (adb pids, --connect) while their
 *  first connection is in flight. A scanned port that is still connecting
 *  is not known to be a VM; a target retrying after an error is listed by
 *  ddm_monitor_foreach_retrying instead. (transfer full, as above) */
GPtrArray *ddm_monitor_listed_vms(DdmMonitor *mon);
/** Whether @vm is one of ddm_monitor_listed_vms (one VM's answer, O(1)). */
gboolean ddm_monitor_vm_listed(DdmMonitor *mon, DdmVm *vm);
/** Whether @key is one of the targets ddm_monitor_foreach_retrying lists;
 *  if so *@target and *@last_error (borrowed) say what it would pass. */
gboolean ddm_monitor_retrying(DdmMonitor *mon, const char *key, const DdmTarget **target,
                              const char **last_error);
/** Targets known to be VMs (not port-scan misses) whose last session
 *  failed and that wait for a retry, sorted by key: @fn gets each target
 *  (borrowed) and the error that closed its last session. */
void ddm_monitor_foreach_retrying(DdmMonitor *mon,
                                  void (*fn)(const DdmTarget *target, const char *last_error,
                                             gpointer ud),
                                  gpointer ud);
/** For a one-shot look that retries nothing (the in-process snapshot):
 *  from now on (@on) a target whose last session says another debugger
 *  holds its VM (ddm_monitor_held: a VM takes one debugger at a time) is
 *  also listed by ddm_monitor_retrying and ddm_monitor_foreach_retrying
 *  when a port scan found it (a scanned port is otherwise not known to be
 *  a VM). Off by default: a server lists such a scanned port only once it
 *  answers. */
void ddm_monitor_report_held(DdmMonitor *mon, gboolean on);
/** TRUE while ddm_monitor_report_held is on: a session's normal close is
 *  then logged at debug level, not as a message (a one-shot look's
 *  sessions closing are no news: its output says what it found). */
gboolean ddm_monitor_reports_held(const DdmMonitor *mon);
/** Whether @key is listed as retrying (ddm_monitor_retrying) because its
 *  last session says another debugger holds the VM: the peer closed or
 *  reset it during the JDWP handshake, or refused a named target's
 *  connect, and it is known to be a VM that is held (a TCP port with a
 *  connection established to it on this host, a named adb target, a key
 *  that spoke DDM before; monitor.c's session_says_held). The VM list
 *  shows it "busy"; it is still retried. */
gboolean ddm_monitor_held(DdmMonitor *mon, const char *key);
/** TRUE when no session is still finding out what its VM is (CONNECTING,
 *  HANDSHAKE or HELO). */
gboolean ddm_monitor_sessions_settled(DdmMonitor *mon);
/** At most this many VMs are listed in an "ambiguous" message. */
#define DDM_MONITOR_RESOLVE_LIST_MAX 10
/** Resolve "PID", "SERIAL:PID", a key, an app or package name, or a unique
 *  suffix of one ("notes" for com.example.notes when that is the only name
 *  ending in ".notes"); NULL if none or ambiguous. */
DdmVm *ddm_monitor_resolve_vm(DdmMonitor *mon, const char *spec);
/** ddm_monitor_resolve_vm with ddmon's one message for a failure in
 *  *@error (may be NULL; transfer full): "no VM matches 'X' (try 'ddmon
 *  vms')", or "'X' matches N VMs: KEY (APP, pid P), ...; name one by pid or
 *  key". The core's requests and the plugins' (ddm_host.find_vm,
 *  cmd_find_vm) resolve VMs through it. */
DdmVm *ddm_monitor_resolve_vm_or_error(DdmMonitor *mon, const char *spec, char **error);
/** Every VM @spec names as ddm_monitor_resolve_vm reads it, by key.
 *  (transfer container) */
GPtrArray *ddm_monitor_resolve_vm_all(DdmMonitor *mon, const char *spec);
/** Like ddm_monitor_resolve_vm, but when several VMs match (an app name on
 *  two devices, say) returns the one connected last; *@n_matches (may be
 *  NULL) says how many matched. */
DdmVm *ddm_monitor_resolve_vm_newest(DdmMonitor *mon, const char *spec, guint *n_matches);

/** A plugin changed a VM's headlines: the VM list should be redrawn. */
void ddm_monitor_vm_headline_changed(DdmMonitor *mon, DdmVm *vm);

/* Called by the sessions (core/session/vm*.c) only. */
gboolean ddm_monitor_known_ddm(DdmMonitor *mon, const char *key);
void ddm_monitor_note_ddm(DdmMonitor *mon, const char *key);
void ddm_monitor_vm_state_changed(DdmMonitor *mon, DdmVm *vm, DdmVmState old_state);
void ddm_monitor_vm_identity_changed(DdmMonitor *mon, DdmVm *vm);
void ddm_monitor_vm_closed(DdmMonitor *mon, DdmVm *vm);
/** The events table (never NULL) and its @ud (not NULL), for the sessions'
 *  direct calls; @mon is a VM's. */
const DdmSessionEvents *ddm_monitor_events(DdmMonitor *mon, gpointer *ud);

#endif /* DDM_MONITOR_H */
