/* SPDX-License-Identifier: Apache-2.0
 *
 * A set of TCP ports (1..65535), each with a count (a port added twice
 * stays until it is removed twice): the ports ddmon listens on, which its
 * local scan must not take for VMs (monitor.h, ddm_monitor_own_port). One
 * bit a port, in pages of DDM_PORTSET_PAGE_PORTS ports made when a port of
 * theirs is first added (so the relay's VM port range, the selected port
 * and a web port cost a page or three, not a hash node a port: issue 16,
 * one debugger port a VM); counts above one, which are rare, in a small
 * table made for the first of them. Adding, removing and looking up are
 * O(1); at most 65536 / DDM_PORTSET_PAGE_PORTS pages, freed by clear.
 * Embed a zeroed DdmPortSet; main thread only.
 */
#ifndef DDM_PORTSET_H
#define DDM_PORTSET_H

#include <glib.h>

#define DDM_PORTSET_PAGE_PORTS 4096u
#define DDM_PORTSET_PAGES (65536u / DDM_PORTSET_PAGE_PORTS)

typedef struct DdmPortSet {
    /*< private >*/
    guint64 *pages[DDM_PORTSET_PAGES]; /* DDM_PORTSET_PAGE_PORTS bits each, or NULL */
    GHashTable *extra;                  /* port -> count - 1, for ports added more than once */
} DdmPortSet;

/** Add @port (not 0) once more. */
void ddm_portset_add(DdmPortSet *s, guint16 port);
/** Remove @port once; it leaves the set when removed as often as it was
 *  added. A port not in the set is ignored. */
void ddm_portset_remove(DdmPortSet *s, guint16 port);
gboolean ddm_portset_contains(const DdmPortSet *s, guint16 port);
/** Empty the set and free its pages. */
void ddm_portset_clear(DdmPortSet *s);
/** Pages made (for tests: what the set costs). */
guint ddm_portset_pages(const DdmPortSet *s);

#endif /* DDM_PORTSET_H */
