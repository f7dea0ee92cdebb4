# SPDX-License-Identifier: Apache-2.0
# core/: everything the daemon is made of below its process shell (server/).
# Each part is a folder with its own local.mk; doc/architecture.md says what
# each owns and what it may call. The parts above wire/ make up one
# convenience library, libddmcore.la, so that tests link the real code.

noinst_LTLIBRARIES += core/libddmcore.la
core_libddmcore_la_SOURCES =
core_libddmcore_la_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon\" \
	-DDDM_PLUGINDIR=\"$(pluginsexecdir)\" -DDDM_BINDIR=\"$(bindir)\"
core_libddmcore_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(ZLIB_CFLAGS)
core_libddmcore_la_LIBADD = core/wire/libddmwire.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(ZLIB_LIBS) \
	$(DLOPEN_LIBS) $(LIBM)

include core/wire/local.mk
include core/loop/local.mk
include core/config/local.mk
include core/views/local.mk
include core/transport/local.mk
include core/session/local.mk
include core/pluginhost/local.mk
include core/relay/local.mk
include core/discovery/local.mk
include core/daemon/local.mk

# The uninstalled plugin directory, $(top_builddir)/plugins: every plugin
# built here is copied (not linked: the loader refuses symlinks), only when
# it changed and by rename, never rewritten in place (a running ddmon has the
# old file mapped and would crash), so that
# `ddmon --plugin-dir build/plugins`, the demo and the integration tests use
# exactly the plugins of this tree.
all-local: uninstalled-plugins
uninstalled-plugins: $(pluginsexec_LTLIBRARIES)
	@for la in $(pluginsexec_LTLIBRARIES); do \
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
