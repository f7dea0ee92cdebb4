/* SPDX-License-Identifier: Apache-2.0
 *
 * One VM connection and its session state machine (see vm.h):
 *
 *   CONNECTING -> HANDSHAKE -> HELO -> READY | PLAIN, any -> CLOSED
 *
 * Owns the fd, the JDWP reader, the write queue, the pending table and the
 * VM's identity. Each packet from the VM is classified once: a reply to one
 * of our ids (pending table -> its callback, exactly once), a DDM command
 * from the VM (0xC7/1 -> each chunk to the monitor as an event), a reply to
 * an id we do not know (the relay's, or late), or other JDWP traffic (the
 * monitor's). Everything the core needs from DDM itself is HELO and FEAT.
 *
 * Invariants: every accepted request's callback runs exactly once (reply,
 * JDWP error, timeout, VM gone) and never from inside ddm_vm_request; one
 * timer per VM, armed at the earliest deadline; the write queue is bounded
 * (max_write_queue) and a G_IO_OUT watch exists only while bytes wait; a
 * callback may close the VM, so every dispatch path holds a reference and
 * re-checks the state. Bad input closes the session with one log line.
 * Non-goals: chunk semantics beyond HELO/FEAT/FAIL/ZLIB framing; reconnect
 * policy (the monitor's backoff); debugger relaying (the relay's).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include <ddmon/bytes.h>

#include "core/wire/ddm.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"

#define DDM_SERVER_PROTOCOL_VERSION 1u
#define DDM_ID_FIRST 0x40000000u
#define DDM_ID_LAST 0x7fffffffu
#define READ_CHUNK ((size_t)64 << 10)
#define READS_PER_WAKEUP 16 /* fairness between VMs: at most ~1 MiB per wakeup */

/* What the session reports goes straight to the events table the monitor
 * was given (core/session/monitor.h): one call, no hops. */
static void report_ddm_chunk(DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data, size_t len)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->ddm_chunk)
        ev->ddm_chunk(ud, vm, ci, data, len);
}

static void report_tap_chunk(DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data, size_t len)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->tap_chunk)
        ev->tap_chunk(ud, vm, ci, data, len);
}

static void report_jdwp_command(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->jdwp_command) {
        ev->jdwp_command(ud, vm, pkt);
        return;
    }
    vm->jdwp_dropped++;
    g_debug("%s: JDWP command %u/%u from the VM dropped (no relay)", vm->target->key,
            pkt->header.cmdset, pkt->header.cmd);
}

static gboolean report_foreign_reply(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    return ev->foreign_reply ? ev->foreign_reply(ud, vm, pkt) : FALSE;
}

static void report_output_drained(DdmVm *vm)
{
    gpointer ud;
    const DdmSessionEvents *ev = ddm_monitor_events(vm->monitor, &ud);
    if (ev->output_drained)
        ev->output_drained(ud, vm);
}

static const DdmConfig *cfg(const DdmVm *vm)
{
    return ddm_monitor_config(vm->monitor);
}

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

static const char *vm_key(const DdmVm *vm)
{
    return vm->target ? vm->target->key : "?";
}

/* ------------------------------------------------------------- identity */

/* Point vm->info at the owned strings again (after any of them changed). */
static void sync_info(DdmVm *vm)
{
    ddm_vm_info *i = &vm->info;

    i->size = sizeof(ddm_vm_info);
    i->key = vm->target->key;
    i->transport = vm->target->ops->transport;
    i->device = vm->target->device;
    i->vm_ident = vm->vm_ident;
    i->app_name = vm->app_name;
    i->abi = vm->abi;
    i->jvm_flags = vm->jvm_flags;
    i->package_name = vm->package_name;
    i->features = (const char *const *)vm->features;
    i->n_features = vm->features ? g_strv_length(vm->features) : 0;
    i->boot_stage = vm->boot_stage;
}

static void set_state(DdmVm *vm, DdmVmState s)
{
    DdmVmState old = vm->state;

    if (old == s)
        return;
    vm->state = s;
    g_debug("%s: %s -> %s", vm_key(vm), ddm_vm_state_name(old), ddm_vm_state_name(s));
    if (s == DDM_VM_STATE_READY)
        vm->was_ready = TRUE;
    ddm_monitor_vm_state_changed(vm->monitor, vm, old);
}

