# SPDX-License-Identifier: Apache-2.0
# hprof.so: heap dumps. HPDS streamed (SDK 1.2 chunk streams) through the
# checker/converter hprof_stream.c into FILE.part, renamed when complete;
# HPDU for VMs that write the dump on the device. An SDK client only; SHA-256
# from libcrypto when configure found it (loaded at the first dump, not
# linked: hprof_hash.c), else GLib.

HPROF_PLUGIN_SOURCES = \
	%reldir%/hprof.c %reldir%/hprof.h \
	%reldir%/hprof_cmd.c %reldir%/hprof_dump.c \
	%reldir%/hprof_hash.c %reldir%/hprof_hash.h \
	%reldir%/hprof_stream.c %reldir%/hprof_stream.h %reldir%/hprof_format.h

if BUILD_PLUGIN_HPROF
pluginsexec_LTLIBRARIES += %reldir%/hprof.la
endif
%canon_reldir%_hprof_la_SOURCES = $(HPROF_PLUGIN_SOURCES)
%canon_reldir%_hprof_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_hprof_la_CFLAGS = $(AM_CFLAGS) $(LIBCRYPTO_CFLAGS) $(GLIB_CFLAGS)
%canon_reldir%_hprof_la_LDFLAGS = $(DDM_PLUGIN_LINK)
# dlopen (hprof_hash.c): libdl before glibc 2.34; plugins link with -z defs
%canon_reldir%_hprof_la_LIBADD = $(DDM_PARTFILE_LIBS) $(GLIB_LIBS) $(DLOPEN_LIBS)
