# SPDX-License-Identifier: Apache-2.0
# core/pluginhost/: the loader (loader*.c), the registry (registry*.c) and the ddm_host table.
core_libddmcore_la_SOURCES += \
	%reldir%/registry.c %reldir%/registry.h %reldir%/registry-private.h \
	%reldir%/registry_dispatch.c %reldir%/registry_commands.c \
	%reldir%/registry_options.c %reldir%/registry_list.c %reldir%/registry_metrics.c \
	%reldir%/registry_views.c %reldir%/registry_headline.c \
	%reldir%/host.c \
	%reldir%/loader.c %reldir%/loader.h %reldir%/loader-private.h \
	%reldir%/loader_trust.c %reldir%/loader_elf.c %reldir%/elfdesc.c %reldir%/elfdesc.h %reldir%/loader_path.c \
	%reldir%/loader_report.c %reldir%/loader_module.c

# The plugin ABI rules and the plugin authors' tutorial.
dist_doc_DATA += doc/plugin-abi.md doc/writing-plugins.md
