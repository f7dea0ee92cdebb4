# SPDX-License-Identifier: Apache-2.0
# Tests of the codec (core/libddmcodec.la) and of the SDK headers
# (sdk/include/ddmon/*.h), plus the shared test helpers in tests/harness/.

# Shared helpers (hexdump-on-fail, hex fixtures); other areas may link it too.
if ENABLE_TESTS
check_LTLIBRARIES += tests/harness/libddmtestutil.la
endif
tests_harness_libddmtestutil_la_SOURCES = tests/harness/test-util.c tests/harness/test-util.h
tests_harness_libddmtestutil_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_harness_libddmtestutil_la_LIBADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

CODEC_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core -I$(top_srcdir)/tests/harness \
	-DG_LOG_DOMAIN=\"ddmon-test\" -DDDM_TEST_SRCDIR=\"$(abs_top_srcdir)\"
CODEC_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(ZLIB_CFLAGS) $(CMOCKA_CFLAGS)
CODEC_TEST_LDADD = core/libddmcodec.la tests/harness/libddmtestutil.la \
	$(CMOCKA_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS)

EXTRA_DIST += tests/fixtures/jdwp-vm-stream.hex

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-jdwp
TESTS += tests/unit/test-jdwp
endif
tests_unit_test_jdwp_SOURCES = tests/unit/test-jdwp.c
tests_unit_test_jdwp_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_test_jdwp_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_test_jdwp_LDADD = $(CODEC_TEST_LDADD)
