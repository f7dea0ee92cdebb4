/* SPDX-License-Identifier: Apache-2.0
 *
 * The terminal UI of `ddmon watch` (and plain `ddmon`) on a terminal: a
 * VM list, a VM's detail with one tab per view its plugins publish, keys
 * (ddmon(1), KEYS). tui.c owns the run: ncurses set up and restored, the
 * GLib main loop with the keyboard, signals, a tick, and the control-
 * socket connections (conn.h) whose messages feed the model (model.h),
 * which draw.c draws. Built only into the module ddmon-tui.so (module.h),
 * with ncurses; `ddmon watch` loads it (cli/tui_module.c). Without ncurses
 * (configure --without-ncurses) there is no module and `ddmon watch` keeps
 * its plain live view.
 */
#ifndef DDM_TUI_H
#define DDM_TUI_H

#include <glib.h>

/** TRUE if the terminal (TERM) is one terminfo knows. */
gboolean ddm_tui_available(void);
/** Run the UI against the server on @socket_path until the user quits
 *  (q), or SIGINT/SIGTERM/SIGHUP. Returns the exit status, or -1 when the
 *  terminal could not be set up (nothing was drawn: fall back). */
int ddm_tui_run(const char *socket_path);

#endif /* DDM_TUI_H */
