# SPDX-License-Identifier: Apache-2.0
# tests/harness/own-netns.sh PROGRAM [ARGS...]: the LOG_COMPILER of the
# compiled tests (unit, simvm, SDK, fuzz replays; Makefile.am): runs PROGRAM
# in a network namespace of its own, with only lo, up, where
# tests/integration/lib.sh would make one for a script (root, `unshare -n`
# permitted, `ip` installed; DDM_IT_NETNS=1 marks the run inside), else
# runs it as is. `make -j2 check` runs two tests at a time: a test that
# connects to a port it found free (test-monitor's "nothing listens
# there") could otherwise meet the other test's listener on a port the
# kernel chose. The process is the driver's child all the same (unshare
# and sh exec), so its status and signals are PROGRAM's. A program that
# runs past DDM_TEST_TIMEOUT seconds (default 900: the slowest takes a
# minute or two under the sanitizers) is ended by timeout(1), exit status
# 124, so a test that hangs fails instead of holding the whole run (CI has
# 90 minutes) until it is killed with nothing said.
limit=${DDM_TEST_TIMEOUT:-900}
if [ -z "${DDM_IT_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
    unshare -n true 2>/dev/null; then
    DDM_IT_NETNS=1
    export DDM_IT_NETNS
    exec unshare -n -- sh -c 'ip link set lo up ||
        { echo "Bail out! could not bring lo up in the test'"'"'s network namespace"; exit 1; }
        exec timeout --kill-after=30 "$0" "$@"' "$limit" "$@"
fi
exec timeout --kill-after=30 "$limit" "$@"
