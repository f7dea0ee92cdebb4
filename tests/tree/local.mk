# SPDX-License-Identifier: Apache-2.0
# tests/tree/: checks of the source tree itself. check-layers.sh runs
# tools/check-layers (the parts include each other only downwards; plugins
# see only the SDK) and proves on made-up trees that it catches each fault.
if ENABLE_TESTS
TESTS += tests/tree/check-layers.sh
endif
EXTRA_DIST += tests/tree/check-layers.sh tools/check-layers
# bench-lib.sh: bench/lib.sh's stop_pid, bench_prune_pids and bench_netns.
if ENABLE_TESTS
TESTS += tests/tree/bench-lib.sh
endif
EXTRA_DIST += tests/tree/bench-lib.sh
# check-man.sh: the man pages format without a groff warning.
if ENABLE_TESTS
TESTS += tests/tree/check-man.sh
endif
EXTRA_DIST += tests/tree/check-man.sh
