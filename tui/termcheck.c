/* SPDX-License-Identifier: Apache-2.0
 *
 * Whether the terminal UI can run here: TERM names a terminal terminfo
 * knows (a missing or unknown TERM: the plain view).
 * Apart from tui.c because <term.h> defines capability names (lines, tab)
 * as macros. See tui.h.
 */
#include <build-config.h>

#include "tui/tui.h"

#include <curses.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

gboolean ddm_tui_available(void)
{
    const char *term = g_getenv("TERM");
    if (term == NULL || term[0] == '\0' || strcmp(term, "dumb") == 0)
        return FALSE;
    int err = 0;
    TERMINAL *saved = cur_term;
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
        return FALSE;
    del_curterm(cur_term);
    set_curterm(saved);
    return TRUE;
}
