/* SPDX-License-Identifier: Apache-2.0
 *
 * The chunk filter (--chunks) and dispatch (registry-private.h): which chunk
 * types are enabled and owned, the handoff notice after every init, and
 * delivery of chunks to taps and owners, of VM events to listeners, and
 * the stopping hooks (ABI 1.8) when the server stops.
 *
 * Invariants:
 *  - One owner per chunk type; taps and listeners run in registration order.
 *  - Unknown chunk types are logged once per type per VM (bounded set).
 *  - Per-VM plugin data is freed only after every DDM_VM_GONE listener ran.
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include "core/session/monitor.h"
#include "core/pluginhost/registry-private.h"

/* A hostile VM could send every possible type; remember only this many. */
#define UNKNOWN_LOGGED_MAX 256
/* Failed handler calls: log the first few per owner, then every 1000th. */
#define ERROR_LOG_FIRST 5
#define ERROR_LOG_EVERY 1000

/* --------------------------------------------------------- chunk filter */

void ddm_registry_set_chunk_filter(DdmRegistry *reg, GPtrArray *chunk_names)
{
    g_return_if_fail(reg != NULL);
    g_clear_pointer(&reg->chunk_filter, g_hash_table_unref);
    if (!chunk_names || chunk_names->len == 0)
        return;
    reg->chunk_filter = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < chunk_names->len; i++) {
        const char *name = g_ptr_array_index(chunk_names, i);
        uint32_t type = ddm_chunk_from_name(name);
        if (type == 0) {
            g_warning("--chunks: '%s' is not a chunk type (four characters, e.g. THCR)", name);
            continue;
        }
        g_hash_table_add(reg->chunk_filter, GUINT_TO_POINTER(type));
    }
}

gboolean ddm_registry_chunk_enabled(DdmRegistry *reg, uint32_t type)
{
    g_return_val_if_fail(reg != NULL, FALSE);
    return reg->chunk_filter == NULL ||
           g_hash_table_contains(reg->chunk_filter, GUINT_TO_POINTER(type));
}

gboolean ddm_registry_type_owned(DdmRegistry *reg, uint32_t type)
{
    g_return_val_if_fail(reg != NULL, FALSE);
    return g_hash_table_contains(reg->owners, GUINT_TO_POINTER(type));
}

static gint cmp_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

GArray *ddm_registry_owned_types(DdmRegistry *reg, ddm_plugin *p)
{
    g_return_val_if_fail(reg != NULL, NULL);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, reg->owners);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        DdmChunkReg *r = value;
        if (r->plugin == p)
            g_array_append_val(out, r->type);
    }
    g_array_sort(out, cmp_u32);
    return out;
}

void ddm_registry_handoff(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    ddm_registry_check_plugin_opts(reg);
    if (!reg->chunk_filter)
        return;
    for (guint i = 0; i < reg->plugins->len; i++) {
        ddm_plugin *p = g_ptr_array_index(reg->plugins, i);
        if (p->status != DDM_PLUGIN_LOADED)
            continue;
        g_autoptr(GArray) types = ddm_registry_owned_types(reg, p);
        if (types->len == 0)
            continue;
        gboolean any = FALSE;
        for (guint j = 0; j < types->len && !any; j++)
            any = ddm_registry_chunk_enabled(reg, g_array_index(types, uint32_t, j));
        if (!any)
            g_message("plugin %s: all its chunk types are disabled (--chunks); it stays idle",
                      p->name);
    }
}

/* ------------------------------------------------------------- dispatch */

static const char *vm_key(DdmVm *vm)
{
    return vm && vm->info.key ? vm->info.key : "?";
}

static void run_taps(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len)
{
    for (guint i = 0; i < reg->taps->len; i++) {
        DdmChunkReg *t = g_ptr_array_index(reg->taps, i);
        if (t->type == 0 || t->type == ci->type)
            (void)t->fn(t->plugin, vm, ci, data, len, t->ud);
    }
}

static void log_unknown_once(DdmVm *vm, uint32_t type)
{
    char name[5];
    ddm_chunk_name(type, name);
    if (!vm->unknown_logged)
        vm->unknown_logged = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (g_hash_table_contains(vm->unknown_logged, GUINT_TO_POINTER(type))) {
        g_debug("vm %s: no plugin handles chunk %s (ignored)", vm_key(vm), name);
        return;
    }
    if (g_hash_table_size(vm->unknown_logged) >= UNKNOWN_LOGGED_MAX) {
        g_debug("vm %s: no plugin handles chunk %s (ignored; too many unknown types to log)",
                vm_key(vm), name);
        return;
    }
    g_hash_table_add(vm->unknown_logged, GUINT_TO_POINTER(type));
    g_message("vm %s: no plugin handles chunk %s (ignored)", vm_key(vm), name);
}

