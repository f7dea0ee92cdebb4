# SPDX-License-Identifier: Apache-2.0
# Unit tests of the heap and nativeheap plugins. test-segdecode exercises the
# pure run-length decoder; the plugin tests compile the plugin's .c files with
# the fake host (tests/harness, libfakehost.la from tests/plugins-vt.mk).

PLUGINS_HEAP_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(DDM_PLUGIN_INCLUDES) -I$(top_srcdir)
PLUGINS_HEAP_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-segdecode
TESTS += tests/unit/test-segdecode
endif
tests_unit_test_segdecode_SOURCES = tests/unit/test-segdecode.c \
	plugins/heap/segdecode.c plugins/heap/segdecode.h
tests_unit_test_segdecode_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS)
tests_unit_test_segdecode_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS)
tests_unit_test_segdecode_LDADD = $(CMOCKA_LIBS)
