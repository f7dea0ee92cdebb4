/* SPDX-License-Identifier: Apache-2.0
 *
 * One VM connection (struct ddm_vm, the opaque handle plugins hold) and its
 * session state machine:
 *
 *   CONNECTING --fd--> HANDSHAKE --echo--> HELO --HELO reply--> READY (DDM)
 *                                            \--JDWP error-----> PLAIN (JVM)
 *   any state --EOF, garbage, timeout, close()--> CLOSED
 *
 * The session owns the fd, the JDWP reader and write queue, the pending
 * request table and the VM's identity. Each packet from the VM is one of:
 * a reply to one of our requests, a DDM event (0xC7/1 command), or JDWP
 * traffic for a debugger (handed to the monitor, which relays or drops it).
 * A ddm_vm lives as long as one connection; a reconnect is a new ddm_vm
 * with the same key. Memory: the monitor owns every ddm_vm (its table holds
 * the reference); ddm_vm_close() removes it.
 */
#ifndef DDM_VM_H
#define DDM_VM_H

#include <errno.h>
#include <gio/gio.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ddmon/plugin.h>

#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/session/correlate.h"
#include "core/wire/jdwp.h"
#include "core/transport/target.h"

typedef struct DdmMonitor DdmMonitor;
typedef struct ddm_vm DdmVm;

#define DDM_VM_MAGIC 0x564D4D31u

typedef enum {
    DDM_VM_STATE_CONNECTING = 0,
    DDM_VM_STATE_HANDSHAKE,
    DDM_VM_STATE_HELO,
    DDM_VM_STATE_READY,     /* DDM-aware */
    DDM_VM_STATE_PLAIN,     /* answered HELO with a JDWP error: plain JVM */
    DDM_VM_STATE_CLOSED
} DdmVmState;

/* One typed headline figure as the core keeps it: its name and value (the
 * headline view's field is "LABEL_NAME", made when it is published). */
typedef struct DdmHeadlineFigure {
    char name[DDM_HEADLINE_FIGURE_NAME_MAX + 1];
    ddm_value_type type; /* DDM_VAL_INT or DDM_VAL_DOUBLE */
    gint64 i;
    double d;
} DdmHeadlineFigure;

struct ddm_vm {
    uint32_t magic;             /* DDM_VM_MAGIC while alive; host functions check it */
    gint ref_count;
    DdmMonitor *monitor;        /* borrowed */
    DdmTarget *target;          /* owned reference */

    /* identity: the session owns the strings `info` points to (no second
     * copy of the pointers): app_name and package_name its own (g_free),
     * vm_ident, abi and jvm_flags shared interned strings and features a
     * shared vector (vm_ident.c: the same text of many VMs is held once);
     * key, transport and device are the target's (ddm_vm_sync_info) */
    ddm_vm_info info;
    struct DdmVmRare *rare;     /* what few VMs ever hold (ddm_vm_rare), NULL until then */
    /* what plugins set through the host: short lists (vm_tables.c; NULL
     * until the first): the data one block an entry, the headlines and the
     * figures one read-only block a list, shared by the VMs with the same */
    struct DdmVmPluginData *plugin_data; /* each plugin's data */
    struct DdmVmHeadline *headlines;      /* "label" -> "text", sorted by label (shared) */
    struct DdmVmFigures *headline_figures; /* label -> its figures (ABI 1.2
                                             vm_headline_figures), sorted by label (shared) */
    struct DdmVmMetric *metrics; /* each plugin's samples of each family (ABI 1.3 vm_metric,
                                 * core/pluginhost/registry_metrics.c), a list sorted by
                                 * key; NULL until the first */
    GHashTable *unknown_logged; /* chunk types already logged as unknown (NULL until the first) */

    /* I/O */
    DdmWatch *io_watch;         /* fd readiness (core/loop), NULL while paused or closed */
    DdmConnectCancel *cancel;   /* cancels a connect in progress; owned, freed once it reported */
    DdmJdwpReader *reader;
    GByteArray *out;            /* bytes not yet written; NULL while none wait (vm_io.c) */
    gsize out_pos;
    guint64 out_part_left;      /* bytes of a packet sent in parts (the relay's cut-through)
                                 * still to come; other packets wait in out_held meanwhile */
    GByteArray *out_held;       /* NULL unless packets wait behind a packet sent in parts */
    DdmCorrelate *pending;

