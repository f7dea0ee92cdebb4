# SPDX-License-Identifier: Apache-2.0
# tools/simvm: ddmon-simvm, the simulated DDM-aware VMs (demo default, test
# fixture, benchmark load), its models as a library the unit tests link,
# and simvm-probe, a tiny JDWP/DDM client for smoke tests.

SIMVM_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-simvm\"

# The models (threads, heaps, native heap) and their encoders: pure bytes.
noinst_LTLIBRARIES += %reldir%/libsimvmmodel.la
%canon_reldir%_libsimvmmodel_la_SOURCES = \
	%reldir%/rng.h \
	%reldir%/heap.c %reldir%/heap.h \
	%reldir%/threads.c %reldir%/threads.h \
	%reldir%/native.c %reldir%/native.h \
	%reldir%/alloc_model.c %reldir%/alloc_model.h \
	%reldir%/hprof_gen.c %reldir%/hprof_gen.h \
	%reldir%/trace_gen.c %reldir%/trace_gen.h
%canon_reldir%_libsimvmmodel_la_SOURCES += %reldir%/view_model.c %reldir%/view_model.h
%canon_reldir%_libsimvmmodel_la_CPPFLAGS = $(SIMVM_CPPFLAGS)
# view_model.c: PNG captures through libpng when configure found it
%canon_reldir%_libsimvmmodel_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
if HAVE_LIBPNG
%canon_reldir%_libsimvmmodel_la_CFLAGS += $(LIBPNG_CFLAGS)
%canon_reldir%_libsimvmmodel_la_LIBADD = $(LIBPNG_LIBS)
endif

# The world, VMs, connections and handlers: everything but main(), so unit
# tests drive a world through sim_vm_serve_fd() on socketpairs.
noinst_LTLIBRARIES += %reldir%/libsimvm.la
%canon_reldir%_libsimvm_la_SOURCES = \
	%reldir%/simvm.h %reldir%/simvm-private.h \
	%reldir%/options.c %reldir%/world.c %reldir%/vm.c \
	%reldir%/conn.c %reldir%/handlers.c %reldir%/hprof_dump.c %reldir%/statefile.c %reldir%/filewriter.c \
	%reldir%/profiling.c %reldir%/profiling.h \
	%reldir%/gen_stream.c %reldir%/gen_stream.h \
	%reldir%/jdwp_model.c %reldir%/jdwp_model.h \
	%reldir%/reactor.c %reldir%/reactor.h
%canon_reldir%_libsimvm_la_SOURCES += %reldir%/viewdebug.c %reldir%/viewdebug.h
%canon_reldir%_libsimvm_la_CPPFLAGS = $(SIMVM_CPPFLAGS)
%canon_reldir%_libsimvm_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
%canon_reldir%_libsimvm_la_LIBADD = %reldir%/libsimvmmodel.la core/wire/libddmwire.la \
	$(JSON_GLIB_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS)

bin_PROGRAMS += ddmon-simvm
ddmon_simvm_SOURCES = %reldir%/main.c
ddmon_simvm_CPPFLAGS = $(SIMVM_CPPFLAGS)
ddmon_simvm_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
ddmon_simvm_LDADD = %reldir%/libsimvm.la $(JSON_GLIB_LIBS) $(GLIB_LIBS)

noinst_PROGRAMS += %reldir%/simvm-probe
%canon_reldir%_simvm_probe_SOURCES = %reldir%/simvm-probe.c
%canon_reldir%_simvm_probe_CPPFLAGS = $(SIMVM_CPPFLAGS)
%canon_reldir%_simvm_probe_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
%canon_reldir%_simvm_probe_LDADD = core/wire/libddmwire.la $(GLIB_LIBS) $(ZLIB_LIBS)

dist_doc_DATA += doc/ddmon-simvm.md
man1_MANS += doc/ddmon-simvm.1
EXTRA_DIST += doc/ddmon-simvm.1
