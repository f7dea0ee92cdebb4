# SPDX-License-Identifier: Apache-2.0
# tests/unit/loop/: the timer heap, the epoll fd watches, the heap trim,
# the accept with its reserve descriptor and the listener's accept loop
# (core/loop), compiled in alone with the real glib main loop.

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

# The process's malloc_trim: its debounce, its gap and its count.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-heaptrim
TESTS += tests/unit/loop/test-heaptrim
endif
tests_unit_loop_test_heaptrim_SOURCES = tests/unit/loop/test-heaptrim.c \
	core/loop/heaptrim.c core/loop/heaptrim.h core/loop/timer.c core/loop/timer.h
tests_unit_loop_test_heaptrim_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_heaptrim_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_heaptrim_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# Accepting out of descriptors: the reserve sheds the pending connection.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-accept
TESTS += tests/unit/loop/test-accept
endif
tests_unit_loop_test_accept_SOURCES = tests/unit/loop/test-accept.c \
	core/loop/accept.c core/loop/accept.h tests/harness/fd-limit.h
tests_unit_loop_test_accept_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_accept_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_accept_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The shared accept loop: batches, the pause after an accept error, shedding.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-listener
TESTS += tests/unit/loop/test-listener
endif
tests_unit_loop_test_listener_SOURCES = tests/unit/loop/test-listener.c \
	core/loop/listener.c core/loop/listener.h core/loop/accept.c core/loop/accept.h \
	core/loop/watch.c core/loop/watch.h core/loop/timer.c core/loop/timer.h \
	core/loop/census.c core/loop/census.h tests/harness/fd-limit.h
tests_unit_loop_test_listener_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_listener_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_listener_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

tests_unit_loop_test_watch_SOURCES = tests/unit/loop/test-watch.c \
	tests/harness/echo-thread.c tests/harness/echo-thread.h \
	core/loop/watch.c core/loop/watch.h core/loop/timer.c core/loop/timer.h \
	core/loop/census.c core/loop/census.h
tests_unit_loop_test_watch_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_watch_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_watch_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The socket round where seccomp refuses timerfd_create and epoll_pwait2.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-watch-seccomp
TESTS += tests/unit/loop/test-watch-seccomp
endif
tests_unit_loop_test_watch_seccomp_SOURCES = tests/unit/loop/test-watch-seccomp.c \
	tests/harness/echo-thread.c tests/harness/echo-thread.h \
	core/loop/watch.c core/loop/watch.h core/loop/timer.c core/loop/timer.h \
	core/loop/census.c core/loop/census.h
tests_unit_loop_test_watch_seccomp_CPPFLAGS = $(LOOP_TEST_CPPFLAGS)
tests_unit_loop_test_watch_seccomp_CFLAGS = $(LOOP_TEST_CFLAGS)
tests_unit_loop_test_watch_seccomp_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# A whole daemon (core only) and a real ddmon-simvm: connecting 20 or 200
# idle VMs attaches no GSource (the watches and timers are core/loop's).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/loop/test-census-vms
TESTS += tests/unit/loop/test-census-vms
endif
tests_unit_loop_test_census_vms_SOURCES = tests/unit/loop/test-census-vms.c
tests_unit_loop_test_census_vms_CPPFLAGS = $(LOOP_TEST_CPPFLAGS) \
	-DDDM_TEST_BUILDDIR=\"$(abs_top_builddir)\"
tests_unit_loop_test_census_vms_CFLAGS = $(LOOP_TEST_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_unit_loop_test_census_vms_LDADD = core/libddmcore.la $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)
