# SPDX-License-Identifier: Apache-2.0
# tests/tools/: programs the tests use, not tests themselves.

# jdwpc: a scriptable raw-JDWP client (plays a debugger) used by the relay
# tests and bench/relay.
if ENABLE_TESTS
check_PROGRAMS += tests/tools/jdwpc
endif
tests_tools_jdwpc_SOURCES = tests/tools/jdwpc.c tests/tools/rawio.c tests/tools/rawio.h

# evilvm: a scriptable hostile VM (listens like a VM, plays a script of
# attacks) for the hostile-peer tests and bench/hostile.sh.
if ENABLE_TESTS
check_PROGRAMS += tests/tools/evilvm
endif
tests_tools_evilvm_SOURCES = tests/tools/evilvm.c tests/tools/rawio.c tests/tools/rawio.h
tests_tools_evilvm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/sdk/include -I$(top_builddir)/sdk/include
tests_tools_evilvm_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
tests_tools_evilvm_LDADD = core/wire/libddmwire.la $(GLIB_LIBS) $(ZLIB_LIBS)
