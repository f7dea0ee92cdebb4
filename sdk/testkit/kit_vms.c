/* SPDX-License-Identifier: Apache-2.0
 *
 * The test kit's fake VMs: their info, events (READY, CHANGED, GONE, and
 * what GONE tears down), per-VM data, names, headlines, lookup and walk.
 */
#include <string.h>

#include "kit-private.h"

enum { S_KEY, S_TRANSPORT, S_DEVICE, S_IDENT, S_APP, S_ABI, S_FLAGS, S_PKG, S_N };

void fh_vm_info_clear(ddm_vm *vm)
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
    fh_vm_info_clear(vm);
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
    if (vm->plain)
        vm->info.ddm = 0; /* a plain JVM stays one */
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

/* As the core: DDM listeners hear DDM VMs, plain listeners (1.2) plain JVMs. */
static void run_listeners(fake_host *fh, ddm_vm *vm, ddm_vm_event ev)
{
    size_t i;
    fh_reg_kind kind = vm->plain ? FH_REG_PLAIN_LISTENER : FH_REG_LISTENER;
    for (i = 0; i < fh->regs.n; i++) {
        fh_reg *r = fh->regs.v[i];
        if (r->kind == kind)
            r->vm_fn(&fh->plugin, vm, ev, r->ud);
    }
}

ddm_vm *fake_host_add_plain_vm(fake_host *fh, const ddm_vm_info *info)
{
    ddm_vm_info def;
    ddm_vm *vm;
    if (!info) {
        memset(&def, 0, sizeof def);
        def.user_id = -1;
        def.native_debuggable = -1;
        info = &def;
    }
    vm = fake_host_add_vm(fh, info);
    vm->info.ddm = 0;
    vm->plain = 1;
    return vm;
}

void fake_host_set_debugger(fake_host *fh, ddm_vm *vm, int attached)
{
    assert_non_null(vm);
    if (vm->gone)
        fail_msg("fake-host: debugger change for a VM that is gone");
    attached = attached != 0;
    if (vm->info.debugger == attached)
        return;
    vm->info.debugger = attached;
    if (vm->ready)
        run_listeners(fh, vm, DDM_VM_CHANGED);
}


void fake_host_vm_event(fake_host *fh, ddm_vm *vm, ddm_vm_event event)
{
    size_t i;
    assert_non_null(vm);
    if (vm->gone)
        fail_msg("fake-host: event %d for a VM that is gone", (int)event);
    if (event == DDM_VM_READY)
        vm->ready = 1;
    if (event == DDM_VM_READY && !vm->plain && fh->default_watchers > 0)
        fh_make_declared(fh, vm, NULL); /* as the core: views a watch counts, before READY */
    if (event != DDM_VM_GONE) {
        run_listeners(fh, vm, event);
        return;
    }
    /* pending requests end with VM_GONE, exactly once */
    fh_jdwp_vm_gone(fh, vm);
    for (i = 0; i < fh->requests.n; i++) {
        fake_request *rq = fh->requests.v[i];
        if (rq->vm == vm && !rq->completed) {
            ddm_reply r;
            memset(&r, 0, sizeof r);
            r.status = DDM_REPLY_VM_GONE;
            fh_complete(fh, rq, &r);
        }
    }
    vm->ready = 0;
    run_listeners(fh, vm, DDM_VM_GONE);
    vm->gone = 1;
    if (vm->data_free && vm->data)
        vm->data_free(vm->data);
    vm->data = NULL;
    vm->data_free = NULL;
    fh_vm_metrics_clear(vm); /* its series go with it (1.3) */
    for (i = fh->views.n; i > 0; i--) {
        ddm_view *v = fh->views.v[i - 1];
        if (v->vm == vm) {
            vec_remove_at(&fh->views, i - 1);
            fh_view_destroy(v);
        }
    }
}

const ddm_vm_info *fh_vm_info(ddm_vm *vm)
{
    assert_non_null(vm);
    return &vm->info;
}

