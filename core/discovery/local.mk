# SPDX-License-Identifier: Apache-2.0
# core/discovery/: the local port scan, --connect targets, adb tracking.
# May call: core/session, core/transport, core/views, core/config.
core_libddmcore_la_SOURCES += %reldir%/discovery.h %reldir%/discovery_set.c \
	%reldir%/discovery_local.c %reldir%/discovery_adb.c
