/* SPDX-License-Identifier: Apache-2.0
 *
 * The world of simulated VMs: creation (pids, names, ports), the one global
 * tick that moves every model, churn, pid watchers, and the port and state
 * files (coalesced: rebuilt at most every STATE_MIN_INTERVAL_MS, or less
 * often when building them is slow; written by filewriter.c's thread).
 * Retired VMs leave the pid table at once and are freed from an idle
 * callback, after any closed connection, so no callback up the stack is
 * left holding freed memory.
 */
#include "simvm-private.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define STATE_MIN_INTERVAL_MS 50
#define PORT_SEARCH 2000

typedef struct Watch {
    guint id;
    SimPidWatchFn fn;
    void *ud;
} Watch;

static const char *const app_names[] = {
    "com.android.systemui", "com.google.android.gms.persistent", "com.example.notes",
    "com.android.settings", "com.android.phone", "com.google.android.apps.maps",
    "com.android.launcher3", "com.example.chat:push", "com.example.camera", "org.mozilla.firefox",
    "com.android.chrome:sandboxed_process0", "com.example.game", "com.google.android.gms",
    "com.android.bluetooth", "com.example.music:playback", "com.android.providers.media",
    "com.example.weather", "com.android.nfc", "com.example.shop", "com.android.inputmethod.latin",
};

gint64 sim_world_now_ms(SimWorld *w)
{
    return (g_get_monotonic_time() - w->start_us) / 1000;
}

SimWorld *sim_world_new(const SimConfig *cfg)
{
    SimWorld *w = g_new0(SimWorld, 1);

    w->cfg = *cfg;
    w->cfg.bind_address = g_strdup(cfg->bind_address ? cfg->bind_address : "127.0.0.1");
    w->cfg.port_file = g_strdup(cfg->port_file);
    w->cfg.state_file = g_strdup(cfg->state_file);
    w->cfg.apps = g_strdupv(cfg->apps);
    w->cfg.device_dir = g_strdup(cfg->device_dir);
    w->cfg.write_hprof = g_strdup(cfg->write_hprof);
    w->ctx = g_main_context_ref_thread_default();
    w->vms = g_ptr_array_new();
    w->by_pid = g_hash_table_new(g_direct_hash, g_direct_equal);
    w->ports = g_hash_table_new(g_direct_hash, g_direct_equal);
    w->watches = g_array_new(FALSE, FALSE, sizeof(Watch));
    w->dead = g_ptr_array_new();
    w->dead_conns = g_ptr_array_new();
    w->retired_names = g_ptr_array_new_with_free_func(g_free);
    w->start_us = g_get_monotonic_time();
    sim_rng_seed(&w->rng, cfg->seed);
    w->next_pid = 1000 + sim_rng_below(&w->rng, 9000);
    return w;
}

static gboolean reap(gpointer data)
{
    SimWorld *w = data;
    guint i;

    w->reap_source = 0;
    w->reaping = TRUE; /* what this frees may close connections: no new idle for them */
    for (i = 0; i < w->dead_conns->len; i++)
        sim_conn_free(g_ptr_array_index(w->dead_conns, i));
    g_ptr_array_set_size(w->dead_conns, 0);
    for (i = 0; i < w->dead->len; i++)
        sim_vm_free(g_ptr_array_index(w->dead, i));
    g_ptr_array_set_size(w->dead, 0);
    /* freeing a VM may close its connection outside a callback: once more */
    for (i = 0; i < w->dead_conns->len; i++)
        sim_conn_free(g_ptr_array_index(w->dead_conns, i));
    g_ptr_array_set_size(w->dead_conns, 0);
    w->reaping = FALSE;
    return G_SOURCE_REMOVE;
}

static void schedule_reap(SimWorld *w)
{
    GSource *s;

    if (w->reap_source || w->reaping)
        return;
    s = g_idle_source_new();
    g_source_set_callback(s, reap, w, NULL);
    w->reap_source = g_source_attach(s, w->ctx);
    g_source_unref(s);
}

void sim_world_defer_free_conn(SimWorld *w, SimConn *c)
{
    g_ptr_array_add(w->dead_conns, c);
    schedule_reap(w);
}

static void remove_source(SimWorld *w, guint *id)
{
    GSource *s = *id ? g_main_context_find_source_by_id(w->ctx, *id) : NULL;

    if (s)
        g_source_destroy(s);
    *id = 0;
}

