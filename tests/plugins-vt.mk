# SPDX-License-Identifier: Apache-2.0
# Plugin unit tests for vminfo and threads, and the fake host every plugin
# test links (tests/harness/libfakehost.la; plugins-heap.mk links it too).
# Each test program compiles the plugin's sources directly with the fake host.

if ENABLE_TESTS
check_LTLIBRARIES += tests/harness/libfakehost.la
tests_harness_libfakehost_la_SOURCES = tests/harness/fake-host.c tests/harness/fake-host.h
tests_harness_libfakehost_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES) -I$(top_srcdir)/tests/harness
tests_harness_libfakehost_la_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_harness_libfakehost_la_LIBADD = $(CMOCKA_LIBS)

endif

# Flags a plugin test needs: the SDK, the harness, cmocka.
DDM_FAKEHOST_CPPFLAGS = $(DDM_PLUGIN_INCLUDES) -I$(top_srcdir)/tests/harness
DDM_FAKEHOST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
DDM_FAKEHOST_LDADD = tests/harness/libfakehost.la $(CMOCKA_LIBS) $(LIBM)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/pluginhost/test-fake-host
TESTS += tests/unit/pluginhost/test-fake-host
tests_unit_pluginhost_test_fake_host_SOURCES = tests/unit/pluginhost/test-fake-host.c
tests_unit_pluginhost_test_fake_host_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS)
tests_unit_pluginhost_test_fake_host_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_pluginhost_test_fake_host_LDADD = $(DDM_FAKEHOST_LDADD)

if BUILD_PLUGIN_VMINFO
check_PROGRAMS += tests/unit/plugins/test-plugin-vminfo
TESTS += tests/unit/plugins/test-plugin-vminfo
endif
if BUILD_PLUGIN_THREADS
check_PROGRAMS += tests/unit/plugins/test-plugin-threads
TESTS += tests/unit/plugins/test-plugin-threads
endif
endif
tests_unit_plugins_test_plugin_vminfo_SOURCES = tests/unit/plugins/test-plugin-vminfo.c \
	plugins/vminfo/vminfo.c plugins/vminfo/vminfo.h plugins/vminfo/vminfo-parse.c \
	plugins/vminfo/vminfo-commands.c
tests_unit_plugins_test_plugin_vminfo_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)/plugins/vminfo
tests_unit_plugins_test_plugin_vminfo_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_vminfo_LDADD = $(DDM_FAKEHOST_LDADD)

tests_unit_plugins_test_plugin_threads_SOURCES = tests/unit/plugins/test-plugin-threads.c $(THREADS_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_threads_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)/plugins/threads
tests_unit_plugins_test_plugin_threads_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_threads_LDADD = $(DDM_FAKEHOST_LDADD)
