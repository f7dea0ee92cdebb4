/* SPDX-License-Identifier: Apache-2.0
 *
 * ddmon-simvm's world of simulated VMs, as a small C API: a SimWorld holds
 * SimVm objects, each playing one DDM-aware ART/Dalvik VM (or a plain JVM)
 * with its own pid, name, threads and heaps. A VM serves one JDWP
 * connection at a time, from its TCP listener (127.0.0.1:port) or from an
 * already-connected fd handed in by a bridge (the simulated adb device's
 * jdwp:PID service) through sim_vm_serve_fd(); both behave identically:
 * the VM side reads the 14-byte handshake and echoes it.
 *
 * Threading: everything runs on the thread-default main context that was
 * current at sim_world_new(); nothing blocks.
 * Lifetime: a SimVm belongs to its world. It may disappear (EXIT from a
 * client, churn); pid watchers are told (alive = FALSE) right after it left
 * the pid table and before it is freed: never keep a SimVm pointer across
 * main-loop iterations, keep the pid and look it up again.
 */
#ifndef SIMVM_SIMVM_H
#define SIMVM_SIMVM_H

#include <glib.h>
#include <stdint.h>

typedef enum {
    SIM_MODE_ART = 0,   /* ART adbconnection: no reply when a handler has nothing to say */
    SIM_MODE_DALVIK,    /* Dalvik: empty replies */
    SIM_MODE_JVM,       /* plain JVM: every 0xC7 command -> JDWP error 99 */
} SimMode;

/** Heap dumps a VM offers (--hprof). */
typedef enum {
    SIM_HPROF_STREAM = 0, /* FEAT lists hprof-heap-dump-streaming; HPDS and HPDU work (ART) */
    SIM_HPROF_DEVICE,     /* no streaming: HPDS gets FAIL, HPDU works */
    SIM_HPROF_NONE,       /* both FAIL */
} SimHprofMode;

/** A misbehaving HPDS for tests (--hprof-fault). */
typedef enum {
    SIM_HPROF_FAULT_NONE = 0,
    SIM_HPROF_FAULT_TRUNCATE,  /* close the connection halfway through the body */
    SIM_HPROF_FAULT_LIE_LONG,  /* declare total+1000 bytes, send total, then stay silent */
    SIM_HPROF_FAULT_LIE_SHORT, /* chunk length half of what the JDWP length carries */
    SIM_HPROF_FAULT_FAIL,      /* FAIL(1, "heap dump failed"), no event; HPDU result 0xFF */
} SimHprofFault;

/** A misbehaving view-debug VM for tests (--view-fault; viewdebug.c). */
typedef enum {
    SIM_VIEW_FAULT_NONE = 0,
    SIM_VIEW_FAULT_INDENT,    /* the dump's second view is 3 spaces too deep */
    SIM_VIEW_FAULT_NO_DONE,   /* the dump lacks its DONE. line */
    SIM_VIEW_FAULT_HUGE_VULW, /* VULW claims 0xFFFFFFFF windows */
    SIM_VIEW_FAULT_NOT_PNG,   /* a capture is GIF bytes */
    SIM_VIEW_FAULT_SILENT,    /* VULW, VURT, VUOP get no reply at all */
} SimViewFault;

