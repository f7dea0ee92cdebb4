/* SPDX-License-Identifier: Apache-2.0
 *
 * kit-private.h: what the files of libddmon-plugin-test share, never
 * installed. The kit is split one concept a file:
 *   kit.c              the host table and the lifecycle (new, load, free)
 *   kit_log.c          the captured log
 *   kit_config.c       the plugin's data and its configuration
 *   kit_chunks.c       the chunk filter, chunk delivery and streams (1.2)
 *   kit_regs.c         registrations: owners (plain and stream), taps, VM
 *                      listeners, commands
 *   kit_vms.c          fake VMs: info, events, data, names, headlines
 *   kit_requests.c     requests, their replies, failures and timeouts
 *   kit_jdwp.c         plain JVMs (1.2): their walk, the debugger flag,
 *                      jdwp_request (the SDK's allow-list, one held thread)
 *                      and its replies
 *   kit_timers.c       timers, fired by hand
 *   kit_views.c        the view store, plugin side (builder, caps, commit)
 *   kit_view_inspect.c the view store, test side (lookup, reading content)
 *   kit_commands.c     running commands, their progress and results
 *   kit_metrics.c      metric families and per-VM samples (1.3)
 * Invariants: a request is completed at most once; a freed view is never
 * reachable from the host's lists; every ud handed in is freed exactly once.
 * Non-goals: speed (linear lists everywhere), more than one plugin.
 * The fh_ functions below are the kit's internals: hidden from the shared
 * library's exports (only the fake_ API of <ddmon/testkit.h> is public).
 */
#ifndef DDM_KIT_PRIVATE_H
#define DDM_KIT_PRIVATE_H

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ddmon/bytes.h>

#include <ddmon/testkit.h>

#define FH_MAX_ITEMS 100000 /* sanity cap on any list a plugin grows */

/* ------------------------------------------------------------ utilities */

static inline void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "fake-host: out of memory\n");
        abort();
    }
    return p;
}

static inline char *xstrdup(const char *s)
{
    size_t n;
    char *d;
    if (!s)
        return NULL;
    n = strlen(s);
    d = xcalloc(n + 1, 1);
    memcpy(d, s, n);
    return d;
}

/* A copy of @len bytes in a buffer of exactly that size (NULL if 0). */
static inline uint8_t *exact_copy(const void *data, size_t len)
{
    uint8_t *p;
    if (!len || !data)
        return NULL;
    p = malloc(len);
    if (!p)
        abort();
    memcpy(p, data, len);
    return p;
}

/* Growable pointer array. */
typedef struct ptrvec {
    void **v;
    size_t n, cap;
} ptrvec;

static inline void vec_push(ptrvec *a, void *p)
{
    if (a->n == a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 8;
        void **nv = realloc(a->v, ncap * sizeof(*nv));
        if (!nv)
            abort();
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->n++] = p;
}

static inline void vec_remove_at(ptrvec *a, size_t i)
{
    memmove(a->v + i, a->v + i + 1, (a->n - i - 1) * sizeof(*a->v));
    a->n--;
}

static inline void vec_clear(ptrvec *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}


/* ---------------------------------------------------------------- types */

typedef struct fh_cell {
    ddm_value_type type;
    int is_null;
    char *s;
    int64_t i;
    double d;
    char *text; /* formatted on demand */
} fh_cell;

typedef struct fh_field {
    char *key;
    fh_cell cell;
} fh_field;

typedef struct fh_content {
    ptrvec rows;   /* of fh_cell arrays (n_cols each) */
    ptrvec fields; /* of fh_field */
    char *media_type;
    uint8_t *blob;
    size_t blob_len;
    int has_blob;
    size_t string_bytes; /* as the core counts them, against DDM_VIEW_MAX_STRING_BYTES */
} fh_content;

struct ddm_view {
    fake_host *fh;
    ddm_vm *vm;       /* NULL: global or command result */
    int is_cmd_result;
    char *name, *title;
    ddm_view_kind kind;
    ddm_column *cols; /* owned copies of names/units */
    size_t n_cols;
    fh_content committed, building;
    int building_open;
    size_t cur_cells; /* cells written in the current row */
    int row_dropped;  /* the current row was past a cap: its cells go nowhere */
    unsigned version;
    int watchers;     /* -1: use the host default */
};

