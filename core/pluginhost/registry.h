/* SPDX-License-Identifier: Apache-2.0
 *
 * The plugin registry: loaded plugins and everything they registered
 * (chunk owners, taps, VM listeners, commands, timers), the chunk filter
 * (--chunks), and dispatch of chunks and VM events to plugins. Every
 * registration records its owning plugin, so a plugin is undone in one
 * call (failed init, chunk conflict, unload). The registry builds the
 * ddm_host table handed to plugins (host.c).
 */
#ifndef DDM_REGISTRY_H
#define DDM_REGISTRY_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include <ddmon/plugin.h>

#include "core/config/config.h"
#include "core/session/monitor.h"
#include "core/session/vm.h"
#include "core/views/views.h"

typedef struct DdmRegistry DdmRegistry;

#define DDM_PLUGIN_HANDLE_MAGIC 0x504C5547u

/* The per-VM record view (owner "ddmon") that holds the plugins' typed
 * headline figures (ddm_host.vm_headline_figures): field "LABEL_NAME". The
 * CLI's --json output lifts its fields into the VM's row and object. */
#define DDM_HEADLINE_VIEW "headline"
/* The metric families plugins declared (global table, owner "ddmon") and
 * each VM's samples of them (per-VM table "metrics"): ABI 1.3
 * register_metric and vm_metric (registry_metrics.c); GET /metrics
 * renders them (web/metrics.c). */
#define DDM_METRICS_FAMILIES_VIEW "metrics.families"
#define DDM_METRICS_VM_VIEW "metrics"

typedef enum {
    DDM_PLUGIN_LOADED = 0,
    DDM_PLUGIN_DISABLED,   /* found, valid, but --disable-plugin / not in --plugins */
    DDM_PLUGIN_REFUSED     /* failed a check or init; `reason` says why */
} DdmPluginStatus;

/* struct ddm_plugin: one per plugin file seen (loaded or not). */
struct ddm_plugin {
    uint32_t magic;            /* DDM_PLUGIN_HANDLE_MAGIC */
    DdmRegistry *registry;
    char *name;                /* from the descriptor, or the file's basename */
    char *path;
    char *version, *license, *summary;
    uint16_t abi_major, abi_minor;
    DdmPluginStatus status;
    char *reason;              /* refusal or disable reason */
    gboolean required;         /* named by the user: failure stops startup */
    gboolean in_init;          /* registration allowed only while TRUE */
    const ddm_plugin_desc *desc;
    void *dl;                  /* dlopen handle, NULL unless loaded */
    gpointer data;             /* set_data */
    ddm_free_fn data_free;
    GHashTable *options_read;  /* set of option keys config_get was asked for (owned
                                  char*; NULL until the first); kept after unload */
    guint live_timers;         /* its timers that run now (host.c) */
    guint wake_timers;         /* of them, those that opted in to timer_wake_on_watch (host.c) */
    gboolean sleep_noted;      /* built for ABI < 1.7, a timer returned 2: logged once (host.c) */
};

/** A registry for the VMs of @monitor (NULL: none, for a throwaway
 *  registry that only validates plugins), publishing plugins' views in
 *  @views, reading plugin options and the chunk filter from @config. All
 *  borrowed: they must outlive the registry. */
DdmRegistry *ddm_registry_new(DdmMonitor *monitor, DdmViews *views, const DdmConfig *config);
DdmViews *ddm_registry_views(DdmRegistry *reg);
const DdmConfig *ddm_registry_config(DdmRegistry *reg);
/** How many taps and VM listeners @p registered (for --check-plugin). */
void ddm_registry_count_observers(DdmRegistry *reg, ddm_plugin *p, guint *taps, guint *listeners);
/** Unload every plugin (fini, free registrations, dlclose). */
void ddm_registry_free(DdmRegistry *reg);
DdmMonitor *ddm_registry_monitor(DdmRegistry *reg);
/** Every VM the core knows. (transfer full: the array holds a reference to
 *  each VM and drops them when freed) */
GPtrArray *ddm_registry_list_vms(DdmRegistry *reg);
/** Every VM's "headline" record (the figures of ddm_host.vm_headline_figures)
 *  without making views: the made ones (transfer none) and, for the other
 *  VMs with figures, records made from their tables for one answer, also
 *  put in *@detached (transfer full: unref it after the answer, which frees
 *  them). With @direct, the VMs whose figures can be written without a
 *  record go there instead (a reference each; transfer full), for
 *  ddm_registry_headline_write_figures. VMs whose "headline" view a plugin
 *  made are left out. (transfer container) */
