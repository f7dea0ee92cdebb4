# SPDX-License-Identifier: Apache-2.0
# tests/unit/wire/: the codec (core/wire): one test program per codec module.

# All link the codec library (CODEC_TEST_* in tests/local.mk).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-jdwp tests/unit/wire/test-ddm tests/unit/wire/test-zlib \
	tests/unit/wire/test-helo
TESTS += tests/unit/wire/test-jdwp tests/unit/wire/test-ddm tests/unit/wire/test-zlib \
	tests/unit/wire/test-helo
endif
tests_unit_wire_test_jdwp_SOURCES = tests/unit/wire/test-jdwp.c
tests_unit_wire_test_jdwp_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_jdwp_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_jdwp_LDADD = $(CODEC_TEST_LDADD)
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
# The seeded string hash of tables keyed by VM-chosen text.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-seeded-hash
TESTS += tests/unit/wire/test-seeded-hash
endif
tests_unit_wire_test_seeded_hash_SOURCES = tests/unit/wire/test-seeded-hash.c
tests_unit_wire_test_seeded_hash_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_wire_test_seeded_hash_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_wire_test_seeded_hash_LDADD = $(CODEC_TEST_LDADD)

# The adb host protocol codec, compiled in alone.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-adb-proto
TESTS += tests/unit/wire/test-adb-proto
tests_unit_wire_test_adb_proto_SOURCES = tests/unit/wire/test-adb-proto.c core/wire/adb_proto.c
tests_unit_wire_test_adb_proto_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_wire_test_adb_proto_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_wire_test_adb_proto_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
