/* SPDX-License-Identifier: Apache-2.0
 *
 * How one VM's session gets from HANDSHAKE to READY or PLAIN (the session
 * as a whole: vm.c): the first requests, sent behind the handshake before
 * its echo (the VirtualMachine.Version probe on TCP targets, else HELO and
 * FEAT), the echo, the probe's answer, and a HELO answer that came too late.
 * Everything the core needs from DDM itself is HELO and FEAT. The handshake
 * bytes go out, and a missing echo times out, in vm.c.
 */
#include <string.h>

#include <ddmon/bytes.h>

#include "core/wire/ddm.h"
#include "core/session/quietlog.h"
#include "core/transport/local_proc.h"
#include "core/session/ratelog.h"
#include "core/session/vm-private.h"

#define DDM_SERVER_PROTOCOL_VERSION 1u

/* --------------------------------------------------- HELO / FEAT replies */

/* A plain JVM says nothing of itself: on TCP targets find the process at
 * the other end of our socket the way `ss -p` and `jps` do (pid from
 * /proc/net/tcp's inode and /proc/PID/fd, main class from its cmdline),
 * or say why not. adb targets are Android VMs, named by HELO. */
static void learn_local_process(DdmVm *vm)
{
    DdmLocalPeer peer;

    if (!(vm->target->ops->caps & DDM_TARGET_CAP_ANY_JVM) || vm->fd < 0)
        return;
    ddm_local_peer_find(vm->fd, NULL, &peer);
    if (vm->rare)
        g_clear_pointer(&vm->rare->pid_note, g_free);
    if (peer.who == DDM_PEER_FOUND) {
        vm->info.pid = peer.pid;
        if (peer.main_class) {
            g_free((char *)vm->info.app_name);
            vm->info.app_name = ddm_vm_clip(peer.main_class, DDM_VM_NAME_MAX);
        }
        g_info("%s: plain JVM is pid %u (%s)", vm_key(vm), peer.pid,
               vm->info.app_name ? vm->info.app_name : "main class unknown");
    } else {
        ddm_vm_rare(vm)->pid_note = ddm_local_peer_note(&peer);
        g_info("%s: %s", vm_key(vm), vm->rare->pid_note);
    }
    ddm_local_peer_clear(&peer);
    ddm_vm_sync_info(vm);
}

static void mark_plain(DdmVm *vm)
{
    vm->info.ddm = 0;
    learn_local_process(vm);
    ddm_vm_set_state(vm, DDM_VM_STATE_PLAIN);
}

static void mark_ready(DdmVm *vm)
{
    uint32_t next_id = vm->next_id; /* moves when someone asks at READY */
    /* The requests of READY (every plugin's first ones, then the FEAT
     * fence) leave in one write, not one each: a loopback send runs the
     * receiver's TCP stack too (31% of a starting server's time with
     * 10,000 VMs, when each had its own send; TCP_CORK around them saved
     * the segments but cost two setsockopt calls and kept the sends). */
    gboolean gathering = ddm_vm_io_gather_begin(vm);

    vm->info.ddm = 1; /* the monitor notes the key as DDM when the session ends */
    ddm_vm_sync_info(vm);
    ddm_vm_set_state(vm, DDM_VM_STATE_READY);
    /* The plugins sent their first requests at DDM_VM_READY, and ART
     * never answers some (THEN): the FEAT fence goes out now, behind them,
     * so whether they are settled (a fresh server's first look, snapshot)
     * is known one round trip after READY, not one after someone asks.
     * No request at READY, no fence. */
    if (vm->state == DDM_VM_STATE_READY && vm->next_id != next_id)
        (void)ddm_vm_requests_settled(vm);
    ddm_vm_io_gather_end(vm, gathering);
}

static void apply_helo(DdmVm *vm, const DdmHelo *h)
{
    vm->info.protocol_version = h->protocol_version;
    vm->info.pid = h->pid;
    /* names cut to DDM_VM_NAME_MAX, other text to DDM_VM_TEXT_MAX (vm-private.h) */
    /* the text most VMs of a device share is held once (vm_ident.c) */
    ddm_vm_text_release((char *)vm->info.vm_ident);
    vm->info.vm_ident = ddm_vm_text_share(h->vm_ident, DDM_VM_TEXT_MAX);
    g_free((char *)vm->info.app_name);
    vm->info.app_name = ddm_vm_clip(h->app_name, DDM_VM_NAME_MAX);
    vm->info.user_id = h->user_id;
    ddm_vm_text_release((char *)vm->info.abi);
    vm->info.abi = ddm_vm_text_share(h->abi, DDM_VM_TEXT_MAX);
    ddm_vm_text_release((char *)vm->info.jvm_flags);
    vm->info.jvm_flags = ddm_vm_text_share(h->jvm_flags, DDM_VM_TEXT_MAX);
    vm->info.native_debuggable = h->native_debuggable;
    g_free((char *)vm->info.package_name);
    vm->info.package_name = ddm_vm_clip(h->package_name, DDM_VM_NAME_MAX);
    vm->info.boot_stage = h->boot_stage;
    ddm_vm_sync_info(vm);
}

