# SPDX-License-Identifier: Apache-2.0
# core/: VM sessions, reply correlation, transports, the monitor hub and
# local discovery (all part of libddmcore.la).
core_libddmcore_la_SOURCES += core/correlate.c
core_libddmcore_la_SOURCES += core/target.c core/vm.c
core_libddmcore_la_SOURCES += core/monitor.c core/discovery_local.c
