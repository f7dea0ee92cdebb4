# SPDX-License-Identifier: Apache-2.0
# jvm plugin: plain JVMs (HotSpot, OpenJ9) over standard JDWP (ABI 1.2 jdwp_request):
# threads view, vminfo record, jvm-stack --suspend.
JVM_PLUGIN_SOURCES = %reldir%/jvm.c %reldir%/jvm.h %reldir%/jvm-parse.c %reldir%/jvm-stack.c \
	%reldir%/jvm_metrics.c

if BUILD_PLUGIN_JVM
pluginsexec_LTLIBRARIES += %reldir%/jvm.la
%canon_reldir%_jvm_la_SOURCES = $(JVM_PLUGIN_SOURCES)
%canon_reldir%_jvm_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_jvm_la_LDFLAGS = $(DDM_PLUGIN_LINK)
endif
