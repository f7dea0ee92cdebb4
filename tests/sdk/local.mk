# SPDX-License-Identifier: Apache-2.0
# tests/sdk/: the plugin SDK (sdk/include/ddmon/*.h) as a plugin sees it.

# The byte readers/writers, linked with the codec (CODEC_TEST_* in tests/local.mk).
if ENABLE_TESTS
check_PROGRAMS += tests/sdk/test-bytes
TESTS += tests/sdk/test-bytes
endif
tests_sdk_test_bytes_SOURCES = tests/sdk/test-bytes.c
tests_sdk_test_bytes_CPPFLAGS = $(CODEC_TEST_CPPFLAGS)
tests_sdk_test_bytes_CFLAGS = $(CODEC_TEST_CFLAGS)
tests_sdk_test_bytes_LDADD = $(CODEC_TEST_LDADD)

# The SDK headers on their own, as strict C99 and as C++11 (not gnu11:
# per-target flags replace AM_CFLAGS). They print TAP themselves.
if ENABLE_TESTS
check_PROGRAMS += tests/sdk/header-c99 tests/sdk/header-cxx
TESTS += tests/sdk/header-c99 tests/sdk/header-cxx
endif
SDK_HEADER_CPPFLAGS = -I$(top_srcdir)/sdk/include -I$(top_builddir)/sdk/include
SDK_HEADER_WARN = -pedantic -Werror -Wall -Wextra
tests_sdk_header_c99_SOURCES = tests/sdk/header-standalone.c tests/sdk/header-standalone.h \
	tests/sdk/only-plugin.c tests/sdk/only-chunk.c tests/sdk/only-bytes.c \
	tests/sdk/only-ticklist.c
tests_sdk_header_c99_CPPFLAGS = $(SDK_HEADER_CPPFLAGS)
tests_sdk_header_c99_CFLAGS = -std=c99 $(SDK_HEADER_WARN) $(SAN_CFLAGS)
tests_sdk_header_cxx_SOURCES = tests/sdk/header-standalone.cc tests/sdk/header-standalone.h \
	tests/sdk/only-plugin.cc tests/sdk/only-chunk.cc tests/sdk/only-bytes.cc \
	tests/sdk/only-ticklist.cc
tests_sdk_header_cxx_CPPFLAGS = $(SDK_HEADER_CPPFLAGS)
tests_sdk_header_cxx_CXXFLAGS = -std=c++11 $(SDK_HEADER_WARN) $(SAN_CFLAGS)
EXTRA_DIST += tests/sdk/only-plugin.c tests/sdk/only-chunk.c tests/sdk/only-bytes.c tests/sdk/only-ticklist.c

# The example third-party plugin ships in the tarball (built only by
# installcheck; tests/plugins/local.mk builds it for `make check` too).
EXTRA_DIST += sdk/examples/hello/hello.c sdk/examples/hello/Makefile \
	sdk/examples/hello/README.md

# installcheck: the SDK as a third party sees it. Build the example plugin
# out of tree with nothing but the INSTALLED pkg-config file and headers,
# then have the INSTALLED ddmon validate and init it. DESTDIR-aware: the .pc
# file says $(prefix), the files live under $(DESTDIR)$(prefix).
installcheck-local: installcheck-pluginhost
installcheck-pluginhost:
	@set -e; dir=hello-installcheck; rm -rf $$dir; mkdir $$dir; \
	pc="$(PKG_CONFIG) --define-variable=includedir=$(DESTDIR)$(includedir) --define-variable=libdir=$(DESTDIR)$(libdir)"; \
	sys=`$(PKG_CONFIG) --variable pc_path pkg-config`; \
	PKG_CONFIG_PATH="$(DESTDIR)$(libdir)/pkgconfig" PKG_CONFIG_LIBDIR="$(DESTDIR)$(libdir)/pkgconfig:$$sys" \
	  $(MAKE) -C $$dir -f $(abs_top_srcdir)/sdk/examples/hello/Makefile $(DDM_HELLO_INSTALLCHECK_GOALS) \
	    SRCDIR=$(abs_top_srcdir)/sdk/examples/hello PKG_CONFIG="$$pc" CC="$(CC)" \
	    LDFLAGS="$(SAN_LDFLAGS)"; \
	echo "installcheck: $(DESTDIR)$(bindir)/ddmon --check-plugin $$dir/hello.so"; \
	$(DESTDIR)$(bindir)/ddmon --check-plugin $$dir/hello.so; \
	rm -rf $$dir
.PHONY: installcheck-pluginhost

# The SDK's plugin test kit itself (sdk/testkit; DDM_FAKEHOST_* in tests/local.mk).
if ENABLE_TESTS
check_PROGRAMS += tests/sdk/test-kit
TESTS += tests/sdk/test-kit
endif
tests_sdk_test_kit_SOURCES = tests/sdk/test-kit.c
tests_sdk_test_kit_CPPFLAGS = $(DDM_FAKEHOST_CPPFLAGS)
tests_sdk_test_kit_CFLAGS = $(DDM_FAKEHOST_CFLAGS)
tests_sdk_test_kit_LDADD = $(DDM_FAKEHOST_LDADD)
