/* SPDX-License-Identifier: Apache-2.0
 *
 * libddmon-plugin-test: the in-memory ddm_host for plugin unit tests (see
 * <ddmon/testkit.h> for what it models). Part of the SDK: it sees only
 * sdk/include and libc (and cmocka to fail the test), never the core. Owns: the fake plugin, VMs, views, requests, timers,
 * commands and the captured log; frees all of it in fake_host_free.
 * Invariants: a request is completed at most once; a freed view is never
 * reachable from the host's lists; every ud handed in is freed exactly once.
 * Non-goals: speed (linear lists everywhere), more than one plugin.
 */
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

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "fake-host: out of memory\n");
        abort();
    }
    return p;
}

static char *xstrdup(const char *s)
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
static uint8_t *exact_copy(const void *data, size_t len)
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

static void vec_push(ptrvec *a, void *p)
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

static void vec_remove_at(ptrvec *a, size_t i)
{
    memmove(a->v + i, a->v + i + 1, (a->n - i - 1) * sizeof(*a->v));
    a->n--;
}

static void vec_clear(ptrvec *a)
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
};

typedef struct fh_reg {
    int kind; /* 1 chunk, 2 tap, 3 listener, 4 command */
    uint32_t type;
    char *name, *usage, *summary;
    ddm_chunk_fn chunk_fn;
    ddm_vm_fn vm_fn;
    ddm_command_fn cmd_fn;
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
} fh_timer;

typedef struct fh_kv {
    char *key, *value;
} fh_kv;

struct fake_host {
    ddm_host host;
    char *client_cwd;   /* what cmd_cwd returns (NULL = unknown) */
    struct ddm_plugin plugin;
    int loaded, in_init, fini_done;
    int conflict;       /* init claimed a type twice: the plugin is refused */
    void *pdata;
    ddm_free_fn pdata_free;
    ptrvec regs, vms, views, requests, timers, cmds, config;
    uint32_t next_timer_id, next_packet_id, next_event_id;
    ptrvec disabled; /* uint32_t types boxed */
    int only_mode;   /* 1: only the types in `enabled` */
    ptrvec enabled;
    int request_error;
    uint32_t request_error_type; /* 0: every type */
    int sync_changed;
    int default_watchers;
    int view_errors, expect_view_errors;
    char *log;
    size_t log_len, log_cap;
    int log_counts[5];
};

/* The one host a plugin callback can reach through its ddm_plugin. */
static fake_host *host_of(ddm_plugin *self)
{
    assert_non_null(self);
    return self->fh;
}

/* ------------------------------------------------------------------ log */

static const char *level_name(ddm_log_level l)
{
    switch (l) {
    case DDM_LOG_WARNING: return "warning";
    case DDM_LOG_MESSAGE: return "message";
    case DDM_LOG_INFO: return "info";
    case DDM_LOG_DEBUG: return "debug";
    }
    return "unknown";
}

static void log_append(fake_host *fh, ddm_log_level level, const char *text)
{
    size_t need = strlen(level_name(level)) + 2 + strlen(text) + 2;
    if (fh->log_len + need + 1 > fh->log_cap) {
        size_t ncap = fh->log_cap ? fh->log_cap : 1024;
        char *n;
        while (ncap < fh->log_len + need + 1)
            ncap *= 2;
        n = realloc(fh->log, ncap);
        if (!n)
            abort();
        fh->log = n;
        fh->log_cap = ncap;
    }
    fh->log_len += (size_t)snprintf(fh->log + fh->log_len, fh->log_cap - fh->log_len, "%s: %s\n",
                                    level_name(level), text);
    if (level >= 1 && level <= 4)
        fh->log_counts[level]++;
    fh->log_counts[0]++;
    if (getenv("FAKE_HOST_VERBOSE"))
        fprintf(stderr, "[fake-host] %s: %s\n", level_name(level), text);
}

static void fh_logf(fake_host *fh, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);
static void fh_logf(fake_host *fh, ddm_log_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_append(fh, level, buf);
}

static void h_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...) DDM_PRINTF(3, 4);
static void h_log(ddm_plugin *self, ddm_log_level level, const char *fmt, ...)
{
    char buf[DDM_LOG_MESSAGE_MAX + 1]; /* the core cuts at DDM_LOG_MESSAGE_MAX bytes */
    va_list ap;
    assert_non_null(fmt);
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_append(host_of(self), level, buf);
}

int fake_host_log_contains(fake_host *fh, const char *substr)
{
    return fh->log && strstr(fh->log, substr) != NULL;
}

int fake_host_log_count(fake_host *fh, ddm_log_level level)
{
    return ((int)level >= 0 && level <= 4) ? fh->log_counts[level] : 0;
}

const char *fake_host_log_text(fake_host *fh)
{
    return fh->log ? fh->log : "";
}

void fake_host_log_clear(fake_host *fh)
{
    fh->log_len = 0;
    if (fh->log)
        fh->log[0] = '\0';
    memset(fh->log_counts, 0, sizeof fh->log_counts);
}

/* --------------------------------------------------------- plugin state */

static void h_set_data(ddm_plugin *self, void *data, ddm_free_fn data_free)
{
    fake_host *fh = host_of(self);
    if (fh->pdata && fh->pdata_free && fh->pdata != data)
        fh->pdata_free(fh->pdata);
    fh->pdata = data;
    fh->pdata_free = data_free;
}

static void *h_get_data(ddm_plugin *self)
{
    return host_of(self)->pdata;
}

static const char *config_lookup(fake_host *fh, const char *key)
{
    size_t i;
    for (i = 0; i < fh->config.n; i++) {
        fh_kv *kv = fh->config.v[i];
        if (strcmp(kv->key, key) == 0)
            return kv->value;
    }
    return NULL;
}

static const char *h_config_get(ddm_plugin *self, const char *key)
{
    fake_host *fh = host_of(self);
    char buf[512];
    assert_non_null(key);
    /* As the core: the option "<plugin name>.<key>", nothing else. */
    if (!fh->plugin.desc || !fh->plugin.desc->name ||
        (size_t)snprintf(buf, sizeof buf, "%s.%s", fh->plugin.desc->name, key) >= sizeof buf)
        return NULL;
    return config_lookup(fh, buf);
}

void fake_host_set_config(fake_host *fh, const char *key, const char *value)
{
    size_t i;
    fh_kv *kv;
    for (i = 0; i < fh->config.n; i++) {
        kv = fh->config.v[i];
        if (strcmp(kv->key, key) == 0) {
            free(kv->value);
            if (value) {
                kv->value = xstrdup(value);
            } else {
                free(kv->key);
                free(kv);
                vec_remove_at(&fh->config, i);
            }
            return;
        }
    }
    if (!value)
        return;
    kv = xcalloc(1, sizeof *kv);
    kv->key = xstrdup(key);
    kv->value = xstrdup(value);
    vec_push(&fh->config, kv);
}

/* ---------------------------------------------------------- chunk filter */

static int type_in(ptrvec *a, uint32_t type)
{
    size_t i;
    for (i = 0; i < a->n; i++)
        if (*(uint32_t *)a->v[i] == type)
            return 1;
    return 0;
}

static void type_push(ptrvec *a, uint32_t type)
{
    uint32_t *p = xcalloc(1, sizeof *p);
    *p = type;
    vec_push(a, p);
}

