# SPDX-License-Identifier: Apache-2.0
# bench/: benchmarks. Not tests: they print figures and ratios against a
# baseline measured in the same run. One block per benchmark.

# heapdecode: the heap plugin's segment decoder on a generated 512 MiB heap
# (64 M units); prints MB/s of run data as a ratio to the tight decode loop
# over the same bytes, medians of N passes, and the goal (>= 0.99x).
# Run: make bench-heapdecode [HEAPDECODE_ARGS="--runs 9 --keep --check"]
# make bench-heapdecode-ir: callgrind instructions per byte, decoder vs loop.
noinst_PROGRAMS += bench/heapdecode
bench_heapdecode_SOURCES = bench/heapdecode.c \
	plugins/heap/bitmap.c plugins/heap/bitmap.h \
	plugins/heap/bitmap_png.c plugins/heap/bitmap_png.h
bench_heapdecode_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_heapdecode_CFLAGS = $(AM_CFLAGS)
bench_heapdecode_LDADD = $(DDM_SEGMENTS_LIBS) $(DDM_PARTFILE_LIBS)
if HAVE_LIBPNG
bench_heapdecode_CFLAGS += $(LIBPNG_CFLAGS)
bench_heapdecode_LDADD += $(DDM_PNGLIB_LIBS)
endif
HEAPDECODE_ARGS =
bench-heapdecode: bench/heapdecode$(EXEEXT)
	./bench/heapdecode$(EXEEXT) $(HEAPDECODE_ARGS)
EXTRA_DIST += bench/heapdecode-ir.sh
bench-heapdecode-ir: bench/heapdecode$(EXEEXT)
	$(SHELL) $(top_srcdir)/bench/heapdecode-ir.sh ./bench/heapdecode$(EXEEXT)
.PHONY: bench-heapdecode bench-heapdecode-ir
# end heapdecode

# snapshot: `ddmon snapshot --json` with 10 simulated VMs, warm (a settled
# server) and cold (in process), against `ddmon vms --json` on the same
# warm server; medians of N runs, goals <= 0.1 s warm, <= 0.5 s cold.
# Run: make bench-snapshot [BENCH_SNAPSHOT_ARGS="--runs 9 --check"]
EXTRA_DIST += bench/snapshot.sh
BENCH_SNAPSHOT_ARGS =
.PHONY: bench-snapshot
bench-snapshot: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT) uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		$(SHELL) $(top_srcdir)/bench/snapshot.sh $(BENCH_SNAPSHOT_ARGS)
# end snapshot

# idlewake: the instructions one control request (a few main-loop wake-ups)
# costs an idle server with 100 and 1,000 VMs, under callgrind, and its
# poll/epoll_wait calls under strace; goal: the cost independent of N
# (ratio <= 1.2). IDLEWAKE_ARGS="--old OTHER_BUILDDIR --check" compares
# with another build in the same run. A plain (unsanitized) build.
EXTRA_DIST += bench/idlewake.sh
IDLEWAKE_ARGS =
.PHONY: bench-idlewake
bench-idlewake: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT)
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		$(SHELL) $(top_srcdir)/bench/idlewake.sh $(IDLEWAKE_ARGS)
# end idlewake

# scale: N simulated VMs over TCP (100, 1000, 10000): time until `ddmon vms
# --json` lists them all ready by name, its growth exponent, RSS per VM;
# idle CPU and wake-ups with 1,000 VMs; --adb: 1,000 VMs through the real
# adb server against bench/adb_min_client.py, and RSS. Medians of N runs,
# goals of issue 16 (--check). A plain (unsanitized) build.
# Run: make bench-scale [BENCH_SCALE_ARGS="--runs 5 --adb --check"]
EXTRA_DIST += bench/scale.sh bench/adb_min_client.py
BENCH_SCALE_ARGS =
.PHONY: bench-scale
bench-scale: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT) uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		bash $(top_srcdir)/bench/scale.sh $(BENCH_SCALE_ARGS)
# end scale

