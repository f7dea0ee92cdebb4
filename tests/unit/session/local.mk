# SPDX-License-Identifier: Apache-2.0
# tests/unit/session/: the session layer (pending table, VM session state
# machine). They link the session sources directly (not libddmcore.la) so each
# unit is tested alone, with a small test monitor standing in for the hub.

SESSION_TEST_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
SESSION_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-correlate
TESTS += tests/unit/session/test-correlate
endif
tests_unit_session_test_correlate_SOURCES = tests/unit/session/test-correlate.c core/session/correlate.c core/session/correlate.h
tests_unit_session_test_correlate_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_correlate_CFLAGS = $(SESSION_TEST_CFLAGS)
tests_unit_session_test_correlate_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The counted set of ports ddmon listens on (core/session/portset.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-portset
TESTS += tests/unit/session/test-portset
endif
tests_unit_session_test_portset_SOURCES = tests/unit/session/test-portset.c core/session/portset.c core/session/portset.h
tests_unit_session_test_portset_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_portset_CFLAGS = $(SESSION_TEST_CFLAGS)
tests_unit_session_test_portset_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-vm
TESTS += tests/unit/session/test-vm
endif
tests_unit_session_test_vm_SOURCES = tests/unit/session/test-vm.c tests/harness/pair-target.h \
	core/session/vm.c \
	core/session/vm_io.c core/session/vm_request.c core/session/vm_handshake.c \
	core/session/vm_classify.c core/session/vm_stream.c core/session/vm_ident.c core/session/vm_tables.c \
	core/session/logctx.c core/session/vm-private.h \
	core/session/ratelog.c core/session/ratelog.h \
	core/transport/target.c core/transport/local_proc.c core/session/correlate.c \
	core/loop/watch.c core/loop/timer.c
tests_unit_session_test_vm_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_vm_CFLAGS = $(SESSION_TEST_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_unit_session_test_vm_LDADD = core/wire/libddmwire.la $(GLIB_LIBS) $(ZLIB_LIBS) $(CMOCKA_LIBS)

# The monitor hub with the real core (views, registry, relay, discovery).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-monitor
TESTS += tests/unit/session/test-monitor
endif
tests_unit_session_test_monitor_SOURCES = tests/unit/session/test-monitor.c
tests_unit_session_test_monitor_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_monitor_CFLAGS = $(SESSION_TEST_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_unit_session_test_monitor_LDADD = core/libddmcore.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)

# Rate-limited log lines (core/session/ratelog.c), compiled in alone.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-ratelog
TESTS += tests/unit/session/test-ratelog
endif
tests_unit_session_test_ratelog_SOURCES = tests/unit/session/test-ratelog.c core/session/ratelog.c \
	core/session/ratelog.h
tests_unit_session_test_ratelog_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_ratelog_CFLAGS = $(SESSION_TEST_CFLAGS)
tests_unit_session_test_ratelog_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The log context's VM (core/session/logctx.h, logctx.c), compiled in alone.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/session/test-logctx
TESTS += tests/unit/session/test-logctx
endif
tests_unit_session_test_logctx_SOURCES = tests/unit/session/test-logctx.c core/session/logctx.c \
	core/session/logctx.h
tests_unit_session_test_logctx_CPPFLAGS = $(SESSION_TEST_CPPFLAGS)
tests_unit_session_test_logctx_CFLAGS = $(SESSION_TEST_CFLAGS)
tests_unit_session_test_logctx_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
