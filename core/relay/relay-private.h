/* SPDX-License-Identifier: Apache-2.0
 *
 * The relay's objects and the functions its files call in each other, for
 * core/relay/ only: everyone else uses relay.h. Three objects:
 *  - Endpoint: a listening socket (a VM's 86xx port, the selected port, or a
 *    fixed port of a --connect target);
 *  - Debugger: one accepted connection: handshake, reader, write queue;
 *  - RelayVm (vm->relay): the relay's state for one VM connection: its
 *    debugger, the id map, the packets kept for the first debugger.
 * Invariants: a Debugger is attached to at most one RelayVm and a RelayVm
 * has at most one Debugger; every buffer is capped (reader: max_packet;
 * write queue: max_write_queue; early packets: EARLY_CAP in relay.c);
 * nothing a VM sends after a debugger left reaches the next debugger.
 *
 * The files: relay.c (the DdmRelay object, relay.h, per-VM state),
 * relay_ports.c (endpoints, port assignment, parking, the selection),
 * portmap.c (the ports remembered across restarts, pure but for its file),
 * relay_attach.c (which VM a debugger reaches after its handshake, holding
 * it until that VM is up), relay_debugger.c (one debugger connection:
 * packets both ways, id remapping, backpressure, closing) and
 * relay_leave.c (putting a VM back when its debugger leaves).
 */
#ifndef DDM_RELAY_PRIVATE_H
#define DDM_RELAY_PRIVATE_H

#include "core/relay/relay.h"

#include <stdint.h>

#include "core/config/config.h"
#include "core/loop/listener.h"
#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/relay/idmap.h"
#include "core/relay/portmap.h"
#include "core/relay/portpool.h"
#include "core/session/ratelog.h"

/* A packet this long that has not arrived whole is forwarded as its bytes
 * arrive (cut-through), both ways. */
#define DDM_RELAY_CUT_THROUGH_AT (64u * 1024u)

/* Outstanding debugger commands per VM (the id map's cap). */
#define DDM_RELAY_MAX_MAPPED 65536u

/* VM keys whose port is remembered in this run (least recently used go). */
#define DDM_RELAY_KEY_PORTS 512u
/* A new VM's port: the lowest free one from the base, passing over at most
 * this many free ports that other apps or keys are remembered with (so
 * they can have them back), whatever the map holds: the highest port stays
 * below base + VMs up + ports parked + this. */
#define DDM_RELAY_RESERVED_SKIP_MAX 32u

typedef enum { EP_VM, EP_SELECTED, EP_FIXED } EndpointKind;

typedef struct Endpoint Endpoint;
typedef struct Debugger Debugger;
typedef struct RelayVm RelayVm;

/* One a VM (issue 16: 40 bytes, glibc's 48-byte block; the key is not
 * copied). */
struct Endpoint {
    DdmRelay *relay;
    DdmListener *listener; /* accepts debuggers (core/loop/listener.h) */
    const char *key;    /* the VM key it reaches: EP_FIXED: owned; EP_VM: borrowed from
                           its VM's info.key (the target's, alive as long as that VM)
                           while a VM has it, from its key in relay->parked while parked;
                           EP_SELECTED: NULL */
    int fd;
    guint index;        /* its place in relay->endpoints */
    guint16 port;
    guint8 kind;        /* EndpointKind */
    guint8 parked;      /* EP_VM in relay->parked (its ParkedPort holds the timer) */
};

typedef enum { DBG_HANDSHAKE, DBG_HELD, DBG_ATTACHED, DBG_CLOSED } DebuggerState;

struct Debugger {
    DdmRelay *relay;
    Endpoint *endpoint;       /* borrowed; NULL once the endpoint closed */
    guint16 port;
    int fd;
    DdmWatch *in_watch, *out_watch; /* core/loop watches of fd; out_watch is made when
                                       output first waits, then dormant while none does */
    gboolean out_blocked;     /* bytes in `out` wait for the socket (out_watch wants G_IO_OUT) */
    DdmTimer flush_timer;     /* zero-delay: writes what VM packets queued during this
                                 main-loop round */
    GByteArray *to_vm;        /* packets read from the debugger, ids mapped, not yet sent */
    gboolean to_vm_parts;     /* a long command goes to the VM cut-through, as it arrives */
    gboolean from_vm_parts;   /* a long reply comes from the VM cut-through: what else is
                                 for this debugger waits in `held` until it ends */
    GByteArray *held;         /* NULL unless packets wait behind that reply */
    DebuggerState state;
    guint32 in_place_max;     /* the longest read the fused path of a command takes
                                 (on_debugger_in): below its buffer's size, within the
                                 reader's cap and the VM's write queue's (max_write_queue);
                                 set when the debugger is made: both caps are fixed for
                                 the daemon's life (a cap made changeable at run time
                                 must update it) */
    DdmJdwpReader *reader;
    GByteArray *out;
    gsize out_pos;
    RelayVm *rvm;             /* when attached */
    char *held_key;           /* when held: the VM key awaited, or NULL for the selection */
    DdmTimer handshake_timer; /* armed while in DBG_HANDSHAKE: the handshake's deadline
                                 (cfg->handshake_timeout_ms from the accept) */
    DdmTimer hold_timer;      /* armed while held */
    gboolean sent_dispose;
    gboolean reading_paused;  /* not reading from the debugger: its VM's queue is full */
    gboolean vm_paused;       /* the VM's input paused: this debugger's queue is full */
    char *peer;
    /* Splice (relay_debugger.c): a long reply's bytes go VM socket -> pipe
     * -> debugger socket, never through ddmon's memory. The pipe is made at
     * the first such reply; what the debugger did not take yet stays in it
     * and goes before anything in `out` (out_blocked and the VM paused while
     * it does). */
    int pipe_r, pipe_w;       /* -1 until made */
    guint32 pipe_left;        /* bytes in the pipe, not yet written to the debugger */
    guint32 pipe_size;
    guint32 pipe_refused;     /* a grow to this size was refused in this reply: not asked again */
    guint64 reply_spliced;    /* bytes of the reply now going out that went by the pipe */
    gboolean splice_off;      /* the pipe or splice(2) failed once: read and write instead */
};

