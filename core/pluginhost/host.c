/* SPDX-License-Identifier: Apache-2.0
 *
 * The ddm_host function table: the only way plugins reach the core. Each
 * member checks its handles (ddm_plugin, ddm_vm, ddm_view, ddm_cmd carry a
 * magic) and reports programmer errors with g_return_val_if_fail, then
 * delegates: requests to the session (core/session), views to the view
 * store (core/views), VM lookup and headlines to the monitor, registrations
 * to registry.c and commands to registry_commands.c.
 *
 * Invariants: memory rule 3 (a ud handed to register_* or timer_add is the
 * core's from the call on, so every failure path calls ud_free); rule 4
 * (strings returned are borrowed); registration only while in init.
 * Non-goals: policy about which plugin runs (loader.c), dispatch
 * (registry_dispatch.c).
 */
#include "build-config.h" /* autoconf; core/config/config.h is the runtime DdmConfig */

/* One library, several components: each file names its own log domain. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "ddmon-registry"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "core/session/monitor.h"
#include "core/pluginhost/registry-private.h"
#include "core/views/views.h"

/* The limits plugins can hit (headline, command name, log message) are the
 * SDK's DDM_*_MAX constants (plugin.h), defined nowhere else. */
/* Option keys remembered per plugin (config_get), and their longest length. */
#define OPTIONS_READ_MAX 256
#define OPTION_KEY_MAX 128

static DdmMonitor *plugin_monitor(ddm_plugin *p)
{
    return p->registry ? ddm_registry_monitor(p->registry) : NULL;
}

/* Give a refused ud back to its plugin's free function (rule 3). */
static void drop_ud(void *ud, ddm_free_fn ud_free)
{
    if (ud_free)
        ud_free(ud);
}

/* Check a condition on a register_* call; on failure free the ud first. */
#define REG_CHECK(expr, ud, ud_free, rc)             \
    do {                                             \
        if (G_UNLIKELY(!(expr))) {                   \
            drop_ud((ud), (ud_free));                \
            g_return_val_if_fail((expr), (rc));      \
        }                                            \
    } while (0)

/* The start of every register_* call: a valid plugin, valid arguments
 * (@args_ok), and a plugin allowed to register now (during init); on any
 * failure the ud goes back to its free function and the call returns. */
#define REG_BEGIN(self, args_ok, what, ud, ud_free)                     \
    do {                                                                \
        REG_CHECK(ddm_plugin_is_valid(self), (ud), (ud_free), -EINVAL); \
        REG_CHECK((args_ok), (ud), (ud_free), -EINVAL);                 \
        if (!ddm_registry_may_register((self), (what))) {               \
            drop_ud((ud), (ud_free));                                   \
            return -EPERM;                                              \
        }                                                               \
    } while (0)

/* ------------------------------------------------------------- logging */

/* A printf format, as the SDK's log member declares: fmt is checked at
 * the callers, so formatting it here is safe (and clang's
 * -Wformat-nonliteral knows it). */
static void host_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);

static void host_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...)
{
    g_return_if_fail(ddm_plugin_is_valid(self));
    g_return_if_fail(fmt != NULL);
    GLogLevelFlags glevel;
    const char *priority;
    switch (level) {
    case DDM_LOG_WARNING:
        glevel = G_LOG_LEVEL_WARNING;
        priority = "4";
        break;
    case DDM_LOG_INFO:
        glevel = G_LOG_LEVEL_INFO;
        priority = "6";
        break;
    case DDM_LOG_DEBUG:
        glevel = G_LOG_LEVEL_DEBUG;
        priority = "7";
        break;
    case DDM_LOG_MESSAGE:
    default:
        glevel = G_LOG_LEVEL_MESSAGE;
        priority = "5";
        break;
    }
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (strlen(msg) > DDM_LOG_MESSAGE_MAX)
        msg[DDM_LOG_MESSAGE_MAX] = '\0';
    g_autofree char *domain = g_strconcat("ddmon-plugin-", self->name, NULL);
    const GLogField fields[] = {
        {"GLIB_DOMAIN", domain, -1},
        {"PRIORITY", priority, -1},
        {"DDM_PLUGIN", self->name, -1},
        {"MESSAGE", msg, -1},
    };
    g_log_structured_array(glevel, fields, G_N_ELEMENTS(fields));
}

/* -------------------------------------------------------- plugin state */

static void host_set_data(ddm_plugin *self, void *data, ddm_free_fn data_free)
{
    g_return_if_fail(ddm_plugin_is_valid(self));
    void *old = self->data;
    ddm_free_fn old_free = self->data_free;
    self->data = data;
    self->data_free = data_free;
    if (old && old != data && old_free)
        old_free(old);
}

static void *host_get_data(ddm_plugin *self)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), NULL);
    return self->data;
}

static const char *host_config_get(ddm_plugin *self, const char *key)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), NULL);
    g_return_val_if_fail(key != NULL, NULL);
    const DdmConfig *config = self->registry ? ddm_registry_config(self->registry) : NULL;
    /* Remember every key asked for, set or not: the registry warns about
     * --plugin-opt keys the plugin never reads (misspellings) and lists
     * them in --list-plugins. Bounded, UTF-8 only (they go to JSON). */
    if (!self->options_read)
        self->options_read = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (g_hash_table_size(self->options_read) < OPTIONS_READ_MAX && strlen(key) <= OPTION_KEY_MAX &&
        g_utf8_validate(key, -1, NULL) && !g_hash_table_contains(self->options_read, key))
        g_hash_table_add(self->options_read, g_strdup(key));
    if (!config || !config->plugin_opts)
        return NULL;
    g_autofree char *full = g_strconcat(self->name, ".", key, NULL);
    return g_hash_table_lookup(config->plugin_opts, full);
}

/* -------------------------------------------------------- registration */

/* Types the core handles itself and never hands to a plugin. */
static gboolean chunk_reserved(uint32_t type)
{
    return type == DDM_CHUNK_HELO || type == DDM_CHUNK_ZLIB || type == DDM_CHUNK_FAIL;
}

/* An owner's or a tap's registration (transfer full: the registry frees it). */
static DdmChunkReg *chunk_reg_new(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                                  ddm_free_fn ud_free)
{
    DdmChunkReg *r = g_new0(DdmChunkReg, 1);
    r->plugin = self;
    r->type = type;
    r->fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    return r;
}

/* Take ownership of @type for @self (fn NULL: a stream owner, filled in
 * by the caller). The arguments are checked. */
