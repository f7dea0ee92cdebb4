# SPDX-License-Identifier: Apache-2.0
# tests/unit/tui/: the terminal UI's model (tui/model.h) without a terminal:
# keys, sorting, filtering, tabs from views, highlight-on-change, the block
# map. tests/integration/tui-tmux.sh drives the real UI in tmux.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/tui/test-tui-model
TESTS += tests/unit/tui/test-tui-model
endif
tests_unit_tui_test_tui_model_SOURCES = tests/unit/tui/test-tui-model.c
tests_unit_tui_test_tui_model_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_tui_test_tui_model_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_tui_test_tui_model_LDADD = tui/libddmtui.la core/libddmcore.la $(CMOCKA_LIBS)

# The real UI in tmux against ddmon-simvm (skipped without tmux or ncurses),
# its t on a VM that cannot sample, and the UI as a module that only
# `ddmon watch` on a terminal maps.
if ENABLE_TESTS
TESTS += tests/integration/tui-tmux.sh tests/integration/tui-trace-fallback.sh \
	tests/integration/tui-module.sh
endif
EXTRA_DIST += tests/integration/tui-tmux.sh tests/integration/tui-trace-fallback.sh \
	tests/integration/tui-module.sh

# ddm_cli_tui_module_load_from() (cli/tui_module.c): the table checks
# (version, size, package version, build token, NULL entries, NULL table,
# no symbol), each on a fixture module built from tui-module-fixture.c.
if HAVE_NCURSES
DDM_TUI_MODULE_FIXTURES = \
	tests/unit/tui/tuimod-good.la \
	tests/unit/tui/tuimod-version.la \
	tests/unit/tui/tuimod-size.la \
	tests/unit/tui/tuimod-package.la \
	tests/unit/tui/tuimod-token.la \
	tests/unit/tui/tuimod-null-entry.la \
	tests/unit/tui/tuimod-null-table.la \
	tests/unit/tui/tuimod-no-symbol.la
check_LTLIBRARIES += $(DDM_TUI_MODULE_FIXTURES)
DDM_TUI_MODULE_FIXTURE_LDFLAGS = -module -rpath /nowhere -avoid-version -shared $(SAN_LDFLAGS)
DDM_TUI_MODULE_FIXTURE_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
DDM_TUI_MODULE_FIXTURE_CFLAGS = $(core_libddmcore_la_CFLAGS)
tests_unit_tui_tuimod_good_la_SOURCES = tests/unit/tui/tui-module-fixture.c tests/harness/module-fixture.h
tests_unit_tui_tuimod_good_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_GOOD
tests_unit_tui_tuimod_good_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_good_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_version_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_version_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_VERSION
tests_unit_tui_tuimod_version_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_version_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_size_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_size_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_SIZE
tests_unit_tui_tuimod_size_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_size_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_package_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_package_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_PACKAGE
tests_unit_tui_tuimod_package_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_package_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_token_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_token_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_TOKEN
tests_unit_tui_tuimod_token_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_token_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_null_entry_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_null_entry_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NULL_ENTRY
tests_unit_tui_tuimod_null_entry_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_null_entry_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_null_table_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_null_table_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NULL_TABLE
tests_unit_tui_tuimod_null_table_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_null_table_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
tests_unit_tui_tuimod_no_symbol_la_SOURCES = tests/unit/tui/tui-module-fixture.c
tests_unit_tui_tuimod_no_symbol_la_CPPFLAGS = $(DDM_TUI_MODULE_FIXTURE_CPPFLAGS) -DFIXTURE_KIND=FIXTURE_NO_SYMBOL
tests_unit_tui_tuimod_no_symbol_la_CFLAGS = $(DDM_TUI_MODULE_FIXTURE_CFLAGS)
tests_unit_tui_tuimod_no_symbol_la_LDFLAGS = $(DDM_TUI_MODULE_FIXTURE_LDFLAGS)
if ENABLE_TESTS
check_PROGRAMS += tests/unit/tui/test-tui-module
TESTS += tests/unit/tui/test-tui-module
endif
tests_unit_tui_test_tui_module_SOURCES = tests/unit/tui/test-tui-module.c
tests_unit_tui_test_tui_module_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_tui_test_tui_module_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_tui_test_tui_module_LDADD = tests/harness/libddmtestutil.la cli/libddmcli.la \
	server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS) $(DLOPEN_LIBS)
tests_unit_tui_test_tui_module_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=ddm_loader_module_symbol
EXTRA_tests_unit_tui_test_tui_module_DEPENDENCIES = $(DDM_TUI_MODULE_FIXTURES)
endif
