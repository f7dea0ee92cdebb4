# SPDX-License-Identifier: Apache-2.0
# core/wire/: pure codecs, no I/O and no main loop. A convenience library
# shared by the daemon, ddmon-simvm, the tests and the benchmarks.
# May call: the SDK headers (byte helpers, chunk names), glib, zlib, json-glib.
noinst_LTLIBRARIES += core/wire/libddmwire.la
core_wire_libddmwire_la_SOURCES = \
	%reldir%/jdwp.c %reldir%/jdwp.h \
	%reldir%/ddm.c %reldir%/zlibchunk.c %reldir%/helo.c %reldir%/ddm.h \
	%reldir%/adb_proto.c %reldir%/adb_proto.h \
	%reldir%/ctlproto.c %reldir%/ctlproto.h \
	%reldir%/seeded_hash.c %reldir%/seeded_hash.h
core_wire_libddmwire_la_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-wire\"
core_wire_libddmwire_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(ZLIB_CFLAGS)
core_wire_libddmwire_la_LIBADD = $(JSON_GLIB_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS)
