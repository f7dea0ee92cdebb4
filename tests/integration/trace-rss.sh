#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A 10-second sampling trace of about 40 MB (ddmon-simvm --trace-rate
# 4000000, --buffer 64M) through the real ddmon: it lands with the
# simulator's sha256, and the server's resident memory stays flat while the
# trace runs and streams in: the peak VmRSS (sampled from /proc every
# 50 ms) is at most 16 MiB above what it was before the trace. The MPSE
# event is one JDWP packet far larger than --max-packet: only the chunk
# stream can take it, and the decoder keeps no record. (Measured under ASan:
# +0 MiB; before 2952dcc the JDWP reader's freed buffers filled ASan's
# quarantine: +41 MiB.)
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile || t_skip_all "the profile plugin was configured out"
avail=$(df -P --block-size=1 "$T_TMP" | awk 'NR==2{print $4}')
[ "$avail" -gt 200000000 ] || t_skip_all "not enough disk space in $T_TMP for a 40 MB trace"
t_plan 3
chmod 700 "$T_TMP"
t_start_simvm --vms 1 --app tr.big --base-port 0 --port-file "$T_TMP/ports" --state-file "$T_TMP/truth.json" \
    --trace-rate 4000000 --gc-every 0 --thread-activity 0
t_wait 10 test -s "$T_TMP/ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/ports")" --selected-port 0 \
    --debug-port-base 0 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
t_wait 15 sh -c "'$DDMON' --socket '$T_TMP/ddmon.sock' --no-autostart vms 2>/dev/null | grep -q ' ready '"
sleep 1
t_rss_sample_start "$DDMON_PID" 0.05 "$T_TMP/rss.log"
t_ddmon --no-autostart trace tr.big "$T_TMP/big.trace" --sampling=100 --seconds 10 --buffer 64M \
    --json >"$T_TMP/big.json" 2>&1; rc=$?
t_rss_sample_stop
before=$T_RSS_BEFORE peak=$T_RSS_PEAK
truth() { python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["vms"][0]["profiling"]["last"]; print(l[sys.argv[2]] if l else None)' "$T_TMP/truth.json" "$1"; }
t_wait 5 t_is sampling truth kind
size=$(stat -c %s "$T_TMP/big.trace" 2>/dev/null || echo 0)
[ $rc = 0 ] && [ "$size" = "$(truth bytes)" ] && [ "$size" -gt 30000000 ] \
    && t_ok "a 10-second sampling trace of $size bytes lands whole" \
    || t_fail "a 10-second sampling trace lands whole (over 30 MB)" "rc $rc size $size truth $(truth bytes)" "$(cat "$T_TMP/big.json")"
[ "$(sha256sum "$T_TMP/big.trace" | awk '{print $1}')" = "$(truth sha256)" ] \
    && t_ok "... with the simulator's sha256" || t_fail "... with the simulator's sha256"
extra=$(( (peak - before) / 1024 ))
[ $(( peak - before )) -le $(( 16 * 1024 )) ] \
    && t_ok "the server's RSS stays flat: +$extra MiB at the peak (before: $((before / 1024)) MiB; bound 16 MiB)" \
    || t_fail "the server's RSS stays flat: +$extra MiB at the peak (before: $((before / 1024)) MiB; bound 16 MiB)"
rm -f "$T_TMP/big.trace"
# An if, not `[ ] && cp`: as the last command that would make the script exit 1
# (an ERROR for the TAP driver) whenever the variable is unset.
if [ -n "${DDM_KEEP_RSS_LOG:-}" ]; then cp "$T_TMP/rss.log" "$DDM_KEEP_RSS_LOG"; fi
