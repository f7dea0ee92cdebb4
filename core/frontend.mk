# SPDX-License-Identifier: Apache-2.0

# views/config/render (views engineer)
core_libddmcore_la_SOURCES += core/views.c core/render.c core/config.c

# CLI engineer: the ddmon binary's user-facing shape (main, control server,
# client, server process, watch, snapshot) and its man page.
core_libddmcore_la_SOURCES += core/ctlproto.c core/ctlproto.h core/control.c core/control.h \
	core/server.c core/server.h core/client.c core/client.h \
	core/watch.c core/watch.h core/snapshot.c core/snapshot.h
ddmon_SOURCES += core/main.c
man1_MANS += doc/ddmon.1
EXTRA_DIST += doc/ddmon.1
