/* SPDX-License-Identifier: Apache-2.0
 *
 * vminfo plugin: what a VM says about itself. Owns APNM (rename, with the
 * optional user id and package tails: passed on with host->vm_set_name),
 * WAIT ("waiting for debugger") and STAG (boot stage), and publishes one
 * record view "vminfo" per VM from vm_info (HELO, FEAT) plus those events.
 * Headline "wait" while the VM waits for a debugger. Commands live in
 * vminfo-commands.c, decoders in vminfo-parse.c.
 * Invariants: per-VM state exists from DDM_VM_READY (or the first event)
 * until the core frees it at VM gone; the view is owned by the core. With
 * a core of plugin ABI 1.6 the view is declared (vm_view_declare): a VM
 * nobody asks about and that sent no APNM, WAIT or STAG holds neither
 * view nor state, and the view made when asked shows what it would have.
 * "waiting" clears when the core reports a debugger attached through ddmon
 * (info->debugger, with DDM_VM_CHANGED): the app goes on at the debugger's
 * first packet.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/bytes.h>
#include <ddmon/plugin.h>

#include "vminfo.h"

#define FEATURES_TEXT_MAX 65536u

static void vm_state_free(void *p)
{
    free(p);
}

/* The VM's state, created (with its view) on first use. NULL only if out of memory. */
vminfo_vm *vminfo_vm_state(vminfo_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    vminfo_vm *st = h->vm_get_data(pl->self, vm);
    if (st)
        return st;
    st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->wait_reason = -1;
    if (h->vm_set_data(pl->self, vm, st, vm_state_free) != 0)
        return NULL; /* freed by the host */
    if (!pl->lazy_view)
        vminfo_view_make(pl, vm, st);
    return st;
}

void vminfo_view_make(vminfo_plugin *pl, ddm_vm *vm, vminfo_vm *st)
{
    const ddm_host *h = pl->host;
    if (st->view_made)
        return;
    st->view_made = 1;
    st->view = h->view_new(pl->self, vm, "vminfo", DDM_VIEW_RECORD, "VM information");
    if (!st->view)
        h->log(pl->self, DDM_LOG_WARNING, "cannot create the vminfo view (name taken?)");
}

/* vm_view_declare's make (1.6): somebody asks for @vm's "vminfo". */
static void make_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_vm *st = vminfo_vm_state(pl, vm);
    (void)self;
    (void)name;
    if (!st)
        return;
    vminfo_view_make(pl, vm, st);
    vminfo_publish(pl, vm); /* what READY and every change since would have shown */
}

/* vm_view_unmake's (1.6): @vm's "vminfo", made when asked, has not been
 * watched for the core's linger: it goes; the state (WAIT, STAG, what the
 * VM was asked) stays, so the next make shows the same. */
static void unmake_view(ddm_plugin *self, ddm_vm *vm, const char *name, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_vm *st = pl->host->vm_get_data(self, vm);
    (void)name;
    if (!st || !st->view)
        return;
    pl->host->view_free(st->view);
    st->view = NULL;
    st->view_made = 0;
}

/* "a, b, c" from the FEAT list (caller frees); NULL if out of memory. */
static char *features_text(const ddm_vm_info *info)
{
    size_t i, total = 1;
    char *s;
    for (i = 0; i < info->n_features && info->features; i++)
        if (info->features[i])
            total += strlen(info->features[i]) + 2;
    if (total > FEATURES_TEXT_MAX)
        total = FEATURES_TEXT_MAX;
    s = malloc(total);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (i = 0; i < info->n_features && info->features; i++) {
        size_t used = strlen(s);
        const char *f = info->features[i];
        if (!f)
            continue;
        if (used + strlen(f) + 3 > total)
            break; /* capped */
        snprintf(s + used, total - used, "%s%s", used ? ", " : "", f);
    }
    return s;
}

/* Is field @m present in a vm_info of this size? */
#define INFO_HAS(info, m) (offsetof(ddm_vm_info, m) + sizeof((info)->m) <= (info)->size)

void vminfo_publish(vminfo_plugin *pl, ddm_vm *vm)
{
    const ddm_host *h = pl->host;
    /* Declared (1.6): a VM without state has no view yet, waits for no
     * debugger (no WAIT came) and so has no headline to change. */
    vminfo_vm *st = pl->lazy_view ? h->vm_get_data(pl->self, vm) : vminfo_vm_state(pl, vm);
    const ddm_vm_info *info = h->vm_info(vm);
    ddm_view *v;
    char stage[5];
    char *feats;

    if (!st || !info)
        return;
    if (!st->view) {
        h->vm_headline(pl->self, vm, "wait", st->waiting ? "waiting for debugger" : NULL);
        return;
    }
    v = st->view;
    h->view_begin(v);
    h->view_field_int(v, "pid", info->pid);
    h->view_field_str(v, "app", info->app_name);
    if (INFO_HAS(info, package_name))
        h->view_field_str(v, "package", info->package_name);
    if (info->user_id >= 0)
        h->view_field_int(v, "user id", info->user_id);
    else
        h->view_field_str(v, "user id", NULL);
    h->view_field_str(v, "vm ident", info->vm_ident);
    h->view_field_str(v, "abi", info->abi);
    h->view_field_str(v, "jvm flags", info->jvm_flags);
    if (info->native_debuggable >= 0)
        h->view_field_bool(v, "native debuggable", info->native_debuggable != 0);
    else
        h->view_field_str(v, "native debuggable", NULL);
    h->view_field_int(v, "protocol version", info->protocol_version);
    if (INFO_HAS(info, features)) {
        feats = features_text(info);
        h->view_field_str(v, "features", feats ? feats : "");
        free(feats);
    }
    /* The app goes on as soon as a debugger's first packet reaches it. */
    if (INFO_HAS(info, debugger) && info->debugger)
        st->waiting = 0;
    h->view_field_bool(v, "waiting", st->waiting);
    if (st->waiting && st->wait_reason > 0) {
        char text[48];
        snprintf(text, sizeof text, "waiting for debugger (reason %d)", st->wait_reason);
        h->view_field_str(v, "debugger", text);
    } else {
        h->view_field_str(v, "debugger", st->waiting ? "waiting for debugger"
                                         : INFO_HAS(info, debugger) && info->debugger ? "attached" : NULL);
    }
    /* STAG events win; before any, the HELO tail (API 34) says where boot is. */
    if (st->has_stage)
        h->view_field_str(v, "boot stage", ddm_chunk_name(st->stage, stage));
    else if (INFO_HAS(info, boot_stage) && info->boot_stage != 0)
        h->view_field_str(v, "boot stage", ddm_chunk_name(info->boot_stage, stage));
    else
        h->view_field_str(v, "boot stage", NULL);
    h->view_field_str(v, "connection", info->key);
    h->view_commit(v);
    h->vm_headline(pl->self, vm, "wait", st->waiting ? "waiting for debugger" : NULL);
}

