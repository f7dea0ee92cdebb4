# SPDX-License-Identifier: Apache-2.0
# tests/plugins/: test-only plugins, each a real .so in tests/plugins/.libs
# (DDM_TEST_PLUGIN_DIR) that tests/unit/pluginhost and the integration tests load.
if ENABLE_TESTS
DDM_TEST_PLUGINS = \
	tests/plugins/good.la tests/plugins/bad-magic.la tests/plugins/abi-other-major.la \
	tests/plugins/abi-newer-minor.la tests/plugins/no-desc.la tests/plugins/init-fails.la \
	tests/plugins/dup-chunk.la tests/plugins/name-mismatch.la tests/plugins/hello.la \
	tests/plugins/host-has.la tests/plugins/ctor-marker.la tests/plugins/json-doc.la \
	tests/plugins/core-ref.la
check_LTLIBRARIES += $(DDM_TEST_PLUGINS)
DDM_TEST_PLUGIN_LDFLAGS = -module -rpath /nowhere -avoid-version -shared $(SAN_LDFLAGS)

tests_plugins_good_la_SOURCES = tests/plugins/good.c
tests_plugins_good_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_good_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_bad_magic_la_SOURCES = tests/plugins/bad-magic.c
tests_plugins_bad_magic_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_bad_magic_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_abi_other_major_la_SOURCES = tests/plugins/abi-other-major.c
tests_plugins_abi_other_major_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_abi_other_major_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_abi_newer_minor_la_SOURCES = tests/plugins/abi-newer-minor.c
tests_plugins_abi_newer_minor_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_abi_newer_minor_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_no_desc_la_SOURCES = tests/plugins/no-desc.c
tests_plugins_no_desc_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_no_desc_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_init_fails_la_SOURCES = tests/plugins/init-fails.c
tests_plugins_init_fails_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_init_fails_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_dup_chunk_la_SOURCES = tests/plugins/dup-chunk.c
tests_plugins_dup_chunk_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_dup_chunk_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
tests_plugins_name_mismatch_la_SOURCES = tests/plugins/name-mismatch.c
tests_plugins_name_mismatch_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_name_mismatch_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# A command whose result is a JSON document (tests/integration/json-doc.sh).
tests_plugins_json_doc_la_SOURCES = tests/plugins/json-doc.c
tests_plugins_json_doc_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_json_doc_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# Refers to a core function the ddmon binary exports for the web module:
# refused before dlopen (core/pluginhost/loader_elf.c).
tests_plugins_core_ref_la_SOURCES = tests/plugins/core-ref.c
tests_plugins_core_ref_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_core_ref_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# Its constructor and init leave marker files: --check-plugin runs neither.
tests_plugins_ctor_marker_la_SOURCES = tests/plugins/ctor-marker.c
tests_plugins_ctor_marker_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_ctor_marker_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# Built with this SDK for a 1.0 core (DDM_ABI_MINOR_REQUIRED): DDM_HOST_HAS.
tests_plugins_host_has_la_SOURCES = tests/plugins/host-has.c
tests_plugins_host_has_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_host_has_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# The SDK example, built here too so `make check` runs it against the real core.
tests_plugins_hello_la_SOURCES = sdk/examples/hello/hello.c
tests_plugins_hello_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_hello_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
# Not a plugin: a shared object dlopen refuses (an undefined symbol), for
# ddm_loader_open_module()'s test (tests/unit/pluginhost/test-loader-module.c).
check_LTLIBRARIES += tests/plugins/undefined-sym.la
tests_plugins_undefined_sym_la_SOURCES = tests/plugins/undefined-sym.c
tests_plugins_undefined_sym_la_CPPFLAGS = $(DDM_PLUGIN_INCLUDES)
tests_plugins_undefined_sym_la_LDFLAGS = $(DDM_TEST_PLUGIN_LDFLAGS)
endif ENABLE_TESTS