int fh_vm_set_name(ddm_plugin *self, ddm_vm *vm, const char *app_name,
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

int fh_vm_set_data(ddm_plugin *self, ddm_vm *vm, void *data, ddm_free_fn data_free)
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

void *fh_vm_get_data(ddm_plugin *self, ddm_vm *vm)
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

/* "notes" for "com.example.notes": @name ends with "." @spec (1.2). */
static int has_dot_suffix(const char *name, const char *spec)
{
    size_t n = name ? strlen(name) : 0, m = strlen(spec);
    return n > m && name[n - m - 1] == '.' && strcmp(name + n - m, spec) == 0;
}

/* @vm's key ("" if a fake_host_set_vm_info left it none). */
static const char *key_of(const ddm_vm *vm)
{
    return vm->info.key ? vm->info.key : "";
}

/* Is @vm one that @spec names (in the pass @suffix says)? */
static int spec_names(fake_host *fh, ddm_vm *vm, const char *spec, int suffix)
{
    if (vm->gone)
        return 0;
    return suffix ? fh->host.abi_minor >= 2 && has_dot_suffix(vm->info.app_name, spec)
                  : vm_matches(vm, spec);
}

/* As the core: exact matches first, else a unique suffix; *@n how many
 * matched, and (when @all is not NULL) all of them in *@all, by key as the
 * core lists them (the caller frees the array, not the VMs). */
static ddm_vm *resolve(fake_host *fh, const char *spec, size_t *n, ddm_vm ***all)
{
    ddm_vm *found = NULL;
    size_t i, j, k;
    int suffix;
    *n = 0;
    if (all)
        *all = NULL;
    if (!spec || !*spec)
        return NULL;
    for (suffix = 0; suffix < 2; suffix++) {
        for (i = 0; i < fh->vms.n; i++)
            if (spec_names(fh, fh->vms.v[i], spec, suffix)) {
                found = fh->vms.v[i];
                ++*n;
            }
        if (*n > 0)
            break; /* this pass found them: no suffix pass */
    }
    if (*n == 1 || !all || *n == 0)
        return *n == 1 ? found : NULL;
    *all = xcalloc(*n, sizeof(ddm_vm *));
    for (i = 0, k = 0; i < fh->vms.n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!spec_names(fh, vm, spec, suffix))
            continue;
        for (j = k++; j > 0 && strcmp(key_of((*all)[j - 1]), key_of(vm)) > 0; j--)
            (*all)[j] = (*all)[j - 1];
        (*all)[j] = vm;
    }
    return NULL;
}

ddm_vm *fh_find_vm(ddm_plugin *self, const char *spec)
{
    size_t n;
    return resolve(host_of(self), spec, &n, NULL);
}

/* The core's message for a @spec that @n VMs (@all, by key) match: the
 * first DDM_KIT_RESOLVE_LIST_MAX of them, as "KEY (APP, pid PID)", then
 * how many more, then how to name one (by key only when their pids do not
 * tell them apart). Into @msg (@len bytes; what does not fit is cut). */
#define DDM_KIT_RESOLVE_LIST_MAX 10 /* the core's DDM_MONITOR_RESOLVE_LIST_MAX */
static void ambiguous_message(char *msg, size_t len, const char *spec, ddm_vm **all, size_t n)
{
    size_t i, j, at;
    int pids_tell = 1;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(msg + at, len - at, __VA_ARGS__);                                        \
        at = w_ < 0 || (size_t)w_ >= len - at ? len - 1 : at + (size_t)w_;                         \
    } while (0)
    at = 0;
    msg[0] = '\0';
    PUT("'%s' matches %zu VMs: ", spec, n);
    for (i = 0; i < n && i < DDM_KIT_RESOLVE_LIST_MAX; i++) {
        const ddm_vm_info *in = &all[i]->info;
        const char *app = in->app_name ? in->app_name : in->package_name;
        PUT("%s%s (%s, pid %" PRIu32 ")", i ? ", " : "", key_of(all[i]), app ? app : "no name",
            in->pid);
    }
    if (n > DDM_KIT_RESOLVE_LIST_MAX)
        PUT(", and %zu more", n - DDM_KIT_RESOLVE_LIST_MAX);
    for (i = 0; i < n && pids_tell; i++) {
        pids_tell = all[i]->info.pid != 0;
        for (j = i + 1; j < n && pids_tell; j++)
            pids_tell = all[j]->info.pid != all[i]->info.pid;
    }
    PUT("%s", pids_tell ? "; name one by pid or key"
                        : "; their pids do not tell them apart: name one by key");
#undef PUT
}

ddm_vm *fh_cmd_find_vm(ddm_cmd *cmd, const char *spec)
{
    char msg[2048];
    size_t n;
    ddm_vm *vm, **all;
    assert_non_null(cmd);
    assert_non_null(spec);
    vm = resolve(cmd->fh, spec, &n, &all);
    if (vm)
        return vm;
    /* The core's wording (core/session/monitor.c). */
    if (n == 0)
        snprintf(msg, sizeof msg, "no VM matches '%s' (try 'ddmon vms')", spec);
    else
        ambiguous_message(msg, sizeof msg, spec, all, n);
    free(all);
    fh_cmd_finish(cmd, DDM_CMD_NOT_FOUND, msg);
    return NULL;
}

