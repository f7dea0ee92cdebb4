# SPDX-License-Identifier: Apache-2.0
# Tests of the debugger relay.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-idmap
TESTS += tests/unit/test-idmap
tests_unit_test_idmap_SOURCES = tests/unit/test-idmap.c core/idmap.c
tests_unit_test_idmap_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_idmap_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_idmap_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
