/* SPDX-License-Identifier: Apache-2.0
 *
 * One VM connection and its session state machine (see vm.h):
 *
 *   CONNECTING -> HANDSHAKE -> HELO -> READY | PLAIN, any -> CLOSED
 *
 * The session owns the fd, the JDWP reader, the write queue, the pending
 * table and the VM's identity. This file holds its life cycle: new, ref and
 * unref, the state and the identity, the connect result, the close (at once
 * or from an idle) and the deadline timer. The rest, one concept a file,
 * shares vm-private.h:
 *   vm_io.c         the write queue and the socket I/O;
 *   vm_request.c    the request API and the replies to our ids;
 *   vm_handshake.c  the handshake echo, the Version probe, HELO and FEAT;
 *   vm_classify.c   what each packet from the VM is, and where it goes.
 *
 * Invariants: one timer per VM, armed at the earliest deadline (pending
 * requests, the handshake echo); a callback may close the VM, so every
 * dispatch path holds a reference and re-checks the state. Bad input closes
 * the session with one log line. Non-goals: reconnect policy (the monitor's
 * backoff); debugger relaying (the relay's).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/session/logctx.h"
#include "core/session/quietlog.h"
#include "core/session/ratelog.h"
#include "core/session/vm-private.h"

const char *ddm_vm_state_name(DdmVmState s)
{
    switch (s) {
    case DDM_VM_STATE_CONNECTING: return "connecting";
    case DDM_VM_STATE_HANDSHAKE: return "handshake";
    case DDM_VM_STATE_HELO: return "helo";
    case DDM_VM_STATE_READY: return "ready";
    case DDM_VM_STATE_PLAIN: return "plain";
    case DDM_VM_STATE_CLOSED: return "closed";
    }
    return "unknown";
}

/* ------------------------------------------------------------- identity */

/* Point vm->info at the target's strings again and recount the features. */
void ddm_vm_sync_info(DdmVm *vm)
{
    ddm_vm_info *i = &vm->info;

    i->size = sizeof(ddm_vm_info);
    i->key = vm->target->key;
    i->transport = vm->target->ops->transport;
    i->device = vm->target->device;
    i->n_features = i->features ? g_strv_length((char **)i->features) : 0;
}

void ddm_vm_set_state(DdmVm *vm, DdmVmState s)
{
    DdmVmState old = vm->state;

    if (old == s)
        return;
    vm->state = s;
    DDM_DEBUG("%s: %s -> %s", vm_key(vm), ddm_vm_state_name(old), ddm_vm_state_name(s));
    if (s == DDM_VM_STATE_READY)
        vm->was_ready = TRUE;
    if (s == DDM_VM_STATE_PLAIN)
        vm->was_plain = TRUE;
    ddm_monitor_vm_state_changed(vm->monitor, vm, old);
}

char *ddm_vm_clip(const char *s, gsize max)
{
    gsize n;
    const char *end;

    if (!s)
        return NULL;
    n = strnlen(s, max + 1);
    if (n <= max)
        return g_strndup(s, n);
    /* cut before the character that straddles @max (invalid UTF-8 is cut
     * where it starts: names are shown and saved as UTF-8) */
    if (!g_utf8_validate(s, (gssize)max, &end))
        return g_strndup(s, (gsize)(end - s));
    end = s + max;
    while (end > s && ((guchar)*end & 0xc0) == 0x80)
        end--;
    return g_strndup(s, (gsize)(end - s));
}

void ddm_vm_set_name(DdmVm *vm, const char *app_name, const char *package_name, int32_t user_id)
{
    gboolean changed = FALSE;
    g_autofree char *app = ddm_vm_clip(app_name, DDM_VM_NAME_MAX);
    g_autofree char *package = ddm_vm_clip(package_name, DDM_VM_NAME_MAX);

    g_return_if_fail(ddm_vm_is_valid(vm));
    if (app && g_strcmp0(app, vm->info.app_name) != 0) {
        g_free((char *)vm->info.app_name);
        vm->info.app_name = g_steal_pointer(&app);
        changed = TRUE;
    }
    if (package && g_strcmp0(package, vm->info.package_name) != 0) {
        g_free((char *)vm->info.package_name);
        vm->info.package_name = g_steal_pointer(&package);
        changed = TRUE;
    }
    if (user_id >= 0 && user_id != vm->info.user_id) {
        vm->info.user_id = user_id;
        changed = TRUE;
    }
    if (!changed)
        return;
    ddm_vm_sync_info(vm);
    if (vm->state != DDM_VM_STATE_CLOSED)
        ddm_monitor_vm_identity_changed(vm->monitor, vm);
}

