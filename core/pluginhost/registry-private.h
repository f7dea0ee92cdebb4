/* SPDX-License-Identifier: Apache-2.0
 *
 * Internals shared by the registry's files and host.c (the ddm_host function
 * table): registry.c (records, life cycle, rollback, timers, the views link),
 * registry_dispatch.c (chunk filter, dispatch), registry_commands.c (user
 * commands), registry_options.c (plugin options) and registry_list.c
 * (listing). Nothing else includes this header; the rest of the core uses
 * registry.h.
 *
 * Invariants: every registration record names its owning plugin, and a
 * plugin's records are removed in one pass (ddm_registry_drop_plugin) before
 * its object is dlclosed, because every ud_free is plugin code.
 */
#ifndef DDM_REGISTRY_PRIVATE_H
#define DDM_REGISTRY_PRIVATE_H

#include "core/loop/timer.h"
#include "core/pluginhost/registry.h"

#define DDM_CMD_MAGIC 0x434D4421u

/* A chunk owner or a tap. */
typedef struct DdmChunkReg {
    ddm_plugin *plugin;
    uint32_t type;           /* 0 = every type (taps only) */
    ddm_chunk_fn fn;         /* NULL for a stream owner */
    ddm_stream_ops stream;   /* a stream owner's (register_chunk_stream), else zero */
    void *ud;
    ddm_free_fn ud_free;
    guint64 errors;          /* handler results < 0, for the log's rate limit */
} DdmChunkReg;

/* A VM listener, or (in DdmRegistry.stoppers, @stopping set, @fn NULL) a
 * stopping hook (register_stopping, 1.8). */
typedef struct DdmListenerReg {
    ddm_plugin *plugin;
    gboolean plain;          /* register_plain_vm_listener (1.2): plain JVMs only */
    ddm_vm_fn fn;
    ddm_stopping_fn stopping;
    void *ud;
    ddm_free_fn ud_free;
} DdmListenerReg;

typedef struct DdmCommandReg {
    ddm_plugin *plugin;
    char *name, *usage, *summary;
    ddm_command_fn fn;
    void *ud;
    ddm_free_fn ud_free;
} DdmCommandReg;

typedef struct DdmTimerReg {
    DdmRegistry *reg;
    ddm_plugin *plugin;
    guint id;                /* the id plugins see (DdmRegistry.next_timer_id) */
    DdmTimer timer;          /* core/loop; re-armed after each run that returns true */
    guint interval_ms;
    gboolean firing;         /* its callback runs: a drop frees it once it returns */
    gboolean dropped;
    gboolean wake_on_watch;  /* ddm_host.timer_wake_on_watch (host.c) */
    gboolean wake_pending;   /* woken by a watch, not run since */
    gboolean counted;        /* in plugin->live_timers (host.c) */
    gboolean sleeping;       /* returned DDM_TIMER_SLEEP (1.7): unarmed, in
                                DdmRegistry.sleeping_timers until woken (host.c) */
    gboolean wake_asked;     /* timer_wake while it ran: a DDM_TIMER_SLEEP keeps it */
    ddm_timer_fn fn;
    void *ud;
    ddm_free_fn ud_free;
} DdmTimerReg;

/* A user command in flight. Lives from ddm_registry_run_command until
 * cmd_finish (or the plugin's unload, which finishes it as FAILED). */
struct ddm_cmd {
    uint32_t magic;          /* DDM_CMD_MAGIC until finished */
    guint serial;            /* key in DdmRegistry.cmds */
    DdmRegistry *reg;
    ddm_plugin *plugin;
    char *name;
    DdmCommandDoneFn done;
    gpointer done_ud;
    ddm_view *result;        /* detached view, owned; NULL until cmd_result */
    char *vm_key;            /* the VM cmd_find_vm resolved, owned; NULL when none */
    gboolean vm_several;     /* cmd_find_vm resolved more than one VM: no one VM */
    char *cwd;               /* the client's working directory, or NULL; owned */
    char *out_dir;           /* the client's --out-dir, or NULL; owned */
    DdmCommandProgressFn progress; /* the client's, or NULL */
    gint64 progress_last_us; /* when progress was last passed on (rate limit) */
    guint64 progress_done, progress_total; /* the last figures a plugin gave */
    char progress_unit[8];
    gboolean progress_held;  /* figures newer than the last passed on */
    gboolean cancelled;      /* the client went away (ddm_registry_cancel_commands_of) */
    gboolean finished;
};

