# SPDX-License-Identifier: Apache-2.0
# tests/unit/web/test-metrics: the /metrics renderer and exposition writer
# (web/metrics*.c) on hand-built views, compiled in with the view store.
check_PROGRAMS += tests/unit/web/test-metrics
TESTS += tests/unit/web/test-metrics
tests_unit_web_test_metrics_SOURCES = tests/unit/web/test-metrics.c \
	web/metrics.c web/metrics_text.c web/metrics_proc.c \
	core/views/views.c core/views/view_content.c core/views/view_build.c core/views/view_json.c core/views/json_blob.c \
	core/views/text_cut.c
tests_unit_web_test_metrics_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_web_test_metrics_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_web_test_metrics_LDADD = core/wire/libddmwire.la $(DDM_VIEWS_TEST_LDADD)
