# SPDX-License-Identifier: Apache-2.0
# tests/unit/web/test-web-rules: the dashboard's request rules (web/auth.c:
# token, cookie, bearer, Host, Origin; web/paths.c: route patterns and
# path segments) and the listener address syntax
# (core/config/listen_addr.c), compiled in directly. The rules applied to
# real requests: tests/integration/web-auth.sh.
check_PROGRAMS += tests/unit/web/test-web-rules
TESTS += tests/unit/web/test-web-rules
tests_unit_web_test_web_rules_SOURCES = tests/unit/web/test-web-rules.c web/auth.c web/paths.c \
	core/config/listen_addr.c
tests_unit_web_test_web_rules_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_web_test_web_rules_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_web_test_web_rules_LDADD = $(DDM_VIEWS_TEST_LDADD)

# tests/unit/web/test-web-history: the records' recent past (web/history.c)
# on a real view store: what is sampled, the rate limit, the caps, the
# history going with its VM.
check_PROGRAMS += tests/unit/web/test-web-history
TESTS += tests/unit/web/test-web-history
# The view store comes from libddmcore, whatever files it is made of.
tests_unit_web_test_web_history_SOURCES = tests/unit/web/test-web-history.c web/history.c \
	web/view_json.c
tests_unit_web_test_web_history_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_web_test_web_history_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS)
tests_unit_web_test_web_history_LDADD = core/libddmcore.la $(DDM_VIEWS_TEST_LDADD)

# tests/unit/web/test-web-accept: the HTTP listener (web/http_server.c) out
# of descriptors: at the limit a pending connection is shed through
# core/loop/accept.c (closed, counted, the loop not spinning), and once
# descriptors are back a request is answered.
if HAVE_HTTP
check_PROGRAMS += tests/unit/web/test-web-accept
TESTS += tests/unit/web/test-web-accept
endif
tests_unit_web_test_web_accept_SOURCES = tests/unit/web/test-web-accept.c web/http_server.c \
	web/auth.c web/paths.c tests/harness/fd-limit.h
tests_unit_web_test_web_accept_CPPFLAGS = $(DDM_VIEWS_TEST_CPPFLAGS)
tests_unit_web_test_web_accept_CFLAGS = $(DDM_VIEWS_TEST_CFLAGS) $(LIBSOUP_CFLAGS)
tests_unit_web_test_web_accept_LDADD = core/libddmcore.la $(LIBSOUP_LIBS) $(DDM_VIEWS_TEST_LDADD)
