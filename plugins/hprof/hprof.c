/* SPDX-License-Identifier: Apache-2.0
 *
 * The hprof plugin: heap dumps ("Dump HPROF file" in DDMS).
 *  - It owns HPDS as a stream (SDK 1.2): a dump of gigabytes arrives in
 *    pieces and goes to disk as it comes (hprof_dump.c), never held.
 *  - It owns HPDU replies nobody waits for (logged).
 *  - Its command, `ddmon hprof`, is in hprof_cmd.c.
 *  - Per VM it keeps which dump runs (one at a time) and a count.
 *  - A dump whose client went away (host.cmd_cancelled) stops at its next
 *    piece and leaves no file.
 * Option hprof.timeout (ms): how long a VM may take before it starts
 * sending (default HPROF_DEFAULT_TIMEOUT_MS).
 */
#include "build-config.h"

#include <errno.h>
#include <stdlib.h>

#include "hprof.h"

static void free_plugin(void *p)
{
    free(p);
}

hprof_vm *hprof_vm_state(hprof_plugin *pl, ddm_vm *vm)
{
    hprof_vm *vs = pl->host->vm_get_data(pl->self, vm);
    if (vs)
        return vs;
    vs = calloc(1, sizeof *vs);
    if (!vs || pl->host->vm_set_data(pl->self, vm, vs, free) != 0)
        return NULL; /* the core freed it (memory rule 3) */
    return vs;
}

static int on_hpds_begin(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, uint64_t declared,
                         void *ud)
{
    (void)self;
    (void)ci;
    return hprof_dump_stream_begin(ud, vm, declared);
}

static int on_hpds_data(ddm_plugin *self, ddm_vm *vm, const uint8_t *data, size_t len, void *ud)
{
    (void)self;
    return hprof_dump_stream_data(ud, vm, data, len);
}

static void on_hpds_end(ddm_plugin *self, ddm_vm *vm, int status, uint64_t received, void *ud)
{
    (void)self;
    hprof_dump_stream_end(ud, vm, status, received);
}

static const ddm_stream_ops hpds_ops = {on_hpds_begin, on_hpds_data, on_hpds_end};

static int on_hpdu(ddm_plugin *self, ddm_vm *vm, const ddm_chunk_info *ci, const uint8_t *data,
                   size_t len, void *ud)
{
    hprof_plugin *pl = ud;
    (void)vm;
    (void)ci;
    pl->host->log(self, DDM_LOG_INFO, "HPDU reply nobody waited for (result %d)",
                  len > 0 ? (int)data[0] : -1);
    return DDM_OK;
}

static int hprof_init(ddm_plugin *self, const ddm_host *host)
{
    hprof_plugin *pl;
    int rc;

    if (!DDM_HOST_HAS(host, register_chunk_stream)) {
        host->log(self, DDM_LOG_WARNING, "this ddmon cannot stream chunks (plugin ABI < 1.2)");
        return -ENOTSUP;
    }
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return -ENOMEM;
    pl->self = self;
    pl->host = host;
    pl->timeout_ms = (unsigned)ddm_config_uint(host, self, "timeout", 1000,
                                               DDM_REQUEST_TIMEOUT_MAX_MS, HPROF_DEFAULT_TIMEOUT_MS);
    host->set_data(self, pl, free_plugin);
    if ((rc = host->register_chunk_stream(self, HPROF_CHUNK_HPDS, &hpds_ops, pl, NULL)) != 0 ||
        (rc = host->register_chunk(self, HPROF_CHUNK_HPDU, on_hpdu, pl, NULL)) != 0 ||
        (rc = host->register_command(self, "hprof",
                                     "hprof VM [FILE] [--format=android|standard] "
                                     "[--on-device[=PATH]] | hprof --out-dir=DIR VM...|all",
                                     "dump the Java heap (HPROF), streamed to a file or on the device",
                                     hprof_cmd_run, pl, NULL)) != 0)
        return rc;
    return 0;
}

DDM_PLUGIN_DEFINE("hprof", "1.0", "Apache-2.0",
                  "heap dumps: HPDS streamed to disk as they arrive, or HPDU on the device",
                  hprof_init, NULL);
