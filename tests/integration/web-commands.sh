#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web API's live stream and plugin commands against ddmon-simvm
# (web_commands.py): the stream's first events and changes, GC filling the
# heap bitmap (a PNG), an HPROF dump run from the web and downloaded byte
# for byte, a trace with arguments (when the profile plugin is built), the
# downloads that are refused, the cap on streams, a client
# that does not read dropped while the server goes on answering.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
grep -q '^#define HAVE_HTTP 1' "$DDM_TOP_BUILDDIR/build-config.h" ||
    t_skip_all "ddmon was built --without-http (no libsoup 3)"
t_have_plugins threads vminfo heap hprof || t_skip_all "the threads, vminfo, heap and hprof plugins were not built"
t_plan 46

base=$(t_free_ports 1) || t_skip_all "no free ports"
t_start_simvm --vms 1 --base-port "$base" --port-file "$T_TMP/ports" --seed 5
t_wait 10 test -s "$T_TMP/ports" && t_ok "simvm started" || t_fail "simvm started" "$(cat "$T_TMP/simvm.err")"
range=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$range" --http=127.0.0.1:0 \
    && t_ok "server started" || t_fail "server started" "$(cat "$T_TMP/server.err")"
url=$(t_web_url "$T_TMP/server.err")
key=$(awk 'NR==1 {print "127.0.0.1:" $2}' "$T_TMP/ports")
t_wait 10 t_is ready t_vm_field "$key" state && t_ok "the VM is ready" \
    || t_fail "the VM is ready" "$(cat "$T_TMP/dp.json")"

timeout 240 python3 "$DDM_TOP_SRCDIR/tests/integration/web_commands.py" "$url" "$key" "$T_TMP" \
    "$T_TMP/server.err" \
    >"$T_TMP/cmd.out" 2>"$T_TMP/cmd.err" || t_diag "$T_TMP/cmd.err"
while read -r verdict rest; do
    case $verdict in
    PASS) t_ok "$rest" ;;
    FAIL) t_fail "${rest%% -- *}" "${rest#* -- }" ;;
    *) t_fail "web_commands.py output" "$verdict $rest" ;;
    esac
done <"$T_TMP/cmd.out"
# The run directories are the server's: gone when it stops.
dl="$T_TMP/ddmon.downloads"
[ -d "$dl" ] && t_ok "commands write under the socket's directory ($dl)" || t_fail "commands write under the socket's directory" "$(ls -la "$T_TMP")"
t_stop "$DDMON_PID"
[ ! -e "$dl" ] && t_ok "the downloads are removed when the server stops" \
    || t_fail "the downloads are removed when the server stops" "$(ls -laR "$dl")"
exit 0
