# SPDX-License-Identifier: Apache-2.0
# profile.so: method tracing and sampling (MPSS/MPSE, SPSS/SPSE streamed
# through the .trace decoder into FILE.part, renamed when complete;
# MPRS/MPRE for VMs that write the trace on the device; MPRQ kept current)
# and trace-summary for any .trace file. An SDK client only, libc only.

PROFILE_PLUGIN_SOURCES = \
	%reldir%/profile.c %reldir%/profile.h \
	%reldir%/profile_cmd.c %reldir%/profile_job.c %reldir%/profile_views.c \
	%reldir%/trace_decode.c %reldir%/trace_decode.h

if BUILD_PLUGIN_PROFILE
pluginsexec_LTLIBRARIES += %reldir%/profile.la
endif
%canon_reldir%_profile_la_SOURCES = $(PROFILE_PLUGIN_SOURCES)
%canon_reldir%_profile_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_profile_la_LDFLAGS = $(DDM_PLUGIN_LINK)
%canon_reldir%_profile_la_LIBADD = $(DDM_PARTFILE_LIBS)
