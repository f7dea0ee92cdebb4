# SPDX-License-Identifier: Apache-2.0
# Tests of the plugin host: test-only plugins, test-loader, test-registry,
# and the installcheck that builds sdk/examples/hello against the installed SDK.

# The example third-party plugin ships in the tarball (built only by installcheck).
EXTRA_DIST += sdk/examples/hello/hello.c sdk/examples/hello/Makefile \
	sdk/examples/hello/README.md

if ENABLE_TESTS
# Test-only plugins: each is a real .so in tests/plugins/.libs (DDM_TEST_PLUGIN_DIR).
DDM_TEST_PLUGINS = \
	tests/plugins/good.la tests/plugins/bad-magic.la tests/plugins/abi-other-major.la \
	tests/plugins/abi-newer-minor.la tests/plugins/no-desc.la tests/plugins/init-fails.la \
	tests/plugins/dup-chunk.la tests/plugins/name-mismatch.la tests/plugins/hello.la
check_LTLIBRARIES += $(DDM_TEST_PLUGINS)
DDM_TEST_PLUGIN_LDFLAGS = -module -rpath /nowhere -avoid-version -shared $(SAN_LDFLAGS)

tests_plugins_good_la_SOURCES = tests/plugins/good.c
tests_plugins_good_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_good_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_bad_magic_la_SOURCES = tests/plugins/bad-magic.c
tests_plugins_bad_magic_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_bad_magic_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_abi_other_major_la_SOURCES = tests/plugins/abi-other-major.c
tests_plugins_abi_other_major_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_abi_other_major_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_abi_newer_minor_la_SOURCES = tests/plugins/abi-newer-minor.c
tests_plugins_abi_newer_minor_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_abi_newer_minor_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_no_desc_la_SOURCES = tests/plugins/no-desc.c
tests_plugins_no_desc_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_no_desc_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_init_fails_la_SOURCES = tests/plugins/init-fails.c
tests_plugins_init_fails_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_init_fails_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_dup_chunk_la_SOURCES = tests/plugins/dup-chunk.c
tests_plugins_dup_chunk_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_dup_chunk_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_name_mismatch_la_SOURCES = tests/plugins/name-mismatch.c
tests_plugins_name_mismatch_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_name_mismatch_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# The SDK example, built here too so `make check` runs it against the real core.
tests_plugins_hello_la_SOURCES = sdk/examples/hello/hello.c
tests_plugins_hello_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_hello_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)

# Unit tests: the real core (core/libddmcore.la) on a hand-made monitor.
DDM_PLUGINHOST_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
DDM_PLUGINHOST_TEST_LIBS = core/libddmcore.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS) \
	$(DLOPEN_LIBS)

check_PROGRAMS += tests/unit/pluginhost/test-loader tests/unit/pluginhost/test-registry
TESTS += tests/unit/pluginhost/test-loader tests/unit/pluginhost/test-registry

tests_unit_pluginhost_test_loader_SOURCES = tests/unit/pluginhost/test-loader.c
tests_unit_pluginhost_test_loader_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-loader\"
tests_unit_pluginhost_test_loader_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_loader_LDADD = $(DDM_PLUGINHOST_TEST_LIBS)
# `make tests/unit/pluginhost/test-loader` builds the plugins it loads.
EXTRA_tests_unit_test_loader_DEPENDENCIES = $(DDM_TEST_PLUGINS)

tests_unit_pluginhost_test_registry_SOURCES = tests/unit/pluginhost/test-registry.c
tests_unit_pluginhost_test_registry_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-registry\"
tests_unit_pluginhost_test_registry_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_registry_LDADD = $(DDM_PLUGINHOST_TEST_LIBS)
# The --plugin-opt test loads good.so and hello.so.
EXTRA_tests_unit_test_registry_DEPENDENCIES = $(DDM_TEST_PLUGINS)

# The loader's trust rules through the real ddmon CLI (unsafe directory,
# refused file not shadowing a good one).
TESTS += tests/integration/loader-trust.sh
# --plugin-opt warnings through the CLI; ddmon(1) documents every plugin
# option and command the standard plugins have.
TESTS += tests/integration/plugin-opts.sh
endif ENABLE_TESTS
EXTRA_DIST += tests/integration/loader-trust.sh tests/integration/plugin-opts.sh

# installcheck: the SDK as a third party sees it. Build the example plugin
# out of tree with nothing but the INSTALLED pkg-config file and headers,
# then have the INSTALLED ddmon validate and init it. DESTDIR-aware: the .pc
# file says $(prefix), the files live under $(DESTDIR)$(prefix).
installcheck-local: installcheck-pluginhost
installcheck-pluginhost:
	@set -e; dir=hello-installcheck; rm -rf $$dir; mkdir $$dir; \
	pc="$(PKG_CONFIG) --define-variable=includedir=$(DESTDIR)$(includedir) --define-variable=libdir=$(DESTDIR)$(libdir)"; \
	PKG_CONFIG_PATH="$(DESTDIR)$(libdir)/pkgconfig" PKG_CONFIG_LIBDIR="$(DESTDIR)$(libdir)/pkgconfig" \
	  $(MAKE) -C $$dir -f $(abs_top_srcdir)/sdk/examples/hello/Makefile \
	    SRCDIR=$(abs_top_srcdir)/sdk/examples/hello PKG_CONFIG="$$pc" CC="$(CC)"; \
	echo "installcheck: $(DESTDIR)$(bindir)/ddmon --check-plugin $$dir/hello.so"; \
	$(DESTDIR)$(bindir)/ddmon --check-plugin $$dir/hello.so; \
	rm -rf $$dir
.PHONY: installcheck-pluginhost
