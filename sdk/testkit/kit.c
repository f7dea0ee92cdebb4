/* SPDX-License-Identifier: Apache-2.0
 *
 * libddmon-plugin-test: the in-memory ddm_host for plugin unit tests (see
 * <ddmon/testkit.h> for what it models). Part of the SDK: it sees only
 * sdk/include and libc (and cmocka to fail the test), never the core.
 * This file owns the host table and the lifecycle: fake_host_new, the ABI
 * minor a test picks, loading the one plugin and fake_host_free, which
 * frees everything the other kit_*.c files hold. kit-private.h says which
 * file owns what.
 */
#include "kit-private.h"

/* The entries ABI minors 1 and later appended to the table, all set: the
 * newest table (fake_host_new), which fake_host_set_abi_minor then cuts
 * back to an older minor's. */
static void set_appended_entries(ddm_host *h)
{
    h->foreach_vm = fh_foreach_vm;
    h->register_chunk_stream = fh_register_chunk_stream;
    h->cmd_progress = fh_cmd_progress;
    h->cmd_out_dir = fh_cmd_out_dir;
    h->vm_headline_figures = fh_vm_headline_figures;
    h->register_plain_vm_listener = fh_register_plain_vm_listener;
    h->foreach_plain_vm = fh_foreach_plain_vm;
    h->jdwp_request = fh_jdwp_request;
    h->cmd_find_vm = fh_cmd_find_vm;
    h->cmd_cancelled = fh_cmd_cancelled;
    h->register_metric = fh_register_metric;
    h->vm_metric = fh_vm_metric;
    h->watch_generation = fh_watch_generation;
    h->timer_wake_on_watch = fh_timer_wake_on_watch;
    h->vm_view_declare = fh_vm_view_declare;
    h->vm_list_watchers = fh_vm_list_watchers;
    h->vm_view_unmake = fh_vm_view_unmake;
    h->timer_wake = fh_timer_wake;
    h->register_stopping = fh_register_stopping;
}

fake_host *fake_host_new(void)
{
    fake_host *fh = xcalloc(1, sizeof *fh);
    ddm_host *h = &fh->host;
    h->size = sizeof(ddm_host);
    h->abi_major = DDM_ABI_MAJOR;
    h->abi_minor = DDM_ABI_MINOR;
    h->log = fh_log;
    h->set_data = fh_set_data;
    h->get_data = fh_get_data;
    h->config_get = fh_config_get;
    h->register_chunk = fh_register_chunk;
    h->register_tap = fh_register_tap;
    h->register_vm_listener = fh_register_vm_listener;
    h->register_command = fh_register_command;
    h->chunk_enabled = fh_chunk_enabled;
    h->request = fh_request;
    h->vm_info = fh_vm_info;
    h->vm_set_name = fh_vm_set_name;
    h->vm_set_data = fh_vm_set_data;
    h->vm_get_data = fh_vm_get_data;
    h->find_vm = fh_find_vm;
    h->vm_headline = fh_vm_headline;
    h->timer_add = fh_timer_add;
    h->timer_remove = fh_timer_remove;
    h->view_new = fh_view_new;
    h->view_set_columns = fh_view_set_columns;
    h->view_begin = fh_view_begin;
    h->view_row = fh_view_row;
    h->view_str = fh_view_str;
    h->view_int = fh_view_int;
    h->view_double = fh_view_double;
    h->view_bool = fh_view_bool;
    h->view_field_str = fh_view_field_str;
    h->view_field_int = fh_view_field_int;
    h->view_field_double = fh_view_field_double;
    h->view_field_bool = fh_view_field_bool;
    h->view_blob = fh_view_blob;
    h->view_commit = fh_view_commit;
    h->view_free = fh_view_free;
    h->view_watchers = fh_view_watchers;
    h->cmd_result = fh_cmd_result;
    h->cmd_finish = fh_cmd_finish;
    h->cmd_cwd = fh_cmd_cwd;
    set_appended_entries(h);
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
    set_appended_entries(h);
    /* One step per minor, newest first: what that minor appended goes. */
    if (minor < 8) {
        h->size = (uint32_t)offsetof(ddm_host, register_stopping);
        h->register_stopping = NULL;
    }
    if (minor < 7) {
        h->size = (uint32_t)offsetof(ddm_host, timer_wake);
        h->timer_wake = NULL;
    }
    if (minor < 6) {
        h->size = (uint32_t)offsetof(ddm_host, vm_view_declare);
        h->vm_view_declare = NULL;
        h->vm_list_watchers = NULL;
        h->vm_view_unmake = NULL;
    }
    if (minor < 5) {
        h->size = (uint32_t)offsetof(ddm_host, timer_wake_on_watch);
        h->timer_wake_on_watch = NULL;
    }
    if (minor < 4) {
        h->size = (uint32_t)offsetof(ddm_host, watch_generation);
        h->watch_generation = NULL;
    }
    if (minor < 3) {
        h->size = (uint32_t)offsetof(ddm_host, register_metric);
        h->register_metric = NULL;
        h->vm_metric = NULL;
    }
    if (minor < 2) {
        h->cmd_cancelled = NULL;
        h->cmd_find_vm = NULL;
        h->register_plain_vm_listener = NULL;
        h->foreach_plain_vm = NULL;
        h->jdwp_request = NULL;
        h->size = (uint32_t)offsetof(ddm_host, register_chunk_stream);
        h->register_chunk_stream = NULL;
        h->cmd_progress = NULL;
        h->cmd_out_dir = NULL;
        h->vm_headline_figures = NULL;
    }
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
        fh_reg_free(fh->regs.v[i]);
    vec_clear(&fh->regs);
}

static void drop_timers(fake_host *fh)
{
    size_t i;
    for (i = 0; i < fh->timers.n; i++)
        fh_timer_free(fh->timers.v[i]);
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
        fh_set_data(&fh->plugin, NULL, NULL);
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
    free(fh->client_out_dir);
    fh->client_out_dir = NULL;
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
    fh_set_data(&fh->plugin, NULL, NULL);
    for (i = 0; i < fh->views.n; i++)
        fh_view_destroy(fh->views.v[i]);
    vec_clear(&fh->views);
    for (i = 0; i < fh->cmds.n; i++) {
        ddm_cmd *cmd = fh->cmds.v[i];
        if (cmd->result)
            fh_view_destroy(cmd->result);
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
    fh_jdwp_free_all(fh);
    fh_metrics_free_all(fh);
    for (i = 0; i < fh->vms.n; i++) {
        ddm_vm *vm = fh->vms.v[i];
        size_t j;
        fh_vm_info_clear(vm);
        for (j = 0; j < vm->headlines.n; j++) {
            char **pair = vm->headlines.v[j];
            free(pair[0]);
            free(pair[1]);
            free(pair);
        }
        vec_clear(&vm->headlines);
        fh_vm_figures_clear(vm);
        fh_vm_metrics_clear(vm);
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
    fh_types_clear(&fh->disabled);
    fh_types_clear(&fh->enabled);
    view_errors = fh->expect_view_errors ? 0 : fh->view_errors;
    if (view_errors && !getenv("FAKE_HOST_VERBOSE"))
        fprintf(stderr, "%s", fh->log ? fh->log : "");
    free(fh->log);
    free(fh);
    if (view_errors)
        fail_msg("fake-host: %d view builder errors (see log above)", view_errors);
}
