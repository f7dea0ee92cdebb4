# SPDX-License-Identifier: Apache-2.0
# tests/unit/plugins/: the standard plugins. Each test program compiles the
# plugin's .c files with the fake host (DDM_FAKEHOST_* in tests/local.mk);
# test-segdecode exercises the pure run-length decoder alone (and
# test-segdecode-scalar without its SSE2 fold), test-partfile
# the FILE.part handling of plugins/common.

PLUGINS_HEAP_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(DDM_PLUGIN_INCLUDES) -I$(top_srcdir)
PLUGINS_HEAP_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-segdecode
TESTS += tests/unit/plugins/test-segdecode
endif
tests_unit_plugins_test_segdecode_SOURCES = tests/unit/plugins/test-segdecode.c \
	tests/unit/plugins/segdecode_ref.h
tests_unit_plugins_test_segdecode_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS)
tests_unit_plugins_test_segdecode_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS)
tests_unit_plugins_test_segdecode_LDADD = $(DDM_SEGMENTS_LIBS) $(CMOCKA_LIBS)
# The same tests on the fold's portable loops (segdecode.c built again
# with -DSEG_FOLD_SCALAR), so that the path other CPUs take is checked too.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-segdecode-scalar
TESTS += tests/unit/plugins/test-segdecode-scalar
endif
tests_unit_plugins_test_segdecode_scalar_SOURCES = $(tests_unit_plugins_test_segdecode_SOURCES) \
	plugins/common/segdecode.c plugins/common/segcollect.c
tests_unit_plugins_test_segdecode_scalar_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS) -DSEG_FOLD_SCALAR
tests_unit_plugins_test_segdecode_scalar_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS)
tests_unit_plugins_test_segdecode_scalar_LDADD = $(CMOCKA_LIBS)

# FILE.part handling alone (plugins/common/partfile.c): a device, FIFO or
# symlink at FILE or FILE.part, two writers of one part, a stale part.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-partfile
TESTS += tests/unit/plugins/test-partfile
endif
tests_unit_plugins_test_partfile_SOURCES = tests/unit/plugins/test-partfile.c \
	tests/harness/rm-tree.c tests/harness/rm-tree.h
tests_unit_plugins_test_partfile_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS)
tests_unit_plugins_test_partfile_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS)
tests_unit_plugins_test_partfile_LDADD = $(DDM_PARTFILE_LIBS) $(CMOCKA_LIBS)

# profile: the .trace decoder alone (plugins/profile/trace_decode.c).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-trace-decode
TESTS += tests/unit/plugins/test-trace-decode
endif
tests_unit_plugins_test_trace_decode_SOURCES = tests/unit/plugins/test-trace-decode.c \
	plugins/profile/trace_decode.c plugins/profile/trace_decode.h plugins/common/numparse.c
tests_unit_plugins_test_trace_decode_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_plugins_test_trace_decode_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_plugins_test_trace_decode_LDADD = $(CMOCKA_LIBS)

# The profile plugin on the test kit: ready-time MPRQ, a streamed trace, a
# refused start, a stop with no trace, truncation, Ctrl-C, MPRS/MPRE, usage,
# trace-summary, the server stopping. DDM_ABI_MINOR_REQUIRED=7: it loads on
# a 1.7 core too (no stopping hook there), which the tests check.
if ENABLE_TESTS
if BUILD_PLUGIN_PROFILE
check_PROGRAMS += tests/unit/plugins/test-plugin-profile
TESTS += tests/unit/plugins/test-plugin-profile
endif
endif
tests_unit_plugins_test_plugin_profile_SOURCES = tests/unit/plugins/test-plugin-profile.c \
	tests/harness/plugin-fixture.c tests/harness/plugin-fixture.h \
	tests/harness/rm-tree.c tests/harness/rm-tree.h \
	$(PROFILE_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_profile_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir) \
	-I$(top_builddir) -DDDM_ABI_MINOR_REQUIRED=7
tests_unit_plugins_test_plugin_profile_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_profile_LDADD = $(DDM_PARTFILE_LIBS) $(DDM_FAKEHOST_LDADD)