void ddm_registry_dispatch(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len)
{
    g_return_if_fail(reg != NULL && ddm_vm_is_valid(vm) && ci != NULL);
    g_return_if_fail(data != NULL || len == 0);
    char name[5];
    ddm_chunk_name(ci->type, name);
    if (!data)
        data = (const uint8_t *)""; /* plugins never see NULL */
    if (!ddm_registry_chunk_enabled(reg, ci->type)) {
        g_debug("vm %s: chunk %s disabled by --chunks (dropped)", vm_key(vm), name);
        return;
    }
    run_taps(reg, vm, ci, data, len);
    DdmChunkReg *owner = g_hash_table_lookup(reg->owners, GUINT_TO_POINTER(ci->type));
    if (!owner) {
        log_unknown_once(vm, ci->type);
        return;
    }
    int rc;
    if (owner->fn == NULL) {
        /* A stream owner: a chunk that came whole is a stream of one piece,
         * as vm_stream.c streams one: any begin result but a negative errno
         * takes it, and end reports the bytes handed to data. */
        rc = owner->stream.begin(owner->plugin, vm, ci, len, owner->ud);
        if (rc >= 0) {
            int drc = len > 0 ? owner->stream.data(owner->plugin, vm, data, len, owner->ud) : 0;
            owner->stream.end(owner->plugin, vm, drc < 0 ? drc : 0, len, owner->ud);
        }
        rc = rc < 0 ? DDM_DECLINED : 0; /* a refusal is the plugin's choice, not a failure */
    } else {
        rc = owner->fn(owner->plugin, vm, ci, data, len, owner->ud);
    }
    if (rc < 0) {
        /* A plugin failing on every chunk must not flood the log. */
        owner->errors++;
        if (owner->errors <= ERROR_LOG_FIRST || owner->errors % ERROR_LOG_EVERY == 0)
            g_message("plugin %s: handling chunk %s (%zu bytes) from vm %s failed: %s (%d)%s",
                      owner->plugin->name, name, len, vm_key(vm), g_strerror(-rc), rc,
                      owner->errors > ERROR_LOG_FIRST ? " (repeated; logging every 1000th)"
                                                      : "");
    }
    else if (rc == DDM_DECLINED)
        g_debug("plugin %s declined chunk %s from vm %s", owner->plugin->name, name, vm_key(vm));
}

/* ------------------------------------------------------ streamed chunks */

/* The stream owner of @type, if it may hear of it now. */
static DdmChunkReg *stream_owner(DdmRegistry *reg, uint32_t type)
{
    DdmChunkReg *owner = g_hash_table_lookup(reg->owners, GUINT_TO_POINTER(type));
    if (!owner || owner->fn != NULL || owner->plugin->status != DDM_PLUGIN_LOADED ||
        !ddm_registry_chunk_enabled(reg, type))
        return NULL;
    return owner;
}

int ddm_registry_stream_begin(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                              guint64 declared)
{
    g_return_val_if_fail(reg != NULL && ddm_vm_is_valid(vm) && ci != NULL, 0);
    DdmChunkReg *owner = stream_owner(reg, ci->type);
    if (!owner)
        return 0;
    int rc = owner->stream.begin(owner->plugin, vm, ci, declared, owner->ud);
    return rc < 0 ? rc : 1;
}

int ddm_registry_stream_data(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                             const uint8_t *data, size_t len)
{
    g_return_val_if_fail(reg != NULL && ci != NULL, -EINVAL);
    DdmChunkReg *owner = stream_owner(reg, ci->type);
    if (!owner)
        return -ECANCELED; /* the owner went away mid-stream */
    return owner->stream.data(owner->plugin, vm, data, len, owner->ud);
}

void ddm_registry_stream_end(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci, int status,
                             guint64 received)
{
    g_return_if_fail(reg != NULL && ci != NULL);
    DdmChunkReg *owner = stream_owner(reg, ci->type);
    if (owner)
        owner->stream.end(owner->plugin, vm, status, received, owner->ud);
}

void ddm_registry_tap_request(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                              const uint8_t *data, size_t len)
{
    g_return_if_fail(reg != NULL && ddm_vm_is_valid(vm) && ci != NULL);
    g_return_if_fail(data != NULL || len == 0);
    run_taps(reg, vm, ci, data ? data : (const uint8_t *)"", len);
}

static void vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev, gboolean plain);

void ddm_registry_vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev)
{
    vm_event(reg, vm, ev, FALSE);
}

void ddm_registry_plain_vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev)
{
    vm_event(reg, vm, ev, TRUE);
}

void ddm_registry_stopping(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    if (reg->stopping_told)
        return;
    reg->stopping_told = TRUE;
    /* registration order, which is load order plugin by plugin; a hook
     * cannot register (only init may), so the array stays as it is */
    for (guint i = 0; i < reg->stoppers->len; i++) {
        DdmListenerReg *s = g_ptr_array_index(reg->stoppers, i);
        if (s->plugin->status == DDM_PLUGIN_LOADED)
            s->stopping(s->plugin, s->ud);
    }
}

/* DDM listeners hear DDM VMs, plain listeners plain JVMs (1.0's promise:
 * "plain JVMs never produce events" holds for every 1.0 and 1.1 plugin). */
static void vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev, gboolean plain)
{
    g_return_if_fail(reg != NULL && vm != NULL);
    /* registry_views.c: the declared views a watch counts exist before the
     * listeners run, as when they were made at READY, so a plugin that
     * looks at its watchers at READY sees them. */
    if (ev == DDM_VM_READY && !plain)
        ddm_registry_declared_views_ready(reg, vm);
    for (guint i = 0; i < reg->listeners->len; i++) {
        DdmListenerReg *l = g_ptr_array_index(reg->listeners, i);
        if (l->plain == plain && l->plugin->status == DDM_PLUGIN_LOADED)
            l->fn(l->plugin, vm, ev, l->ud);
    }
    if (ev != DDM_VM_GONE)
        return;
    ddm_registry_first_look_forget_vm(reg, vm); /* host.c: its reference goes */
    /* Rule 5: per-VM data goes after every GONE listener has run. */
    /* all taken first: a data_free that sets data again finds none */
    ddm_vm_plugin_data_free_list(ddm_vm_plugin_data_take_all(vm));
    ddm_vm_headlines_clear(vm); /* the figures' view goes with the VM's views */
}
