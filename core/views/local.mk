# SPDX-License-Identifier: Apache-2.0
# core/views/: the view store and its JSON and text forms.
core_libddmcore_la_SOURCES += %reldir%/views.c %reldir%/views.h %reldir%/render.c
