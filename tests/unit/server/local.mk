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
tests_unit_server_test_server_SOURCES = tests/unit/server/test-server.c
tests_unit_server_test_server_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_server_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_server_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)

# The server's log lines (time, level, component, one line per event).
check_PROGRAMS += tests/unit/server/test-log
TESTS += tests/unit/server/test-log
tests_unit_server_test_log_SOURCES = tests/unit/server/test-log.c
tests_unit_server_test_log_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_server_test_log_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_server_test_log_LDADD = server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)
