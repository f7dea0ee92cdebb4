# SPDX-License-Identifier: Apache-2.0
# core/relay/: debugger listeners and packet id maps.
# May call: core/session, core/wire, core/config.
core_libddmcore_la_SOURCES += %reldir%/idmap.c %reldir%/idmap.h \
	%reldir%/portmap.c %reldir%/portmap.h \
	%reldir%/portpool.c %reldir%/portpool.h \
	%reldir%/relay.c %reldir%/relay.h %reldir%/relay-private.h \
	%reldir%/relay_ports.c %reldir%/relay_attach.c \
	%reldir%/relay_debugger.c %reldir%/relay_leave.c