GPtrArray *ddm_registry_headline_records(DdmRegistry *reg, GPtrArray **detached,
                                         GPtrArray **direct);
/** A DdmJqMoreFiguresFn (core/views/jq_text.h) for @ud, the *@direct of
 *  ddm_registry_headline_records: each VM's figures as its record's
 *  members, the same bytes. */
void ddm_registry_headline_write_figures(GHashTable *figures, GHashTable *row_keys, gpointer ud);

/** Record a plugin file (refused or disabled ones too, for --list-plugins). (transfer none) */
ddm_plugin *ddm_registry_add(DdmRegistry *reg, const char *name, const char *path);
ddm_plugin *ddm_registry_find_plugin(DdmRegistry *reg, const char *name);
/** All plugin records, in load order. (transfer none, element type ddm_plugin*) */
GPtrArray *ddm_registry_plugins(DdmRegistry *reg);
/** Run desc->init with the host table. On failure every registration of the
 *  plugin is undone, status becomes REFUSED with the reason in @error. */
gboolean ddm_registry_init_plugin(DdmRegistry *reg, ddm_plugin *p, GError **error);
/** Undo a plugin: its registrations, views, per-VM data, timers, pending
 *  requests; fini; dlclose. */
void ddm_registry_unload(DdmRegistry *reg, ddm_plugin *p);

/* Polls when a watch begins (host.c; ddm_host.timer_wake_on_watch, ABI 1.5). */
/** A frontend began to watch or ask for views nobody watched: the plugin
 *  timers that opted in run at the next loop iteration (their polls ask
 *  the newly watched VMs). O(the timers that opted in, a list of their
 *  own), nothing per VM nor per call. Returns how many were woken. */
guint ddm_registry_wake_watch_timers(DdmRegistry *reg);
/** TRUE while a timer ddm_registry_wake_watch_timers woke has not run yet
 *  (after that, the requests its poll sent are what ddm_daemon_look_settled
 *  waits for). O(1): a count of them. */
gboolean ddm_registry_watch_wakes_pending(DdmRegistry *reg);
/** The watches may match otherwise (the views store's watch generation
 *  moved: a watch began or ended, a view came while watches exist): every
 *  plugin timer that sleeps (its callback returned DDM_TIMER_SLEEP, ABI
 *  1.7) is armed again for its interval, as if it had kept ticking. O(the
 *  sleeping timers, a list of their own); nothing when none sleeps.
 *  Returns how many were woken. */
guint ddm_registry_wake_sleeping_timers(DdmRegistry *reg);
/** Tests: how many plugin timers sleep now (ABI 1.7). */
guint ddm_registry_sleeping_timers(DdmRegistry *reg);
/** The longest a first look waits for the VMs' answers; also how long a
 *  VM may leave the requests a look found in flight unanswered before it
 *  is late (ddm_registry_look_vm_settled). */
#define DDM_FIRST_LOOK_MS 1200
/** TRUE when a look need not wait for @vm: it is past its handshake and
 *  HELO (a session still connecting is waited for) and its requests are
 *  settled (ddm_vm_requests_settled: a DDM VM's answered, timed out, never
 *  to be answered, or the VM not ready any more, which may send a FEAT
 *  fence to find out; a plain JVM's when none of ddmon's JDWP commands is
 *  in flight), or it is late: a look found it in the handshake, in HELO
 *  or with requests in flight DDM_FIRST_LOOK_MS ago or more, and it has
 *  answered none of ours since nor moved on (a request timing out is no
 *  answer: a hung or hostile VM holds up one look, not every look after
 *  it; it is waited for again once it answers, or once no look found
 *  it waited for in 30 s). O(1), but for a sweep of the recorded VMs
 *  when one of them can be forgotten (never while all were seen within
 *  30 s, even with the table full). */
gboolean ddm_registry_look_vm_settled(DdmRegistry *reg, DdmVm *vm);
/** ddm_registry_look_vm_settled for a look that began at @since_us
 *  (g_get_monotonic_time()): a session the monitor began after it (a
 *  scan's next slice, a reconnect) is not waited for, whatever its state;
 *  the sessions that existed when the look began are. O(1) as above. */
