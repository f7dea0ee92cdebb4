#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web part is a module (ddmon-web.so, web/module.h) that the server
# loads only for --http or --metrics (doc/web.md, "How the web part is
# loaded"): the ddmon binary does not link libsoup; a server without them
# maps none of libsoup (/proc/PID/maps); one with --http maps the build
# tree's module and serves the API, one with --metrics only serves
# /metrics; a ddmon outside its build tree with no module installed fails
# at start with one message naming the file it looked for and starts
# nothing. `make install-exec` installs the module (not install-data) at
# that very path: its rules are read with `make -n` and the module and
# binary installed by libtool under DESTDIR, so nothing is rebuilt under
# the other tests; as root with unshare, the installed binary, with the installed
# tree mounted at its configured place in a private mount namespace,
# loads the installed module and serves. The binary exports exactly the
# core functions listed in web/binary-exports.list, and a plugin that asks
# for one (tests/plugins/core-ref.c) is refused before dlopen. A ddmon
# built --without-http refuses --http and --metrics before it starts.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
if ! grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h"; then
    # Built --without-http: --http and --metrics fail before anything starts.
    t_plan 2
    for opt in --http --metrics; do
        timeout 10 "$DDMON" --socket "$T_TMP/nohttp.sock" --no-adb-start --scan=none server --foreground \
            "$opt=127.0.0.1:0" >"$T_TMP/nohttp.out" 2>"$T_TMP/nohttp.err"
        rc=$? # 124: it started (and served) instead of refusing: a failure
        if [ $rc -eq 1 ] && [ "$(cat "$T_TMP/nohttp.err")" = "ddmon: $opt needs a ddmon built with libsoup 3 (not --without-http)" ] \
            && [ ! -e "$T_TMP/nohttp.sock" ]; then
            t_ok "a --without-http ddmon refuses $opt with one line, before it listens"
        else
            t_fail "a --without-http ddmon refuses $opt with one line, before it listens" "status $rc" "$(cat "$T_TMP/nohttp.err")"
        fi
    done
    exit 0
fi
if [ ! -f "$DDM_TOP_BUILDDIR/web/.libs/ddmon-web.so" ]; then
    # Building ddmon builds the module (cli/local.mk): a missing one is a bug.
    t_plan 1
    t_fail "the web module of this HTTP build exists" \
        "no $DDM_TOP_BUILDDIR/web/.libs/ddmon-web.so (make web/ddmon-web.la)"
    exit 1
fi
t_plan 26

# GET URL [TOKEN]: prints the HTTP status, then the body's first 200 bytes.
http_get() {
    python3 - "$@" <<'EOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 2:
    req.add_header("Authorization", "Bearer " + sys.argv[2])
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        print(r.status); print(r.read(200).decode("utf-8", "replace"))
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("error", e)
EOF
}
maps_has() { grep -q -- "$2" "/proc/$1/maps"; }
NM=${NM:-nm} # from the environment (e.g. llvm-nm), else nm

# 1. The binary itself does not need libsoup.
if readelf -d "$DDMON" | grep NEEDED | grep -q libsoup; then
    t_fail "the ddmon binary does not link libsoup" "$(readelf -d "$DDMON" | grep NEEDED)"
else
    t_ok "the ddmon binary does not link libsoup (readelf -d: no NEEDED libsoup)"
fi
readelf -d "$DDM_TOP_BUILDDIR/web/.libs/ddmon-web.so" | grep NEEDED | grep -q 'libsoup-3' \
    && t_ok "the module links libsoup 3" || t_fail "the module links libsoup 3"

# 1b. The binary exports the listed core functions and no other ddm_ one,
# and a plugin that calls one of them is refused, naming it, before dlopen.
listed=$(sed -n 's/^[[:space:]]*\(ddm_[A-Za-z0-9_]*\);.*/\1/p' "$DDM_TOP_SRCDIR/web/binary-exports.list" | sort)
exported=$($NM -D --defined-only "$DDMON" | awk '{print $NF}' | grep '^ddm_' | sort)
[ -n "$listed" ] && [ "$listed" = "$exported" ] \
    && t_ok "ddmon exports exactly the $(echo "$listed" | wc -l) ddm_ functions of web/binary-exports.list" \
    || t_fail "ddmon exports exactly the ddm_ functions of web/binary-exports.list" \
        "$(diff <(echo "$listed") <(echo "$exported") | head -5)"
