# SPDX-License-Identifier: Apache-2.0
# DDM_PLUGIN(NAME, DEFAULT, DESCRIPTION)
# Adds --enable-plugin-NAME / --disable-plugin-NAME, the automake conditional
# BUILD_PLUGIN_<NAME> and a line in the configure summary ($ddm_plugin_summary).
# --enable-all-plugins=yes|no overrides every default.
AC_DEFUN([DDM_PLUGIN], [
  AC_REQUIRE([_DDM_ALL_PLUGINS])
  m4_pushdef([ddm_up], m4_translit([$1], [a-z-], [A-Z_]))
  AC_ARG_ENABLE([plugin-$1],
    [AS_HELP_STRING([--enable-plugin-$1], [$3 (default: $2)])],
    [ddm_enable_$1=$enableval],
    [AS_IF([test "x$enable_all_plugins" != xauto],
       [ddm_enable_$1=$enable_all_plugins], [ddm_enable_$1=$2])])
  AM_CONDITIONAL([BUILD_PLUGIN_]ddm_up, [test "x$ddm_enable_$1" = xyes])
  ddm_plugin_summary="$ddm_plugin_summary    m4_format([%-14s], [$1]) $ddm_enable_$1
"
  m4_popdef([ddm_up])
])

AC_DEFUN([_DDM_ALL_PLUGINS], [
  AC_ARG_ENABLE([all-plugins],
    [AS_HELP_STRING([--enable-all-plugins=yes|no|auto], [override every plugin default])],
    [], [enable_all_plugins=auto])
  ddm_plugin_summary=
])
