#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The release tarball holds every file of the source tree: `make distdir`
# from the build tree, compared with `git ls-files` of the checkout. A file
# missing from EXTRA_DIST or a *_DATA list builds and tests fine from git,
# and breaks only for whoever builds the tarball (tests/lsan.supp missing:
# every sanitized test of a tarball build failed to read its suppressions).
# Skipped outside a git checkout (a tarball build) or without git.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
command -v git >/dev/null || t_skip_all "no git"
git -C "$DDM_TOP_SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    t_skip_all "the source tree is not a git checkout"
t_plan 2

# Files of the repository that are not part of a release on purpose.
not_shipped='^\.gitignore$'

dist="$T_TMP/dist"
# (a make of its own: not the jobserver of the `make check` that runs this)
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$DDM_TOP_BUILDDIR" distdir distdir="$dist" \
    >"$T_TMP/distdir.out" 2>&1; then
    t_ok "make distdir builds the release's tree"
else
    t_fail "make distdir builds the release's tree" "$(tail -n 20 "$T_TMP/distdir.out")"
fi

git -C "$DDM_TOP_SRCDIR" ls-files -z | tr '\0' '\n' | grep -Ev "$not_shipped" | LC_ALL=C sort \
    >"$T_TMP/tracked.txt"
missing=$(while IFS= read -r f; do [ -e "$dist/$f" ] || printf '%s\n' "$f"; done <"$T_TMP/tracked.txt")
if [ -s "$T_TMP/tracked.txt" ] && [ -z "$missing" ]; then
    t_ok "every tracked file ($(wc -l <"$T_TMP/tracked.txt")) is in the release's tree"
else
    t_fail "every tracked file is in the release's tree" "missing (add to EXTRA_DIST or a *_DATA list):" \
        $missing
fi
# (gone before the exit's sanitizer scan of $T_TMP: the tree's tests quote
# sanitizer reports)
rm -rf "$dist"