void ddm_vm_set_name(DdmVm *vm, const char *app_name, const char *package_name, int32_t user_id)
{
    gboolean changed = FALSE;

    g_return_if_fail(ddm_vm_is_valid(vm));
    if (app_name && g_strcmp0(app_name, vm->app_name) != 0) {
        g_free(vm->app_name);
        vm->app_name = g_strdup(app_name);
        changed = TRUE;
    }
    if (package_name && g_strcmp0(package_name, vm->package_name) != 0) {
        g_free(vm->package_name);
        vm->package_name = g_strdup(package_name);
        changed = TRUE;
    }
    if (user_id >= 0 && user_id != vm->info.user_id) {
        vm->info.user_id = user_id;
        changed = TRUE;
    }
    if (!changed)
        return;
    sync_info(vm);
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

static void free_plugin_data(gpointer key, gpointer value, gpointer ud)
{
    DdmVmPluginData *pd = value;
    (void)key;
    (void)ud;
    if (pd->data_free && pd->data)
        pd->data_free(pd->data);
    g_free(pd);
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
    if (vm->deadline_source) {
        g_source_destroy(vm->deadline_source);
        g_source_unref(vm->deadline_source);
    }
    if (vm->io_watch)
        g_source_remove(vm->io_watch);
    if (vm->out_watch)
        g_source_remove(vm->out_watch);
    if (vm->close_idle)
        g_source_remove(vm->close_idle);
    if (vm->fd >= 0)
        close(vm->fd);
    left = ddm_correlate_drain(vm->pending);
    if (left->len)
        g_warning("%s: freed with %u requests pending (their callbacks never ran)", vm_key(vm),
                  left->len);
    g_array_unref(left);
    ddm_correlate_free(vm->pending);
    g_clear_object(&vm->cancel);
    ddm_jdwp_reader_free(vm->reader);
    g_byte_array_unref(vm->out);

    /* Per-VM plugin data is normally freed by the registry at DDM_VM_GONE. */
    g_hash_table_foreach(vm->plugin_data, free_plugin_data, NULL);
    g_hash_table_destroy(vm->plugin_data);
    g_hash_table_destroy(vm->headlines);
    g_hash_table_destroy(vm->unknown_logged);

    g_free(vm->vm_ident);
    g_free(vm->app_name);
    g_free(vm->abi);
    g_free(vm->jvm_flags);
    g_free(vm->package_name);
    g_strfreev(vm->features);
    g_free(vm->close_reason);
    g_free(vm->deferred_close_reason);
    ddm_target_unref(vm->target);
    vm->magic = 0;
    g_free(vm);
}

static void on_connected(DdmTarget *target, int fd, const GError *error, gpointer ud);
static gboolean on_deadline(gpointer ud);

static gboolean deadline_dispatch(GSource *source, GSourceFunc callback, gpointer ud)
{
    (void)source;
    return callback ? callback(ud) : G_SOURCE_REMOVE;
}

/* No prepare/check: the source is ready purely by its ready time. */
static GSourceFuncs deadline_funcs = {NULL, NULL, deadline_dispatch, NULL, NULL, NULL};

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
    sync_info(vm);
    vm->plugin_data = g_hash_table_new(g_direct_hash, g_direct_equal);
    vm->headlines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    vm->unknown_logged = g_hash_table_new(g_direct_hash, g_direct_equal);
    vm->fd = -1;
    vm->cancel = g_cancellable_new();
    vm->reader = ddm_jdwp_reader_new(cfg(vm)->max_packet);
    vm->out = g_byte_array_new();
    vm->pending = ddm_correlate_new(cfg(vm)->max_pending);
    vm->next_id = DDM_ID_FIRST;
    vm->handshake_deadline_us = G_MAXINT64;

    /* The one timer: a plain source whose ready time is the next deadline. */
    vm->deadline_source = g_source_new(&deadline_funcs, sizeof(GSource));
    g_source_set_callback(vm->deadline_source, on_deadline, vm, NULL);
    g_source_set_ready_time(vm->deadline_source, -1);
    g_source_set_name(vm->deadline_source, "ddmon vm deadline");
    vm->timer = g_source_attach(vm->deadline_source, NULL);

    ddm_vm_ref(vm); /* for the connect callback */
    target->ops->connect(target, cfg(vm)->connect_timeout_ms, vm->cancel, on_connected, vm);
    return vm;
}

/* Arm the timer at the earliest of the pending deadlines and the handshake deadline. */
static void rearm(DdmVm *vm)
{
    gint64 next;

    if (!vm->deadline_source)
        return;
    next = ddm_correlate_next_deadline(vm->pending);
    if (vm->state == DDM_VM_STATE_HANDSHAKE && vm->handshake_deadline_us < next)
        next = vm->handshake_deadline_us;
    if (vm->state == DDM_VM_STATE_CLOSED || next == G_MAXINT64)
        next = -1;
    if (g_source_get_ready_time(vm->deadline_source) != next)
        g_source_set_ready_time(vm->deadline_source, next);
}

static void deliver(DdmVm *vm, const DdmPending *p, const ddm_reply *r)
{
    ddm_reply_fn fn = (ddm_reply_fn)(void (*)(void))p->callback;

    if (fn)
        fn(p->owner, vm, r, p->ud);
}

static void deliver_status(DdmVm *vm, const DdmPending *p, ddm_reply_status st)
{
    ddm_reply r = {.status = st};
    deliver(vm, p, &r);
}