# vminfo and threads.
if ENABLE_TESTS
if BUILD_PLUGIN_VMINFO
check_PROGRAMS += tests/unit/plugins/test-plugin-vminfo
TESTS += tests/unit/plugins/test-plugin-vminfo
endif
if BUILD_PLUGIN_THREADS
check_PROGRAMS += tests/unit/plugins/test-plugin-threads
TESTS += tests/unit/plugins/test-plugin-threads
endif
endif
tests_unit_plugins_test_plugin_vminfo_SOURCES = tests/unit/plugins/test-plugin-vminfo.c \
	plugins/vminfo/vminfo.c plugins/vminfo/vminfo.h plugins/vminfo/vminfo-parse.c \
	plugins/vminfo/vminfo-commands.c
# Built for cores from 1.5 on (DDM_ABI_MINOR_REQUIRED), so the tests reach the
# plugin's path for a core without vm_view_declare (fake_host_set_abi_minor 5).
tests_unit_plugins_test_plugin_vminfo_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)/plugins/vminfo -DDDM_ABI_MINOR_REQUIRED=5
tests_unit_plugins_test_plugin_vminfo_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_vminfo_LDADD = $(DDM_FAKEHOST_LDADD)

tests_unit_plugins_test_plugin_threads_SOURCES = tests/unit/plugins/test-plugin-threads.c \
	tests/unit/plugins/refusing-host.h $(THREADS_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_threads_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)/plugins/threads
tests_unit_plugins_test_plugin_threads_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_threads_LDADD = $(DDM_FAKEHOST_LDADD)

# heap: its sources (plugins/heap/local.mk) and the segments library.

if ENABLE_TESTS
if BUILD_PLUGIN_HEAP
check_PROGRAMS += tests/unit/plugins/test-plugin-heap
TESTS += tests/unit/plugins/test-plugin-heap
endif
endif
tests_unit_plugins_test_plugin_heap_SOURCES = tests/unit/plugins/test-plugin-heap.c \
	tests/unit/plugins/refusing-host.h $(HEAP_PLUGIN_CORE_SOURCES)
# DDM_ABI_MINOR_REQUIRED=5: the path for a 1.5 core is tested too (see vminfo's).
tests_unit_plugins_test_plugin_heap_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir) -DDDM_ABI_MINOR_REQUIRED=5
tests_unit_plugins_test_plugin_heap_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_heap_LDADD = $(DDM_SEGMENTS_LIBS) $(DDM_LAZYVIEWS_LIBS) $(DDM_PARTFILE_LIBS) \
	$(DDM_FAKEHOST_LDADD)
if HAVE_LIBPNG
tests_unit_plugins_test_plugin_heap_CFLAGS += $(LIBPNG_CFLAGS)
tests_unit_plugins_test_plugin_heap_LDADD += $(DDM_PNGLIB_LIBS) $(LIBPNG_LIBS)
endif

# nativeheap: its sources (plugins/nativeheap/local.mk) and the segments library.

if ENABLE_TESTS
if BUILD_PLUGIN_NATIVEHEAP
check_PROGRAMS += tests/unit/plugins/test-plugin-nativeheap
TESTS += tests/unit/plugins/test-plugin-nativeheap
endif
endif
tests_unit_plugins_test_plugin_nativeheap_SOURCES = tests/unit/plugins/test-plugin-nativeheap.c \
	tests/unit/plugins/refusing-host.h $(NATIVEHEAP_PLUGIN_SOURCES)
# DDM_ABI_MINOR_REQUIRED=5: the path for a 1.5 core is tested too (see vminfo's).
tests_unit_plugins_test_plugin_nativeheap_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir) -DDDM_ABI_MINOR_REQUIRED=5
tests_unit_plugins_test_plugin_nativeheap_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_nativeheap_LDADD = $(DDM_SEGMENTS_LIBS) $(DDM_LAZYVIEWS_LIBS) $(DDM_FAKEHOST_LDADD)

# The SDK example's own unit test (sdk/examples/hello/test-hello.c, run out
# of tree by its Makefile's `check`), here on the in-tree test kit.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-plugin-hello
TESTS += tests/unit/plugins/test-plugin-hello
endif
tests_unit_plugins_test_plugin_hello_SOURCES = sdk/examples/hello/test-hello.c \
	sdk/examples/hello/hello.c
