# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the integration tests (sourced, not run): TAP output,
# free ports, starting ddmon-simvm / ddmon / real JVMs with cleanup, and
# waiting for conditions with a deadline. Every test runs with a private
# control socket and private ports, so it never touches a user's ddmon.
#
# Exit status (t_cleanup): 1 if a sanitizer reported or a build-tree
# process ignored SIGTERM; run by hand, also 1 if any check printed
# "not ok". Under `make check` (DDM_TAP_COUNTS_FAILURES=1, set in
# AM_TESTS_ENVIRONMENT) the TAP driver counts each "not ok" line as one
# failure and would count a non-zero exit as one more (an ERROR), so there
# the status says only what no line says.
#
# Evidence: with DDM_IT_KEEP_DIR set (.ci/run sets it), a test that failed
# (a check printed "not ok", a sanitizer reported, or a process ignored
# SIGTERM) copies its logs from $T_TMP (*.log, *.err, *.out, *.json,
# *.txt and the sanitizer reports; bounded by T_KEEP_FILE_MAX and
# T_KEEP_TOTAL_MAX) to $DDM_IT_KEEP_DIR/<test name>.<pid>/ before $T_TMP
# is removed, and says so in one "# kept evidence in DIR" line. A test
# that passed keeps nothing.
#
# Network namespace: run as root where `unshare -n` is permitted and `ip`
# is installed, sourcing this file runs the test again, first thing (the
# same process: unshare execs), in a network namespace of its own with
# only lo, up (DDM_IT_NETNS=1 marks the run inside, and keeps the test's
# children from making one more). `make -j2 check` runs two tests at a
# time, all in the one namespace `bash tools/dev test` makes: a listener of
# one test on a port the kernel chose (port 0: the relay's per-VM ports)
# could sit in the range another test's ddmon scans, which then attached
# to it (stack-kinds.sh did). In a namespace of its own a test meets only
# its own ports; the filesystem is shared, so DDM_IT_KEEP_DIR, the control
# sockets and the build tree are as before. Elsewhere (not root, or a
# container that forbids it) the test runs where it was started, and picks
# its ports as below (port 0, t_free_port). A script with its own
# namespace (scan-wide.sh, relay-own-port.sh) sets DDM_IT_NETNS=1 in it;
# one that must not run again (bench/lib.sh: its benches have parsed and
# shifted their arguments by then, and choose a namespace themselves) sets
# T_NO_NETNS=1 before sourcing this file. The compiled tests get theirs
# from tests/harness/own-netns.sh (their LOG_COMPILER), by the same rule.

