# SPDX-License-Identifier: Apache-2.0
# The SDK: the only headers a plugin may include, and its pkg-config file.
sdkincludedir = $(includedir)/ddmon-$(DDM_ABI_MAJOR)/ddmon
sdkinclude_HEADERS = \
	%reldir%/include/ddmon/plugin.h \
	%reldir%/include/ddmon/chunk.h \
	%reldir%/include/ddmon/bytes.h
nodist_sdkinclude_HEADERS = %reldir%/include/ddmon/abi.h

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = %reldir%/ddmon-plugin-$(DDM_ABI_MAJOR).pc

EXTRA_DIST += %reldir%/include/ddmon/abi.h.in %reldir%/ddmon-plugin.pc.in \
	%reldir%/ddmon-plugin-uninstalled.pc.in
DISTCLEANFILES += %reldir%/ddmon-plugin-$(DDM_ABI_MAJOR)-uninstalled.pc