static void types_clear(ptrvec *a)
{
    size_t i;
    for (i = 0; i < a->n; i++)
        free(a->v[i]);
    vec_clear(a);
}

static int type_enabled(fake_host *fh, uint32_t type)
{
    if (fh->only_mode && !type_in(&fh->enabled, type))
        return 0;
    return !type_in(&fh->disabled, type);
}

void fake_host_disable_chunk(fake_host *fh, uint32_t type)
{
    if (!type_in(&fh->disabled, type))
        type_push(&fh->disabled, type);
}

void fake_host_only_chunks(fake_host *fh, const uint32_t *types, size_t n)
{
    size_t i;
    types_clear(&fh->enabled);
    types_clear(&fh->disabled);
    fh->only_mode = 1;
    for (i = 0; i < n; i++)
        type_push(&fh->enabled, types[i]);
}

static int h_chunk_enabled(ddm_plugin *self, uint32_t type)
{
    return type_enabled(host_of(self), type);
}

/* --------------------------------------------------------- registration */

static void reg_free(fh_reg *r)
{
    if (r->ud_free)
        r->ud_free(r->ud);
    free(r->name);
    free(r->usage);
    free(r->summary);
    free(r);
}

static int check_init_phase(fake_host *fh, const char *what, void *ud, ddm_free_fn ud_free)
{
    if (fh->in_init && fh->regs.n < FH_MAX_ITEMS)
        return 0;
    fh_logf(fh, DDM_LOG_WARNING, "fake-host: %s outside init refused", what);
    if (ud_free)
        ud_free(ud);
    return -EPERM;
}

static int h_register_chunk(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                            ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, "register_chunk", ud, ud_free);
    if (err)
        return err;
    if (!fn || type == 0 || fake_host_owns(fh, type)) {
        char n[5];
        if (fn && type)
            fh->conflict = 1; /* as the core: refused even if init ignores it */
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_chunk %s refused",
                ddm_chunk_name(type, n));
        if (ud_free)
            ud_free(ud);
        return fn && type ? -EEXIST : -EINVAL;
    }
    r = xcalloc(1, sizeof *r);
    r->kind = 1;
    r->type = type;
    r->chunk_fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    vec_push(&fh->regs, r);
    return 0;
}

static int h_register_tap(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                          ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, "register_tap", ud, ud_free);
    if (err)
        return err;
    if (!fn) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    r = xcalloc(1, sizeof *r);
    r->kind = 2;
    r->type = type;
    r->chunk_fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    vec_push(&fh->regs, r);
    return 0;
}

static int h_register_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud, ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, "register_vm_listener", ud, ud_free);
    if (err)
        return err;
    if (!fn) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    r = xcalloc(1, sizeof *r);
    r->kind = 3;
    r->vm_fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    vec_push(&fh->regs, r);
    return 0;
}

static fh_reg *find_command(fake_host *fh, const char *name)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 4 && strcmp(r->name, name) == 0)
            return r;
    }
    return NULL;
}

/* The core's own commands: a plugin cannot take these names (-EEXIST). */
static const char *const reserved_commands[] = {
    "vms", "view", "views", "plugins", "watch", "snapshot", "server", "start-server",
    "kill-server", "help", "version", "connect", "disconnect", "scan", NULL,
};

/* 1..DDM_COMMAND_NAME_MAX of [A-Za-z0-9._-], starting with a letter or digit. */
static int command_name_ok(const char *name)
{
    size_t i, n = strlen(name);
    if (n == 0 || n > DDM_COMMAND_NAME_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        char c = name[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.')))
            return 0;
    }
    return 1;
}

static int command_reserved(const char *name)
{
    const char *const *r;
    for (r = reserved_commands; *r; r++)
        if (strcmp(*r, name) == 0)
            return 1;
    return 0;
}

static int h_register_command(ddm_plugin *self, const char *name, const char *usage,
                              const char *summary, ddm_command_fn fn, void *ud,
                              ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, "register_command", ud, ud_free);
    if (err)
        return err;
    if (!fn || !name || !command_name_ok(name)) {
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_command '%s' refused: not a valid name",
                name ? name : "(null)");
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    if (command_reserved(name) || find_command(fh, name)) {
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_command '%s' refused: name taken", name);
        if (ud_free)
            ud_free(ud);
        return -EEXIST;
    }
    r = xcalloc(1, sizeof *r);
    r->kind = 4;
    r->name = xstrdup(name);
    r->usage = xstrdup(usage);
    r->summary = xstrdup(summary);
    r->cmd_fn = fn;
    r->ud = ud;
    r->ud_free = ud_free;
    vec_push(&fh->regs, r);
    return 0;
}

int fake_host_owns(fake_host *fh, uint32_t type)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 1 && r->type == type)
            return 1;
    }
    return 0;
}

int fake_host_n_taps(fake_host *fh, uint32_t type)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 2 && r->type == type)
            n++;
    }
    return n;
}

int fake_host_n_vm_listeners(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++)
        if (((fh_reg *)fh->regs.v[i])->kind == 3)
            n++;
    return n;
}

int fake_host_has_command(fake_host *fh, const char *name)
{
    return find_command(fh, name) != NULL;
}

/* --------------------------------------------------------------- chunks */

static void run_taps(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 2 && (r->type == 0 || r->type == ci->type))
            (void)r->chunk_fn(&fh->plugin, vm, ci, data, len, r->ud);
    }
}

static int run_owner(fake_host *fh, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len)
{
    size_t i;
    char n[5];
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 1 && r->type == ci->type) {
            int rc = r->chunk_fn(&fh->plugin, vm, ci, data, len, r->ud);
            if (rc < 0)
                fh_logf(fh, DDM_LOG_DEBUG, "fake-host: handler for %s returned %d",
                        ddm_chunk_name(ci->type, n), rc);
            return rc;
        }
    }
    fh_logf(fh, DDM_LOG_DEBUG, "fake-host: unhandled chunk %s", ddm_chunk_name(ci->type, n));
    return DDM_DECLINED;
}

int fake_host_deliver(fake_host *fh, ddm_vm *vm, uint32_t type, ddm_chunk_origin origin,
                      const void *data, size_t len)
{
    ddm_chunk_info ci;
    uint8_t *copy = exact_copy(data, len);
    int rc;
    assert_non_null(vm);
    assert_false(vm->gone);
    memset(&ci, 0, sizeof ci);
    ci.type = type;
    ci.packet_id = 0x10000000u + fh->next_event_id++;
    ci.origin = origin;
    run_taps(fh, vm, &ci, copy, len);
    rc = run_owner(fh, vm, &ci, copy, len);
    free(copy);
    return rc;
}

/* ------------------------------------------------------------------ VMs */

enum { S_KEY, S_TRANSPORT, S_DEVICE, S_IDENT, S_APP, S_ABI, S_FLAGS, S_PKG, S_N };

static void vm_info_clear(ddm_vm *vm)
{
    size_t i;
    for (i = 0; i < S_N; i++) {
        free(vm->strs[i]);
        vm->strs[i] = NULL;
    }
    for (i = 0; vm->features && i < vm->info.n_features; i++)
        free(vm->features[i]);
    free(vm->features);
    vm->features = NULL;
}