struct ddm_vm {
    fake_host *fh;
    ddm_vm_info info;
    char *strs[9];
    char **features;
    int ready, gone;
    void *data;
    ddm_free_fn data_free;
    int set_name_calls;
    ptrvec headlines; /* of char*[2] pairs: label, text */
    ptrvec figures;   /* of char*[3]: "LABEL_NAME", label, value ("%.17g") (1.2) */
    ptrvec metrics;   /* of fh_metric_sample (kit_metrics.c, 1.3) */
    int plain;        /* added by fake_host_add_plain_vm: only plain listeners hear it (1.2) */
    int held;         /* plain JVM: a thread suspended through jdwp_request (1.2) */
    uint8_t *held_thread; /* its id as the plugin sent it (NULL if 0 bytes) */
    size_t held_len;
};

struct ddm_plugin {
    fake_host *fh;
    const ddm_plugin_desc *desc;
};

struct ddm_cmd {
    fake_host *fh;
    int finished;
    ddm_cmd_status status;
    char *message;
    ddm_view *result;
    int progress_calls;          /* cmd_progress calls accepted (1.2) */
    uint64_t progress_done, progress_total; /* the last figures */
    char progress_unit[2];       /* "B" or "", as the core passes it on */
    int cancelled;               /* fake_cmd_cancel: the client went away (1.2) */
};

typedef enum fh_reg_kind {
    FH_REG_OWNER = 1, /* register_chunk */
    FH_REG_TAP,       /* register_tap */
    FH_REG_LISTENER,  /* register_vm_listener */
    FH_REG_COMMAND,   /* register_command */
    FH_REG_STREAM,    /* register_chunk_stream (1.2): an owner too */
    FH_REG_PLAIN_LISTENER, /* register_plain_vm_listener (1.2) */
    FH_REG_VIEW_DECL, /* vm_view_declare (1.6): name, view_make */
    FH_REG_STOPPING,  /* register_stopping (1.8): stopping */
} fh_reg_kind;

typedef struct fh_reg {
    fh_reg_kind kind;
    uint32_t type;
    char *name, *usage, *summary;
    ddm_chunk_fn chunk_fn;
    ddm_vm_fn vm_fn;
    ddm_command_fn cmd_fn;
    ddm_stream_ops stream; /* FH_REG_STREAM: a copy of the plugin's ops */
    ddm_view_make_fn view_make; /* FH_REG_VIEW_DECL */
    ddm_view_unmake_fn view_unmake; /* FH_REG_VIEW_DECL: vm_view_unmake's, or NULL */
    ddm_stopping_fn stopping;   /* FH_REG_STOPPING */
    void *ud;
    ddm_free_fn ud_free;
} fh_reg;

typedef struct fh_timer {
    uint32_t id;
    unsigned interval;
    ddm_timer_fn fn;
    void *ud;
    ddm_free_fn ud_free;
    int active, firing;
    int wake_on_watch; /* 1.5: fake_host_watch_begins runs it */
    int sleeping;      /* 1.7: returned DDM_TIMER_SLEEP, not woken since */
    int wake_asked;    /* 1.7: timer_wake while it ran */
} fh_timer;

typedef struct fh_kv {
    char *key, *value;
} fh_kv;

struct fake_host {
    ddm_host host;
    char *client_cwd;   /* what cmd_cwd returns (NULL = unknown) */
    char *client_out_dir; /* what cmd_out_dir returns (1.2; NULL = none given) */
    struct ddm_plugin plugin;
    int loaded, in_init, fini_done;
    int stopping_told;  /* fake_host_stopping ran the stopping hooks (1.8) */
    int conflict;       /* init claimed a type twice: the plugin is refused */
    void *pdata;
    ddm_free_fn pdata_free;
    ptrvec regs, vms, views, requests, timers, cmds, config;
    ptrvec jdwp;        /* fake_jdwp_request*, in send order (1.2) */
    ptrvec metric_families; /* fh_metric_family* (kit_metrics.c, 1.3) */
    int metric_calls;   /* vm_metric calls accepted */
    uint32_t next_timer_id, next_packet_id, next_event_id;
    ptrvec disabled; /* uint32_t types boxed */
    int only_mode;   /* 1: only the types in `enabled` */
    ptrvec enabled;
    int request_error;
    uint32_t request_error_type; /* 0: every type */
    int sync_changed;
    int default_watchers;
    int vm_list_watchers; /* vm_list_watchers (1.6): fake_host_set_vm_list_watchers */
    int making;         /* a declared view's make runs (1.6): no nested makes */
    uint64_t watch_gen; /* watch_generation (1.4): bumped by any watcher change or new view */
    uint64_t watch_moves; /* bumped only when the watches move (fh_watch_gen_bump(fh, 1)):
                           * a timer's DDM_TIMER_SLEEP is a keep if it moved during the run */
    int watched_views;  /* views with fake_view_set_watchers > 0 (kit_view_inspect.c) */
    unsigned long watcher_queries; /* view_watchers calls (fake_host_watcher_queries) */
    int view_errors, expect_view_errors;
    char *log;
    size_t log_len, log_cap;
    int log_counts[5];
};