/* Close with one log line: @level 0 = a normal close (debug while
 * connecting or stopping, else a message); G_LOG_LEVEL_WARNING for a VM
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
        level = old == DDM_VM_STATE_CONNECTING ? G_LOG_LEVEL_DEBUG : G_LOG_LEVEL_MESSAGE;
    if (level == G_LOG_LEVEL_WARNING)
        g_warning("%s: %s; dropping the connection (was %s)", vm_key(vm), vm->close_reason,
                  ddm_vm_state_name(old));
    else
        g_log(G_LOG_DOMAIN, level, "%s: session closed (%s, was %s)", vm_key(vm),
              vm->close_reason, ddm_vm_state_name(old));

    g_cancellable_cancel(vm->cancel); /* a connect in flight reports CANCELLED later */
    if (vm->io_watch) {
        g_source_remove(vm->io_watch);
        vm->io_watch = 0;
    }
    if (vm->out_watch) {
        g_source_remove(vm->out_watch);
        vm->out_watch = 0;
    }
    if (vm->close_idle) {
        g_source_remove(vm->close_idle);
        vm->close_idle = 0;
    }
    if (vm->deadline_source) {
        g_source_destroy(vm->deadline_source);
        g_source_unref(vm->deadline_source);
        vm->deadline_source = NULL;
        vm->timer = 0;
    }
    if (vm->fd >= 0) {
        close(vm->fd);
        vm->fd = -1;
    }
    g_byte_array_set_size(vm->out, 0);
    vm->out_pos = 0;

    /* Pending requests end first: GONE is the plugins' last call. */
    gone = ddm_correlate_drain(vm->pending);
    for (guint i = 0; i < gone->len; i++)
        deliver_status(vm, &g_array_index(gone, DdmPending, i), DDM_REPLY_VM_GONE);
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
    if (vm->state == DDM_VM_STATE_HANDSHAKE && g_strcmp0(vm->target->origin, "local") == 0)
        return G_LOG_LEVEL_INFO;
    return G_LOG_LEVEL_WARNING;
}

/* Close a VM that protocol-violated: one warning naming the VM and the fault. */
static void close_bad(DdmVm *vm, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void close_bad(DdmVm *vm, const char *fmt, ...)
{
    va_list ap;
    char *why;

    va_start(ap, fmt);
    why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    close_logged(vm, why, fault_level(vm));
    g_free(why);
}

static gboolean deferred_close_cb(gpointer ud)
{
    DdmVm *vm = ud;
    char *why = vm->deferred_close_reason;

    vm->close_idle = 0;
    vm->deferred_close_reason = NULL;
    close_logged(vm, why, G_LOG_LEVEL_WARNING);
    g_free(why);
    return G_SOURCE_REMOVE;
}

/* Close from an idle: used where callbacks must not run (inside request). */
static void close_later(DdmVm *vm, char *why /* transfer full */)
{
    if (vm->state == DDM_VM_STATE_CLOSED || vm->close_idle) {
        g_free(why);
        return;
    }
    vm->deferred_close_reason = why;
    vm->close_idle = g_idle_add(deferred_close_cb, vm);
}

/* ---------------------------------------------------------------- write */

static gboolean on_writable(gint fd, GIOCondition cond, gpointer ud);

static ssize_t send_some(int fd, const uint8_t *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == ENOTSOCK)
        w = write(fd, p, n);
    return w;
}

/* Write what the kernel takes. 0, or -errno on a write error (not closed here). */
static int flush_out(DdmVm *vm)
{
    while (vm->out_pos < vm->out->len) {
        ssize_t w = send_some(vm->fd, vm->out->data + vm->out_pos, vm->out->len - vm->out_pos);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -errno;
        }
        vm->out_pos += (gsize)w;
        vm->bytes_out += (guint64)w;
    }
    if (vm->out_pos == vm->out->len) {
        g_byte_array_set_size(vm->out, 0);
        vm->out_pos = 0;
        if (vm->out_watch) {
            g_source_remove(vm->out_watch);
            vm->out_watch = 0;
        }
    } else {
        if (vm->out_pos > (vm->out->len / 2)) {
            g_byte_array_remove_range(vm->out, 0, (guint)vm->out_pos);
            vm->out_pos = 0;
        }
        if (!vm->out_watch)
            vm->out_watch = g_unix_fd_add(vm->fd, G_IO_OUT, on_writable, vm);
    }
    return 0;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer ud)
{
    DdmVm *vm = ud;
    int r;
    (void)fd;
    (void)cond;

    r = flush_out(vm);
    if (r < 0) {
        vm->out_watch = 0;
        if (r == -EPIPE || r == -ECONNRESET)
            ddm_vm_close(vm, "connection closed by the VM (write)");
        else {
            char *why = g_strdup_printf("write error: %s", g_strerror(-r));
            ddm_vm_close(vm, why);
            g_free(why);
        }
        return G_SOURCE_REMOVE;
    }
    if (vm->out_watch)
        return G_SOURCE_CONTINUE;
    /* Drained: flush_out() already removed this watch and cleared the id. */
    if (vm->notify_drained) {
        vm->notify_drained = FALSE;
        report_output_drained(vm);
    }
    return G_SOURCE_REMOVE;
}

/* Queue bytes and try to write them. Never closes synchronously and never
 * calls anyone: a write error schedules the close. -ENOBUFS over the cap. */
static int queue_out(DdmVm *vm, const uint8_t *p, size_t n)
{
    int r;

    if (vm->fd < 0)
        return -ENOTCONN;
    if (vm->out->len - vm->out_pos + n > cfg(vm)->max_write_queue || n > G_MAXUINT - vm->out->len)
        return -ENOBUFS;
    g_byte_array_append(vm->out, p, (guint)n);
    vm->packets_out++;
    if (vm->out_watch)
        return 0; /* the watch writes when the socket drains */
    r = flush_out(vm);
    if (r == -EPIPE || r == -ECONNRESET) {
        /* The VM went away: the write watch (next iteration) closes it as
         * a normal disconnect; no callback may run from in here. */
        if (!vm->out_watch)
            vm->out_watch = g_unix_fd_add(vm->fd, G_IO_OUT, on_writable, vm);
    } else if (r < 0) {
        close_later(vm, g_strdup_printf("write error: %s", g_strerror(-r)));
    }
    return 0;
}

