# SPDX-License-Identifier: Apache-2.0
# web/: the web dashboard of `ddmon server --http` (libsoup 3): the HTTP
# listener and its request rules (http_server, auth, paths), the pages served
# from disk (static_files; the files are web/static/, installed in
# $(pkgdatadir)/web), the JSON API and its live stream (api, view_json,
# stream, history: records' recent past) and the downloads of commands run from the web (downloads).
# Also the listener the metrics endpoint reuses (http_server.h).
# May call: core/ (through core/daemon and the views; the listener accepts
# through core/loop and logs through core/session/ratelog.h), libsoup, json-glib.
# Called by: server/, only through the module below.
#
# ddmon-web.so: this library, GET /metrics (web/metrics.mk) and libsoup 3
# with its dependencies, as a module the server loads (server/web_module.c)
# only for --http or --metrics, so a server without them maps none of
# libsoup's family (doc/web.md, "How the web part is loaded"). It exports
# one symbol (module.h) and takes the daemon's functions from the ddmon
# binary, which exports them (web/binary-exports.list, cli/local.mk).
if HAVE_HTTP
pkglib_LTLIBRARIES = web/ddmon-web.la
web_ddmon_web_la_SOURCES = %reldir%/module.c %reldir%/module.h
web_ddmon_web_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
web_ddmon_web_la_CFLAGS = $(core_libddmcore_la_CFLAGS) $(LIBSOUP_CFLAGS)
web_ddmon_web_la_LIBADD = web/libddmweb.la web/libddmmetrics.la $(LIBSOUP_LIBS) \
	$(JSON_GLIB_LIBS) $(GLIB_LIBS) $(LIBM)
web_ddmon_web_la_LDFLAGS = -module -avoid-version -shared \
	-export-symbols-regex '^ddm_web_module$$' $(SAN_LDFLAGS)

noinst_LTLIBRARIES += web/libddmweb.la
web_libddmweb_la_SOURCES = %reldir%/auth.c %reldir%/auth.h %reldir%/paths.c %reldir%/paths.h \
	%reldir%/http_server.c %reldir%/http_server.h \
	%reldir%/static_files.c %reldir%/static_files.h \
	%reldir%/view_json.c %reldir%/view_json.h \
	%reldir%/stream.c %reldir%/stream.h %reldir%/history.c %reldir%/history.h \
	%reldir%/downloads.c %reldir%/downloads.h \
	%reldir%/api.c %reldir%/api.h \
	%reldir%/web.c %reldir%/web.h
web_libddmweb_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS) -DDDM_WEBDIR=\"$(webdir)\"
web_libddmweb_la_CFLAGS = $(core_libddmcore_la_CFLAGS) $(LIBSOUP_CFLAGS)
web_libddmweb_la_LIBADD = $(LIBSOUP_LIBS) $(LIBM)
endif
# The symbols of the ddmon binary the module calls (cli/local.mk links with
# it), checked once both are linked: exactly what the module calls, every
# name exported (check-exports.sh names the ones at fault).
EXTRA_DIST += %reldir%/binary-exports.list %reldir%/check-exports.sh
if HAVE_HTTP
%reldir%/binary-exports.checked: ddmon$(EXEEXT) web/ddmon-web.la %reldir%/binary-exports.list \
		%reldir%/check-exports.sh core/libddmcore.la server/libddmserver.la cli/libddmcli.la \
		tui/libddmtui.la
	$(AM_V_GEN)NM='$(NM)' $(SHELL) $(srcdir)/web/check-exports.sh \
	  $(srcdir)/web/binary-exports.list web/.libs/ddmon-web.so ddmon$(EXEEXT) \
	  core/.libs/libddmcore.a server/.libs/libddmserver.a cli/.libs/libddmcli.a \
	  tui/.libs/libddmtui.a && touch $@
WEB_EXPORTS_CHECKED = %reldir%/binary-exports.checked
endif
all-local: $(WEB_EXPORTS_CHECKED)
CLEANFILES += web/binary-exports.checked

# The dashboard's static files, served from disk.
webdir = $(pkgdatadir)/web
dist_web_DATA = %reldir%/static/index.html %reldir%/static/app.js %reldir%/static/app.css