static int host_register_chunk_checked(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                                       ddm_free_fn ud_free)
{
    DdmRegistry *reg = self->registry;
    char name[5];
    ddm_chunk_name(type, name);
    if (chunk_reserved(type)) {
        g_warning("plugin %s: chunk type %s is handled by the core and cannot be owned",
                  self->name, name);
        drop_ud(ud, ud_free);
        return -EEXIST;
    }
    DdmChunkReg *cur = g_hash_table_lookup(reg->owners, GUINT_TO_POINTER(type));
    if (cur) {
        g_autofree char *msg = g_strdup_printf(
            "chunk type %s is already owned by plugin %s; plugin %s cannot own it too",
            name, cur->plugin->name, self->name);
        g_warning("%s", msg);
        /* A conflict refuses the whole plugin, even if its init ignores the error. */
        if (reg->conflicted != self) {
            reg->conflicted = self;
            g_free(reg->conflict_msg);
            reg->conflict_msg = g_steal_pointer(&msg);
        }
        drop_ud(ud, ud_free);
        return -EEXIST;
    }
    g_hash_table_insert(reg->owners, GUINT_TO_POINTER(type), chunk_reg_new(self, type, fn, ud, ud_free));
    return 0;
}

static int host_register_chunk(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                               ddm_free_fn ud_free)
{
    REG_BEGIN(self, fn != NULL && type != 0, "register_chunk", ud, ud_free);
    return host_register_chunk_checked(self, type, fn, ud, ud_free);
}

static int host_register_chunk_stream(ddm_plugin *self, uint32_t type, const ddm_stream_ops *ops,
                                      void *ud, ddm_free_fn ud_free)
{
    REG_BEGIN(self, ops != NULL && ops->begin != NULL && ops->data != NULL && ops->end != NULL &&
                        type != 0,
              "register_chunk_stream", ud, ud_free);
    /* The same ownership rules as register_chunk: a stream owner is an owner. */
    int rc = host_register_chunk_checked(self, type, NULL, ud, ud_free);
    if (rc == 0) {
        DdmChunkReg *r = g_hash_table_lookup(self->registry->owners, GUINT_TO_POINTER(type));
        r->stream = *ops;
    }
    return rc;
}

static int host_register_tap(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                             ddm_free_fn ud_free)
{
    REG_BEGIN(self, fn != NULL, "register_tap", ud, ud_free);
    g_ptr_array_add(self->registry->taps, chunk_reg_new(self, type, fn, ud, ud_free));
    return 0;
}

static int host_register_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud,
                                     ddm_free_fn ud_free)
{
    REG_BEGIN(self, fn != NULL, "register_vm_listener", ud, ud_free);
    DdmListenerReg *r = g_new0(DdmListenerReg, 1);
    r->plugin = self;
    r->fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    g_ptr_array_add(self->registry->listeners, r);
    return 0;
}

static int host_register_plain_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud,
                                           ddm_free_fn ud_free)
{
    REG_BEGIN(self, fn != NULL, "register_plain_vm_listener", ud, ud_free);
    DdmListenerReg *r = g_new0(DdmListenerReg, 1);
    r->plugin = self;
    r->plain = TRUE;
    r->fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    g_ptr_array_add(self->registry->listeners, r);
    return 0;
}

/* ABI 1.8: what runs when the server stops, before the VMs close
 * (ddm_registry_stopping, registry_dispatch.c). */
static int host_register_stopping(ddm_plugin *self, ddm_stopping_fn fn, void *ud,
                                  ddm_free_fn ud_free)
{
    REG_BEGIN(self, fn != NULL, "register_stopping", ud, ud_free);
    DdmListenerReg *r = g_new0(DdmListenerReg, 1);
    r->plugin = self;
    r->stopping = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    g_ptr_array_add(self->registry->stoppers, r);
    return 0;
}

static gboolean command_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > DDM_COMMAND_NAME_MAX || !g_ascii_isalnum(name[0]))
        return FALSE;
    for (size_t i = 0; i < n; i++)
        if (!g_ascii_isalnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            return FALSE;
    return TRUE;
}

static int host_register_command(ddm_plugin *self, const char *name, const char *usage,
                                 const char *summary, ddm_command_fn fn, void *ud,
                                 ddm_free_fn ud_free)
{
    REG_BEGIN(self, name != NULL && fn != NULL, "register_command", ud, ud_free);
    if (!command_name_ok(name)) {
        g_warning("plugin %s: '%s' is not a valid command name (letters, digits, - _ .)",
                  self->name, name);
        drop_ud(ud, ud_free);
        return -EINVAL;
    }
    if (ddm_registry_command_reserved(name)) {
        g_warning("plugin %s: command name '%s' is reserved by ddmon", self->name, name);
        drop_ud(ud, ud_free);
        return -EEXIST;
    }
    DdmCommandReg *cur = ddm_registry_find_command(self->registry, name);
    if (cur) {
        g_warning("plugin %s: command '%s' is already registered by plugin %s", self->name, name,
                  cur->plugin->name);
        drop_ud(ud, ud_free);
        return -EEXIST;
    }
    DdmCommandReg *r = g_new0(DdmCommandReg, 1);
    r->plugin = self;
    r->name = g_strdup(name);
    r->usage = g_strdup(usage ? usage : name);
    r->summary = g_strdup(summary ? summary : "");
    r->fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    g_ptr_array_add(self->registry->commands, r);
    return 0;
}

static int host_chunk_enabled(ddm_plugin *self, uint32_t type)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), 0);
    return ddm_registry_chunk_enabled(self->registry, type) ? 1 : 0;
}

/* ----------------------------------------------------------------- VMs */

/* The most VMs a first look waits for one by one: past them it records no
 * more, and what the polls asked them is left to ddm_daemon_look_settled (which
 * the first look waits for after these anyway). */
#define MAX_FIRST_LOOK_VMS 4096

/* A request went to @vm: if a timer woken by a watch sent it, the first
 * look waits for @vm (ddm_registry_first_look_settled). */
static void note_first_look(DdmRegistry *reg, DdmVm *vm)
{
    if (!reg->first_look_polling)
        return;
    if (!reg->first_look_vms)
        reg->first_look_vms = g_hash_table_new_full(g_direct_hash, g_direct_equal,
                                                    (GDestroyNotify)ddm_vm_unref, NULL);
    if (g_hash_table_contains(reg->first_look_vms, vm) ||
        g_hash_table_size(reg->first_look_vms) >= MAX_FIRST_LOOK_VMS)
        return;
    g_hash_table_add(reg->first_look_vms, ddm_vm_ref(vm));
}