struct DdmRegistry {
    DdmMonitor *monitor;     /* borrowed; NULL for a throwaway registry (--check-plugin) */
    DdmViews *views;         /* borrowed; where plugins publish */
    const DdmConfig *config; /* borrowed; plugin options, chunk filter */
    GPtrArray *plugins;      /* ddm_plugin*, owned, load order */
    GHashTable *owners;      /* GUINT_TO_POINTER(type) -> DdmChunkReg* (owned) */
    GPtrArray *taps;         /* DdmChunkReg*, owned, registration order */
    GPtrArray *listeners;    /* DdmListenerReg*, owned */
    GPtrArray *stoppers;     /* DdmListenerReg* with .stopping (register_stopping, 1.8), owned */
    gboolean stopping_told;  /* ddm_registry_stopping ran: it runs the hooks once */
    GPtrArray *commands;     /* DdmCommandReg*, owned */
    GHashTable *timers;      /* GUINT_TO_POINTER(id) -> DdmTimerReg* (ddm_registry_timer_drop
                                frees them) */
    guint next_timer_id;     /* the last timer id handed out */
    gboolean first_look_polling; /* a timer woken by a watch runs (host.c) */
    GPtrArray *wake_timers;  /* DdmTimerReg* (borrowed) that opted in with
                                timer_wake_on_watch: what a watch wakes, not every timer;
                                NULL until the first (host.c) */
    guint wakes_pending;     /* timers woken by a watch that have not run since (host.c) */
    GPtrArray *sleeping_timers; /* DdmTimerReg* (borrowed) that returned DDM_TIMER_SLEEP
                                   (ABI 1.7): what a change of the watches wakes; NULL
                                   until the first (host.c) */
    GHashTable *first_look_vms;  /* DdmVm* (a reference each) that woken timers sent requests
                                    to and whose requests were not yet found settled; NULL
                                    until the first (host.c) */
    GHashTable *look_lags;       /* target key (owned) -> LookLag: VMs a look found waited
                                    for, and since when; at most 4,096; NULL until the
                                    first (host.c) */
    gint64 look_lags_next_forget_us; /* no entry of look_lags can be forgotten before this:
                                        a sweep before it would free nothing (host.c) */
    guint look_lags_sweeps;      /* sweeps of look_lags so far (tests read it) */
    gint64 (*look_now)(void);    /* lateness clock; NULL: g_get_monotonic_time (tests set it) */
    guint look_lags_cap;         /* 0: 4,096 (tests set it) */
    GHashTable *cmds;        /* GUINT_TO_POINTER(serial) -> ddm_cmd* in flight */
    guint next_cmd_serial;
    GHashTable *chunk_filter; /* set of enabled types; NULL = every type */
    GPtrArray *metric_families; /* DdmMetricFamilyReg*, owned; NULL until the first
                                   (registry_metrics.c) */
    GPtrArray *declared_views; /* DdmViewDecl*, owned: vm_view_declare's (1.6); NULL until
                                  the first, which makes the registry the store's maker
                                  (registry_views.c) */
    struct DdmMadeViews *made_views; /* views of declared names with an unmake, by deadline,
                                        to take back when unwatched (registry_views.c);
                                        NULL until the first vm_view_unmake */
    ddm_plugin *conflicted;  /* the plugin whose init hit a chunk conflict */
    char *conflict_msg;
    ddm_host host;
};

/* registry.c */
gboolean ddm_registry_may_register(ddm_plugin *p, const char *what);
/** Free every per-VM datum of @p (all VMs of the monitor). */
void ddm_registry_drop_vm_data_of(DdmRegistry *reg, ddm_plugin *p);
/** The registry whose view store holds @view, or NULL (command results, stale). */
DdmRegistry *ddm_registry_for_view(ddm_view *view);
/** Remove a timer record from the table, disarm it and free it (its ud_free
 *  runs), or, when called from its own callback, once that returns. */
void ddm_registry_timer_drop(DdmTimerReg *t);

/* registry_commands.c */
/** host.cmd_progress: pass figures on, at most every DDM_PROGRESS_INTERVAL_MS. */
int ddm_registry_cmd_progress(ddm_cmd *cmd, guint64 done, guint64 total, const char *unit);
/** Finish and free a command (done called once). */
void ddm_registry_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message);
/** TRUE when @name is reserved for the core's own commands. */
gboolean ddm_registry_command_reserved(const char *name);
DdmCommandReg *ddm_registry_find_command(DdmRegistry *reg, const char *name);

/* registry_metrics.c: ABI 1.3 metric families and per-VM samples */
int ddm_registry_register_metric(ddm_plugin *self, const ddm_metric_family *family);
int ddm_registry_vm_metric(ddm_plugin *self, ddm_vm *vm, const char *name,
                           const ddm_metric_sample *samples, size_t n);
/** Make @vm's "metrics" view from its samples if it has had any and the
 *  view is not made (the store's maker, registry_views.c). */
