# SPDX-License-Identifier: Apache-2.0
# nativeheap.so: NHST/NHSG/NHEN native heap segments and the NHGT dump.
# An SDK client only. The segment decoder and collector come from
# plugins/common/libddmsegments.la, as for heap.so (included there).

NATIVEHEAP_PLUGIN_SOURCES = \
	%reldir%/nhgt.c %reldir%/nhgt.h \
	%reldir%/nhmaps.c %reldir%/nhmaps.h \
	%reldir%/nativeheap.c %reldir%/nativeheap.h \
	%reldir%/nh_views.c %reldir%/nh_poll.c %reldir%/nh_metrics.c \
	%reldir%/nh_group.c %reldir%/nh_group.h

if BUILD_PLUGIN_NATIVEHEAP
pluginsexec_LTLIBRARIES += %reldir%/nativeheap.la
endif
%canon_reldir%_nativeheap_la_SOURCES = $(NATIVEHEAP_PLUGIN_SOURCES)
%canon_reldir%_nativeheap_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_nativeheap_la_LDFLAGS = $(DDM_PLUGIN_LINK)
%canon_reldir%_nativeheap_la_LIBADD = $(DDM_SEGMENTS_LIBS) $(DDM_LAZYVIEWS_LIBS)