void ddm_registry_first_look_forget_vm(DdmRegistry *reg, DdmVm *vm)
{
    g_return_if_fail(reg != NULL);
    if (reg->first_look_vms)
        g_hash_table_remove(reg->first_look_vms, vm);
}

static void look_lags_expire(DdmRegistry *reg, gint64 now);
static gint64 look_now(DdmRegistry *reg);

void ddm_registry_first_look_end(DdmRegistry *reg)
{
    g_return_if_fail(reg != NULL);
    if (reg->first_look_vms)
        g_hash_table_remove_all(reg->first_look_vms);
    look_lags_expire(reg, look_now(reg)); /* the late VMs stay late for the next looks */
}

guint ddm_registry_first_look_n_vms(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, 0);
    return reg->first_look_vms ? g_hash_table_size(reg->first_look_vms) : 0;
}

static int host_request(ddm_plugin *self, ddm_vm *vm, uint32_t type, const void *data,
                        size_t len, unsigned timeout_ms, ddm_reply_fn fn, void *ud,
                        uint32_t *id_out)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(data != NULL || len == 0, -EINVAL);
    if (!ddm_plugin_is_active(self))
        return -ENOTCONN; /* being unloaded: nobody would take the reply */
    /* --chunks governs the types plugins own (what flows from VMs); a
     * request-only type (THEN, STKL, HPGC) follows from its plugin's own
     * chunk_enabled() checks, so users need not know request names. */
    if (!ddm_registry_chunk_enabled(self->registry, type) &&
        ddm_registry_type_owned(self->registry, type)) {
        char name[5];
        g_debug("plugin %s: request %s to vm %s not sent: type disabled by --chunks", self->name,
                ddm_chunk_name(type, name), vm->info.key ? vm->info.key : "?");
        return -EPERM;
    }
    int rc = ddm_vm_request(vm, self, type, data, len, timeout_ms, fn, ud, id_out);
    if (rc == 0)
        note_first_look(self->registry, vm);
    return rc;
}

static const ddm_vm_info *host_vm_info(ddm_vm *vm)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), NULL);
    return &vm->info;
}

static int host_vm_set_name(ddm_plugin *self, ddm_vm *vm, const char *app_name,
                            const char *package_name, int32_t user_id)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    ddm_vm_set_name(vm, app_name, package_name, user_id);
    return 0;
}

static int host_vm_set_data(ddm_plugin *self, ddm_vm *vm, void *data, ddm_free_fn data_free)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    /* a short list, one entry a plugin (vm_tables.c) */
    DdmVmPluginData *old = ddm_vm_plugin_data_take(vm, self);
    if (data) {
        DdmVmPluginData *d = g_new0(DdmVmPluginData, 1);
        d->plugin = self;
        d->data = data;
        d->data_free = data_free;
        d->next = vm->plugin_data;
        vm->plugin_data = d;
    }
    if (old) {
        if (old->data != data && old->data_free)
            old->data_free(old->data);
        g_free(old);
    }
    return 0;
}

static void *host_vm_get_data(ddm_plugin *self, ddm_vm *vm)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), NULL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), NULL);
    DdmVmPluginData *d = ddm_vm_plugin_data_find(vm, self);
    return d ? d->data : NULL;
}

static gboolean figure_name_ok(const char *name)
{
    if (name == NULL || *name == '\0' || strlen(name) > DDM_HEADLINE_FIGURE_NAME_MAX)
        return FALSE;
    for (const char *p = name; *p; p++)
        if (!(g_ascii_islower(*p) || g_ascii_isdigit(*p) || *p == '_'))
            return FALSE;
    return TRUE;
}

static int host_vm_headline_figures(ddm_plugin *self, ddm_vm *vm, const char *label,
                                    const ddm_headline_figure *figs, size_t n)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(label != NULL && *label != '\0', -EINVAL);
    if (strlen(label) > DDM_HEADLINE_LABEL_MAX)
        return -EMSGSIZE;
    if (n > DDM_HEADLINE_FIGURES_MAX || (n > 0 && figs == NULL))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!figure_name_ok(figs[i].name) ||
            (figs[i].type != DDM_VAL_INT && figs[i].type != DDM_VAL_DOUBLE))
            return -EINVAL;
    DdmHeadlineFigure a[DDM_HEADLINE_FIGURES_MAX];
    memset(a, 0, sizeof a); /* padding too: figures are compared with memcmp */
    for (size_t i = 0; i < n; i++) {
        g_strlcpy(a[i].name, figs[i].name, sizeof a[i].name); /* checked: figure_name_ok */
        a[i].type = figs[i].type;
        a[i].i = figs[i].i;
        a[i].d = figs[i].d;
    }
    int rc = ddm_vm_figures_set(vm, label, a, (guint)n); /* vm_tables.c */
    if (rc <= 0)
        return rc; /* unchanged (no new version of the view), or -ENOSPC */
    if (self->registry)
        ddm_registry_headline_publish(self->registry, vm, FALSE); /* registry_headline.c */
    return 0;
}

static ddm_vm *host_find_vm(ddm_plugin *self, const char *spec)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), NULL);
    g_return_val_if_fail(spec != NULL, NULL);
    DdmMonitor *mon = plugin_monitor(self);
    return mon ? ddm_monitor_resolve_vm(mon, spec) : NULL;
}

static int host_vm_headline(ddm_plugin *self, ddm_vm *vm, const char *label, const char *text)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(label != NULL && *label != '\0', -EINVAL);
    if (strlen(label) > DDM_HEADLINE_LABEL_MAX || (text && strlen(text) > DDM_HEADLINE_TEXT_MAX))
        return -EMSGSIZE;
    int rc = ddm_vm_headline_set(vm, label, text); /* vm_tables.c */
    if (rc <= 0)
        return rc; /* unchanged, or -ENOSPC past DDM_VM_HEADLINES_MAX labels */
    DdmMonitor *mon = plugin_monitor(self);
    if (mon)
        ddm_monitor_vm_headline_changed(mon, vm);
    return 0;
}

/* Walk a snapshot of the monitor's VMs in state @want: the array holds a
 * reference on each, so a VM closed during the walk (by @fn, or by anything
 * @fn calls) stays valid memory until the end, and is skipped once it is no
 * longer in @want (its state turns CLOSED before its DDM_VM_GONE goes out). */
