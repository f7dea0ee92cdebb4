# SPDX-License-Identifier: Apache-2.0
# tests/: what the test folders share. Included before every tests/**/local.mk;
# each test folder's own local.mk holds the rules for the tests in it.

# Shared helpers (hexdump-on-fail, hex fixtures, private scratch directories,
# shell-free recursive removal, the cases every module loader's test shares);
# any test may link it.
if ENABLE_TESTS
check_LTLIBRARIES += tests/harness/libddmtestutil.la
endif
tests_harness_libddmtestutil_la_SOURCES = tests/harness/test-util.c tests/harness/test-util.h \
	tests/harness/private-dir.c tests/harness/private-dir.h \
	tests/harness/rm-tree.c tests/harness/rm-tree.h \
	tests/harness/module-loader-test.c tests/harness/module-loader-test.h
tests_harness_libddmtestutil_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_harness_libddmtestutil_la_LIBADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The compiled tests' LOG_COMPILER (Makefile.am): each runs in a network
# namespace of its own where one can be made; the scripts' runs them with
# bash. Both under a time limit (DDM_TEST_TIMEOUT).
EXTRA_DIST += tests/harness/own-netns.sh tests/harness/time-limit.sh

# The harness's own test: its shell-free recursive removal (rm-tree.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/harness/test-rm-tree
TESTS += tests/unit/harness/test-rm-tree
endif
tests_unit_harness_test_rm_tree_SOURCES = tests/unit/harness/test-rm-tree.c \
	tests/harness/rm-tree.c tests/harness/rm-tree.h
tests_unit_harness_test_rm_tree_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_harness_test_rm_tree_LDADD = $(CMOCKA_LIBS)

# Flags a plugin test needs: the SDK, the fake host (the SDK's test kit,
# sdk/testkit/libddmon-plugin-test.la, <ddmon/testkit.h>), cmocka.
DDM_FAKEHOST_CPPFLAGS = $(DDM_PLUGIN_INCLUDES) $(DDM_TESTKIT_CPPFLAGS)
DDM_FAKEHOST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
DDM_FAKEHOST_LDADD = $(DDM_TESTKIT_LIBS) $(CMOCKA_LIBS) $(LIBM)

# A test of the codec (tests/unit/wire, tests/sdk): core/wire/libddmwire.la,
# the test-util helpers, the source tree for fixtures.
CODEC_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/harness \
	-DG_LOG_DOMAIN=\"ddmon-test\" -DDDM_TEST_SRCDIR=\"$(abs_top_srcdir)\"
CODEC_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(ZLIB_CFLAGS) $(CMOCKA_CFLAGS)
CODEC_TEST_LDADD = core/wire/libddmwire.la tests/harness/libddmtestutil.la \
	$(CMOCKA_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS)
EXTRA_DIST += tests/fixtures/jdwp-vm-stream.hex

# A test that compiles core units in directly (tests/unit/views,
# tests/unit/config), so it does not depend on the rest of libddmcore building.
DDM_VIEWS_TEST_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
DDM_VIEWS_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
DDM_VIEWS_TEST_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS) $(LIBM)
