/* SPDX-License-Identifier: Apache-2.0
 *
 * The remembered debugger ports (issue 12, defect 6): device serial + app
 * name -> the relay port the app last had, kept in a small file so that an
 * app keeps its 86xx port across server and device restarts (a device that
 * restarts keeps its serial; local VMs have the serial "").
 *
 * The file (doc/ddmon.1, FILES): a header line, then one line per app,
 * least recently used first:
 *
 *     ddmon-ports 1
 *     SERIAL<TAB>APP<TAB>PORT
 *
 * Invariants: at most max_entries apps (the least recently used is dropped
 * when a new one comes); a serial of at most DDM_PORTMAP_SERIAL_MAX bytes
 * and an app name of 1..DDM_PORTMAP_APP_MAX bytes, valid UTF-8 without
 * control characters; ports 1..65535. Loading reads at most
 * DDM_PORTMAP_FILE_MAX bytes of a regular file the user owns, not through a
 * symlink, and takes nothing of a file that breaks any rule (it is then
 * rewritten at the next save). Saving writes a temporary file of mode 0600
 * in the same directory (created 0700 if missing) and renames it over the
 * old one, so a reader sees the old file or the new one, never half.
 * Pure but for ddm_portmap_load and ddm_portmap_save.
 */
#ifndef DDM_PORTMAP_H
#define DDM_PORTMAP_H

#include <glib.h>

/** Apps remembered by the relay's map (the least recently used goes first). */
#define DDM_PORTMAP_MAX_ENTRIES 512u
#define DDM_PORTMAP_SERIAL_MAX 128u
#define DDM_PORTMAP_APP_MAX 256u
/** The largest file loaded: every entry at its longest, and the header. */
#define DDM_PORTMAP_FILE_MAX (64u + DDM_PORTMAP_MAX_ENTRIES * (DDM_PORTMAP_SERIAL_MAX + DDM_PORTMAP_APP_MAX + 8u))
#define DDM_PORTMAP_HEADER "ddmon-ports 1"

typedef struct DdmPortMap DdmPortMap;

/** An empty map holding at most @max_entries (>= 1). (transfer full) */
DdmPortMap *ddm_portmap_new(guint max_entries);
void ddm_portmap_free(DdmPortMap *m);
guint ddm_portmap_count(const DdmPortMap *m);

/** The port remembered for @app on device @serial (NULL or "" for a local
 *  VM), or 0. Does not count as a use. */
guint16 ddm_portmap_lookup(const DdmPortMap *m, const char *serial, const char *app);
/** Remember @port for @app on @serial and make it the most recently used.
 *  FALSE if the name cannot be remembered (too long, control characters,
 *  not UTF-8) or @port is 0. *@changed (may be NULL) is set when what the
 *  file would hold changed: a new app, another port, or another order. */
gboolean ddm_portmap_set(DdmPortMap *m, const char *serial, const char *app, guint16 port,
                         gboolean *changed);
/** TRUE if some app other than @app on @serial is remembered with @port. */
gboolean ddm_portmap_port_taken_by_other(const DdmPortMap *m, guint16 port, const char *serial,
                                         const char *app);

/** Replace the map's entries with those in @buf (@len bytes, a file's
 *  content). On any error the map is left empty and @error says what was
 *  wrong (the first offending line). More entries than the map holds: the
 *  most recently used are kept. */
gboolean ddm_portmap_parse(DdmPortMap *m, const char *buf, gsize len, GError **error);
/** The file's content for the map. (transfer full; *@len set if not NULL) */
char *ddm_portmap_serialize(const DdmPortMap *m, gsize *len);

/** Load @path (see above). A missing file is not an error (an empty map,
 *  TRUE); any other failure leaves the map empty and sets @error. */
gboolean ddm_portmap_load(DdmPortMap *m, const char *path, GError **error);
/** Write the map to @path atomically (see above). */
gboolean ddm_portmap_save(const DdmPortMap *m, const char *path, GError **error);

#endif /* DDM_PORTMAP_H */