static size_t foreach_vm_in(ddm_plugin *self, DdmVmState want, ddm_vm_visit_fn fn, void *ud)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), 0);
    g_return_val_if_fail(fn != NULL, 0);
    if (!self->registry)
        return 0;
    g_autoptr(GPtrArray) vms = ddm_registry_list_vms(self->registry);
    size_t calls = 0;
    for (guint i = 0; i < vms->len; i++) {
        DdmVm *vm = g_ptr_array_index(vms, i);
        if (!ddm_vm_is_valid(vm) || vm->state != want)
            continue;
        calls++;
        if (fn(self, vm, ud) != 0)
            break;
    }
    return calls;
}

static size_t host_foreach_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud)
{
    return foreach_vm_in(self, DDM_VM_STATE_READY, fn, ud);
}

static size_t host_foreach_plain_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud)
{
    return foreach_vm_in(self, DDM_VM_STATE_PLAIN, fn, ud);
}

/* Standard JDWP to a plain JVM: only what the allow-list in core/wire/jdwp.c
 * names (read-only, plus one thread's Suspend/Resume), never while a
 * debugger is attached (except the Resume of the thread a plugin holds),
 * never a vendor command set (doc/protocol.md, "Plain JVMs"). */
static int host_jdwp_request(ddm_plugin *self, ddm_vm *vm, uint8_t cmdset, uint8_t cmd,
                             const void *data, size_t len, unsigned timeout_ms,
                             ddm_jdwp_reply_fn fn, void *ud)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    g_return_val_if_fail(ddm_vm_is_valid(vm), -EINVAL);
    g_return_val_if_fail(fn != NULL, -EINVAL);
    g_return_val_if_fail(data != NULL || len == 0, -EINVAL);
    if (!ddm_plugin_is_active(self))
        return -ENOTCONN;
    if (!ddm_jdwp_plugin_allowed(cmdset, cmd)) {
        g_debug("plugin %s: JDWP %u/%u refused: not on the read-only allow-list", self->name,
                cmdset, cmd);
        return -EPERM;
    }
    if (vm->state != DDM_VM_STATE_PLAIN)
        return -ENOTCONN;
    gboolean resume = cmdset == DDM_JDWP_CMDSET_THREAD && cmd == DDM_JDWP_CMD_THREAD_RESUME;
    if (cmdset == DDM_JDWP_CMDSET_THREAD && cmd == DDM_JDWP_CMD_THREAD_SUSPEND &&
        ddm_vm_suspend_owner(vm))
        return -EBUSY; /* one held thread per VM */
    if (resume) {
        /* Only the thread this plugin holds. */
        gsize n = 0;
        const void *held = ddm_vm_suspend_thread(vm)
                               ? g_bytes_get_data(ddm_vm_suspend_thread(vm), &n) : NULL;
        if (ddm_vm_suspend_owner(vm) != self || n != len || (len && memcmp(held, data, len) != 0))
            return -EPERM;
    } else if (vm->info.debugger) {
        return -EBUSY; /* a debugger owns the VM now */
    }
    int rc = ddm_vm_jdwp_request(vm, self, cmdset, cmd, data, len, timeout_ms, fn, ud);
    if (rc == 0)
        note_first_look(self->registry, vm);
    return rc;
}

/* -------------------------------------------------------------- timers */

/* A watch woke @t (ddm_registry_wake_watch_timers) and it has not run
 * since: DdmRegistry.wakes_pending counts them, so asking whether any is
 * pending is O(1). */
static void set_wake_pending(DdmTimerReg *t, gboolean pending)
{
    if (t->wake_pending == pending)
        return;
    t->wake_pending = pending;
    if (t->reg == NULL)
        return;
    if (pending)
        t->reg->wakes_pending++;
    else
        t->reg->wakes_pending--;
}

/* The views store's watch generation (0 without a store). */
static guint64 watch_gen(DdmRegistry *reg)
{
    DdmViews *store = reg ? ddm_registry_views(reg) : NULL;
    return store ? ddm_views_watch_generation(store) : 0;
}

/* @t sleeps no more (woken, or dropped): off the sleeping list. */
static void stop_sleeping(DdmTimerReg *t)
{
    if (!t->sleeping)
        return;
    t->sleeping = FALSE;
    if (t->reg && t->reg->sleeping_timers)
        g_ptr_array_remove_fast(t->reg->sleeping_timers, t);
}

/* @t returned DDM_TIMER_SLEEP: unarmed until a change of the watches, a
 * watch that begins (if it opted in) or timer_wake arms it again. */
static void start_sleeping(DdmTimerReg *t)
{
    DdmRegistry *reg = t->reg;
    if (t->sleeping || reg == NULL)
        return;
    if (!reg->sleeping_timers)
        reg->sleeping_timers = g_ptr_array_new();
    g_ptr_array_add(reg->sleeping_timers, t);
    t->sleeping = TRUE;
}

/* A timer of a plugin built for ABI < 1.7 returned DDM_TIMER_SLEEP (2),
 * which that ABI left undocumented (keep was 1, though any non-zero kept):
 * it sleeps now. Say so once per plugin, so that a tick that returns a
 * count that happens to be 2 can be told from a plugin that stalls. */
static void note_old_abi_sleep(DdmTimerReg *t)
{
    ddm_plugin *p = t->plugin;
    if (p->abi_minor >= 7 || p->sleep_noted)
        return;
    p->sleep_noted = TRUE;
    g_message("plugin %s: timer %u returned 2, which since ABI 1.7 means sleep "
              "(DDM_TIMER_SLEEP); the plugin asks for ABI %u.%u, where 2 meant keep",
              p->name, t->id, p->abi_major, p->abi_minor);
}

/* Plugin timers are entries of core/loop's heap, each re-armed after a run
 * that returns non-zero, like a g_timeout; since ABI 1.7 a run that returns
 * DDM_TIMER_SLEEP (2) leaves it unarmed (sleeping) until something wakes
 * it. 2 was never a documented "keep" (plugin.h said 1), so it means sleep
 * whatever minor the plugin was built for: a plugin whose tests build it
 * for an older core (DDM_ABI_MINOR_REQUIRED) sleeps on this one too. */
