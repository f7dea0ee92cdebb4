# SPDX-License-Identifier: Apache-2.0
# core/config/: the runtime configuration, every option and bound.
# May call: glib and the SDK's limit constants.
core_libddmcore_la_SOURCES += %reldir%/config.c %reldir%/config.h \
	%reldir%/listen_addr.c %reldir%/listen_addr.h
