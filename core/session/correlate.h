/* SPDX-License-Identifier: Apache-2.0
 *
 * The pending-request table of one VM connection: packet id -> callback,
 * deadline. A plain data structure with explicit time (no main loop), so
 * every path is unit-testable: each entry leaves the table exactly once,
 * by ddm_correlate_take (reply), ddm_correlate_expire (timeout) or
 * ddm_correlate_drain (VM gone). Bounded: insert fails past the cap.
 */
#ifndef DDM_CORRELATE_H
#define DDM_CORRELATE_H

#include <glib.h>
#include <stdint.h>

typedef struct DdmPending {
    uint32_t id;
    uint32_t type;        /* chunk type of the request; a JDWP request's cmdset << 8 | cmd */
    gint64 deadline_us;   /* monotonic */
    gpointer owner;       /* the plugin (ddm_plugin *) or NULL for the core */
    gpointer callback;    /* opaque to the table (a ddm_reply_fn or a core fn) */
    gpointer ud;
    gboolean jdwp;        /* a plain JDWP request (callback: a ddm_jdwp_reply_fn) */
} DdmPending;

typedef struct DdmCorrelate DdmCorrelate;
/* The table's head, correlate.c's own: here only for ddm_correlate_take's
 * inline check (every reply from a VM asks, mostly with nothing pending). */
struct DdmCorrelate {
    struct DdmCorrelatePending *pending; /* NULL while nothing is pending (owned) */
    struct DdmCorrelateExpired *expired; /* NULL before the first timeout (owned) */
    guint32 hash_mult;         /* random, odd: drawn at ddm_correlate_new */
    guint max_pending;
};

DdmCorrelate *ddm_correlate_new(guint max_pending);
void ddm_correlate_free(DdmCorrelate *c);  /* entries must have been drained */
/** Insert (copied). FALSE if full or @p->id is already pending. */
gboolean ddm_correlate_insert(DdmCorrelate *c, const DdmPending *p);
/* correlate.c's; call only through ddm_correlate_take (the inline wrapper
 * checks @c and that something is pending). */
gboolean ddm_correlate_take_(DdmCorrelate *c, uint32_t id, DdmPending *out);
/** Remove the entry for @id into @out; FALSE if unknown (late or foreign reply). */
static inline gboolean ddm_correlate_take(DdmCorrelate *c, uint32_t id, DdmPending *out)
{
    g_return_val_if_fail(c != NULL, FALSE);
    return c->pending ? ddm_correlate_take_(c, id, out) : FALSE;
}
gboolean ddm_correlate_contains(const DdmCorrelate *c, uint32_t id);
/** ddm_correlate_contains, inline while nothing is pending (every reply
 *  the relay's fused path sends on asks, core/session/vm_io.c). */
static inline gboolean ddm_correlate_holds(const DdmCorrelate *c, uint32_t id)
{
    return c->pending && ddm_correlate_contains(c, id);
}
/** Remove and return (transfer full, GArray of DdmPending) every entry whose
 *  deadline <= @now_us, oldest first. */
GArray *ddm_correlate_expire(DdmCorrelate *c, gint64 now_us);
/** The earliest deadline, or G_MAXINT64 when empty. */
gint64 ddm_correlate_next_deadline(const DdmCorrelate *c);
/** Move every deadline earlier than @deadline_us to @deadline_us (replies
 *  that were held back, e.g. behind a streamed packet, get time to come). */
void ddm_correlate_postpone(DdmCorrelate *c, gint64 deadline_us);
/** Move every deadline by @by_us (earlier when negative), clamped to
 *  gint64's range: requests sent before the VM could read them (with the
 *  handshake) get their time counted from when it can. */
void ddm_correlate_shift(DdmCorrelate *c, gint64 by_us);
/** Remove and return everything (VM gone). (transfer full) */
GArray *ddm_correlate_drain(DdmCorrelate *c);
guint ddm_correlate_count(const DdmCorrelate *c);
/** The highest id pending (0 when empty). O(entries). */
uint32_t ddm_correlate_newest_id(const DdmCorrelate *c);
/** Recently timed-out ids are remembered (bounded) so a late reply is logged as late. */
gboolean ddm_correlate_was_expired(const DdmCorrelate *c, uint32_t id);
/** Entries the pending block has room for (0 when nothing is pending). */
guint ddm_correlate_room(const DdmCorrelate *c);
/** For tests: replace the table's random index multiplier by @odd (odd),
 *  so a test can make ids collide on purpose. Only while nothing is pending. */
void ddm_correlate_set_hash_multiplier(DdmCorrelate *c, guint32 odd);

#endif /* DDM_CORRELATE_H */
