/* SPDX-License-Identifier: Apache-2.0
 *
 * vminfo plugin, internal interface shared by its files (never installed):
 *  - vminfo.c: descriptor, init, the VM listener, APNM/WAIT/STAG handlers and
 *    the per-VM "vminfo" record view;
 *  - vminfo-parse.c: pure decoders of APNM, WAIT and STAG payloads;
 *  - vminfo-commands.c: `ddmon exit PID [STATUS]` and `ddmon gc PID`.
 * Ownership: vminfo_plugin is the plugin's data (host->set_data); vminfo_vm
 * is per-VM data (host->vm_set_data), freed by the core at VM gone.
 * Only SDK headers are used; no glib.
 */
#ifndef DDM_PLUGIN_VMINFO_H
#define DDM_PLUGIN_VMINFO_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/chunk.h>
#include <ddmon/plugin.h>

#define VMINFO_CHUNK_APNM DDM_CHUNK('A', 'P', 'N', 'M')
#define VMINFO_CHUNK_WAIT DDM_CHUNK('W', 'A', 'I', 'T')
#define VMINFO_CHUNK_STAG DDM_CHUNK('S', 'T', 'A', 'G')
#define VMINFO_CHUNK_EXIT DDM_CHUNK('E', 'X', 'I', 'T')
#define VMINFO_CHUNK_HPGC DDM_CHUNK('H', 'P', 'G', 'C')
/* What follows a GC (doc/protocol.md "HPIF and HPGC", "Heap segments"): the
 * heap plugin owns them and switches them on; vminfo only taps them. */
#define VMINFO_CHUNK_HPIF DDM_CHUNK('H', 'P', 'I', 'F')
#define VMINFO_CHUNK_HPSG DDM_CHUNK('H', 'P', 'S', 'G')
#define VMINFO_CHUNK_HPSO DDM_CHUNK('H', 'P', 'S', 'O')
#define VMINFO_CHUNK_HPST DDM_CHUNK('H', 'P', 'S', 'T')
#define VMINFO_CHUNK_HPEN DDM_CHUNK('H', 'P', 'E', 'N')
/* The fence after an HPGC nothing else will answer: a query every VM
 * answers, in order (doc/protocol.md "REAE, REAQ, REAL"). */
#define VMINFO_CHUNK_REAQ DDM_CHUNK('R', 'E', 'A', 'Q')

/** Default time to wait for an HPGC reply (ART sends none), ms; option vminfo.gc_timeout. */
#define VMINFO_GC_TIMEOUT_MS 3000u
/** Time the EXIT request may stay pending (the VM never answers), ms. */
#define VMINFO_EXIT_TIMEOUT_MS 2000u

struct gc_call;

/** Plugin-wide state. */
typedef struct vminfo_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned gc_timeout_ms;
    struct gc_call *gcs; /* gc commands not finished yet, any VM (vminfo-commands.c) */
    int lazy_view;       /* "vminfo" is declared (vm_view_declare, 1.6): a VM's view and
                            state are made when asked for or at its first event */
} vminfo_plugin;

/** Per-VM state. */
typedef struct vminfo_vm {
    ddm_view *view;    /* "vminfo" record, owned by the core (goes with the VM) */
    int view_made;     /* vminfo_view_make ran */
    int waiting;       /* a WAIT was received */
    int wait_reason;   /* its reason byte, -1 if the chunk had none */
    int has_stage;
    uint32_t stage;    /* last STAG code */
    /* What the VM was last asked to send after a GC (taps on HPIF, HPSG and
     * HPSO requests, whoever sent them): HPIF's when (2 next GC, 3 every
     * GC; 0 and "now" send nothing at a GC), segments 1 every GC. */
    uint8_t hpif_when;
    uint8_t hpsg_on, hpso_on;
} vminfo_vm;

/** A decoded APNM (strings owned; free with vminfo_apnm_clear). */
typedef struct vminfo_apnm {
    char *app_name;     /* never NULL after a successful parse */
    int32_t user_id;    /* -1 if absent */
    char *package_name; /* NULL if absent */
} vminfo_apnm;

/** Decode APNM: lstr name, optional u4 user id, optional lstr package.
 *  A truncated optional tail is ignored (*note says why). Returns 0, or
 *  -EBADMSG when the name itself does not fit. @note gets a static string
 *  describing an ignored tail, or NULL. */
int vminfo_parse_apnm(const uint8_t *data, size_t len, vminfo_apnm *out, const char **note);
void vminfo_apnm_clear(vminfo_apnm *a);
/** Decode WAIT: returns the reason byte, or -1 when the payload is empty. */
int vminfo_parse_wait(const uint8_t *data, size_t len);
/** Decode STAG: 0 and *stage, or -EBADMSG if shorter than 4 bytes. */
int vminfo_parse_stag(const uint8_t *data, size_t len, uint32_t *stage);

/** (Re)publish the VM's record view from vm_info and the plugin's state. */
void vminfo_publish(vminfo_plugin *pl, ddm_vm *vm);

/** The VM's state, created on first use (with its view, unless the view is
 *  declared: then when asked for); NULL if out of memory. */
vminfo_vm *vminfo_vm_state(vminfo_plugin *pl, ddm_vm *vm);
/** Make @st's "vminfo" view unless made (empty until vminfo_publish). */
void vminfo_view_make(vminfo_plugin *pl, ddm_vm *vm, vminfo_vm *st);

/** Register the exit and gc commands and the taps that end a gc early. 0 or -errno. */
int vminfo_commands_register(vminfo_plugin *pl);

#endif /* DDM_PLUGIN_VMINFO_H */