/* A first request (sent with the handshake) timed out before the echo.
 * It cannot: its deadline lies past the handshake deadline, which closes
 * the session first (ddm_vm_handshake_sent). Were it to happen, the session
 * would reach HELO with nothing pending and wait for good: close it. */
static gboolean first_request_expired_unechoed(DdmVm *vm, const ddm_reply *r)
{
    if (vm->state != DDM_VM_STATE_HANDSHAKE || r->status != DDM_REPLY_TIMEOUT)
        return FALSE;
    ddm_vm_close_later(vm, g_strdup("a first request timed out before the handshake echo"));
    return TRUE;
}

static void helo_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    char name[5];
    (void)self;
    (void)ud;

    if (first_request_expired_unechoed(vm, r))
        return;
    if (vm->state != DDM_VM_STATE_HELO)
        return; /* closed meanwhile (VM_GONE) */
    switch (r->status) {
    case DDM_REPLY_CHUNK:
        if (r->type == DDM_CHUNK_HELO) {
            DdmHelo h;
            if (!ddm_helo_parse(r->data, r->len, &h)) {
                ddm_vm_close_bad(vm, "malformed HELO reply (%zu bytes)", r->len);
                return;
            }
            apply_helo(vm, &h);
            if (h.trailing)
                g_debug("%s: HELO reply has %zu unknown trailing bytes (ignored)", vm_key(vm),
                        h.trailing);
            DDM_INFO("%s: DDM VM pid %u \"%s\" (%s)", vm_key(vm), h.pid,
                   h.app_name ? h.app_name : "", h.vm_ident ? h.vm_ident : "?");
            ddm_helo_clear(&h);
        } else if (r->type == DDM_CHUNK_FAIL) {
            g_warning("%s: VM answered HELO with FAIL %u (%s); identity unknown", vm_key(vm),
                      r->fail_code, r->fail_msg ? r->fail_msg : "no message");
        } else {
            g_warning("%s: VM answered HELO with a %s chunk; identity unknown", vm_key(vm),
                      ddm_chunk_name(r->type, name));
        }
        mark_ready(vm);
        break;
    case DDM_REPLY_EMPTY:
        /* Dalvik with no HELO handler registered: DDM-aware, nameless. */
        g_info("%s: empty HELO reply; DDM-aware VM without identity", vm_key(vm));
        mark_ready(vm);
        break;
    case DDM_REPLY_ERROR:
        g_message("%s: answered HELO with JDWP error %u (%s): plain JVM without DDM", vm_key(vm),
                  r->jdwp_error, ddm_jdwp_error_name(r->jdwp_error));
        mark_plain(vm);
        break;
    case DDM_REPLY_TIMEOUT:
        g_message("%s: no HELO answer within %u ms: treating it as a plain JVM", vm_key(vm),
                  vm_cfg(vm)->request_timeout_ms);
        mark_plain(vm);
        break;
    case DDM_REPLY_BAD:
        ddm_vm_close_bad(vm, "unparsable HELO reply");
        break;
    case DDM_REPLY_VM_GONE:
        break;
    }
}

static void feat_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    char **feat;
    (void)self;
    (void)ud;

    if (vm->state == DDM_VM_STATE_CLOSED || r->status != DDM_REPLY_CHUNK)
        return; /* plain JVMs answer with an error; ART may not answer at all */
    if (r->type != DDM_CHUNK_FEAT) {
        g_debug("%s: FEAT answered with another chunk type", vm_key(vm));
        return;
    }
    /* decoded to the caps: a name is cut to DDM_VM_NAME_MAX bytes below,
     * and each UTF-16 unit makes at least one byte, so DDM_VM_NAME_MAX
     * units are enough; the names past DDM_VM_FEATURES_MAX are only
     * walked (a reply of millions of empty names allocates nothing) */
    DdmFeatSize size;
    feat = ddm_feat_parse_capped(r->data, r->len, DDM_VM_FEATURES_MAX, DDM_VM_NAME_MAX, &size);
    if (!feat) {
        g_warning("%s: malformed FEAT reply (%zu bytes) ignored", vm_key(vm), r->len);
        return;
    }
    guint kept_n;
    gsize kept_longest;
    if (ddm_vm_features_over_cap(feat, &kept_n, &kept_longest) ||
        size.count > DDM_VM_FEATURES_MAX || size.longest_units > DDM_VM_NAME_MAX) {
        g_autofree char *rate_key = g_strdup_printf("%s FEAT", vm_key(vm));
        ddm_ratelog(rate_key, G_LOG_LEVEL_WARNING,
                    "%s: FEAT of %u names, the longest %u UTF-16 units: kept at most %u, each cut to %u bytes",
                    vm_key(vm), size.count, size.longest_units, DDM_VM_FEATURES_MAX, DDM_VM_NAME_MAX);
    }
    ddm_vm_features_release((char **)vm->info.features);
    vm->info.features = (const char *const *)ddm_vm_features_share(feat);
    ddm_vm_sync_info(vm);
    ddm_monitor_vm_identity_changed(vm->monitor, vm);
}

