/* SPDX-License-Identifier: Apache-2.0
 *
 * TuiConn: one connection to the control socket that never blocks the
 * main loop: connect, send one request, then hand every message (JSON
 * object) that comes back to a callback from a GLib fd source. The TUI
 * opens one for the VM list's watch, one for the open tab's watch and one
 * per command (gc, hprof, stack, select, views), so a slow command never
 * holds up the live views. It owns the socket and its sources; it knows
 * nothing of screens.
 */
#ifndef DDM_TUI_CONN_H
#define DDM_TUI_CONN_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "core/wire/ctlproto.h"

typedef struct TuiConn TuiConn;

/** A message arrived (@msg: transfer none). */
typedef void (*TuiConnMessageFn)(TuiConn *c, JsonNode *msg, gpointer ud);
/** The connection ended (@why: the reason). No message follows. */
typedef void (*TuiConnClosedFn)(TuiConn *c, const char *why, gpointer ud);

/** Connect to @socket_path and send @req. NULL with @error if the server
 *  is not there. Either callback may free the connection. (transfer full) */
TuiConn *tui_conn_new(const char *socket_path, const DdmCtlRequest *req, TuiConnMessageFn on_message,
                      TuiConnClosedFn on_closed, gpointer ud, GError **error);
/** Close and free (safe from inside the callbacks). NULL is ignored. */
void tui_conn_free(TuiConn *c);
/** Free-form data for the owner. */
void tui_conn_set_data(TuiConn *c, gpointer data, GDestroyNotify destroy);
gpointer tui_conn_get_data(TuiConn *c);

#endif /* DDM_TUI_CONN_H */
