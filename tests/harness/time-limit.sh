# SPDX-License-Identifier: Apache-2.0
# tests/harness/time-limit.sh SCRIPT [ARGS...]: the LOG_COMPILER of the
# test scripts (tests/integration/*.sh, Makefile.am's SH_LOG_COMPILER):
# runs SCRIPT with bash under timeout(1), so one that runs past
# DDM_TEST_TIMEOUT seconds (default 900; the slowest script takes a minute
# or two) is ended, exit status 124, and fails, instead of holding the
# whole run (CI has 90 minutes) with nothing said of which test hung. The
# script makes its own network namespace (tests/integration/lib.sh);
# compiled tests get theirs and the same limit from own-netns.sh.
exec timeout --kill-after=30 "${DDM_TEST_TIMEOUT:-900}" bash "$@"
