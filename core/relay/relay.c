/* SPDX-License-Identifier: Apache-2.0
 *
 * The debugger relay (relay.h): the DdmRelay object, the calls the daemon
 * makes into it, and the relay's state for one VM connection (RelayVm: its
 * debugger, id map and the packets kept for the first debugger). The
 * objects and the other files are described in relay-private.h.
 */
#include "core/relay/relay-private.h"

#include <errno.h>

#include "core/session/monitor.h"

#include <ddmon/bytes.h>

#define EARLY_CAP (1u << 20)          /* VM traffic kept for the first debugger */

/* ------------------------------------------------------------ RelayVm */

RelayVm *ddm_relay_rvm_get(DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (!r) {
        r = g_new0(RelayVm, 1);
        r->vm = vm;
        g_queue_init(&r->early);
        vm->relay = r;
        /* long replies to a debugger are forwarded as they arrive */
        ddm_jdwp_reader_offer_reply_heads(vm->reader, TRUE);
    }
    return r;
}

static void rvm_clear_early(RelayVm *r)
{
    GBytes *b;
    while ((b = g_queue_pop_head(&r->early)))
        g_bytes_unref(b);
    r->early_bytes = 0;
}

/* ------------------------------------------------------------ public */

DdmRelay *ddm_relay_new(DdmMonitor *mon, GError **error)
{
    const DdmConfig *cfg = ddm_monitor_config(mon);
    DdmRelay *relay = g_new0(DdmRelay, 1);
    relay->mon = mon;
    relay->cfg = cfg;
    relay->endpoints = g_ptr_array_new();
    relay->port_by_key = ddm_portmap_new(DDM_RELAY_KEY_PORTS);
    relay->port_by_app = ddm_portmap_new(DDM_PORTMAP_MAX_ENTRIES);
    ddm_relay_ports_load(relay);
    relay->fixed_by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->parked = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    relay->debuggers = g_ptr_array_new();
    relay->dead = g_ptr_array_new_with_free_func(ddm_relay_debugger_free);
    relay->selection = g_strdup(cfg->select);
    ddm_relay_ports_open(relay);
    (void)error;
    return relay;
}

void ddm_relay_free(DdmRelay *relay)
{
    if (!relay)
        return;
    relay->shutting_down = TRUE;
    while (relay->debuggers->len)
        ddm_relay_debugger_close(relay->debuggers->pdata[0], NULL);
    while (relay->endpoints->len)
        ddm_relay_endpoint_close(g_ptr_array_index(relay->endpoints, relay->endpoints->len - 1));
    g_ptr_array_unref(relay->endpoints);
    ddm_portmap_free(relay->port_by_key);
    ddm_relay_ports_flush(relay);
    ddm_portmap_free(relay->port_by_app);
    ddm_relay_ports_close(relay);
    g_hash_table_destroy(relay->fixed_by_key);
    g_hash_table_destroy(relay->parked);
    g_ptr_array_unref(relay->debuggers);
    ddm_timer_cancel(&relay->reap_timer);
    g_ptr_array_unref(relay->dead);
    g_free(relay->selection);
    g_free(relay);
}

void ddm_relay_vm_up(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = ddm_relay_rvm_get(vm);
    ddm_relay_ports_vm_up(relay, r);
    ddm_relay_vm_changed(relay, vm);
}

void ddm_relay_vm_changed(DdmRelay *relay, DdmVm *vm)
{
    ddm_relay_ports_vm_changed(relay, vm);
    ddm_relay_release_held(relay, vm);
}

gboolean ddm_relay_vm_closed(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (!r)
        return FALSE;
    gboolean reconnect = r->reconnect || r->had_debugger;
    if (r->debugger) {
        Debugger *d = r->debugger;
        /* OpenJDK's agent closes its connection (ddmon's, which carried the
         * debugger's commands) once it has answered VirtualMachine.Dispose,
         * and listens again: the end of a session, often seen before the
         * debugger closes its own side. ddmon reconnects at once. */
        if (d->sent_dispose)
            g_debug("relay: VM %s closed ddmon's connection after debugger %s's VirtualMachine.Dispose "
                    "(the end of its session); closing the debugger's connection and reconnecting",
                    vm_label(vm), d->peer);
        else
            g_message("relay: VM %s went away; closing its debugger's connection", vm_label(vm));
        /* d keeps r for the close, which names the VM in its line ("debugger
         * ... of VM KEY ... left"); with r->debugger cleared it asks nothing
         * of the VM (no DBGD, no Dispose), and a command it was sending in
         * parts has nowhere to be cut short. */
        r->debugger = NULL;
        d->to_vm_parts = FALSE;
        ddm_relay_debugger_close(d, NULL);
        reconnect = TRUE;
    }
    ddm_relay_ports_vm_closed(relay, r, reconnect);
    rvm_clear_early(r);
    ddm_idmap_free(r->ids);
    g_free(r);
    vm->relay = NULL;
    return reconnect;
}

void ddm_relay_command_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    RelayVm *r = ddm_relay_rvm_get(vm);
    if (r->debugger && r->debugger->state == DBG_ATTACHED) {
        ddm_relay_debugger_queue(r->debugger, pkt->bytes, pkt->len,
                                 ddm_jdwp_reader_has_packet(vm->reader));
        return;
    }
    if (r->had_debugger) {
        g_debug("relay: VM %s: event (cmdset %u cmd %u) after its debugger left: dropped", vm_label(vm),
                pkt->header.cmdset, pkt->header.cmd);
        return;
    }
    if (r->early_bytes + pkt->len > EARLY_CAP) {
        if (!r->early_overflow_logged)
            g_warning("relay: VM %s sent more than %u bytes of JDWP traffic before any debugger "
                      "attached; dropping the rest", vm_label(vm), EARLY_CAP);
        r->early_overflow_logged = TRUE;
        return;
    }
    g_queue_push_tail(&r->early, g_bytes_new(pkt->bytes, pkt->len));
    r->early_bytes += pkt->len;
}

