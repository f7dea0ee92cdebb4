# SPDX-License-Identifier: Apache-2.0

# views/config/render (views engineer)
core_libddmcore_la_SOURCES += core/views.c core/render.c core/config.c
