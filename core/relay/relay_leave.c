/* SPDX-License-Identifier: Apache-2.0
 *
 * When a debugger leaves (relay-private.h): the VM must go on as if none
 * had come. A DDM VM is sent DBGD and its connection is reopened unless it
 * acknowledges it (a DBGD chunk, the 2007 draft's answer, or an empty
 * reply, success without data; doc/protocol.md); a plain JVM is sent
 * VirtualMachine.Dispose if the debugger did not send it, and is
 * reconnected when its agent closes. Until then a new debugger for the VM
 * is held (RelayVm.leaving).
 */
#include "core/relay/relay-private.h"

#include "core/wire/ddm.h"

#define DBGD_TIMEOUT_MS 1000

static void on_dbgd_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *reply, void *ud)
{
    if (!ddm_vm_is_valid(vm) || vm->state == DDM_VM_STATE_CLOSED)
        return;
    /* A DBGD chunk (the draft's answer) or an empty reply (success without
     * data) acknowledges it. Reopening then would make a VM started with
     * waitForDebugger wait for a debugger again. */
    if ((reply->status == DDM_REPLY_CHUNK && reply->type == DDM_CHUNK_DBGD) || reply->status == DDM_REPLY_EMPTY) {
        relay_vm_log(vm, "relay: VM %s acknowledged DBGD%s; keeping its connection", vm_label(vm),
                  reply->status == DDM_REPLY_EMPTY ? " (empty reply)" : "");
        RelayVm *r = vm->relay;
        if (r) {
            r->leaving = FALSE;
            r->reconnect = FALSE;
            ddm_relay_release_held(ud, vm); /* a debugger that came meanwhile (ud: the relay) */
        }
        return;
    }
    /* No answer, an error or another chunk (ART sends nothing): reopen the
     * connection so the VM releases every debugger resource, as Android's
     * tools do. */
    relay_vm_log(vm, "relay: VM %s did not acknowledge DBGD; reopening its connection so it "
                 "releases the debugger's state", vm_label(vm));
    RelayVm *r = ddm_relay_rvm_get(vm);
    r->reconnect = TRUE;
    ddm_vm_close(vm, "reopened after the debugger left");
}

/* The debugger left (cleanly or not): make the VM go on as if none had come. */
void ddm_relay_after_debugger_left(RelayVm *r, Debugger *d)
{
    DdmVm *vm = r->vm;
    guint dropped = ddm_idmap_forget_client(r->ids, d);
    if (dropped)
        g_debug("relay: %u replies for the departed debugger will be dropped", dropped);
    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    r->reconnect = TRUE;
    /* Until the VM acknowledged DBGD, or closed this connection after
     * Dispose, a new debugger must not attach to it: it would be cut off
     * with it. It is held and attached to what comes next. */
    r->leaving = TRUE;
    if (vm->state == DDM_VM_STATE_READY) {
        int rc = ddm_vm_request(vm, NULL, DDM_CHUNK_DBGD, NULL, 0, DBGD_TIMEOUT_MS,
                                on_dbgd_reply, d->relay, NULL);
        if (rc < 0)
            ddm_vm_close(vm, "reopened after the debugger left");
        return;
    }
    /* Plain JVM: OpenJDK's agent resumes threads, clears event requests and
     * closes its side on VirtualMachine.Dispose; send it on the debugger's
     * behalf if it vanished without. The agent then listens again and the
     * monitor reconnects at once (ddm_relay_vm_closed returns TRUE). */
    if (!d->sent_dispose) {
        uint32_t id;
        if (ddm_idmap_reserve(r->ids, &id)) {
            gsize len;
            g_autofree guint8 *pkt = ddm_jdwp_build_command(id, DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_DISPOSE, NULL, 0, &len);
            relay_vm_log(vm, "relay: debugger of VM %s left without VirtualMachine.Dispose; "
                         "sending it on its behalf", vm_label(vm));
            if (ddm_vm_send_packet(vm, pkt, len) < 0)
                ddm_vm_close(vm, "reopened after the debugger left");
        }
    }
}
