#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two stack commands given the other kind of VM, or a thread that is
# not there, say what happened and the way on, naming the VM: `stack` on a
# plain JVM is refused as one (not "STKL not sent: the VM is not ready for
# DDM requests") and points at jvm-stack; `jvm-stack` on a DDM VM fails
# (exit 1, not 3: a VM matched) pointing at stack; `jvm-stack` with a
# thread the JVM does not have names the VM and the thread (not "threads
# in this JVM (15)"). simvm: one ART VM and one plain JVM.
# No relay: its ports (the kernel's, port 0) could fall in the scan range
# of another test's server running at the same time, which then attaches
# to them as a debugger, and jvm-stack leaves a JVM with a debugger alone
# (seen in CI).
. "$DDM_TOP_SRCDIR/tests/integration/lib.sh"
t_have_plugins threads jvm || t_skip_all "the threads or jvm plugin was configured out"
t_plan 4
q="$DDM_TOP_SRCDIR/tests/integration/viewq.py"

base=$(t_free_ports 2) || t_skip_all "no free ports"
t_start_simvm --vms 1 --jvm-vms 1 --base-port "$base" --port-file "$T_TMP/ports" --thread-activity 0
t_wait 10 test "$(grep -c . "$T_TMP/ports" 2>/dev/null)" = 2
ports=$(t_simvm_ports "$T_TMP/ports")
t_start_server --scan=local --scan-ports "$ports" --no-relay \
    || t_fail "server started" "$(tail -5 "$T_TMP/server.err")"
ready() {
    t_ddmon --no-autostart vms --json >"$T_TMP/vms.json" &&
        python3 "$q" rows "$T_TMP/vms.json" vms | grep -q '"state": "ready"' &&
        python3 "$q" rows "$T_TMP/vms.json" vms | grep -q '"state": "plain"'
}
t_wait 15 ready && t_ok "the DDM VM and the plain JVM are up" || t_fail "the DDM VM and the plain JVM are up" "$(cat "$T_TMP/vms.json")"
ddm_pid=$(awk '$4 != "jvm" {print $1; exit}' "$T_TMP/ports")
jvm_key=127.0.0.1:$(awk '$4 == "jvm" {print $2; exit}' "$T_TMP/ports")

out=$(t_ddmon --no-autostart stack "$jvm_key" 1 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qF "VM $jvm_key is a plain JVM" && echo "$out" | grep -qF "jvm-stack $jvm_key" \
    && t_ok "stack on a plain JVM: refused as one, pointing at jvm-stack" \
    || t_fail "stack on a plain JVM: refused as one, pointing at jvm-stack" "rc=$rc" "$out"

out=$(t_ddmon --no-autostart jvm-stack "$jvm_key" no-such-thread --suspend 2>&1); rc=$?
[ $rc = 3 ] && echo "$out" | grep -qF "VM $jvm_key has no thread 'no-such-thread'" \
    && t_ok "jvm-stack with a thread the JVM lacks names the VM and the thread" \
    || t_fail "jvm-stack with a thread the JVM lacks names the VM and the thread" "rc=$rc" "$out"

out=$(t_ddmon --no-autostart jvm-stack "$ddm_pid" 1 --suspend 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qF "VM $ddm_pid speaks DDM" && echo "$out" | grep -qF "ddmon stack $ddm_pid" \
    && t_ok "jvm-stack on a DDM VM: exit 1, pointing at stack" \
    || t_fail "jvm-stack on a DDM VM: exit 1, pointing at stack" "rc=$rc" "$out"
t_ddmon --no-autostart kill-server >/dev/null 2>&1
exit 0
