# SPDX-License-Identifier: Apache-2.0
# tui/: the terminal UI of `ddmon watch` on a terminal (ncurses). The model
# (model.h: table.c vmlist.c blockmap.c model.c keys.c) is pure and unit-
# tested (tests/unit/tui/); conn.c is the non-blocking control-socket
# client, draw.c the ncurses drawing, tui.c the run. Linked into
# libddmcli; without ncurses only the model is built and ddm_tui_available()
# says no.
noinst_LTLIBRARIES += tui/libddmtui.la
tui_libddmtui_la_SOURCES = %reldir%/model.h %reldir%/table.c %reldir%/vmlist.c %reldir%/blockmap.c \
	%reldir%/model.c %reldir%/keys.c %reldir%/conn.h %reldir%/conn.c %reldir%/draw.h %reldir%/draw.c \
	%reldir%/tui.h %reldir%/tui.c %reldir%/termcheck.c
tui_libddmtui_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tui_libddmtui_la_CFLAGS = $(core_libddmcore_la_CFLAGS) $(NCURSES_CFLAGS)
tui_libddmtui_la_LIBADD = $(NCURSES_LIBS)
