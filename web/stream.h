/* SPDX-License-Identifier: Apache-2.0
 *
 * The live stream of view changes, GET /api/stream[?vm=KEY], as
 * server-sent events (text/event-stream; doc/web-api.md). A client gets
 * every global view (the VM list) and, with ?vm=, every view of that VM:
 * first each as it is now, then each change, one "data:" line of JSON per
 * event. While a client streams a VM, its views are watched (producers
 * that poll only while someone looks keep polling).
 *
 * Bounds: at most DDM_WEB_STREAM_MAX_CLIENTS at once (more get 503); a
 * view whose JSON exceeds DDM_WEB_STREAM_MAX_EVENT is announced without
 * its content (the client GETs it); a client with more than
 * DDM_WEB_STREAM_MAX_QUEUE bytes not yet written is dropped: a slow
 * client never holds the loop or grows memory. A comment line every
 * DDM_WEB_STREAM_PING_S seconds finds dead clients.
 */
#ifndef DDM_WEB_STREAM_H
#define DDM_WEB_STREAM_H

#include <libsoup/soup.h>

#include "core/views/views.h"

#define DDM_WEB_STREAM_MAX_CLIENTS 16
#define DDM_WEB_STREAM_MAX_EVENT (1024 * 1024)
#define DDM_WEB_STREAM_MAX_QUEUE (4 * 1024 * 1024)
#define DDM_WEB_STREAM_PING_S 15

typedef struct DdmWebStream DdmWebStream;

/** A stream over @views (borrowed; outlives the stream). (transfer full) */
DdmWebStream *ddm_web_stream_new(DdmViews *views);
/** Close every client. */
void ddm_web_stream_free(DdmWebStream *st);
/** Start streaming to @msg (a checked GET): views of VM @vm_key (NULL:
 *  global views only). */
void ddm_web_stream_start(DdmWebStream *st, SoupServerMessage *msg, const char *vm_key);
/** Clients streaming now. */
guint ddm_web_stream_n_clients(const DdmWebStream *st);

#endif /* DDM_WEB_STREAM_H */
