/* SPDX-License-Identifier: Apache-2.0
 *
 * fd watches on one epoll fd. Every socket ddmon watches is a small DdmWatch
 * in one table, not a GSource: the main context polls a single descriptor
 * (the epoll fd) and a wake-up costs the number of ready sockets, not the
 * number of sockets (doc/architecture.md, "The loop").
 *
 * Semantics follow g_unix_fd_add(): level-triggered; a watch fires when its
 * fd has one of the wanted conditions, or G_IO_HUP / G_IO_ERR (always
 * reported, as poll(2) does); the callback's return value says whether the
 * watch stays (G_SOURCE_CONTINUE) or goes (G_SOURCE_REMOVE). Several watches
 * may share one fd (a read watch and an out-watch): the epoll registration
 * is the union of their conditions, so adding or removing the out-watch, or
 * ddm_watch_set_cond(), is one epoll_ctl(MOD), never a new source. A watch
 * whose wanted conditions are 0 is dormant: it never fires, not even on HUP;
 * one that wants only G_IO_HUP | G_IO_ERR fires on those alone (a client
 * whose input is paused but whose departure must be noticed).
 *
 * Ownership: ddm_watch_add() returns a watch owned by the loop; the caller
 * keeps the pointer only as a handle and must drop it (set it to NULL) when
 * it calls ddm_watch_remove() or returns G_SOURCE_REMOVE. Remove every watch
 * of an fd before closing the fd: epoll forgets an fd at close(), and a
 * socket that gets the same number must not inherit the watch (a callback
 * that closes must call its close path with its handle still set, so the
 * watch goes before close(); its G_SOURCE_REMOVE then does nothing). Adding
 * a watch next to others of the same fd re-registers the fd all the same
 * (epoll_ctl MOD, then ADD on ENOENT), so a reused number is never lost.
 *
 * Order: the watches of one fd run in the order they were added (GLib's
 * order for sources of equal priority).
 *
 * Re-entrancy: a callback may add watches, remove any watch (itself or
 * another, of any fd) and change conditions; removed watches are never called
 * again, and their memory is freed once the outermost dispatch ends. A watch
 * is never called while its own callback runs: if a callback runs a nested
 * main loop, the nested iterations dispatch every other watch and leave the
 * running one (and its fd) out until it returns, like a GSource that cannot
 * recurse, but without unregistering anything in the common, non-nested case.
 *
 * Files epoll refuses (EPERM: regular files, directories, /dev/null), and
 * fds epoll cannot take (ENOMEM, or ENOSPC past max_user_watches: one
 * warning), get a plain g_unix_fd source each, with the same semantics. Main thread only; everything lives on
 * the global default main context (g_main_context_default()), the only one
 * ddmon runs.
 */
#ifndef DDM_LOOP_WATCH_H
#define DDM_LOOP_WATCH_H

#include <glib-unix.h>
#include <glib.h>

typedef struct DdmWatch DdmWatch;

/** Watch @fd for @cond (G_IO_IN, G_IO_OUT, G_IO_PRI; HUP and ERR are
 *  reported to every watch that is not dormant). @fn gets the fd, the conditions that hold (among @cond, HUP and
 *  ERR) and @ud. Never NULL: EPERM, ENOMEM and ENOSPC from epoll fall back
 *  to poll(2); other failures (EBADF, EINVAL: a bad fd, a programming
 *  error) abort. (transfer none: owned by the loop) */
DdmWatch *ddm_watch_add(int fd, GIOCondition cond, GUnixFDSourceFunc fn, gpointer ud);
/** Stop and forget @w (NULL is a no-op). Safe from any callback. */
void ddm_watch_remove(DdmWatch *w);
/** Change the wanted conditions of @w (0: dormant). One epoll_ctl at most. */
void ddm_watch_set_cond(DdmWatch *w, GIOCondition cond);
/** The wanted conditions of @w. */
GIOCondition ddm_watch_get_cond(const DdmWatch *w);

/* Batch-end hooks: work to do once after the ready watches of this
 * wake-up have run (one flush for a burst of packets, at the priority of the
 * watches, before any timer or idle of the next iteration). A DdmBatchEnd is
 * embedded in its owner, like a DdmTimer: queueing allocates nothing and is
 * O(1), cancelling is O(1). Queued from a watch callback, it runs at the end
 * of that epoll dispatch (or of a nested one, if a callback runs the loop);
 * queued anywhere else (a timer, a fallback watch, outside the loop), at the
 * next iteration. Hooks run in the order they were queued, each once however
 * often it was queued; one queued while the hooks run waits for the next
 * dispatch unless it was already waiting. A hook may queue, cancel, free its
 * owner. The owner must cancel a queued hook before freeing it. A zeroed
 * DdmBatchEnd is idle. Main thread only. */
typedef struct DdmBatchEnd DdmBatchEnd;
typedef void (*DdmBatchEndFn)(DdmBatchEnd *h, gpointer ud);
struct DdmBatchEnd {
    /*< private >*/
    DdmBatchEnd *next, *prev;
    DdmBatchEndFn fn;
    gpointer ud;
    guint8 queued; /* 0 idle, 1 queued, 2 taken by the run going on */
};