/* Deep-copy @src into @vm (src may alias vm's own strings: copy, then free). */
static void vm_info_copy(ddm_vm *vm, const ddm_vm_info *src)
{
    ddm_vm_info def, info;
    char *strs[S_N];
    char **features;
    size_t i, n;
    if (!src) {
        memset(&def, 0, sizeof def);
        def.user_id = -1;
        def.native_debuggable = -1;
        def.ddm = 1;
        src = &def;
    }
    info = *src;
    info.size = sizeof(ddm_vm_info);
    info.key = strs[S_KEY] = xstrdup(src->key);
    info.transport = strs[S_TRANSPORT] = xstrdup(src->transport);
    info.device = strs[S_DEVICE] = xstrdup(src->device);
    info.vm_ident = strs[S_IDENT] = xstrdup(src->vm_ident);
    info.app_name = strs[S_APP] = xstrdup(src->app_name);
    info.abi = strs[S_ABI] = xstrdup(src->abi);
    info.jvm_flags = strs[S_FLAGS] = xstrdup(src->jvm_flags);
    info.package_name = strs[S_PKG] = xstrdup(src->package_name);
    n = info.n_features = src->features ? src->n_features : 0;
    features = xcalloc(n + 1, sizeof(char *));
    for (i = 0; i < n; i++)
        features[i] = xstrdup(src->features[i]);
    info.features = (const char *const *)features;
    vm_info_clear(vm);
    memcpy(vm->strs, strs, sizeof strs);
    vm->features = features;
    vm->info = info;
}

ddm_vm *fake_host_add_vm(fake_host *fh, const ddm_vm_info *info)
{
    ddm_vm *vm = xcalloc(1, sizeof *vm);
    char key[64];
    vm->fh = fh;
    vm_info_copy(vm, info);
    if (!vm->info.key) {
        snprintf(key, sizeof key, "fake:%zu", fh->vms.n + 1);
        vm->info.key = vm->strs[S_KEY] = xstrdup(key);
    }
    vec_push(&fh->vms, vm);
    return vm;
}

void fake_host_set_vm_info(fake_host *fh, ddm_vm *vm, const ddm_vm_info *info)
{
    (void)fh;
    vm_info_copy(vm, info);
}

const ddm_vm_info *fake_vm_info(ddm_vm *vm)
{
    return &vm->info;
}

int fake_vm_gone(ddm_vm *vm)
{
    return vm->gone;
}

int fake_vm_set_name_calls(ddm_vm *vm)
{
    return vm->set_name_calls;
}

void fake_host_set_sync_changed(fake_host *fh, int on)
{
    fh->sync_changed = on;
}

static void run_listeners(fake_host *fh, ddm_vm *vm, ddm_vm_event ev)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == 3)
            r->vm_fn(&fh->plugin, vm, ev, r->ud);
    }
}

static void view_destroy(ddm_view *v);
static void complete(fake_host *fh, fake_request *rq, const ddm_reply *reply);

void fake_host_vm_event(fake_host *fh, ddm_vm *vm, ddm_vm_event event)
{
    size_t i;
    assert_non_null(vm);
    if (vm->gone)
        fail_msg("fake-host: event %d for a VM that is gone", (int)event);
    if (event == DDM_VM_READY)
        vm->ready = 1;
    if (event != DDM_VM_GONE) {
        run_listeners(fh, vm, event);
        return;
    }
    /* pending requests end with VM_GONE, exactly once */
    for (i = 0; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (rq->vm == vm && !rq->completed) {
            ddm_reply r;
            memset(&r, 0, sizeof r);
            r.status = DDM_REPLY_VM_GONE;
            complete(fh, rq, &r);
        }
    }
    vm->ready = 0;
    run_listeners(fh, vm, DDM_VM_GONE);
    vm->gone = 1;
    if (vm->data_free && vm->data)
        vm->data_free(vm->data);
    vm->data = NULL;
    vm->data_free = NULL;
    for (i = fh->views.n; i > 0; i--) {
        ddm_view *v = fh->views.v[i - 1];
        if (v->vm == vm) {
            vec_remove_at(&fh->views, i - 1);
            view_destroy(v);
        }
    }
}

static const ddm_vm_info *h_vm_info(ddm_vm *vm)
{
    assert_non_null(vm);
    return &vm->info;
}

static int h_vm_set_name(ddm_plugin *self, ddm_vm *vm, const char *app_name,
                         const char *package_name, int32_t user_id)
{
    fake_host *fh = host_of(self);
    assert_non_null(vm);
    if (vm->gone)
        return -ENOENT;
    vm->set_name_calls++;
    if (app_name) {
        free(vm->strs[S_APP]);
        vm->info.app_name = vm->strs[S_APP] = xstrdup(app_name);
    }
    if (package_name) {
        free(vm->strs[S_PKG]);
        vm->info.package_name = vm->strs[S_PKG] = xstrdup(package_name);
    }
    if (user_id >= 0)
        vm->info.user_id = user_id;
    if (fh->sync_changed)
        run_listeners(fh, vm, DDM_VM_CHANGED);
    return 0;
}

static int h_vm_set_data(ddm_plugin *self, ddm_vm *vm, void *data, ddm_free_fn data_free)
{
    (void)host_of(self);
    assert_non_null(vm);
    if (vm->gone) {
        if (data_free && data)
            data_free(data);
        return -ENOENT;
    }
    if (vm->data && vm->data_free && vm->data != data)
        vm->data_free(vm->data);
    vm->data = data;
    vm->data_free = data_free;
    return 0;
}

static void *h_vm_get_data(ddm_plugin *self, ddm_vm *vm)
{
    (void)host_of(self);
    assert_non_null(vm);
    return vm->gone ? NULL : vm->data;
}

static int vm_matches(ddm_vm *vm, const char *spec)
{
    char buf[256];
    if (vm->info.key && strcmp(vm->info.key, spec) == 0)
        return 1;
    snprintf(buf, sizeof buf, "%" PRIu32, vm->info.pid);
    if (vm->info.pid && strcmp(buf, spec) == 0)
        return 1;
    if (vm->info.device) {
        snprintf(buf, sizeof buf, "%s:%" PRIu32, vm->info.device, vm->info.pid);
        if (strcmp(buf, spec) == 0)
            return 1;
    }
    return vm->info.app_name && *vm->info.app_name && strcmp(vm->info.app_name, spec) == 0;
}

static ddm_vm *h_find_vm(ddm_plugin *self, const char *spec)
{
    fake_host *fh = host_of(self);
    ddm_vm *found = NULL;
    size_t i;
    if (!spec)
        return NULL;
    for (i = 0; i < fh->vms.n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!vm->gone && vm_matches(vm, spec)) {
            if (found)
                return NULL; /* ambiguous */
            found = vm;
        }
    }
    return found;
}

static int h_vm_headline(ddm_plugin *self, ddm_vm *vm, const char *label, const char *text)
{
    size_t i;
    char **pair;
    (void)host_of(self);
    assert_non_null(vm);
    assert_non_null(label);
    if (vm->gone)
        return -ENOENT;
    if (!*label)
        return -EINVAL;
    if (strlen(label) > DDM_HEADLINE_LABEL_MAX || (text && strlen(text) > DDM_HEADLINE_TEXT_MAX))
        return -EMSGSIZE;
    for (i = 0; i < vm->headlines.n; i++) {
        pair = vm->headlines.v[i];
        if (strcmp(pair[0], label) == 0) {
            free(pair[1]);
            pair[1] = NULL;
            if (!text) {
                free(pair[0]);
                free(pair);
                vec_remove_at(&vm->headlines, i);
            } else {
                pair[1] = xstrdup(text);
            }
            return 0;
        }
    }
    if (!text)
        return 0;
    pair = xcalloc(2, sizeof(char *));
    pair[0] = xstrdup(label);
    pair[1] = xstrdup(text);
    vec_push(&vm->headlines, pair);
    return 0;
}