struct RelayVm {
    DdmVm *vm;                /* borrowed: lives while the VM does */
    Debugger *debugger;
    DdmIdMap *ids;            /* NULL until a debugger first attaches (relay_attach.c) */
    GQueue early;             /* GBytes* packets kept for the first debugger */
    gsize early_bytes;
    Endpoint *endpoint;       /* its dynamic port (EP_VM), or NULL */
    Debugger *reply_to;       /* a long reply goes to this debugger (NULL: dropped; cleared
                                 when it closes) */
    /* flags, one bit each: a RelayVm exists for every VM with a port */
    guint had_debugger : 1;   /* a debugger attached on this connection */
    guint early_overflow_logged : 1;
    guint reconnect : 1;      /* the relay wants this connection reopened */
    guint reply_streaming : 1; /* a long reply goes out as it arrives (ddm_relay_reply_part) */
    guint leaving : 1;        /* a debugger left: this connection is being cleaned up
                                 (DBGD pending, or Dispose sent and the VM about to close
                                 it); a new debugger waits for the outcome */
};

/* The debugger attached to @r's VM, or NULL. Whose a reply is, its entry
 * taken from the id map (@client, ddm_idmap_take): the VM's attached
 * debugger's, or NULL (one ddmon sent on a debugger's
 * behalf, or a departed debugger's: dropped). One rule for the general path
 * (relay.c) and the fused one (ddm_relay_reply_alone). */
static inline Debugger *relay_attached_debugger(const RelayVm *r)
{
    Debugger *d = r->debugger;
    return d && d->state == DBG_ATTACHED ? d : NULL;
}
static inline Debugger *relay_reply_debugger(const RelayVm *r, gpointer client)
{
    return client && client == relay_attached_debugger(r) ? client : NULL;
}

struct DdmRelay {
    DdmMonitor *mon;
    const DdmConfig *cfg;     /* ddm_monitor_config(mon), which is fixed for the monitor's
                                 life: read per packet without a call */
    GPtrArray *endpoints;     /* every open Endpoint* (owned; ep->index is its place;
                                 which ports are ours: vm_ports, relay_ports.c) */
    DdmPortMap *port_by_key;  /* VM key -> port (remembered in this run; the
                                 DDM_RELAY_KEY_PORTS most recently used keys) */
    DdmPortMap *port_by_app;  /* device serial + app name -> port (remembered; loaded from
                                 and saved to cfg->port_map_path when set) */
    gboolean port_map_dirty;  /* the order changed since the last save */
    gboolean port_map_save_warned; /* a failed save was logged once */
    DdmTimer port_map_save;   /* armed while a save of the port map is due (relay_ports.c) */
    DdmPortPool vm_ports;     /* the VM port range: which ports are ours or another's
                                 (relay_ports.c; empty with --debug-port-base 0) */
    GHashTable *fixed_by_key; /* key -> Endpoint* of --connect targets */
    GHashTable *local_vm_ports; /* JDWP port -> sessions with a VM on this machine at that
                                 port (GUINT_TO_POINTER both; relay_ports.c, told by the
                                 monitor's key watch): never a debugger port */
    GHashTable *local_sessions; /* DdmTarget* (borrowed: its session holds it until LOST) ->
                                 its JDWP port, for each session counted in local_vm_ports:
                                 LOST undoes what HELD did, decided once a session */
    GHashTable *parked;       /* key (owned) -> ParkedPort* (relay_ports.c, owned): a VM
                                 port kept open while its VM reconnects */
    GPtrArray *debuggers;     /* Debugger* alive */
    GPtrArray *dead;          /* Debugger* closed, freed by reap_timer (callers may still look) */
    DdmTimer reap_timer;      /* zero-delay: frees `dead` at the next iteration */
    Endpoint *selected;
    char *selection;
    gboolean shutting_down;   /* no cleanup requests to VMs while freeing */
};

static inline const char *vm_label(DdmVm *vm)
{
    return vm->info.key ? vm->info.key : "?";
}

