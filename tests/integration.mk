# SPDX-License-Identifier: Apache-2.0
# Integration tests: the real ddmon binary against ddmon-simvm, real OpenJDK
# VMs, real jdb and the real adb. TAP scripts; helpers in tests/integration/lib.sh.
INTEGRATION_TESTS = \
	tests/integration/snapshot-simvm.sh \
	tests/integration/snapshot-gc.sh \
	tests/integration/jvm-nonddm.sh \
	tests/integration/server-cli.sh \
	tests/integration/relay-jvm.sh \
	tests/integration/relay-jdb.sh \
	tests/integration/relay-ports.sh \
	tests/integration/view-blob.sh \
	tests/integration/ambiguous-name.sh \
	tests/integration/plugins-simvm.sh
if ENABLE_TESTS
TESTS += $(INTEGRATION_TESTS)
endif
EXTRA_DIST += $(INTEGRATION_TESTS) tests/integration/lib.sh tests/integration/viewq.py \
	tests/integration/compare_truth.py tests/integration/fake_adb.py \
	tests/java/Sleeper.java tests/java/JdiStress.java

# relay simvm tests: the debugger relay against DDM VMs played by ddmon-simvm
# (JDWP through the relay port, DDM kept from the debugger, WAIT, DBGD
# acknowledged vs ignored).
if ENABLE_TESTS
TESTS += tests/integration/relay-simvm.sh
endif
EXTRA_DIST += tests/integration/relay-simvm.sh
# end relay simvm tests

# relay backpressure: a debugger or a VM that stops reading (a real JVM's
# event storm; tests/integration/fake_jvm.py, a VM slow to read).
if ENABLE_TESTS
TESTS += tests/integration/relay-backpressure.sh
endif
EXTRA_DIST += tests/integration/relay-backpressure.sh tests/integration/fake_jvm.py

# adb tests
# ddmon against a fake adb server (fault injection) and against the real adb
# server with ddmon-simvm's simulated device (skipped without adb).
ADB_INTEGRATION_TESTS = tests/integration/adb-fake.sh tests/integration/adb-real.sh
if ENABLE_TESTS
TESTS += $(ADB_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(ADB_INTEGRATION_TESTS) tests/integration/adb-lib.sh

# adb track-app
# The tracking service per device through the real adb server: track-app at
# API 31+ (debuggable/profileable flags), track-jdwp when adbd refuses it;
# and against an inline fake adb server: profileable-only apps, track-app
# cut before its first update, malformed AppProcesses, FAIL, the remembered choice.
ADB_TRACKAPP_TESTS = tests/integration/adb-trackapp.sh tests/integration/adb-trackapp-fake.sh
if ENABLE_TESTS
TESTS += $(ADB_TRACKAPP_TESTS)
endif
EXTRA_DIST += $(ADB_TRACKAPP_TESTS)
# end adb track-app

# jdb simvm
# jdb and a JDI program (tests/java/JdiThreads.java) against a simulated VM's
# JDWP object model: directly, through the VM's relay port and through the
# selected-VM port, with the same output every way.
if ENABLE_TESTS
TESTS += tests/integration/jdb-simvm.sh
endif
EXTRA_DIST += tests/integration/jdb-simvm.sh tests/java/JdiThreads.java
# end jdb simvm

# jdb simvm (unit): the simulated VM's JDWP object model, parsed back.
if ENABLE_TESTS
check_PROGRAMS += tests/simvm/test-simvm-jdwp
TESTS += tests/simvm/test-simvm-jdwp
tests_simvm_test_simvm_jdwp_SOURCES = tests/simvm/test-simvm-jdwp.c
tests_simvm_test_simvm_jdwp_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/simvm \
	-DG_LOG_DOMAIN=\"ddmon-test\"
tests_simvm_test_simvm_jdwp_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_simvm_test_simvm_jdwp_LDADD = tools/simvm/libsimvm.la $(CMOCKA_LIBS) $(GLIB_LIBS)
endif
# end jdb simvm (unit)

# client failures as JSON
# With --json every failing client command prints one {"ok":false,"error",
# "code","kind"} object: the pure helpers (unit), and each kind from the real
# binary (no server, autostart failure, usage, not found, plugin commands,
# watch and snapshot).
check_PROGRAMS += tests/unit/cli/test-ctl-failure
TESTS += tests/unit/cli/test-ctl-failure
tests_unit_cli_test_ctl_failure_SOURCES = tests/unit/cli/test-ctl-failure.c core/wire/ctlproto.c core/wire/ctlproto.h
tests_unit_cli_test_ctl_failure_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-control\"
tests_unit_cli_test_ctl_failure_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_ctl_failure_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)
if ENABLE_TESTS
TESTS += tests/integration/json-errors.sh
endif
EXTRA_DIST += tests/integration/json-errors.sh
# end client failures as JSON

# coverage gaps
# Behaviours that worked by hand but no test covered: adb start-server
# spawned once, as an argv, only when no adb server ever answered (a fake
# adb program; tests/integration/fake_adb.py as the server that goes away);
# `ddmon scan MODES` at run time (local VMs and a simulated adb device);
# a selection by app name that follows the app across restarts.
GAPS_INTEGRATION_TESTS = tests/integration/adb-start-server.sh \
	tests/integration/scan-modes.sh tests/integration/select-follows.sh
if ENABLE_TESTS
TESTS += $(GAPS_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(GAPS_INTEGRATION_TESTS)
# end coverage gaps