const char *fake_host_headline(fake_host *fh, ddm_vm *vm, const char *label)
{
    size_t i;
    (void)fh;
    for (i = 0; i < vm->headlines.n; i++) {
        char **pair = vm->headlines.v[i];
        if (strcmp(pair[0], label) == 0)
            return pair[1];
    }
    return NULL;
}

/* As the core: the DDM VMs whose READY was delivered (or is being delivered)
 * and whose GONE has not begun. VMs stay allocated until fake_host_free and
 * the list only grows, so walking by index is safe whatever @fn does; VMs
 * added during the walk are not visited. */
static size_t h_foreach_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud)
{
    fake_host *fh = host_of(self);
    size_t i, n = fh->vms.n, calls = 0;
    assert_non_null(fn);
    for (i = 0; i < n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!vm->ready || vm->gone || !vm->info.ddm)
            continue;
        calls++;
        if (fn(self, vm, ud) != 0)
            break;
    }
    return calls;
}

/* ------------------------------------------------------------- requests */

static int h_request(ddm_plugin *self, ddm_vm *vm, uint32_t type, const void *data, size_t len,
                     unsigned timeout_ms, ddm_reply_fn fn, void *ud, uint32_t *id_out)
{
    fake_host *fh = host_of(self);
    fake_request *rq;
    ddm_chunk_info ci;
    assert_non_null(vm);
    if (len && !data)
        fail_msg("fake-host: request with len %zu and no data", len);
    if (fh->request_error && (!fh->request_error_type || fh->request_error_type == type))
        return fh->request_error;
    if (vm->gone || !vm->ready || !vm->info.ddm)
        return -ENOTCONN;
    /* As the core: --chunks governs owned types; request-only types pass. */
    if (!type_enabled(fh, type) && fake_host_owns(fh, type))
        return -EPERM;
    /* The core's default bounds: the packet (19 header bytes and the
     * payload) and the pending requests per VM. */
    if (len > DDM_REQUEST_MAX_PACKET - 19)
        return -EMSGSIZE;
    if (fake_host_n_pending(fh, vm, 0) >= (int)DDM_REQUEST_MAX_PENDING ||
        fh->requests.n >= FH_MAX_ITEMS)
        return -ENOSPC;
    rq = xcalloc(1, sizeof *rq);
    rq->vm = vm;
    rq->type = type;
    rq->data = exact_copy(data, len);
    rq->len = len;
    rq->timeout_ms = timeout_ms;
    rq->fn = fn;
    rq->ud = ud;
    rq->packet_id = 0x40000000u + fh->next_packet_id++;
    vec_push(&fh->requests, rq);
    if (id_out)
        *id_out = rq->packet_id;
    memset(&ci, 0, sizeof ci);
    ci.type = type;
    ci.packet_id = rq->packet_id;
    ci.origin = DDM_ORIGIN_REQUEST;
    run_taps(fh, vm, &ci, rq->data, len);
    return 0;
}

size_t fake_host_n_requests(fake_host *fh)
{
    return fh->requests.n;
}

const fake_request *fake_host_request(fake_host *fh, size_t idx)
{
    return idx < fh->requests.n ? fh->requests.v[idx] : NULL;
}

int fake_host_find_request(fake_host *fh, ddm_vm *vm, uint32_t type, size_t from)
{
    size_t i;
    for (i = from; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (rq->type == type && (!vm || rq->vm == vm))
            return (int)i;
    }
    return -1;
}

int fake_host_n_pending(fake_host *fh, ddm_vm *vm, uint32_t type)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (!rq->completed && (!type || rq->type == type) && (!vm || rq->vm == vm))
            n++;
    }
    return n;
}

static void complete(fake_host *fh, fake_request *rq, const ddm_reply *reply)
{
    ddm_reply r = *reply;
    uint8_t *copy = NULL;
    char *msg = NULL;
    if (rq->completed)
        fail_msg("fake-host: request %08" PRIx32 " completed twice", rq->packet_id);
    rq->completed = 1;
    if (r.status == DDM_REPLY_CHUNK) {
        copy = exact_copy(reply->data, reply->len);
        r.data = copy;
        msg = xstrdup(reply->fail_msg);
        r.fail_msg = msg;
    } else {
        r.data = NULL;
        r.len = 0;
    }
    if (rq->fn) {
        rq->fn(&fh->plugin, rq->vm, &r, rq->ud);
    } else if (r.status == DDM_REPLY_CHUNK && !rq->vm->gone) {
        ddm_chunk_info ci;
        memset(&ci, 0, sizeof ci);
        ci.type = r.type;
        ci.packet_id = rq->packet_id;
        ci.origin = DDM_ORIGIN_REPLY;
        ci.request_type = rq->type;
        run_taps(fh, rq->vm, &ci, copy, r.len);
        (void)run_owner(fh, rq->vm, &ci, copy, r.len);
    }
    free(copy);
    free(msg);
}

void fake_host_complete_request(fake_host *fh, size_t idx, const ddm_reply *reply)
{
    if (idx >= fh->requests.n)
        fail_msg("fake-host: no request %zu (have %zu)", idx, fh->requests.n);
    assert_non_null(reply);
    complete(fh, fh->requests.v[idx], reply);
}

void fake_host_complete_chunk(fake_host *fh, size_t idx, uint32_t type, const void *data,
                              size_t len)
{
    ddm_reply r;
    memset(&r, 0, sizeof r);
    r.status = DDM_REPLY_CHUNK;
    r.type = type;
    r.data = data;
    r.len = len;
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_complete_status(fake_host *fh, size_t idx, ddm_reply_status status)
{
    ddm_reply r;
    memset(&r, 0, sizeof r);
    r.status = status;
    if (status == DDM_REPLY_ERROR)
        r.jdwp_error = 99; /* INVALID_METHODID... any non-zero code */
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_complete_fail(fake_host *fh, size_t idx, uint32_t code, const char *msg)
{
    /* build the FAIL payload as the wire has it: u4 code, u4 units, str16 */
    uint8_t buf[512];
    size_t units = msg ? ddm_utf8_to_utf16be(msg, NULL, 0) : 0;
    ddm_reply r;
    assert_true(units * 2 + 8 <= sizeof buf);
    ddm_put_u4(buf, code);
    ddm_put_u4(buf + 4, (uint32_t)units);
    if (msg)
        ddm_utf8_to_utf16be(msg, buf + 8, units * 2);
    memset(&r, 0, sizeof r);
    r.status = DDM_REPLY_CHUNK;
    r.type = DDM_CHUNK_FAIL;
    r.data = buf;
    r.len = 8 + units * 2;
    r.fail_code = code;
    r.fail_msg = msg;
    fake_host_complete_request(fh, idx, &r);
}

void fake_host_set_client_cwd(fake_host *fh, const char *dir)
{
    free(fh->client_cwd);
    fh->client_cwd = dir ? strdup(dir) : NULL;
}

void fake_host_set_request_error(fake_host *fh, int err)
{
    fh->request_error = err;
    fh->request_error_type = 0;
}

void fake_host_set_request_error_for(fake_host *fh, uint32_t type, int err)
{
    fh->request_error = err;
    fh->request_error_type = type;
}

/* --------------------------------------------------------------- timers */

static void timer_free(fh_timer *t)
{
    if (t->ud_free)
        t->ud_free(t->ud);
    free(t);
}

static uint32_t h_timer_add(ddm_plugin *self, unsigned interval_ms, ddm_timer_fn fn, void *ud,
                            ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_timer *t;
    /* As the core: an interval of 0 means "as often as possible" (1 ms). */
    if (!fn || fh->timers.n >= FH_MAX_ITEMS) {
        if (ud_free)
            ud_free(ud);
        return 0;
    }
    t = xcalloc(1, sizeof *t);
    t->id = ++fh->next_timer_id;
    t->interval = interval_ms ? interval_ms : 1;
    t->fn = fn;
    t->ud = ud;
    t->ud_free = ud_free;
    t->active = 1;
    vec_push(&fh->timers, t);
    return t->id;
}

static void h_timer_remove(ddm_plugin *self, uint32_t id)
{
    fake_host *fh = host_of(self);
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->id == id && t->active) {
            t->active = 0;
            if (!t->firing) {
                vec_remove_at(&fh->timers, i);
                timer_free(t);
            }
            return;
        }
    }
}

