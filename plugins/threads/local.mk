# SPDX-License-Identifier: Apache-2.0
# threads plugin: thread table with states and CPU % (THEN/THCR/THDE/THNM/THST), stacks (STKL).
THREADS_PLUGIN_SOURCES = %reldir%/threads.c %reldir%/threads.h %reldir%/thread-list.c \
	%reldir%/thst.c %reldir%/stkl.c %reldir%/states.c %reldir%/poll.c %reldir%/stack-cmd.c \
	%reldir%/threads_metrics.c

if BUILD_PLUGIN_THREADS
pluginsexec_LTLIBRARIES += %reldir%/threads.la
%canon_reldir%_threads_la_SOURCES = $(THREADS_PLUGIN_SOURCES)
%canon_reldir%_threads_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
%canon_reldir%_threads_la_LDFLAGS = $(DDM_PLUGIN_LINK)
endif
