/* SPDX-License-Identifier: Apache-2.0
 *
 * The pool of debugger ports a VM can get (issue 16): the ports from a
 * base up to a span of at most DDM_PORTPOOL_SPAN, as two bitmaps, one bit a
 * port: "ours" (a listener of the relay holds it) and "foreign" (a bind
 * failed there: another program, or one of ddmon's own outgoing
 * connections, holds it). The lowest port that is neither is found by a
 * scan of at most DDM_PORTPOOL_SPAN / 64 words, whatever the number of VMs,
 * so handing out N ports costs O(N), not O(N^2) binds and lookups.
 * Foreign marks are forgotten DDM_PORTPOOL_FOREIGN_TTL_US after the first
 * of them (all at once): a port another program let go becomes usable
 * again, and a port still held costs one failed bind per period.
 * Pure: no sockets, the caller passes the time.
 */
#ifndef DDM_PORTPOOL_H
#define DDM_PORTPOOL_H

#include <glib.h>

/** The most ports a pool spans (the relay's VM port range). */
#define DDM_PORTPOOL_SPAN 4096u
/** How long a port a bind failed on is passed over. */
#define DDM_PORTPOOL_FOREIGN_TTL_US (30 * G_USEC_PER_SEC)

typedef struct DdmPortPool {
    guint base;            /* first port */
    guint span;            /* ports base .. base + span - 1, span <= DDM_PORTPOOL_SPAN */
    guint64 ours[DDM_PORTPOOL_SPAN / 64];
    guint64 foreign[DDM_PORTPOOL_SPAN / 64];
    gint64 foreign_since_us; /* when the oldest foreign mark was set; 0 = none */
} DdmPortPool;

/** Ports @base .. @base + @span - 1 (@span cut to DDM_PORTPOOL_SPAN and to
 *  port 65535), none taken. @base 0 makes an empty pool. */
void ddm_portpool_init(DdmPortPool *pool, guint base, guint span);
/** TRUE if @port is one of the pool's. */
gboolean ddm_portpool_contains(const DdmPortPool *pool, guint port);
/** Mark @port ours (a listener holds it) or no longer ours; a port outside
 *  the pool is ignored. Taking a port clears its foreign mark. */
void ddm_portpool_set_ours(DdmPortPool *pool, guint port, gboolean ours);
/** A bind on @port failed at @now_us: pass it over for a while. */
void ddm_portpool_set_foreign(DdmPortPool *pool, guint port, gint64 now_us);
/** The lowest port >= @from that is neither ours nor foreign (foreign
 *  marks older than the TTL at @now_us are dropped first), or 0. */
guint ddm_portpool_next_free(DdmPortPool *pool, guint from, gint64 now_us);

#endif /* DDM_PORTPOOL_H */