tests_unit_plugins_test_plugin_hello_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS)
tests_unit_plugins_test_plugin_hello_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_hello_LDADD = $(DDM_FAKEHOST_LDADD)

# alloc: the REAL decoder and the plugin (plugins/alloc/local.mk) on the test kit.
if ENABLE_TESTS
if BUILD_PLUGIN_ALLOC
check_PROGRAMS += tests/unit/plugins/test-plugin-alloc
TESTS += tests/unit/plugins/test-plugin-alloc
endif
endif
tests_unit_plugins_test_plugin_alloc_SOURCES = tests/unit/plugins/test-plugin-alloc.c $(ALLOC_PLUGIN_SOURCES)
# DDM_ABI_MINOR_REQUIRED=5: the path for a 1.5 core is tested too (see vminfo's).
tests_unit_plugins_test_plugin_alloc_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir) -DDDM_ABI_MINOR_REQUIRED=5
tests_unit_plugins_test_plugin_alloc_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_alloc_LDADD = $(DDM_LAZYVIEWS_LIBS) $(DDM_FAKEHOST_LDADD)

# jvm: the plugin (plugins/jvm/local.mk) on the test kit, a plain JVM the test answers.
if ENABLE_TESTS
if BUILD_PLUGIN_JVM
check_PROGRAMS += tests/unit/plugins/test-plugin-jvm
TESTS += tests/unit/plugins/test-plugin-jvm
endif
endif
tests_unit_plugins_test_plugin_jvm_SOURCES = tests/unit/plugins/test-plugin-jvm.c \
	tests/unit/plugins/refusing-host.h $(JVM_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_jvm_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)
tests_unit_plugins_test_plugin_jvm_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_unit_plugins_test_plugin_jvm_LDADD = $(DDM_FAKEHOST_LDADD)

# hprof: the streaming checker and converter (plugins/hprof/hprof_stream.c),
# compiled in directly, no host needed. hprof-write-sample and hprof-convert
# are the sample writer and the file driver that
# tests/integration/hprof-conv-compare.sh runs against the real hprof-conv.
HPROF_STREAM_SOURCES = plugins/hprof/hprof_stream.c plugins/hprof/hprof_stream.h \
	plugins/hprof/hprof_format.h
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-hprof-stream tests/unit/plugins/hprof-write-sample \
	tests/unit/plugins/hprof-convert
TESTS += tests/unit/plugins/test-hprof-stream
endif
tests_unit_plugins_test_hprof_stream_SOURCES = tests/unit/plugins/test-hprof-stream.c $(HPROF_STREAM_SOURCES)
tests_unit_plugins_test_hprof_stream_CPPFLAGS = $(AM_CPPFLAGS)
tests_unit_plugins_test_hprof_stream_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_plugins_test_hprof_stream_LDADD = $(CMOCKA_LIBS)
tests_unit_plugins_hprof_write_sample_SOURCES = tests/unit/plugins/hprof-write-sample.c \
	plugins/hprof/hprof_format.h
tests_unit_plugins_hprof_convert_SOURCES = tests/unit/plugins/hprof-convert.c $(HPROF_STREAM_SOURCES)

# The hprof plugin on the test kit: the command, the HPDS path in every
# order the wire allows, failures that leave no file, HPDU, --out-dir.
if ENABLE_TESTS
if BUILD_PLUGIN_HPROF
check_PROGRAMS += tests/unit/plugins/test-plugin-hprof
TESTS += tests/unit/plugins/test-plugin-hprof
endif
endif
tests_unit_plugins_test_plugin_hprof_SOURCES = tests/unit/plugins/test-plugin-hprof.c \
	tests/harness/plugin-fixture.c tests/harness/plugin-fixture.h \
	tests/harness/rm-tree.c tests/harness/rm-tree.h \
	$(HPROF_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_hprof_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir) \
	-I$(top_builddir)
tests_unit_plugins_test_plugin_hprof_CFLAGS = $(DDM_FAKEHOST_CFLAGS) $(LIBCRYPTO_CFLAGS) $(GLIB_CFLAGS)
tests_unit_plugins_test_plugin_hprof_LDADD = $(DDM_PARTFILE_LIBS) $(DDM_FAKEHOST_LDADD) $(GLIB_LIBS) \
	$(DLOPEN_LIBS)

