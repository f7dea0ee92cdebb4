# SPDX-License-Identifier: Apache-2.0
# vminfo plugin: APNM, WAIT, STAG, FEAT shown per VM; exit and gc commands.
if BUILD_PLUGIN_VMINFO
pluginsexec_LTLIBRARIES += %reldir%/vminfo.la
%canon_reldir%_vminfo_la_SOURCES = %reldir%/vminfo.c %reldir%/vminfo.h \
	%reldir%/vminfo-parse.c %reldir%/vminfo-commands.c
%canon_reldir%_vminfo_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_vminfo_la_LDFLAGS = $(DDM_PLUGIN_LINK)
endif
