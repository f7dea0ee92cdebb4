# SPDX-License-Identifier: Apache-2.0
# viewdebug.so: the view hierarchy (VULW/VURT/VUOP): `ddmon ui VM ...`.
# An SDK client only; libpng (optional) checks captures; the decoders
# (vudecode.c) are also compiled into their unit test and fuzz targets.

VIEWDEBUG_PLUGIN_SOURCES = \
	%reldir%/viewdebug.c %reldir%/viewdebug.h \
	%reldir%/ui-cmd.c %reldir%/capture.c %reldir%/pngcheck.c %reldir%/pngcheck.h \
	%reldir%/vudecode.c %reldir%/vudecode.h %reldir%/vujson.c %reldir%/vujson.h

if BUILD_PLUGIN_VIEWDEBUG
pluginsexec_LTLIBRARIES += %reldir%/viewdebug.la
endif
%canon_reldir%_viewdebug_la_SOURCES = $(VIEWDEBUG_PLUGIN_SOURCES)
%canon_reldir%_viewdebug_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_viewdebug_la_CFLAGS = $(AM_CFLAGS)
%canon_reldir%_viewdebug_la_LDFLAGS = $(DDM_PLUGIN_LINK)
%canon_reldir%_viewdebug_la_LIBADD = $(DDM_PARTFILE_LIBS)
if HAVE_LIBPNG
%canon_reldir%_viewdebug_la_CFLAGS += $(LIBPNG_CFLAGS)
%canon_reldir%_viewdebug_la_LIBADD += $(DDM_PNGLIB_LIBS)
endif