void ddm_registry_metrics_make_view(DdmRegistry *reg, DdmVm *vm);
/** Forget @p's families and every VM's samples of them (views republished). */
void ddm_registry_drop_metrics_of(DdmRegistry *reg, ddm_plugin *p);
void ddm_registry_metrics_free(DdmRegistry *reg);
/* registry_headline.c: the core's per-VM "headline" view of the figures */
/** Publish @vm's figures in its "headline" view if it is made or watched,
 *  or (@make) make it. */
void ddm_registry_headline_publish(DdmRegistry *reg, DdmVm *vm, gboolean make);
/** Make @vm's "headline" view if it has had figures and the view is not
 *  made (the store's maker, registry_views.c). */
void ddm_registry_headline_make_view(DdmRegistry *reg, DdmVm *vm);
/* registry_views.c: views plugins declare and the store makes on demand (1.6) */
int ddm_registry_vm_view_declare(ddm_plugin *self, const char *name, ddm_view_make_fn make,
                                 void *ud, ddm_free_fn ud_free);
/** @vm is becoming ready (before its READY listeners): make its declared
 *  views a watch counts. */
void ddm_registry_declared_views_ready(DdmRegistry *reg, DdmVm *vm);
guint ddm_registry_count_declared_views(DdmRegistry *reg, ddm_plugin *p);
/** Forget @p's declarations (their ud_free runs). */
void ddm_registry_drop_declared_views_of(DdmRegistry *reg, ddm_plugin *p);
/** The view store's maker (ddm_registry_new sets it). */
void ddm_registry_make_views(DdmViews *store, const char *name, const char *vm_key, gpointer ud);
void ddm_registry_name_views(DdmViews *store, const char *vm_key, GHashTable *names, gpointer ud);
int ddm_registry_vm_view_unmake(ddm_plugin *self, const char *name, ddm_view_unmake_fn unmake);
void ddm_registry_views_unwatched(DdmViews *store, const char *name, const char *vm_key,
                                  gpointer ud);
/** Tests: the linger of views queued from now on (DDM_VIEW_UNMAKE_LINGER_MS). */
void ddm_registry_set_view_linger_ms(DdmRegistry *reg, guint ms);
/** Tests: how many made views wait in the queue. */
guint ddm_registry_n_made_views(DdmRegistry *reg);
/** Tests: how many notes of ended watches of a name of every VM, or of a
 *  VM's every view, the queue keeps. */
guint ddm_registry_n_view_end_notes(DdmRegistry *reg);
/* The most notes of VM-wide watch ends the made views keep (one a VM key
 * within a linger); past it a VM-wide end counts as the end of a watch of
 * everything, which only makes views wait one linger more
 * (registry_views.c). */
#define DDM_MADE_VM_ENDS_MAX 16384u
/* How many times look_lags was swept of forgotten VMs (host.c; for tests). */
guint ddm_registry_n_look_lag_sweeps(DdmRegistry *reg);
/** Tests: the clock of the linger (monotonic us; NULL: g_get_monotonic_time). */
void ddm_registry_set_view_clock(DdmRegistry *reg, gint64 (*now)(void));
/** What the queue's timer does when it runs: take back at most a batch of
 *  the views that are due (the rest wait for the next run). How many
 *  entries it looked at. */
guint ddm_registry_made_views_dispatch(DdmRegistry *reg);
/** At ddm_registry_free, after every plugin: stop being the store's maker. */
void ddm_registry_declared_views_free(DdmRegistry *reg);
/** Tests: the clock of the VMs' lateness (monotonic us; NULL:
 *  g_get_monotonic_time) and the most VMs it records (0: 4,096). */
void ddm_registry_set_look_clock(DdmRegistry *reg, gint64 (*now)(void), guint cap);
/* host.c: drop first_look_vms, look_lags, wake_timers and sleeping_timers (at
 * ddm_registry_free). */
void ddm_registry_first_look_free(DdmRegistry *reg);
/* host.c: a timer being dropped is no more woken by a watch, nor pending. */
void ddm_registry_timer_forget_wake(DdmTimerReg *t);

/* host.c */
/** Fill @host with the core's functions. */
void ddm_host_init(ddm_host *host);
static inline gboolean ddm_plugin_is_valid(const ddm_plugin *p)
{
    return p != NULL && p->magic == DDM_PLUGIN_HANDLE_MAGIC;
}

/* In init, or loaded: may start requests, timers and views. A plugin being
 * refused or unloaded is neither, so its last callbacks cannot leave work
 * behind that would outlive its code. */
static inline gboolean ddm_plugin_is_active(const ddm_plugin *p)
{
    return p->in_init || p->status == DDM_PLUGIN_LOADED;
}

#endif /* DDM_REGISTRY_PRIVATE_H */
