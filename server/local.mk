# SPDX-License-Identifier: Apache-2.0
# server/: the daemon's process shell: its control socket server and process
# setup. A convenience library above core/.
# May call: core/ (through core/daemon).
noinst_LTLIBRARIES += server/libddmserver.la
server_libddmserver_la_SOURCES = %reldir%/control.c %reldir%/control.h \
	%reldir%/control-private.h %reldir%/control_ops.c \
	%reldir%/server.c %reldir%/server.h \
	%reldir%/log.c %reldir%/log.h
server_libddmserver_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
server_libddmserver_la_CFLAGS = $(core_libddmcore_la_CFLAGS)
# The web dashboard (web/, libsoup 3) runs inside the server with --http.
if HAVE_HTTP
server_libddmserver_la_LIBADD = web/libddmweb.la
endif
# GET /metrics (web/metrics*, web/metrics.mk): the renderer, and with
# libsoup its routes and the --metrics listener.
if !HAVE_HTTP
server_libddmserver_la_LIBADD =
endif
server_libddmserver_la_LIBADD += web/libddmmetrics.la
