/* SPDX-License-Identifier: Apache-2.0
 *
 * One simulated VM: identity (pid, names, ABI), its TCP listener, its
 * single connection, and its models (threads, heaps, native heap), moved
 * by the world's tick. A second connection while one is served is
 * accepted and closed at once, as ART's adbconnection does.
 */
#define _GNU_SOURCE 1 /* accept4 */
#include "simvm-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/wire/ddm.h"

static void listener_io(void *ud, unsigned events);

SimVm *sim_vm_new(SimWorld *w, SimMode mode, uint32_t pid, const char *name, guint serial)
{
    const SimConfig *cfg = &w->cfg;
    SimVm *vm = g_new0(SimVm, 1);
    uint64_t seed = sim_rng_mix(cfg->seed, pid);
    const char *colon;
    unsigned i;

    vm->world = w;
    vm->serial = serial;
    vm->pid = pid;
    vm->mode = mode;
    vm->listen_fd = -1;
    vm->real_name = g_strdup(name);
    colon = strchr(name, ':');
    vm->package_name = colon ? g_strndup(name, (gsize)(colon - name)) : g_strdup(name);
    vm->named = cfg->rename_after_ms == 0 || mode == SIM_MODE_JVM;
    if (!vm->named)
        vm->rename_at_ms = sim_world_now_ms(w) + cfg->rename_after_ms;
    vm->user_id = serial % 7 == 6 ? 10 : 0; /* now and then a work-profile app */
    vm->native_debuggable = serial % 4 == 1;
    vm->waiting = cfg->wait_for_debugger && mode != SIM_MODE_JVM;
    sim_threads_init(&vm->threads, pid, sim_rng_mix(seed, 1), cfg->threads, mode != SIM_MODE_DALVIK);
    if (cfg->main_state_every_ms) {
        vm->threads.main_scripted = 1;
        vm->next_main_state_ms = sim_world_now_ms(w) + cfg->main_state_every_ms;
    }
    vm->n_heaps = cfg->two_heaps ? 2 : 1;
    for (i = 0; i < vm->n_heaps; i++) {
        uint32_t size = cfg->heap_kib * 1024u / (i + 1);
        sim_heap_init(&vm->heaps[i], i + 1, sim_rng_mix(seed, 10 + i), size,
                      size > G_MAXUINT32 / 4 ? G_MAXUINT32 : size * 4, FALSE);
    }
    sim_alloc_init(&vm->alloc, sim_rng_mix(seed, 30));
    sim_heap_init(&vm->native, 1, sim_rng_mix(seed, 20), cfg->heap_kib * 512u, cfg->heap_kib * 2048u, TRUE);
    if (cfg->gc_every_ms) {
        SimRng r;
        sim_rng_seed(&r, seed);
        /* staggered, so 5000 VMs do not all collect in the same tick */
        vm->next_gc_ms = sim_world_now_ms(w) + cfg->gc_every_ms + sim_rng_below(&r, cfg->gc_every_ms);
    }
    return vm;
}

void sim_vm_stop_listening(SimVm *vm)
{
    if (vm->listen_fd < 0)
        return;
    sim_reactor_remove(vm->world->reactor, vm->listen_io);
    vm->listen_io = NULL;
    close(vm->listen_fd);
    vm->listen_fd = -1;
}

void sim_vm_free(SimVm *vm)
{
    if (!vm)
        return;
    sim_vm_stop_listening(vm);
    if (vm->conn)
        sim_conn_close(vm->conn, "VM freed");
    sim_threads_clear(&vm->threads);
    for (unsigned i = 0; i < SIM_THST_RECENT; i++)
        if (vm->thst_recent[i])
            g_bytes_unref(vm->thst_recent[i]);
    sim_viewdebug_free(vm->viewdebug);
    g_free(vm->real_name);
    g_free(vm->package_name);
    g_free(vm->hprof_sent.path);
    g_free(vm->hprof_sent.package);
    sim_profiling_free(vm->profiling);
    g_free(vm);
}

gboolean sim_vm_listen(SimVm *vm, const char *address, int port, GError **error)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    int fd, one = 1;

    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, address, &sa.sin_addr) != 1) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "not an IPv4 address: %s", address);
        return FALSE;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "socket: %s", g_strerror(errno));
        return FALSE;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &salen) < 0) {
        int e = errno;
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s:%d: %s", address, port, g_strerror(e));
        return FALSE;
    }
    vm->listen_io = sim_reactor_add(vm->world->reactor, fd, SIM_IO_IN, listener_io, vm);
    if (!vm->listen_io) {
        int e = errno;
        close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "epoll: %s", g_strerror(e));
        return FALSE;
    }
    vm->listen_fd = fd;
    vm->port = ntohs(sa.sin_port);
    return TRUE;
}

