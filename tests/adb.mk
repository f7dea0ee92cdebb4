# SPDX-License-Identifier: Apache-2.0
# Tests of the adb side: the codec, and (with a fake adb server and the real adb) discovery.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-adb-proto
TESTS += tests/unit/test-adb-proto
tests_unit_test_adb_proto_SOURCES = tests/unit/test-adb-proto.c core/adb_proto.c
tests_unit_test_adb_proto_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_adb_proto_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_adb_proto_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif

# adb device
# The simulated Android device's transport codec (tools/simvm/adb_msg.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-adbmsg
TESTS += tests/unit/test-adbmsg
tests_unit_test_adbmsg_SOURCES = tests/unit/test-adbmsg.c tools/simvm/adb_msg.c tools/simvm/adb_msg.h
tests_unit_test_adbmsg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm
tests_unit_test_adbmsg_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_adbmsg_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
# The device itself, driven over TCP as the adb server drives it.
check_PROGRAMS += tests/unit/test-adbdevice
TESTS += tests/unit/test-adbdevice
tests_unit_test_adbdevice_SOURCES = tests/unit/test-adbdevice.c
tests_unit_test_adbdevice_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm -I$(top_srcdir)/core \
	-DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_test_adbdevice_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_adbdevice_LDADD = tools/simvm/libsimvm.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
