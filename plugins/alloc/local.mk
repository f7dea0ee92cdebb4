# SPDX-License-Identifier: Apache-2.0
# alloc plugin: the allocation tracker (REAE/REAQ/REAL): per-VM allocation
# tables grouped by class, site and thread; the alloc command.
ALLOC_PLUGIN_SOURCES = %reldir%/alloc.c %reldir%/alloc.h %reldir%/real.c \
	%reldir%/group.c %reldir%/alloc-cmd.c

if BUILD_PLUGIN_ALLOC
pluginsexec_LTLIBRARIES += %reldir%/alloc.la
endif
%canon_reldir%_alloc_la_SOURCES = $(ALLOC_PLUGIN_SOURCES)
%canon_reldir%_alloc_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_alloc_la_LDFLAGS = $(DDM_PLUGIN_LINK)
%canon_reldir%_alloc_la_LIBADD = $(DDM_LAZYVIEWS_LIBS)
