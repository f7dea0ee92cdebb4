# SPDX-License-Identifier: Apache-2.0
# tools/simvm, the simulated Android device (--adb-device): the adb transport
# message codec and the device (services track-jdwp, jdwp, jdwp:PID, shell
# getprop). In libsimvm.la (so ddmon-simvm and the unit tests both get it).
%canon_reldir%_libsimvm_la_SOURCES += \
	%reldir%/adb_msg.c %reldir%/adb_msg.h \
	%reldir%/adb_device.c %reldir%/adb_device.h