int fh_vm_headline(ddm_plugin *self, ddm_vm *vm, const char *label, const char *text)
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
    if (vm->headlines.n >= DDM_HEADLINE_LABELS_MAX)
        return -ENOSPC; /* a new label past the VM's cap, as the core */
    pair = xcalloc(2, sizeof(char *));
    pair[0] = xstrdup(label);
    pair[1] = xstrdup(text);
    vec_push(&vm->headlines, pair);
    return 0;
}

void fh_vm_figures_clear(ddm_vm *vm)
{
    size_t i;
    for (i = 0; i < vm->figures.n; i++) {
        char **f = vm->figures.v[i];
        free(f[0]);
        free(f[1]);
        free(f[2]);
        free(f);
    }
    vec_clear(&vm->figures);
}

/* The number of labels with figures on @vm, and whether @label is one. */
static size_t figure_labels(const ddm_vm *vm, const char *label, int *has_label)
{
    size_t i, j, n = 0;
    *has_label = 0;
    for (i = 0; i < vm->figures.n; i++) {
        const char *l = ((char **)vm->figures.v[i])[1];
        for (j = 0; j < i; j++)
            if (strcmp(((char **)vm->figures.v[j])[1], l) == 0)
                break;
        if (j == i)
            n++; /* first entry of its label */
        if (strcmp(l, label) == 0)
            *has_label = 1;
    }
    return n;
}

/* As the core: names of [a-z0-9_], INT or DOUBLE, at most
 * DDM_HEADLINE_FIGURES_MAX; the label's figures are replaced; a new label
 * past DDM_HEADLINE_LABELS_MAX on the VM is -ENOSPC. */
int fh_vm_headline_figures(ddm_plugin *self, ddm_vm *vm, const char *label,
                           const ddm_headline_figure *figs, size_t n)
{
    size_t i;
    char buf[64];
    (void)host_of(self);
    assert_non_null(vm);
    assert_non_null(label);
    if (vm->gone)
        return -ENOENT;
    if (!*label)
        return -EINVAL;
    if (strlen(label) > DDM_HEADLINE_LABEL_MAX)
        return -EMSGSIZE;
    if (n > DDM_HEADLINE_FIGURES_MAX || (n > 0 && !figs))
        return -EINVAL;
    for (i = 0; i < n; i++) {
        const char *p = figs[i].name;
        if (!p || !*p || strlen(p) > DDM_HEADLINE_FIGURE_NAME_MAX)
            return -EINVAL;
        for (; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
                return -EINVAL;
        if (figs[i].type != DDM_VAL_INT && figs[i].type != DDM_VAL_DOUBLE)
            return -EINVAL;
    }
    if (n > 0) {
        int has_label;
        if (figure_labels(vm, label, &has_label) >= DDM_HEADLINE_LABELS_MAX && !has_label)
            return -ENOSPC;
    }
    for (i = vm->figures.n; i-- > 0;) {
        char **f = vm->figures.v[i];
        if (strcmp(f[1], label) == 0) {
            free(f[0]);
            free(f[1]);
            free(f[2]);
            free(f);
            vec_remove_at(&vm->figures, i);
        }
    }
    for (i = 0; i < n; i++) {
        char **f = xcalloc(3, sizeof(char *));
        size_t len = strlen(label) + 1 + strlen(figs[i].name) + 1;
        f[0] = xcalloc(len, 1);
        snprintf(f[0], len, "%s_%s", label, figs[i].name);
        f[1] = xstrdup(label);
        if (figs[i].type == DDM_VAL_INT)
            snprintf(buf, sizeof buf, "%lld", (long long)figs[i].i);
        else
            snprintf(buf, sizeof buf, "%.17g", figs[i].d);
        f[2] = xstrdup(buf);
        vec_push(&vm->figures, f);
    }
    return 0;
}

int fake_host_headline_figure(fake_host *fh, ddm_vm *vm, const char *key, double *value)
{
    size_t i;
    (void)fh;
    for (i = 0; i < vm->figures.n; i++) {
        char **f = vm->figures.v[i];
        if (strcmp(f[0], key) == 0) {
            if (value)
                *value = strtod(f[2], NULL);
            return 1;
        }
    }
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
size_t fh_foreach_vm(ddm_plugin *self, ddm_vm_visit_fn fn, void *ud)
{
    fake_host *fh = host_of(self);
    size_t i, n = fh->vms.n, calls = 0;
    assert_non_null(fn);
    for (i = 0; i < n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        if (!vm->ready || vm->gone || !vm->info.ddm || vm->plain)
            continue;
        calls++;
        if (fn(self, vm, ud) != 0)
            break;
    }
    return calls;
}