/** Run @fn(@h, @ud) at the end of this batch of watches (see above); a no-op
 *  (but for @fn and @ud, which replace the old ones) if already queued. */
void ddm_watch_at_batch_end(DdmBatchEnd *h, DdmBatchEndFn fn, gpointer ud);
/** Unqueue @h if queued (NULL, idle: no-op). */
void ddm_watch_batch_end_cancel(DdmBatchEnd *h);

/* The socket round. A main-context iteration costs more than relaying a
 * packet (bench/relay.sh prints both), so when a watch callback expects an
 * answer within microseconds (the relay forwarded a command, or a reply a
 * debugger waits for), it says so with ddm_watch_expect_more(), and once
 * the batch (and its batch-end hooks) ran, the epoll source waits on its
 * epoll fd for the next ready watches and dispatches them itself, without
 * returning to the main context. The round goes on while each batch's
 * callbacks say so again; it ends when nothing became ready in time, at the
 * earliest armed DdmTimer's deadline (a zero-delay timer ends it at once),
 * after 256 batches, or once the round budget (1 ms by default) has passed
 * since the main context began this dispatch, unless nobody else may be
 * waiting: a round whose budget runs out while work keeps coming (during
 * a batch that hinted, or during a wait), after two batches or more of
 * that budget's (not one exchange waiting on a slow answer, nor one long
 * batch), goes on for another budget when no DdmTimer is due and the
 * context has nothing that may be waiting (asked as for the yield below),
 * 31 times at most. A round that ran to its
 * budget or batch cap makes the next dispatch run none (one batch only)
 * when another source of the context may be waiting: the context
 * dispatches the sources ready after its poll in the order they were
 * attached, ours (the first) before libsoup's sockets, so without it a
 * source that became ready during a round would wait for a second one.
 * "May be waiting" is asked of the context (g_main_context_query): one of
 * its other descriptors is ready (libsoup's sockets; GLib's wake-up fd,
 * which other threads write, and GLib's unix signals where a program uses
 * them: the CLI's watch, tui and snapshot; the server's signals come
 * through a self-pipe in the epoll set, server/server.c), a timeout it
 * knew of at its last prepare is due (counted from that prepare, before the
 * context's poll: not from the dispatch's start, after it), or it cannot
 * tell; with none of these the next dispatch
 * runs a round, since a yield costs a whole context iteration (more than
 * the packets of a round under valgrind). The context's other sources
 * (GLib timeouts, libsoup's sockets, the CLI's GLib unix signals) thus
 * wait for one round at most: its budgets plus the batch that overran the
 * last (a callback's own time is not bounded here). What the round cannot
 * see waits longer: a source that only its check() says ready, and a GLib
 * source attached or made ready during the round (g_timeout_add or
 * g_idle_add from a callback: the context's timeout is its last prepare's,
 * and the context is not woken for it; a g_unix_fd_add likewise: the
 * context is asked once a round for its descriptors, at the first
 * extension, and the later ones poll those again) wait for up to 32 budgets
 * and the batch that overran the last, then one round more (the yield
 * question at the round's end asks the context afresh). The round's deadline is
 * a timerfd in the epoll set, armed once a budget and disarmed as soon as
 * its event is seen in a batch (a nested main loop in a callback would spin
 * on it); an event that comes alone (the budget ran out during a wait), or
 * with a single packet, is left expired until the round re-arms it for the
 * next budget, which clears it, or ends and disarms it (a nested dispatch
 * in that packet's callback, which would find it ready, disarms it), so
 * its waits are epoll_wait without a timeout (a timeout arms a kernel timer
 * at each wait, which cost more than the glib iteration saved). Without a
 * timerfd (a seccomp filter may refuse it) each wait has an epoll_wait
 * timeout in whole ms, rounded up. Rounds adapt to slow peers: once the
 * hints of one fd's callbacks were followed by nothing within the round 4
 * times in a row (a debugger paced at 5 commands a second), its hints are
 * ignored but for one in 32, which tries again; one that catches something
 * makes them count again (a round that waits for nothing costs a timerfd
 * arm and disarm and the whole budget). Only
 * the outermost dispatch runs a round (not a nested loop's), and a hint
 * given outside a watch callback counts for nothing, so a server that
 * relays nothing wakes exactly as before. */

/** From a watch callback: an answer is expected soon (see above). */
void ddm_watch_expect_more(void);
/** The round budget in µs (0: no rounds), and a fresh start (the next
 *  dispatch may run a round). For tests and benchmarks. */
void ddm_watch_set_round_budget(guint us);
/** Batches dispatched by rounds and the waits rounds made, since start.
 *  Either pointer may be NULL. */
void ddm_watch_round_stats(guint64 *batches, guint64 *waits);
/** How many times since start a round went on for another budget (nobody
 *  else waiting). For tests. */
guint64 ddm_watch_round_extensions(void);

/** Counters for tests and benchmarks: live watches, and epoll wake-ups
 *  dispatched and events delivered since start. Any pointer may be NULL. */
void ddm_watch_stats(guint *live, guint64 *wakeups, guint64 *events);

#endif /* DDM_LOOP_WATCH_H */
