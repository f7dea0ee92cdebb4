# SPDX-License-Identifier: Apache-2.0
# tools/simvm, the simulated Android device (--adb-device): the adb transport
# message codec and the device (services track-jdwp, jdwp:PID, shell getprop).
ddmon_simvm_SOURCES += \
	%reldir%/adb_msg.c %reldir%/adb_msg.h \
	%reldir%/adb_device.c %reldir%/adb_device.h
