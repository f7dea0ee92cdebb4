# SPDX-License-Identifier: Apache-2.0
# tools/: the developer scripts behind the README commands, and ddmon-simvm.
EXTRA_DIST += %reldir%/test-summary %reldir%/demo