int fake_host_n_timers(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->timers.n; i++)
        if (((fh_timer *)fh->timers.v[i])->active)
            n++;
    return n;
}

unsigned fake_host_timer_interval(fake_host *fh, int idx)
{
    size_t i;
    for (i = 0; i < fh->timers.n; i++) {
        fh_timer *t = fh->timers.v[i];
        if (t->active && idx-- == 0)
            return t->interval;
    }
    return 0;
}

int fake_host_fire_timers(fake_host *fh)
{
    uint32_t last = fh->next_timer_id; /* timers added while firing wait */
    int ran = 0;
    size_t i = 0;
    while (i < fh->timers.n) {
        fh_timer *t = fh->timers.v[i];
        if (t->active && t->id <= last) {
            int keep;
            t->firing = 1;
            keep = t->fn(&fh->plugin, t->ud);
            t->firing = 0;
            ran++;
            if (!keep)
                t->active = 0;
        }
        /* the list may have changed: find t again */
        for (i = 0; i < fh->timers.n && fh->timers.v[i] != t; i++)
            ;
        if (i < fh->timers.n && !t->active) {
            vec_remove_at(&fh->timers, i);
            timer_free(t);
        } else {
            i++;
        }
    }
    return ran;
}

/* ---------------------------------------------------------------- views */

static void cell_clear(fh_cell *c)
{
    free(c->s);
    free(c->text);
    memset(c, 0, sizeof *c);
}

static void content_clear(ddm_view *v, fh_content *c)
{
    size_t i, j;
    for (i = 0; i < c->rows.n; i++) {
        fh_cell *row = c->rows.v[i];
        for (j = 0; j < v->n_cols; j++)
            cell_clear(&row[j]);
        free(row);
    }
    vec_clear(&c->rows);
    for (i = 0; i < c->fields.n; i++) {
        fh_field *f = c->fields.v[i];
        free(f->key);
        cell_clear(&f->cell);
        free(f);
    }
    vec_clear(&c->fields);
    free(c->media_type);
    free(c->blob);
    memset(c, 0, sizeof *c);
}

static void cols_free(ddm_view *v)
{
    size_t i;
    for (i = 0; i < v->n_cols; i++) {
        free((char *)v->cols[i].name);
        free((char *)v->cols[i].unit);
    }
    free(v->cols);
    v->cols = NULL;
    v->n_cols = 0;
}

static void view_destroy(ddm_view *v)
{
    content_clear(v, &v->committed);
    content_clear(v, &v->building);
    cols_free(v);
    free(v->name);
    free(v->title);
    free(v);
}

static ddm_view *view_alloc(fake_host *fh, ddm_vm *vm, const char *name, ddm_view_kind kind,
                            const char *title)
{
    ddm_view *v = xcalloc(1, sizeof *v);
    v->fh = fh;
    v->vm = vm;
    v->name = xstrdup(name);
    v->title = xstrdup(title);
    v->kind = kind;
    v->watchers = -1;
    return v;
}

static int view_error(ddm_view *v, int err, const char *what)
{
    v->fh->view_errors++;
    fh_logf(v->fh, DDM_LOG_WARNING, "fake-host: view '%s': %s", v->name ? v->name : "?", what);
    return err;
}

/* A copy of @s as the core keeps it: at most DDM_VIEW_MAX_STRING bytes, cut
 * at a UTF-8 character boundary (*@rc = -E2BIG, the value kept), within
 * the content's DDM_VIEW_MAX_STRING_BYTES (NULL and -E2BIG past it). */
