# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/: a fuzz target for every decoder (fuzz-NAME.c, exporting only
# LLVMFuzzerTestOneInput), the replay driver (replay.c) that `make check`
# links each target with, the seed corpora (corpus/NAME/) and, with
# configure --enable-fuzzing (clang), libFuzzer builds of the same targets
# (libfuzzer-NAME) and `make fuzz`. doc/fuzzing.md says how to use them.
#
# The targets: one entry each, the program and the sources it compiles in
# (its own file first; decoders are compiled in, not linked from their
# libraries, so that a fuzzing build instruments them). To add a target,
# add its two lines here and its seeds under corpus/NAME/ (distributed
# with the whole corpus directory).
FUZZ_TARGETS =
FUZZ_TARGETS += tests/fuzz/fuzz-jdwp
tests_fuzz_fuzz_jdwp_SOURCES = tests/fuzz/fuzz-jdwp.c core/wire/jdwp.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-ddm
tests_fuzz_fuzz_ddm_SOURCES = tests/fuzz/fuzz-ddm.c core/wire/ddm.c core/wire/jdwp.c core/wire/zlibchunk.c core/wire/helo.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-zlib
tests_fuzz_fuzz_zlib_SOURCES = tests/fuzz/fuzz-zlib.c core/wire/zlibchunk.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-helo
tests_fuzz_fuzz_helo_SOURCES = tests/fuzz/fuzz-helo.c core/wire/helo.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-adb
tests_fuzz_fuzz_adb_SOURCES = tests/fuzz/fuzz-adb.c core/wire/adb_proto.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-adb-app
tests_fuzz_fuzz_adb_app_SOURCES = tests/fuzz/fuzz-adb-app.c core/wire/adb_proto.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-ctl
tests_fuzz_fuzz_ctl_SOURCES = tests/fuzz/fuzz-ctl.c core/wire/ctlproto.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-view-json
tests_fuzz_fuzz_view_json_SOURCES = tests/fuzz/fuzz-view-json.c core/wire/ctlproto.c core/views/render.c core/views/json_blob.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-jq-text
tests_fuzz_fuzz_jq_text_SOURCES = tests/fuzz/fuzz-jq-text.c tests/fuzz/json_number.h core/views/jq_text.c cli/jsonout.c \
	core/views/view_jq.c core/views/views.c core/views/view_content.c core/views/view_build.c \
	core/views/view_json.c core/views/json_blob.c core/wire/ctlproto.c core/wire/seeded_hash.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-segdecode
tests_fuzz_fuzz_segdecode_SOURCES = tests/fuzz/fuzz-segdecode.c plugins/common/segdecode.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-segcollect
tests_fuzz_fuzz_segcollect_SOURCES = tests/fuzz/fuzz-segcollect.c plugins/common/segcollect.c plugins/common/segdecode.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-alloc-real
tests_fuzz_fuzz_alloc_real_SOURCES = tests/fuzz/fuzz-alloc-real.c plugins/alloc/real.c plugins/alloc/group.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-hpif
tests_fuzz_fuzz_hpif_SOURCES = tests/fuzz/fuzz-hpif.c plugins/heap/heapinfo.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-nhgt
tests_fuzz_fuzz_nhgt_SOURCES = tests/fuzz/fuzz-nhgt.c plugins/nativeheap/nhgt.c plugins/nativeheap/nhmaps.c \
	plugins/nativeheap/nh_group.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-nhmaps
tests_fuzz_fuzz_nhmaps_SOURCES = tests/fuzz/fuzz-nhmaps.c plugins/nativeheap/nhmaps.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-thst
tests_fuzz_fuzz_thst_SOURCES = tests/fuzz/fuzz-thst.c plugins/threads/thst.c plugins/threads/thread-list.c plugins/threads/states.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-thread-chunks
tests_fuzz_fuzz_thread_chunks_SOURCES = tests/fuzz/fuzz-thread-chunks.c $(THREADS_PLUGIN_SOURCES) $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-jvm
tests_fuzz_fuzz_jvm_SOURCES = tests/fuzz/fuzz-jvm.c plugins/jvm/jvm-parse.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-stkl
tests_fuzz_fuzz_stkl_SOURCES = tests/fuzz/fuzz-stkl.c plugins/threads/stkl.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-vminfo
tests_fuzz_fuzz_vminfo_SOURCES = tests/fuzz/fuzz-vminfo.c plugins/vminfo/vminfo-parse.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-hprof-stream
tests_fuzz_fuzz_hprof_stream_SOURCES = tests/fuzz/fuzz-hprof-stream.c plugins/hprof/hprof_stream.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-vulw
tests_fuzz_fuzz_vulw_SOURCES = tests/fuzz/fuzz-vulw.c plugins/viewdebug/vudecode.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-vurt
tests_fuzz_fuzz_vurt_SOURCES = tests/fuzz/fuzz-vurt.c plugins/viewdebug/vudecode.c plugins/viewdebug/vujson.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-vupng
tests_fuzz_fuzz_vupng_SOURCES = tests/fuzz/fuzz-vupng.c plugins/viewdebug/pngcheck.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-portmap
tests_fuzz_fuzz_portmap_SOURCES = tests/fuzz/fuzz-portmap.c core/relay/portmap.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-relay
tests_fuzz_fuzz_relay_SOURCES = tests/fuzz/fuzz-relay.c core/wire/jdwp.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-elfdesc
tests_fuzz_fuzz_elfdesc_SOURCES = tests/fuzz/fuzz-elfdesc.c core/pluginhost/elfdesc.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-loader-elf
tests_fuzz_fuzz_loader_elf_SOURCES = tests/fuzz/fuzz-loader-elf.c core/pluginhost/loader_elf.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-trace
tests_fuzz_fuzz_trace_SOURCES = tests/fuzz/fuzz-trace.c plugins/profile/trace_decode.c plugins/common/numparse.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-metrics-text
tests_fuzz_fuzz_metrics_text_SOURCES = tests/fuzz/fuzz-metrics-text.c web/metrics_text.c \
	core/views/text_cut.c $(FUZZ_MAIN)
