#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A FIFO where a plugin opens a file never blocks the server's main loop:
# `trace-summary FIFO`, and a FIFO named FILE.part for `trace`, `ui capture`
# and `hprof` (the streamed payload's .part), each get a clear "not a
# regular file" (or "no such device") error, the FIFO is left alone, and
# the server still answers at once and still stops on SIGTERM (lib.sh's
# cleanup fails the test if it does not). Before plugins/common/partfile.c
# the open of a FIFO waited for a writer/reader forever.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile viewdebug hprof || t_skip_all "profile, viewdebug or hprof was configured out"
t_plan 8
chmod 700 "$T_TMP"

t_start_simvm --vms 1 --app fifo.app --base-port 0 --port-file "$T_TMP/s.ports" \
    --state-file "$T_TMP/s.json" --gc-every 0 --thread-activity 0 --seed 11
t_wait 10 test -s "$T_TMP/s.ports"
t_start_server --scan=local --scan-ports "$(t_simvm_ports "$T_TMP/s.ports")" --selected-port 0 \
    --debug-port-base 0 --request-timeout 3000 || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && grep -q ' ready ' "$T_TMP/vms.txt"; }
t_wait 20 ready || t_diag "$T_TMP/vms.txt"

# run NAME ARGS...: the command, at most 20 s (a blocked server never answers)
run() { local n=$1; shift; command timeout -k 5 20 "$DDMON" --socket "$T_TMP/ddmon.sock" \
    --plugin-dir "$PLUGINDIR" --no-adb-start --no-autostart "$@" >"$T_TMP/$n.out" 2>&1; }
# responsive: the server answers `vms` within 5 s
responsive() { command timeout -k 2 5 "$DDMON" --socket "$T_TMP/ddmon.sock" --plugin-dir "$PLUGINDIR" \
    --no-adb-start --no-autostart vms >/dev/null 2>&1; }
# check DESC NAME RC: a refusal (exit 1-3, not the timeout's 124) naming the
# problem, the FIFO still there, and the server answering afterwards
check() {
    local desc=$1 n=$2 rc=$3 fifo=$4
    if [ "$rc" != 124 ] && [ "$rc" != 0 ] && [ "$rc" != 137 ] \
        && grep -qE "not a regular file|No such device" "$T_TMP/$n.out" && [ -p "$fifo" ] && responsive; then
        t_ok "$desc: refused at once ($(head -c 160 "$T_TMP/$n.out" | tr '\n' ' '))"
    else
        t_fail "$desc: refused at once, the server still answers" "rc=$rc $(cat "$T_TMP/$n.out")"
    fi
}

mkfifo "$T_TMP/in.trace"
run sum trace-summary "$T_TMP/in.trace"; check "trace-summary FIFO" sum $? "$T_TMP/in.trace"

mkfifo "$T_TMP/t.trace.part"
run tr trace fifo.app "$T_TMP/t.trace" --tracing --seconds 1; check "trace FILE with a FIFO FILE.part (no reader)" tr $? "$T_TMP/t.trace.part"
# a FIFO with a reader opens without blocking: the fstat check refuses it
exec 7<>"$T_TMP/t.trace.part"
run tr2 trace fifo.app "$T_TMP/t.trace" --tracing --seconds 1; check "trace FILE with a FIFO FILE.part that has a reader" tr2 $? "$T_TMP/t.trace.part"
exec 7>&-

mkfifo "$T_TMP/c.png.part"
run cap ui fifo.app capture 0 fifo.app:id/fab "$T_TMP/c.png"; check "ui capture FILE with a FIFO FILE.part" cap $? "$T_TMP/c.png.part"

mkfifo "$T_TMP/h.hprof.part"
run hp hprof fifo.app "$T_TMP/h.hprof"; check "hprof FILE with a FIFO FILE.part (O_RDWR opens a FIFO at once)" hp $? "$T_TMP/h.hprof.part"

[ ! -e "$T_TMP/t.trace" ] && [ ! -e "$T_TMP/c.png" ] && [ ! -e "$T_TMP/h.hprof" ] \
    && t_ok "no FILE was written" || t_fail "no FILE was written" "$(ls -l "$T_TMP")"
# the plugins still work after the refusals
run ok trace fifo.app "$T_TMP/ok.trace" --tracing --seconds 1; rc=$?
[ $rc = 0 ] && [ -s "$T_TMP/ok.trace" ] && [ ! -e "$T_TMP/ok.trace.part" ] \
    && t_ok "a trace to a plain file still works afterwards" || t_fail "a trace to a plain file still works afterwards" "rc=$rc $(cat "$T_TMP/ok.out")"
responsive && t_ok "the server answers at the end" || t_fail "the server answers at the end"