/* ---------------------------------------------------------- life cycle */

DdmVm *ddm_vm_ref(DdmVm *vm)
{
    g_return_val_if_fail(vm != NULL && vm->ref_count > 0, NULL);
    vm->ref_count++;
    return vm;
}


void ddm_vm_unref(DdmVm *vm)
{
    GArray *left;

    if (!vm)
        return;
    g_return_if_fail(vm->ref_count > 0);
    if (--vm->ref_count > 0)
        return;

    /* Normally closed long before; never call anyone from here. */
    ddm_timer_cancel(&vm->deadline);
    ddm_watch_remove(vm->io_watch);
    ddm_watch_remove(vm->out_watch);
    if (vm->fd >= 0)
        close(vm->fd);
    left = ddm_correlate_drain(vm->pending);
    if (left->len)
        g_warning("%s: freed with %u requests pending (their callbacks never ran)", vm_key(vm),
                  left->len);
    g_array_unref(left);
    ddm_correlate_free(vm->pending);
    g_clear_pointer(&vm->cancel, g_free);
    ddm_jdwp_reader_free(vm->reader);
    if (vm->out)
        g_byte_array_unref(vm->out);
    if (vm->out_held)
        g_byte_array_unref(vm->out_held);

    /* Per-VM plugin data is normally freed by the registry at DDM_VM_GONE. */
    ddm_vm_plugin_data_free_list(ddm_vm_plugin_data_take_all(vm));
    ddm_vm_headlines_clear(vm);
    ddm_vm_metrics_free(&vm->metrics);
    if (vm->unknown_logged)
        g_hash_table_destroy(vm->unknown_logged);

    ddm_vm_text_release((char *)vm->info.vm_ident); /* shared (vm_ident.c) */
    g_free((char *)vm->info.app_name);
    ddm_vm_text_release((char *)vm->info.abi);
    ddm_vm_text_release((char *)vm->info.jvm_flags);
    g_free((char *)vm->info.package_name);
    ddm_vm_features_release((char **)vm->info.features);
    g_free(vm->close_reason);
    if (vm->rare) {
        g_free(vm->rare->deferred_close_reason);
        g_free(vm->rare->pid_note);
        if (vm->rare->jdwp_suspend_thread)
            g_bytes_unref(vm->rare->jdwp_suspend_thread);
        g_free(vm->rare);
    }
    ddm_target_unref(vm->target);
    vm->magic = 0;
    g_free(vm);
}

static void on_connected(DdmTarget *target, int fd, const GError *error, gpointer ud);
static void on_deadline_in_context(DdmVm *vm);

static void on_deadline(DdmTimer *t, gpointer ud)
{
    (void)t;
    const char *before = ddm_logctx_enter(vm_key(ud)); /* ud: the VM */
    on_deadline_in_context(ud);
    ddm_logctx_leave(before);
}

DdmVmRare *ddm_vm_rare(DdmVm *vm)
{
    if (!vm->rare)
        vm->rare = g_new0(DdmVmRare, 1);
    return vm->rare;
}

/* The reason of a close deferred to the next iteration, or NULL. */
static const char *deferred_reason(const DdmVm *vm)
{
    return vm->rare ? vm->rare->deferred_close_reason : NULL;
}

