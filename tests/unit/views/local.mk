# SPDX-License-Identifier: Apache-2.0
# tests/unit/views/: the view store and the renderers (core/views), compiled
# in directly (DDM_VIEWS_TEST_* in tests/local.mk).
check_PROGRAMS += tests/unit/views/test-views tests/unit/views/test-render
TESTS += tests/unit/views/test-views tests/unit/views/test-render
tests_unit_views_test_views_SOURCES = tests/unit/views/test-views.c \
	core/views/views.c core/views/view_content.c core/views/view_build.c core/views/view_json.c core/views/json_blob.c \
	core/views/interest.c
tests_unit_views_test_views_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_views_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_views_LDADD = core/wire/libddmwire.la $(DDM_VIEWS_TEST_LDADD)
tests_unit_views_test_render_SOURCES = tests/unit/views/test-render.c core/views/render.c \
	core/views/views.c core/views/view_content.c core/views/view_build.c core/views/view_json.c core/views/json_blob.c
tests_unit_views_test_render_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_render_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_render_LDADD = core/wire/libddmwire.la $(DDM_VIEWS_TEST_LDADD)
# The "vms" view's kept rows (core/daemon/vms_rows.c) against full rebuilds.
check_PROGRAMS += tests/unit/views/test-vms-rows
TESTS += tests/unit/views/test-vms-rows
tests_unit_views_test_vms_rows_SOURCES = tests/unit/views/test-vms-rows.c core/daemon/vms_rows.c \
	core/views/render.c core/views/text_cut.c \
	core/views/views.c core/views/view_content.c core/views/view_build.c core/views/view_json.c core/views/json_blob.c
tests_unit_views_test_vms_rows_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_vms_rows_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_vms_rows_LDADD = core/wire/libddmwire.la $(DDM_VIEWS_TEST_LDADD)
# The VM list's jq document written from the store (core/views/jq_text.c)
# against the CLI's conversion of the server's JSON (cli/jsonout.c).
check_PROGRAMS += tests/unit/views/test-jq-text
TESTS += tests/unit/views/test-jq-text
tests_unit_views_test_jq_text_SOURCES = tests/unit/views/test-jq-text.c core/views/jq_text.c \
	cli/jsonout.c core/views/view_jq.c \
	core/views/views.c core/views/view_content.c core/views/view_build.c core/views/view_json.c core/views/json_blob.c
tests_unit_views_test_jq_text_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_views_test_jq_text_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_views_test_jq_text_LDADD = core/wire/libddmwire.la $(DDM_VIEWS_TEST_LDADD)