    /* stats */
    gint64 started_us;          /* when the monitor began the session (connecting): a look
                                 * waits only for sessions older than itself */
    gint64 connected_at_us;
    guint64 packets_in, packets_out, bytes_in, bytes_out, jdwp_dropped;
    guint64 bytes_streamed;     /* of bytes_in: streamed DDM events (vm_stream.c) */
    char *close_reason;

    gpointer relay;             /* the relay's per-VM state, NULL until a debugger port is given */

    /* session internals (core/session only) */
    DdmWatch *out_watch;        /* G_IO_OUT watch, only while `out` holds unsent bytes */
    DdmTimer deadline;          /* the one timer (core/loop): the earliest deadline, or at
                                 * once for a deferred close */
    gint64 handshake_deadline_us; /* HANDSHAKE: when a missing echo closes the session */
    struct DdmVmStream *stream; /* a DDM event being streamed (vm_stream.c), else NULL */

    /* The 32-bit fields and the flags last, together: every VM has one
     * DdmVm, so it has no holes (doc/memory.md). */
    DdmVmState state;
    int fd;
    uint32_t next_id;           /* our ids: 0x40000000 + n, like ddmlib */
    uint32_t answered_id;       /* the newest of our requests the VM answered (0: none) */
    uint32_t fence_id;          /* ddm_vm_requests_settled's FEAT in flight (0: none) */
    uint32_t helo_id;           /* id of our HELO: a late answer still makes the VM DDM */
    guint reply_streaming : 1;  /* a reply goes to its claimer as it arrives (reply_part) */
    guint was_ready : 1;        /* reached READY: the monitor sent DDM_VM_READY */
    guint was_plain : 1;        /* reached PLAIN: plain listeners heard DDM_VM_READY */
    guint was_connected : 1;    /* the transport connected (for the monitor's backoff) */
    guint violated : 1;         /* closed for breaking the protocol (ddm_vm_close_bad): the
                                   monitor backs off before the next session */
    guint refused_handshake : 1; /* the peer closed (or reset) the connection during the
                                    JDWP handshake: what a VM another debugger holds does
                                    (ART, simvm), and also a port that is no VM; the
                                    monitor's "busy" rows want evidence besides
                                    (session_says_held, monitor.c) */
    guint refused_connect : 1;  /* the connect was refused (nobody listens: OpenJDK's jdwp
                                   agent stops listening while a debugger is attached) */
    guint input_paused : 1;     /* ddm_vm_pause_input(): not reading from the VM */
    guint notify_drained : 1;   /* tell the monitor when `out` empties */
    guint out_gathering : 1;    /* the session's requests are gathered in `out`, sent in one
                                   write at the end (ddm_vm_io_gather_begin, vm_io.c) */
    guint metrics_set : 1;      /* a plugin's vm_metric changed `metrics` once: the VM has a
                                   "metrics" view, made when somebody asks for it
                                   (core/pluginhost/registry_metrics.c) */
    guint headline_set : 1;     /* a plugin's vm_headline_figures changed its figures once: the
                                   VM has a "headline" view, made when somebody asks for it
                                   (core/pluginhost/registry_headline.c) */
};

/* The members few VMs ever use, in one block made at the first use
 * (ddm_vm_rare) and freed with the VM: an idle DDM VM holds none, and its
 * DdmVm is 32 bytes smaller (malloc's block 448 bytes, not 480:
 * doc/memory.md). Read them through the getters below. */
typedef struct DdmVmRare {
    char *pid_note;              /* plain JVMs: why the pid is unknown ("pid unknown: another
                                    user's process (uid N)"), NULL when known */
    char *deferred_close_reason; /* deferred close (write error inside a request call),
                                  * done by the deadline timer at the next iteration */
    gpointer jdwp_suspend_owner; /* the plugin holding a thread suspended (jdwp_request), or NULL */
    GBytes *jdwp_suspend_thread; /* that thread's id as sent, or NULL */
} DdmVmRare;

/** @vm's rare members, made now if it had none. (transfer none: freed with @vm) */
DdmVmRare *ddm_vm_rare(DdmVm *vm);

