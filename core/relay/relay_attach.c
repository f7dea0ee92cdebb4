/* SPDX-License-Identifier: Apache-2.0
 *
 * Attaching a debugger to its VM (relay-private.h). Once a debugger's
 * handshake is read, its port says which VM it reaches (a VM's port, a
 * fixed --connect port, or the selection); a debugger whose VM is not up,
 * or is still being put back after the previous debugger, is held (bounded
 * by HOLD_MS) while ddmon retries the VM quickly, when it has a session
 * with one (on the selected port, one matching the selection; with none
 * the debugger only waits for one to come up). Held debuggers attach when
 * their VM comes up or is put back, or (on the selected port) when the
 * selection moves to a VM that is up; one whose hold runs out is closed
 * with a line saying what became of its VM. Attaching echoes the
 * handshake and hands over the packets the VM sent before any debugger.
 */
#include "core/relay/relay-private.h"

#include <string.h>

#include "core/wire/ddm.h"
#include "core/session/monitor.h"

#define HOLD_MS 10000                 /* a debugger waits this long for a fixed target */

static gboolean vm_attachable(DdmVm *vm)
{
    RelayVm *r = vm ? vm->relay : NULL;
    return vm && (vm->state == DDM_VM_STATE_READY || vm->state == DDM_VM_STATE_PLAIN ||
                  vm->state == DDM_VM_STATE_HELO) &&
           !(r && r->leaving);
}

