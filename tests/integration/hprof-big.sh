#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A heap dump of 2 GiB (and 4 KiB) through the real ddmon and ddmon-simvm: it lands with
# the simulator's sha256, and the server's resident memory stays flat while
# it streams: the peak VmRSS (sampled from /proc every 20 ms) is at most
# 16 MiB above what it was before the dump. The dump is one JDWP packet of
# 2 GiB, eight times ddmon's --max-packet: only the chunk stream can take it.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins hprof || t_skip_all "the hprof plugin was configured out"
size=${DDM_HPROF_BIG_SIZE:-2147487744} # just past 2 GiB: no 31-bit length survives
avail=$(df -P --block-size=1 "$T_TMP" | awk 'NR==2{print $4}')
[ "$avail" -gt $((size + size / 2)) ] || t_skip_all "not enough disk space in $T_TMP for a $size-byte dump"
t_plan 3
chmod 700 "$T_TMP"

t_start_simvm --vms 1 --app hp.huge --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --hprof-size "$size" --gc-every 0 --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base 0 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q ' ready '"
sleep 1
t_rss_sample_start "$DDMON_PID" 0.02
t_ddmon --no-autostart hprof hp.huge "$T_TMP/huge.hprof" --json >"$T_TMP/huge.json" 2>&1; rc=$?
t_rss_sample_stop
before=$T_RSS_BEFORE peak=$T_RSS_PEAK
truth() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vms"][0]["hprof"]["last"][sys.argv[2]])' "$T_TMP/truth.json" "$1"; }
t_wait 5 t_is "$size" truth bytes
[ $rc = 0 ] && [ "$(stat -c %s "$T_TMP/huge.hprof")" = "$size" ] \
    && t_ok "a $size-byte dump lands whole" || t_fail "a $size-byte dump lands whole" "$(cat "$T_TMP/huge.json")"
got=$(sha256sum "$T_TMP/huge.hprof" | awk '{print $1}')
[ "$got" = "$(truth sha256)" ] && grep -q "$got" "$T_TMP/huge.json" \
    && t_ok "... with the simulator's sha256 (and ddmon's own says the same)" \
    || t_fail "... with the simulator's sha256 (and ddmon's own says the same)" "file $got truth $(truth sha256)" "$(cat "$T_TMP/huge.json")"
extra=$(( (peak - before) / 1024 ))
[ $(( peak - before )) -le $(( 16 * 1024 )) ] \
    && t_ok "the server's RSS stays flat: +$extra MiB at the peak (before: $((before / 1024)) MiB)" \
    || t_fail "the server's RSS stays flat: +$extra MiB at the peak (before: $((before / 1024)) MiB)"
rm -f "$T_TMP/huge.hprof"
