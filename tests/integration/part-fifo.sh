#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A FIFO where a plugin opens a file never blocks the server's main loop:
# `trace-summary FIFO`, and a FIFO named FILE.part for `trace`, `ui capture`
# and `hprof` (the streamed payload's .part), each get a clear "not a
# regular file" (or "no such device") error, the FIFO is left alone, and
# the server still answers at once and still stops on SIGTERM (lib.sh's
# cleanup fails the test if it does not). Before plugins/common/partfile.c
# the open of a FIFO waited for a writer/reader forever.
# FILE itself a FIFO (or, as root, a device node made here: never a real
# one) for hprof, trace and ui capture is refused the same way before the
# VM is asked, and left as it was (the finished .part used to be renamed
# onto it). Two dumps to one FILE: the second is refused at once while the
# first (a VM that stalls mid-dump: --hprof-fault lie-long) still holds
# FILE.part, whose bytes it does not touch (it used to truncate them). A
# stale FILE.part (a crash's, mode 0644) is replaced: the dump lands with
# mode 0600.
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins profile viewdebug hprof || t_skip_all "profile, viewdebug or hprof was configured out"
t_plan 14
chmod 700 "$T_TMP"

t_start_simvm --vms 1 --app fifo.app --base-port 0 --port-file "$T_TMP/s.ports" \
    --state-file "$T_TMP/s.json" --gc-every 0 --thread-activity 0 --seed 11
# a VM whose dump stalls before its end: its FILE.part stays held until the
# request timeout (10 s) closes it
t_start_simvm --vms 1 --app stall.app --base-port 0 --port-file "$T_TMP/l.ports" \
    --hprof-fault lie-long --gc-every 0 --thread-activity 0 --seed 12
t_wait 10 test -s "$T_TMP/s.ports"
t_wait 10 test -s "$T_TMP/l.ports"
t_start_server --scan=local --scan-ports "$(cat "$T_TMP/s.ports" "$T_TMP/l.ports" | awk '{print $2}' | paste -sd,)" \
    --selected-port 0 --debug-port-base 0 --request-timeout 10000 \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() { t_ddmon --no-autostart vms >"$T_TMP/vms.txt" 2>&1 && [ "$(grep -c ' ready ' "$T_TMP/vms.txt")" = 2 ]; }
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

# FILE itself a FIFO: refused before the VM works, the FIFO left alone
mkfifo "$T_TMP/f.hprof" "$T_TMP/f.trace" "$T_TMP/f.png"
run hpf hprof fifo.app "$T_TMP/f.hprof"; check "hprof FILE that is a FIFO" hpf $? "$T_TMP/f.hprof"
run trf trace fifo.app "$T_TMP/f.trace" --tracing --seconds 1; check "trace FILE that is a FIFO" trf $? "$T_TMP/f.trace"
run capf ui fifo.app capture 0 fifo.app:id/fab "$T_TMP/f.png"; check "ui capture FILE that is a FIFO" capf $? "$T_TMP/f.png"

# FILE a character device (our own node, like /dev/null): not replaced
if [ "$(id -u)" = 0 ] && mknod "$T_TMP/mynull" c 1 3 2>/dev/null; then
    run hpd hprof fifo.app "$T_TMP/mynull"; rc=$?
    if [ $rc != 0 ] && [ $rc != 124 ] && grep -q "not a regular file" "$T_TMP/hpd.out" \
        && [ -c "$T_TMP/mynull" ] && [ "$(stat -c %t,%T "$T_TMP/mynull")" = 1,3 ] && [ ! -e "$T_TMP/mynull.part" ]; then
        t_ok "hprof FILE that is a device: refused, the device left alone ($(head -c 160 "$T_TMP/hpd.out"))"
    else
        t_fail "hprof FILE that is a device: refused, the device left alone" "rc=$rc $(cat "$T_TMP/hpd.out")" "$(ls -l "$T_TMP/mynull")"
    fi
else
    t_ok "# SKIP a device node needs root (mknod)"
fi

# two dumps to one FILE: the first stalls holding same.hprof.part
t_ddmon --no-autostart hprof stall.app "$T_TMP/same.hprof" >"$T_TMP/same1.out" 2>&1 &
first=$!
# all of the VM's 2 MiB (simvm's default --hprof-size) have landed: it now
# waits for the 1000 bytes it declared more
t_wait 20 t_is 2097152 stat -c %s "$T_TMP/same.hprof.part"
size1=$(stat -c %s "$T_TMP/same.hprof.part" 2>/dev/null)
run same2 hprof fifo.app "$T_TMP/same.hprof"; rc=$?
size2=$(stat -c %s "$T_TMP/same.hprof.part" 2>/dev/null)
if [ $rc != 0 ] && [ $rc != 124 ] && grep -q "another command is writing" "$T_TMP/same2.out" \
    && kill -0 $first 2>/dev/null && [ -n "$size1" ] && [ "$size1" = "$size2" ] && [ ! -e "$T_TMP/same.hprof" ]; then
    t_ok "a second dump to the same FILE is refused at once; the first one's .part is untouched ($size1 bytes)"
else
    t_fail "a second dump to the same FILE is refused at once; the first one's .part is untouched" \
        "rc=$rc sizes $size1/$size2 $(cat "$T_TMP/same2.out")" "$(ls -l "$T_TMP" | grep same)"
fi
wait $first # the stall ends at the request timeout: a failure, no file
[ ! -e "$T_TMP/same.hprof" ] && [ ! -e "$T_TMP/same.hprof.part" ] || t_diag "$T_TMP/same1.out"

# a stale FILE.part nobody holds (a crash's): replaced, the dump is private
printf 'half a dump from a crash' >"$T_TMP/stale.hprof.part"
chmod 644 "$T_TMP/stale.hprof.part"
run stale hprof fifo.app "$T_TMP/stale.hprof"; rc=$?
if [ $rc = 0 ] && [ "$(stat -c %a "$T_TMP/stale.hprof" 2>/dev/null)" = 600 ] \
    && [ "$(head -c 18 "$T_TMP/stale.hprof")" = "JAVA PROFILE 1.0.3" ] && [ ! -e "$T_TMP/stale.hprof.part" ]; then
    t_ok "a stale FILE.part is replaced: the dump lands, mode 600"
else
    t_fail "a stale FILE.part is replaced: the dump lands, mode 600" "rc=$rc $(cat "$T_TMP/stale.out")" "$(ls -l "$T_TMP" | grep stale)"
fi

[ ! -e "$T_TMP/t.trace" ] && [ ! -e "$T_TMP/c.png" ] && [ ! -e "$T_TMP/h.hprof" ] \
    && t_ok "no FILE was written" || t_fail "no FILE was written" "$(ls -l "$T_TMP")"
# the plugins still work after the refusals
run ok trace fifo.app "$T_TMP/ok.trace" --tracing --seconds 1; rc=$?
[ $rc = 0 ] && [ -s "$T_TMP/ok.trace" ] && [ ! -e "$T_TMP/ok.trace.part" ] \
    && t_ok "a trace to a plain file still works afterwards" || t_fail "a trace to a plain file still works afterwards" "rc=$rc $(cat "$T_TMP/ok.out")"
responsive && t_ok "the server answers at the end" || t_fail "the server answers at the end"
