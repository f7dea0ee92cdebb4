# SPDX-License-Identifier: Apache-2.0
# tests/unit/transport/: core/transport units that stand alone (the pid and
# main class of a local JVM from /proc). Connecting is tested through
# tests/unit/session/test-monitor.c and the integration tests.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/transport/test-local-proc
TESTS += tests/unit/transport/test-local-proc
endif
tests_unit_transport_test_local_proc_SOURCES = tests/unit/transport/test-local-proc.c \
	core/transport/local_proc.c core/transport/local_proc.h \
	tests/harness/rm-tree.c tests/harness/rm-tree.h
tests_unit_transport_test_local_proc_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\" \
	-DDDM_TEST_SRCDIR=\"$(abs_top_srcdir)\"
tests_unit_transport_test_local_proc_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_transport_test_local_proc_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/fixtures/proc/net-tcp.txt tests/fixtures/proc/net-tcp6.txt

# TCP self-connections are told from real ones (core/transport/target.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/transport/test-self-connect
TESTS += tests/unit/transport/test-self-connect
endif
tests_unit_transport_test_self_connect_SOURCES = tests/unit/transport/test-self-connect.c \
	core/transport/target.c core/transport/target.h core/loop/watch.c core/loop/timer.c
tests_unit_transport_test_self_connect_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_transport_test_self_connect_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_transport_test_self_connect_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The adb target (core/transport/adb_target.c): one block a VM, its fields,
# and its connect through a fake adb server on a UNIX socket.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/transport/test-adb-target
TESTS += tests/unit/transport/test-adb-target
endif
tests_unit_transport_test_adb_target_SOURCES = tests/unit/transport/test-adb-target.c \
	core/transport/adb_target.c core/transport/adb_target.h core/transport/adb_conn.c \
	core/transport/target.c core/wire/adb_proto.c core/loop/watch.c core/loop/timer.c
tests_unit_transport_test_adb_target_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_transport_test_adb_target_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_transport_test_adb_target_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