/* A line of kind @what ("closed", "held", "refused"...) about a debugger
 * connection on @port, rate-limited per port and kind (ratelog.h): a port
 * hammered by connects logs a few lines of each kind per window, and one
 * kind of line never hides another. */
#define relay_debugger_log(port, what, ...)                                                \
    do {                                                                                   \
        char rk_[64];                                                                      \
        g_snprintf(rk_, sizeof rk_, "debugger port %u %s", (unsigned)(port), (what));      \
        ddm_ratelog(rk_, G_LOG_LEVEL_MESSAGE, __VA_ARGS__);                                \
    } while (0)

/* A line about what the relay does with VM @vm as its debuggers come and
 * go, rate-limited per VM (a debugger reattaching in a loop). */
#define relay_vm_log(vm, ...)                                                              \
    do {                                                                                   \
        g_autofree char *rk_ = g_strdup_printf("%s relay", vm_label(vm));                  \
        ddm_ratelog(rk_, G_LOG_LEVEL_MESSAGE, __VA_ARGS__);                                \
    } while (0)

/* relay.c: per-VM state. */

/** @vm's RelayVm, created on first use. */
RelayVm *ddm_relay_rvm_get(DdmVm *vm);

/* relay_ports.c: endpoints, port assignment, parking, the selection. */

/** Load the remembered ports (one warning if the file is unusable). */
void ddm_relay_ports_load(DdmRelay *relay);
/** Save the remembered ports if their order changed since the last save. */
void ddm_relay_ports_flush(DdmRelay *relay);
/** Open the selected-VM port and the fixed ports of --connect targets. */
void ddm_relay_ports_open(DdmRelay *relay);
void ddm_relay_ports_close(DdmRelay *relay);
void ddm_relay_endpoint_close(Endpoint *ep);
/** Give @r's VM its port: the parked one, or a new one (none if it has a
 *  fixed port). */
void ddm_relay_ports_vm_up(DdmRelay *relay, RelayVm *r);
/** @vm's identity changed: back to its app's port if free; remember it. */
void ddm_relay_ports_vm_changed(DdmRelay *relay, DdmVm *vm);
/** @r's connection closed: park its port while it reconnects, or close it. */
void ddm_relay_ports_vm_closed(DdmRelay *relay, RelayVm *r, gboolean reconnect);
/** The VM the selection reaches now, or NULL. */
DdmVm *ddm_relay_selected_vm(DdmRelay *relay);

/* relay_attach.c: which VM a debugger reaches, holding, attaching. */

/** Handshake done: attach @d to the VM its port reaches, hold it until
 *  that VM is up, or close it. */
void ddm_relay_route(Debugger *d);
/** Debuggers held for @vm (its fixed or parked port, or the selection that
 *  now matches it) attach now, if @vm is up and has no debugger: called
 *  when it comes up or is put back, when its identity changes and when the
 *  selection changes. */
void ddm_relay_release_held(DdmRelay *relay, DdmVm *vm);

/* relay_debugger.c: one debugger connection. */

/** A debugger accepted on @ep (socket @fd, address @peer, transfer full):
 *  it is read from now on. */
Debugger *ddm_relay_debugger_new(Endpoint *ep, int fd, char *peer);
/** Read from @d again (it was held, or its VM's queue drained). */
void ddm_relay_debugger_read(Debugger *d);
void ddm_relay_debugger_flush(Debugger *d);
/** Handle what @d's reader holds. */
void ddm_relay_debugger_drain(Debugger *d);
/** One whole packet for the debugger (@p/@n, borrowed for the call, its id
 *  already the debugger's): written at once unless its socket is full or
 *  @more (another whole packet for it is already read: they go out together);
 *  FALSE (and the debugger closed) past the cap. */
gboolean ddm_relay_debugger_queue(Debugger *d, const guint8 *p, gsize n, gboolean more);
gboolean ddm_relay_debugger_send(Debugger *d, const guint8 *p, gsize n);
/** A long reply from the VM forwarded cut-through: its header (@head, 11
 *  bytes, given the debugger's @id), then its bytes as they arrive, then the
 *  end; packets queued for @d meanwhile go out after it. */
void ddm_relay_debugger_part_begin(Debugger *d, const guint8 *head, uint32_t id);
void ddm_relay_debugger_part(Debugger *d, const guint8 *p, gsize n);
void ddm_relay_debugger_part_end(Debugger *d);
/* The rest of the reply going to @d moved from the VM's socket @from,
 * socket to socket (DdmSessionEvents.reply_splice, monitor.h, says what it
 * returns); -ENOTSUP while something waits before it for @d. */
gssize ddm_relay_debugger_splice(Debugger *d, int from, size_t max, gboolean *socket_empty);
/** Close @d (@why logged, or NULL); it is freed at the next iteration (reap_timer). */
void ddm_relay_debugger_close(Debugger *d, const char *why);
/** Free a closed debugger (the relay's dead list). */
void ddm_relay_debugger_free(gpointer p);

/* relay_leave.c: when a debugger leaves. */

/** @d left @r (cleanly or not): make the VM go on as if none had come. */
void ddm_relay_after_debugger_left(RelayVm *r, Debugger *d);

#endif /* DDM_RELAY_PRIVATE_H */
