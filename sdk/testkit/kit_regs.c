/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's registrations: chunk owners (plain and, since 1.2, stream
 * owners: one owner per type either way), taps, VM listeners, commands and
 * (1.8) stopping hooks, which only init may make, and what a test asks
 * about them; fake_host_stopping runs the stopping hooks.
 */
#include "kit-private.h"

void fh_reg_free(fh_reg *r)
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

/* Record a registration that passed its checks; the ud is the record's now. */
static fh_reg *reg_add(fake_host *fh, fh_reg_kind kind, void *ud, ddm_free_fn ud_free)
{
    fh_reg *r = xcalloc(1, sizeof *r);
    r->kind = kind;
    r->ud = ud;
    r->ud_free = ud_free;
    vec_push(&fh->regs, r);
    return r;
}

int fh_register_chunk(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
                      ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, "register_chunk", ud, ud_free);
    if (err)
        return err;
    if (!fn || type == 0 || fh_find_owner(fh, type)) {
        char n[5];
        if (fn && type)
            fh->conflict = 1; /* as the core: refused even if init ignores it */
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_chunk %s refused",
                ddm_chunk_name(type, n));
        if (ud_free)
            ud_free(ud);
        return fn && type ? -EEXIST : -EINVAL;
    }
    r = reg_add(fh, FH_REG_OWNER, ud, ud_free);
    r->type = type;
    r->chunk_fn = fn;
    return 0;
}

int fh_register_chunk_stream(ddm_plugin *self, uint32_t type, const ddm_stream_ops *ops,
                             void *ud, ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    char n[5];
    int err;
    /* As the core: the arguments first (-EINVAL), then the phase (-EPERM). */
    if (!ops || !ops->begin || !ops->data || !ops->end || type == 0) {
        fh_logf(fh, DDM_LOG_WARNING,
                "fake-host: register_chunk_stream %s refused: every op must be set",
                ddm_chunk_name(type, n));
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    err = check_init_phase(fh, "register_chunk_stream", ud, ud_free);
    if (err)
        return err;
    if (fh_find_owner(fh, type)) {
        fh->conflict = 1; /* as register_chunk: the plugin is refused */
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_chunk_stream %s refused: already owned",
                ddm_chunk_name(type, n));
        if (ud_free)
            ud_free(ud);
        return -EEXIST;
    }
    r = reg_add(fh, FH_REG_STREAM, ud, ud_free);
    r->type = type;
    r->stream = *ops;
    return 0;
}

int fh_register_tap(ddm_plugin *self, uint32_t type, ddm_chunk_fn fn, void *ud,
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
    r = reg_add(fh, FH_REG_TAP, ud, ud_free);
    r->type = type;
    r->chunk_fn = fn;
    return 0;
}

/* A VM listener of @kind (DDM VMs, or plain JVMs since 1.2): only in init,
 * @fn required, as the core. */
static int register_listener(ddm_plugin *self, fh_reg_kind kind, const char *what, ddm_vm_fn fn,
                             void *ud, ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err = check_init_phase(fh, what, ud, ud_free);
    if (err)
        return err;
    if (!fn) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    r = reg_add(fh, kind, ud, ud_free);
    r->vm_fn = fn;
    return 0;
}

int fh_register_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud, ddm_free_fn ud_free)
{
    return register_listener(self, FH_REG_LISTENER, "register_vm_listener", fn, ud, ud_free);
}

int fh_register_plain_vm_listener(ddm_plugin *self, ddm_vm_fn fn, void *ud,
                                  ddm_free_fn ud_free)
{
    return register_listener(self, FH_REG_PLAIN_LISTENER, "register_plain_vm_listener", fn, ud,
                             ud_free);
}

/* ------------------------------------------------ stopping hooks (1.8) */

/* As the core: @fn required (-EINVAL), only in init (-EPERM). */
int fh_register_stopping(ddm_plugin *self, ddm_stopping_fn fn, void *ud, ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    int err;
    if (!fn) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    if ((err = check_init_phase(fh, "register_stopping", ud, ud_free)) != 0)
        return err;
    r = reg_add(fh, FH_REG_STOPPING, ud, ud_free);
    r->stopping = fn;
    return 0;
}

int fake_host_stopping(fake_host *fh)
{
    size_t i;
    int n = 0;
    if (fh->stopping_told || !fh->loaded)
        return 0;
    fh->stopping_told = 1;
    /* registration order; a hook cannot register (only init may) */
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_STOPPING) {
            r->stopping(&fh->plugin, r->ud);
            n++;
        }
    }
    return n;
}

int fake_host_n_stopping_hooks(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++)
        if (((fh_reg *)fh->regs.v[i])->kind == FH_REG_STOPPING)
            n++;
    return n;
}

/* ---------------------------------------------- declared views (1.6) */

