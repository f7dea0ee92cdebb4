/* SPDX-License-Identifier: Apache-2.0
 *
 * The hprof plugin's shared declarations: the plugin, a VM's state, and a
 * heap dump job (hprof_dump.c) that a command (hprof_cmd.c) starts and the
 * chunk stream (hprof.c) feeds.
 *
 * Ownership: the plugin owns its per-VM state (hprof_vm, freed by the core
 * at VM gone through vm_set_data). A VM has at most one dump running
 * (hprof_vm.dump, borrowed: the dump belongs to its batch). A batch
 * (hprof_batch) is one user command, dumping one or several VMs at once;
 * it owns its dumps and finishes the command when the last one ends.
 */
#ifndef DDM_PLUGIN_HPROF_H
#define DDM_PLUGIN_HPROF_H

#include <stdint.h>
#include <stdio.h>

#include <ddmon/chunk.h>
#include <ddmon/plugin.h>

#include "hprof_hash.h"
#include "hprof_stream.h"

#define HPROF_CHUNK_HPDS DDM_CHUNK('H', 'P', 'D', 'S')
#define HPROF_CHUNK_HPDU DDM_CHUNK('H', 'P', 'D', 'U')
/** The FEAT entry of VMs that stream dumps (HPDS). */
#define HPROF_FEATURE_STREAMING "hprof-heap-dump-streaming"

/** Option hprof.timeout: how long a VM may take to start sending (ART builds
 *  the whole dump in memory first). Bytes flowing never time out. */
#define HPROF_DEFAULT_TIMEOUT_MS 300000u
/** After the VM's empty reply, how long its HPDS event may still take to
 *  begin (ART sends it first; the draft says nothing of the order). */
#define HPROF_EVENT_GRACE_MS 10000u
/** Devices paths and file names longer than this are refused. */
#define HPROF_PATH_MAX 4096u
/** Room for a message that names up to two paths. */
#define HPROF_MSG_MAX (2u * HPROF_PATH_MAX + 640u)
/** VMs one command may dump at once. */
#define HPROF_BATCH_MAX 64u

typedef struct hprof_plugin hprof_plugin;
typedef struct hprof_batch hprof_batch;
typedef struct hprof_dump hprof_dump;

struct hprof_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned timeout_ms;
};

/** Per-VM state (vm_set_data). */
typedef struct hprof_vm {
    hprof_dump *dump; /* the dump running on this VM, borrowed; NULL when none */
    uint64_t dumps;   /* dumps completed on this VM */
} hprof_vm;

typedef enum hprof_via {
    HPROF_VIA_STREAM = 0, /* HPDS: the dump comes to ddmon */
    HPROF_VIA_DEVICE = 1  /* HPDU: the VM writes it to a file on the device */
} hprof_via;

/** What one dump ended with (for the result table and the message). */
typedef struct hprof_outcome {
    int ok;
    char vm_key[128];
    uint32_t pid;
    hprof_via via;
    char path[HPROF_PATH_MAX + 1];  /* the local file, or the device path */
    uint64_t bytes;                 /* written (stream) */
    char sha256[HPROF_SHA256_HEX + 1];
    double seconds;
    char error[HPROF_MSG_MAX];
} hprof_outcome;

/* hprof_dump.c: one dump of one VM */
/** Start a dump of @vm for @batch: HPDS into @path (its .part first) in
 *  @fmt, or HPDU to @device_path. 0, or -errno with @err filled (nothing
 *  started; the caller reports it). */
hprof_dump *hprof_dump_start(hprof_plugin *pl, hprof_batch *batch, ddm_vm *vm, hprof_via via,
                             const char *path, hprof_out_format fmt, const char *device_path,
                             char *err, size_t err_len);
/** The stream ops (hprof.c registers them for HPDS). */
int hprof_dump_stream_begin(hprof_plugin *pl, ddm_vm *vm, uint64_t declared);
int hprof_dump_stream_data(hprof_plugin *pl, ddm_vm *vm, const uint8_t *data, size_t len);
void hprof_dump_stream_end(hprof_plugin *pl, ddm_vm *vm, int status, uint64_t received);
/** Bytes received so far and declared (0 until the stream began). */
void hprof_dump_progress(const hprof_dump *d, uint64_t *received, uint64_t *declared);

/* hprof_cmd.c: the command and its batch */
/** The hprof command ("ddmon hprof ..."). */
int hprof_cmd_run(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud);
/** A dump of @batch ended (its outcome is copied; @d is the dump's, not freed). */
void hprof_batch_dump_done(hprof_batch *batch, hprof_dump *d, const hprof_outcome *out);
/** Bytes streamed by the batch's dumps moved on: pass progress to the client. */
void hprof_batch_progress(hprof_batch *batch);
/** 1 once nobody waits for the batch's answer (the client went away). */
int hprof_batch_cancelled(const hprof_batch *batch);

/* hprof.c */
/** The VM's state, created on first use; NULL if the core refused it. */
hprof_vm *hprof_vm_state(hprof_plugin *pl, ddm_vm *vm);

#endif /* DDM_PLUGIN_HPROF_H */
