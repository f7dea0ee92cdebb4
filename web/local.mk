# SPDX-License-Identifier: Apache-2.0
# web/: the web dashboard of `ddmon server --http` (libsoup 3): the HTTP
# listener and its request rules (http_server, auth, paths), the pages served
# from disk (static_files; the files are web/static/, installed in
# $(pkgdatadir)/web), the JSON API and its live stream (api, view_json,
# stream, history: records' recent past) and the downloads of commands run from the web (downloads).
# Also the listener the metrics endpoint reuses (http_server.h).
# May call: core/ (through core/daemon and the views), libsoup, json-glib.
# Called by: server/.
if HAVE_HTTP
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

# The dashboard's static files, served from disk.
webdir = $(pkgdatadir)/web
dist_web_DATA = %reldir%/static/index.html %reldir%/static/app.js %reldir%/static/app.css