void sim_world_free(SimWorld *w)
{
    guint i;

    if (!w)
        return;
    remove_source(w, &w->tick_source);
    remove_source(w, &w->state_source);
    remove_source(w, &w->reap_source);
    sim_file_writer_free(w->files); /* what was handed over is written */
    for (i = 0; i < w->vms->len; i++)
        g_ptr_array_add(w->dead, g_ptr_array_index(w->vms, i));
    g_ptr_array_set_size(w->vms, 0);
    reap(w);
    sim_reactor_free(w->reactor);
    g_ptr_array_free(w->vms, TRUE);
    g_ptr_array_free(w->dead, TRUE);
    g_ptr_array_free(w->dead_conns, TRUE);
    g_ptr_array_free(w->retired_names, TRUE);
    g_hash_table_destroy(w->by_pid);
    g_hash_table_destroy(w->ports);
    g_array_free(w->watches, TRUE);
    g_main_context_unref(w->ctx);
    g_free(w->cfg.bind_address);
    g_free(w->cfg.port_file);
    g_free(w->cfg.state_file);
    g_strfreev(w->cfg.apps);
    g_free(w->cfg.device_dir);
    g_free(w->cfg.write_hprof);
    g_free(w);
}

static void notify(SimWorld *w, uint32_t pid, gboolean alive)
{
    GArray *copy;
    guint i;

    if (w->watches->len == 0)
        return;
    /* a watcher may unwatch from its callback */
    copy = g_array_sized_new(FALSE, FALSE, sizeof(Watch), w->watches->len);
    g_array_append_vals(copy, w->watches->data, w->watches->len);
    for (i = 0; i < copy->len; i++) {
        Watch *wa = &g_array_index(copy, Watch, i);
        guint j;
        gboolean still = FALSE;
        for (j = 0; j < w->watches->len; j++)
            still |= g_array_index(w->watches, Watch, j).id == wa->id;
        if (still)
            wa->fn(w, pid, alive, wa->ud);
    }
    g_array_free(copy, TRUE);
}

guint sim_world_watch_pids(SimWorld *w, SimPidWatchFn fn, void *ud)
{
    Watch wa = { ++w->next_watch_id, fn, ud };

    g_return_val_if_fail(fn != NULL, 0);
    g_array_append_val(w->watches, wa);
    return wa.id;
}

void sim_world_unwatch_pids(SimWorld *w, guint id)
{
    guint i;

    for (i = 0; i < w->watches->len; i++)
        if (g_array_index(w->watches, Watch, i).id == id) {
            g_array_remove_index(w->watches, i);
            return;
        }
}

SimVm *sim_world_find_pid(SimWorld *w, uint32_t pid)
{
    return g_hash_table_lookup(w->by_pid, GUINT_TO_POINTER(pid));
}

GArray *sim_world_list_pids(SimWorld *w)
{
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), w->vms->len);
    guint i;

    for (i = 0; i < w->vms->len; i++) {
        SimVm *vm = g_ptr_array_index(w->vms, i);
        g_array_append_val(a, vm->pid);
    }
    return a;
}

/* ------------------------------------------------------------ files */

static char *ports_text(SimWorld *w)
{
    GString *s = g_string_new(NULL);
    guint i;

    for (i = 0; i < w->vms->len; i++) {
        SimVm *vm = g_ptr_array_index(w->vms, i);
        /* "pid port app mode": tests read the first three, the mode tells JVMs apart */
        g_string_append_printf(s, "%u %u %s %s\n", vm->pid, vm->port,
                               vm->mode == SIM_MODE_JVM ? "-" : sim_vm_current_name(vm),
                               sim_mode_name(vm->mode));
    }
    return g_string_free(s, FALSE);
}

/* Build the texts here, where the state changes; the writer's thread puts
 * them on disk, so a slow disk never stalls the VMs (filewriter.c). */
static void write_files(SimWorld *w)
{
    gint64 t0 = sim_world_now_ms(w);

    if ((w->ports_dirty && w->cfg.port_file) || (w->state_dirty && w->cfg.state_file))
        if (!w->files)
            w->files = sim_file_writer_new();
    if (w->ports_dirty && w->cfg.port_file)
        sim_file_writer_put(w->files, w->cfg.port_file, ports_text(w));
    w->ports_dirty = FALSE;
    if (w->state_dirty && w->cfg.state_file)
        sim_file_writer_put(w->files, w->cfg.state_file, sim_state_to_json(w));
    w->state_dirty = FALSE;
    w->last_state_ms = sim_world_now_ms(w);
    w->state_cost_ms = w->last_state_ms - t0;
}