DdmVm *ddm_vm_new(DdmMonitor *monitor, DdmTarget *target)
{
    DdmVm *vm;

    g_return_val_if_fail(monitor != NULL && ddm_monitor_config(monitor) != NULL, NULL);
    g_return_val_if_fail(target != NULL && target->ops != NULL, NULL);

    vm = g_new0(DdmVm, 1);
    vm->magic = DDM_VM_MAGIC;
    vm->ref_count = 1;
    vm->monitor = monitor;
    vm->target = ddm_target_ref(target);
    vm->state = DDM_VM_STATE_CONNECTING;
    vm->info.pid = target->pid_hint;
    vm->info.ddm = 0;
    vm->info.user_id = -1;
    vm->info.native_debuggable = -1;
    ddm_vm_sync_info(vm);
    /* plugin_data, headlines and unknown_logged come with their first entry
     * (core/pluginhost): an idle VM without plugins' data holds none */
    vm->fd = -1;
    vm->cancel = g_new0(DdmConnectCancel, 1); /* freed once the connect has reported */
    vm->reader = ddm_jdwp_reader_new(vm_cfg(vm)->max_packet);
    /* every peer's buffers share one budget (--max-buffers) */
    ddm_jdwp_reader_set_budget(vm->reader, ddm_monitor_read_budget(monitor));
    /* show the JDWP and chunk headers of a DDM event not yet whole (vm_stream.c) */
    ddm_jdwp_reader_offer_heads(vm->reader, DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN);
    vm->pending = ddm_correlate_new(vm_cfg(vm)->max_pending);
    vm->next_id = DDM_ID_FIRST;
    vm->handshake_deadline_us = G_MAXINT64;

    /* The one timer: an entry of the loop's heap, armed at the next deadline. */
    ddm_timer_init(&vm->deadline, on_deadline, vm);

    ddm_vm_ref(vm); /* for the connect callback */
    target->ops->connect(target, vm_cfg(vm)->connect_timeout_ms, vm->cancel, on_connected, vm);
    return vm;
}

/* Arm the timer at the earliest of the pending deadlines and the handshake deadline. */
void ddm_vm_rearm(DdmVm *vm)
{
    gint64 next;

    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    if (deferred_reason(vm)) {
        if (!ddm_timer_armed(&vm->deadline) || ddm_timer_due(&vm->deadline) > g_get_monotonic_time())
            ddm_timer_arm(&vm->deadline, 0); /* the close comes first */
        return;
    }
    next = ddm_correlate_next_deadline(vm->pending);
    if (vm->state == DDM_VM_STATE_HANDSHAKE && vm->handshake_deadline_us < next)
        next = vm->handshake_deadline_us;
    if (vm->stream) /* a streamed packet is watched for stalls every second */
        next = MIN(next, g_get_monotonic_time() + G_USEC_PER_SEC);
    if (next == G_MAXINT64)
        ddm_timer_cancel(&vm->deadline);
    else if (ddm_timer_due(&vm->deadline) != next)
        ddm_timer_arm_at(&vm->deadline, next);
}

/* Close the VM's socket when the server stops, so that the last requests
 * written (ABI 1.8 stopping hooks) reach the VM: a FIN after them
 * (shutdown), then what the VM sent and nobody read is read and dropped,
 * because close() with unread input sends a reset instead, and a reset
 * makes the VM's kernel drop what the VM had not read yet (Linux: its next
 * read fails with ECONNRESET). At most 1 MiB is read: a VM that keeps
 * sending still gets the FIN first. Not a socket (a pipe in tests): just
 * closed. */
static void close_gently(int fd)
{
    uint8_t buf[16384];
    size_t taken = 0;
    if (shutdown(fd, SHUT_WR) == 0) {
        while (taken < ((size_t)1 << 20)) {
            ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            taken += (size_t)n;
        }
    }
    close(fd);
}

/* Close with one log line: @level 0 = a normal close (debug while
 * connecting or stopping, or in a one-shot look that reports held VMs:
 * ddm_monitor_reports_held, the in-process snapshot; else a message);
 * G_LOG_LEVEL_WARNING for a VM
 * that broke the protocol; G_LOG_LEVEL_INFO for a scanned port that turned
 * out not to be a VM. */
