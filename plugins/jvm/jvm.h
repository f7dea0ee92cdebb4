/* SPDX-License-Identifier: Apache-2.0
 *
 * jvm plugin, internal interface shared by its files (never installed):
 *  - jvm.c:       descriptor, init, options, the plain-VM listener, the
 *                 per-VM "threads" table (polled through standard JDWP) and
 *                 the "vminfo" record;
 *  - jvm-parse.c: decoders of the JDWP replies it asks for (pure);
 *  - jvm-stack.c: `ddmon jvm-stack VM THREAD --suspend`.
 * It speaks only standard, read-only JDWP through host->jdwp_request (ABI
 * 1.2), which the core limits to an allow-list; it never suspends anything
 * but the one thread a user names with --suspend, which it resumes at once.
 * Ownership: jvm_plugin is the plugin data, jvm_vm per-VM data (freed by
 * the core at VM gone). Reply callbacks hold only a small jvm_req (plugin,
 * round generation, index) and find the VM's state again with vm_get_data.
 */
#ifndef DDM_PLUGIN_JVM_H
#define DDM_PLUGIN_JVM_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

/* Standard JDWP command sets and commands (JDWP specification). */
#define JVM_VM 1
#define JVM_VM_VERSION 1
#define JVM_VM_ALL_THREADS 4
#define JVM_VM_ID_SIZES 7
#define JVM_VM_CAPABILITIES 12
#define JVM_VM_CLASS_PATHS 13
#define JVM_VM_CAPABILITIES_NEW 17
#define JVM_REFTYPE 2
#define JVM_REFTYPE_SIGNATURE 1
#define JVM_REFTYPE_METHODS 5
#define JVM_REFTYPE_SOURCE_FILE 7
#define JVM_METHOD 6
#define JVM_METHOD_LINE_TABLE 1
#define JVM_THREAD 11
#define JVM_THREAD_NAME 1
#define JVM_THREAD_SUSPEND 2
#define JVM_THREAD_RESUME 3
#define JVM_THREAD_STATUS 4
#define JVM_THREAD_GROUP 5
#define JVM_THREAD_FRAMES 6
#define JVM_THREAD_FRAME_COUNT 7
#define JVM_GROUP 12
#define JVM_GROUP_NAME 1
#define JVM_ERROR_THREAD_NOT_SUSPENDED 13

#define JVM_DEFAULT_INTERVAL_MS 1000u /* option jvm.interval (the threads plugin's default) */
#define JVM_MIN_INTERVAL_MS 100u
#define JVM_TICK_MS 250u
#define JVM_MAX_THREADS 4096u         /* threads shown per VM */
#define JVM_WINDOW 64u                /* requests in flight per VM during a round */
#define JVM_REQ_TIMEOUT_MS 5000u
#define JVM_MAX_FRAMES 1024u

/* ------------------------------------------------------------ decoders */

/** VirtualMachine.IDSizes: field, method, object, reference type, frame. */
typedef struct jvm_idsizes {
    uint32_t field, method, object, reftype, frame;
} jvm_idsizes;

/** 0 or -EBADMSG (sizes must be 1..8). */
int jvm_parse_idsizes(const uint8_t *d, size_t n, jvm_idsizes *out);
/** VirtualMachine.AllThreads: *@ids (malloc'd) gets up to @max ids of @idsize bytes. */
int jvm_parse_all_threads(const uint8_t *d, size_t n, uint32_t idsize, size_t max, uint64_t **ids,
                          size_t *count);
/** A reply that is one JDWP string (Name, Signature, SourceFile). (malloc'd) */
char *jvm_parse_string(const uint8_t *d, size_t n);
/** ThreadReference.Status: thread status and suspend status. */
int jvm_parse_status(const uint8_t *d, size_t n, int32_t *status, int32_t *suspend);
/** A reply that is one id (ThreadGroup) or one int (FrameCount). */
int jvm_parse_id(const uint8_t *d, size_t n, uint32_t size, uint64_t *id);
int jvm_parse_int(const uint8_t *d, size_t n, int32_t *v);
/** "running", "sleeping", ... for a JDWP thread status. */
const char *jvm_status_name(int32_t status);