/* ------------------------------------------------ VirtualMachine.Version */

/* OpenJDK's JDWP agent reads the command set as a signed byte, so a vendor
 * set such as DDM's 0xC7 indexes outside its table and can crash the JVM
 * (JDK-8382537, fixed upstream in 2026; every OpenJDK in use has it). On
 * TCP targets, where HotSpot JVMs live, ddmon therefore asks the standard
 * VirtualMachine.Version first and sends DDM only to a VM that says it is
 * Dalvik or ART. A VM already seen answering HELO is trusted on reconnect
 * (the probe is a non-DDM packet: it makes Dalvik/ART think a debugger
 * came, which ends a WAIT). adb targets are always Android: no probe. */
#define PROBE_TIMEOUT_MS 3000

static void start_helo(DdmVm *vm);

static gboolean needs_probe(DdmVm *vm)
{
    return vm_cfg(vm)->tcp_version_probe && (vm->target->ops->caps & DDM_TARGET_CAP_ANY_JVM) &&
           !ddm_monitor_known_ddm(vm->monitor, vm_key(vm));
}

/* A JDWP string: u4 byte count + (modified) UTF-8, bounded by the reader. */
static char *read_jdwp_string(ddm_reader *r)
{
    uint32_t n = ddm_read_u4(r);
    const uint8_t *p = ddm_read_bytes(r, n);
    return p ? g_utf8_make_valid((const char *)p, (gssize)n) : NULL;
}

static gboolean looks_android(const char *s)
{
    return s && (strstr(s, "Dalvik") || strstr(s, "Android"));
}

/* Timeout or VM gone (the reply itself goes to ddm_vm_handshake_probe_answered). */
static void probe_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    (void)self;
    (void)ud;
    if (first_request_expired_unechoed(vm, r) || vm->state != DDM_VM_STATE_HELO ||
        r->status != DDM_REPLY_TIMEOUT)
        return;
    g_info("%s: no answer to VirtualMachine.Version in %u ms; trying HELO", vm_key(vm),
           PROBE_TIMEOUT_MS);
    start_helo(vm);
}

/* The probe is told from other requests by its callback. */
gboolean ddm_vm_handshake_is_probe(const DdmPending *p)
{
    return p->callback == (gpointer)(void (*)(void))probe_reply;
}

void ddm_vm_handshake_probe_answered(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    ddm_reader r;
    char *desc = NULL, *version = NULL, *name = NULL;
    int32_t major, minor;

    if (pkt->header.error != 0) {
        g_info("%s: VirtualMachine.Version failed (error %u); trying HELO", vm_key(vm),
               pkt->header.error);
        start_helo(vm);
        return;
    }
    ddm_reader_init(&r, pkt->data, pkt->data_len);
    desc = read_jdwp_string(&r);
    major = ddm_read_i4(&r);
    minor = ddm_read_i4(&r);
    version = read_jdwp_string(&r);
    name = read_jdwp_string(&r);
    if (!ddm_reader_ok(&r)) {
        g_info("%s: malformed VirtualMachine.Version reply; trying HELO", vm_key(vm));
        start_helo(vm);
    } else if (looks_android(desc) || looks_android(name)) {
        DDM_DEBUG("%s: %s: a Dalvik/ART VM; sending HELO", vm_key(vm), name);
        start_helo(vm);
    } else {
        g_autofree char *ident = g_strdup_printf("%s %s", name, version);
        ddm_vm_text_release((char *)vm->info.vm_ident);
        vm->info.vm_ident = ddm_vm_text_share(ident, DDM_VM_TEXT_MAX);
        ddm_vm_sync_info(vm);
        g_message("%s: %s (JDWP %d.%d): plain JVM, no DDM traffic", vm_key(vm), vm->info.vm_ident,
                  major, minor);
        mark_plain(vm);
    }
    g_free(desc);
    g_free(version);
    g_free(name);
}

