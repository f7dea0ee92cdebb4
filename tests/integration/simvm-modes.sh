#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ddmon-simvm's modes, checked with simvm-probe (C, no python): ART sends
# no reply when it has nothing to say, Dalvik an empty one; malformed
# requests get FAIL; THEN gives a THCR per thread; the draft's THST
# interval pushes THST events; an APNM racing ahead of the echo; WAIT until
# a non-DDM command; a rename after start; ZLIB-wrapped chunks; churn;
# --no-tcp. A stray word on its command line is a usage error (exit 2).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
PROBE="$DDM_TOP_BUILDDIR/tools/simvm/simvm-probe"
t_plan 14

start() { # start NAME ARGS...: a simvm with its own port file; sets PORT (first VM)
    local name=$1; shift
    "$SIMVM" --base-port 0 --port-file "$T_TMP/$name.ports" --state-file "$T_TMP/$name.json" "$@" \
        >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    T_PIDS+=("$!")
    t_wait 10 test -s "$T_TMP/$name.ports" || return 1
    PORT=$(head -1 "$T_TMP/$name.ports" | cut -d' ' -f2)
}
has() { grep -q -- "$2" "$T_TMP/$1"; }
check() { # check DESC FILE PATTERN...
    local desc=$1 f=$2 p; shift 2
    for p in "$@"; do
        has "$f" "$p" || { t_fail "$desc" "missing: $p" "$(sed 's/^/  /' "$T_TMP/$f")"; return; }
    done
    t_ok "$desc"
}

REQS=(-r THEN:01 -r THST -r STKL:00000001 -r STKL:0000ffff -r STKL -r HPIF:07 -r XXXX -r HPGC -j 1/7 -j 16/1)

start art --vms 1 --threads 14 --thread-activity 0 --seed 3 || t_fail "art simvm starts"
"$PROBE" -p "$PORT" "${REQS[@]}" >"$T_TMP/art.probe" 2>&1
check "ART: no reply for THEN, unknown types and HPGC" art.probe \
    '^reply.1.THEN=none$' '^reply.7.XXXX=none$' '^reply.8.HPGC=none$'
check "ART: THST table, STKL frames, FAILs for bad requests" art.probe \
    '^reply.2.THST=THST:14$' '^reply.3.STKL=STKL:' '^reply.4.STKL=FAIL:1:Stack trace unavailable$' \
    '^reply.5.STKL=FAIL:1:' '^reply.6.HPIF=FAIL:1:Unsupported HPIF what$'
check "THEN(1) sends a THCR for every thread" art.probe '^event.THCR=14$'
check "plain JDWP: IDSizes answered, other sets NOT_IMPLEMENTED" art.probe \
    '^reply.9.jdwp1_7=ok:20$' '^reply.10.jdwp16_1=error:99$'

start dalvik --vms 1 --mode dalvik --thread-activity 0 || t_fail "dalvik simvm starts"
"$PROBE" -p "$PORT" "${REQS[@]}" >"$T_TMP/dalvik.probe" 2>&1
check "Dalvik: empty replies where ART sends none" dalvik.probe \
    '^reply.1.THEN=empty$' '^reply.7.XXXX=empty$' '^reply.8.HPGC=empty$' '^vm=Dalvik'

"$PROBE" -p "$PORT" -r THST:000000c8 -l 1100 >"$T_TMP/interval.probe" 2>&1
n=$(sed -n 's/^event.THST=//p' "$T_TMP/interval.probe")
[ "${n:-0}" -ge 3 ] && t_ok "the draft's THST interval form pushes THST events" \
    || t_fail "the draft's THST interval form pushes THST events" "$(cat "$T_TMP/interval.probe")"

start race --vms 1 --apnm-before-echo --wait-for-debugger || t_fail "race simvm starts"
"$PROBE" -p "$PORT" -r FEAT -j 1/1 >"$T_TMP/race.probe" 2>&1
check "an APNM before the echo; WAIT with HELO" race.probe '^discarded-before-echo=1$' '^event.WAIT=1$' \
    '^reply.2.jdwp1_1=ok:'
t_wait 5 grep -q '"debugger_active" : true' "$T_TMP/race.json" &&
    grep -q '"waiting" : false' "$T_TMP/race.json" && t_ok "a non-DDM command ends WAIT" ||
    t_fail "a non-DDM command ends WAIT" "$(grep -E 'waiting|debugger' "$T_TMP/race.json")"

start rename --vms 1 --rename-after 1500 --app com.example.renamed || t_fail "rename simvm starts"
"$PROBE" -p "$PORT" --expect-app '<pre-initialized>' -l 2500 >"$T_TMP/rename.probe" 2>&1
check "<pre-initialized> at HELO, then an APNM with the real name" rename.probe \
    '^app=<pre-initialized>$' '^event.APNM=1$'
t_wait 5 grep -q ' com.example.renamed art$' "$T_TMP/rename.ports" && t_ok "the port file follows the rename" \
    || t_fail "the port file follows the rename" "$(cat "$T_TMP/rename.ports")"

start zlib --vms 1 --zlib --two-heaps || t_fail "zlib simvm starts"
"$PROBE" -p "$PORT" -r HPSG:0100 -r HPIF:03 -r HPGC -r THST >"$T_TMP/zlib.probe" 2>&1
check "ZLIB-wrapped THST and two heaps of segments" zlib.probe '^reply.4.THST=THST:' '^event.HPST=2$' \
    '^event.HPEN=2$' '^event.HPIF=1$'

start churn --vms 4 --churn 300 || t_fail "churn simvm starts"
cp "$T_TMP/churn.ports" "$T_TMP/churn.before"
sleep 1.5
if ! cmp -s "$T_TMP/churn.before" "$T_TMP/churn.ports" && [ "$(wc -l <"$T_TMP/churn.ports")" = 4 ]; then
    t_ok "churn replaces VMs and keeps their number"
else
    t_fail "churn replaces VMs and keeps their number" "$(cat "$T_TMP/churn.before" "$T_TMP/churn.ports")"
fi

start notcp --vms 2 --no-tcp || t_fail "no-tcp simvm starts"
[ "$(cut -d' ' -f2 "$T_TMP/notcp.ports" | sort -u)" = 0 ] && t_ok "--no-tcp VMs have no port" \
    || t_fail "--no-tcp VMs have no port" "$(cat "$T_TMP/notcp.ports")"

# A stray word is refused, not ignored (timeout: a simvm that took it would run on).
timeout 10 "$SIMVM" extra --exit-after 100 --base-port 0 --no-tcp >"$T_TMP/stray.out" 2>"$T_TMP/stray.err"; rc=$?
[ $rc -eq 2 ] && grep -q "unexpected argument 'extra'" "$T_TMP/stray.err" \
    && t_ok "a stray argument is a usage error (exit 2)" \
    || t_fail "a stray argument is a usage error (exit 2)" "rc=$rc" "$(cat "$T_TMP/stray.err")"
exit 0