static void timer_fire(DdmTimer *timer, gpointer data)
{
    DdmTimerReg *t = data;
    int rc;
    (void)timer;

    DdmRegistry *reg = t->reg;
    gboolean was_polling = reg->first_look_polling;
    guint64 gen = watch_gen(reg);
    t->firing = TRUE;
    t->wake_asked = FALSE;
    /* woken by a watch: the requests it sends are the first look's */
    reg->first_look_polling = t->wake_pending;
    set_wake_pending(t, FALSE);
    rc = t->fn(t->plugin, t->ud);
    reg->first_look_polling = was_polling;
    t->firing = FALSE;
    if (t->dropped) { /* removed from its own callback (or the plugin unloaded) */
        t->dropped = FALSE;
        ddm_registry_timer_drop(t);
    } else if (rc == 0) {
        ddm_registry_timer_drop(t);
    } else {
        if (rc == DDM_TIMER_SLEEP)
            note_old_abi_sleep(t);
        if (t->wake_pending) {
            /* a watch that began inside the callback wakes it again at once */
            ddm_timer_arm(&t->timer, 0);
        } else if (rc == DDM_TIMER_SLEEP && !t->wake_asked &&
                   watch_gen(reg) == gen) { /* else the watches moved during the run: one more */
            start_sleeping(t);
        } else {
            ddm_timer_arm(&t->timer, t->interval_ms);
        }
    }
}

/* A free timer id: never 0, never one in use (ids wrap after 2^32). */
static guint next_timer_id(DdmRegistry *reg)
{
    do
        reg->next_timer_id++;
    while (reg->next_timer_id == 0 ||
           g_hash_table_contains(reg->timers, GUINT_TO_POINTER(reg->next_timer_id)));
    return reg->next_timer_id;
}

static uint32_t host_timer_add(ddm_plugin *self, unsigned interval_ms, ddm_timer_fn fn, void *ud,
                               ddm_free_fn ud_free)
{
    REG_CHECK(ddm_plugin_is_valid(self), ud, ud_free, 0);
    REG_CHECK(fn != NULL, ud, ud_free, 0);
    if (!ddm_plugin_is_active(self)) {
        drop_ud(ud, ud_free);
        return 0;
    }
    DdmTimerReg *t = g_new0(DdmTimerReg, 1);
    t->reg = self->registry;
    t->plugin = self;
    t->fn = fn;
    t->ud = ud;
    t->ud_free = ud_free;
    t->interval_ms = MAX(interval_ms, 1u);
    t->id = next_timer_id(self->registry);
    t->counted = TRUE;
    self->live_timers++;
    ddm_timer_init(&t->timer, timer_fire, t);
    ddm_timer_arm(&t->timer, t->interval_ms);
    g_hash_table_insert(self->registry->timers, GUINT_TO_POINTER(t->id), t);
    return t->id;
}

static void host_timer_remove(ddm_plugin *self, uint32_t id)
{
    g_return_if_fail(ddm_plugin_is_valid(self));
    DdmTimerReg *t = g_hash_table_lookup(self->registry->timers, GUINT_TO_POINTER(id));
    if (!t || t->plugin != self)
        return;
    ddm_registry_timer_drop(t);
}

/* Wake a sleeping timer of this plugin (ABI 1.7): it runs after its
 * interval, as if it had kept ticking. */
static int host_timer_wake(ddm_plugin *self, uint32_t id)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    DdmTimerReg *t = g_hash_table_lookup(self->registry->timers, GUINT_TO_POINTER(id));
    if (!t || t->plugin != self || t->dropped)
        return -ENOENT;
    if (t->firing) {
        t->wake_asked = TRUE; /* the run that calls this may not sleep */
    } else if (t->sleeping) {
        stop_sleeping(t);
        ddm_timer_arm(&t->timer, t->interval_ms);
    }
    return 0;
}

guint ddm_registry_wake_sleeping_timers(DdmRegistry *reg)
{
    guint n;
    g_return_val_if_fail(reg != NULL, 0);
    if (!reg->sleeping_timers || reg->sleeping_timers->len == 0)
        return 0;
    n = reg->sleeping_timers->len;
    for (guint i = 0; i < n; i++) {
        DdmTimerReg *t = g_ptr_array_index(reg->sleeping_timers, i);
        t->sleeping = FALSE;
        ddm_timer_arm(&t->timer, t->interval_ms);
    }
    g_ptr_array_set_size(reg->sleeping_timers, 0);
    return n;
}

guint ddm_registry_sleeping_timers(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, 0);
    return reg->sleeping_timers ? reg->sleeping_timers->len : 0;
}

/* A poll tick that runs as soon as a watch begins (ABI 1.5). */
static int host_timer_wake_on_watch(ddm_plugin *self, uint32_t id, int on)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), -EINVAL);
    DdmTimerReg *t = g_hash_table_lookup(self->registry->timers, GUINT_TO_POINTER(id));
    if (!t || t->plugin != self || t->dropped)
        return -ENOENT;
    DdmRegistry *reg = self->registry;
    if ((on != 0) == t->wake_on_watch)
        return 0;
    t->wake_on_watch = on != 0;
    if (on) {
        if (!reg->wake_timers)
            reg->wake_timers = g_ptr_array_new();
        g_ptr_array_add(reg->wake_timers, t);
        self->wake_timers++;
    } else {
        set_wake_pending(t, FALSE);
        g_ptr_array_remove_fast(reg->wake_timers, t);
        self->wake_timers--;
    }
    return 0;
}

gboolean ddm_registry_polls_on_watch(DdmRegistry *reg, const char *owner)
{
    g_return_val_if_fail(reg != NULL, TRUE);
    ddm_plugin *p = owner ? ddm_registry_find_plugin(reg, owner) : NULL;
    if (p == NULL || p->status != DDM_PLUGIN_LOADED)
        return TRUE;
    if (p->wake_timers > 0)
        return TRUE;
    /* no timer that opted in: it polls at its own tick, if at all */
    return p->abi_minor >= 5 && p->live_timers == 0;
}

/* ddm_registry_timer_drop: @t goes, so it is no more woken nor pending. */
void ddm_registry_timer_forget_wake(DdmTimerReg *t)
{
    if (t->counted) {
        t->plugin->live_timers--;
        t->counted = FALSE;
    }
    set_wake_pending(t, FALSE);
    stop_sleeping(t);
    if (t->wake_on_watch && t->reg && t->reg->wake_timers) {
        g_ptr_array_remove_fast(t->reg->wake_timers, t);
        t->plugin->wake_timers--;
    }
    t->wake_on_watch = FALSE;
}

