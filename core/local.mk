# SPDX-License-Identifier: Apache-2.0
# core/: the codec (pure bytes, no I/O) and the monitor.

# The codec, shared by ddmon, ddmon-simvm, tests and benchmarks.
noinst_LTLIBRARIES += core/libddmcodec.la
core_libddmcodec_la_SOURCES = \
	%reldir%/jdwp.c %reldir%/jdwp.h \
	%reldir%/ddm.c %reldir%/zlibchunk.c %reldir%/helo.c %reldir%/ddm.h
core_libddmcodec_la_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-codec\"
core_libddmcodec_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(ZLIB_CFLAGS)
core_libddmcodec_la_LIBADD = $(GLIB_LIBS) $(ZLIB_LIBS)

# The monitor, as a convenience library so tests link the real code.
# Each area adds its sources in its own .mk (session.mk, pluginhost.mk,
# frontend.mk, adb.mk, relay.mk).
noinst_LTLIBRARIES += core/libddmcore.la
core_libddmcore_la_SOURCES = \
	%reldir%/config.h %reldir%/target.h %reldir%/correlate.h %reldir%/vm.h \
	%reldir%/registry.h %reldir%/loader.h %reldir%/views.h %reldir%/monitor.h
core_libddmcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon\" \
	-DDDM_PLUGINDIR=\"$(pluginsdir)\" -DDDM_BINDIR=\"$(bindir)\"
core_libddmcore_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(ZLIB_CFLAGS)
core_libddmcore_la_LIBADD = core/libddmcodec.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(ZLIB_LIBS) \
	$(DLOPEN_LIBS) $(LIBM)

# The ddmon binary: client commands and the server (core/main.c is frontend.mk's).
bin_PROGRAMS += ddmon
ddmon_SOURCES =
ddmon_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
ddmon_CFLAGS = $(core_libddmcore_la_CFLAGS)
ddmon_LDADD = core/libddmcore.la

# The uninstalled plugin directory, $(top_builddir)/plugins: every plugin
# built here is copied (not linked: the loader refuses symlinks), only when
# it changed and by rename, never rewritten in place (a running ddmon has the
# old file mapped and would crash), so that
# `ddmon --plugin-dir build/plugins`, the demo and the integration tests use
# exactly the plugins of this tree.
all-local: uninstalled-plugins
uninstalled-plugins: $(plugins_LTLIBRARIES)
	@for la in $(plugins_LTLIBRARIES); do \
	  so=$$(dirname $$la)/.libs/$$(basename $$la .la).so; \
	  dst=$(top_builddir)/plugins/$$(basename $$so); \
	  if test -f $$so && ! cmp -s $$so $$dst; then \
	    cp $$so $$dst.tmp && chmod go-w $$dst.tmp && mv -f $$dst.tmp $$dst; \
	  fi; \
	done
clean-local: clean-uninstalled-plugins
clean-uninstalled-plugins:
	-rm -f $(top_builddir)/plugins/*.so
.PHONY: uninstalled-plugins clean-uninstalled-plugins