int ddm_vm_send_packet(DdmVm *vm, const uint8_t *packet, size_t len)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(packet != NULL && len >= DDM_JDWP_HEADER_LEN, -EINVAL);
    if (vm->state != DDM_VM_STATE_HELO && vm->state != DDM_VM_STATE_READY &&
        vm->state != DDM_VM_STATE_PLAIN)
        return -ENOTCONN;
    return queue_out(vm, packet, len);
}

gsize ddm_vm_out_queued(const DdmVm *vm)
{
    g_return_val_if_fail(vm != NULL, 0);
    return vm->out ? vm->out->len - vm->out_pos : 0;
}

gboolean ddm_vm_notify_when_drained(DdmVm *vm)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), FALSE);
    if (!vm->out_watch)
        return FALSE; /* nothing waits for the socket */
    vm->notify_drained = TRUE;
    return TRUE;
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer ud);

void ddm_vm_pause_input(DdmVm *vm, gboolean paused)
{
    g_return_if_fail(ddm_vm_is_valid(vm));
    if (vm->input_paused == paused)
        return;
    vm->input_paused = paused;
    if (vm->state == DDM_VM_STATE_CLOSED || vm->fd < 0)
        return;
    if (paused && vm->io_watch) {
        g_source_remove(vm->io_watch);
        vm->io_watch = 0;
    } else if (!paused && !vm->io_watch) {
        vm->io_watch = ddm_read_watch_add(vm->fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, vm);
    }
    g_debug("%s: %s reading from the VM", vm_key(vm), paused ? "paused" : "resumed");
}

/* ------------------------------------------------------------- requests */

uint32_t ddm_vm_alloc_id(DdmVm *vm)
{
    uint32_t id;

    g_return_val_if_fail(vm != NULL, 0);
    do {
        id = vm->next_id;
        vm->next_id = id >= DDM_ID_LAST ? DDM_ID_FIRST : id + 1;
    } while (ddm_correlate_contains(vm->pending, id));
    return id;
}

/* Send a request in any connected state (the core's HELO/FEAT go out in HELO). */
static int send_request(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                        unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out)
{
    DdmPending p = {0};
    uint8_t *pkt;
    size_t plen = 0;
    int r;
    char name[5];

    if (len > cfg(vm)->max_packet || len > (size_t)G_MAXUINT32 - 64 ||
        DDM_JDWP_HEADER_LEN + DDM_CHUNK_HEADER_LEN + len > cfg(vm)->max_packet)
        return -EMSGSIZE;
    if (len && !data)
        return -EINVAL;
    if (ddm_correlate_count(vm->pending) >= cfg(vm)->max_pending)
        return -ENOSPC;
    if (timeout_ms == 0)
        timeout_ms = cfg(vm)->request_timeout_ms ? cfg(vm)->request_timeout_ms : 10000;

    p.id = ddm_vm_alloc_id(vm);
    p.type = type;
    p.deadline_us = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    p.owner = owner;
    p.callback = (gpointer)(void (*)(void))fn;
    p.ud = ud;
    if (!ddm_correlate_insert(vm->pending, &p))
        return -ENOSPC;

    pkt = ddm_chunk_build_packet(p.id, type, data, len, &plen);
    r = queue_out(vm, pkt, plen);
    g_free(pkt);
    if (r < 0) {
        DdmPending back;
        ddm_correlate_take(vm->pending, p.id, &back); /* not accepted: no callback */
        if (r == -ENOBUFS)
            close_later(vm, g_strdup_printf("write queue over %" G_GSIZE_FORMAT
                                            " bytes: the VM is not reading",
                                            cfg(vm)->max_write_queue));
        return r;
    }
    g_debug("%s: request %s id 0x%08x (%zu bytes, timeout %u ms)", vm_key(vm),
            ddm_chunk_name(type, name), p.id, len, timeout_ms);
    {
        ddm_chunk_info ci = {.type = type, .packet_id = p.id, .origin = DDM_ORIGIN_REQUEST};
        report_tap_chunk(vm, &ci, data, len);
    }
    rearm(vm);
    if (id_out)
        *id_out = p.id;
    return 0;
}

int ddm_vm_request(DdmVm *vm, gpointer owner, uint32_t type, const void *data, size_t len,
                   unsigned timeout_ms, ddm_reply_fn fn, gpointer ud, uint32_t *id_out)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    if (vm->state != DDM_VM_STATE_READY)
        return -ENOTCONN;
    return send_request(vm, owner, type, data, len, timeout_ms, fn, ud, id_out);
}