/** Why @vm's pid is unknown (a plain JVM), or NULL. (transfer none) */
static inline const char *ddm_vm_pid_note(const DdmVm *vm)
{
    return vm->rare ? vm->rare->pid_note : NULL;
}

/** The plugin holding a thread of @vm suspended, or NULL. */
static inline gpointer ddm_vm_suspend_owner(const DdmVm *vm)
{
    return vm->rare ? vm->rare->jdwp_suspend_owner : NULL;
}

/** That thread's id as sent, or NULL. (transfer none) */
static inline GBytes *ddm_vm_suspend_thread(const DdmVm *vm)
{
    return vm->rare ? vm->rare->jdwp_suspend_thread : NULL;
}

/* One plugin's samples of one metric family for one VM, in one block
 * (g_free frees it): a VM has a handful, so they are a list sorted by key,
 * not a hash table (at most the registry's families times its plugins). */
typedef struct DdmVmMetric {
    struct DdmVmMetric *next;
    gpointer plugin;         /* who set them */
    const char *key;         /* "FAMILY/PLUGIN" (in the block) */
    guint n;
    double *values;          /* n (in the block) */
    const char **labels;     /* n, each NULL or in the block */
} DdmVmMetric;

/** Free every entry of the list at *@list (NULL after). */
static inline void ddm_vm_metrics_free(DdmVmMetric **list)
{
    while (*list) {
        DdmVmMetric *m = *list;
        *list = m->next;
        g_free(m);
    }
}

/* vm_tables.c: the per-VM tables plugins fill through the host. A VM has
 * a handful of entries in each (one per plugin, one or two labels a
 * plugin), so each is a list, not a hash table (~200 bytes and 3 blocks
 * even for one entry): the plugins' data one block an entry; the
 * headlines, and the figures, one block a list, read-only and shared by
 * every VM whose list is the same (change them only with
 * ddm_vm_headline_set and ddm_vm_figures_set); the walks are bounded by
 * the plugins loaded and DDM_VM_HEADLINES_MAX. */
typedef struct DdmVmPluginData {
    struct DdmVmPluginData *next;
    gpointer plugin;
    gpointer data;
    ddm_free_fn data_free;
} DdmVmPluginData;

/** At most this many headline labels, and as many figure labels, a VM
 *  (the SDK's number: <ddmon/plugin.h>). */
#define DDM_VM_HEADLINES_MAX DDM_HEADLINE_LABELS_MAX

typedef struct DdmVmHeadline {
    struct DdmVmHeadline *next; /* sorted by label */
    const char *text;           /* in the block */
    char label[];
} DdmVmHeadline;

/* A label's figures in one block of their size (a VM with two labels of one
 * figure each held 2 x 112 bytes of fixed-size names; now ~2 x 48): data
 * holds the label and the n names, each NUL-terminated, then each figure's
 * type byte and its 8 value bytes (the gint64 or the double, as the type
 * says; read them with ddm_vm_figures_get). */
typedef struct DdmVmFigures {
    struct DdmVmFigures *next;  /* sorted by label */
    guint16 size;               /* bytes in data */
    guint8 n;                   /* <= DDM_HEADLINE_FIGURES_MAX */
    char data[];                /* the label first: ddm_vm_figures_label */
} DdmVmFigures;

/** @f's label. */
static inline const char *ddm_vm_figures_label(const DdmVmFigures *f)
{
    return f->data;
}
/** Figure @i (< f->n) of @f into @out (name, type and the value its type
 *  says; the other value 0). */
void ddm_vm_figures_get(const DdmVmFigures *f, guint i, DdmHeadlineFigure *out);

/** @plugin's entry, or NULL. */
DdmVmPluginData *ddm_vm_plugin_data_find(DdmVm *vm, gconstpointer plugin);
/** Unlink @plugin's entry and return it (the caller frees its data and
 *  g_frees it), or NULL. */
DdmVmPluginData *ddm_vm_plugin_data_take(DdmVm *vm, gconstpointer plugin);
/** Unlink every entry and return the list (vm->plugin_data is NULL after). */
DdmVmPluginData *ddm_vm_plugin_data_take_all(DdmVm *vm);
/** Free a list taken above: each entry's data (data_free) and the entry. */
void ddm_vm_plugin_data_free_list(DdmVmPluginData *list);
/** Label @label's text, or NULL. */
const char *ddm_vm_headline_get(const DdmVm *vm, const char *label);
/** Set (@text NULL: remove) a headline: 1 changed, 0 unchanged, -ENOSPC
 *  for a new label past DDM_VM_HEADLINES_MAX. */