static void close_logged(DdmVm *vm, const char *reason, GLogLevelFlags level)
{
    GArray *gone;
    DdmVmState old;

    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    ddm_vm_ref(vm);
    old = vm->state;
    vm->state = DDM_VM_STATE_CLOSED;
    g_free(vm->close_reason);
    vm->close_reason = g_strdup(reason ? reason : "closed");

    if (ddm_monitor_stopping(vm->monitor))
        level = G_LOG_LEVEL_DEBUG;
    else if (level == 0)
        level = old == DDM_VM_STATE_CONNECTING || ddm_monitor_reports_held(vm->monitor)
                    ? G_LOG_LEVEL_DEBUG
                    : G_LOG_LEVEL_MESSAGE;
    /* one VM that keeps coming back and failing logs a few lines per window */
    g_autofree char *rate_key = g_strdup_printf("%s closed", vm_key(vm));
    if (level == G_LOG_LEVEL_WARNING)
        ddm_ratelog(rate_key, level, "%s: %s; dropping the connection (was %s)", vm_key(vm),
                    vm->close_reason, ddm_vm_state_name(old));
    else
        ddm_ratelog(rate_key, level, "%s: session closed (%s, was %s)", vm_key(vm),
                    vm->close_reason, ddm_vm_state_name(old));

    if (vm->cancel) /* a connect in flight reports CANCELLED later */
        ddm_connect_cancel(vm->cancel);
    ddm_watch_remove(vm->io_watch);
    vm->io_watch = NULL;
    ddm_watch_remove(vm->out_watch);
    vm->out_watch = NULL;
    ddm_timer_cancel(&vm->deadline);
    if (vm->fd >= 0) {
        if (ddm_monitor_stopping(vm->monitor))
            close_gently(vm->fd);
        else
            close(vm->fd);
        vm->fd = -1;
    }
    g_clear_pointer(&vm->out, g_byte_array_unref);
    vm->out_pos = 0;
    vm->out_part_left = 0;
    g_clear_pointer(&vm->out_held, g_byte_array_unref);
    vm->reply_streaming = FALSE;
    /* nothing more is read: the buffer leaves the shared budget now */
    ddm_jdwp_reader_set_budget(vm->reader, NULL);

    /* A stream cut short ends first (-EPIPE, with what arrived), then
     * pending requests: GONE is the plugins' last call. */
    ddm_vm_stream_abort(vm);
    gone = ddm_correlate_drain(vm->pending);
    for (guint i = 0; i < gone->len; i++)
        ddm_vm_req_deliver_status(vm, &g_array_index(gone, DdmPending, i), DDM_REPLY_VM_GONE);
    g_array_unref(gone);

    ddm_monitor_vm_state_changed(vm->monitor, vm, old);
    ddm_monitor_vm_closed(vm->monitor, vm);
    ddm_vm_unref(vm);
}

void ddm_vm_close(DdmVm *vm, const char *reason)
{
    g_return_if_fail(vm != NULL && vm->magic == DDM_VM_MAGIC);
    close_logged(vm, reason, 0);
}

/* A port scan meets other services: what never echoed the handshake is no VM. */
static GLogLevelFlags fault_level(const DdmVm *vm)
{
    if (vm->state == DDM_VM_STATE_HANDSHAKE && vm->target->speculative)
        return G_LOG_LEVEL_INFO;
    return G_LOG_LEVEL_WARNING;
}

/* Close a VM that protocol-violated: one warning naming the VM and the fault. */
void ddm_vm_close_bad(DdmVm *vm, const char *fmt, ...)
{
    va_list ap;
    char *why;

    va_start(ap, fmt);
    why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    /* the monitor backs off before trying it again (monitor.c) */
    if (vm->state != DDM_VM_STATE_CLOSED && fault_level(vm) == G_LOG_LEVEL_WARNING)
        vm->violated = TRUE;
    close_logged(vm, why, fault_level(vm));
    g_free(why);
}

static void deferred_close(DdmVm *vm)
{
    char *why = vm->rare->deferred_close_reason;

    vm->rare->deferred_close_reason = NULL;
    close_logged(vm, why, G_LOG_LEVEL_WARNING);
    g_free(why);
}

/* Close at the next loop iteration (the deadline timer, armed at once):
 * used where callbacks must not run (inside request). */
void ddm_vm_close_later(DdmVm *vm, char *why /* transfer full */)
{
    if (vm->state == DDM_VM_STATE_CLOSED || deferred_reason(vm)) {
        g_free(why);
        return;
    }
    ddm_vm_rare(vm)->deferred_close_reason = why;
    ddm_vm_rearm(vm);
}

/* ------------------------------------------------------------ connected */

static void on_connected_in_context(DdmTarget *target, int fd, const GError *error, gpointer ud);

/* What a connect attempt logs is about this VM. */
static void on_connected(DdmTarget *target, int fd, const GError *error, gpointer ud)
{
    const char *before = ddm_logctx_enter(target->key);
    on_connected_in_context(target, fd, error, ud);
    ddm_logctx_leave(before);
}