void ddm_vm_cancel_owner(DdmVm *vm, gpointer owner)
{
    GArray *all, *mine;

    g_return_if_fail(ddm_vm_is_valid(vm));
    all = ddm_correlate_drain(vm->pending);
    mine = g_array_new(FALSE, FALSE, sizeof(DdmPending));
    for (guint i = 0; i < all->len; i++) {
        DdmPending *p = &g_array_index(all, DdmPending, i);
        if (p->owner == owner)
            g_array_append_val(mine, *p);
        else
            ddm_correlate_insert(vm->pending, p); /* room: the table was just emptied */
    }
    g_array_unref(all);
    ddm_vm_ref(vm);
    for (guint i = 0; i < mine->len; i++)
        deliver_status(vm, &g_array_index(mine, DdmPending, i), DDM_REPLY_VM_GONE);
    g_array_unref(mine);
    if (vm->state != DDM_VM_STATE_CLOSED)
        rearm(vm);
    ddm_vm_unref(vm);
}

/* --------------------------------------------------- HELO / FEAT replies */

static void mark_plain(DdmVm *vm)
{
    vm->info.ddm = 0;
    set_state(vm, DDM_VM_STATE_PLAIN);
}

static void mark_ready(DdmVm *vm)
{
    ddm_monitor_note_ddm(vm->monitor, vm_key(vm));
    vm->info.ddm = 1;
    sync_info(vm);
    set_state(vm, DDM_VM_STATE_READY);
}

static void apply_helo(DdmVm *vm, const DdmHelo *h)
{
    vm->info.protocol_version = h->protocol_version;
    vm->info.pid = h->pid;
    g_free(vm->vm_ident);
    vm->vm_ident = g_strdup(h->vm_ident);
    g_free(vm->app_name);
    vm->app_name = g_strdup(h->app_name);
    vm->info.user_id = h->user_id;
    g_free(vm->abi);
    vm->abi = g_strdup(h->abi);
    g_free(vm->jvm_flags);
    vm->jvm_flags = g_strdup(h->jvm_flags);
    vm->info.native_debuggable = h->native_debuggable;
    g_free(vm->package_name);
    vm->package_name = g_strdup(h->package_name);
    vm->boot_stage = h->boot_stage;
    sync_info(vm);
}

static void helo_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    char name[5];
    (void)self;
    (void)ud;

    if (vm->state != DDM_VM_STATE_HELO)
        return; /* closed meanwhile (VM_GONE) */
    switch (r->status) {
    case DDM_REPLY_CHUNK:
        if (r->type == DDM_CHUNK_HELO) {
            DdmHelo h;
            if (!ddm_helo_parse(r->data, r->len, &h)) {
                close_bad(vm, "malformed HELO reply (%zu bytes)", r->len);
                return;
            }
            apply_helo(vm, &h);
            if (h.trailing)
                g_debug("%s: HELO reply has %zu unknown trailing bytes (ignored)", vm_key(vm),
                        h.trailing);
            g_info("%s: DDM VM pid %u \"%s\" (%s)", vm_key(vm), h.pid,
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
                  cfg(vm)->request_timeout_ms);
        mark_plain(vm);
        break;
    case DDM_REPLY_BAD:
        close_bad(vm, "unparsable HELO reply");
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
    feat = ddm_feat_parse(r->data, r->len);
    if (!feat) {
        g_warning("%s: malformed FEAT reply (%zu bytes) ignored", vm_key(vm), r->len);
        return;
    }
    g_strfreev(vm->features);
    vm->features = feat;
    sync_info(vm);
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
    return cfg(vm)->tcp_version_probe && (vm->target->ops->caps & DDM_TARGET_CAP_ANY_JVM) &&
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

/* Timeout or VM gone (the reply itself goes to handle_probe_reply). */
static void probe_reply(ddm_plugin *self, ddm_vm *vm, const ddm_reply *r, void *ud)
{
    (void)self;
    (void)ud;
    if (vm->state != DDM_VM_STATE_HELO || r->status != DDM_REPLY_TIMEOUT)
        return;
    g_info("%s: no answer to VirtualMachine.Version in %u ms; trying HELO", vm_key(vm),
           PROBE_TIMEOUT_MS);
    start_helo(vm);
}

static void handle_probe_reply(DdmVm *vm, const DdmJdwpPacket *pkt)
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
        g_debug("%s: %s: a Dalvik/ART VM; sending HELO", vm_key(vm), name);
        start_helo(vm);
    } else {
        g_free(vm->vm_ident);
        vm->vm_ident = g_strdup_printf("%s %s", name, version);
        sync_info(vm);
        g_message("%s: %s (JDWP %d.%d): plain JVM, no DDM traffic", vm_key(vm), vm->vm_ident,
                  major, minor);
        vm->info.ddm = 0;
        set_state(vm, DDM_VM_STATE_PLAIN);
    }
    g_free(desc);
    g_free(version);
    g_free(name);
}

static void start_probe(DdmVm *vm)
{
    DdmPending p = {0};
    uint8_t *pkt;
    size_t plen = 0;
    int r;

    set_state(vm, DDM_VM_STATE_HELO);
    if (vm->state != DDM_VM_STATE_HELO)
        return;
    p.id = ddm_vm_alloc_id(vm);
    p.deadline_us = g_get_monotonic_time() + (gint64)PROBE_TIMEOUT_MS * 1000;
    p.callback = (gpointer)(void (*)(void))probe_reply;
    if (!ddm_correlate_insert(vm->pending, &p)) {
        start_helo(vm);
        return;
    }
    pkt = ddm_jdwp_build_command(p.id, DDM_JDWP_CMDSET_VM, DDM_JDWP_CMD_VM_VERSION, NULL, 0, &plen);
    r = queue_out(vm, pkt, plen);
    g_free(pkt);
    if (r < 0) {
        close_later(vm, g_strdup_printf("cannot send VirtualMachine.Version: %s", g_strerror(-r)));
        return;
    }
    rearm(vm);
}

