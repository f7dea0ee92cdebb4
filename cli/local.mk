# SPDX-License-Identifier: Apache-2.0
# cli/: the ddmon command-line client. libddmcli holds everything but
# main() (the command table, options, commands, the live view, the
# snapshot) so tests can link it; cli/cli.h says which file owns what.
noinst_LTLIBRARIES += cli/libddmcli.la
cli_libddmcli_la_SOURCES = %reldir%/client.c %reldir%/client.h \
	%reldir%/watch.c %reldir%/watch.h %reldir%/snapshot.c %reldir%/snapshot.h \
	%reldir%/snapshot-private.h %reldir%/snapshot_cmds.c %reldir%/snapshot_output.c \
	%reldir%/snapshot_local.c %reldir%/snapshot_server.c \
	%reldir%/cli.h %reldir%/commands.c %reldir%/options.c %reldir%/output.c \
	%reldir%/jsonout.c %reldir%/jsonout.h \
	%reldir%/request.c %reldir%/help.c %reldir%/cmd-server.c %reldir%/cmd-query.c \
	%reldir%/cmd-watch.c %reldir%/cmd-snapshot.c %reldir%/cmd-plugin.c %reldir%/cmd-local.c
cli_libddmcli_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
cli_libddmcli_la_CFLAGS = $(core_libddmcore_la_CFLAGS)
# The terminal UI (tui/, ranked below cli/): `ddmon watch` on a terminal
# loads it as the module ddmon-tui.so (tui_module.c, tui/local.mk); nothing
# of it nor ncurses is linked here.
if HAVE_NCURSES
cli_libddmcli_la_SOURCES += %reldir%/tui_module.c %reldir%/tui_module.h
cli_libddmcli_la_CPPFLAGS += -DDDM_PKGLIBDIR=\"$(pkglibdir)\" \
	-DDDM_ABS_TOP_BUILDDIR=\"$(abs_top_builddir)\"
endif

bin_PROGRAMS += ddmon
# server/slices.c: GLib's slices from malloc, set in the binary's
# .preinit_array (only an executable may carry one, so not in a library).
ddmon_SOURCES = %reldir%/main.c server/slices.c
ddmon_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
ddmon_CFLAGS = $(core_libddmcore_la_CFLAGS)
ddmon_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la
# The web module (ddmon-web.so, web/local.mk) calls the core in this binary.
# Building ddmon builds the module too, so the build tree's ddmon never
# loads a module older than itself.
EXTRA_ddmon_DEPENDENCIES =
if HAVE_HTTP
ddmon_LDFLAGS = $(AM_LDFLAGS) -Wl,--dynamic-list=$(top_srcdir)/web/binary-exports.list
EXTRA_ddmon_DEPENDENCIES += web/binary-exports.list web/ddmon-web.la
endif
# Likewise the terminal UI's module (tui/local.mk), which calls nothing in
# the binary but must come from the same build.
if HAVE_NCURSES
EXTRA_ddmon_DEPENDENCIES += tui/ddmon-tui.la
endif
man1_MANS += doc/ddmon.1
EXTRA_DIST += doc/ddmon.1