/* Send HELO and FEAT, their time @extra_ms longer than a request's. */
static void send_helo(DdmVm *vm, unsigned extra_ms)
{
    const unsigned timeout_ms = vm_request_timeout_ms(vm) + extra_ms;
    uint8_t helo[4];
    int r;

    ddm_helo_request(helo, DDM_SERVER_PROTOCOL_VERSION);
    gboolean gathering = ddm_vm_io_gather_begin(vm); /* HELO and FEAT: one write */
    r = ddm_vm_req_send(vm, NULL, DDM_CHUNK_HELO, helo, sizeof helo, timeout_ms, helo_reply, NULL,
                        &vm->helo_id);
    if (r == 0)
        r = ddm_vm_req_send(vm, NULL, DDM_CHUNK_FEAT, NULL, 0, timeout_ms, feat_reply, NULL, NULL);
    ddm_vm_io_gather_end(vm, gathering);
    if (r < 0)
        ddm_vm_close_later(vm, g_strdup_printf("cannot send HELO: %s", g_strerror(-r)));
}

/* Send the Version probe, its time @extra_ms longer than PROBE_TIMEOUT_MS
 * (HELO and FEAT instead when the table refuses it). */
static void send_probe(DdmVm *vm, unsigned extra_ms)
{
    DdmPending p = {0};
    uint8_t *pkt;
    size_t plen = 0;
    int r;

    p.id = ddm_vm_alloc_id(vm);
    p.deadline_us = g_get_monotonic_time() + ((gint64)PROBE_TIMEOUT_MS + extra_ms) * 1000;
    p.callback = (gpointer)(void (*)(void))probe_reply;
    if (!ddm_correlate_insert(vm->pending, &p)) {
        send_helo(vm, extra_ms);
        return;
    }
    pkt = ddm_jdwp_build_command(p.id, DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_VERSION, NULL, 0, &plen);
    r = ddm_vm_io_queue(vm, pkt, plen);
    g_free(pkt);
    if (r < 0) {
        ddm_vm_close_later(vm, g_strdup_printf("cannot send VirtualMachine.Version: %s",
                                               g_strerror(-r)));
        return;
    }
    ddm_vm_rearm(vm);
}

static void start_helo(DdmVm *vm)
{
    ddm_vm_set_state(vm, DDM_VM_STATE_HELO);
    if (vm->state == DDM_VM_STATE_HELO)
        send_helo(vm, 0);
}

/* ------------------------------------------------------- handshake echo */

/* The first requests go out in the handshake's write, before its echo, as
 * ddmlib sends REAQ (doc/protocol.md): the VM reads them once it has
 * echoed (HotSpot reads exactly the 14 bytes first, ART's adbconnection
 * at least 14, Dalvik takes what follows from its buffer). That saves a
 * round trip and a write a VM at start-up. Their time runs from the echo
 * (ddm_vm_handshake_echoed): until then it is the handshake deadline that
 * counts, so they are sent with that much more. */
void ddm_vm_handshake_sent(DdmVm *vm)
{
    const unsigned extra_ms = vm_handshake_left_ms(vm);

    if (vm->state != DDM_VM_STATE_HANDSHAKE)
        return;
    if (needs_probe(vm))
        send_probe(vm, extra_ms);
    else
        send_helo(vm, extra_ms);
}

void ddm_vm_handshake_echoed(DdmVm *vm)
{
    const gint64 now = g_get_monotonic_time();

    if (vm->state != DDM_VM_STATE_HANDSHAKE)
        return;
    /* the requests sent with the handshake: their time starts now (later
     * too when the echo is read past the handshake deadline, the loop
     * having stalled: they then get their whole time from now) */
    if (vm->handshake_deadline_us != G_MAXINT64)
        ddm_correlate_shift(vm->pending, now - vm->handshake_deadline_us);
    vm->handshake_deadline_us = G_MAXINT64;
    DDM_DEBUG("%s: handshake echoed", vm_key(vm));
    ddm_vm_set_state(vm, DDM_VM_STATE_HELO);
    ddm_vm_rearm(vm);
}

/* ----------------------------------------------------------- late HELO */

/* The answer to a HELO that timed out (a VM starting under load, a slow
 * adb link): if it is a real HELO, the VM speaks DDM after all. */
void ddm_vm_handshake_late_helo(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    DdmChunkIter it;
    DdmChunk ch;
    DdmHelo h;

    vm->helo_id = 0;
    if (pkt->header.error != 0)
        return;
    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    if (ddm_chunk_iter_next(&it, &ch) != DDM_CHUNK_OK || ch.type != DDM_CHUNK_HELO ||
        !ddm_helo_parse(ch.data, ch.len, &h))
        return;
    apply_helo(vm, &h);
    g_message("%s: a late HELO answer: DDM VM pid %u \"%s\" after all", vm_key(vm), h.pid,
              h.app_name ? h.app_name : "");
    ddm_helo_clear(&h);
    mark_ready(vm);
    if (vm->state == DDM_VM_STATE_READY)
        ddm_vm_req_send(vm, NULL, DDM_CHUNK_FEAT, NULL, 0, 0, feat_reply, NULL, NULL);
}