static char *view_string(fh_content *c, const char *s, int *rc)
{
    size_t n = strlen(s);
    char *out;
    if (n > DDM_VIEW_MAX_STRING) {
        *rc = -E2BIG;
        n = DDM_VIEW_MAX_STRING;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    if (c->string_bytes + n + 1 > DDM_VIEW_MAX_STRING_BYTES) {
        *rc = -E2BIG;
        return NULL;
    }
    c->string_bytes += n + 1;
    out = xcalloc(n + 1, 1);
    memcpy(out, s, n);
    return out;
}

static ddm_view *h_view_new(ddm_plugin *self, ddm_vm *vm, const char *name, ddm_view_kind kind,
                            const char *title)
{
    fake_host *fh = host_of(self);
    ddm_view *v;
    assert_non_null(name);
    if (kind != DDM_VIEW_TABLE && kind != DDM_VIEW_RECORD && kind != DDM_VIEW_BLOB)
        return NULL;
    if (vm && vm->gone)
        return NULL;
    if (fake_view_find(fh, vm, name) || fh->views.n >= FH_MAX_ITEMS)
        return NULL;
    v = view_alloc(fh, vm, name, kind, title);
    vec_push(&fh->views, v);
    return v;
}

static int h_view_set_columns(ddm_view *v, const ddm_column *cols, size_t n_cols)
{
    size_t i;
    assert_non_null(v);
    if (v->kind != DDM_VIEW_TABLE)
        return view_error(v, -EINVAL, "set_columns on a non-table");
    if (n_cols && !cols)
        return view_error(v, -EINVAL, "set_columns without columns");
    if (n_cols > DDM_VIEW_MAX_COLUMNS) { /* a limit, not misuse: the old columns stay */
        fh_logf(v->fh, DDM_LOG_DEBUG, "fake-host: view '%s': more than %u columns refused",
                v->name, DDM_VIEW_MAX_COLUMNS);
        return -EINVAL;
    }
    content_clear(v, &v->committed);
    content_clear(v, &v->building);
    v->building_open = 0;
    cols_free(v);
    v->cols = xcalloc(n_cols, sizeof *v->cols);
    v->n_cols = n_cols;
    for (i = 0; i < n_cols; i++) {
        if (!cols[i].name)
            return view_error(v, -EINVAL, "column without a name");
        v->cols[i].name = xstrdup(cols[i].name);
        v->cols[i].type = cols[i].type;
        v->cols[i].unit = xstrdup(cols[i].unit);
    }
    return 0;
}

static int h_view_begin(ddm_view *v)
{
    assert_non_null(v);
    content_clear(v, &v->building);
    v->building_open = 1;
    v->cur_cells = 0;
    v->row_dropped = 0;
    return 0;
}

static int row_complete(ddm_view *v)
{
    if (v->building.rows.n && v->cur_cells != v->n_cols)
        return view_error(v, -EINVAL, "row has fewer cells than columns");
    return 0;
}

static int h_view_row(ddm_view *v)
{
    assert_non_null(v);
    if (!v->building_open)
        return view_error(v, -EPROTO, "row without begin");
    if (v->kind != DDM_VIEW_TABLE || v->n_cols == 0)
        return view_error(v, -EINVAL, "row on a non-table or a table without columns");
    if (row_complete(v))
        return -EINVAL;
    if (v->building.rows.n >= DDM_VIEW_MAX_ROWS ||
        (v->building.rows.n + 1) * v->n_cols > DDM_VIEW_MAX_CELLS) {
        v->row_dropped = 1; /* as the core: dropped, and so are its cells */
        return -E2BIG;
    }
    v->row_dropped = 0;
    vec_push(&v->building.rows, xcalloc(v->n_cols, sizeof(fh_cell)));
    v->cur_cells = 0;
    return 0;
}

static fh_cell *next_cell(ddm_view *v, ddm_value_type type, int is_null, int *err)
{
    fh_cell *row;
    *err = 0;
    if (!v->building_open) {
        *err = view_error(v, -EPROTO, "cell without begin");
        return NULL;
    }
    if (v->row_dropped) {
        *err = -E2BIG;
        return NULL;
    }
    if (v->kind != DDM_VIEW_TABLE || !v->building.rows.n) {
        *err = view_error(v, -EINVAL, "cell without a row");
        return NULL;
    }
    if (v->cur_cells >= v->n_cols) {
        *err = view_error(v, -EINVAL, "more cells than columns");
        return NULL;
    }
    if (!is_null && v->cols[v->cur_cells].type != type &&
        !(type == DDM_VAL_INT && v->cols[v->cur_cells].type == DDM_VAL_DOUBLE)) {
        char buf[160];
        snprintf(buf, sizeof buf, "cell type %d for column '%s' of type %d", (int)type,
                 v->cols[v->cur_cells].name, (int)v->cols[v->cur_cells].type);
        *err = view_error(v, -EINVAL, buf);
        return NULL;
    }
    row = v->building.rows.v[v->building.rows.n - 1];
    row[v->cur_cells].type = v->cols[v->cur_cells].type;
    row[v->cur_cells].is_null = is_null;
    return &row[v->cur_cells++];
}

static int h_view_str(ddm_view *v, const char *value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_STR, value == NULL, &err);
    if (c && value) {
        c->s = view_string(&v->building, value, &err);
        c->is_null = c->s == NULL;
    }
    return err;
}

static int h_view_int(ddm_view *v, int64_t value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_INT, 0, &err);
    if (c && c->type == DDM_VAL_DOUBLE)
        c->d = (double)value; /* as the core: an int in a double column is converted */
    else if (c)
        c->i = value;
    return err;
}

static int h_view_double(ddm_view *v, double value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_DOUBLE, 0, &err);
    if (c)
        c->d = value;
    return err;
}

static int h_view_bool(ddm_view *v, int value)
{
    int err;
    fh_cell *c = next_cell(v, DDM_VAL_BOOL, 0, &err);
    if (c)
        c->i = value ? 1 : 0;
    return err;
}

static fh_cell *field_cell(ddm_view *v, const char *key, ddm_value_type type, int *err)
{
    size_t i;
    fh_field *f;
    *err = 0;
    if (!v->building_open) {
        *err = view_error(v, -EPROTO, "field without begin");
        return NULL;
    }
    if (v->kind != DDM_VIEW_RECORD || !key) {
        *err = view_error(v, -EINVAL, "field on a non-record or without a key");
        return NULL;
    }
    for (i = 0; i < v->building.fields.n; i++) {
        f = v->building.fields.v[i];
        if (strcmp(f->key, key) == 0) {
            cell_clear(&f->cell);
            f->cell.type = type;
            return &f->cell;
        }
    }
    if (v->building.fields.n >= DDM_VIEW_MAX_FIELDS) {
        *err = -E2BIG;
        return NULL;
    }
    f = xcalloc(1, sizeof *f);
    f->key = view_string(&v->building, key, err);
    if (!f->key) {
        free(f);
        return NULL;
    }
    f->cell.type = type;
    vec_push(&v->building.fields, f);
    return &f->cell;
}

static int h_view_field_str(ddm_view *v, const char *key, const char *value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_STR, &err);
    if (c) {
        c->s = value ? view_string(&v->building, value, &err) : NULL;
        c->is_null = c->s == NULL;
    }
    return err;
}

static int h_view_field_int(ddm_view *v, const char *key, int64_t value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_INT, &err);
    if (c)
        c->i = value;
    return err;
}

static int h_view_field_double(ddm_view *v, const char *key, double value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_DOUBLE, &err);
    if (c)
        c->d = value;
    return err;
}

static int h_view_field_bool(ddm_view *v, const char *key, int value)
{
    int err;
    fh_cell *c = field_cell(v, key, DDM_VAL_BOOL, &err);
    if (c)
        c->i = value ? 1 : 0;
    return err;
}

static int h_view_blob(ddm_view *v, const char *media_type, const void *data, size_t len)
{
    assert_non_null(v);
    if (!v->building_open)
        return view_error(v, -EPROTO, "blob without begin");
    if (v->kind != DDM_VIEW_BLOB || (len && !data))
        return view_error(v, -EINVAL, "blob on a non-blob view or without data");
    if (len > DDM_VIEW_MAX_BLOB)
        return -EFBIG; /* refused, as by the core; the old blob stays */
    free(v->building.blob);
    free(v->building.media_type);
    v->building.blob = exact_copy(data, len);
    v->building.blob_len = len;
    v->building.media_type = xstrdup(media_type);
    v->building.has_blob = 1;
    return 0;
}

static int h_view_commit(ddm_view *v)
{
    assert_non_null(v);
    if (!v->building_open)
        return view_error(v, -EPROTO, "commit without begin");
    if (row_complete(v))
        return -EINVAL;
    content_clear(v, &v->committed);
    v->committed = v->building;
    memset(&v->building, 0, sizeof v->building);
    v->building_open = 0;
    v->cur_cells = 0;
    v->version++;
    return 0;
}

static void h_view_free(ddm_view *v)
{
    fake_host *fh;
    size_t i;
    if (!v)
        return;
    fh = v->fh;
    if (v->is_cmd_result)
        fail_msg("fake-host: view_free on a command result");
    for (i = 0; i < fh->views.n; i++) {
        if (fh->views.v[i] == v) {
            vec_remove_at(&fh->views, i);
            view_destroy(v);
            return;
        }
    }
    fail_msg("fake-host: view_free of an unknown view");
}

static int h_view_watchers(ddm_view *v)
{
    assert_non_null(v);
    return v->watchers >= 0 ? v->watchers : v->fh->default_watchers;
}

ddm_view *fake_view_find(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i;
    for (i = 0; i < fh->views.n; i++) {
        ddm_view *v = fh->views.v[i];
        if (v->vm == vm && strcmp(v->name, name) == 0)
            return v;
    }
    return NULL;
}

int fake_host_n_views(fake_host *fh, ddm_vm *vm)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->views.n; i++)
        if (((ddm_view *)fh->views.v[i])->vm == vm)
            n++;
    return n;
}

