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
# The web dashboard and GET /metrics (web/, libsoup 3) are not linked in:
# with --http or --metrics the server loads them as the module
# ddmon-web.so (web_module.c, web/module.h, web/local.mk).
if HAVE_HTTP
server_libddmserver_la_SOURCES += %reldir%/web_module.c %reldir%/web_module.h
server_libddmserver_la_CPPFLAGS += -DDDM_PKGLIBDIR=\"$(pkglibdir)\" \
	-DDDM_ABS_TOP_BUILDDIR=\"$(abs_top_builddir)\"
endif
