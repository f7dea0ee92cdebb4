# SPDX-License-Identifier: Apache-2.0
# plugins/common/: code more than one plugin uses, as convenience libraries
# (noinst, PIC objects) that each plugin links into its own .so, so no
# plugin compiles another's sources. SDK clients only: they see sdk/include
# and libc, never core/ or glib.

# The heap segment decoder and collector (HPSG/HPSO/NHSG pieces,
# HPST/HPEN and NHST/NHEN updates): heap.so, nativeheap.so, bench/heapdecode,
# tests/unit/plugins/test-segdecode, tests/simvm crosscheck.
noinst_LTLIBRARIES += %reldir%/libddmsegments.la
%canon_reldir%_libddmsegments_la_SOURCES = \
	%reldir%/segdecode.c %reldir%/segdecode.h \
	%reldir%/segcollect.c %reldir%/segcollect.h
%canon_reldir%_libddmsegments_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_libddmsegments_la_CFLAGS = $(AM_CFLAGS)
# What a user of the library adds to its LIBADD/LDADD.
DDM_SEGMENTS_LIBS = %reldir%/libddmsegments.la

# FILE.part handling and safe opens (partfile.c): a FIFO or device under
# the name is refused instead of blocking the loop; and the commands'
# helpers (cmdutil.c: FEAT lookup, safe file names, client paths).
# hprof.so, profile.so, viewdebug.so and their unit tests.
noinst_LTLIBRARIES += %reldir%/libddmpartfile.la
%canon_reldir%_libddmpartfile_la_SOURCES = %reldir%/partfile.c %reldir%/partfile.h \
	%reldir%/cmdutil.c %reldir%/cmdutil.h %reldir%/numparse.c %reldir%/numparse.h
%canon_reldir%_libddmpartfile_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_libddmpartfile_la_CFLAGS = $(AM_CFLAGS)
DDM_PARTFILE_LIBS = %reldir%/libddmpartfile.la

# The declare / make / unmake shape of views made on demand (ABI 1.6,
# lazyviews.c): heap.so, nativeheap.so, alloc.so and their unit tests.
noinst_LTLIBRARIES += %reldir%/libddmlazyviews.la
%canon_reldir%_libddmlazyviews_la_SOURCES = %reldir%/lazyviews.c %reldir%/lazyviews.h
%canon_reldir%_libddmlazyviews_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_libddmlazyviews_la_CFLAGS = $(AM_CFLAGS)
DDM_LAZYVIEWS_LIBS = %reldir%/libddmlazyviews.la

# libpng loaded at the first image (pnglib.c: dlopen by soname), so that a
# plugin which may draw or check a PNG does not map libpng until it does:
# heap.so, viewdebug.so, their unit tests and fuzz target, bench/heapdecode.
# Only with libpng's headers (HAVE_LIBPNG); nothing links libpng itself.
if HAVE_LIBPNG
noinst_LTLIBRARIES += %reldir%/libddmpnglib.la
%canon_reldir%_libddmpnglib_la_SOURCES = %reldir%/pnglib.c %reldir%/pnglib.h
%canon_reldir%_libddmpnglib_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_libddmpnglib_la_CFLAGS = $(AM_CFLAGS) $(LIBPNG_CFLAGS)
%canon_reldir%_libddmpnglib_la_LIBADD = $(DLOPEN_LIBS)
DDM_PNGLIB_LIBS = %reldir%/libddmpnglib.la
endif