/* The one host a plugin callback can reach through its ddm_plugin. */
static inline fake_host *host_of(ddm_plugin *self)
{
    assert_non_null(self);
    return self->fh;
}

/* ------------------------------------------------ internals, by file */

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* kit_log.c */
void fh_logf(fake_host *fh, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);
void fh_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);

/* kit_config.c */
void fh_set_data(ddm_plugin *self, void *data, ddm_free_fn data_free);
void *fh_get_data(ddm_plugin *self);
const char *fh_config_get(ddm_plugin *self, const char *key);

/* kit_chunks.c */
void fh_types_clear(ptrvec *a);
int fh_type_enabled(fake_host *fh, uint32_t type);
int fh_chunk_enabled(ddm_plugin *self, uint32_t type);
void fh_run_taps(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                 size_t len);
int fh_run_owner(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                 size_t len);

/* kit_regs.c */
void fh_reg_free(fh_reg *r);
int fh_register_chunk(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                      ddm_free_fn ud_free);
int fh_register_chunk_stream(ddm_plugin *self, uint32_t type, const ddm_stream_ops *ops,
                             void *ud, ddm_free_fn ud_free);
/** The owner of @type, plain (FH_REG_OWNER) or stream (FH_REG_STREAM), or NULL. */
fh_reg *fh_find_owner(fake_host *fh, uint32_t type);
int fh_register_tap(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                    ddm_free_fn ud_free);
int fh_register_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud, ddm_free_fn ud_free);
int fh_register_stopping(ddm_plugin *self, ddm_stopping_fn fn, void *ud, ddm_free_fn ud_free);
int fh_register_plain_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud,
                                  ddm_free_fn ud_free);
fh_reg *fh_find_command(fake_host *fh, const char *name);
int fh_register_command(ddm_plugin *self, const char *name, const char *usage,
                        const char *summary, ddm_command_fn fn, void *ud,
                        ddm_free_fn ud_free);

/* kit_regs.c: vm_view_declare (1.6), and making the declared views named
 * @name (NULL: all) of @vm (NULL: every ready DDM VM) not made yet, as the
 * core does before a frontend's look. */
int fh_vm_view_declare(ddm_plugin *self, const char *name, ddm_view_make_fn make, void *ud,
                       ddm_free_fn ud_free);
void fh_make_declared(fake_host *fh, ddm_vm *vm, const char *name);
/* What a reader given a NULL view reports ("" for nothing): kit_view_inspect.c. */
void fh_note_view_miss(const char *what);
int fh_vm_view_unmake(ddm_plugin *self, const char *name, ddm_view_unmake_fn unmake);

/* kit_vms.c */
void fh_vm_info_clear(ddm_vm *vm);
const ddm_vm_info *fh_vm_info(ddm_vm *vm);
int fh_vm_set_name(ddm_plugin *self, ddm_vm *vm, const char *app_name,
                   const char *package_name, int32_t user_id);
int fh_vm_set_data(ddm_plugin *self, ddm_vm *vm, void *data, ddm_free_fn data_free);
void *fh_vm_get_data(ddm_plugin *self, ddm_vm *vm);
ddm_vm *fh_find_vm(ddm_plugin *self, const char *spec);
int fh_vm_headline(ddm_plugin *self, ddm_vm *vm, const char *label, const char *text);
int fh_vm_headline_figures(ddm_plugin *self, ddm_vm *vm, const char *label,
                           const ddm_headline_figure *figs, size_t n);
