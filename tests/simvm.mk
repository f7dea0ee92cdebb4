# SPDX-License-Identifier: Apache-2.0
# Tests of ddmon-simvm: its models and encoders (decoded back by small
# independent decoders in the tests), and a smoke test of the binary.
if ENABLE_TESTS
SIMVM_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
SIMVM_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
SIMVM_TEST_LIBS = tools/simvm/libsimvmmodel.la $(CMOCKA_LIBS)

check_PROGRAMS += tests/simvm/test-simvm-heap tests/simvm/test-simvm-threads tests/simvm/test-simvm-native \
	tests/simvm/test-simvm-world
TESTS += tests/simvm/test-simvm-heap tests/simvm/test-simvm-threads tests/simvm/test-simvm-native \
	tests/simvm/test-simvm-world

tests_simvm_test_simvm_heap_SOURCES = tests/simvm/test-simvm-heap.c
tests_simvm_test_simvm_heap_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_heap_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_heap_LDADD = $(SIMVM_TEST_LIBS)

tests_simvm_test_simvm_threads_SOURCES = tests/simvm/test-simvm-threads.c
tests_simvm_test_simvm_threads_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_threads_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_threads_LDADD = $(SIMVM_TEST_LIBS)

tests_simvm_test_simvm_native_SOURCES = tests/simvm/test-simvm-native.c
tests_simvm_test_simvm_native_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_native_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_native_LDADD = $(SIMVM_TEST_LIBS)

# A world driven through sim_vm_serve_fd() on socketpairs (the adb bridge's way).
tests_simvm_test_simvm_world_SOURCES = tests/simvm/test-simvm-world.c
tests_simvm_test_simvm_world_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_world_CFLAGS = $(SIMVM_TEST_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_world_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)

dist_check_SCRIPTS += tests/integration/simvm-smoke.sh tests/integration/simvm-modes.sh
TESTS += tests/integration/simvm-smoke.sh tests/integration/simvm-modes.sh
endif

# simvm's encoders against the plugins' decoders (heap segments, THST, STKL,
# NHGT): two independent readings of the wire reference must agree.
if ENABLE_TESTS
if BUILD_PLUGIN_HEAP
if BUILD_PLUGIN_THREADS
if BUILD_PLUGIN_NATIVEHEAP
check_PROGRAMS += tests/simvm/test-simvm-crosscheck
TESTS += tests/simvm/test-simvm-crosscheck
tests_simvm_test_simvm_crosscheck_SOURCES = tests/simvm/test-simvm-crosscheck.c plugins/heap/segdecode.c \
	plugins/threads/thst.c plugins/threads/stkl.c plugins/nativeheap/nhgt.c
tests_simvm_test_simvm_crosscheck_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS) -I$(top_srcdir)
tests_simvm_test_simvm_crosscheck_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_crosscheck_LDADD = $(SIMVM_TEST_LIBS)
endif
endif
endif
endif