/* --------------------------------------------------------------- chunks */

static int on_apnm(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_apnm a;
    const char *note;
    int rc = vminfo_parse_apnm(data, len, &a, &note);
    if (rc != 0) {
        pl->host->log(self, DDM_LOG_WARNING, "APNM of %zu bytes: the name does not fit; ignored",
                      len);
        return rc;
    }
    if (note)
        pl->host->log(self, DDM_LOG_INFO, "APNM: %s", note);
    pl->host->log(self, DDM_LOG_DEBUG, "APNM name \"%s\" user %d package \"%s\"", a.app_name,
                  (int)a.user_id, a.package_name ? a.package_name : "");
    rc = pl->host->vm_set_name(self, vm, a.app_name, a.package_name, a.user_id);
    if (rc != 0)
        pl->host->log(self, DDM_LOG_INFO, "vm_set_name failed: %d", rc);
    vminfo_apnm_clear(&a);
    vminfo_publish(pl, vm);
    return DDM_OK;
}

static int on_wait(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_vm *st = vminfo_vm_state(pl, vm);
    int reason = vminfo_parse_wait(data, len);
    if (!st)
        return -ENOMEM;
    if (reason < 0)
        pl->host->log(self, DDM_LOG_INFO, "WAIT without a reason byte: taken as waiting");
    st->waiting = 1;
    st->wait_reason = reason;
    pl->host->log(self, DDM_LOG_MESSAGE, "VM %s waits for a debugger",
                  pl->host->vm_info(vm)->key ? pl->host->vm_info(vm)->key : "?");
    vminfo_publish(pl, vm);
    return DDM_OK;
}

static int on_stag(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    vminfo_plugin *pl = ud;
    vminfo_vm *st = vminfo_vm_state(pl, vm);
    uint32_t stage;
    if (!st)
        return -ENOMEM;
    if (vminfo_parse_stag(data, len, &stage) != 0) {
        pl->host->log(self, DDM_LOG_WARNING, "STAG of %zu bytes (need 4); ignored", len);
        return -EBADMSG;
    }
    st->has_stage = 1;
    st->stage = stage;
    vminfo_publish(pl, vm);
    return DDM_OK;
}

static void on_vm(ddm_plugin *self, ddm_vm *vm, ddm_vm_event event, void *ud)
{
    vminfo_plugin *pl = ud;
    if (event == DDM_VM_READY || event == DDM_VM_CHANGED)
        vminfo_publish(pl, vm);
    /* DDM_VM_GONE: the core frees our per-VM state and the view */
}

/* ----------------------------------------------------------- descriptor */


static int vminfo_init(ddm_plugin *self, const ddm_host *host)
{
    vminfo_plugin *pl = calloc(1, sizeof *pl);
    int rc;
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    host->set_data(self, pl, free);
    pl->gc_timeout_ms = (unsigned)ddm_config_uint(host, self, "gc_timeout", 0, 600000ul, VMINFO_GC_TIMEOUT_MS);
    if ((rc = host->register_chunk(self, VMINFO_CHUNK_APNM, on_apnm, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, VMINFO_CHUNK_WAIT, on_wait, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, VMINFO_CHUNK_STAG, on_stag, pl, NULL)) != 0 ||
        (rc = host->register_vm_listener(self, on_vm, pl, NULL)) != 0 ||
        (rc = vminfo_commands_register(pl)) != 0)
        return rc;
    if (DDM_HOST_HAS(host, vm_view_declare)) {
        if ((rc = host->vm_view_declare(self, "vminfo", make_view, pl, NULL)) != 0)
            return rc;
        if (DDM_HOST_HAS(host, vm_view_unmake) &&
            (rc = host->vm_view_unmake(self, "vminfo", unmake_view)) != 0)
            return rc;
        pl->lazy_view = 1;
    }
    return 0;
}

DDM_PLUGIN_DEFINE("vminfo", "1.0", "Apache-2.0",
                  "VM identity (APNM, WAIT, STAG, FEAT) and the exit and gc commands",
                  vminfo_init, NULL);