# web/check-exports.sh says why it cannot check (not "unused names").
ce_libs=()
for l in core server cli tui; do ce_libs+=("$DDM_TOP_BUILDDIR/$l/.libs/libddm$l.a"); done
NM=nonesuch-nm sh "$DDM_TOP_SRCDIR/web/check-exports.sh" "$DDM_TOP_SRCDIR/web/binary-exports.list" \
    "$DDM_TOP_BUILDDIR/web/.libs/ddmon-web.so" "$DDMON" "${ce_libs[@]}" >"$T_TMP/ce1.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cannot run nm: 'nonesuch-nm' not found" "$T_TMP/ce1.out" && ! grep -q unused "$T_TMP/ce1.out" \
    && ! grep -q 'remove them' "$T_TMP/ce1.out" \
    && t_ok "check-exports.sh without nm fails (status 2) saying so" \
    || t_fail "check-exports.sh without nm fails (status 2) saying so" "status $rc" "$(head -3 "$T_TMP/ce1.out")"
sh "$DDM_TOP_SRCDIR/web/check-exports.sh" "$DDM_TOP_SRCDIR/web/binary-exports.list" "$T_TMP/none.so" \
    "$DDMON" "${ce_libs[@]}" >"$T_TMP/ce2.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "none.so does not exist" "$T_TMP/ce2.out" && ! grep -q 'remove them' "$T_TMP/ce2.out" \
    && t_ok "check-exports.sh with no module fails (status 2) naming it" \
    || t_fail "check-exports.sh with no module fails (status 2) naming it" "status $rc" "$(head -3 "$T_TMP/ce2.out")"
core_ref="$DDM_TOP_BUILDDIR/tests/plugins/.libs/core-ref.so"
if [ ! -f "$core_ref" ]; then
    t_ok "a plugin calling an exported core function is refused # SKIP tests/plugins not built (make check)"
    t_ok "... and stops a server that requires it # SKIP as above"
    t_ok "... while the function it calls is exported # SKIP as above"
else
    mkdir -p "$T_TMP/coreref"
    cp "$core_ref" "$T_TMP/coreref/core-ref.so"
    chmod 644 "$T_TMP/coreref/core-ref.so"
    "$DDMON" --check-plugin "$T_TMP/coreref/core-ref.so" >"$T_TMP/cr.out" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q "REFUSED: .*core-ref.so calls 1 function of the ddmon core (ddm_daemon_views), which are not part of the plugin ABI" "$T_TMP/cr.out" \
        && t_ok "--check-plugin refuses a plugin calling a core function, naming it" \
        || t_fail "--check-plugin refuses a plugin calling a core function, naming it" "status $rc" "$(cat "$T_TMP/cr.out")"
    timeout 10 "$DDMON" --socket "$T_TMP/cr.sock" --plugin-dir "$T_TMP/coreref" --plugins core-ref --no-adb-start \
        --scan=none server --foreground >"$T_TMP/crs.out" 2>"$T_TMP/crs.err"
    rc=$? # 124: it started with the plugin instead of refusing it
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && grep -q "ddm_daemon_views" "$T_TMP/crs.err" \
        && t_ok "a server that requires it does not start (status $rc)" \
        || t_fail "a server that requires it does not start" "status $rc" "$(cat "$T_TMP/crs.err")"
    $NM -D --undefined-only "$core_ref" | grep -q ' ddm_daemon_views$' && echo "$exported" | grep -qx ddm_daemon_views \
        && t_ok "... though the function it calls is exported (the refusal, not dlopen, keeps it out)" \
        || t_fail "... though the function it calls is exported" "$($NM -D "$core_ref" | grep ddm_)"
