# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the integration tests (sourced, not run): TAP output,
# free ports, starting ddmon-simvm / ddmon / real JVMs with cleanup, and
# waiting for conditions with a deadline. Every test runs with a private
# control socket and private ports, so it never touches a user's ddmon.

set -u
: "${DDM_TOP_BUILDDIR:?run under make check}"
: "${DDM_TOP_SRCDIR:?run under make check}"
DDMON="$DDM_TOP_BUILDDIR/ddmon"
SIMVM="$DDM_TOP_BUILDDIR/ddmon-simvm"
PLUGINDIR="$DDM_TOP_BUILDDIR/plugins"
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddmon-it.XXXXXX")
T_PIDS=()
T_N=0
T_FAILED=0

t_plan() { echo "1..$1"; }
t_ok() { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
t_fail() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $1"; shift; for l in "$@"; do echo "# $l"; done; }
t_skip_all() { echo "1..0 # SKIP $1"; exit 0; }
t_check() { # t_check DESC COMMAND...
    local desc=$1; shift
    if "$@"; then t_ok "$desc"; else t_fail "$desc" "command failed: $*"; fi
}
t_diag() { sed 's/^/# /' "$@" 2>/dev/null || true; }

t_cleanup() {
    local p
    for p in "${T_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    sleep 0.2
    for p in "${T_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$T_TMP"
}
trap t_cleanup EXIT

# A TCP port free on 127.0.0.1 now (best effort), from 20000-31999: below the
# kernel's ephemeral range (32768 and up), where outgoing connections would
# take "free" ports at random.
t_free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$(( (RANDOM % 12000) + 20000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    done
    return 1
}
# N consecutive free ports; prints the first.
t_free_ports() {
    local n=$1 base ok i
    for _ in $(seq 1 100); do
        base=$(( (RANDOM % 12000) + 20000 )); ok=1
        for i in $(seq 0 $((n - 1))); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$((base + i))") 2>/dev/null; then ok=0; break; fi
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}

# t_wait SECONDS COMMAND...: retry COMMAND every 0.1 s until it succeeds.
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
t_start_jvm() { # t_start_jvm PORT SUSPEND(y|n) CLASS [args]
    local port=$1 suspend=$2 cls=$3; shift 3
    java -agentlib:jdwp=transport=dt_socket,server=y,suspend="$suspend",address=127.0.0.1:"$port" \
        -cp "$T_TMP/java" "$cls" "$@" >"$T_TMP/jvm-$port.out" 2>"$T_TMP/jvm-$port.err" &
    JVM_PID=$!
    T_PIDS+=("$JVM_PID")
}

# Extract with a tiny JSON query: t_json FILE EXPR (python3 is not guaranteed:
# use grep-friendly checks where possible). Returns the file's content.
t_has() { grep -q -- "$2" "$1"; }
# Wait until a JVM started by t_start_jvm listens (its agent prints a line).
t_wait_jvm() { t_wait "${2:-20}" grep -q "Listening for transport dt_socket" "$T_TMP/jvm-$1.out"; }
# True once process PID has exited.
t_dead() { ! kill -0 "$1" 2>/dev/null; }

# The relay port of VM KEY as the server lists it ("" when none). Needs a server.
t_debug_port() {
    t_ddmon --no-autostart vms --json >"$T_TMP/dp.json" 2>/dev/null || return 1
    python3 - "$T_TMP/dp.json" "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
def views(d):
    if isinstance(d, dict):
        if d.get("name") == "vms" and "rows" in d: yield d
        for v in d.values(): yield from views(v)
    elif isinstance(d, list):
        for v in d: yield from views(v)
for v in views(doc):
    cols = [c["name"] for c in v["columns"]]
    for r in v["rows"]:
        row = dict(zip(cols, r))
        if row.get("key") == sys.argv[2] and row.get("debug port"):
            print(row["debug port"]); sys.exit(0)
sys.exit(1)
PY
}
JDWPC="$DDM_TOP_BUILDDIR/tests/tools/jdwpc"
# The ports ddmon-simvm reports in its port file, as a --scan-ports list "P1,P2,...":
# exactly those (other tests' VMs may listen on ports in between).
t_simvm_ports() { awk '{print $2}' "$1" | sort -n | paste -sd,; }
# t_have_plugins NAME...: TRUE if every named plugin was built (--enable-plugin-NAME=no
# leaves it out; tests of its views then skip instead of failing).
t_have_plugins() { local p; for p in "$@"; do [ -f "$PLUGINDIR/$p.so" ] || return 1; done; }