int ddm_vm_headline_set(DdmVm *vm, const char *label, const char *text);
/** Headline labels set. */
guint ddm_vm_headlines_count(const DdmVm *vm);
/** Set @label's figures (@n 0: remove; at most DDM_HEADLINE_FIGURES_MAX):
 *  1 changed, 0 unchanged (the same names, types and values: the value a
 *  type does not use is not compared), -ENOSPC. */
int ddm_vm_figures_set(DdmVm *vm, const char *label, const DdmHeadlineFigure *figs, guint n);
/** Empty the headline and figure lists. */
void ddm_vm_headlines_clear(DdmVm *vm);

/** Create a session for @target (ref taken) and start connecting. The
 *  monitor is told of every state change and of the close. (transfer none:
 *  the monitor holds it) */
DdmVm *ddm_vm_new(DdmMonitor *monitor, DdmTarget *target);
DdmVm *ddm_vm_ref(DdmVm *vm);
void ddm_vm_unref(DdmVm *vm);
/** Close the connection (idempotent): pending requests get DDM_REPLY_VM_GONE,
 *  the monitor is told, the fd is closed. */
void ddm_vm_close(DdmVm *vm, const char *reason);

/** Send a DDM request; see ddm_host.request for the contract. @owner is the
 *  plugin or NULL for the core; @fn is called as fn(owner, vm, reply, ud). */
int ddm_vm_request(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                   unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out);
/** Queue a complete JDWP packet (relay). -ENOTCONN when closed, -ENOBUFS over the queue cap. */
int ddm_vm_send_packet(DdmVm *vm, const uint8_t *packet, size_t len);
/** The states in which the VM takes packets (HELO, READY, PLAIN). */
static inline gboolean ddm_vm_can_send(const DdmVm *vm)
{
    return vm->state == DDM_VM_STATE_HELO || vm->state == DDM_VM_STATE_READY ||
           vm->state == DDM_VM_STATE_PLAIN;
}
/** Nothing waits for the VM's socket (no write watch, no packet in parts,
 *  an empty queue) and @len is within its queue's cap @cap: a packet goes
 *  out with one send() from the caller's bytes (ddm_vm_send_packet's
 *  common case; the cap first, so a packet the socket takes in part is
 *  never cut). */
static inline gboolean ddm_vm_sends_now(const DdmVm *vm, size_t len, size_t cap)
{
    return vm->fd >= 0 && !vm->out_watch && vm->out_part_left == 0 &&
           (!vm->out || vm->out->len == vm->out_pos) && len <= cap;
}
/* vm_io.c's: the packet ddm_vm_send_whole_'s send() did not take whole
 * (@w its result, @err its errno): the rest waits for the socket, or an
 * error goes to the write queue, which meets it again and schedules the
 * close. 0, or as ddm_vm_send_packet. */
