# SPDX-License-Identifier: Apache-2.0
# tests/simvm/: ddmon-simvm (tools/simvm): its models and encoders (decoded
# back by small independent decoders in the tests), its JDWP object model and
# its simulated adb device. Its smoke tests are in tests/integration/local.mk.
SIMVM_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
SIMVM_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
SIMVM_TEST_LIBS = tools/simvm/libsimvmmodel.la $(CMOCKA_LIBS)

if ENABLE_TESTS
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

# The heap-dump generator, walked back by a small independent hprof walker.
check_PROGRAMS += tests/simvm/test-simvm-hprof
TESTS += tests/simvm/test-simvm-hprof
tests_simvm_test_simvm_hprof_SOURCES = tests/simvm/test-simvm-hprof.c
tests_simvm_test_simvm_hprof_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_hprof_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_hprof_LDADD = $(SIMVM_TEST_LIBS)

# The method-trace generator, read back by the profile plugin's decoder.
check_PROGRAMS += tests/simvm/test-simvm-trace
TESTS += tests/simvm/test-simvm-trace
tests_simvm_test_simvm_trace_SOURCES = tests/simvm/test-simvm-trace.c plugins/profile/trace_decode.c \
	plugins/common/numparse.c
tests_simvm_test_simvm_trace_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_trace_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_trace_LDADD = $(SIMVM_TEST_LIBS)

# A world driven through sim_vm_serve_fd() on socketpairs (the adb bridge's way).
tests_simvm_test_simvm_world_SOURCES = tests/simvm/test-simvm-world.c
tests_simvm_test_simvm_world_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS)
tests_simvm_test_simvm_world_CFLAGS = $(SIMVM_TEST_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_world_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)
endif

# simvm's encoders against the plugins' decoders (heap segments, THST, STKL,
# NHGT): two independent readings of doc/protocol.md must agree.
if ENABLE_TESTS
if BUILD_PLUGIN_HEAP
if BUILD_PLUGIN_THREADS
if BUILD_PLUGIN_NATIVEHEAP
check_PROGRAMS += tests/simvm/test-simvm-crosscheck
TESTS += tests/simvm/test-simvm-crosscheck
tests_simvm_test_simvm_crosscheck_SOURCES = tests/simvm/test-simvm-crosscheck.c \
	plugins/threads/thst.c plugins/threads/stkl.c plugins/nativeheap/nhgt.c
tests_simvm_test_simvm_crosscheck_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS) -I$(top_srcdir)
tests_simvm_test_simvm_crosscheck_CFLAGS = $(SIMVM_TEST_CFLAGS)
tests_simvm_test_simvm_crosscheck_LDADD = $(DDM_SEGMENTS_LIBS) $(SIMVM_TEST_LIBS)
endif
endif
endif
endif

# The simulated VM's JDWP object model, parsed back.
if ENABLE_TESTS
check_PROGRAMS += tests/simvm/test-simvm-jdwp
TESTS += tests/simvm/test-simvm-jdwp
tests_simvm_test_simvm_jdwp_SOURCES = tests/simvm/test-simvm-jdwp.c
tests_simvm_test_simvm_jdwp_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
tests_simvm_test_simvm_jdwp_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_jdwp_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)
endif

# The simulated Android device: its transport codec (tools/simvm/adb_msg.c),
# and the device itself, driven over TCP as the adb server drives it.
if ENABLE_TESTS
check_PROGRAMS += tests/simvm/test-adbmsg
TESTS += tests/simvm/test-adbmsg
tests_simvm_test_adbmsg_SOURCES = tests/simvm/test-adbmsg.c tools/simvm/adb_msg.c tools/simvm/adb_msg.h
tests_simvm_test_adbmsg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm
tests_simvm_test_adbmsg_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_simvm_test_adbmsg_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
check_PROGRAMS += tests/simvm/test-adbdevice
TESTS += tests/simvm/test-adbdevice
tests_simvm_test_adbdevice_SOURCES = tests/simvm/test-adbdevice.c
tests_simvm_test_adbdevice_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
tests_simvm_test_adbdevice_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_simvm_test_adbdevice_LDADD = tools/simvm/libsimvm.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif

# View debugging: the model read back by the viewdebug plugin's decoders
# and by libpng, and the VULW/VURT/VUOP handlers over a socketpair.
if ENABLE_TESTS
# The port and state files, written by a thread of their own.
check_PROGRAMS += tests/simvm/test-simvm-filewriter
TESTS += tests/simvm/test-simvm-filewriter
tests_simvm_test_simvm_filewriter_SOURCES = tests/simvm/test-simvm-filewriter.c
tests_simvm_test_simvm_filewriter_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS) -I$(top_srcdir)
tests_simvm_test_simvm_filewriter_CFLAGS = $(SIMVM_TEST_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_filewriter_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)

check_PROGRAMS += tests/simvm/test-simvm-views
TESTS += tests/simvm/test-simvm-views
endif
tests_simvm_test_simvm_views_SOURCES = tests/simvm/test-simvm-views.c \
	plugins/viewdebug/vudecode.c plugins/viewdebug/vudecode.h
tests_simvm_test_simvm_views_CPPFLAGS = $(SIMVM_TEST_CPPFLAGS) -I$(top_srcdir) $(DDM_PLUGIN_INCLUDES)
tests_simvm_test_simvm_views_CFLAGS = $(SIMVM_TEST_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_views_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)
if HAVE_LIBPNG
tests_simvm_test_simvm_views_CFLAGS += $(LIBPNG_CFLAGS)
tests_simvm_test_simvm_views_LDADD += $(LIBPNG_LIBS)
endif
