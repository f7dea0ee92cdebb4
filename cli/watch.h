/* SPDX-License-Identifier: Apache-2.0
 *
 * `ddmon watch` (and plain `ddmon`): the client's live view. It asks the
 * server to watch the VM list only (with the headline figures plugins
 * publish), or every view with --json (so plugins that poll only while
 * someone looks keep those views fresh), and:
 *  - on a terminal: draws the VM list, with the headline columns plugins
 *    publish, on the alternate screen, redrawn when the server pushes a
 *    change (at most DDM_WATCH_MIN_REDRAW_MS apart) or the window resizes;
 *    the terminal is restored on exit, SIGINT, SIGTERM and SIGHUP;
 *  - not on a terminal: prints the VM list after each change, separated
 *    by a blank line;
 *  - with --json: copies every view event to stdout, one JSON object per
 *    line ({"event":"added|changed|removed","view":{...}}), for scripts.
 * Non-goals: scrolling, selection, colours.
 */
#ifndef DDM_WATCH_H
#define DDM_WATCH_H

#include <glib.h>

#include "cli/client.h"

#define DDM_WATCH_MIN_REDRAW_MS 250
/* At most this many lines of the note under the headline. */
#define DDM_WATCH_NOTE_LINES 3

/** Run until interrupted or the server goes away. Returns the exit status.
 *  @note, if not NULL, is shown under the headline on a terminal (why the
 *  terminal UI is not running: cmd-watch.c). (@client, @note: transfer
 *  none) */
int ddm_watch_run(DdmClient *client, gboolean json, const char *note);

/** @text as lines of at most @cols terminal cells (a wide character takes
 *  two, a combining mark none), broken after a word where one fits and
 *  else between two characters, never inside one; at most @max_lines, the
 *  last ending in "…" when the text goes on. Invalid UTF-8 is made valid
 *  and control characters become '?'. No lines for NULL or empty @text,
 *  @cols 0 or @max_lines 0. (transfer full: g_strfreev) */
char **ddm_watch_wrap(const char *text, guint cols, guint max_lines);

#endif /* DDM_WATCH_H */