static void attach(Debugger *d, DdmVm *vm)
{
    RelayVm *r = ddm_relay_rvm_get(vm);
    if (r->debugger) {
        relay_debugger_log(d->port, "refused",
                           "relay: VM %s already has a debugger (port %u); a second debugger on "
                           "port %u is refused (one debugger per VM)",
                           vm_label(vm), r->debugger->port, d->port);
        ddm_relay_debugger_close(d, NULL);
        return;
    }
    ddm_timer_cancel(&d->hold_timer);
    g_clear_pointer(&d->held_key, g_free);
    d->state = DBG_ATTACHED;
    d->rvm = r;
    r->debugger = d;
    if (!r->ids) /* made for the first debugger: a VM nobody debugs holds none */
        r->ids = ddm_idmap_new(DDM_RELAY_MAX_MAPPED);
    ddm_relay_debugger_read(d); /* if it was held: read again */
    /* Echo the handshake; the VM already had ours and never sees a second. */
    g_byte_array_append(d->out, (const guint8 *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
    if (!r->had_debugger) {
        GBytes *b;
        while ((b = g_queue_pop_head(&r->early))) {
            gsize n;
            const guint8 *p = g_bytes_get_data(b, &n);
            g_byte_array_append(d->out, p, (guint)n);
            g_bytes_unref(b);
        }
        r->early_bytes = 0;
    }
    r->had_debugger = TRUE;
    /* A real session (not rate-limited: each costs the VM a DBGD or Dispose
     * and a reconnect, which bounds how often it can happen). */
    g_message("relay: debugger %s attached to VM %s (pid %u%s%s) on port %u", d->peer, vm_label(vm),
              vm->info.pid, vm->info.app_name ? ", " : "", vm->info.app_name ? vm->info.app_name : "",
              d->port);
    vm->info.debugger = 1;
    ddm_monitor_vm_identity_changed(d->relay->mon, vm);
    if (d->state != DBG_ATTACHED)
        return;
    ddm_relay_debugger_flush(d);
    /* Packets the debugger pipelined behind its handshake go now. */
    if (d->state == DBG_ATTACHED)
        ddm_relay_debugger_drain(d);
}

/* Why a held debugger's VM did not take it: the VM it waited for as it
 * is now (@vm, NULL if none). (transfer full) */
static char *hold_outcome(DdmVm *vm)
{
    RelayVm *r = vm ? vm->relay : NULL;
    if (!vm || vm->state == DDM_VM_STATE_CLOSED)
        return g_strdup("which did not come up");
    if (vm->state != DDM_VM_STATE_READY && vm->state != DDM_VM_STATE_PLAIN)
        return g_strdup_printf("which did not come up (still %s)", ddm_vm_state_name(vm->state));
    if (r && r->debugger)
        return g_strdup_printf("which is up but has a debugger (port %u; one debugger per VM)",
                               r->debugger->port);
    if (r && r->leaving)
        return g_strdup("which is up but was still being put back after its previous debugger");
    return g_strdup("which is up but did not take it"); /* not expected: release_held */
}

static void on_hold_timeout(DdmTimer *t, gpointer ud)
{
    Debugger *d = ud;
    DdmRelay *relay = d->relay;
    (void)t;
    /* Say what became of the VM: it may have come up and been busy. */
    DdmVm *vm = d->held_key ? ddm_monitor_find_vm(relay->mon, d->held_key) : ddm_relay_selected_vm(relay);
    g_autofree char *outcome = hold_outcome(vm);
    if (d->held_key || vm)
        relay_debugger_log(d->port, "gave up", "relay: debugger on port %u waited %d ms for VM %s, %s; closing",
                           d->port, HOLD_MS, vm ? vm_label(vm) : d->held_key, outcome);
    else
        relay_debugger_log(d->port, "gave up",
                           "relay: debugger on the selected-VM port %u waited %d ms for a VM matching "
                           "'%s', which did not come up; closing",
                           d->port, HOLD_MS, relay->selection ? relay->selection : "(none: nothing selected)");
    ddm_relay_debugger_close(d, NULL);
}

/* Handshake done: find the VM this port reaches. */
void ddm_relay_route(Debugger *d)
{
    DdmRelay *relay = d->relay;
    Endpoint *ep = d->endpoint;
    if (!ep) {
        ddm_relay_debugger_close(d, "its port closed");
        return;
    }
    DdmVm *vm = NULL;
    switch (ep->kind) {
    case EP_VM:   /* parked while its VM reconnects: wait for it like a fixed port */
    case EP_FIXED:
        vm = ddm_monitor_find_vm(relay->mon, ep->key);
        if (!vm_attachable(vm)) {
            d->state = DBG_HELD;
            d->held_key = g_strdup(ep->key);
            ddm_timer_init(&d->hold_timer, on_hold_timeout, d);
            ddm_timer_arm(&d->hold_timer, HOLD_MS);
            relay_debugger_log(d->port, "held",
                               "relay: debugger on port %u is held until VM %s is up (at most %d ms)",
                               d->port,
                      ep->key, HOLD_MS);
            ddm_monitor_retry_fast(relay->mon, ep->key);
            return;
        }
        break;
    case EP_SELECTED:
        if (!relay->selection) {
            relay_debugger_log(d->port, "unselected",
                               "relay: debugger on the selected-VM port %u: no VM is selected (select one "
                      "with 'ddmon select PID|APP' or --select); closing", d->port);
            ddm_relay_debugger_close(d, NULL);
            return;
        }
        vm = ddm_relay_selected_vm(relay);
        if (!vm_attachable(vm)) {
            /* The selected app may be restarting or reconnecting: wait for it. */
            d->state = DBG_HELD;
            ddm_timer_init(&d->hold_timer, on_hold_timeout, d);
            ddm_timer_arm(&d->hold_timer, HOLD_MS);
            relay_debugger_log(d->port, "held",
                               "relay: debugger on the selected-VM port %u is held until a VM matching "
                      "'%s' is up (at most %d ms)", d->port, relay->selection, HOLD_MS);
            if (vm)
                ddm_monitor_retry_fast(relay->mon, vm->info.key);
            return;
        }
        break;
    }
    if (!vm_attachable(vm)) {
        ddm_relay_debugger_close(d, "its VM is not connected");
        return;
    }
    attach(d, vm);
}

/* Debuggers held for @vm (its fixed or parked port, or the selection that
 * now matches it) attach now. */
void ddm_relay_release_held(DdmRelay *relay, DdmVm *vm)
{
    if (!vm_attachable(vm) || vm->state == DDM_VM_STATE_HELO)
        return;
    /* A VM with a debugger keeps them held: it may be free before their
     * hold ends (its debugger leaves: this runs again once it is put back),
     * or the selection may move on. */
    RelayVm *r = vm->relay;
    if (r && r->debugger)
        return;
    gboolean selected = relay->selection && ddm_relay_selected_vm(relay) == vm;
    for (guint i = 0; i < relay->debuggers->len;) {
        Debugger *d = relay->debuggers->pdata[i];
        gboolean mine = d->state == DBG_HELD &&
                        (d->held_key ? strcmp(d->held_key, vm->info.key) == 0 : selected);
        if (mine)
            attach(d, vm); /* removes d from the list only if it closes */
        RelayVm *now = vm->relay;
        if (now && now->debugger)
            break; /* one attached: the others stay held (as above) */
        if (i < relay->debuggers->len && relay->debuggers->pdata[i] == d)
            i++;
    }
}