fi

# 1c. The build token is a hash of configure's inputs: the same with or
# without SOURCE_DATE_EPOCH, another one for other CFLAGS.
token_of() { # token_of DIR [ENV...] -- configure ARGS...
    local dir=$T_TMP/$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && env "$@" "$DDM_TOP_SRCDIR/configure" -q --without-http >/dev/null 2>&1 \
        && sed -n 's/^#define DDM_BUILD_TOKEN "\(.*\)"$/\1/p' build-config.h)
}
tok1=$(token_of conf1 CFLAGS=-O2)
tok2=$(token_of conf2 CFLAGS=-O2 SOURCE_DATE_EPOCH=1700000000)
tok3=$(token_of conf3 CFLAGS=-O1 SOURCE_DATE_EPOCH=1700000000)
[ -n "$tok1" ] && [ "$tok1" = "$tok2" ] \
    && t_ok "two configures with the same inputs give one build token ($tok1), SOURCE_DATE_EPOCH or not" \
    || t_fail "two configures with the same inputs give one build token" "'$tok1' '$tok2'"
[ -n "$tok3" ] && [ "$tok3" != "$tok2" ] \
    && t_ok "other CFLAGS give another token ($tok3), with SOURCE_DATE_EPOCH too" \
    || t_fail "other CFLAGS give another token" "'$tok2' '$tok3'"

# 2. No --http, no --metrics: nothing of the web part is mapped.
t_start_server --scan=none && t_ok "a server without --http started" \
    || t_fail "a server without --http started" "$(cat "$T_TMP/server.err")"
t_ddmon --no-autostart vms >/dev/null 2>&1 && t_ok "it answers" || t_fail "it answers"
if ! maps_has "$DDMON_PID" libsoup && ! maps_has "$DDMON_PID" ddmon-web.so; then
    t_ok "it maps neither libsoup nor the web module"
else
    t_fail "it maps neither libsoup nor the web module" "$(grep -E 'soup|ddmon-web' "/proc/$DDMON_PID/maps" | head -3)"
fi
t_ddmon --no-autostart kill-server >/dev/null 2>&1
t_wait 10 t_dead "$DDMON_PID" && t_ok "it stopped" || t_fail "it stopped"

# 3. --http: the build tree's module is loaded and the API serves.
export DDMON_WEB_DIR="$DDM_TOP_SRCDIR/web/static"
"$DDMON" --socket "$T_TMP/http.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    server --foreground --http=127.0.0.1:0 >"$T_TMP/http.out" 2>"$T_TMP/http.err" &
http_pid=$!
T_PIDS+=("$http_pid")
url=$(t_web_url "$T_TMP/http.err")
[ -n "$url" ] && t_ok "a server with --http started ($url)" \
    || t_fail "a server with --http started" "$(cat "$T_TMP/http.err")"
want_mod=$(realpath "$DDM_TOP_BUILDDIR/web/.libs/ddmon-web.so")
if maps_has "$http_pid" libsoup-3 && maps_has "$http_pid" "$want_mod"; then
    t_ok "it maps libsoup 3 and the build tree's module"
else
    t_fail "it maps libsoup 3 and the build tree's module" "$(grep -E 'soup|ddmon-web' "/proc/$http_pid/maps" | head -3)"