guint ddm_registry_wake_watch_timers(DdmRegistry *reg)
{
    guint n = 0;
    g_return_val_if_fail(reg != NULL, 0);
    (void)ddm_registry_first_look_settled(reg); /* forget the VMs earlier looks left settled */
    /* only the timers that opted in: not the per-VM or per-call ones */
    for (guint i = 0; reg->wake_timers && i < reg->wake_timers->len; i++) {
        DdmTimerReg *t = g_ptr_array_index(reg->wake_timers, i);
        if (t->dropped)
            continue;
        set_wake_pending(t, TRUE);
        stop_sleeping(t); /* a sleeping tick wakes too: its poll is the look's */
        if (!t->firing) /* else timer_fire re-arms it at once */
            ddm_timer_arm(&t->timer, 0);
        n++;
    }
    return n;
}

/* A VM a look found waited for (a handshake or HELO unanswered, requests
 * in flight), and since when: while it stays in that state and answers
 * none of our requests (vm->answered_id stays), it is late once
 * DDM_FIRST_LOOK_MS have passed (ddm_registry_look_vm_settled). Keyed by
 * the VM's target key, not its session: a port that never answers the
 * handshake is connected to again and again (a session each), and each
 * new session of it is as late as the last. */
typedef struct {
    gint64 since_us;      /* when a look first found it so */
    gint64 seen_us;       /* when a look last found it waited for */
    uint32_t answered_id; /* vm->answered_id then */
    DdmVmState state;     /* vm->state then */
} LookLag;

/* A VM no look found waited for in this long (it went away, its requests
 * timed out and nobody asked it anything since, or it answered and
 * nobody looked since) is forgotten: a look that finds it again treats it
 * as never seen (it gets a look's whole time again), and the table is
 * swept of such entries at the end of a first look and when a new entry
 * comes, but only once one can be forgotten (look_lags_next_forget_us):
 * a full table of VMs seen within LOOK_LAG_FORGET_US costs a look O(1) a
 * VM, not a sweep a VM. */
#define LOOK_LAG_FORGET_US (30 * G_USEC_PER_SEC)

static gint64 look_now(DdmRegistry *reg)
{
    return reg->look_now ? reg->look_now() : g_get_monotonic_time();
}

void ddm_registry_set_look_clock(DdmRegistry *reg, gint64 (*now)(void), guint cap)
{
    g_return_if_fail(reg != NULL);
    reg->look_now = now;
    reg->look_lags_cap = cap;
}

/* TRUE if a look need not wait for @vm, late or not: past its handshake
 * and HELO with its requests settled. */
static gboolean vm_answered_all(DdmVm *vm)
{
    switch (vm->state) {
    case DDM_VM_STATE_HANDSHAKE:
    case DDM_VM_STATE_HELO:
        return FALSE;
    case DDM_VM_STATE_READY:
    case DDM_VM_STATE_PLAIN:
        return ddm_vm_requests_settled(vm);
    default:
        return TRUE;
    }
}

/* Forget the VMs no look found waited for in LOOK_LAG_FORGET_US, if one
 * can be: O(recorded) when it sweeps, O(1) when no entry can have expired
 * since the last sweep (the earliest time one can, kept in
 * look_lags_next_forget_us, only errs early: an entry seen again later
 * leaves it as it was, and the sweep then finds the true earliest). */
static void look_lags_expire(DdmRegistry *reg, gint64 now)
{
    GHashTableIter it;
    gpointer value;
    if (!reg->look_lags || now < reg->look_lags_next_forget_us)
        return;
    gint64 next = G_MAXINT64;
    reg->look_lags_sweeps++;
    g_hash_table_iter_init(&it, reg->look_lags);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        const LookLag *lag = value;
        if (now - lag->seen_us >= LOOK_LAG_FORGET_US)
            g_hash_table_iter_remove(&it);
        else
            next = MIN(next, lag->seen_us + LOOK_LAG_FORGET_US);
    }
    reg->look_lags_next_forget_us = next;
}

guint ddm_registry_n_look_lag_sweeps(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, 0);
    return reg->look_lags_sweeps;
}

gboolean ddm_registry_look_vm_settled(DdmRegistry *reg, DdmVm *vm)
{
    g_return_val_if_fail(reg != NULL, TRUE);
    g_return_val_if_fail(ddm_vm_is_valid(vm), TRUE);
    /* still connecting: no VM yet, waited for (the connection is ours to
     * make: its timeout is the session's) */
    if (vm->state == DDM_VM_STATE_CONNECTING)
        return FALSE;
    /* closed: nothing to wait for; a late one's lateness stays with its
     * key, for the next session of the same target */
    if (vm->state == DDM_VM_STATE_CLOSED)
        return TRUE;
    const char *key = vm->target != NULL ? vm->target->key : vm->info.key;
    gint64 now = look_now(reg);
    LookLag *lag = reg->look_lags && key ? g_hash_table_lookup(reg->look_lags, key) : NULL;
    if (lag != NULL && now - lag->seen_us >= LOOK_LAG_FORGET_US) {
        g_hash_table_remove(reg->look_lags, key); /* forgotten: as if never seen */
        lag = NULL;
    }
    /* it answered one of ours since, or moved on (to HELO, READY...) */
    gboolean moved = lag != NULL && (lag->answered_id != vm->answered_id || lag->state != vm->state);
    if (vm_answered_all(vm)) {
        /* Only a VM that moved on loses its lateness: one whose requests
         * all timed out unanswered (a READY VM that answers nothing gets
         * there after the request timeout) stays late for the next look
         * that asks it something, until it is forgotten (seen_us is left:
         * LOOK_LAG_FORGET_US after the last look that found it waited
         * for, not after the last that asked about it idle). */
        if (moved)
            g_hash_table_remove(reg->look_lags, key);
        return TRUE;
    }
    if (key == NULL)
        return FALSE; /* nothing to know it by: waited for, as every VM was before */
    if (lag == NULL) {
        guint cap = reg->look_lags_cap ? reg->look_lags_cap : MAX_FIRST_LOOK_VMS;
        if (!reg->look_lags)
            reg->look_lags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        look_lags_expire(reg, now); /* only once an entry can be forgotten */
        if (g_hash_table_size(reg->look_lags) >= cap)
            return FALSE; /* unrecorded: waited for, as every VM was before */
        lag = g_new(LookLag, 1);
        g_hash_table_insert(reg->look_lags, g_strdup(key), lag);
        reg->look_lags_next_forget_us = MIN(reg->look_lags_next_forget_us,
                                            now + LOOK_LAG_FORGET_US);
    } else if (!moved) {
        lag->seen_us = now;
        return now - lag->since_us >= (gint64)DDM_FIRST_LOOK_MS * 1000; /* late */
    }
    /* first found waited for, or it answered or moved on since: it gets a
     * look's whole time again */
    lag->since_us = lag->seen_us = now;
    lag->answered_id = vm->answered_id;
    lag->state = vm->state;
    return FALSE;
}

