# SPDX-License-Identifier: Apache-2.0
# core/transport/: a connected byte stream to one VM (TCP; adb jdwp:PID).
# May call: core/wire (adb host protocol) and glib/gio.
core_libddmcore_la_SOURCES += %reldir%/target.c %reldir%/target.h \
	%reldir%/adb_conn.c %reldir%/adb_conn.h %reldir%/adb_target.c %reldir%/adb_target.h \
	%reldir%/local_proc.c %reldir%/local_proc.h
