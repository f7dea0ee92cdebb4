# SPDX-License-Identifier: Apache-2.0
# tests/tools/: programs the tests use, not tests themselves.

# jdwpc: a scriptable raw-JDWP client (plays a debugger) used by the relay
# tests and bench/relay.
if ENABLE_TESTS
check_PROGRAMS += tests/tools/jdwpc
endif
tests_tools_jdwpc_SOURCES = tests/tools/jdwpc.c
