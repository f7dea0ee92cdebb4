# SPDX-License-Identifier: Apache-2.0
# tests/unit/config/: the configuration (core/config), compiled in directly.
check_PROGRAMS += tests/unit/config/test-config
TESTS += tests/unit/config/test-config
tests_unit_config_test_config_SOURCES = tests/unit/config/test-config.c core/config/config.c \
	core/config/listen_addr.c
tests_unit_config_test_config_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_config_test_config_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_config_test_config_LDADD = $(DDM_VIEWS_TEST_LDADD)