set -u
: "${DDM_TOP_BUILDDIR:?run under make check}"
: "${DDM_TOP_SRCDIR:?run under make check}"
if [ -z "${DDM_IT_NETNS:-}" ] && [ -z "${T_NO_NETNS:-}" ] && [ "$(id -u)" = 0 ] &&
    command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    export DDM_IT_NETNS=1
    exec unshare -n -- bash -c 'ip link set lo up ||
        { echo "Bail out! could not bring lo up in the test'"'"'s network namespace"; exit 1; }
        exec bash "$0" "$@"' "$0" "$@"
fi
DDMON="$DDM_TOP_BUILDDIR/ddmon"
SIMVM="$DDM_TOP_BUILDDIR/ddmon-simvm"
PLUGINDIR="$DDM_TOP_BUILDDIR/plugins"
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-it.XXXXXX")
T_PIDS=()
T_N=0
T_FAILED=0
# A program that outlives the signal `timeout` sends (seen: LeakSanitizer
# wedged in its exit-time check on a loaded machine) must not hang the
# suite: every `timeout` in the tests also kills 10 s later.
timeout() { command timeout -k 10 "$@"; }

t_plan() { echo "1..$1"; }
t_ok() { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
t_fail() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $1"; shift; for l in "$@"; do echo "# $l"; done; }
t_skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# t_need_tool PROGRAM DEBIAN_PACKAGE [HOW]: go on if PROGRAM is on PATH.
# Else skip the whole test only where the package cannot exist (no dpkg, or
# apt-cache policy shows it no candidate on this machine's architecture);
# on Debian with the package available, a missing tool is a FAIL: CI must
# install it (tools/dev's pkgs list).
t_need_tool() {
    local prog=$1 pkg=$2 cand
    command -v "$prog" >/dev/null && return 0
    if ! command -v dpkg >/dev/null || ! command -v apt-cache >/dev/null; then
        t_skip_all "no $prog, and this is no Debian system that has the package $pkg"
    fi
    cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" {print $2; exit}')
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
        t_skip_all "no $prog: Debian has no package $pkg for $(dpkg --print-architecture) here"
    fi
    t_plan 1
    t_fail "$prog is installed" "Debian package $pkg $cand is available but not installed:" \
        "apt-get install $pkg (tools/dev's pkgs list has it)"
    exit 0 # the status is t_cleanup's (a failed check)
}
t_check() { # t_check DESC COMMAND...
    local desc=$1; shift
    if "$@"; then t_ok "$desc"; else t_fail "$desc" "command failed: $*"; fi
}
t_diag() { sed 's/^/# /' "$@" 2>/dev/null || true; }

# t_wakeups PID SECONDS: the poll/epoll calls of every thread of PID over
# the window (strace -c -f; a window without a syscall leaves strace's
# table empty: 0), "" when strace is missing or may not attach (ptrace not
# allowed), or a word that is no number ("gone", "strace-failed") when PID
# is not alive through the window or strace ended early: a caller's numeric
# test then fails rather than passing or skipping (review rZ 6). strace's
# table and errors are left in $T_TMP/strace.txt and strace.err for t_diag.
t_wakeups() {
    local rc
    command -v strace >/dev/null || return 0
    kill -0 "$1" 2>/dev/null || { echo gone; return 0; }
    rm -f "$T_TMP/strace.txt"
    timeout -s INT "$2" strace -c -f -p "$1" -o "$T_TMP/strace.txt" >/dev/null \
        2>"$T_TMP/strace.err"
    rc=$?
    grep -q "Operation not permitted" "$T_TMP/strace.err" && return 0
    kill -0 "$1" 2>/dev/null || { echo gone; return 0; }
    [ "$rc" = 124 ] || { echo strace-failed; return 0; }
    [ -s "$T_TMP/strace.txt" ] || { echo 0; return 0; }
    awk '$NF ~ /^(poll|ppoll|epoll_wait|epoll_pwait|epoll_pwait2|select|pselect6)$/ { p += $4 }
         END { print p + 0 }' "$T_TMP/strace.txt"
}

# Sanitizer reports. Every sanitized process started under this test (clients
# whose stderr a test throws away and servers a client autostarted included)
# writes its ASan/LSan reports to $T_TMP/san/asan.PID: log_path survives any
# redirection. UBSan (a separate runtime with gcc) ignores log_path and prints
# to stderr, so t_cleanup also scans every file the test left in $T_TMP.
mkdir -p "$T_TMP/san"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T_TMP/san/asan"
export ASAN_OPTIONS
# Marks the processes this test started, however deep, so that cleanup finds
# those it did not start itself (servers a client autostarted) in /proc.
DDM_IT_TMP=$T_TMP
export DDM_IT_TMP
T_SAN_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer'
T_STOP_TIMEOUT=${T_STOP_TIMEOUT:-10} # seconds a process gets after SIGTERM (LSan at exit is slow)

# A JVM of this test whose agent could not bind its port again after a
# debugger (or ddmon) left, "bind failed" in its jvm-PORT.err: another
# program took the port while the agent was not listening (t_port_in_use
# says why that can be). Say so, and what listens there now, so a check
# that failed for it does not read as ddmon losing the VM.
t_jvm_port_lost() {
    local f port
    for f in "$T_TMP"/jvm-*.err; do
        [ -e "$f" ] && grep -q "bind failed" "$f" || continue
        port=${f##*/jvm-}
        port=${port%.err}
        echo "# the JVM on port $port could not listen again: $(grep -m1 'bind failed' "$f")"
        command -v ss >/dev/null &&
            echo "# listening on port $port now: $(ss -Htlnp "sport = :$port" 2>/dev/null | tr -s ' ')"
    done
}

# True once process PID has exited (a zombie waiting for its parent counts).
t_dead() {
    local stat
    kill -0 "$1" 2>/dev/null || return 0
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
    stat=${stat##*) } # "pid (comm) STATE ..."
    [ "${stat%% *}" = Z ] || [ "${stat%% *}" = X ]
}
T_BUILD_REAL=$(readlink -f "$DDM_TOP_BUILDDIR")
# Processes of the build tree (ddmon, ddmon-simvm, test tools) started under
# this test, however indirectly, found through DDM_IT_TMP in their environment.
t_own_procs() {
    local exe p
    for exe in $(find /proc/[0-9]*/exe -maxdepth 0 -lname "$T_BUILD_REAL/*" 2>/dev/null); do
        p=${exe#/proc/}; p=${p%/exe}
        { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qxF "DDM_IT_TMP=$T_TMP" && echo "$p"
    done
}
# True if process PID runs a program of the build tree (sanitized, if any is).
t_is_ours() { case $(readlink "/proc/$1/exe" 2>/dev/null) in "$T_BUILD_REAL"/*) ;; *) return 1 ;; esac; }
# True if process PID catches SIGTERM (so SIGTERM makes it exit cleanly).
t_catches_term() {
    local line
    while read -r line; do
        case $line in
        SigCgt:*) # hex mask of the caught signals; SIGTERM (15) is bit 14
            line=${line#SigCgt:}
            return $(( !((16#${line//[[:space:]]/} >> 14) & 1) )) ;;
        esac
    done 2>/dev/null <"/proc/$1/status"
    return 1
}
# Stop PIDS: SIGTERM, then poll until all have exited or T_STOP_TIMEOUT
# passed, then SIGKILL (false if a build-tree process needed it: a hang at
# exit, and its leak report is lost). Prompt exits cost no waiting. A
# build-tree process that does not catch SIGTERM (any more) may be running
# its exit handlers (a server that a kill-server just stopped, LeakSanitizer
# busy): SIGTERM would end it before LSan prints, so it gets 3 s to finish on
# its own first.
t_stop() {
    local p left start now late=() deadline
    [ $# -gt 0 ] || return 0
    for p in "$@"; do
        t_dead "$p" && continue
        if t_catches_term "$p" || ! t_is_ours "$p"; then
            kill -TERM "$p" 2>/dev/null
        else
            late+=("$p")
        fi
    done
    start=$(date +%s%N)
    deadline=$(( start + T_STOP_TIMEOUT * 1000000000 ))
    while :; do
        left=()
        for p in "$@"; do t_dead "$p" || left+=("$p"); done
        [ ${#left[@]} -eq 0 ] && return 0
        now=$(date +%s%N)
        if [ ${#late[@]} -gt 0 ] && [ "$now" -ge $(( start + 3000000000 )) ]; then
            for p in "${late[@]}"; do kill -TERM "$p" 2>/dev/null; done
            late=()
        fi
        if [ "$now" -ge "$deadline" ]; then
            local hung=0
            for p in "${left[@]}"; do
                echo "# still running ${T_STOP_TIMEOUT} s after SIGTERM, killed:" \
                    "$p $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")"
                t_is_ours "$p" && hung=1
                kill -KILL "$p" 2>/dev/null
            done
            return $((hung == 0 ? 0 : 1))
        fi
        sleep 0.05
    done
}
# Print the sanitizer reports found in $T_TMP as TAP comments; false if any.
t_scan_sanitizers() {
    local f first found=0
    while IFS= read -r f; do
        found=1
        first=$(grep -n -m1 -E "$T_SAN_RE" "$f" | cut -d: -f1)
        echo "# sanitizer report in ${f#"$T_TMP"/} (from line $first):"
        sed -n "$((first > 3 ? first - 3 : 1)),$((first + 40))p" "$f" | sed 's/^/#   /'
    done < <(grep -rlIE "$T_SAN_RE" "$T_TMP" 2>/dev/null | sort)
    [ $found = 0 ]
}
# Bounds of what t_keep_evidence copies (bytes): a larger file is kept as
# its last T_KEEP_FILE_MAX bytes (a log's end is what tells why); files
# (smallest first) stop being copied once T_KEEP_TOTAL_MAX is reached, and
# after T_KEEP_FILES_MAX files. What was cut or left out is listed in the
# copy's MANIFEST.
T_KEEP_FILE_MAX=$((1024 * 1024))
T_KEEP_TOTAL_MAX=$((8 * 1024 * 1024))
T_KEEP_FILES_MAX=200
# t_keep_evidence: copy $T_TMP's logs to $DDM_IT_KEEP_DIR/<test>.<pid>/
# (see the header); one "# kept evidence in DIR" line.
t_keep_evidence() {
    local name dest size rel total=0 n=0 cut=0 left=0
    name=$(basename "$0" .sh)
    dest="$DDM_IT_KEEP_DIR/$name.$$"
    if ! mkdir -p "$dest" 2>/dev/null; then
        echo "# could not keep evidence in $dest"
        return 0
    fi
    while read -r size rel; do
        case $rel in
        *.log | *.err | *.out | *.json | *.txt | san/asan.*) ;;
        *) continue ;;
        esac
        if [ $n -ge "$T_KEEP_FILES_MAX" ] ||
            [ $((total + (size < T_KEEP_FILE_MAX ? size : T_KEEP_FILE_MAX))) -gt "$T_KEEP_TOTAL_MAX" ]; then
            echo "not kept ($size bytes, over the total): $rel" >>"$dest/MANIFEST"
            left=$((left + 1))
            continue
        fi
        mkdir -p "$dest/$(dirname "$rel")"
        if [ "$size" -gt "$T_KEEP_FILE_MAX" ]; then
            tail -c "$T_KEEP_FILE_MAX" "$T_TMP/$rel" >"$dest/$rel" 2>/dev/null
            echo "last $T_KEEP_FILE_MAX of $size bytes: $rel" >>"$dest/MANIFEST"
            size=$T_KEEP_FILE_MAX
            cut=$((cut + 1))
        else
            cp "$T_TMP/$rel" "$dest/$rel" 2>/dev/null || continue
        fi
        total=$((total + size))
        n=$((n + 1))
    done < <(find "$T_TMP" -type f -printf '%s %P\n' 2>/dev/null | sort -n)
    echo "# kept evidence in $dest ($n files, $total bytes$([ $cut = 0 ] || echo ", $cut cut to their end")$([ $left = 0 ] || echo ", $left left out: see MANIFEST"))"
}
# On exit: stop everything gracefully (sanitizers report at exit), then fail
# the test program (exit status 1: an ERROR for automake's TAP driver) if any
# process reported an error or a leak, or a build-tree process did not exit
# on SIGTERM; else, outside `make check`, if a check failed (the header says
# why not under it). Otherwise the exit status is left alone. A failed
# test keeps its logs first when DDM_IT_KEEP_DIR says where (the header).
t_cleanup() {
    local p ok=1
    t_stop $(printf '%s\n' "${T_PIDS[@]}" $(t_own_procs) | sort -u) || ok=0
    for p in "${T_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if ! t_scan_sanitizers; then
        echo "# FAILED: sanitizer reports (above)"
        ok=0
    fi
    t_jvm_port_lost
    if [ -n "${DDM_IT_KEEP_DIR:-}" ] && { [ $ok = 0 ] || [ "$T_FAILED" -gt 0 ]; }; then
        t_keep_evidence
    fi
    rm -rf "$T_TMP"
    if [ $ok = 0 ]; then
        echo "# FAILED: sanitizer reports or a process that ignored SIGTERM; exiting with status 1"
        exit 1
    fi
    if [ "$T_FAILED" -gt 0 ] && [ "${DDM_TAP_COUNTS_FAILURES:-0}" != 1 ]; then
        echo "# FAILED: $T_FAILED of $T_N checks; exiting with status 1"
        exit 1
    fi
}
trap t_cleanup EXIT

# True if a TCP socket of this network namespace has PORT as its own, in
# any state: a listener, and also a connection whose listener is gone, or
# one in TIME_WAIT. A connect is refused on such a port, yet it is no free
# one: a JVM's JDWP agent stops listening while a debugger (or ddmon) is
# connected and binds its port again when that one leaves; a program of
# another test that took the port meanwhile (SO_REUSEADDR lets a listener
# bind beside a connection, as ddmon's and the JDK's do) left the JVM
# unreachable for good: relay-jvm.sh lost its VM under `make -j2` that way,
# "did not come back" in the server log, "bind failed" in the JVM's.
t_port_in_use() {
    local f files=()
    for f in /proc/net/tcp /proc/net/tcp6; do [ -r "$f" ] && files+=("$f"); done
    if [ ${#files[@]} -eq 0 ]; then # no /proc/net tables: a listener is all a connect can see
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
        return
    fi
    awk -v p="$(printf ':%04X' "$1")" 'FNR > 1 && substr($2, length($2) - 4) == p { f = 1; exit }
                                       END { exit !f }' "${files[@]}"
}

# A TCP port free on 127.0.0.1 now (best effort), from 20000-31999 (run as
# root, each test runs in a network namespace of its own, above, so these
# ports are the test's own; elsewhere prefer the
# programs' --base-port 0 / port files where they offer them): below the
# kernel's ephemeral range (32768 and up), where outgoing connections would
# take "free" ports at random.
t_free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$(( (RANDOM % 12000) + 20000 ))
        if ! t_port_in_use "$p"; then echo "$p"; return 0; fi
    done
    return 1
}
# N consecutive free ports; prints the first.
t_free_ports() {
    local n=$1 base ok i
    for _ in $(seq 1 100); do
        base=$(( (RANDOM % 12000) + 20000 )); ok=1
        for i in $(seq 0 $((n - 1))); do
            if t_port_in_use "$((base + i))"; then ok=0; break; fi
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}

# t_wait SECONDS COMMAND...: retry COMMAND every 0.1 s until it succeeds.
# t_is WANT CMD...: CMD prints WANT (run anew at each call: for t_wait,
# which retries a command; `t_wait 5 test "$(cmd)" = x` would not re-run cmd).
t_is() { local want=$1; shift; [ "$("$@" 2>/dev/null)" = "$want" ]; }

t_wait() {
    local deadline=$(( $(date +%s%N) + ${1} * 1000000000 )); shift
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s%N)" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# Start ddmon-simvm in the background; extra args passed through. Sets SIMVM_PID.
t_start_simvm() {
    "$SIMVM" "$@" >"$T_TMP/simvm.out" 2>"$T_TMP/simvm.err" &
    SIMVM_PID=$!
    T_PIDS+=("$SIMVM_PID")
}

# ddmon with a private socket and the build tree's plugins.
t_ddmon() { "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start "$@"; }

# Start a foreground ddmon server in the background. Sets DDMON_PID.
t_start_server() {
    "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
        server --foreground "$@" >"$T_TMP/server.out" 2>"$T_TMP/server.err" &
    DDMON_PID=$!
    T_PIDS+=("$DDMON_PID")
    t_wait 10 test -S "$T_TMP/ddmon.sock"
}

# Compile the Java test programs once per test into $T_TMP/java.
t_javac() {
    command -v javac >/dev/null || return 1
    mkdir -p "$T_TMP/java"
    javac -g -d "$T_TMP/java" "$DDM_TOP_SRCDIR"/tests/java/*.java
}
# Start a real JVM with the JDWP agent on PORT running CLASS. Sets JVM_PID.
# The agent listens on 127.0.0.1, or on T_JVM_HOST when set ("*": every
# address).
t_start_jvm() { # t_start_jvm PORT SUSPEND(y|n) CLASS [args]
    local port=$1 suspend=$2 cls=$3; shift 3
    java -agentlib:jdwp=transport=dt_socket,server=y,suspend="$suspend",address="${T_JVM_HOST:-127.0.0.1}":"$port" \
        -cp "$T_TMP/java" "$cls" "$@" >"$T_TMP/jvm-$port.out" 2>"$T_TMP/jvm-$port.err" &
    JVM_PID=$!
    T_PIDS+=("$JVM_PID")
}

# Extract with a tiny JSON query: t_json FILE EXPR (python3 is not guaranteed:
# use grep-friendly checks where possible). Returns the file's content.
t_has() { grep -q -- "$2" "$1"; }
# Wait until a JVM started by t_start_jvm listens (its agent prints a line).
t_wait_jvm() { t_wait "${2:-20}" grep -q "Listening for transport dt_socket" "$T_TMP/jvm-$1.out"; }

# t_vm_field KEY FIELD: FIELD ("app", "state", "debug_port", ...) of VM KEY's
# row in the server's VM list ("" for null); false when no row has that key.
# The list is left in $T_TMP/dp.json. Needs a server.
t_vm_field() {
    t_ddmon --no-autostart vms --json >"$T_TMP/dp.json" 2>/dev/null || return 1
    python3 - "$T_TMP/dp.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for row in doc["rows"]:
    if row.get("key") == sys.argv[2]:
        value = row.get(sys.argv[3])
        print("" if value is None else value); sys.exit(0)
sys.exit(1)
PY
}
# The relay port of VM KEY as the server lists it; false when it has none.
t_debug_port() { local p; p=$(t_vm_field "$1" "debug_port") && [ -n "$p" ] && echo "$p"; }
JDWPC="$DDM_TOP_BUILDDIR/tests/tools/jdwpc"
# The ports ddmon-simvm reports in its port file, as a --scan-ports list "P1,P2,...":
# exactly those (other tests' VMs may listen on ports in between).
t_simvm_ports() { awk '{print $2}' "$1" | sort -n | paste -sd,; }
# t_have_plugins NAME...: TRUE if every named plugin was built (--enable-plugin-NAME=no
# leaves it out; tests of its views then skip instead of failing).
t_have_plugins() { local p; for p in "$@"; do [ -f "$PLUGINDIR/$p.so" ] || return 1; done; }
# The resident set of process PID in KiB (empty once it is gone).
t_rss_kb() { awk '/^VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null; }
# t_rss_sample_start PID INTERVAL [LOG]: T_RSS_BEFORE gets PID's RSS now; then a
# background sampler, every INTERVAL seconds, keeps the peak so far (from
# T_RSS_BEFORE) in $T_TMP/peak and, with LOG, appends "TIME RSS" lines to LOG,
# until t_rss_sample_stop, which waits for it and sets T_RSS_PEAK (KiB).
t_rss_sample_start() {
    local pid=$1 every=$2 log=${3:-}
    T_RSS_BEFORE=$(t_rss_kb "$pid")
    rm -f "$T_TMP/stop"
    ( peak=$T_RSS_BEFORE
      while [ ! -e "$T_TMP/stop" ]; do
          r=$(t_rss_kb "$pid"); [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r; echo "$peak" >"$T_TMP/peak"
          [ -z "$log" ] || echo "$(date +%s.%N) $r" >>"$log"
          sleep "$every"
      done ) &
    T_RSS_SAMPLER=$!
}
t_rss_sample_stop() { touch "$T_TMP/stop"; wait "$T_RSS_SAMPLER"; T_RSS_PEAK=$(cat "$T_TMP/peak"); }
# t_web_url LOG: the web dashboard's URL (with its token) from a server's log,
# waiting up to 10 s for the line; empty if it never comes.
t_web_url() {
    t_wait 10 grep -q 'web dashboard: http' "$1"
    grep -o 'web dashboard: http[^ ]*' "$1" | head -1 | sed 's/^web dashboard: //'
}
# t_install_dir FILE: the directory `make install-exec` puts FILE (a program
# or a .la, as the build tree names it) in, from its rule's
# list='... FILE ...'; test -n "DIR" in $T_TMP/install-exec.n (written by
# t_install_module); empty if no rule installs it.
t_install_dir() {
    sed -n "s|^list='\\([^']* \\)\\{0,1\\}$1\\( [^']*\\)\\{0,1\\}'; test -n \"\\([^\"]*\\)\".*|\\3|p" \
        "$T_TMP/install-exec.n" | head -1
}
# t_install_module DEST LA LOOKED: three checks of a module's install
# rules (the web and terminal UI modules): `make install-exec` installs LA
# (e.g. tui/ddmon-tui.la) with the binary and install-data does not (a
# packager splitting the two gets both); the two installed as those rules
# would, by libtool, under DESTDIR DEST, the module is at LOOKED, where the
# binary said it looks for it; and it is writable by its owner alone. The
# rules are read from `make -n` (which runs nothing: an install would
# rebuild an out-of-date ddmon under the other tests that run it) into
# $T_TMP/install-exec.n and install-data.n, for t_install_dir. Sets
# T_INST_DDMON: the installed binary's path below DEST (empty if none).
t_install_module() {
    local dest=$1 la=$2 looked=$3 base mod_dir bin_dir installed mode
    base=$(basename "$la" .la)
    make -n -C "$DDM_TOP_BUILDDIR" install-exec DESTDIR="$dest" >"$T_TMP/install-exec.n" 2>&1
    make -n -C "$DDM_TOP_BUILDDIR" install-data DESTDIR="$dest" >"$T_TMP/install-data.n" 2>&1
    mod_dir=$(t_install_dir "$la")
    bin_dir=$(t_install_dir ddmon)
    [ -n "$mod_dir" ] && [ -n "$bin_dir" ] && ! grep -qF "$base.la" "$T_TMP/install-data.n" \
        && t_ok "make install-exec installs the module (into $mod_dir) with the binary (into $bin_dir), install-data not" \
        || t_fail "make install-exec installs the module with the binary, install-data not" \
            "module: '$mod_dir', binary: '$bin_dir'" "$(grep -cF "$base.la" "$T_TMP/install-data.n") install-data lines"
    mkdir -p "$dest$mod_dir" "$dest$bin_dir"
    (cd "$DDM_TOP_BUILDDIR" && ./libtool --mode=install install -c "$la" "$dest$mod_dir" \
        && ./libtool --mode=install install -c ddmon "$dest$bin_dir") >"$T_TMP/install.out" 2>&1
    installed=$(cd "$dest" && find . -name "$base.so" | head -1)
    installed=${installed#.}
    T_INST_DDMON=$(cd "$dest" && find . -path '*/bin/ddmon' | head -1)
    T_INST_DDMON=${T_INST_DDMON#.}
    [ -n "$installed" ] && [ -n "$looked" ] && [ "$installed" = "$looked" ] \
        && t_ok "installed by that rule's libtool command under DESTDIR, the module is at $looked, where the binary looks" \
        || t_fail "installed by that rule's libtool command under DESTDIR, the module is where the binary looks" \
            "installed '$installed', looked for '$looked'" "$(tail -5 "$T_TMP/install.out")"
    mode=$([ -n "$installed" ] && stat -c %a "$dest$installed" 2>/dev/null) # not DESTDIR itself
    [ -n "$mode" ] && [ $((8#$mode & 8#022)) -eq 0 ] \
        && t_ok "the installed module is writable by its owner alone (mode $mode)" \
        || t_fail "the installed module is writable by its owner alone" "$(ls -l "$dest$installed" 2>&1)"
}
# t_installed_runnable LIBDIR: whether the binary t_install_module
# installed can run with DEST's LIBDIR shown at LIBDIR by a private mount
# namespace: root, unshare -m allowed, LIBDIR on this machine, a binary
# installed.
t_installed_runnable() {
    [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && [ -d "$1" ] && [ -n "$T_INST_DDMON" ] \
        && unshare -m true 2>/dev/null
}
