# SPDX-License-Identifier: Apache-2.0

# views engineer
check_PROGRAMS += tests/unit/views/test-views tests/unit/views/test-render tests/unit/config/test-config
TESTS += tests/unit/views/test-views tests/unit/views/test-render tests/unit/config/test-config
DDM_VIEWS_TEST_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
DDM_VIEWS_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
# The units are compiled in directly, so these tests do not depend on the
# rest of libddmcore building.
DDM_VIEWS_TEST_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS) $(LIBM)
tests_unit_views_test_views_SOURCES = tests/unit/views/test-views.c core/views/views.c
tests_unit_views_test_views_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_views_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_views_LDADD = $(DDM_VIEWS_TEST_LDADD)
tests_unit_config_test_config_SOURCES = tests/unit/config/test-config.c core/config/config.c
tests_unit_config_test_config_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_config_test_config_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_config_test_config_LDADD = $(DDM_VIEWS_TEST_LDADD)
tests_unit_views_test_render_SOURCES = tests/unit/views/test-render.c core/views/render.c core/views/views.c
tests_unit_views_test_render_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_render_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_render_LDADD = $(DDM_VIEWS_TEST_LDADD)

# CLI engineer: the control protocol's wire format (framing, requests).
check_PROGRAMS += tests/unit/server/test-control
TESTS += tests/unit/server/test-control
tests_unit_server_test_control_SOURCES = tests/unit/server/test-control.c core/wire/ctlproto.c core/wire/ctlproto.h
tests_unit_server_test_control_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-control\"
tests_unit_server_test_control_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_control_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)
# CLI engineer: the server side in one process (socket dir, lock, control server).
check_PROGRAMS += tests/unit/server/test-server
TESTS += tests/unit/server/test-server
tests_unit_server_test_server_SOURCES = tests/unit/server/test-server.c
tests_unit_server_test_server_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_server_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_server_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)
# CLI engineer: the server and snapshot without VMs (TAP scripts).
CLI_INTEGRATION_TESTS = tests/integration/cli-server.sh tests/integration/cli-snapshot.sh \
	tests/integration/cli-watch.sh
if ENABLE_TESTS
TESTS += $(CLI_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(CLI_INTEGRATION_TESTS)
