# SPDX-License-Identifier: Apache-2.0
# tests/integration/: TAP scripts that run the real ddmon binary against
# ddmon-simvm, real OpenJDK VMs, real jdb and the real adb. Helpers in
# tests/integration/lib.sh (adb-lib.sh for the adb ones).
EXTRA_DIST += tests/integration/lib.sh tests/integration/viewq.py \
	tests/integration/compare_truth.py tests/integration/fake_adb.py \
	tests/java/Sleeper.java tests/java/JdiStress.java

INTEGRATION_TESTS = \
	tests/integration/snapshot-simvm.sh \
	tests/integration/snapshot-settled.sh \
	tests/integration/snapshot-cap.sh \
	tests/integration/snapshot-first-look.sh \
	tests/integration/threads-counts.sh \
	tests/integration/snapshot-gc.sh \
	tests/integration/snapshot-hprof.sh \
	tests/integration/jvm-nonddm.sh \
	tests/integration/vms-held.sh \
	tests/integration/jvm-threads.sh \
	tests/integration/server-cli.sh \
	tests/integration/server-options.sh \
	tests/integration/startup-bound.sh \
	tests/integration/timeouts.sh \
	tests/integration/server-resident.sh \
	tests/integration/lib-ports.sh \
	tests/integration/lib-keep.sh \
	tests/integration/relay-jvm.sh \
	tests/integration/relay-own-port.sh \
	tests/integration/relay-jdb.sh \
	tests/integration/relay-ports.sh \
	tests/integration/relay-park.sh \
	tests/integration/peer-limits.sh \
	tests/integration/relay-restart.sh \
	tests/integration/ui-faults.sh \
	tests/integration/ui-simvm.sh \
	tests/integration/view-blob.sh \
	tests/integration/ambiguous-name.sh \
	tests/integration/vm-names.sh \
	tests/integration/plugins-simvm.sh \
	tests/integration/heap-first.sh \
	tests/integration/heap-bitmap-late.sh \
	tests/integration/stack-kinds.sh \
	tests/integration/gc-art.sh \
	tests/integration/json-jq.sh \
	tests/integration/vms-json-doc.sh \
	tests/integration/vms-rows-kept.sh \
	tests/integration/vms-json-old-server.sh
if ENABLE_TESTS
TESTS += $(INTEGRATION_TESTS)
endif
EXTRA_DIST += $(INTEGRATION_TESTS)

# ddmon-simvm on its own (executable scripts, shipped as such); its heap
# dumps through a small python client.
if ENABLE_TESTS
dist_check_SCRIPTS += tests/integration/simvm-smoke.sh tests/integration/simvm-modes.sh \
	tests/integration/simvm-hprof.sh
TESTS += tests/integration/simvm-smoke.sh tests/integration/simvm-modes.sh \
	tests/integration/simvm-hprof.sh
endif
EXTRA_DIST += tests/integration/hprof_client.py

# The server and snapshot without VMs.
CLI_INTEGRATION_TESTS = tests/integration/cli-server.sh tests/integration/cli-snapshot.sh \
	tests/integration/cli-watch.sh tests/integration/server-log.sh \
	tests/integration/server-signals.sh
