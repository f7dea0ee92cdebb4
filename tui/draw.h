/* SPDX-License-Identifier: Apache-2.0
 *
 * Drawing the model with ncurses: the VM list, a VM's detail screen (tab
 * bar, a table, record or blob drawn generically, the block-map widget
 * for tables that have its columns, highlighted rows), the stack popup,
 * the help overlay and the status line. It reads the model and never
 * changes it, except for the scroll offsets that follow the cursors, the
 * page size (m->page_rows) and the VM list's columns on screen
 * (m->list_cols, which the sort keys number). Only with ncurses (HAVE_NCURSES).
 */
#ifndef DDM_TUI_DRAW_H
#define DDM_TUI_DRAW_H

#include "tui/model.h"

/** Colour pairs (after start_color). */
void tui_draw_init(void);
/** Draw everything for a terminal of LINES x COLS and refresh. */
void tui_draw(TuiModel *m, gint64 now_us);

#endif /* DDM_TUI_DRAW_H */
