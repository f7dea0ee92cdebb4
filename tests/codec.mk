# SPDX-License-Identifier: Apache-2.0
# Tests of the codec (core/wire/libddmwire.la) and of the SDK headers
# (sdk/include/ddmon/*.h), plus the shared test helpers in tests/harness/.

# Shared helpers (hexdump-on-fail, hex fixtures); other areas may link it too.
if ENABLE_TESTS
check_LTLIBRARIES += tests/harness/libddmtestutil.la
endif
tests_harness_libddmtestutil_la_SOURCES = tests/harness/test-util.c tests/harness/test-util.h
tests_harness_libddmtestutil_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_harness_libddmtestutil_la_LIBADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

CODEC_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/harness \
	-DG_LOG_DOMAIN=\"ddmon-test\" -DDDM_TEST_SRCDIR=\"$(abs_top_srcdir)\"
CODEC_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(ZLIB_CFLAGS) $(CMOCKA_CFLAGS)
CODEC_TEST_LDADD = core/wire/libddmwire.la tests/harness/libddmtestutil.la \
	$(CMOCKA_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS)

EXTRA_DIST += tests/fixtures/jdwp-vm-stream.hex \
	tests/sdk/only-plugin.c tests/sdk/only-chunk.c tests/sdk/only-bytes.c

if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-jdwp
TESTS += tests/unit/wire/test-jdwp
endif
tests_unit_wire_test_jdwp_SOURCES = tests/unit/wire/test-jdwp.c
tests_unit_wire_test_jdwp_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_jdwp_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_jdwp_LDADD = $(CODEC_TEST_LDADD)

# One test program per codec module; all link the codec library.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-ddm tests/unit/wire/test-zlib tests/unit/wire/test-helo tests/sdk/test-bytes
TESTS += tests/unit/wire/test-ddm tests/unit/wire/test-zlib tests/unit/wire/test-helo tests/sdk/test-bytes
endif
tests_unit_wire_test_ddm_SOURCES = tests/unit/wire/test-ddm.c
tests_unit_wire_test_ddm_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_ddm_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_ddm_LDADD = $(CODEC_TEST_LDADD)
# test-zlib compiles core/wire/zlibchunk.c itself (#include) to count its
# allocations; the rest of the codec comes from the library.
tests_unit_wire_test_zlib_SOURCES = tests/unit/wire/test-zlib.c
tests_unit_wire_test_zlib_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_zlib_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_zlib_LDADD = $(CODEC_TEST_LDADD)
tests_unit_wire_test_helo_SOURCES = tests/unit/wire/test-helo.c
tests_unit_wire_test_helo_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_helo_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_helo_LDADD = $(CODEC_TEST_LDADD)
tests_sdk_test_bytes_SOURCES = tests/sdk/test-bytes.c
tests_sdk_test_bytes_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_sdk_test_bytes_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_sdk_test_bytes_LDADD = $(CODEC_TEST_LDADD)

# The SDK headers on their own, as strict C99 and as C++11 (not gnu11:
# per-target flags replace AM_CFLAGS). They print TAP themselves.
if ENABLE_TESTS
check_PROGRAMS += tests/sdk/header-c99 tests/sdk/header-cxx
TESTS += tests/sdk/header-c99 tests/sdk/header-cxx
endif
SDK_HEADER_CPPFLAGS = -I$(top_srcdir)/sdk/include -I$(top_builddir)/sdk/include
SDK_HEADER_WARN = -pedantic -Werror -Wall -Wextra
tests_sdk_header_c99_SOURCES = tests/sdk/header-standalone.c tests/sdk/header-standalone.h \
	tests/sdk/only-plugin.c tests/sdk/only-chunk.c tests/sdk/only-bytes.c
tests_sdk_header_c99_CPPFLAGS = $(SDK_HEADER_CPPFLAGS)
tests_sdk_header_c99_CFLAGS = -std=c99 $(SDK_HEADER_WARN) $(SAN_CFLAGS)
tests_sdk_header_cxx_SOURCES = tests/sdk/header-standalone.cc tests/sdk/header-standalone.h \
	tests/sdk/only-plugin.cc tests/sdk/only-chunk.cc tests/sdk/only-bytes.cc
tests_sdk_header_cxx_CPPFLAGS = $(SDK_HEADER_CPPFLAGS)
tests_sdk_header_cxx_CXXFLAGS = -std=c++11 $(SDK_HEADER_WARN) $(SAN_CFLAGS)
