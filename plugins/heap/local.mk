# SPDX-License-Identifier: Apache-2.0
# heap.so: HPIF heap summary, HPSG/HPSO segment statistics, heap bitmap PNG.
# An SDK client only (DDM_PLUGIN_INCLUDES); libpng is optional. The segment
# decoder and collector come from plugins/common (libddmsegments.la), the
# check of a bitmap's FILE (a device or FIFO is refused) from libddmpartfile.la.

HEAP_PLUGIN_CORE_SOURCES = \
	%reldir%/heapinfo.c %reldir%/heapinfo.h \
	%reldir%/bitmap.c %reldir%/bitmap.h \
	%reldir%/bitmap_png.c %reldir%/bitmap_png.h \
	%reldir%/heap.c %reldir%/heap.h \
	%reldir%/heap_views.c %reldir%/heap_map.c %reldir%/heap_cmd.c %reldir%/heap_watch.c \
	%reldir%/heap_metrics.c

if BUILD_PLUGIN_HEAP
pluginsexec_LTLIBRARIES += %reldir%/heap.la
endif
%canon_reldir%_heap_la_SOURCES = $(HEAP_PLUGIN_CORE_SOURCES)
%canon_reldir%_heap_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_heap_la_CFLAGS = $(AM_CFLAGS)
%canon_reldir%_heap_la_LDFLAGS = $(DDM_PLUGIN_LINK)
%canon_reldir%_heap_la_LIBADD = $(DDM_SEGMENTS_LIBS) $(DDM_LAZYVIEWS_LIBS) $(DDM_PARTFILE_LIBS)
if HAVE_LIBPNG
%canon_reldir%_heap_la_CFLAGS += $(LIBPNG_CFLAGS)
%canon_reldir%_heap_la_LIBADD += $(DDM_PNGLIB_LIBS)
endif
