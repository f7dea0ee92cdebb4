# SPDX-License-Identifier: Apache-2.0
# nativeheap.so: NHST/NHSG/NHEN native heap segments and the NHGT dump.
# An SDK client only. The segment decoder and collector are the heap
# plugin's sources compiled into this .so too (no library between plugins).

NATIVEHEAP_PLUGIN_SOURCES = \
	plugins/heap/segdecode.c plugins/heap/segdecode.h \
	plugins/heap/segcollect.c plugins/heap/segcollect.h \
	%reldir%/nhgt.c %reldir%/nhgt.h \
	%reldir%/nhmaps.c %reldir%/nhmaps.h \
	%reldir%/nativeheap.c %reldir%/nativeheap.h \
	%reldir%/nh_views.c %reldir%/nh_poll.c

if BUILD_PLUGIN_NATIVEHEAP
plugins_LTLIBRARIES += %reldir%/nativeheap.la
endif
%canon_reldir%_nativeheap_la_SOURCES = $(NATIVEHEAP_PLUGIN_SOURCES)
%canon_reldir%_nativeheap_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_nativeheap_la_LDFLAGS = $(DDM_PLUGIN_LINK)
