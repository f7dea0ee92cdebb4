# SPDX-License-Identifier: Apache-2.0
# Tests of the adb side: the codec, and (with a fake adb server and the real adb) discovery.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/wire/test-adb-proto
TESTS += tests/unit/wire/test-adb-proto
tests_unit_wire_test_adb_proto_SOURCES = tests/unit/wire/test-adb-proto.c core/wire/adb_proto.c
tests_unit_wire_test_adb_proto_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_wire_test_adb_proto_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_wire_test_adb_proto_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif

# adb device
# The simulated Android device's transport codec (tools/simvm/adb_msg.c).
if ENABLE_TESTS
check_PROGRAMS += tests/simvm/test-adbmsg
TESTS += tests/simvm/test-adbmsg
tests_simvm_test_adbmsg_SOURCES = tests/simvm/test-adbmsg.c tools/simvm/adb_msg.c tools/simvm/adb_msg.h
tests_simvm_test_adbmsg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm
tests_simvm_test_adbmsg_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_simvm_test_adbmsg_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
# The device itself, driven over TCP as the adb server drives it.
check_PROGRAMS += tests/simvm/test-adbdevice
TESTS += tests/simvm/test-adbdevice
tests_simvm_test_adbdevice_SOURCES = tests/simvm/test-adbdevice.c
tests_simvm_test_adbdevice_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
tests_simvm_test_adbdevice_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_simvm_test_adbdevice_LDADD = tools/simvm/libsimvm.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
