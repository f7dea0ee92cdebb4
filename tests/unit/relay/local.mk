# SPDX-License-Identifier: Apache-2.0
# tests/unit/relay/: the debugger relay (core/relay).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-idmap
TESTS += tests/unit/relay/test-idmap
tests_unit_relay_test_idmap_SOURCES = tests/unit/relay/test-idmap.c core/relay/idmap.c
tests_unit_relay_test_idmap_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_relay_test_idmap_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_idmap_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
# The ports remembered across restarts (core/relay/portmap.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-portmap
TESTS += tests/unit/relay/test-portmap
tests_unit_relay_test_portmap_SOURCES = tests/unit/relay/test-portmap.c core/relay/portmap.c
tests_unit_relay_test_portmap_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_relay_test_portmap_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_portmap_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
# The debugger port pool's bitmaps (core/relay/portpool.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-portpool
TESTS += tests/unit/relay/test-portpool
tests_unit_relay_test_portpool_SOURCES = tests/unit/relay/test-portpool.c core/relay/portpool.c \
	core/relay/portmap.c
tests_unit_relay_test_portpool_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_relay_test_portpool_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_portpool_LDADD = $(GLIB_LIBS) $(CMOCKA_LIBS)

# The relay's batching predicate on the JDWP reader (ddm_jdwp_reader_has_packet).
check_PROGRAMS += tests/unit/relay/test-batch
TESTS += tests/unit/relay/test-batch
tests_unit_relay_test_batch_SOURCES = tests/unit/relay/test-batch.c
tests_unit_relay_test_batch_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_unit_relay_test_batch_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_unit_relay_test_batch_LDADD = $(CODEC_TEST_LDADD)
endif
# The write path to a debugger (core/relay/relay_debugger.c) on a socketpair.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-relay-send
TESTS += tests/unit/relay/test-relay-send
tests_unit_relay_test_relay_send_SOURCES = tests/unit/relay/test-relay-send.c
tests_unit_relay_test_relay_send_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_relay_test_relay_send_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_relay_send_LDADD = core/libddmcore.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
# The fixed debugger ports of --connect targets, keyed as discovery keys
# their VMs (core/relay/relay_ports.c), and a debugger's handshake deadline
# (relay_debugger.c): a real relay on loopback.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-relay-ports
TESTS += tests/unit/relay/test-relay-ports
tests_unit_relay_test_relay_ports_SOURCES = tests/unit/relay/test-relay-ports.c \
	tests/harness/fd-limit.h
tests_unit_relay_test_relay_ports_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_relay_test_relay_ports_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_relay_ports_LDADD = core/libddmcore.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
# The command path from a debugger to its VM (core/relay/relay_debugger.c)
# on socketpairs.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/relay/test-relay-command
TESTS += tests/unit/relay/test-relay-command
tests_unit_relay_test_relay_command_SOURCES = tests/unit/relay/test-relay-command.c
tests_unit_relay_test_relay_command_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-test\"
tests_unit_relay_test_relay_command_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_relay_test_relay_command_LDADD = core/libddmcore.la $(GLIB_LIBS) $(CMOCKA_LIBS)
endif
