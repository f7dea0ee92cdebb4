# SPDX-License-Identifier: Apache-2.0
# core/loop/: the event loop's two tables on top of glib's main loop: fd
# watches on one epoll fd, and every timer in one heap, each driven by a
# single GSource; the process's malloc_trim on one of those timers; and
# accepting with a reserve descriptor to shed a connection when out of
# descriptors (accept.c), and the accept loop every listener shares, which
# pauses after an accept error instead of spinning (listener.c).
# May call: glib and libc (malloc_trim, accept4) only.
core_libddmcore_la_SOURCES += %reldir%/watch.c %reldir%/watch.h \
	%reldir%/timer.c %reldir%/timer.h %reldir%/census.c %reldir%/census.h \
	%reldir%/heaptrim.c %reldir%/heaptrim.h \
	%reldir%/accept.c %reldir%/accept.h %reldir%/listener.c %reldir%/listener.h
