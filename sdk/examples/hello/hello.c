/* SPDX-License-Identifier: Apache-2.0
 *
 * hello: an example third-party ddmon plugin, built out of tree against the
 * installed SDK only (pkg-config ddmon-plugin-1; see Makefile and README.md).
 *
 * What it does:
 *  - a tap on every chunk type counts chunks and bytes per VM (it owns no
 *    chunk type, so it never competes with other plugins);
 *  - per-VM data (a hello_vm) is created when a VM becomes ready and freed
 *    by the core after the VM is gone; the timer and the command reach the
 *    VMs through host->foreach_vm (SDK 1.1), so there is no list to keep;
 *  - a per-VM record view "hello" and a headline "chunks" (its text for
 *    terminals, its typed figure "chunks_count" for `ddmon vms --json`),
 *    refreshed by a timer (option hello.interval_ms, default 1000) only
 *    when changed;
 *  - a command `ddmon hello [VM]` answering with a record.
 *
 * Invariants: no glib, no core headers, no static state (everything hangs
 * off the plugin handle), no blocking. Only <ddmon/plugin.h> and libc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddmon/plugin.h>

/* Per-VM data: owned by the core once handed to vm_set_data. */
typedef struct hello_vm {
    ddm_vm *vm;
    ddm_view *view;          /* per-VM view; goes away with the VM */
    unsigned long long chunks, bytes;
    int dirty;
} hello_vm;

/* Plugin-wide state: owned by the core once handed to set_data. */
typedef struct hello_state {
    const ddm_host *host;
    unsigned long long total;
} hello_state;

/* A tap: sees every chunk (events, replies, our and others' requests).
 * @data is borrowed for the call; we only count it. */
static int hello_tap(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                     size_t len, void *ud)
{
    hello_state *st = ud;
    hello_vm *hv = st->host->vm_get_data(self, vm);
    (void)ci;
    (void)data;
    if (!hv)
        return DDM_OK; /* not a ready VM (yet) */
    hv->chunks++;
    hv->bytes += len;
    hv->dirty = 1;
    st->total++;
    return DDM_OK;
}

static void hello_vm_free(void *p)
{
    free(p);
}

static void hello_vm_event(ddm_plugin *self, ddm_vm *vm, ddm_vm_event ev, void *ud)
{
    hello_state *st = ud;
    const ddm_host *host = st->host;
    hello_vm *hv = host->vm_get_data(self, vm);

    switch (ev) {
    case DDM_VM_READY:
        if (hv)
            return;
        hv = calloc(1, sizeof *hv);
        if (!hv)
            return;
        hv->vm = vm;
        hv->view = host->view_new(self, vm, "hello", DDM_VIEW_RECORD, "Hello: DDM chunks seen");
        hv->dirty = 1;
        if (host->vm_set_data(self, vm, hv, hello_vm_free) != 0) {
            free(hv);
            return;
        }
        host->log(self, DDM_LOG_DEBUG, "tracking vm %s", host->vm_info(vm)->key);
        break;
    case DDM_VM_CHANGED:
        if (hv)
            hv->dirty = 1; /* the app name may have changed */
        break;
    case DDM_VM_GONE:
        /* The core frees hv (and the view) right after this returns; from
         * now on foreach_vm no longer visits this VM. Nothing to do. */
        break;
    }
}

static void publish(const ddm_host *host, ddm_plugin *self, hello_vm *hv)
{
    const ddm_vm_info *info = host->vm_info(hv->vm);
    char text[32];

    if (hv->view) {
        host->view_begin(hv->view);
        host->view_field_str(hv->view, "app", info->app_name);
        host->view_field_int(hv->view, "chunks", (int64_t)hv->chunks);
        host->view_field_int(hv->view, "bytes", (int64_t)hv->bytes);
        host->view_commit(hv->view);
    }
    snprintf(text, sizeof text, "%llu", hv->chunks);
    host->vm_headline(self, hv->vm, "chunks", text); /* text, for terminals */
    if (DDM_HOST_HAS(host, vm_headline_figures)) {   /* the number, typed (1.2) */
        ddm_headline_figure fig = {"count", DDM_VAL_INT, (int64_t)hv->chunks, 0};
        host->vm_headline_figures(self, hv->vm, "chunks", &fig, 1); /* "chunks_count" */
    }
    hv->dirty = 0;
}

