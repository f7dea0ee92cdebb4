# SPDX-License-Identifier: Apache-2.0
# tests/unit/loop/: the timer heap and the epoll fd watches (core/loop),
# compiled in alone with the real glib main loop.

LOOP_TEST_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
LOOP_TEST_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-timer tests/unit/loop/test-watch
TESTS += tests/unit/loop/test-timer tests/unit/loop/test-watch
endif
tests_unit_loop_test_timer_SOURCES = tests/unit/loop/test-timer.c \
	core/loop/timer.c core/loop/timer.h core/loop/census.c core/loop/census.h
tests_unit_loop_test_timer_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_timer_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_timer_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

tests_unit_loop_test_watch_SOURCES = tests/unit/loop/test-watch.c \
	core/loop/watch.c core/loop/watch.h core/loop/census.c core/loop/census.h
tests_unit_loop_test_watch_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_watch_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_watch_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