typedef struct jvm_version {
    char *description, *vm_version, *vm_name;
    int32_t major, minor;
} jvm_version;
int jvm_parse_version(const uint8_t *d, size_t n, jvm_version *out);
void jvm_version_clear(jvm_version *v);

typedef struct jvm_classpaths {
    char *base_dir, *classpath, *bootclasspath; /* joined with ':' */
} jvm_classpaths;
int jvm_parse_classpaths(const uint8_t *d, size_t n, jvm_classpaths *out);
void jvm_classpaths_clear(jvm_classpaths *c);
/** Capabilities (7 booleans) or CapabilitiesNew (32): the names of the true
 *  ones, comma-separated, into a malloc'd string. */
char *jvm_parse_capabilities(const uint8_t *d, size_t n, int is_new);

/** One frame of ThreadReference.Frames. */
typedef struct jvm_frame {
    uint64_t frame_id, class_id, method_id, index;
    uint8_t type_tag;
} jvm_frame;
int jvm_parse_frames(const uint8_t *d, size_t n, const jvm_idsizes *ids, size_t max,
                     jvm_frame **out, size_t *count);
/** ReferenceType.Methods: the name of @method_id (malloc'd), or NULL. */
char *jvm_parse_method_name(const uint8_t *d, size_t n, const jvm_idsizes *ids, uint64_t method_id);
/** Method.LineTable: the line of code index @index, or -1. */
int32_t jvm_parse_line(const uint8_t *d, size_t n, uint64_t index);
/** "Ljava/lang/Thread;" -> "java.lang.Thread" (malloc'd). */
char *jvm_class_name(const char *signature);
/** Write @v as @size big-endian bytes at @p. */
void jvm_put_id(uint8_t *p, uint64_t v, uint32_t size);

/* -------------------------------------------------------------- plugin */

typedef struct jvm_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned interval_ms;
    uint32_t poll_timer;
    double (*now)(void);
    ddm_tick_list ticks; /* the VMs a tick visits while the watches stay the same */
} jvm_plugin;

typedef struct jvm_thread {
    uint64_t id, group;
    char *name;
    int32_t status, suspend, frames; /* -1 unknown */
    int has_status, has_group, has_frames;
} jvm_thread;

typedef struct jvm_group {
    uint64_t id;
    char *name;
} jvm_group;

typedef struct jvm_vm {
    jvm_plugin *pl;
    ddm_vm *vm;
    ddm_view *view, *info_view, *stack_view;
    jvm_idsizes ids;
    int ids_known, ids_asked;
    /* the polling round */
    unsigned gen;              /* bumps per round: late replies of an old round are ignored */
    int in_round;
    jvm_thread *threads;
    size_t n_threads;
    size_t next_task;          /* next (thread, command) pair to send */
    size_t outstanding;
    jvm_group *groups;         /* group id -> name cache */
    size_t n_groups;
    double last_poll;
    int was_watched;
    ddm_tick_node tick;  /* on pl->ticks while watched */
    int info_asked;
    const char *info_keys[16]; /* the "vminfo" record, kept whole: view_begin starts afresh */
    char *info_vals[16];
    size_t n_info;
    int stack_busy;            /* a jvm-stack command holds a suspended thread */
    int metric_logged;         /* a failed vm_metric was logged (ddm_vm_metric_logged) */
} jvm_vm;

jvm_vm *jvm_vm_state(jvm_plugin *pl, ddm_vm *vm);
/** Ask IDSizes if not known yet; 1 if known now. */
int jvm_need_ids(jvm_vm *st);
int jvm_stack_register(jvm_plugin *pl);
/** jvm_metrics.c: declare "threads" (in init; 1.3), set @st's threads by state. */
int jvm_metrics_register(jvm_plugin *pl);
void jvm_metrics_publish(jvm_vm *st);
void jvm_poll_once(jvm_plugin *pl);
double jvm_monotonic_now(void);

#endif /* DDM_PLUGIN_JVM_H */