gboolean ddm_registry_look_vm_settled_since(DdmRegistry *reg, DdmVm *vm, gint64 since_us)
{
    g_return_val_if_fail(ddm_vm_is_valid(vm), TRUE);
    /* Review rD 3: begun after the look (a wide scan offers a slice of
     * ports every iteration, each a session connecting, then up to its
     * handshake timeout in HANDSHAKE): the look did not ask about it, and
     * waiting for it ran every look into DDM_FIRST_LOOK_MS. */
    if (vm->started_us > since_us)
        return TRUE;
    return ddm_registry_look_vm_settled(reg, vm);
}

/* A VM's requests are settled as ddm_registry_look_vm_settled says: a DDM
 * VM's (it may send a FEAT fence to find out) and a plain JVM's, once none
 * of ddmon's JDWP commands is in flight (a poll's follow-ups are sent from
 * the reply before, so a chain counts until its end), or the VM is late.
 * ddm_daemon_look_settled asks the same of every VM, so the VMs past
 * MAX_FIRST_LOOK_VMS and a set emptied early are still waited for. */
gboolean ddm_registry_first_look_settled(DdmRegistry *reg)
{
    GHashTableIter it;
    gpointer key;
    g_return_val_if_fail(reg != NULL, TRUE);
    if (!reg->first_look_vms)
        return TRUE;
    g_hash_table_iter_init(&it, reg->first_look_vms);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (ddm_registry_look_vm_settled(reg, key)) /* answered, timed out, late, or gone */
            g_hash_table_iter_remove(&it);
    return g_hash_table_size(reg->first_look_vms) == 0;
}

void ddm_registry_first_look_free(DdmRegistry *reg)
{
    g_clear_pointer(&reg->first_look_vms, g_hash_table_unref);
    g_clear_pointer(&reg->look_lags, g_hash_table_unref);
    g_clear_pointer(&reg->wake_timers, g_ptr_array_unref);
    g_clear_pointer(&reg->sleeping_timers, g_ptr_array_unref);
}

gboolean ddm_registry_watch_wakes_pending(DdmRegistry *reg)
{
    g_return_val_if_fail(reg != NULL, FALSE);
    return reg->wakes_pending > 0;
}

/* --------------------------------------------------------------- views */

static ddm_view *host_view_new(ddm_plugin *self, ddm_vm *vm, const char *name, ddm_view_kind kind,
                               const char *title)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), NULL);
    g_return_val_if_fail(vm == NULL || ddm_vm_is_valid(vm), NULL);
    g_return_val_if_fail(name != NULL && *name != '\0', NULL);
    g_return_val_if_fail(kind >= DDM_VIEW_TABLE && kind <= DDM_VIEW_BLOB, NULL);
    DdmViews *store = self->registry ? ddm_registry_views(self->registry) : NULL;
    if (!store || !ddm_plugin_is_active(self))
        return NULL;
    ddm_view *v = ddm_views_create(store, self->name, vm ? vm->info.key : NULL, name, kind,
                                   title ? title : name);
    if (!v)
        g_debug("plugin %s: view %s already exists for %s", self->name, name,
                vm ? vm->info.key : "(global)");
    return v;
}

#define VIEW_CHECK(v) g_return_val_if_fail(ddm_view_is_valid(v), -EINVAL)

static int host_view_set_columns(ddm_view *view, const ddm_column *cols, size_t n_cols)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(cols != NULL || n_cols == 0, -EINVAL);
    return ddm_view_set_columns(view, cols, n_cols);
}

static int host_view_begin(ddm_view *view)
{
    VIEW_CHECK(view);
    return ddm_view_begin(view);
}

static int host_view_row(ddm_view *view)
{
    VIEW_CHECK(view);
    return ddm_view_row(view);
}

static int host_view_str(ddm_view *view, const char *value)
{
    VIEW_CHECK(view);
    return ddm_view_cell_str(view, value);
}

static int host_view_int(ddm_view *view, int64_t value)
{
    VIEW_CHECK(view);
    return ddm_view_cell_int(view, value);
}

static int host_view_double(ddm_view *view, double value)
{
    VIEW_CHECK(view);
    return ddm_view_cell_double(view, value);
}

static int host_view_bool(ddm_view *view, int value)
{
    VIEW_CHECK(view);
    return ddm_view_cell_bool(view, value);
}

static int host_view_field_str(ddm_view *view, const char *key, const char *value)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(key != NULL, -EINVAL);
    return ddm_view_field_str(view, key, value);
}

static int host_view_field_int(ddm_view *view, const char *key, int64_t value)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(key != NULL, -EINVAL);
    return ddm_view_field_int(view, key, value);
}

static int host_view_field_double(ddm_view *view, const char *key, double value)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(key != NULL, -EINVAL);
    return ddm_view_field_double(view, key, value);
}

static int host_view_field_bool(ddm_view *view, const char *key, int value)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(key != NULL, -EINVAL);
    return ddm_view_field_bool(view, key, value);
}

static int host_view_blob(ddm_view *view, const char *media_type, const void *data, size_t len)
{
    VIEW_CHECK(view);
    g_return_val_if_fail(media_type != NULL, -EINVAL);
    g_return_val_if_fail(data != NULL || len == 0, -EINVAL);
    return ddm_view_blob(view, media_type, data, len);
}

static int host_view_commit(ddm_view *view)
{
    VIEW_CHECK(view);
    return ddm_view_commit(view);
}

static void host_view_free(ddm_view *view)
{
    g_return_if_fail(ddm_view_is_valid(view));
    DdmRegistry *reg = ddm_registry_for_view(view);
    if (!reg) {
        g_warning("view_free: view %s is not published (a command's result view is freed by "
                  "cmd_finish)",
                  ddm_view_name(view));
        return;
    }
    ddm_views_destroy(ddm_registry_views(reg), view);
}

static int host_view_watchers(ddm_view *view)
{
    g_return_val_if_fail(ddm_view_is_valid(view), 0);
    return ddm_view_watchers(view);
}