static gboolean write_files_cb(gpointer data)
{
    SimWorld *w = data;

    w->state_source = 0;
    write_files(w);
    return G_SOURCE_REMOVE;
}

static void schedule_files(SimWorld *w)
{
    gint64 wait;
    GSource *s;

    if (w->state_source || !w->started)
        return;
    if (!(w->cfg.state_file && w->state_dirty) && !(w->cfg.port_file && w->ports_dirty))
        return;
    /* with thousands of VMs building the texts takes a while: never spend
     * more than about a fifth of the time on the ground truth */
    wait = w->last_state_ms + MAX(STATE_MIN_INTERVAL_MS, 5 * w->state_cost_ms) - sim_world_now_ms(w);
    s = wait > 0 ? g_timeout_source_new((guint)wait) : g_idle_source_new();
    g_source_set_callback(s, write_files_cb, w, NULL);
    w->state_source = g_source_attach(s, w->ctx);
    g_source_unref(s);
}

void sim_world_state_changed(SimWorld *w)
{
    w->state_dirty = TRUE;
    schedule_files(w);
}

void sim_world_ports_changed(SimWorld *w)
{
    w->ports_dirty = TRUE;
    w->state_dirty = TRUE;
    schedule_files(w);
}

/* ------------------------------------------------------------ VMs */

static char *fresh_name(SimWorld *w)
{
    unsigned i = w->name_cursor++;
    guint napps = w->cfg.apps ? g_strv_length(w->cfg.apps) : 0;

    if (i < napps)
        return g_strdup(w->cfg.apps[i]);
    i -= napps;
    if (i < G_N_ELEMENTS(app_names))
        return g_strdup(app_names[i]);
    return g_strdup_printf("com.example.app%u", i - (unsigned)G_N_ELEMENTS(app_names) + 1);
}

static gboolean listen_somewhere(SimWorld *w, SimVm *vm, GError **error)
{
    int port, tries;
    GError *err = NULL;

    if (w->cfg.base_port == 0)
        return sim_vm_listen(vm, w->cfg.bind_address, 0, error);
    for (port = w->cfg.base_port, tries = 0; port <= 65535 && tries < PORT_SEARCH; port++) {
        if (g_hash_table_contains(w->ports, GINT_TO_POINTER(port)))
            continue;
        tries++;
        if (sim_vm_listen(vm, w->cfg.bind_address, port, &err))
            return TRUE;
        if (!g_error_matches(err, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE)) {
            g_propagate_error(error, err);
            return FALSE;
        }
        g_debug("port %d busy, trying the next", port);
        g_clear_error(&err);
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE, "no free port from %d", w->cfg.base_port);
    return FALSE;
}

static SimVm *spawn(SimWorld *w, SimMode mode, char *name /* transfer full */, GError **error)
{
    SimVm *vm;
    uint32_t pid;

    do {
        pid = w->next_pid;
        /* past this VM's thread ids too, as Linux would hand them out */
        w->next_pid += w->cfg.threads + 8 + sim_rng_below(&w->rng, 40);
        if (w->next_pid > 4000000)
            w->next_pid = 1000;
    } while (g_hash_table_contains(w->by_pid, GUINT_TO_POINTER(pid)));
    vm = sim_vm_new(w, mode, pid, name, w->next_serial++);
    g_free(name);
    if (!w->cfg.no_tcp && !listen_somewhere(w, vm, error)) {
        sim_vm_free(vm);
        return NULL;
    }
    if (vm->port)
        g_hash_table_add(w->ports, GUINT_TO_POINTER((guint)vm->port));
    g_ptr_array_add(w->vms, vm);
    g_hash_table_insert(w->by_pid, GUINT_TO_POINTER(pid), vm);
    g_debug("VM pid %u (%s, %s) on port %u", pid, vm->real_name, sim_mode_name(mode), vm->port);
    notify(w, pid, TRUE);
    sim_world_ports_changed(w);
    return vm;
}

