/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the simvm sources: the world, a VM, a connection.
 * Ownership: the world owns its VMs (vms array; by_pid indexes them), a VM
 * owns its listener and at most one connection. Destruction is deferred
 * where callbacks are on the stack: a closing connection is freed when its
 * I/O callback returns (or from the reap idle); a retired VM leaves the pid table at once and is
 * freed from an idle callback.
 */
#ifndef SIMVM_PRIVATE_H
#define SIMVM_PRIVATE_H

#include <gio/gio.h>
#include <glib.h>
#include <stdint.h>

#include "core/wire/jdwp.h"
#include "alloc_model.h"
#include "heap.h"
#include "native.h"
#include "reactor.h"
#include "rng.h"
#include "simvm.h"
#include "threads.h"

#define SIM_THST_RECENT 8
#define SIM_MAX_HEAPS 2
#define SIM_PRE_INITIALIZED "<pre-initialized>"
/** A client that stops reading: drop it past this much queued output. */
#define SIM_OUT_MAX ((size_t)64 << 20)
/** Bytes a producer is asked for at a time (the most it has buffered). */
#define SIM_PRODUCE_STEP ((size_t)256 << 10)

typedef struct SimConn SimConn;
typedef struct SimFileWriter SimFileWriter; /* filewriter.c */

/** What a producer says after filling output (sim_conn_start_producer). */
typedef enum {
    SIM_PRODUCE_MORE,   /* call again when the socket has drained */
    SIM_PRODUCE_DONE,   /* these were the last bytes */
    SIM_PRODUCE_STALL,  /* nothing more, ever: the connection stays, quiet */
    SIM_PRODUCE_CLOSE,  /* send what was produced, then drop the connection now */
} SimProduceStatus;

/** Fill at most @cap bytes at @buf, set *@len. Called only while nothing
 *  else is queued, so a producer's bytes are never interleaved. */
typedef SimProduceStatus (*SimProduceFn)(SimConn *c, void *ud, uint8_t *buf, size_t cap, size_t *len);
/** Free @ud: after DONE, or when the connection goes first. */
typedef void (*SimProducerFreeFn)(void *ud);

/** What the VM last told a client about one heap (ground truth). */
typedef struct SimHpifSent {
    gboolean valid;
    uint64_t timestamp_ms;
    uint8_t reason;
    uint32_t max, size, allocated, objects;
} SimHpifSent;

/** The last heap dump a VM finished sending (ground truth). */
typedef struct SimHprofSent {
    guint64 dumps;               /* dumps fully sent or written so far */
    guint64 started;             /* dumps begun (each draws its own seed) */
    gboolean valid;              /* "last" below is set */
    gboolean via_hpdu;           /* HPDU (file on the device) or HPDS (streamed) */
    guint64 bytes;
    char sha256[65];
    char *path;                  /* HPDU's device path, NULL for HPDS */
    SimHprofFault fault;         /* the fault the dump was sent with */
    uint32_t gen_seed;           /* the generator's seed: --write-hprof --hprof-gen-seed
                                    rebuilds the same bytes (tests compare conversions) */
    char *package;               /* the generator's package name (NULL: none) */
} SimHprofSent;

struct SimVm {
    SimWorld *world;
    guint serial;                /* creation order */
    uint32_t pid;
    uint16_t port;
    SimMode mode;
    char *real_name;             /* process name once "named" */
    char *package_name;
    gboolean named;              /* FALSE: "<pre-initialized>" */
    gint64 rename_at_ms;         /* world time of the rename, 0 = none pending */
    int32_t user_id;
    uint8_t native_debuggable;
    int listen_fd;
    SimIoHandle *listen_io;
    SimConn *conn;
    SimThreads threads;
    SimHeap heaps[SIM_MAX_HEAPS];
    unsigned n_heaps;
    SimHeap native;
    SimAlloc alloc;              /* allocation tracker (alloc_model.h) */
    uint32_t native_generation;
    SimHpifSent hpif_sent[SIM_MAX_HEAPS];
    SimSegStats seg_sent[SIM_MAX_HEAPS];
    gboolean seg_sent_valid[SIM_MAX_HEAPS];
    uint32_t seg_sent_generation[SIM_MAX_HEAPS];
    SimSegStats native_seg_sent;
    gboolean native_seg_sent_valid;
    SimNhgtStats nhgt_sent;
    gboolean nhgt_sent_valid;
    SimHprofSent hprof_sent;
    /* Payloads of the last THSTs sent, newest at thst_recent[0]: a test
     * can match a view against whichever poll the view came from. */
    GBytes *thst_recent[SIM_THST_RECENT];
    uint32_t event_serial;       /* for VM-originated packet ids */
    gboolean waiting;            /* WAIT sent, no debugger yet */
    gboolean debugger_active;
    gint64 next_gc_ms;
    gint64 next_main_state_ms;   /* --main-state-every: main's next switch */
    gboolean retired;
    guint64 connections;         /* served so far */
    guint64 refused;             /* second connections dropped */
    struct SimProfiling *profiling; /* method tracing (profiling.c), NULL until asked */
    struct SimViewDebug *viewdebug; /* view debugging (viewdebug.c), NULL until asked */
};

