# SPDX-License-Identifier: Apache-2.0
# bench/: benchmarks. Not tests: they print figures and ratios against a
# baseline measured in the same run. Each area appends its own block.
