# SPDX-License-Identifier: Apache-2.0
# tests/unit/pluginhost/: the plugin host (loader, registry) with the real core
# (core/libddmcore.la) on a hand-made monitor, and the fake host plugin tests use.
if ENABLE_TESTS
DDM_PLUGINHOST_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
DDM_PLUGINHOST_TEST_LIBS = core/libddmcore.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS) \
	$(DLOPEN_LIBS)

check_PROGRAMS += tests/unit/pluginhost/test-loader tests/unit/pluginhost/test-registry
TESTS += tests/unit/pluginhost/test-loader tests/unit/pluginhost/test-registry

tests_unit_pluginhost_test_loader_SOURCES = tests/unit/pluginhost/test-loader.c \
	tests/harness/hand-monitor.h
tests_unit_pluginhost_test_loader_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-loader\"
tests_unit_pluginhost_test_loader_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_loader_LDADD = tests/harness/libddmtestutil.la $(DDM_PLUGINHOST_TEST_LIBS)
# `make tests/unit/pluginhost/test-loader` builds the plugins it loads
# (tests/plugins/local.mk).
EXTRA_tests_unit_pluginhost_test_loader_DEPENDENCIES = $(DDM_TEST_PLUGINS)

tests_unit_pluginhost_test_registry_SOURCES = tests/unit/pluginhost/test-registry.c \
	tests/harness/hand-monitor.h
tests_unit_pluginhost_test_registry_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-registry\"
tests_unit_pluginhost_test_registry_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_registry_LDADD = $(DDM_PLUGINHOST_TEST_LIBS)
# The --plugin-opt test loads good.so and hello.so.
EXTRA_tests_unit_pluginhost_test_registry_DEPENDENCIES = $(DDM_TEST_PLUGINS)

# ddm_loader_open_module(): a named module by the plugins' trust rules.
check_PROGRAMS += tests/unit/pluginhost/test-loader-module
TESTS += tests/unit/pluginhost/test-loader-module
tests_unit_pluginhost_test_loader_module_SOURCES = tests/unit/pluginhost/test-loader-module.c
tests_unit_pluginhost_test_loader_module_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-loader-module\"
tests_unit_pluginhost_test_loader_module_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_loader_module_LDADD = tests/harness/libddmtestutil.la $(DDM_PLUGINHOST_TEST_LIBS)
EXTRA_tests_unit_pluginhost_test_loader_module_DEPENDENCIES = tests/plugins/good.la \
	tests/plugins/undefined-sym.la

endif ENABLE_TESTS

# The host contract (contract.c): the same scenarios on the SDK test kit and
# on the real core, so the kit cannot drift from what plugins meet in ddmon.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/pluginhost/test-contract-fake tests/unit/pluginhost/test-contract-real \
	tests/unit/pluginhost/test-host-has
TESTS += tests/unit/pluginhost/test-contract-fake tests/unit/pluginhost/test-contract-real \
	tests/unit/pluginhost/test-host-has
endif ENABLE_TESTS
tests_unit_pluginhost_test_contract_fake_SOURCES = tests/unit/pluginhost/test-contract-fake.c \
	tests/unit/pluginhost/contract.c tests/unit/pluginhost/contract.h tests/harness/pair-target.h
tests_unit_pluginhost_test_contract_fake_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS)
tests_unit_pluginhost_test_contract_fake_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_pluginhost_test_contract_fake_LDADD = $(DDM_FAKEHOST_LDADD)

tests_unit_pluginhost_test_contract_real_SOURCES = tests/unit/pluginhost/test-contract-real.c \
	tests/unit/pluginhost/contract.c tests/unit/pluginhost/contract.h
tests_unit_pluginhost_test_contract_real_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"test-contract\"
tests_unit_pluginhost_test_contract_real_CFLAGS = $(DDM_PLUGINHOST_TEST_CFLAGS)
tests_unit_pluginhost_test_contract_real_LDADD = $(DDM_PLUGINHOST_TEST_LIBS)
# It loads host-has.so (tests/plugins/local.mk).
EXTRA_tests_unit_pluginhost_test_contract_real_DEPENDENCIES = $(DDM_TEST_PLUGINS)

# tests/plugins/host-has.c (built for a 1.0 core) on the test kit, as a 1.1
# and as a 1.0 host: DDM_HOST_HAS and DDM_ABI_MINOR_REQUIRED.
tests_unit_pluginhost_test_host_has_SOURCES = tests/unit/pluginhost/test-host-has.c \
	tests/plugins/host-has.c
tests_unit_pluginhost_test_host_has_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS)
tests_unit_pluginhost_test_host_has_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_pluginhost_test_host_has_LDADD = $(DDM_FAKEHOST_LDADD)