gboolean ddm_registry_look_vm_settled_since(DdmRegistry *reg, DdmVm *vm, gint64 since_us);
/** TRUE when every VM a woken timer sent a request to is settled for a
 *  look (ddm_registry_look_vm_settled). Forgets those VMs. O(the VMs
 *  those polls asked), not O(all VMs): at most 4,096 are recorded; past
 *  them, and after the set is emptied, the caller's
 *  ddm_daemon_look_settled waits for the rest, as it asks
 *  ddm_registry_look_vm_settled of every VM, DDM or plain. */
gboolean ddm_registry_first_look_settled(DdmRegistry *reg);
/** A VM went away: no first look waits for it or holds it any more. */
void ddm_registry_first_look_forget_vm(DdmRegistry *reg, DdmVm *vm);
/** No first look is waited for any more (the frontend answered or gave up
 *  on every one): forget the VMs recorded, and the references to them. */
void ddm_registry_first_look_end(DdmRegistry *reg);
/** FALSE when the plugin named @owner may not poll at once when a watch
 *  begins: none of its timers opted in to timer_wake_on_watch, and it was
 *  built for ABI 1.4 or older (a plugin that requires an older minor may
 *  still opt in where the core has it) or has timers that run now. A first
 *  look at its views then waits at least its old fixed time (its poll
 *  tick). TRUE for an owner that is no loaded plugin. O(plugins). */
gboolean ddm_registry_polls_on_watch(DdmRegistry *reg, const char *owner);
/** How many VMs a first look waits for one by one (tests). */
guint ddm_registry_first_look_n_vms(DdmRegistry *reg);

/* Chunk filter (--chunks). NULL/empty list = everything enabled. */
void ddm_registry_set_chunk_filter(DdmRegistry *reg, GPtrArray *chunk_names);
gboolean ddm_registry_chunk_enabled(DdmRegistry *reg, uint32_t type);
/** TRUE if a loaded plugin owns @type (the types --chunks governs for requests). */
gboolean ddm_registry_type_owned(DdmRegistry *reg, uint32_t type);
/** Types owned by @p (for the plugins view and the "all disabled" notice). (transfer full) */
GArray *ddm_registry_owned_types(DdmRegistry *reg, ddm_plugin *p);

/** A chunk from a VM: taps see it, then its owner; unknown types are logged
 *  once per type per VM; disabled types are dropped (debug log). */
void ddm_registry_dispatch(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                           const uint8_t *data, size_t len);
/** Show an outgoing request to taps. */
void ddm_registry_tap_request(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                              const uint8_t *data, size_t len);
/** Streamed chunks (core/session/vm_stream.c via the daemon): 1 = the
 *  type's stream owner took it, 0 = no stream owner, negative = refused. */
int ddm_registry_stream_begin(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                              guint64 declared);
int ddm_registry_stream_data(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci,
                             const uint8_t *data, size_t len);
void ddm_registry_stream_end(DdmRegistry *reg, DdmVm *vm, const ddm_chunk_info *ci, int status,
                             guint64 received);
/** Tell listeners; on DDM_VM_GONE free every plugin's per-VM data afterwards. */
void ddm_registry_vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev);
/** The same for plain JVMs and the plain listeners (register_plain_vm_listener). */
void ddm_registry_plain_vm_event(DdmRegistry *reg, DdmVm *vm, ddm_vm_event ev);
/** The server stops: run every loaded plugin's stopping hook (register_stopping,
 *  ABI 1.8) once, in registration order, while the VMs are still connected
 *  (the daemon then flushes and closes them). Later calls do nothing. */
void ddm_registry_stopping(DdmRegistry *reg);

/* Commands registered by plugins. */
typedef struct DdmCommandInfo {
    const char *name, *usage, *summary, *plugin;
} DdmCommandInfo;
/** (transfer full, GArray of DdmCommandInfo with borrowed strings) */
GArray *ddm_registry_commands(DdmRegistry *reg);
typedef void (*DdmCommandDoneFn)(ddm_cmd_status status, const char *message,
                                 ddm_view *result /* nullable, transfer none */, gpointer ud);
/** How far a command got (host.cmd_progress), at most every
 *  DDM_PROGRESS_INTERVAL_MS and once more before done. @unit: "B" or "". */
typedef void (*DdmCommandProgressFn)(guint64 done, guint64 total, const char *unit, gpointer ud);
#define DDM_PROGRESS_INTERVAL_MS 250
/** Run command argv[0]; @done is called exactly once (maybe before this returns).
 *  FALSE (and no call) if no such command. */