/** Everything the command line can set (see doc/ddmon-simvm.md). */
typedef struct SimConfig {
    unsigned vms;               /* DDM VMs (in @mode) */
    unsigned jvm_vms;           /* extra plain-JVM VMs */
    int base_port;              /* first port; 0 = let the kernel choose */
    gboolean no_tcp;            /* no listeners (device-only VMs) */
    char *bind_address;         /* default 127.0.0.1 */
    char *port_file;            /* "pid port app" lines, rewritten on change */
    char *state_file;           /* JSON ground truth, rewritten on change */
    SimMode mode;
    guint64 seed;
    gboolean apnm_before_echo;  /* APNM event before the handshake echo */
    gboolean wait_for_debugger; /* WAIT after HELO until a non-DDM command */
    gboolean dbgd_ack;          /* answer DBGD with an empty DBGD chunk (default: ignore it) */
    gboolean zlib;              /* wrap large chunks in ZLIB */
    gboolean two_heaps;         /* heaps 1 and 2, segments interleaved */
    unsigned rename_after_ms;   /* "<pre-initialized>" until then, then APNM */
    unsigned churn_ms;          /* 0 = off */
    unsigned gc_every_ms;       /* 0 = only on HPGC */
    unsigned tick_ms;           /* model tick (default 100) */
    unsigned thread_activity_ms;/* mean time between thread births/renames/deaths per VM; 0 = off */
    unsigned main_state_every_ms;/* main thread: waiting <-> runnable every MS, only then; 0 = random */
    unsigned exit_after_ms;     /* main(): quit after this long; 0 = run until signalled */
    unsigned nhgt_version;      /* 1 or 2 */
    unsigned ptr_size;          /* 4 or 8 */
    unsigned heap_kib;          /* initial managed heap size per heap */
    unsigned threads;           /* initial threads per VM */
    unsigned helo_tails;        /* optional HELO tails sent: 0..6 (6 adds boot stage) */
    unsigned seg_chunk_max;     /* largest segment chunk (ART: 16368) */
    unsigned max_request;       /* largest JDWP packet accepted from a client */
    char **apps;                /* app names to use first (NULL-terminated), or NULL */
    SimHprofMode hprof_mode;    /* --hprof */
    guint64 hprof_size;         /* bytes of every heap dump */
    SimHprofFault hprof_fault;
    char *device_dir;           /* HPDU also writes DIR/<basename> here (NULL: not) */
    char *write_hprof;          /* main(): only write a dump here and exit */
    gint64 hprof_gen_seed;      /* --write-hprof: the generator's own seed, or -1: from --seed */
    char *hprof_package;        /* --write-hprof: the generator's package name, or NULL */
    char *trace_opt;            /* --trace: stream|device|none (profiling.c parses --trace*) */
    char *trace_clock_opt;      /* --trace-clock: dual|thread-cpu */
    char *trace_fault_opt;      /* --trace-fault: none|truncate */
    gint64 trace_rate;          /* --trace-rate: bytes of records per second traced; 0 = 64 KiB */
    int trace_mode;             /* SimTraceMode (profiling.h), from --trace */
    gboolean trace_single_clock;/* --trace-clock=thread-cpu */
    int trace_fault;            /* --trace-fault: 0 none, 1 truncate, 2 silent */
    gboolean no_view_hierarchy; /* --no-view-hierarchy: FEAT without view-hierarchy, VU* unhandled */
    SimViewFault view_fault;    /* --view-fault */
} SimConfig;

/** Defaults: 1 ART VM from port 8000, seed 1, ... */
void sim_config_init(SimConfig *cfg);
void sim_config_clear(SimConfig *cfg);
/** Parse the command line into @cfg (options documented by --help). Extra
 *  option groups (e.g. a device's) may be added with @extra (may be NULL;
 *  ownership passes to the parser). */
gboolean sim_config_parse(SimConfig *cfg, int *argc, char ***argv, GOptionGroup *extra,
                          GError **error);
const char *sim_mode_name(SimMode mode);
const char *sim_hprof_fault_name(SimHprofFault fault);
/** Check and convert the --trace* options (profiling.c). */
gboolean sim_profiling_parse_config(SimConfig *cfg, GError **error);

typedef struct SimWorld SimWorld;
typedef struct SimVm SimVm;

/** A world with @cfg (copied) on the thread-default main context. (transfer full) */
SimWorld *sim_world_new(const SimConfig *cfg);
/** Create the configured VMs, listeners and timers; write the port file. */
gboolean sim_world_start(SimWorld *w, GError **error);
void sim_world_free(SimWorld *w);

/** The VM with @pid, or NULL. (transfer none) */
SimVm *sim_world_find_pid(SimWorld *w, uint32_t pid);
/** Pids of the live VMs, oldest first. (transfer full: g_array_unref) */
GArray *sim_world_list_pids(SimWorld *w);

/** Told about each pid that appears (@alive TRUE) or disappears (FALSE). */
typedef void (*SimPidWatchFn)(SimWorld *w, uint32_t pid, gboolean alive, void *ud);
/** Returns an id > 0 for sim_world_unwatch_pids(). */
guint sim_world_watch_pids(SimWorld *w, SimPidWatchFn fn, void *ud);
void sim_world_unwatch_pids(SimWorld *w, guint id);

/** Serve a JDWP connection on the connected @fd (transfer full: the VM closes
 *  it), exactly as on the TCP port. If the VM already has a connection,
 *  @fd is accepted and closed at once, as ART does. */
void sim_vm_serve_fd(SimVm *vm, int fd);
/** TRUE while a JDWP connection is being served. */
gboolean sim_vm_is_busy(const SimVm *vm);
uint32_t sim_vm_pid(const SimVm *vm);
/** Current process name ("<pre-initialized>" before --rename-after). (transfer none) */
const char *sim_vm_app_name(const SimVm *vm);
const char *sim_vm_package_name(const SimVm *vm);
/** "64-bit (x86_64)" etc. (transfer none) */
const char *sim_vm_abi(const SimVm *vm);
/** TCP port, 0 with --no-tcp. */
uint16_t sim_vm_port(const SimVm *vm);
SimMode sim_vm_mode(const SimVm *vm);
/** Ask the VM to "halt" as on EXIT (it disappears from the world). */
void sim_vm_exit(SimVm *vm, uint32_t status);

#endif /* SIMVM_SIMVM_H */