/* foreach_vm visitor: publish a ready VM's figures if they changed. */
static int publish_dirty(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    hello_state *st = ud;
    hello_vm *hv = st->host->vm_get_data(self, vm);
    if (hv && hv->dirty)
        publish(st->host, self, hv);
    return 0; /* on to the next VM */
}

/* Timer: refresh what changed; views are cheap, but a quiet VM costs nothing. */
static int hello_timer(ddm_plugin *self, void *ud)
{
    hello_state *st = ud;
    st->host->foreach_vm(self, publish_dirty, st);
    return 1; /* keep going */
}

/* foreach_vm visitor: count the VMs we track. */
typedef struct hello_count {
    const ddm_host *host;
    int64_t n;
} hello_count;

static int count_vm(ddm_plugin *self, ddm_vm *vm, void *ud)
{
    hello_count *c = ud;
    if (c->host->vm_get_data(self, vm))
        c->n++;
    return 0;
}

/* `ddmon hello [VM]`: argv is borrowed for this call. */
static int hello_command(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv,
                         void *ud)
{
    hello_state *st = ud;
    const ddm_host *host = st->host;
    ddm_view *res;

    if (argc > 2) {
        host->cmd_finish(cmd, DDM_CMD_USAGE, "usage: ddmon hello [VM]");
        return 0;
    }
    ddm_vm *vm = argc == 2 ? host->find_vm(self, argv[1]) : NULL;
    hello_vm *hv = vm ? host->vm_get_data(self, vm) : NULL;
    if (argc == 2 && !hv) {
        host->cmd_finish(cmd, DDM_CMD_NOT_FOUND, "no such DDM VM");
        return 0;
    }
    res = host->cmd_result(cmd, DDM_VIEW_RECORD, "hello");
    if (!res)
        return -ENOMEM; /* the core finishes the command as failed */
    host->view_begin(res);
    if (hv) {
        host->view_field_str(res, "vm", host->vm_info(vm)->key);
        host->view_field_str(res, "app", host->vm_info(vm)->app_name);
        host->view_field_int(res, "chunks", (int64_t)hv->chunks);
        host->view_field_int(res, "bytes", (int64_t)hv->bytes);
    } else {
        hello_count c = {host, 0};
        host->foreach_vm(self, count_vm, &c);
        host->view_field_int(res, "vms", c.n);
        host->view_field_int(res, "chunks", (int64_t)st->total);
    }
    host->view_commit(res);
    host->cmd_finish(cmd, DDM_CMD_OK, "hello from a third-party plugin");
    return 0;
}

static int hello_init(ddm_plugin *self, const ddm_host *host)
{
    hello_state *st;
    unsigned interval;
    int rc;

    st = calloc(1, sizeof *st);
    if (!st)
        return -ENOMEM;
    st->host = host;
    host->set_data(self, st, free); /* the core frees it after fini */

    /* --plugin-opt hello.interval_ms=N: bounded, a bad value is logged. */
    interval = (unsigned)ddm_config_uint(host, self, "interval_ms", 10, 600000, 1000);
    /* On any failure, return it: the core undoes everything registered so far. */
    if ((rc = host->register_tap(self, 0, hello_tap, st, NULL)) < 0)
        return rc;
    if ((rc = host->register_vm_listener(self, hello_vm_event, st, NULL)) < 0)
        return rc;
    if ((rc = host->register_command(self, "hello", "hello [VM]",
                                     "chunks seen per VM (example plugin)", hello_command, st,
                                     NULL)) < 0)
        return rc;
    if (host->timer_add(self, interval, hello_timer, st, NULL) == 0)
        return -ENOMEM;
    return 0;
}

DDM_PLUGIN_DEFINE("hello", "1.0.0", "Apache-2.0", "example: counts DDM chunks per VM",
                  hello_init, NULL);