int ddm_vm_send_rest_(DdmVm *vm, const uint8_t *packet, size_t len, ssize_t w, int err);
/* One send() of the whole packet (ddm_vm_sends_now said so). */
static inline int ddm_vm_send_whole_(DdmVm *vm, const uint8_t *packet, size_t len)
{
    ssize_t w = send(vm->fd, packet, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (G_LIKELY(w == (ssize_t)len)) {
        vm->bytes_out += (guint64)w;
        vm->packets_out++;
        return 0;
    }
    return ddm_vm_send_rest_(vm, packet, len, w, errno);
}
/** ddm_vm_send_packet with its common case inline (the relay's every
 *  command; the fused path of issue 16): @vm valid (the caller knows),
 *  @cap its monitor's max_write_queue (the caller's copy of the config). */
static inline int ddm_vm_send_packet_now(DdmVm *vm, const uint8_t *packet, size_t len, size_t cap)
{
    if (G_LIKELY(ddm_vm_can_send(vm) && ddm_vm_sends_now(vm, len, cap) &&
                 len >= DDM_JDWP_HEADER_LEN))
        return ddm_vm_send_whole_(vm, packet, len);
    return ddm_vm_send_packet(vm, packet, len);
}
/** Queue the first @len bytes (>= 11) of a JDWP packet of @total bytes whose
 *  rest follows by ddm_vm_send_part() as it arrives (the relay forwards a
 *  large packet cut-through). Until its last byte is queued, every other
 *  packet for the VM waits behind it. -EBUSY while another is in progress;
 *  otherwise as ddm_vm_send_packet. */
int ddm_vm_send_part_begin(DdmVm *vm, const uint8_t *head, size_t len, guint64 total);
/** The next @len bytes of the packet begun (never past its end). A writer
 *  that cannot finish calls ddm_vm_send_part_abort(): the VM's connection,
 *  which carries a cut packet, is then closed (later, not from in here). */
int ddm_vm_send_part(DdmVm *vm, const uint8_t *p, size_t len);
void ddm_vm_send_part_abort(DdmVm *vm);
/** Bytes queued for the VM and not yet taken by the kernel (inline: the
 *  relay asks at every read from a debugger). */
static inline gsize ddm_vm_out_queued(const DdmVm *vm)
{
    g_return_val_if_fail(vm != NULL, 0);
    return vm->out ? vm->out->len - vm->out_pos : 0;
}
/** The server stops (ddm_monitor_flush_output): write what the VM's socket
 *  takes now of its write queue, without waiting. TRUE while bytes still
 *  wait for the socket (poll the fd for POLLOUT and call again); FALSE once
 *  all went, or when nothing more can go (no fd, a write error: the close
 *  that follows sees to it). */
gboolean ddm_vm_flush_now(DdmVm *vm);
/** Tell the monitor (ddm_monitor_vm_output_drained) once the queue for the
 *  VM is empty; at once-only, from the write watch, never from inside a send.
 *  FALSE if it is empty now (no call will come). */
gboolean ddm_vm_notify_when_drained(DdmVm *vm);
/** Stop (TRUE) or resume (FALSE) reading from the VM: backpressure from a
 *  slow reader of what the VM sends (the relay's debugger). While paused,
 *  nothing the VM sends is read, DDM replies included (requests may time
 *  out), exactly as if the VM's socket were full on a direct connection. */
void ddm_vm_pause_input(DdmVm *vm, gboolean paused);
/** Send a standard JDWP command to a plain JVM (ddm_host.jdwp_request's
 *  contract; the caller checked the allow-list): -ENOTCONN unless PLAIN,
 *  -ENOSPC, -EMSGSIZE. ThreadReference.Suspend/Resume keep the one held
 *  thread (vm->jdwp_suspend_*): a Suspend answered with an error releases
 *  it. @fn is called as fn(owner, vm, reply, ud) exactly once. */
int ddm_vm_jdwp_request(DdmVm *vm, gpointer owner, uint8_t cmdset, uint8_t cmd, const void *data,
                        size_t len, unsigned timeout_ms, ddm_jdwp_reply_fn fn, gpointer ud);
/** A fresh packet id from our range. */
uint32_t ddm_vm_alloc_id(DdmVm *vm);
/** TRUE unless @vm has a request in flight that may still be answered.
 *  A plain JVM (PLAIN) answers every JDWP command: FALSE while any of ours
 *  is pending. A READY VM answers requests in order, so one older than the
 *  newest it answered never will be (ART answers no THEN, HPIF, HPSG,
 *  HPGC); when it cannot tell, it sends a FEAT (the session's own request,
 *  one at a time) whose answer tells, and returns FALSE: ask again later.
 *  Any other state: TRUE (no plugin request goes out before READY or
 *  PLAIN). */
gboolean ddm_vm_requests_settled(DdmVm *vm);
/** Cancel pending requests owned by @owner (plugin unload): they get VM_GONE. */
void ddm_vm_cancel_owner(DdmVm *vm, gpointer owner);

const char *ddm_vm_state_name(DdmVmState s);
/** Update identity fields (NULL leaves a string unchanged) and notify. */
void ddm_vm_set_name(DdmVm *vm, const char *app_name, const char *package_name, int32_t user_id);
/** True while the handle is a live ddm_vm (magic check for host functions). */
static inline gboolean ddm_vm_is_valid(const DdmVm *vm)
{
    return vm != NULL && vm->magic == DDM_VM_MAGIC;
}

#endif /* DDM_VM_H */