ddm_view_kind fake_view_kind(ddm_view *v)
{
    assert_non_null(v);
    return v->kind;
}

const char *fake_view_title(ddm_view *v)
{
    assert_non_null(v);
    return v->title;
}

unsigned fake_view_version(ddm_view *v)
{
    assert_non_null(v);
    return v->version;
}

void fake_view_set_watchers(ddm_view *v, int n)
{
    assert_non_null(v);
    v->watchers = n;
}

void fake_host_set_default_watchers(fake_host *fh, int n)
{
    fh->default_watchers = n;
}

void fake_host_expect_view_errors(fake_host *fh)
{
    fh->expect_view_errors = 1;
}

int fake_host_view_errors(fake_host *fh)
{
    return fh->view_errors;
}

int fake_view_n_rows(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->committed.rows.n;
}

int fake_view_n_cols(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->n_cols;
}

int fake_view_col(ddm_view *v, const char *name)
{
    size_t i;
    assert_non_null(v);
    for (i = 0; i < v->n_cols; i++)
        if (strcmp(v->cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *fake_view_col_unit(ddm_view *v, const char *name)
{
    int c = fake_view_col(v, name);
    return c < 0 ? NULL : v->cols[c].unit;
}

ddm_value_type fake_view_col_type(ddm_view *v, const char *name)
{
    int c = fake_view_col(v, name);
    return c < 0 ? (ddm_value_type)0 : v->cols[c].type;
}

static fh_cell *cell_at(ddm_view *v, int row, const char *col)
{
    int c = fake_view_col(v, col);
    if (c < 0) {
        fail_msg("fake-host: view '%s' has no column '%s'", v->name, col);
        return NULL;
    }
    if (row < 0 || (size_t)row >= v->committed.rows.n)
        return NULL;
    return &((fh_cell *)v->committed.rows.v[row])[c];
}

static const char *cell_text(fh_cell *c)
{
    char buf[64];
    if (!c || c->is_null)
        return NULL;
    if (c->type == DDM_VAL_STR)
        return c->s ? c->s : "";
    if (!c->text) {
        if (c->type == DDM_VAL_INT)
            snprintf(buf, sizeof buf, "%" PRId64, c->i);
        else if (c->type == DDM_VAL_BOOL)
            snprintf(buf, sizeof buf, "%s", c->i ? "true" : "false");
        else
            snprintf(buf, sizeof buf, "%g", c->d);
        c->text = xstrdup(buf);
    }
    return c->text;
}

static int64_t cell_int(fh_cell *c)
{
    if (!c || c->is_null)
        return 0;
    if (c->type != DDM_VAL_INT && c->type != DDM_VAL_BOOL)
        fail_msg("fake-host: cell is not an int (type %d)", (int)c->type);
    return c->i;
}

static double cell_double(fh_cell *c)
{
    if (!c || c->is_null)
        return 0;
    if (c->type == DDM_VAL_INT || c->type == DDM_VAL_BOOL)
        return (double)c->i;
    if (c->type != DDM_VAL_DOUBLE)
        fail_msg("fake-host: cell is not a number (type %d)", (int)c->type);
    return c->d;
}

int fake_view_cell_is_null(ddm_view *v, int row, const char *col)
{
    fh_cell *c = cell_at(v, row, col);
    return !c || c->is_null;
}

const char *fake_view_cell_str(ddm_view *v, int row, const char *col)
{
    return cell_text(cell_at(v, row, col));
}

int64_t fake_view_cell_int(ddm_view *v, int row, const char *col)
{
    return cell_int(cell_at(v, row, col));
}

double fake_view_cell_double(ddm_view *v, int row, const char *col)
{
    return cell_double(cell_at(v, row, col));
}

int fake_view_find_row(ddm_view *v, const char *col, const char *text)
{
    int r;
    for (r = 0; r < fake_view_n_rows(v); r++) {
        const char *t = fake_view_cell_str(v, r, col);
        if (t && strcmp(t, text) == 0)
            return r;
    }
    return -1;
}

static fh_field *field_at(ddm_view *v, const char *key)
{
    size_t i;
    assert_non_null(v);
    for (i = 0; i < v->committed.fields.n; i++) {
        fh_field *f = v->committed.fields.v[i];
        if (strcmp(f->key, key) == 0)
            return f;
    }
    return NULL;
}

int fake_view_n_fields(ddm_view *v)
{
    assert_non_null(v);
    return (int)v->committed.fields.n;
}

int fake_view_has_field(ddm_view *v, const char *key)
{
    return field_at(v, key) != NULL;
}

const char *fake_view_field_str(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_text(&f->cell) : NULL;
}

int64_t fake_view_field_int(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_int(&f->cell) : 0;
}

double fake_view_field_double(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? cell_double(&f->cell) : 0;
}

ddm_value_type fake_view_field_type(ddm_view *v, const char *key)
{
    fh_field *f = field_at(v, key);
    return f ? f->cell.type : (ddm_value_type)0;
}

const uint8_t *fake_view_blob(ddm_view *v, size_t *len, const char **media_type)
{
    assert_non_null(v);
    if (len)
        *len = v->committed.blob_len;
    if (media_type)
        *media_type = v->committed.media_type;
    return v->committed.has_blob ? (v->committed.blob ? v->committed.blob : (const uint8_t *)"")
                                 : NULL;
}

/* ------------------------------------------------------------- commands */

static ddm_view *h_cmd_result(ddm_cmd *cmd, ddm_view_kind kind, const char *title)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_result after cmd_finish");
    if (!cmd->result) {
        cmd->result = view_alloc(cmd->fh, NULL, "result", kind, title);
        cmd->result->is_cmd_result = 1;
    } else if (cmd->result->kind != kind) {
        view_error(cmd->result, 0, "cmd_result asked again with another kind");
    }
    return cmd->result;
}

static const char *h_cmd_cwd(ddm_cmd *cmd)
{
    assert_non_null(cmd);
    return cmd->fh->client_cwd;
}

static void h_cmd_finish(ddm_cmd *cmd, ddm_cmd_status status, const char *message)
{
    assert_non_null(cmd);
    if (cmd->finished)
        fail_msg("fake-host: cmd_finish called twice (second: %d %s)", (int)status,
                 message ? message : "");
    cmd->finished = 1;
    cmd->status = status;
    cmd->message = xstrdup(message);
}

ddm_cmd *fake_host_run_command(fake_host *fh, int argc, const char *const *argv)
{
    fh_reg *r;
    ddm_cmd *cmd;
    int rc;
    assert_true(argc >= 1);
    r = find_command(fh, argv[0]);
    if (!r)
        return NULL;
    cmd = xcalloc(1, sizeof *cmd);
    cmd->fh = fh;
    vec_push(&fh->cmds, cmd);
    rc = r->cmd_fn(&fh->plugin, cmd, argc, argv, r->ud);
    if (rc < 0 && !cmd->finished) {
        char msg[64];
        snprintf(msg, sizeof msg, "failed: %s", strerror(-rc));
        h_cmd_finish(cmd, DDM_CMD_FAILED, msg);
    }
    return cmd;
}

int fake_cmd_finished(ddm_cmd *cmd)
{
    return cmd->finished;
}

ddm_cmd_status fake_cmd_status(ddm_cmd *cmd)
{
    if (!cmd->finished)
        fail_msg("fake-host: command not finished");
    return cmd->status;
}

const char *fake_cmd_message(ddm_cmd *cmd)
{
    return cmd->message;
}

ddm_view *fake_cmd_result(ddm_cmd *cmd)
{
    return cmd->result;
}

/* ------------------------------------------------------------ lifecycle */

fake_host *fake_host_new(void)
{
    fake_host *fh = xcalloc(1, sizeof *fh);
    ddm_host *h = &fh->host;
    h->size = sizeof(ddm_host);
    h->abi_major = DDM_ABI_MAJOR;
    h->abi_minor = DDM_ABI_MINOR;
    h->log = h_log;
    h->set_data = h_set_data;
    h->get_data = h_get_data;
    h->config_get = h_config_get;
    h->register_chunk = h_register_chunk;
    h->register_tap = h_register_tap;
    h->register_vm_listener = h_register_vm_listener;
    h->register_command = h_register_command;
    h->chunk_enabled = h_chunk_enabled;
    h->request = h_request;
    h->vm_info = h_vm_info;
    h->vm_set_name = h_vm_set_name;
    h->vm_set_data = h_vm_set_data;
    h->vm_get_data = h_vm_get_data;
    h->find_vm = h_find_vm;
    h->vm_headline = h_vm_headline;
    h->timer_add = h_timer_add;
    h->timer_remove = h_timer_remove;
    h->view_new = h_view_new;
    h->view_set_columns = h_view_set_columns;
    h->view_begin = h_view_begin;
    h->view_row = h_view_row;
    h->view_str = h_view_str;
    h->view_int = h_view_int;
    h->view_double = h_view_double;
    h->view_bool = h_view_bool;
    h->view_field_str = h_view_field_str;
    h->view_field_int = h_view_field_int;
    h->view_field_double = h_view_field_double;
    h->view_field_bool = h_view_field_bool;
    h->view_blob = h_view_blob;
    h->view_commit = h_view_commit;
    h->view_free = h_view_free;
    h->view_watchers = h_view_watchers;
    h->cmd_result = h_cmd_result;
    h->cmd_finish = h_cmd_finish;
    h->cmd_cwd = h_cmd_cwd;
    h->foreach_vm = h_foreach_vm;
    fh->plugin.fh = fh;
    fh->sync_changed = 1;
    return fh;
}

void fake_host_set_abi_minor(fake_host *fh, unsigned minor)
{
    ddm_host *h = &fh->host;
    if (fh->loaded || fh->in_init)
        fail_msg("fake-host: fake_host_set_abi_minor after fake_host_load");
    if (minor > DDM_ABI_MINOR)
        fail_msg("fake-host: ABI %u.%u is newer than this SDK (%u.%u)", (unsigned)DDM_ABI_MAJOR,
                 minor, (unsigned)DDM_ABI_MAJOR, (unsigned)DDM_ABI_MINOR);
    h->abi_minor = (uint16_t)minor;
    h->size = sizeof(ddm_host);
    h->foreach_vm = h_foreach_vm;
    /* One step per minor, newest first: what that minor appended goes. */
    if (minor < 1) {
        h->size = (uint32_t)offsetof(ddm_host, foreach_vm);
        h->foreach_vm = NULL;
    }
}

const ddm_host *fake_host_table(fake_host *fh)
{
    return &fh->host;
}

ddm_plugin *fake_host_plugin(fake_host *fh)
{
    return &fh->plugin;
}

static void drop_registrations(fake_host *fh)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++)
        reg_free(fh->regs.v[i]);
    vec_clear(&fh->regs);
}