void ddm_relay_vm_output_drained(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    Debugger *d = r ? r->debugger : NULL;
    (void)relay;
    if (!d || d->state != DBG_ATTACHED || !d->reading_paused)
        return;
    g_debug("relay: VM %s took what was queued; reading from debugger %s again", vm_label(vm), d->peer);
    d->reading_paused = FALSE;
    ddm_relay_debugger_read(d);
}

gboolean ddm_relay_reply_from_vm(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *pkt)
{
    RelayVm *r = vm->relay;
    gpointer client = NULL;
    uint32_t client_id = 0;
    if (!r || !r->ids || !ddm_idmap_take(r->ids, pkt->header.id, &client, &client_id))
        return ddm_idmap_in_range(pkt->header.id); /* a departed debugger's: drop quietly */
    Debugger *d = relay_reply_debugger(r, client);
    if (!d)
        return TRUE; /* reply to a command we sent on a debugger's behalf */
    /* The debugger's id goes into the reply's own bytes (the VM session's:
     * its reader's consumed packet or its read buffer, lent writable for
     * this call, relay.h), so the reply goes out in one send(). */
    guint8 *bytes = (guint8 *)pkt->bytes;
    ddm_put_u4(bytes + 4, client_id); /* ddm_jdwp_set_id, inline */
    ddm_relay_debugger_queue(d, bytes, pkt->len, ddm_jdwp_reader_has_packet(vm->reader));
    return TRUE;
}

gboolean ddm_relay_reply_head(DdmRelay *relay, DdmVm *vm, const DdmJdwpPacket *head)
{
    RelayVm *r = vm->relay;
    gpointer client = NULL;
    uint32_t client_id = 0;
    if (!r || !r->ids || r->reply_streaming || head->len < DDM_RELAY_CUT_THROUGH_AT ||
        head->len > relay->cfg->max_packet ||
        !ddm_idmap_take(r->ids, head->header.id, &client, &client_id))
        return FALSE; /* read whole (and refused past the cap) as before */
    Debugger *d = relay_reply_debugger(r, client);
    r->reply_streaming = TRUE;
    r->reply_to = d;
    if (d)
        ddm_relay_debugger_part_begin(d, head->bytes, client_id);
    /* else a departed debugger's, or one sent on its behalf: dropped as it arrives */
    return TRUE;
}

void ddm_relay_reply_part(DdmRelay *relay, DdmVm *vm, const uint8_t *data, size_t len,
                          gboolean last)
{
    RelayVm *r = vm->relay;
    (void)relay;
    if (!r || !r->reply_streaming)
        return;
    Debugger *d = r->reply_to; /* cleared when it closes */
    if (d && len)
        ddm_relay_debugger_part(d, data, len);
    if (last) {
        r->reply_streaming = FALSE;
        r->reply_to = NULL;
        if (d && d->state != DBG_CLOSED)
            ddm_relay_debugger_part_end(d);
    }
}

gssize ddm_relay_reply_splice(DdmRelay *relay, DdmVm *vm, int fd, size_t max,
                              gboolean *socket_empty)
{
    RelayVm *r = vm->relay;
    (void)relay;
    if (!r || !r->reply_streaming || !r->reply_to)
        return -ENOTSUP; /* dropped as it arrives: read as usual */
    return ddm_relay_debugger_splice(r->reply_to, fd, max, socket_empty);
}

guint16 ddm_relay_port_of(DdmRelay *relay, DdmVm *vm)
{
    RelayVm *r = vm->relay;
    if (r && r->endpoint)
        return r->endpoint->port;
    return ddm_relay_fixed_port(relay, vm->info.key);
}

guint16 ddm_relay_fixed_port(DdmRelay *relay, const char *key)
{
    Endpoint *fixed = relay && key ? g_hash_table_lookup(relay->fixed_by_key, key) : NULL;
    return fixed ? fixed->port : 0;
}

gboolean ddm_relay_is_selected(DdmRelay *relay, DdmVm *vm)
{
    return relay && ddm_relay_selected_vm(relay) == vm;
}

void ddm_relay_select(DdmRelay *relay, const char *spec)
{
    g_free(relay->selection);
    relay->selection = spec && *spec ? g_strdup(spec) : NULL;
    g_message("relay: selected VM: %s", relay->selection ? relay->selection : "(none)");
    /* Debuggers held on the selected-VM port wait for the selection: a VM
     * it reaches now that is up (and has no debugger) takes them at once,
     * not only at its next event (they would wait out their hold). */
    DdmVm *vm = ddm_relay_selected_vm(relay);
    if (vm)
        ddm_relay_release_held(relay, vm);
}

GPtrArray *ddm_relay_selected_port_elsewhere(DdmRelay *relay)
{
    GPtrArray *vms = g_ptr_array_new();
    DdmVm *now = ddm_relay_selected_vm(relay);
    for (guint i = 0; i < relay->debuggers->len; i++) {
        Debugger *d = relay->debuggers->pdata[i];
        if (d->state == DBG_ATTACHED && d->rvm && d->endpoint && d->endpoint->kind == EP_SELECTED &&
            d->rvm->vm != now)
            g_ptr_array_add(vms, d->rvm->vm);
    }
    return vms;
}

const char *ddm_relay_selection(DdmRelay *relay)
{
    return relay->selection;
}
