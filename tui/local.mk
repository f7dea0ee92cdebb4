# SPDX-License-Identifier: Apache-2.0
# tui/: the terminal UI of `ddmon watch` on a terminal (ncurses). The model
# (model.h: table.c vmlist.c blockmap.c model.c keys.c) is pure and unit-
# tested (tests/unit/tui/) from libddmtui; conn.c is the non-blocking
# control-socket client, draw.c the ncurses drawing, tui.c the run.
noinst_LTLIBRARIES += tui/libddmtui.la
tui_libddmtui_la_SOURCES = %reldir%/model.h %reldir%/table.c %reldir%/vmlist.c %reldir%/blockmap.c \
	%reldir%/model.c %reldir%/keys.c
tui_libddmtui_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tui_libddmtui_la_CFLAGS = $(core_libddmcore_la_CFLAGS)

# ddmon-tui.so: the whole UI (the model above, conn, draw, the run) with
# ncursesw, as a module that only `ddmon watch` on a terminal loads
# (cli/tui_module.c), so that the server and the other commands map
# neither ncurses nor tinfo nor the UI's code (module.h). It exports one
# symbol and calls nothing in the ddmon binary: the control protocol's
# codec (core/wire/ctlproto.c, pure) is built into it, and -z defs (in a
# build without sanitizers) fails the link if anything else is missing.
# Installed beside the web module, in pkglibdir, where cli/tui_module.c
# looks, and like it by install-exec (the "exec" in the directory's name
# tells automake: a packager who splits install-exec from install-data
# gets the module with the binary). Without ncurses there is no module:
# `ddmon watch` is the plain view.
if HAVE_NCURSES
tuimoduleexecdir = $(pkglibdir)
tuimoduleexec_LTLIBRARIES = tui/ddmon-tui.la
tui_ddmon_tui_la_SOURCES = %reldir%/module.c %reldir%/module.h %reldir%/tui.h %reldir%/tui.c \
	%reldir%/termcheck.c %reldir%/conn.h %reldir%/conn.c %reldir%/draw.h %reldir%/draw.c \
	core/wire/ctlproto.c core/wire/ctlproto.h
tui_ddmon_tui_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tui_ddmon_tui_la_CFLAGS = $(core_libddmcore_la_CFLAGS) $(NCURSES_CFLAGS)
tui_ddmon_tui_la_LIBADD = tui/libddmtui.la $(NCURSES_LIBS) $(JSON_GLIB_LIBS) $(GLIB_LIBS) $(LIBM)
tui_ddmon_tui_la_LDFLAGS = -module -avoid-version -shared -no-undefined $(PLUGIN_ZDEFS) \
	-export-symbols-regex '^ddm_tui_module$$' $(SAN_LDFLAGS)
endif
