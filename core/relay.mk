# SPDX-License-Identifier: Apache-2.0
# The debugger relay: per-VM and selected-VM listeners, id remapping,
# cleanup when a debugger leaves.
core_libddmcore_la_SOURCES += core/idmap.c core/idmap.h
core_libddmcore_la_SOURCES += core/relay.c core/relay.h