int fh_vm_view_declare(ddm_plugin *self, const char *name, ddm_view_make_fn make, void *ud,
                       ddm_free_fn ud_free)
{
    fake_host *fh = host_of(self);
    fh_reg *r;
    size_t i;
    int err;
    /* As the core: the arguments first (-EINVAL), then the phase (-EPERM). */
    if (!make || !name || !*name || strlen(name) > DDM_VIEW_MAX_STRING) {
        if (ud_free)
            ud_free(ud);
        return -EINVAL;
    }
    err = check_init_phase(fh, "vm_view_declare", ud, ud_free);
    if (err)
        return err;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *o = fh->regs.v[i];
        if (o->kind == FH_REG_VIEW_DECL && strcmp(o->name, name) == 0) {
            if (ud_free)
                ud_free(ud);
            return -EEXIST;
        }
    }
    r = reg_add(fh, FH_REG_VIEW_DECL, ud, ud_free);
    r->name = xstrdup(name);
    r->view_make = make;
    return 0;
}

static int view_made(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i;
    for (i = 0; i < fh->views.n; i++) {
        ddm_view *v = fh->views.v[i];
        if (v->vm == vm && strcmp(v->name, name) == 0)
            return 1;
    }
    return 0;
}

void fh_make_declared(fake_host *fh, ddm_vm *vm, const char *name)
{
    size_t i, j;
    if (fh->making || !fh->loaded)
        return;
    fh->making++;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind != FH_REG_VIEW_DECL || (name && strcmp(r->name, name) != 0))
            continue;
        for (j = 0; j < fh->vms.n; j++) {
            ddm_vm *v = fh->vms.v[j];
            if ((vm && v != vm) || !v->ready || v->gone || !v->info.ddm || v->plain)
                continue;
            if (!view_made(fh, v, r->name))
                r->view_make(&fh->plugin, v, r->name, r->ud);
        }
    }
    fh->making--;
}

int fh_vm_view_unmake(ddm_plugin *self, const char *name, ddm_view_unmake_fn unmake)
{
    fake_host *fh = host_of(self);
    size_t i;
    int err;
    if (!unmake || !name)
        return -EINVAL;
    err = check_init_phase(fh, "vm_view_unmake", NULL, NULL);
    if (err)
        return err;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_VIEW_DECL && strcmp(r->name, name) == 0) {
            if (r->view_unmake)
                return -EEXIST;
            r->view_unmake = unmake;
            return 0;
        }
    }
    return -EINVAL; /* not declared */
}

int fake_host_unmake_unwatched(fake_host *fh)
{
    /* The views to take back first: an unmake frees views (the vector moves).
     * Every view of a declared name with an unmake, however it was made (a
     * declaration's make, or the plugin itself when data came), as the
     * core; one the plugin kept is asked again at the next call. */
    ptrvec todo = {0};
    size_t i, j;
    int n = 0;
    for (i = 0; i < fh->views.n; i++) {
        ddm_view *v = fh->views.v[i];
        if (!v->vm || !v->vm->ready || v->vm->gone ||
            (v->watchers >= 0 ? v->watchers : fh->default_watchers) > 0)
            continue;
        for (j = 0; j < fh->regs.n; j++) {
            fh_reg *r = fh->regs.v[j];
            if (r->kind == FH_REG_VIEW_DECL && r->view_unmake && strcmp(r->name, v->name) == 0) {
                vec_push(&todo, v->vm);
                vec_push(&todo, r);
                break;
            }
        }
    }
    for (i = 0; i + 1 < todo.n; i += 2) {
        fh_reg *r = todo.v[i + 1];
        r->view_unmake(&fh->plugin, todo.v[i], r->name, r->ud);
        n++;
    }
    free(todo.v);
    return n;
}

fh_reg *fh_find_command(fake_host *fh, const char *name)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_COMMAND && strcmp(r->name, name) == 0)
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

int fh_register_command(ddm_plugin *self, const char *name, const char *usage,
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
    if (command_reserved(name) || fh_find_command(fh, name)) {
        fh_logf(fh, DDM_LOG_WARNING, "fake-host: register_command '%s' refused: name taken", name);
        if (ud_free)
            ud_free(ud);
        return -EEXIST;
    }
    r = reg_add(fh, FH_REG_COMMAND, ud, ud_free);
    r->name = xstrdup(name);
    r->usage = xstrdup(usage);
    r->summary = xstrdup(summary);
    r->cmd_fn = fn;
    return 0;
}

fh_reg *fh_find_owner(fake_host *fh, uint32_t type)
{
    size_t i;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if ((r->kind == FH_REG_OWNER || r->kind == FH_REG_STREAM) && r->type == type)
            return r;
    }
    return NULL;
}

int fake_host_owns(fake_host *fh, uint32_t type)
{
    return fh_find_owner(fh, type) != NULL;
}

int fake_host_owns_stream(fake_host *fh, uint32_t type)
{
    fh_reg *r = fh_find_owner(fh, type);
    return r != NULL && r->kind == FH_REG_STREAM;
}

int fake_host_n_taps(fake_host *fh, uint32_t type)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == FH_REG_TAP && r->type == type)
            n++;
    }
    return n;
}

int fake_host_n_vm_listeners(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++)
        if (((fh_reg *)fh->regs.v[i])->kind == FH_REG_LISTENER)
            n++;
    return n;
}

int fake_host_n_plain_vm_listeners(fake_host *fh)
{
    size_t i;
    int n = 0;
    for (i = 0; i < fh->regs.n; i++)
        if (((fh_reg *)fh->regs.v[i])->kind == FH_REG_PLAIN_LISTENER)
            n++;
    return n;
}

int fake_host_has_command(fake_host *fh, const char *name)
{
    return fh_find_command(fh, name) != NULL;
}