fi
base=${url%%\?*}
token=${url#*token=}
out=$(http_get "${base}api/vms" "$token")
[ "$(echo "$out" | head -1)" = 200 ] && echo "$out" | sed -n 2p | grep -q '^[\[{]' \
    && t_ok "GET /api/vms with the token: 200 and JSON" || t_fail "GET /api/vms with the token: 200 and JSON" "$out"
out=$(http_get "${base}api/vms")
[ "$(echo "$out" | head -1)" = 401 ] && t_ok "GET /api/vms without the token: 401" \
    || t_fail "GET /api/vms without the token: 401" "$out"

# 4. --metrics alone loads the module too.
"$DDMON" --socket "$T_TMP/m.sock" --plugin-dir "$PLUGINDIR" --no-adb-start --scan=none \
    server --foreground --metrics=127.0.0.1:0 >"$T_TMP/m.out" 2>"$T_TMP/m.err" &
m_pid=$!
T_PIDS+=("$m_pid")
t_wait 10 grep -q "metrics: http://" "$T_TMP/m.err"
murl=$(grep -o 'metrics: http://[^ ]*' "$T_TMP/m.err" | head -1 | cut -d' ' -f2)
out=$(http_get "$murl")
[ "$(echo "$out" | head -1)" = 200 ] && echo "$out" | grep -q '^# HELP ddmon_' \
    && t_ok "--metrics alone serves /metrics ($murl)" || t_fail "--metrics alone serves /metrics" "$out" "$(cat "$T_TMP/m.err")"

# 5. Outside its build tree and with nothing installed: one clear error.
mkdir -p "$T_TMP/elsewhere"
cp "$DDMON" "$T_TMP/elsewhere/ddmon"
timeout 10 "$T_TMP/elsewhere/ddmon" --socket "$T_TMP/x.sock" --plugin-dir "$PLUGINDIR" --no-adb-start \
    --scan=none server --foreground --http=127.0.0.1:0 >"$T_TMP/x.out" 2>"$T_TMP/x.err"
rc=$? # 124 (137 after -k): it started instead of failing
looked=$(sed -n 's/^ddmon: --http needs the web module, which did not load: cannot load \([^:]*ddmon-web\.so\): .*/\1/p' "$T_TMP/x.err")
if [ -e "$looked" ]; then
    t_ok "a copy outside the build tree fails without the module # SKIP $looked is installed on this machine"
elif [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ -n "$looked" ] && [ "$(wc -l <"$T_TMP/x.err")" -eq 1 ]; then
    t_ok "a copy outside the build tree fails at start with one line naming $looked"
else
    t_fail "a copy outside the build tree fails at start with one line naming the module" "status $rc" "$(cat "$T_TMP/x.err")"
fi
[ ! -e "$T_TMP/x.sock" ] && t_ok "and starts nothing (no socket)" || t_fail "and starts nothing (no socket)"

# 6. make install-exec puts the module where the binary looks for it (with
# the binary: a packager splitting install-exec from install-data gets both).
dest=$T_TMP/dest
t_install_module "$dest" web/ddmon-web.la "$looked"
inst_ddmon=$T_INST_DDMON

# 7. The installed binary loads the installed module (root: a private mount
# namespace shows DESTDIR's lib dir at its configured place).
libdir=$(dirname "$(dirname "$looked")")
if ! t_installed_runnable "$libdir"; then
    t_ok "the installed binary loads the installed module # SKIP needs root, unshare -m and $libdir"
    t_ok "and serves # SKIP as above"
else
    unshare -m bash -c 'mount --bind "$1" "$2" && exec "$3" --socket "$4" --no-adb-start --scan=none \
        --plugin-dir "$5" server --foreground --http=127.0.0.1:0' _ \
        "$dest$libdir" "$libdir" "$dest$inst_ddmon" "$T_TMP/inst.sock" "$PLUGINDIR" \
        >"$T_TMP/inst.out" 2>"$T_TMP/inst.err" &
    inst_pid=$!
    iurl=$(t_web_url "$T_TMP/inst.err")
    # The mount namespace's process is the exec'd ddmon (bash execs it).
    if [ -n "$iurl" ] && grep -q " $looked\$" "/proc/$inst_pid/maps"; then
        t_ok "the installed binary loads the installed module ($looked)"
    else
        t_fail "the installed binary loads the installed module" "$(cat "$T_TMP/inst.err")"
    fi
    ibase=${iurl%%\?*}
    out=$(http_get "${ibase}api/vms" "${iurl#*token=}")
    [ "$(echo "$out" | head -1)" = 200 ] && t_ok "and serves the API" || t_fail "and serves the API" "$out"
    kill -TERM "$inst_pid" 2>/dev/null
    wait "$inst_pid" 2>/dev/null
fi