static void start_helo(DdmVm *vm)
{
    uint8_t helo[4];
    int r;

    set_state(vm, DDM_VM_STATE_HELO);
    if (vm->state != DDM_VM_STATE_HELO)
        return;
    ddm_helo_request(helo, DDM_SERVER_PROTOCOL_VERSION);
    r = send_request(vm, NULL, DDM_CHUNK_HELO, helo, sizeof helo, 0, helo_reply, NULL, &vm->helo_id);
    if (r == 0)
        r = send_request(vm, NULL, DDM_CHUNK_FEAT, NULL, 0, 0, feat_reply, NULL, NULL);
    if (r < 0)
        close_later(vm, g_strdup_printf("cannot send HELO: %s", g_strerror(-r)));
}

/* ----------------------------------------------------------- read path */

/* Turn a raw reply chunk into a ddm_reply (inflating ZLIB). @r->data may
 * point into *@inflated (g_free after use). FALSE: BAD, @why says why. */
static gboolean decode_reply_chunk(DdmVm *vm, const DdmJdwpPacket *pkt, ddm_reply *r,
                                   uint8_t **inflated, char **fail_msg, const char **why)
{
    DdmChunkIter it;
    DdmChunk ch;
    DdmChunkResult cr;

    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    cr = ddm_chunk_iter_next(&it, &ch);
    if (cr != DDM_CHUNK_OK) {
        *why = cr == DDM_CHUNK_END ? "reply too short for a chunk header"
                                   : "reply chunk length runs past the packet";
        return FALSE;
    }
    r->status = DDM_REPLY_CHUNK;
    r->type = ch.type;
    r->data = ch.data;
    r->len = ch.len;
    if (ch.type == DDM_CHUNK_ZLIB) {
        uint32_t inner;
        size_t out_len = 0;
        DdmZlibResult zr = ddm_zlib_inflate(ch.data, ch.len, cfg(vm)->max_inflate, &inner,
                                            inflated, &out_len);
        if (zr != DDM_ZLIB_OK) {
            *why = ddm_zlib_result_str(zr);
            return FALSE;
        }
        r->type = inner;
        r->data = *inflated;
        r->len = out_len;
    }
    if (r->type == DDM_CHUNK_FAIL) {
        if (!ddm_fail_parse(r->data, r->len, &r->fail_code, fail_msg))
            g_debug("%s: malformed FAIL chunk (%zu bytes)", vm_key(vm), r->len);
        r->fail_msg = *fail_msg;
    }
    return TRUE;
}

static void dispatch_chunks(DdmVm *vm, const DdmJdwpPacket *pkt, unsigned skip, ddm_chunk_origin origin,
                            uint32_t request_type);

static void handle_our_reply(DdmVm *vm, const DdmPending *p, const DdmJdwpPacket *pkt)
{
    ddm_reply r = {0};
    uint8_t *inflated = NULL;
    char *fail_msg = NULL;
    const char *why = NULL;
    char name[5];

    if (pkt->header.error != 0) {
        r.status = DDM_REPLY_ERROR;
        r.jdwp_error = pkt->header.error;
    } else if (pkt->data_len == 0) {
        r.status = DDM_REPLY_EMPTY;
    } else if (!decode_reply_chunk(vm, pkt, &r, &inflated, &fail_msg, &why)) {
        g_warning("%s: bad reply to %s id 0x%08x: %s", vm_key(vm), ddm_chunk_name(p->type, name),
                  p->id, why);
        memset(&r, 0, sizeof r);
        r.status = DDM_REPLY_BAD;
    }

    if (r.status == DDM_REPLY_CHUNK) {
        ddm_chunk_info ci = {.type = r.type, .packet_id = p->id, .origin = DDM_ORIGIN_REPLY,
                             .request_type = p->type};
        if (p->callback) {
            report_tap_chunk(vm, &ci, r.data, r.len);
            deliver(vm, p, &r);
        } else {
            /* No callback: the reply goes to the type's owner (and taps). */
            report_ddm_chunk(vm, &ci, r.data, r.len);
        }
    } else if (p->callback) {
        deliver(vm, p, &r);
    } else {
        g_debug("%s: reply to %s id 0x%08x (status %d) has no taker", vm_key(vm),
                ddm_chunk_name(p->type, name), p->id, r.status);
    }
    g_free(inflated);
    g_free(fail_msg);
    /* The draft lets a reply carry several chunks; real VMs send one. The
     * first answered the request; the others go to their owners. */
    if (r.status == DDM_REPLY_CHUNK && vm->state != DDM_VM_STATE_CLOSED)
        dispatch_chunks(vm, pkt, 1, DDM_ORIGIN_REPLY, p->type);
}

/* Hand the chunks of @pkt from the @skip+1-th on to their owners (and
 * taps), ZLIB inflated, as @origin (an event's chunks; a reply's after the
 * first, which went to the request's callback). Stops if the VM closes. */
