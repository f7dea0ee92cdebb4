# SPDX-License-Identifier: Apache-2.0
# cli/: the ddmon command-line client: commands, the live view, the snapshot.
noinst_LTLIBRARIES += cli/libddmcli.la
cli_libddmcli_la_SOURCES = %reldir%/client.c %reldir%/client.h \
	%reldir%/watch.c %reldir%/watch.h %reldir%/snapshot.c %reldir%/snapshot.h
cli_libddmcli_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
cli_libddmcli_la_CFLAGS = $(core_libddmcore_la_CFLAGS)

bin_PROGRAMS += ddmon
ddmon_SOURCES = %reldir%/main.c
ddmon_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
ddmon_CFLAGS = $(core_libddmcore_la_CFLAGS)
ddmon_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la
man1_MANS += doc/ddmon.1
EXTRA_DIST += doc/ddmon.1
