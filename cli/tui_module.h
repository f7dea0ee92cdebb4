/* SPDX-License-Identifier: Apache-2.0
 *
 * Where `ddmon watch` finds the terminal UI's module (ddmon-tui.so, with
 * ncursesw: tui/module.h) and loading it, once, when the UI is to run on
 * a terminal; no other command loads it. Never unloaded (ncurses keeps
 * the terminal's state until the process ends). Built only with ncurses.
 */
#ifndef DDM_CLI_TUI_MODULE_H
#define DDM_CLI_TUI_MODULE_H

#include <glib.h>

#include "tui/module.h"

/** The directory the module is loaded from: the build tree's tui/.libs
 *  when this process is the ddmon binary of the build tree it was built
 *  in, else the package library directory it was configured with
 *  (pkglibdir, where `make install` puts it, as the web module:
 *  server/web_module.h). No environment variable changes it.
 *  (transfer full) */
char *ddm_cli_tui_module_dir(void);

/** Load DDM_TUI_MODULE_FILE from @dir through the plugins' trust checks
 *  (ddm_loader_open_module(): @dir and the directories above it trusted,
 *  the file checked, dlopen by its real path), look up its table and
 *  check its version, size, package version, build token and that no
 *  entry is NULL. The table (transfer none; the module is never unloaded
 *  once it passed), or NULL with @error naming the file and why. Each
 *  call loads (dlopen counts references). */
const DdmTuiModule *ddm_cli_tui_module_load_from(const char *dir, GError **error);

/** ddm_cli_tui_module_load_from(ddm_cli_tui_module_dir()), at most once:
 *  later calls return the same table (or NULL and the first error again). */
const DdmTuiModule *ddm_cli_tui_module_load(GError **error);

#endif /* DDM_CLI_TUI_MODULE_H */
