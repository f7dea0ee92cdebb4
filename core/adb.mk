# SPDX-License-Identifier: Apache-2.0
# Android devices through the adb server: the host-protocol codec, the adb
# transport (host:transport + jdwp:PID) and device/VM discovery.
core_libddmcore_la_SOURCES += core/adb_proto.c core/adb_proto.h
core_libddmcore_la_SOURCES += core/adb_conn.c core/adb_conn.h core/adb_target.c core/discovery_adb.c core/adb.h
