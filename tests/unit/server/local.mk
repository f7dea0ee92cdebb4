# SPDX-License-Identifier: Apache-2.0
# tests/unit/server/: the control protocol and the server side.

# The control protocol's wire format (framing, requests).
check_PROGRAMS += tests/unit/server/test-control
TESTS += tests/unit/server/test-control
tests_unit_server_test_control_SOURCES = tests/unit/server/test-control.c core/wire/ctlproto.c core/wire/ctlproto.h
tests_unit_server_test_control_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-control\"
tests_unit_server_test_control_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_control_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)

# The server side in one process (socket dir, lock, control server).
check_PROGRAMS += tests/unit/server/test-server
TESTS += tests/unit/server/test-server
tests_unit_server_test_server_SOURCES = tests/unit/server/test-server.c server/slices.c
tests_unit_server_test_server_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_server_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_server_LDADD = tests/harness/libddmtestutil.la cli/libddmcli.la server/libddmserver.la \
	core/libddmcore.la $(CMOCKA_LIBS)
# The ddmon binary carries server/slices.c's .preinit_array entry (nm,
# readelf): it is in ddmon's own sources, not in a library.
TESTS += tests/unit/server/ddmon-preinit.sh
EXTRA_DIST += tests/unit/server/ddmon-preinit.sh

# The server's log lines (time, level, component, one line per event).
check_PROGRAMS += tests/unit/server/test-log
TESTS += tests/unit/server/test-log
tests_unit_server_test_log_SOURCES = tests/unit/server/test-log.c
tests_unit_server_test_log_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_log_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_log_LDADD = server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)

# ddm_server_web_module_load_from(): the table checks (version, size,
# package version, build token, NULL entries, NULL table, no symbol), each
# on a fixture module built from web-module-fixture.c.
if HAVE_HTTP
DDM_WEB_MODULE_FIXTURES = \
	tests/unit/server/webmod-good.la \
	tests/unit/server/webmod-version.la \
	tests/unit/server/webmod-size.la \
	tests/unit/server/webmod-package.la \
	tests/unit/server/webmod-token.la \
	tests/unit/server/webmod-null-entry.la \
	tests/unit/server/webmod-null-table.la \
	tests/unit/server/webmod-no-symbol.la
check_LTLIBRARIES += $(DDM_WEB_MODULE_FIXTURES)
DDM_WEB_MODULE_FIXTURE_LDFLAGS = -module -rpath /nowhere -avoid-version -shared $(SAN_LDFLAGS)
DDM_WEB_MODULE_FIXTURE_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
DDM_WEB_MODULE_FIXTURE_CFLAGS = $(core_libddmcore_la_CFLAGS)
tests_unit_server_webmod_good_la_SOURCES = tests/unit/server/web-module-fixture.c tests/harness/module-fixture.h
tests_unit_server_webmod_good_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_GOOD
tests_unit_server_webmod_good_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_good_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_version_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_version_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_VERSION
tests_unit_server_webmod_version_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_version_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_size_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_size_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_SIZE
tests_unit_server_webmod_size_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_size_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_package_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_package_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_PACKAGE
tests_unit_server_webmod_package_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_package_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_token_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_token_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_TOKEN
tests_unit_server_webmod_token_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_token_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_null_entry_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_null_entry_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NULL_ENTRY
tests_unit_server_webmod_null_entry_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_null_entry_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_null_table_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_null_table_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NULL_TABLE
tests_unit_server_webmod_null_table_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_null_table_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
tests_unit_server_webmod_no_symbol_la_SOURCES = tests/unit/server/web-module-fixture.c
tests_unit_server_webmod_no_symbol_la_CPPFLAGS = $(DDM_WEB_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NO_SYMBOL
tests_unit_server_webmod_no_symbol_la_CFLAGS = $(DDM_WEB_MODULE_FIXTURE_CFLAGS)
tests_unit_server_webmod_no_symbol_la_LDFLAGS = $(DDM_WEB_MODULE_FIXTURE_LDFLAGS)
check_PROGRAMS += tests/unit/server/test-web-module
TESTS += tests/unit/server/test-web-module
tests_unit_server_test_web_module_SOURCES = tests/unit/server/test-web-module.c
tests_unit_server_test_web_module_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_web_module_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_web_module_LDADD = tests/harness/libddmtestutil.la server/libddmserver.la \
	core/libddmcore.la $(CMOCKA_LIBS) \
	$(DLOPEN_LIBS)
tests_unit_server_test_web_module_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=ddm_loader_module_symbol
EXTRA_tests_unit_server_test_web_module_DEPENDENCIES = $(DDM_WEB_MODULE_FIXTURES)
endif