/** As ddm_registry_run_command, with the client's working directory (for
 *  relative paths in the arguments; may be NULL). */
gboolean ddm_registry_run_command_in(DdmRegistry *reg, int argc, const char *const *argv,
                                     const char *cwd, DdmCommandDoneFn done, gpointer ud);
/** The client whose commands were run with done-ud @ud went away: mark them
 *  cancelled (host.cmd_cancelled) so long ones stop early. Their done
 *  callbacks still run once. */
void ddm_registry_cancel_commands_of(DdmRegistry *reg, gpointer ud);
/** As ddm_registry_run_command_in, with the client's --out-dir (nullable)
 *  and @progress (nullable) called with ud. */
gboolean ddm_registry_run_command_progress(DdmRegistry *reg, int argc, const char *const *argv,
                                           const char *cwd, const char *out_dir,
                                           DdmCommandDoneFn done, DdmCommandProgressFn progress,
                                           gpointer ud);
/** Why argument @arg could name a file outside the directory a command
 *  runs in: "an absolute path" (a leading '/' or '~', in the argument, after
 *  any '=' of an option, or glued to a short option: -o/x) or "a '..'
 *  segment"; NULL if it cannot. (transfer none: a static string) */
const char *ddm_command_arg_escapes(const char *arg);
/** As ddm_registry_run_command_progress for a client that may have files
 *  written only under @run_dir (absolute; the web): @run_dir is both the
 *  command's cwd and its out_dir, and every argument after the name that
 *  ddm_command_arg_escapes refuses makes this fail with @error (permission
 *  G_FILE_ERROR_PERM) before the plugin sees anything. FALSE with @error (G_FILE_ERROR_NOENT)
 *  for an unknown command. @done is called only after TRUE. */
gboolean ddm_registry_run_command_confined(DdmRegistry *reg, int argc, const char *const *argv,
                                           const char *run_dir, DdmCommandDoneFn done,
                                           DdmCommandProgressFn progress, gpointer ud,
                                           GError **error);
/** Whether a command's usage line (with or without its @name first) takes a
 *  VM as its first operand ("VM", "PID", "VM...|all"): such a command can
 *  be run on a VM's page; one that takes a FILE cannot. */
gboolean ddm_command_usage_takes_vm(const char *name, const char *usage);
gboolean ddm_registry_run_command(DdmRegistry *reg, int argc, const char *const *argv,
                                  DdmCommandDoneFn done, gpointer ud);

/* Listing, handoff and test support (added by the plugin host). */
/** "loaded", "disabled", "refused". */
const char *ddm_registry_plugin_status_name(DdmPluginStatus s);
/** After every init: tell the log about plugins whose chunk types are all
 *  disabled by --chunks (they stay idle), and check --plugin-opt (below).
 *  ddm_loader_load_all calls it. */
void ddm_registry_handoff(DdmRegistry *reg);
/** Warn once about each --plugin-opt (monitor config) that names no loaded
 *  plugin, and each key its loaded plugin has not read (config_get) so far.
 *  Options of disabled or refused plugins get a message, not a warning.
 *  A plugin that reads a key later is not hurt: it gets the value. */
void ddm_registry_check_plugin_opts(DdmRegistry *reg);
/** The option keys @p has read so far (config_get), sorted. (transfer full,
 *  NULL-terminated; never NULL) */
char **ddm_registry_options_read(ddm_plugin *p);
/** Everything @p still holds in the registry: chunk owners, taps, listeners,
 *  commands, timers, commands in flight, views, per-VM data, plugin data.
 *  0 after a failed init or an unload (tests assert it). */
guint ddm_registry_count_registrations(DdmRegistry *reg, ddm_plugin *p);
/** Every plugin record as a JSON array of objects {"name","version","abi",
 *  "license","summary","file","status":"loaded|disabled|refused","reason",
 *  "required","chunks":["THCR",...],"commands":["gc",...],"options":["interval",...]};
 *  null members when unknown; "options" are the keys the plugin read so far
 *  (--plugin-opt NAME.KEY). Same data as --list-plugins. (transfer full) */
JsonNode *ddm_registry_plugins_to_json(DdmRegistry *reg);
/** Render the array above as an aligned text table, one line per plugin plus
 *  a "why:" line for refused/disabled ones. (transfer full) */
char *ddm_registry_plugins_json_to_text(JsonNode *plugins);

#endif /* DDM_REGISTRY_H */
