# SPDX-License-Identifier: Apache-2.0
# web/metrics*: GET /metrics, ddmon's figures for Prometheus (doc/monitoring.md).
# The renderer is a pure function of the view store (plus ddmon's own
# process figures), so it needs no libsoup (its unit test builds it alone).
# libddmmetrics links into the web module (web/local.mk, ddmon-web.so),
# which serves it on the web server and on the token-free --metrics
# listener. May call: core/ (views; the daemon for its source).
noinst_LTLIBRARIES += web/libddmmetrics.la
web_libddmmetrics_la_SOURCES = %reldir%/metrics.c %reldir%/metrics.h \
	%reldir%/metrics_text.c %reldir%/metrics_text.h \
	%reldir%/metrics_proc.c %reldir%/metrics_proc.h \
	%reldir%/metrics_source.c %reldir%/metrics_source.h
web_libddmmetrics_la_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
web_libddmmetrics_la_CFLAGS = $(core_libddmcore_la_CFLAGS)
web_libddmmetrics_la_LIBADD = $(LIBM)

# GET /metrics over HTTP (libsoup 3): the route on the dashboard and the
# token-free --metrics listener, on web/http_server.h. The web module
# links this library beside web/libddmweb.la.
if HAVE_HTTP
web_libddmmetrics_la_SOURCES += %reldir%/metrics_http.c %reldir%/metrics_http.h
web_libddmmetrics_la_CFLAGS += $(LIBSOUP_CFLAGS)
web_libddmmetrics_la_LIBADD += $(LIBSOUP_LIBS)
endif