# bench/soak.sh: N churning VMs for M minutes; RSS slope after warm-up
# (KiB/min, goal < 1), descriptors, debugger port range. `make bench-soak`
# (SOAK_ARGS="-n 200 -m 60 -r 3" for a long one).
EXTRA_DIST += bench/soak.sh
SOAK_ARGS ?=
.PHONY: bench-soak
bench-soak: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT)
	DDM_TOP_BUILDDIR=$(abs_top_builddir) $(SHELL) $(top_srcdir)/bench/soak.sh $(SOAK_ARGS)

# relay: the debugger relay against a real JVM, directly vs a minimal epoll
# byte relay (bench/minrelay, the baseline) vs socat vs ddmon: round trip
# p50/p99, pipelined packets/s, bulk reply MB/s, event storm events/s, and
# Ir and syscalls per relayed packet (callgrind, strace -c); medians of N
# runs with ratios. Run: make bench-relay [BENCH_RELAY_ARGS="--runs 9 --check"]
noinst_PROGRAMS += bench/minrelay
bench_minrelay_SOURCES = bench/minrelay.c
noinst_PROGRAMS += bench/loopiter
bench_loopiter_SOURCES = bench/loopiter.c
bench_loopiter_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
bench_loopiter_LDADD = $(GLIB_LIBS)
EXTRA_DIST += bench/relay.sh tests/java/Storm.java
BENCH_RELAY_ARGS =
.PHONY: bench-relay
bench-relay: ddmon$(EXEEXT) tests/tools/jdwpc$(EXEEXT) bench/minrelay$(EXEEXT) bench/loopiter$(EXEEXT) \
		uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		$(SHELL) $(top_srcdir)/bench/relay.sh $(BENCH_RELAY_ARGS)
# end relay

# hprof: a streamed heap dump (ddmon-simvm, 1 GiB by default) read by a plain
# socket client, by that client writing a file, and by `ddmon hprof`: MB/s,
# ddmon's ratios, ddmon's extra RSS. Medians of N runs.
# Run: make bench-hprof [BENCH_HPROF_ARGS="--runs 9 --size 2147483000"]
EXTRA_DIST += bench/hprof.sh
BENCH_HPROF_ARGS =
.PHONY: bench-hprof
bench-hprof: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT) tests/tools/jdwpc$(EXEEXT) uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		$(SHELL) $(top_srcdir)/bench/hprof.sh $(BENCH_HPROF_ARGS)
# end hprof

# hostile: control-socket round trips p50/p99/max while tests/tools/evilvm
# attacks the server beside a good simulated VM, each case against a
# baseline in the same run; medians of N runs, peak RSS.
# Run: make bench-hostile [BENCH_HOSTILE_ARGS="--runs 5 --seconds 10"]
EXTRA_DIST += bench/hostile.sh bench/lib.sh
BENCH_HOSTILE_ARGS =
.PHONY: bench-hostile
bench-hostile: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT) tests/tools/evilvm$(EXEEXT) uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		$(SHELL) $(top_srcdir)/bench/hostile.sh $(BENCH_HOSTILE_ARGS)

# vmmem: the heap (mallinfo2, read through SIGUSR2) and RSS an idle VM
# costs: N simulated VMs (default 1,000) against the same server with none,
# medians of N runs; goals <= 4 KiB of heap per VM, <= 8 MB RSS.
# Run: make bench-vmmem [BENCH_VMMEM_ARGS="--runs 5 --check"]
# bench/rssfloor: the libraries' floor under that RSS (glib, gio and
# json-glib linked, a main loop waiting), run beside the servers.
EXTRA_DIST += bench/vmmem.sh
noinst_PROGRAMS += bench/rssfloor
bench_rssfloor_SOURCES = bench/rssfloor.c
bench_rssfloor_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
bench_rssfloor_LDADD = $(JSON_GLIB_LIBS) $(GLIB_LIBS)
BENCH_VMMEM_ARGS =
.PHONY: bench-vmmem
bench-vmmem: ddmon$(EXEEXT) ddmon-simvm$(EXEEXT) bench/rssfloor$(EXEEXT) uninstalled-plugins
	DDM_TOP_BUILDDIR=$(abs_top_builddir) DDM_TOP_SRCDIR=$(abs_top_srcdir) \
		bash $(top_srcdir)/bench/vmmem.sh $(BENCH_VMMEM_ARGS)
# end vmmem