FUZZ_TARGETS += tests/fuzz/fuzz-web-rules
tests_fuzz_fuzz_web_rules_SOURCES = tests/fuzz/fuzz-web-rules.c web/auth.c web/paths.c core/config/listen_addr.c $(FUZZ_MAIN)

# What every target shares. The flags and libraries are set once for all of
# them (GNU make target-specific variables, inherited by their objects), so
# an entry above needs no per-target flags. Objects without per-target
# flags are shared between targets that compile the same decoder.
FUZZ_MAIN = tests/fuzz/replay.c tests/fuzz/fuzz.h
FUZZ_CPPFLAGS = -DG_LOG_DOMAIN=\"ddmon-fuzz\" \
	-DDDM_FUZZ_CORPUS_DIR=\"$(abs_top_srcdir)/tests/fuzz/corpus\"
FUZZ_CFLAGS = $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(ZLIB_CFLAGS) $(FUZZING_CFLAGS)
FUZZ_LIBS = $(JSON_GLIB_LIBS) $(GLIB_LIBS) $(ZLIB_LIBS) $(LIBM)
if ENABLE_TESTS
check_PROGRAMS += $(FUZZ_TARGETS)
TESTS += $(FUZZ_TARGETS)
endif
FUZZ_EXES = $(FUZZ_TARGETS:=$(EXEEXT))
$(FUZZ_EXES): AM_CPPFLAGS += $(FUZZ_CPPFLAGS)
$(FUZZ_EXES): AM_CFLAGS += $(FUZZ_CFLAGS)
$(FUZZ_EXES): AM_LDFLAGS += $(FUZZING_LDFLAGS)
$(FUZZ_EXES): LDADD = $(FUZZ_LIBS)

# configure --enable-fuzzing: the objects above are built with libFuzzer's
# instrumentation (FUZZING_CFLAGS), and each target is linked a second time,
# without the replay driver (replay.o, or TARGET-replay.o for a target with
# its own flags), against libFuzzer: tests/fuzz/libfuzzer-NAME.
# `make fuzz` runs each for FUZZ_SECONDS on a scratch copy of its corpus.
FUZZ_LIBFUZZER = $(FUZZ_TARGETS:tests/fuzz/fuzz-%=tests/fuzz/libfuzzer-%$(EXEEXT))
FUZZ_SECONDS = 60
CLEANFILES += $(FUZZ_LIBFUZZER)
if ENABLE_FUZZING
FUZZ_ALL = $(FUZZ_LIBFUZZER)
endif
all-local: $(FUZZ_ALL)
tests/fuzz/libfuzzer-%$(EXEEXT): tests/fuzz/fuzz-%$(EXEEXT)
	$(AM_V_CCLD)$(LINK) -fsanitize=fuzzer $(FUZZING_LDFLAGS) \
	  $(filter-out %replay.$(OBJEXT),$(tests_fuzz_fuzz_$(subst -,_,$*)_OBJECTS)) $(FUZZ_LIBS)