void sim_vm_serve_fd(SimVm *vm, int fd)
{
    int flags;

    g_return_if_fail(vm != NULL);
    if (fd < 0)
        return;
    if (vm->retired || vm->conn) {
        /* "Ignoring second debugger. Accept then drop!" (adbconnection.cc) */
        g_debug("pid %u: already serving a client; dropping the new one", vm->pid);
        vm->refused++;
        close(fd);
        return;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    (void)sim_conn_new(vm, fd);
}

static void listener_io(void *ud, unsigned events)
{
    SimVm *vm = ud;
    int i;

    for (i = 0; i < 16; i++) {
        int fd = accept4(vm->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                g_message("pid %u: accept: %s", vm->pid, g_strerror(errno));
            return;
        }
        sim_vm_serve_fd(vm, fd);
        if (vm->listen_fd < 0)
            return;
    }
}

gboolean sim_vm_is_busy(const SimVm *vm)
{
    return vm->conn != NULL;
}

uint32_t sim_vm_pid(const SimVm *vm)
{
    return vm->pid;
}

const char *sim_vm_current_name(const SimVm *vm)
{
    return vm->named ? vm->real_name : SIM_PRE_INITIALIZED;
}

const char *sim_vm_app_name(const SimVm *vm)
{
    return sim_vm_current_name(vm);
}

const char *sim_vm_package_name(const SimVm *vm)
{
    return vm->package_name;
}

const char *sim_vm_abi(const SimVm *vm)
{
    return vm->world->cfg.ptr_size == 4 ? "32-bit (x86)" : "64-bit (x86_64)";
}

uint16_t sim_vm_port(const SimVm *vm)
{
    return vm->port;
}

SimMode sim_vm_mode(const SimVm *vm)
{
    return vm->mode;
}

uint32_t sim_vm_next_event_id(SimVm *vm)
{
    vm->event_serial++;
    if (vm->mode == SIM_MODE_DALVIK) /* Dalvik's request serial space */
        return 0x10000000u + (vm->event_serial & 0x0fffffffu);
    return 0x80000000u | (vm->event_serial & 0x7fffffffu); /* ART adbconnection NextDdmId */
}

void sim_vm_exit(SimVm *vm, uint32_t status)
{
    if (vm->retired)
        return;
    g_message("pid %u (%s): halting with status %u", vm->pid, sim_vm_current_name(vm), status);
    sim_world_retire_vm(vm->world, vm);
}

/* Is a DDM-speaking client attached (handshake done)? */
static SimConn *ddm_client(SimVm *vm)
{
    SimConn *c = vm->conn;

    return c && c->handshaken && !c->closing && vm->mode != SIM_MODE_JVM ? c : NULL;
}

void sim_vm_gc(SimVm *vm)
{
    SimConn *c = ddm_client(vm);
    unsigned i;

    for (i = 0; i < vm->n_heaps; i++)
        sim_heap_gc(&vm->heaps[i]);
    sim_heap_gc(&vm->native);
    vm->native_generation++;
    if (c && (c->hpif_when == 2 || c->hpif_when == 3)) {
        sim_conn_send_hpif(c, c->hpif_when);
        if (c->hpif_when == 2)
            c->hpif_when = 0; /* "next GC" is once */
    }
    if (c && c->hpsg_when)
        sim_conn_send_segments(c, FALSE);
    if (c && c->nhsg_when)
        sim_conn_send_segments(c, TRUE);
    sim_world_state_changed(vm->world);
}

static void thread_event(SimThreadEvent ev, const SimThread *t, void *ud)
{
    SimVm *vm = ud;
    SimConn *c = ddm_client(vm);
    ddm_writer w;
    uint8_t *p;
    size_t len;
    uint32_t type;

    if (!c || !c->then_on)
        return;
    ddm_writer_init(&w, 4096);
    if (ev == SIM_THREAD_DIED) {
        ddm_write_u4(&w, t->id);
        type = DDM_CHUNK('T', 'H', 'D', 'E');
    } else {
        sim_thread_write_name(&w, t);
        type = ev == SIM_THREAD_CREATED ? DDM_CHUNK('T', 'H', 'C', 'R') : DDM_CHUNK('T', 'H', 'N', 'M');
    }
    p = ddm_writer_take(&w, &len);
    if (p)
        sim_conn_send_event(c, type, p, len);
    free(p);
}

void sim_vm_tick(SimVm *vm, gint64 now_ms, uint32_t dt_ms)
{
    const SimConfig *cfg = &vm->world->cfg;
    SimConn *c;
    double p = cfg->thread_activity_ms ? (double)dt_ms / cfg->thread_activity_ms : 0.0;

    if (!vm->named && now_ms >= vm->rename_at_ms) {
        vm->named = TRUE;
        vm->rename_at_ms = 0;
        g_debug("pid %u: named %s", vm->pid, vm->real_name);
        if ((c = ddm_client(vm)))
            sim_conn_send_apnm(c);
        sim_world_ports_changed(vm->world);
    }
    if (sim_threads_step(&vm->threads, dt_ms, p, thread_event, vm))
        sim_world_state_changed(vm->world);
    if (cfg->main_state_every_ms && now_ms >= vm->next_main_state_ms) {
        vm->next_main_state_ms = now_ms + cfg->main_state_every_ms;
        if (sim_threads_switch_main(&vm->threads))
            sim_world_state_changed(vm->world);
    }
    if (vm->next_gc_ms && now_ms >= vm->next_gc_ms) {
        vm->next_gc_ms = now_ms + cfg->gc_every_ms;
        sim_vm_gc(vm);
    }
    c = ddm_client(vm);
    if (c && c->thst_interval_ms && now_ms >= c->next_thst_ms) {
        c->next_thst_ms = now_ms + c->thst_interval_ms;
        sim_conn_send_thst(c, 0, TRUE);
    }
}
