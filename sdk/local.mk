# SPDX-License-Identifier: Apache-2.0
# The SDK: the only headers a plugin may include, and its pkg-config file.
sdkincludedir = $(includedir)/ddmon-$(DDM_ABI_MAJOR)/ddmon
sdkinclude_HEADERS = \
	%reldir%/include/ddmon/plugin.h \
	%reldir%/include/ddmon/chunk.h \
	%reldir%/include/ddmon/bytes.h \
	%reldir%/include/ddmon/ticklist.h
nodist_sdkinclude_HEADERS = %reldir%/include/ddmon/abi.h

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = %reldir%/ddmon-plugin-$(DDM_ABI_MAJOR).pc

EXTRA_DIST += %reldir%/include/ddmon/abi.h.in %reldir%/ddmon-plugin.pc.in \
	%reldir%/ddmon-plugin-uninstalled.pc.in
DISTCLEANFILES += %reldir%/ddmon-plugin-$(DDM_ABI_MAJOR)-uninstalled.pc

# The plugin test kit: libddmon-plugin-test and <ddmon/testkit.h>, the fake
# ddm_host a plugin's unit tests run against (in and out of tree), with its
# pkg-config file ddmon-plugin-test-MAJOR.pc (and -uninstalled.pc). An SDK
# part: it sees sdk/include and libc, never core/ (or glib). It reports
# through cmocka, so it is built and installed with the tests (the default;
# not with --disable-tests).
DDM_TESTKIT_CPPFLAGS = -I$(top_srcdir)/%reldir%/testkit
DDM_TESTKIT_LIBS = %reldir%/testkit/libddmon-plugin-test.la
if ENABLE_TESTS
lib_LTLIBRARIES = %reldir%/testkit/libddmon-plugin-test.la
sdkinclude_HEADERS += %reldir%/testkit/ddmon/testkit.h
pkgconfig_DATA += %reldir%/ddmon-plugin-test-$(DDM_ABI_MAJOR).pc
endif
# One concept a file; kit-private.h (not installed) says which owns what.
%canon_reldir%_testkit_libddmon_plugin_test_la_SOURCES = %reldir%/testkit/kit.c \
	%reldir%/testkit/kit_log.c %reldir%/testkit/kit_config.c \
	%reldir%/testkit/kit_chunks.c %reldir%/testkit/kit_regs.c \
	%reldir%/testkit/kit_vms.c %reldir%/testkit/kit_requests.c \
	%reldir%/testkit/kit_jdwp.c \
	%reldir%/testkit/kit_timers.c %reldir%/testkit/kit_views.c \
	%reldir%/testkit/kit_view_inspect.c %reldir%/testkit/kit_commands.c \
	%reldir%/testkit/kit_metrics.c \
	%reldir%/testkit/kit-private.h %reldir%/testkit/ddmon/testkit.h
%canon_reldir%_testkit_libddmon_plugin_test_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES) $(DDM_TESTKIT_CPPFLAGS)
%canon_reldir%_testkit_libddmon_plugin_test_la_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
%canon_reldir%_testkit_libddmon_plugin_test_la_LIBADD = $(CMOCKA_LIBS)
# Its own interface version (libtool current:revision:age), apart from the
# plugin ABI: bump it when <ddmon/testkit.h> changes.
%canon_reldir%_testkit_libddmon_plugin_test_la_LDFLAGS = -version-info 7:0:7 -no-undefined \
	$(SAN_LDFLAGS)
EXTRA_DIST += %reldir%/testkit/ddmon-plugin-test.pc.in \
	%reldir%/testkit/ddmon-plugin-test-uninstalled.pc.in
DISTCLEANFILES += %reldir%/ddmon-plugin-test-$(DDM_ABI_MAJOR)-uninstalled.pc

# The example's unit test (sdk/examples/hello, `make check` there). The
# example's other files are listed with its installcheck (tests/sdk/local.mk).
EXTRA_DIST += %reldir%/examples/hello/test-hello.c
# What installcheck builds there: the plugin, and with the test kit
# installed (tests enabled) its unit test against the installed kit too.
if ENABLE_TESTS
DDM_HELLO_INSTALLCHECK_GOALS = all check
else
DDM_HELLO_INSTALLCHECK_GOALS = all
endif