static void on_connected_in_context(DdmTarget *target, int fd, const GError *error, gpointer ud)
{
    DdmVm *vm = ud;
    (void)target;

    g_clear_pointer(&vm->cancel, g_free); /* the connect has reported: nothing left to cancel */
    if (vm->state != DDM_VM_STATE_CONNECTING) {
        if (fd >= 0)
            close(fd); /* closed while connecting */
        ddm_vm_unref(vm);
        return;
    }
    if (error) {
        vm->refused_connect = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
        ddm_vm_close(vm, error->message);
        ddm_vm_unref(vm);
        return;
    }
    vm->fd = fd;
    vm->was_connected = TRUE;
    vm->connected_at_us = g_get_monotonic_time();
    /* non-blocking, close-on-exec, TCP_NODELAY: the target's (target.h) */
    ddm_jdwp_reader_expect_handshake(vm->reader);
    vm->handshake_deadline_us =
        vm->connected_at_us +
        (gint64)ddm_config_handshake_timeout_ms(vm_cfg(vm)) * 1000;
    vm->io_watch = ddm_watch_add(fd, G_IO_IN, ddm_vm_io_on_readable, vm);
    ddm_vm_set_state(vm, DDM_VM_STATE_HANDSHAKE);
    if (vm->state == DDM_VM_STATE_HANDSHAKE) {
        /* ART requires all 14 bytes in one read: one write, into an empty
         * queue, with the first requests behind them (vm_handshake.c). */
        gboolean gathering = ddm_vm_io_gather_begin(vm);
        int r = ddm_vm_io_queue(vm, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
        if (r < 0)
            ddm_vm_close_later(vm, g_strdup_printf("cannot send the handshake: %s",
                                                   g_strerror(-r)));
        else
            ddm_vm_handshake_sent(vm);
        ddm_vm_io_gather_end(vm, gathering);
        ddm_vm_rearm(vm);
    }
    ddm_vm_unref(vm);
}

/* --------------------------------------------------------------- timer */

static void on_deadline_in_context(DdmVm *vm)
{
    gint64 now = g_get_monotonic_time();
    GArray *expired;
    char name[5];

    if (deferred_reason(vm)) {
        deferred_close(vm);
        return;
    }
    ddm_vm_ref(vm);
    /* After a stall of the main loop, answers may wait unread in the socket:
     * take them first, so nothing times out that was answered in time. */
    if (vm->fd >= 0)
        ddm_vm_io_read_input(vm);
    if (vm->state == DDM_VM_STATE_CLOSED) {
        ddm_vm_unref(vm);
        return; /* close() cancelled the timer */
    }
    if (vm->state == DDM_VM_STATE_HANDSHAKE && now >= vm->handshake_deadline_us) {
        char *why = g_strdup_printf("no handshake echo within %u ms",
                                    ddm_config_handshake_timeout_ms(vm_cfg(vm)));
        close_logged(vm, why, fault_level(vm));
        g_free(why);
    }
    if (ddm_vm_streaming(vm) && !ddm_vm_stream_check_stall(vm, now)) {
        /* Replies queue behind the packet being streamed: nothing can have
         * timed out yet. Look again in a second (vm_stream.c), unless the
         * read above scheduled a close (ddm_vm_close_later armed the timer
         * for the next iteration: keep that). */
        if (vm->state != DDM_VM_STATE_CLOSED && !deferred_reason(vm))
            ddm_timer_arm_at(&vm->deadline, now + G_USEC_PER_SEC);
        ddm_vm_unref(vm);
        return;
    }
    /* Entries removed here leave through TIMEOUT even if a callback closes the VM. */
    expired = ddm_correlate_expire(vm->pending, now);
    for (guint i = 0; i < expired->len; i++) {
        const DdmPending *p = &g_array_index(expired, DdmPending, i);
        DDM_DEBUG("%s: request %s id 0x%08x timed out", vm_key(vm), ddm_chunk_name(p->type, name),
                p->id);
        ddm_vm_req_deliver_status(vm, p, DDM_REPLY_TIMEOUT);
    }
    g_array_unref(expired);
    if (vm->state != DDM_VM_STATE_CLOSED)
        ddm_vm_rearm(vm);
    ddm_vm_unref(vm);
}