# test-jvm-parse: the jvm plugin's JDWP reply decoders alone (pure).
if ENABLE_TESTS
if BUILD_PLUGIN_JVM
check_PROGRAMS += tests/unit/plugins/test-jvm-parse
TESTS += tests/unit/plugins/test-jvm-parse
endif
endif
tests_unit_plugins_test_jvm_parse_SOURCES = tests/unit/plugins/test-jvm-parse.c plugins/jvm/jvm-parse.c
tests_unit_plugins_test_jvm_parse_CPPFLAGS = $(DDM_PLUGIN_INCLUDES) -I$(top_srcdir)
tests_unit_plugins_test_jvm_parse_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_plugins_test_jvm_parse_LDADD = $(CMOCKA_LIBS)

# libpng that cannot be loaded at run time (plugins/common/pnglib.c with a
# soname that does not exist; this program links no libpng): heap's bitmap
# and viewdebug's capture check.
if ENABLE_TESTS
if HAVE_LIBPNG
check_PROGRAMS += tests/unit/plugins/test-pnglib-missing
TESTS += tests/unit/plugins/test-pnglib-missing
endif
endif
tests_unit_plugins_test_pnglib_missing_SOURCES = tests/unit/plugins/test-pnglib-missing.c \
	plugins/common/pnglib.c plugins/common/pnglib.h \
	plugins/viewdebug/pngcheck.c plugins/viewdebug/pngcheck.h \
	plugins/heap/bitmap.c plugins/heap/bitmap.h plugins/heap/bitmap_png.c plugins/heap/bitmap_png.h
tests_unit_plugins_test_pnglib_missing_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS) \
	'-DDDM_PNG_SONAME="libddmon-test-no-png.so.0"'
tests_unit_plugins_test_pnglib_missing_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS) $(LIBPNG_CFLAGS)
tests_unit_plugins_test_pnglib_missing_LDADD = $(DDM_SEGMENTS_LIBS) $(DDM_PARTFILE_LIBS) $(CMOCKA_LIBS) \
	$(DLOPEN_LIBS)

# viewdebug: the pure decoders alone, and the plugin on the test kit.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/plugins/test-vudecode
TESTS += tests/unit/plugins/test-vudecode
endif
tests_unit_plugins_test_vudecode_SOURCES = tests/unit/plugins/test-vudecode.c \
	plugins/viewdebug/vudecode.c plugins/viewdebug/vudecode.h
tests_unit_plugins_test_vudecode_CPPFLAGS = $(PLUGINS_HEAP_TEST_CPPFLAGS)
tests_unit_plugins_test_vudecode_CFLAGS = $(PLUGINS_HEAP_TEST_CFLAGS)
tests_unit_plugins_test_vudecode_LDADD = $(CMOCKA_LIBS)

if ENABLE_TESTS
if BUILD_PLUGIN_VIEWDEBUG
check_PROGRAMS += tests/unit/plugins/test-plugin-viewdebug
TESTS += tests/unit/plugins/test-plugin-viewdebug
endif
endif
tests_unit_plugins_test_plugin_viewdebug_SOURCES = tests/unit/plugins/test-plugin-viewdebug.c \
	tests/harness/rm-tree.c tests/harness/rm-tree.h $(VIEWDEBUG_PLUGIN_SOURCES)
tests_unit_plugins_test_plugin_viewdebug_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS) -I$(top_srcdir)/plugins/viewdebug \
	-I$(top_srcdir)/tests/harness
# json-glib reads the dump's JSON back (an independent reader).
tests_unit_plugins_test_plugin_viewdebug_CFLAGS = $(DDM_FAKEHOST_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS)
tests_unit_plugins_test_plugin_viewdebug_LDADD = $(DDM_PARTFILE_LIBS) $(DDM_FAKEHOST_LDADD) $(JSON_GLIB_LIBS) $(GLIB_LIBS)
if HAVE_LIBPNG
tests_unit_plugins_test_plugin_viewdebug_CFLAGS += $(LIBPNG_CFLAGS)
tests_unit_plugins_test_plugin_viewdebug_LDADD += $(DDM_PNGLIB_LIBS) $(LIBPNG_LIBS)
endif
