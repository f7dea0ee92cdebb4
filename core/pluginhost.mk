# SPDX-License-Identifier: Apache-2.0
# The plugin host: registry (registrations, dispatch, commands), the ddm_host
# table handed to plugins, and the loader (search path, validation).
core_libddmcore_la_SOURCES += \
	%reldir%/registry.c %reldir%/registry-private.h \
	%reldir%/host.c \
	%reldir%/loader.c

# The plugin ABI rules and the plugin authors' tutorial.
dist_doc_DATA += doc/plugin-abi.md doc/writing-plugins.md