struct SimConn {
    SimVm *vm;
    int fd;
    SimIoHandle *io;
    gboolean handshaken;
    uint8_t hs[DDM_JDWP_HANDSHAKE_LEN];
    size_t hs_len;
    GByteArray *in;              /* unparsed input (NULL while empty) */
    GByteArray *out;
    size_t out_off;
    struct SimProducer *producer; /* streaming now (e.g. a heap dump), NULL if none */
    GQueue *later;               /* SimOutItem*: output queued behind the producer */
    size_t later_bytes;          /* bytes held in @later */
    gboolean in_callback;
    gboolean closing;            /* destroy when the callback returns */
    gboolean close_after_flush;  /* e.g. VirtualMachine.Dispose */
    gboolean ddm_seen;
    gboolean then_on;
    uint8_t hpif_when;
    uint8_t hpsg_when, hpsg_what;
    uint8_t nhsg_when, nhsg_what;
    uint32_t thst_interval_ms;
    gint64 next_thst_ms;
    struct SimJdwpModel *jdwp;   /* the debugger's object model (jdwp_model.c), NULL until used */
};

struct SimWorld {
    SimConfig cfg;
    GMainContext *ctx;
    SimReactor *reactor;
    GPtrArray *vms;              /* SimVm*, oldest first (owned) */
    GHashTable *by_pid;          /* pid -> SimVm* (borrowed) */
    GHashTable *ports;           /* ports in use (GUINT_TO_POINTER) */
    GArray *watches;
    guint next_watch_id;
    GPtrArray *dead;             /* retired VMs waiting to be freed */
    GPtrArray *dead_conns;       /* closed connections waiting to be freed */
    guint reap_source;
    gboolean reaping;
    SimRng rng;
    uint32_t next_pid;
    guint next_serial;
    unsigned name_cursor;
    GPtrArray *retired_names;    /* names free for reuse by churn */
    guint tick_source;
    gint64 start_us;
    gint64 last_tick_ms;
    gint64 next_churn_ms;
    gboolean state_dirty, ports_dirty;
    guint state_source;
    gint64 last_state_ms;
    gint64 state_cost_ms;        /* how long the last texts took to build */
    SimFileWriter *files;        /* writes them (NULL until the first) */
    gboolean started;
};

/* world.c */
gint64 sim_world_now_ms(SimWorld *w);
void sim_world_state_changed(SimWorld *w);
void sim_world_ports_changed(SimWorld *w);
/** Remove @vm from the world (EXIT, churn): pid gone now, freed later. */
void sim_world_retire_vm(SimWorld *w, SimVm *vm);
/** Free @c (closed outside its own callback) once the current dispatch is over. */
void sim_world_defer_free_conn(SimWorld *w, SimConn *c);

/* vm.c */
SimVm *sim_vm_new(SimWorld *w, SimMode mode, uint32_t pid, const char *name, guint serial);
void sim_vm_free(SimVm *vm);
/** Listen on @port (0 = any); FALSE with @error when the port is taken. */
gboolean sim_vm_listen(SimVm *vm, const char *address, int port, GError **error);
void sim_vm_stop_listening(SimVm *vm);
void sim_vm_tick(SimVm *vm, gint64 now_ms, uint32_t dt_ms);
/** A "GC": heaps change; data events if the client asked for them. */
void sim_vm_gc(SimVm *vm);
uint32_t sim_vm_next_event_id(SimVm *vm);
/** The name HELO and APNM carry now. */
const char *sim_vm_current_name(const SimVm *vm);

