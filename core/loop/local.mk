# SPDX-License-Identifier: Apache-2.0
# core/loop/: the event loop's two tables on top of glib's main loop: fd
# watches on one epoll fd, and every timer in one heap, each driven by a
# single GSource; and the process's malloc_trim on one of those timers.
# May call: glib (and libc's malloc_trim) only.
core_libddmcore_la_SOURCES += %reldir%/watch.c %reldir%/watch.h \
	%reldir%/timer.c %reldir%/timer.h %reldir%/census.c %reldir%/census.h \
	%reldir%/heaptrim.c %reldir%/heaptrim.h