static uint64_t host_watch_generation(ddm_plugin *self)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), 0);
    DdmViews *store = self->registry ? ddm_registry_views(self->registry) : NULL;
    return store ? ddm_views_watch_generation(store) : 0;
}

/* The watchers of the core's VM list (its global "vms" view). */
static int host_vm_list_watchers(ddm_plugin *self)
{
    g_return_val_if_fail(ddm_plugin_is_valid(self), 0);
    DdmViews *store = self->registry ? ddm_registry_views(self->registry) : NULL;
    ddm_view *v = store ? ddm_views_lookup_made(store, "vms", NULL) : NULL;
    return v ? ddm_view_watchers(v) : 0;
}

/* ------------------------------------------------------------ commands */

static gboolean cmd_is_valid(const ddm_cmd *cmd)
{
    return cmd != NULL && cmd->magic == DDM_CMD_MAGIC && !cmd->finished;
}

static ddm_view *host_cmd_result(ddm_cmd *cmd, ddm_view_kind kind, const char *title)
{
    g_return_val_if_fail(cmd_is_valid(cmd), NULL);
    g_return_val_if_fail(kind >= DDM_VIEW_TABLE && kind <= DDM_VIEW_BLOB, NULL);
    if (cmd->result)
        return ddm_view_kind_of(cmd->result) == kind ? cmd->result : NULL;
    cmd->result = ddm_view_new_detached(cmd->plugin->name, cmd->name, kind,
                                        title ? title : cmd->name);
    return cmd->result;
}

static void host_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message)
{
    g_return_if_fail(cmd_is_valid(cmd));
    ddm_registry_cmd_finish(cmd, status, message);
}

static const char *host_cmd_cwd(ddm_cmd *cmd)
{
    g_return_val_if_fail(cmd_is_valid(cmd), NULL);
    return cmd->cwd;
}

static const char *host_cmd_out_dir(ddm_cmd *cmd)
{
    g_return_val_if_fail(cmd_is_valid(cmd), NULL);
    return cmd->out_dir;
}

static int host_cmd_cancelled(ddm_cmd *cmd)
{
    g_return_val_if_fail(cmd_is_valid(cmd), 1);
    return cmd->cancelled ? 1 : 0;
}

static ddm_vm *host_cmd_find_vm(ddm_cmd *cmd, const char *spec)
{
    g_return_val_if_fail(cmd_is_valid(cmd), NULL);
    g_return_val_if_fail(spec != NULL, NULL);
    DdmMonitor *mon = plugin_monitor(cmd->plugin);
    g_autofree char *error = NULL;
    DdmVm *vm = NULL;
    if (mon)
        vm = ddm_monitor_resolve_vm_or_error(mon, spec, &error);
    else
        error = g_strdup_printf("no VM matches '%s' (try 'ddmon vms')", spec);
    if (!vm) {
        ddm_registry_cmd_finish(cmd, DDM_CMD_NOT_FOUND, error);
        return NULL;
    }
    /* The result view names the VM when the command was for one VM. */
    if (cmd->vm_key == NULL)
        cmd->vm_key = g_strdup(vm->info.key);
    else if (g_strcmp0(cmd->vm_key, vm->info.key) != 0)
        cmd->vm_several = TRUE;
    return vm;
}

static int host_cmd_progress(ddm_cmd *cmd, uint64_t done, uint64_t total, const char *unit)
{
    if (!cmd_is_valid(cmd))
        return -EINVAL;
    return ddm_registry_cmd_progress(cmd, done, total, unit);
}

/* ---------------------------------------------------------------- table */

void ddm_host_init(ddm_host *host)
{
    memset(host, 0, sizeof *host);
    host->size = sizeof *host;
    host->abi_major = DDM_CORE_ABI_MAJOR;
    host->abi_minor = DDM_CORE_ABI_MINOR;
    host->log = host_log;
    host->set_data = host_set_data;
    host->get_data = host_get_data;
    host->config_get = host_config_get;
    host->register_chunk = host_register_chunk;
    host->register_tap = host_register_tap;
    host->register_vm_listener = host_register_vm_listener;
    host->register_command = host_register_command;
    host->chunk_enabled = host_chunk_enabled;
    host->request = host_request;
    host->vm_info = host_vm_info;
    host->vm_set_name = host_vm_set_name;
    host->vm_set_data = host_vm_set_data;
    host->vm_get_data = host_vm_get_data;
    host->find_vm = host_find_vm;
    host->vm_headline = host_vm_headline;
    host->timer_add = host_timer_add;
    host->timer_remove = host_timer_remove;
    host->view_new = host_view_new;
    host->view_set_columns = host_view_set_columns;
    host->view_begin = host_view_begin;
    host->view_row = host_view_row;
    host->view_str = host_view_str;
    host->view_int = host_view_int;
    host->view_double = host_view_double;
    host->view_bool = host_view_bool;
    host->view_field_str = host_view_field_str;
    host->view_field_int = host_view_field_int;
    host->view_field_double = host_view_field_double;
    host->view_field_bool = host_view_field_bool;
    host->view_blob = host_view_blob;
    host->view_commit = host_view_commit;
    host->view_free = host_view_free;
    host->view_watchers = host_view_watchers;
    host->cmd_result = host_cmd_result;
    host->cmd_finish = host_cmd_finish;
    host->cmd_cwd = host_cmd_cwd;
    host->foreach_vm = host_foreach_vm;
    host->register_chunk_stream = host_register_chunk_stream;
    host->cmd_progress = host_cmd_progress;
    host->cmd_out_dir = host_cmd_out_dir;
    host->vm_headline_figures = host_vm_headline_figures;
    host->register_plain_vm_listener = host_register_plain_vm_listener;
    host->foreach_plain_vm = host_foreach_plain_vm;
    host->jdwp_request = host_jdwp_request;
    host->cmd_find_vm = host_cmd_find_vm;
    host->cmd_cancelled = host_cmd_cancelled;
    host->register_metric = ddm_registry_register_metric; /* registry_metrics.c */
    host->vm_metric = ddm_registry_vm_metric;
    host->watch_generation = host_watch_generation;
    host->timer_wake_on_watch = host_timer_wake_on_watch;
    host->vm_view_declare = ddm_registry_vm_view_declare; /* registry_views.c */
    host->vm_list_watchers = host_vm_list_watchers;
    host->vm_view_unmake = ddm_registry_vm_view_unmake; /* registry_views.c */
    host->timer_wake = host_timer_wake;
    host->register_stopping = host_register_stopping;
}