static void dispatch_chunks(DdmVm *vm, const DdmJdwpPacket *pkt, unsigned skip, ddm_chunk_origin origin,
                            uint32_t request_type)
{
    DdmChunkIter it;
    DdmChunk ch;
    DdmChunkResult cr;
    const char *what = origin == DDM_ORIGIN_EVENT ? "event" : "reply";

    ddm_chunk_iter_init(&it, pkt->data, pkt->data_len);
    while (vm->state != DDM_VM_STATE_CLOSED && (cr = ddm_chunk_iter_next(&it, &ch)) == DDM_CHUNK_OK) {
        ddm_chunk_info ci = {.type = ch.type, .packet_id = pkt->header.id, .origin = origin,
                             .request_type = request_type};
        if (skip > 0) {
            skip--;
            continue;
        }
        if (ch.type == DDM_CHUNK_ZLIB) {
            uint8_t *out = NULL;
            size_t out_len = 0;
            uint32_t inner = 0;
            DdmZlibResult zr = ddm_zlib_inflate(ch.data, ch.len, cfg(vm)->max_inflate, &inner,
                                                &out, &out_len);
            if (zr != DDM_ZLIB_OK) {
                g_warning("%s: bad ZLIB chunk in %s 0x%08x dropped: %s", vm_key(vm), what,
                          pkt->header.id, ddm_zlib_result_str(zr));
                continue;
            }
            ci.type = inner;
            report_ddm_chunk(vm, &ci, out, out_len);
            g_free(out);
        } else {
            report_ddm_chunk(vm, &ci, ch.data, ch.len);
        }
    }
    if (vm->state == DDM_VM_STATE_CLOSED)
        return;
    if (cr == DDM_CHUNK_ERR_OVERRUN)
        g_warning("%s: DDM %s 0x%08x: a chunk runs past the packet; rest dropped", vm_key(vm), what,
                  pkt->header.id);
    else if (ddm_chunk_iter_trailing(&it))
        g_debug("%s: DDM %s 0x%08x: %zu trailing bytes ignored", vm_key(vm), what, pkt->header.id,
                ddm_chunk_iter_trailing(&it));
}

static void handle_ddm_event(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    if (vm->state != DDM_VM_STATE_HELO && vm->state != DDM_VM_STATE_READY) {
        g_debug("%s: DDM packet in state %s dropped", vm_key(vm), ddm_vm_state_name(vm->state));
        return;
    }
    dispatch_chunks(vm, pkt, 0, DDM_ORIGIN_EVENT, 0);
}

/* The answer to a HELO that timed out (a VM starting under load, a slow
 * adb link): if it is a real HELO, the VM speaks DDM after all. */
static void handle_late_helo(DdmVm *vm, const DdmJdwpPacket *pkt)
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
        send_request(vm, NULL, DDM_CHUNK_FEAT, NULL, 0, 0, feat_reply, NULL, NULL);
}

static void handle_packet(DdmVm *vm, const DdmJdwpPacket *pkt)
{
    vm->packets_in++;
    if (ddm_jdwp_is_reply(&pkt->header)) {
        DdmPending p;
        if (ddm_correlate_take(vm->pending, pkt->header.id, &p)) {
            if (p.callback == (gpointer)(void (*)(void))probe_reply)
                handle_probe_reply(vm, pkt);
            else
                handle_our_reply(vm, &p, pkt);
            if (vm->state != DDM_VM_STATE_CLOSED)
                rearm(vm);
        } else if (vm->state == DDM_VM_STATE_PLAIN && vm->helo_id != 0 &&
                   pkt->header.id == vm->helo_id) {
            handle_late_helo(vm, pkt);
        } else if (!report_foreign_reply(vm, pkt)) {
            if (ddm_correlate_was_expired(vm->pending, pkt->header.id))
                g_debug("%s: late reply id 0x%08x after its timeout dropped", vm_key(vm),
                        pkt->header.id);
            else
                g_debug("%s: reply with unknown id 0x%08x dropped", vm_key(vm), pkt->header.id);
        }
        return;
    }
    if (pkt->header.cmdset == DDM_JDWP_CMDSET && pkt->header.cmd == DDM_JDWP_CMD) {
        handle_ddm_event(vm, pkt);
        return;
    }
    report_jdwp_command(vm, pkt);
}

/* Take every complete unit out of the reader. FALSE once the VM is closed. */
static gboolean drain_reader(DdmVm *vm)
{
    for (;;) {
        DdmJdwpPacket pkt;
        DdmJdwpResult res;

        if (vm->state == DDM_VM_STATE_CLOSED)
            return FALSE;
        res = ddm_jdwp_reader_next(vm->reader, &pkt);
        switch (res) {
        case DDM_JDWP_NEED_MORE:
            return TRUE;
        case DDM_JDWP_HANDSHAKE_OK:
            vm->handshake_deadline_us = G_MAXINT64;
            g_debug("%s: handshake echoed", vm_key(vm));
            if (needs_probe(vm))
                start_probe(vm);
            else
                start_helo(vm);
            break;
        case DDM_JDWP_DISCARDED:
            g_debug("%s: packet before the handshake echo discarded", vm_key(vm));
            break;
        case DDM_JDWP_PACKET:
            handle_packet(vm, &pkt);
            break;
        case DDM_JDWP_ERR_HANDSHAKE:
            close_bad(vm, "bad handshake reply (not \"%s\")", DDM_JDWP_HANDSHAKE);
            return FALSE;
        default:
            close_bad(vm, "bad JDWP packet: %s", ddm_jdwp_result_str(res));
            return FALSE;
        }
    }
}