void sim_world_retire_vm(SimWorld *w, SimVm *vm)
{
    if (vm->retired)
        return;
    vm->retired = TRUE;
    g_hash_table_remove(w->by_pid, GUINT_TO_POINTER(vm->pid));
    g_ptr_array_remove(w->vms, vm);
    if (vm->port)
        g_hash_table_remove(w->ports, GUINT_TO_POINTER((guint)vm->port));
    sim_vm_stop_listening(vm);
    if (vm->conn)
        sim_conn_close(vm->conn, "VM halted");
    if (vm->mode != SIM_MODE_JVM)
        g_ptr_array_add(w->retired_names, g_strdup(vm->real_name));
    g_ptr_array_add(w->dead, vm);
    schedule_reap(w);
    notify(w, vm->pid, FALSE);
    sim_world_ports_changed(w);
}

static void churn_spawn(SimWorld *w, SimMode mode)
{
    GError *err = NULL;
    char *name;
    SimVm *vm;

    if (mode == SIM_MODE_JVM)
        name = g_strdup("jvm");
    else if (w->retired_names->len > 0 && sim_rng_chance(&w->rng, 0.5))
        name = g_ptr_array_steal_index_fast(w->retired_names, sim_rng_below(&w->rng, w->retired_names->len));
    else
        name = fresh_name(w);
    vm = spawn(w, mode, name, &err);
    if (!vm) {
        g_warning("churn: cannot start a VM: %s", err->message);
        g_clear_error(&err);
    } else {
        g_message("churn: pid %u (%s) starts on port %u", vm->pid, vm->real_name, vm->port);
    }
}

/* Some VMs halt, then new ones start (new pids, half with a gone VM's
 * name) until the configured numbers are back: VMs that EXITed since the
 * last round come back too. */
static void churn(SimWorld *w)
{
    guint n = w->vms->len, k, i, ddm = 0, jvm = 0;

    k = n ? 1 + sim_rng_below(&w->rng, MAX(1u, n / 5)) : 0;
    for (i = 0; i < k && w->vms->len > 0; i++) {
        SimVm *vm = g_ptr_array_index(w->vms, sim_rng_below(&w->rng, w->vms->len));
        g_message("churn: pid %u (%s) exits", vm->pid, vm->real_name);
        sim_world_retire_vm(w, vm);
    }
    for (i = 0; i < w->vms->len; i++) {
        SimVm *vm = g_ptr_array_index(w->vms, i);
        if (vm->mode == SIM_MODE_JVM)
            jvm++;
        else
            ddm++;
    }
    for (; ddm < w->cfg.vms; ddm++)
        churn_spawn(w, w->cfg.mode);
    for (; jvm < w->cfg.jvm_vms; jvm++)
        churn_spawn(w, SIM_MODE_JVM);
    /* keep the reuse pool bounded */
    while (w->retired_names->len > 256)
        g_ptr_array_remove_index_fast(w->retired_names, 0);
}

static gboolean tick(gpointer data)
{
    SimWorld *w = data;
    gint64 now = sim_world_now_ms(w);
    uint32_t dt = (uint32_t)CLAMP(now - w->last_tick_ms, 0, 10000);
    guint i;

    w->last_tick_ms = now;
    /* a tick never retires a VM (only EXIT and churn do), so the array is stable */
    for (i = 0; i < w->vms->len; i++)
        sim_vm_tick(g_ptr_array_index(w->vms, i), now, dt);
    if (w->cfg.churn_ms && now >= w->next_churn_ms) {
        w->next_churn_ms = now + w->cfg.churn_ms;
        churn(w);
    }
    return G_SOURCE_CONTINUE;
}

gboolean sim_world_start(SimWorld *w, GError **error)
{
    GSource *s;
    unsigned i;

    g_return_val_if_fail(!w->started, FALSE);
    w->reactor = sim_reactor_new(w->ctx);
    if (!w->reactor) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "epoll: %s", g_strerror(errno));
        return FALSE;
    }
    for (i = 0; i < w->cfg.vms + w->cfg.jvm_vms; i++) {
        gboolean jvm = i >= w->cfg.vms;
        if (!spawn(w, jvm ? SIM_MODE_JVM : w->cfg.mode, jvm ? g_strdup("jvm") : fresh_name(w), error))
            return FALSE;
    }
    w->started = TRUE;
    w->ports_dirty = w->state_dirty = TRUE;
    write_files(w);
    w->last_tick_ms = sim_world_now_ms(w);
    w->next_churn_ms = w->last_tick_ms + w->cfg.churn_ms;
    s = g_timeout_source_new(MAX(w->cfg.tick_ms, 10u));
    g_source_set_callback(s, tick, w, NULL);
    w->tick_source = g_source_attach(s, w->ctx);
    g_source_unref(s);
    return TRUE;
}