static void drop_timers(fake_host *fh)
{
    size_t i;
    for (i = 0; i < fh->timers.n; i++)
        timer_free(fh->timers.v[i]);
    vec_clear(&fh->timers);
}

int fake_host_load(fake_host *fh, const ddm_plugin_desc *desc)
{
    int rc;
    assert_non_null(desc);
    if (fh->loaded)
        fail_msg("fake-host: one plugin per fake host");
    assert_int_equal(desc->magic, DDM_PLUGIN_MAGIC);
    assert_int_equal(desc->abi_major, DDM_ABI_MAJOR);
    assert_non_null(desc->name);
    assert_non_null(desc->init);
    if (desc->abi_minor > fh->host.abi_minor) {
        /* as the core's loader: the plugin may call members this host lacks */
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: plugin wants ABI %u.%u, core provides %u.%u",
                (unsigned)desc->abi_major, (unsigned)desc->abi_minor,
                (unsigned)fh->host.abi_major, (unsigned)fh->host.abi_minor);
        return -ENOEXEC;
    }
    fh->plugin.desc = desc;
    fh->in_init = 1;
    rc = desc->init(&fh->plugin, &fh->host);
    fh->in_init = 0;
    if (rc >= 0 && fh->conflict) {
        /* init itself succeeded: fini runs, then everything is undone */
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: plugin %s refused: it claimed a chunk type twice",
                desc->name);
        if (desc->fini)
            desc->fini(&fh->plugin);
        rc = -EEXIST;
    }
    if (rc < 0) {
        drop_registrations(fh);
        drop_timers(fh);
        h_set_data(&fh->plugin, NULL, NULL);
        return rc;
    }
    fh->loaded = 1;
    return 0;
}

void fake_host_free(fake_host *fh)
{
    size_t i;
    int view_errors;
    if (!fh)
        return;
    free(fh->client_cwd);
    fh->client_cwd = NULL;
    /* VMs go first, as in the core at shutdown */
    for (i = 0; i < fh->vms.n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!vm->gone)
            fake_host_vm_event(fh, vm, DDM_VM_GONE);
    }
    if (fh->loaded && fh->plugin.desc->fini)
        fh->plugin.desc->fini(&fh->plugin);
    drop_timers(fh);
    drop_registrations(fh);
    h_set_data(&fh->plugin, NULL, NULL);
    for (i = 0; i < fh->views.n; i++)
        view_destroy(fh->views.v[i]);
    vec_clear(&fh->views);
    for (i = 0; i < fh->cmds.n; i++) {
        ddm_cmd *cmd = fh->cmds.v[i];
        if (cmd->result)
            view_destroy(cmd->result);
        free(cmd->message);
        free(cmd);
    }
    vec_clear(&fh->cmds);
    for (i = 0; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        free(rq->data);
        free(rq);
    }
    vec_clear(&fh->requests);
    for (i = 0; i < fh->vms.n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        size_t j;
        vm_info_clear(vm);
        for (j = 0; j < vm->headlines.n; j++) {
            char **pair = vm->headlines.v[j];
            free(pair[0]);
            free(pair[1]);
            free(pair);
        }
        vec_clear(&vm->headlines);
        free(vm);
    }
    vec_clear(&fh->vms);
    for (i = 0; i < fh->config.n; i++) {
        fh_kv *kv = fh->config.v[i];
        free(kv->key);
        free(kv->value);
        free(kv);
    }
    vec_clear(&fh->config);
    types_clear(&fh->disabled);
    types_clear(&fh->enabled);
    view_errors = fh->expect_view_errors ? 0 : fh->view_errors;
    if (view_errors && !getenv("FAKE_HOST_VERBOSE"))
        fprintf(stderr, "%s", fh->log ? fh->log : "");
    free(fh->log);
    free(fh);
    if (view_errors)
        fail_msg("fake-host: %d view builder errors (see log above)", view_errors);
}