/* Read what the socket holds now (bounded per call, for fairness between
 * VMs) and handle every complete packet. Closes the VM on EOF, a read error
 * or bad input; the caller holds a reference. */
static void read_input(DdmVm *vm)
{
    for (int n = 0; n < READS_PER_WAKEUP && vm->state != DDM_VM_STATE_CLOSED && !vm->input_paused;
         n++) {
        size_t avail = 0;
        uint8_t *space = ddm_jdwp_reader_space(vm->reader, READ_CHUNK, &avail);
        ssize_t got = read(vm->fd, space, MIN(avail, READ_CHUNK));

        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                char *why = g_strdup_printf("read error: %s", g_strerror(errno));
                ddm_vm_close(vm, why);
                g_free(why);
            }
            return;
        }
        if (got == 0) {
            ddm_vm_close(vm, vm->state == DDM_VM_STATE_HANDSHAKE
                                 ? "connection closed by the peer during the handshake"
                                 : "connection closed by the VM");
            return;
        }
        ddm_jdwp_reader_commit(vm->reader, (size_t)got);
        vm->bytes_in += (guint64)got;
        if (!drain_reader(vm))
            return;
        if ((size_t)got < MIN(avail, READ_CHUNK))
            return; /* the socket is empty for now */
    }
}


static gboolean on_readable(gint fd, GIOCondition cond, gpointer ud)
{
    DdmVm *vm = ud;
    gboolean keep;
    (void)fd;
    (void)cond;

    ddm_vm_ref(vm);
    read_input(vm);
    /* A close or a pause removed this watch already (and cleared io_watch;
     * a resume from in here added a new one). */
    keep = vm->state != DDM_VM_STATE_CLOSED && !vm->input_paused;
    ddm_vm_unref(vm);
    return keep ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void on_connected(DdmTarget *target, int fd, const GError *error, gpointer ud)
{
    DdmVm *vm = ud;
    (void)target;

    if (vm->state != DDM_VM_STATE_CONNECTING) {
        if (fd >= 0)
            close(fd); /* closed while connecting */
        ddm_vm_unref(vm);
        return;
    }
    if (error) {
        ddm_vm_close(vm, error->message);
        ddm_vm_unref(vm);
        return;
    }
    vm->fd = fd;
    vm->was_connected = TRUE;
    vm->connected_at_us = g_get_monotonic_time();
    ddm_socket_tune(fd);
    ddm_jdwp_reader_expect_handshake(vm->reader);
    vm->handshake_deadline_us =
        vm->connected_at_us + (gint64)(cfg(vm)->handshake_timeout_ms ? cfg(vm)->handshake_timeout_ms
                                                                      : 5000) * 1000;
    vm->io_watch = ddm_read_watch_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, vm);
    set_state(vm, DDM_VM_STATE_HANDSHAKE);
    if (vm->state == DDM_VM_STATE_HANDSHAKE) {
        /* ART requires all 14 bytes in one read: one write, into an empty queue. */
        int r = queue_out(vm, (const uint8_t *)DDM_JDWP_HANDSHAKE, DDM_JDWP_HANDSHAKE_LEN);
        if (r < 0)
            close_later(vm, g_strdup_printf("cannot send the handshake: %s", g_strerror(-r)));
        rearm(vm);
    }
    ddm_vm_unref(vm);
}

/* --------------------------------------------------------------- timer */

static gboolean on_deadline(gpointer ud)
{
    DdmVm *vm = ud;
    gint64 now = g_get_monotonic_time();
    GArray *expired;
    char name[5];

    ddm_vm_ref(vm);
    g_source_set_ready_time(vm->deadline_source, -1);
    /* After a stall of the main loop, answers may wait unread in the socket:
     * take them first, so nothing times out that was answered in time. */
    if (vm->fd >= 0)
        read_input(vm);
    if (vm->state == DDM_VM_STATE_CLOSED) {
        ddm_vm_unref(vm);
        return G_SOURCE_CONTINUE; /* close() destroyed this source */
    }
    if (vm->state == DDM_VM_STATE_HANDSHAKE && now >= vm->handshake_deadline_us) {
        char *why = g_strdup_printf("no handshake echo within %u ms",
                                    cfg(vm)->handshake_timeout_ms);
        close_logged(vm, why, fault_level(vm));
        g_free(why);
    }
    /* Entries removed here leave through TIMEOUT even if a callback closes the VM. */
    expired = ddm_correlate_expire(vm->pending, now);
    for (guint i = 0; i < expired->len; i++) {
        const DdmPending *p = &g_array_index(expired, DdmPending, i);
        g_debug("%s: request %s id 0x%08x timed out", vm_key(vm), ddm_chunk_name(p->type, name),
                p->id);
        deliver_status(vm, p, DDM_REPLY_TIMEOUT);
    }
    g_array_unref(expired);
    if (vm->state != DDM_VM_STATE_CLOSED)
        rearm(vm);
    ddm_vm_unref(vm);
    return G_SOURCE_CONTINUE; /* destroyed by close; idle until the next ready time */
}