fuzz: $(FUZZ_LIBFUZZER)
	@set -e; for f in $(FUZZ_LIBFUZZER); do \
	  name=$$(basename $$f $(EXEEXT)); name=$${name#libfuzzer-}; \
	  work=tests/fuzz/work/$$name; mkdir -p $$work/corpus $$work/artifacts; \
	  cp -n $(srcdir)/tests/fuzz/corpus/$$name/* $$work/corpus/ 2>/dev/null || true; \
	  echo "* fuzzing $$name for $(FUZZ_SECONDS) s (crashes: $$work/artifacts/)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$$work/artifacts/ $$work/corpus > $$work/log 2>&1 \
	    || { tail -n 40 $$work/log; exit 1; }; \
	  tail -n 12 $$work/log | grep -E '^stat::(number_of_executed_units|new_units_added)' || true; \
	done
clean-local: clean-fuzz-work
clean-fuzz-work:
	-rm -rf tests/fuzz/work
.PHONY: fuzz clean-fuzz-work

# `make fuzz-smoke`: every libFuzzer target for FUZZ_SMOKE_SECONDS on a
# scratch copy of its seeds, one automake result file per target
# (FUZZ_SMOKE_TRS_DIR/libfuzzer-NAME.trs and .log), so that tools/test-summary
# counts them with the suite's (tools/dev test runs it after `make check`
# when clang is installed). Fails if any target crashed. A fixed seed and a
# fixed number of runs make it the same test on every CI run (a crash it
# finds is found again, and a green run stays green); `make fuzz` is the
# random, open-ended search. FUZZ_SMOKE_SECONDS only caps a slow target.
FUZZ_SMOKE_SECONDS = 30
FUZZ_SMOKE_RUNS = 4000
FUZZ_SMOKE_TRS_DIR = tests/fuzz/smoke
if ENABLE_FUZZING
fuzz-smoke: $(FUZZ_LIBFUZZER)
	@mkdir -p $(FUZZ_SMOKE_TRS_DIR); failed=0; \
	for f in $(FUZZ_LIBFUZZER); do \
	  name=$$(basename $$f $(EXEEXT)); name=$${name#libfuzzer-}; \
	  work=tests/fuzz/work/smoke-$$name; rm -rf $$work; mkdir -p $$work/corpus $$work/artifacts; \
	  cp $(srcdir)/tests/fuzz/corpus/$$name/* $$work/corpus/ 2>/dev/null || true; \
	  trs=$(FUZZ_SMOKE_TRS_DIR)/libfuzzer-$$name.trs; \
	  if $$f -seed=1 -runs=$(FUZZ_SMOKE_RUNS) -max_total_time=$(FUZZ_SMOKE_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	      -print_final_stats=1 -artifact_prefix=$$work/artifacts/ $$work/corpus \
	      > $${trs%.trs}.log 2>&1; then res=PASS; \
	  else res=FAIL; failed=$$((failed + 1)); tail -n 30 $${trs%.trs}.log; fi; \
	  printf ':test-result: %s libfuzzer-%s (%s s)\n:global-test-result: %s\n:recheck: no\n:copy-in-global-log: no\n' \
	    $$res $$name "$(FUZZ_SMOKE_RUNS) runs, seed 1; at most $(FUZZ_SMOKE_SECONDS)" $$res > $$trs; \
	  echo "$$res: libfuzzer-$$name"; \
	done; \
	test $$failed = 0
else
fuzz-smoke:
	@echo "fuzz-smoke: the libFuzzer targets need configure CC=clang --enable-fuzzing" >&2; exit 1
endif
clean-local: clean-fuzz-smoke
clean-fuzz-smoke:
	-rm -rf $(FUZZ_SMOKE_TRS_DIR)
.PHONY: fuzz-smoke clean-fuzz-smoke

# The seed corpora, one directory per target.
EXTRA_DIST += tests/fuzz/corpus
EXTRA_DIST += tests/fuzz/make-seeds.py

# fuzz-vupng reads PNG headers with libpng when configure found it.
tests_fuzz_fuzz_vupng_CPPFLAGS = $(AM_CPPFLAGS) $(FUZZ_CPPFLAGS) $(DDM_PLUGIN_INCLUDES)
tests_fuzz_fuzz_vupng_LDADD = $(FUZZ_LIBS)
if HAVE_LIBPNG
tests_fuzz_fuzz_vupng_CFLAGS = $(AM_CFLAGS) $(LIBPNG_CFLAGS)
tests_fuzz_fuzz_vupng_LDADD += $(DDM_PNGLIB_LIBS)
tests/fuzz/libfuzzer-vupng$(EXEEXT): FUZZ_LIBS += $(DDM_PNGLIB_LIBS)
endif

# fuzz-thread-chunks drives the whole threads plugin through the SDK's fake
# host (the test kit, which reports through cmocka).
tests_fuzz_fuzz_thread_chunks_CPPFLAGS = $(AM_CPPFLAGS) $(FUZZ_CPPFLAGS) $(DDM_FAKEHOST_CPPFLAGS)
tests_fuzz_fuzz_thread_chunks_LDADD = $(DDM_FAKEHOST_LDADD) $(FUZZ_LIBS)
tests/fuzz/libfuzzer-thread-chunks$(EXEEXT): FUZZ_LIBS += $(DDM_FAKEHOST_LDADD)
