# SPDX-License-Identifier: Apache-2.0
# core/daemon/: one running ddmon assembled from the parts, and the core
# views "vms" and "plugins".
# May call: every part of core/ below it.
core_libddmcore_la_SOURCES += %reldir%/daemon.h %reldir%/daemon.c \
	%reldir%/vms_view.c %reldir%/vms_rows.c %reldir%/vms_rows.h %reldir%/plugins_view.c