void fh_vm_figures_clear(ddm_vm *vm);
size_t fh_foreach_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud);

/* kit_requests.c */
int fh_request(ddm_plugin *self, ddm_vm *vm, uint32_t type, const void *data, size_t len,
               unsigned timeout_ms, ddm_reply_fn fn, void *ud, uint32_t *id_out);
void fh_complete(fake_host *fh, fake_request *rq, const ddm_reply *reply);

/* kit_jdwp.c */
size_t fh_foreach_plain_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud);
int fh_jdwp_request(ddm_plugin *self, ddm_vm *vm, uint8_t cmdset, uint8_t cmd, const void *data,
                    size_t len, unsigned timeout_ms, ddm_jdwp_reply_fn fn, void *ud);
/** @vm goes: its pending JDWP requests end with DDM_REPLY_VM_GONE, its held
 *  thread is forgotten. */
void fh_jdwp_vm_gone(fake_host *fh, ddm_vm *vm);
void fh_jdwp_free_all(fake_host *fh);

/* kit_metrics.c */
int fh_register_metric(ddm_plugin *self, const ddm_metric_family *family);
int fh_vm_metric(ddm_plugin *self, ddm_vm *vm, const char *name, const ddm_metric_sample *samples,
                 size_t n);
void fh_vm_metrics_clear(ddm_vm *vm);
void fh_metrics_free_all(fake_host *fh);

/* kit_timers.c */
void fh_timer_free(fh_timer *t);
uint32_t fh_timer_add(ddm_plugin *self, unsigned interval_ms, ddm_timer_fn fn, void *ud,
                      ddm_free_fn ud_free);
void fh_timer_remove(ddm_plugin *self, uint32_t id);
int fh_timer_wake_on_watch(ddm_plugin *self, uint32_t id, int on);
int fh_timer_wake(ddm_plugin *self, uint32_t id);
/** As the core's views store: the watch generation moves; with @watches
 *  (the change may count for a watch: one began or ended, or a view came
 *  while some watch exists) the timers that sleep wake (ABI 1.7). */
void fh_watch_gen_bump(fake_host *fh, int watches);

/* kit_views.c */
void fh_view_destroy(ddm_view *v);
ddm_view *fh_view_alloc(fake_host *fh, ddm_vm *vm, const char *name, ddm_view_kind kind,
                        const char *title);
int fh_view_error(ddm_view *v, int err, const char *what);
ddm_view *fh_view_new(ddm_plugin *self, ddm_vm *vm, const char *name, ddm_view_kind kind,
                      const char *title);
int fh_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n_cols);
int fh_view_begin(ddm_view *v);
int fh_view_row(ddm_view *v);
int fh_view_str(ddm_view *v, const char *value);
int fh_view_int(ddm_view *v, int64_t value);
int fh_view_double(ddm_view *v, double value);
int fh_view_bool(ddm_view *v, int value);
int fh_view_field_str(ddm_view *v, const char *key, const char *value);
int fh_view_field_int(ddm_view *v, const char *key, int64_t value);
int fh_view_field_double(ddm_view *v, const char *key, double value);
int fh_view_field_bool(ddm_view *v, const char *key, int value);
int fh_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len);
int fh_view_commit(ddm_view *v);
void fh_view_free(ddm_view *v);
int fh_view_watchers(ddm_view *v);
uint64_t fh_watch_generation(ddm_plugin *self);
int fh_vm_list_watchers(ddm_plugin *self);

/* kit_commands.c */
ddm_view *fh_cmd_result(ddm_cmd *cmd, ddm_view_kind kind, const char *title);
const char *fh_cmd_cwd(ddm_cmd *cmd);
void fh_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message);
ddm_vm *fh_cmd_find_vm(ddm_cmd *cmd, const char *spec);
int fh_cmd_progress(ddm_cmd *cmd, uint64_t done, uint64_t total, const char *unit);
int fh_cmd_cancelled(ddm_cmd *cmd);
const char *fh_cmd_out_dir(ddm_cmd *cmd);


#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* DDM_KIT_PRIVATE_H */
