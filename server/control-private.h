/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by control.c (connections: accept, client I/O and
 * queues, dispatch, view-change fan-out) and control_ops.c (what each
 * request does). Nothing outside those two files includes this header; the
 * rest of the server uses control.h.
 *
 * Memory: a Client lives in ctl->clients until it is closed; closing only
 * marks it dead (it may be in use further up the stack: a views listener
 * fires inside any commit) and a zero-delay timer frees dead clients. A command in
 * flight holds a PendingCmd whose client pointer is cleared when the
 * client goes first.
 */
#ifndef DDM_CONTROL_PRIVATE_H
#define DDM_CONTROL_PRIVATE_H

#include "server/control.h"

#include "core/loop/listener.h"
#include "core/loop/timer.h"
#include "core/loop/watch.h"
#include "core/views/interest.h"
#include "core/wire/ctlproto.h"

typedef struct Client Client;

/* A request the client waits for: a plugin command in flight or a delayed
 * reply (see control_ops.c). */
typedef struct PendingCmd {
    Client *client;  /* NULL once the client is gone */
    gboolean blobs;
    DdmCtlRequest delayed_req; /* a delayed reply (delay_reply: a view, the VM list, the
                                * version after a watch), else zeroed */
    DdmTimer delay_timer;      /* core/loop: the next look at a delayed reply */
    guint delay_step_ms;       /* the wait after the next look, if it is not the last */
    gboolean polled;           /* a first look: the polls it waits for are settled */
    gboolean capped;           /* its cap let it go, without what it waited for */
    gboolean doc_look;         /* a `vms` with "jq": the VM list is there, the headline
                                * views' first look is waited for (op_vms_doc) */
    DdmControl *delay_ctl;     /* for delayed replies: outlives the client */
    gint64 delay_since_us;     /* monotonic time the delayed request came */
    gint64 cap_at_us;          /* if not 0: answered by then at the latest (a `vms`
                                * of the server's first STARTUP_MAX_MS) */
} PendingCmd;

struct Client {
    DdmControl *ctl;
    guint64 serial;
    int fd;
    DdmWatch *source;      /* core/loop; its conditions are client_update_watch's */
    DdmLineFramer *in;
    GByteArray *out;
    gsize out_pos;
    gboolean close_after_flush;
    gboolean dead;
    gboolean eof;
    PendingCmd *cmd;       /* command in flight */
    DdmTimer process_timer; /* zero-delay: resumes request processing after a command */
    /* watch */
    gboolean watching;
    guint watch_id;
    char *watch_name;      /* NULL = all */
    char *watch_vm;        /* VM key, NULL = all */
    gboolean watch_blobs;
    gint64 watch_started_us; /* monotonic time of the watch: its version's "settled"
                              * waits only for sessions begun before (review rF 2) */
    gint64 first_look_us;  /* the watch made views watched that nobody watched (monotonic
                            * time, 0: it did not, or a version answer said so): the
                            * next version waits for their first look */
};

struct DdmControl {
    DdmDaemon *daemon;
    int listen_fd;
    DdmListener *accepting; /* on listen_fd (core/loop/listener.h) */
    GList *clients;        /* Client* */
    guint n_live;
    DdmTimer reap_timer;   /* zero-delay: frees dead clients */
    DdmTimer stop_timer;   /* zero-delay: calls stop after op_kill's answer */
    guint listener;
    guint64 next_serial;
    DdmControlStopFn stop;
    gpointer stop_ud;
    DdmViewInterest *interest; /* one-shot views, kept watched a while */
    GList *delayed_replies; /* PendingCmd* of delay_reply() (freed at shutdown) */
    guint64 n_delays_capped; /* delayed replies answered at their cap (tests, debug log) */
    gint64 started_us;     /* monotonic: when the server began to answer */
    gint64 first_poll_until_us; /* monotonic: no first look is done before (control_ops.c's
                                   FIRST_POLL_MS, for plugins that do not poll on a watch) */
    char *web_url;         /* the dashboard's URL with its token, NULL without --http */
};

/* ---------------------------------------------------- control.c offers */

/** Queue @node (taken over) to @c as one line; drops a client that does
 *  not read. */
void ddm_control_send(Client *c, JsonNode *node);
/** Queue @len bytes of @line (one JSON object and its "\n", copied) to @c. */
void ddm_control_send_text(Client *c, const char *line, gsize len);
/** After @c's pending request was answered: go on with its next requests
 *  from an idle. */
void ddm_control_resume(Client *c);

/* ------------------------------------------------ control_ops.c offers */

/** What one request op does. The request stays the caller's. */
typedef void (*DdmControlOpFn)(Client *c, const DdmCtlRequest *req);

/** The handler of @op, NULL if there is none. */
DdmControlOpFn ddm_control_op_find(DdmCtlOp op);
/** Set up and tear down the ops' state in @ctl (start time, one-shot view
 *  interest, delayed replies). */
void ddm_control_ops_init(DdmControl *ctl);
void ddm_control_ops_free(DdmControl *ctl);
/** TRUE if watching client @c wants events about @v. */
gboolean ddm_control_watch_matches(const Client *c, ddm_view *v);
/** The event line a watcher gets for @change of @v. (transfer full) */
JsonNode *ddm_control_change_event(ddm_view *v, DdmViewChange change, gboolean blobs);

#endif /* DDM_CONTROL_PRIVATE_H */
