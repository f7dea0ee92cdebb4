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
# and the UI as a module that only `ddmon watch` on a terminal maps.
if ENABLE_TESTS
TESTS += tests/integration/tui-tmux.sh tests/integration/tui-module.sh
endif
EXTRA_DIST += tests/integration/tui-tmux.sh tests/integration/tui-module.sh
