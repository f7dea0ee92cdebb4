# SPDX-License-Identifier: Apache-2.0
# core/config/: the runtime configuration, every option and bound.
core_libddmcore_la_SOURCES += %reldir%/config.c %reldir%/config.h
