# SPDX-License-Identifier: Apache-2.0
# tests/unit/cli/: the ddmon client (cli/).

# Client failures as JSON: the pure helpers that make every failing client
# command print one {"ok":false,"error","code","kind"} object
# (tests/integration/json-errors.sh checks the real binary).
check_PROGRAMS += tests/unit/cli/test-ctl-failure
TESTS += tests/unit/cli/test-ctl-failure
tests_unit_cli_test_ctl_failure_SOURCES = tests/unit/cli/test-ctl-failure.c core/wire/ctlproto.c core/wire/ctlproto.h
tests_unit_cli_test_ctl_failure_CPPFLAGS = $(AM_CPPFLAGS) -DG_LOG_DOMAIN=\"ddmon-control\"
tests_unit_cli_test_ctl_failure_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_ctl_failure_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS)

# The command table (cli/commands.c): rows well formed, lookups, and the
# usage text made from it.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/cli/test-commands
TESTS += tests/unit/cli/test-commands
endif
tests_unit_cli_test_commands_SOURCES = tests/unit/cli/test-commands.c
tests_unit_cli_test_commands_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_cli_test_commands_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_commands_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)

# The snapshot's per-VM commands (cli/snapshot_cmds.c: --gc, --hprof) with
# a fake source: who is asked, what keeps the snapshot waiting (a heap dump
# outlasts the cap), the JSON members and the exit status
# (tests/integration/snapshot-gc.sh and snapshot-hprof.sh run the real ones).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/cli/test-snapshot-cmds
TESTS += tests/unit/cli/test-snapshot-cmds
endif
tests_unit_cli_test_snapshot_cmds_SOURCES = tests/unit/cli/test-snapshot-cmds.c
tests_unit_cli_test_snapshot_cmds_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_cli_test_snapshot_cmds_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_snapshot_cmds_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)

# The --json converter (cli/jsonout.c): snake_case keys and collisions,
# every view kind with units and nulls, the VM list's headline figures,
# views grouped per VM, events, command answers, "schema"
# (tests/integration/json-jq.sh checks the real binary and doc/json.md).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/cli/test-jsonout
TESTS += tests/unit/cli/test-jsonout
endif
tests_unit_cli_test_jsonout_SOURCES = tests/unit/cli/test-jsonout.c cli/jsonout.c cli/jsonout.h \
	core/wire/ctlproto.c core/views/views.c core/views/view_content.c core/views/view_build.c \
	core/views/view_json.c core/views/json_blob.c core/views/render.c core/views/view_jq.c \
	core/wire/seeded_hash.c
tests_unit_cli_test_jsonout_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_cli_test_jsonout_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_jsonout_LDADD = $(GLIB_LIBS) $(JSON_GLIB_LIBS) $(CMOCKA_LIBS) -lm

# The note under the live view's headline (cli/watch.c ddm_watch_wrap):
# wrapped by terminal cells, at words, never inside a UTF-8 character
# (tests/integration/tui-module.sh checks the screen in 80 columns).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/cli/test-watch-wrap
TESTS += tests/unit/cli/test-watch-wrap
endif
tests_unit_cli_test_watch_wrap_SOURCES = tests/unit/cli/test-watch-wrap.c
tests_unit_cli_test_watch_wrap_CPPFLAGS = $(core_libddmcore_la_CPPFLAGS)
tests_unit_cli_test_watch_wrap_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(JSON_GLIB_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cli_test_watch_wrap_LDADD = cli/libddmcli.la server/libddmserver.la core/libddmcore.la $(CMOCKA_LIBS)