/* conn.c */
SimConn *sim_conn_new(SimVm *vm, int fd);
/** Close now, or when the running callback returns. @why is logged. */
void sim_conn_close(SimConn *c, const char *why);
/** Free a closed connection's memory (its I/O is already gone). */
void sim_conn_free(SimConn *c);
void sim_conn_send_raw(SimConn *c, const uint8_t *bytes, size_t len);
/** Write queued output now (e.g. a last reply before the VM goes). */
void sim_conn_flush(SimConn *c);
/** An event (command packet 0xC7/1) with one chunk; ZLIB-wrapped when configured. */
void sim_conn_send_event(SimConn *c, uint32_t type, const uint8_t *data, size_t len);
/** A reply carrying one chunk (ZLIB-wrapped when configured). */
void sim_conn_send_reply(SimConn *c, uint32_t id, uint32_t type, const uint8_t *data, size_t len);
/** "Nothing to say": empty reply (Dalvik) or none at all (ART). */
void sim_conn_reply_nothing(SimConn *c, uint32_t id);
void sim_conn_send_fail(SimConn *c, uint32_t id, uint32_t code, const char *msg);
void sim_conn_send_jdwp_reply(SimConn *c, uint32_t id, uint16_t error, const uint8_t *data, size_t len);
/** Stream output from @fn as the socket drains (at most SIM_PRODUCE_STEP
 *  bytes buffered), after everything queued so far; output queued while it
 *  runs waits behind it. Ownership of @ud passes to the connection. */
void sim_conn_start_producer(SimConn *c, SimProduceFn fn, SimProducerFreeFn free_fn, void *ud);

/* handlers.c */
void sim_handle_packet(SimConn *c, const DdmJdwpPacket *pkt);
void sim_conn_send_hpif(SimConn *c, uint8_t reason);
void sim_conn_send_segments(SimConn *c, gboolean native);
void sim_conn_send_thst(SimConn *c, uint32_t reply_id, gboolean as_event);
void sim_conn_send_apnm(SimConn *c);

/* hprof_dump.c */
/** HPDS (streamed heap dump) with an empty payload. */
void sim_handle_hpds(SimConn *c, uint32_t id);
/** HPDU: lstr device path; the dump "stays on the device". */
void sim_handle_hpdu(SimConn *c, uint32_t id, ddm_reader *payload);
/** Write a dump of @size bytes from @seed to @path; @sha256 gets its hex digest. */
gboolean sim_hprof_write_file(const char *path, guint64 size, uint32_t seed, const char *package,
                              char sha256[65], GError **error);
/** The generator seed --seed N gives --write-hprof. */
uint32_t sim_hprof_seed(guint64 seed);

/* profiling.c (the rest in profiling.h) */
void sim_profiling_free(struct SimProfiling *p);

/* viewdebug.c (the rest in viewdebug.h) */
void sim_viewdebug_free(struct SimViewDebug *vd);

/* statefile.c */
/** The ground truth as JSON text. (transfer full) */
char *sim_state_to_json(SimWorld *w);
/** Rewrite @path atomically (tmp + rename) with @text. */
gboolean sim_write_atomically(const char *path, const char *text, GError **error);

/* filewriter.c: the port and state files, written by a thread of their own */
SimFileWriter *sim_file_writer_new(void);
/** Queue @text (transfer full) for @path, replacing a text for @path not yet written. */
void sim_file_writer_put(SimFileWriter *fw, const char *path, char *text);
/** Wait until everything queued is written. */
void sim_file_writer_flush(SimFileWriter *fw);
/** Write what is queued, end the thread, free @fw (NULL: nothing). */
void sim_file_writer_free(SimFileWriter *fw);
/** One member @name of the object @b is building, with the value @v
 *  (sim_json_member_str: @v copied). */
typedef struct _JsonBuilder JsonBuilder; /* json-glib's, for the files that add to the state */
void sim_json_member_int(JsonBuilder *b, const char *name, gint64 v);
void sim_json_member_str(JsonBuilder *b, const char *name, const char *v);
void sim_json_member_bool(JsonBuilder *b, const char *name, gboolean v);

#endif /* SIMVM_PRIVATE_H */