if ENABLE_TESTS
TESTS += $(CLI_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(CLI_INTEGRATION_TESTS)

# Client failures as JSON: each kind from the real binary (no server,
# autostart failure, usage, not found, plugin commands, watch and snapshot);
# the pure helpers are tests/unit/cli/test-ctl-failure.
if ENABLE_TESTS
TESTS += tests/integration/json-errors.sh
endif
EXTRA_DIST += tests/integration/json-errors.sh

# JSON documents (application/json results) through the real server and
# CLI, made by the test plugin json-doc: embedded as "data" with --json, an
# outline as text, refused past the caps or when not JSON.
if ENABLE_TESTS
TESTS += tests/integration/json-doc.sh
endif
EXTRA_DIST += tests/integration/json-doc.sh

# The plugin loader's trust rules through the real ddmon CLI (unsafe
# directory, refused file not shadowing a good one); --plugin-opt warnings
# through the CLI, and ddmon(1) documents every plugin option and command
# the standard plugins have. --check-plugin runs no plugin code (its
# constructor and init leave no marker files).
if ENABLE_TESTS
TESTS += tests/integration/loader-trust.sh tests/integration/plugin-opts.sh \
	tests/integration/check-plugin.sh
endif
EXTRA_DIST += tests/integration/loader-trust.sh tests/integration/plugin-opts.sh \
	tests/integration/check-plugin.sh

# relay simvm tests: the debugger relay against DDM VMs played by ddmon-simvm
# (JDWP through the relay port, DDM kept from the debugger, WAIT, DBGD
# acknowledged vs ignored).
if ENABLE_TESTS
TESTS += tests/integration/relay-simvm.sh
endif
EXTRA_DIST += tests/integration/relay-simvm.sh

# relay backpressure: a debugger or a VM that stops reading (a real JVM's
# event storm; tests/integration/fake_jvm.py, a VM slow to read).
if ENABLE_TESTS
TESTS += tests/integration/relay-backpressure.sh
endif
EXTRA_DIST += tests/integration/relay-backpressure.sh tests/integration/fake_jvm.py

# relay cut-through: a debugger's long commands go to the VM as they arrive
# (through a read budget smaller than one of them), and one cut short.
if ENABLE_TESTS
TESTS += tests/integration/relay-cutthrough.sh
endif
EXTRA_DIST += tests/integration/relay-cutthrough.sh

# adb: ddmon against a fake adb server (fault injection) and against the real
# adb server with ddmon-simvm's simulated device (skipped without adb).
ADB_INTEGRATION_TESTS = tests/integration/adb-fake.sh tests/integration/adb-real.sh
if ENABLE_TESTS
TESTS += $(ADB_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(ADB_INTEGRATION_TESTS) tests/integration/adb-lib.sh

# adb track-app: the tracking service per device through the real adb server:
# track-app at API 31+ (debuggable/profileable flags), track-jdwp when adbd
# refuses it; and against an inline fake adb server: profileable-only apps,
# track-app cut before its first update, malformed AppProcesses, FAIL, the
# remembered choice.
ADB_TRACKAPP_TESTS = tests/integration/adb-trackapp.sh tests/integration/adb-trackapp-fake.sh
if ENABLE_TESTS
TESTS += $(ADB_TRACKAPP_TESTS)
endif
EXTRA_DIST += $(ADB_TRACKAPP_TESTS)

# jdb simvm: jdb and a JDI program (tests/java/JdiThreads.java) against a
# simulated VM's JDWP object model: directly, through the VM's relay port and
# through the selected-VM port, with the same output every way.
if ENABLE_TESTS
TESTS += tests/integration/jdb-simvm.sh
endif
EXTRA_DIST += tests/integration/jdb-simvm.sh tests/java/JdiThreads.java

# coverage gaps: behaviours that worked by hand but no test covered: adb
# start-server spawned once, as an argv, only when no adb server ever
# answered (a fake adb program; tests/integration/fake_adb.py as the server
# that goes away); `ddmon scan MODES` at run time (local VMs and a simulated
# adb device); a selection by app name that follows the app across restarts.
GAPS_INTEGRATION_TESTS = tests/integration/adb-start-server.sh \
	tests/integration/scan-modes.sh tests/integration/select-follows.sh
if ENABLE_TESTS
TESTS += $(GAPS_INTEGRATION_TESTS)
endif
EXTRA_DIST += $(GAPS_INTEGRATION_TESTS)

# The local scan over every port (1-65535) lists the VMs a slice at a time,
# within a bounded number of descriptors (issue 16); in a network namespace
# of its own (root), else skipped.
if ENABLE_TESTS
TESTS += tests/integration/scan-wide.sh
endif
EXTRA_DIST += tests/integration/scan-wide.sh
# An idle server whose VMs come through adb arms no re-offer timer while
# every listed VM is connected (strace -c against the fake adb server).
if ENABLE_TESTS
TESTS += tests/integration/adb-idle.sh
endif
EXTRA_DIST += tests/integration/adb-idle.sh

# alloc: the allocation tracker plugin against ddmon-simvm (status follows
# start/stop, show --json equals simvm's ground truth, REAE 0 discards).
if ENABLE_TESTS
TESTS += tests/integration/alloc-simvm.sh
endif
EXTRA_DIST += tests/integration/alloc-simvm.sh

# hprof: plugins/hprof/hprof_stream.c against the real hprof-conv (Debian's
# package hprof-conv; skipped without it): the same bytes for sample dumps
# with every Android sub-record, one of a few MiB; Android mode copies.
if ENABLE_TESTS
TESTS += tests/integration/hprof-conv-compare.sh
endif
EXTRA_DIST += tests/integration/hprof-conv-compare.sh

# hprof through the real ddmon and ddmon-simvm: HPDS bytes and sha256,
# hprof-conv, --format=standard vs hprof-conv, HPDU, --out-dir, progress,
# a second dump refused, broken VMs; and a dump past 2 GiB with the server's
# RSS measured from /proc.
if ENABLE_TESTS
TESTS += tests/integration/hprof-simvm.sh tests/integration/hprof-big.sh
endif
EXTRA_DIST += tests/integration/hprof-simvm.sh tests/integration/hprof-big.sh

# profile: method traces through the real ddmon and ddmon-simvm (streamed
# tracing and sampling, single and dual clock, MPRS on the device, MPRQ in
# the VM list, Ctrl-C, a stop that finds nothing, a truncated MPSE, bad
# .trace files), read back by Debian's dmtracedump and compared with the
# simulator's truth; and a 10-second sampling trace with the server's RSS.
# A server that stops (kill-server, SIGTERM, --replace) stops the traces and
# the allocation tracking it started (plugin ABI 1.8 stopping hooks).
if ENABLE_TESTS
TESTS += tests/integration/trace-simvm.sh tests/integration/trace-rss.sh
TESTS += tests/integration/trace-server-stop.sh
# A client that meets a stopping server waits for it, then autostarts.
TESTS += tests/integration/server-stopping.sh
# A first exchange that timed out: its late answer is never the command's.
TESTS += tests/integration/client-late-answer.sh
# A server with every control slot taken is one that runs.
TESTS += tests/integration/server-busy.sh
# A FIFO named like a plugin's file or FILE.part is refused, never waited on.
TESTS += tests/integration/part-fifo.sh
endif
EXTRA_DIST += tests/integration/trace-simvm.sh tests/integration/trace-rss.sh
EXTRA_DIST += tests/integration/trace-server-stop.sh
EXTRA_DIST += tests/integration/server-stopping.sh
EXTRA_DIST += tests/integration/client-late-answer.sh
EXTRA_DIST += tests/integration/server-busy.sh
EXTRA_DIST += tests/integration/part-fifo.sh

# The web dashboard (ddmon server --http): its security rules over plain
# HTTP (web_http.py: token, cookie, Host, Origin, POST-only actions) and the
# pages in headless Chromium (web_dashboard.py over the DevTools protocol;
# the screenshot is kept in test-artifacts/web-dashboard.png), the live
# stream and plugin commands with their downloads (web_commands.py), and
# the API's interest: a GET of a view that does not exist notes none
# (web-interest.sh).
if ENABLE_TESTS
TESTS += tests/integration/web-auth.sh tests/integration/web-dashboard.sh \
	tests/integration/web-commands.sh tests/integration/web-module.sh \
	tests/integration/web-interest.sh
endif
EXTRA_DIST += tests/integration/web-auth.sh tests/integration/web-dashboard.sh \
	tests/integration/web-commands.sh tests/integration/web-module.sh \
	tests/integration/web-interest.sh tests/integration/web_http.py \
	tests/integration/web_dashboard.py tests/integration/web_commands.py \
	tests/integration/cdp_browser.py
# The dashboard's app.js alone (fake stream, no server): what it keeps of
# VMs that left is bounded to the last GONE_KEPT.
if ENABLE_TESTS
TESTS += tests/integration/web-gone-pruned.sh
endif
EXTRA_DIST += tests/integration/web-gone-pruned.sh tests/integration/web_gone_pruned.py
# A web command whose client leaves is cancelled and frees its slot.
if ENABLE_TESTS
TESTS += tests/integration/web-client-gone.sh
endif
EXTRA_DIST += tests/integration/web-client-gone.sh
# Declared views (ABI 1.6) made for the VM asked about only: views --vm,
# the "unknown view" messages, GET /api/vms and /api/vms/KEY.
if ENABLE_TESTS
TESTS += tests/integration/views-made-asked.sh
endif
EXTRA_DIST += tests/integration/views-made-asked.sh
# A heap view taken back and made again shows what the plugin holds.
if ENABLE_TESTS
TESTS += tests/integration/heap-made-again.sh
endif
EXTRA_DIST += tests/integration/heap-made-again.sh
# An idle server with VMs does not wake for the plugins' poll ticks (ABI
# 1.7 DDM_TIMER_SLEEP): strace -c counts its poll calls (issue 16).
if ENABLE_TESTS
TESTS += tests/integration/idle-wakeups.sh
endif
EXTRA_DIST += tests/integration/idle-wakeups.sh

# hostile peers (issue 15): tests/tools/evilvm plays an attack beside a good
# ddmon-simvm VM; each case checks control replies under 1 s, the server's
# peak RSS, the good VM still updating and a log line naming the VM and the
# reason (tests/integration/hostile-lib.sh). hostile-core.sh holds the cases
# of the core's limits (buffers, backoff, silent peers, renames).
# first-look-hung.sh: a VM that greets and then answers nothing delays no
# later `ddmon vms` nor first look at another VM's views.
HOSTILE_TESTS = tests/integration/hostile-plugins.sh tests/integration/hostile-wire.sh \
	tests/integration/hostile-core.sh tests/integration/first-look-hung.sh
if ENABLE_TESTS
TESTS += $(HOSTILE_TESTS)
endif
EXTRA_DIST += $(HOSTILE_TESTS) tests/integration/hostile-lib.sh
# evilvm's `feat N` (hostile-wire.sh's feat-huge): the count and size a JDWP
# client reads, and an N past one JDWP packet refused with a message.
if ENABLE_TESTS
TESTS += tests/integration/evilvm-feat.sh
endif
EXTRA_DIST += tests/integration/evilvm-feat.sh

# GET /metrics (doc/monitoring.md) through the real server's token-free
# --metrics listener against ddmon-simvm: promtool check metrics (Debian's
# prometheus), OpenMetrics read by prometheus_client, heap figures and
# threads by state equal to simvm's ground truth (metrics_q.py), a GC and a
# VM that goes away seen in the series.
if ENABLE_TESTS
TESTS += tests/integration/metrics-simvm.sh
endif
EXTRA_DIST += tests/integration/metrics-simvm.sh tests/integration/metrics_q.py
# The release tarball holds every tracked file (make distdir against git ls-files).
if ENABLE_TESTS
TESTS += tests/integration/dist-complete.sh
endif
EXTRA_DIST += tests/integration/dist-complete.sh
