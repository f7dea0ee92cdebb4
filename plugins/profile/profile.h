/* SPDX-License-Identifier: Apache-2.0
 *
 * The profile plugin's shared declarations: the plugin, a VM's profiling
 * state (what MPRQ last said, the trace running, the last summary), a
 * trace job (profile_job.c) that the trace command (profile_cmd.c) starts
 * and the MPSE stream (profile.c) feeds, and the views a decoded trace
 * becomes (profile_views.c).
 *
 * Ownership: per-VM state (profile_vm) belongs to the core (vm_set_data)
 * and is freed at VM gone, or by profile_vm_settle as soon as it holds
 * nothing but what MPRQ said (no job, trace, view, tick or logged stray):
 * such a VM's data pointer is then one of the plugin's shared markers
 * (profile.c), or NULL before its first MPRQ, so an idle VM has no state.
 * A job belongs to itself: it lives until it has finished its command AND
 * every request it sent has had its callback, whichever comes last frees
 * it; the VM state points at it (borrowed) until it finished, so one
 * trace runs per VM.
 */
#ifndef DDM_PLUGIN_PROFILE_H
#define DDM_PLUGIN_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <ddmon/chunk.h>
#include <ddmon/plugin.h>
#include <ddmon/ticklist.h>

#include "trace_decode.h"

#define PROFILE_CHUNK_MPRS DDM_CHUNK('M', 'P', 'R', 'S')
#define PROFILE_CHUNK_MPRE DDM_CHUNK('M', 'P', 'R', 'E')
#define PROFILE_CHUNK_MPSS DDM_CHUNK('M', 'P', 'S', 'S')
#define PROFILE_CHUNK_MPSE DDM_CHUNK('M', 'P', 'S', 'E')
#define PROFILE_CHUNK_SPSS DDM_CHUNK('S', 'P', 'S', 'S')
#define PROFILE_CHUNK_SPSE DDM_CHUNK('S', 'P', 'S', 'E')
#define PROFILE_CHUNK_MPRQ DDM_CHUNK('M', 'P', 'R', 'Q')

/** FEAT names (ART's VMDebug.getVmFeatureList; doc/protocol.md). */
#define PROFILE_FEATURE_TRACING "method-trace-profiling"
#define PROFILE_FEATURE_STREAMING "method-trace-profiling-streaming"
#define PROFILE_FEATURE_SAMPLING "method-sample-profiling"

/** Option profile.timeout_ms: how long after MPSE/SPSE (or MPRE) the VM
 *  may take to start sending the trace (or answer). A VM with no trace
 *  running sends nothing at all, so this is how such a stop ends. */
#define PROFILE_DEFAULT_TIMEOUT_MS 20000u
#define PROFILE_POLL_MS 3000u /* MPRQ again, for VMs whose "profile" view is watched */
/** The trace buffer asked for unless --buffer says otherwise (ddmlib's). */
#define PROFILE_DEFAULT_BUFFER (8u << 20)
#define PROFILE_DEFAULT_SECONDS 10u
#define PROFILE_DEFAULT_INTERVAL_US 1000u
#define PROFILE_PATH_MAX 4096u
#define PROFILE_MSG_MAX (2u * PROFILE_PATH_MAX + 640u)
/** Rows of the methods view: the top N by inclusive and the top N by exclusive time. */
#define PROFILE_DEFAULT_TOP 20u
#define PROFILE_MAX_TOP 1000u

typedef struct profile_plugin profile_plugin;
typedef struct profile_job profile_job;

struct profile_plugin {
    ddm_plugin *self;
    const ddm_host *host;
    unsigned timeout_ms;
    ddm_tick_list ticks;      /* the VMs a poll tick visits while the watches stay the same */
    int lazy_view;            /* "profile" is declared (vm_view_declare, 1.6): a VM's is made
                                 when asked for, once there is a state to show */
    int stopping;             /* the server stops (ABI 1.8 hook ran): no new trace starts */
};

/** MPRQ's answer: -1 not known yet. */
enum { PROFILE_MODE_UNKNOWN = -1, PROFILE_MODE_OFF = 0, PROFILE_MODE_TRACING = 1,
       PROFILE_MODE_SAMPLING = 2 };

/** Per-VM state (vm_set_data), while the VM has more than MPRQ's answer. */
typedef struct profile_vm {
    profile_job *job;         /* the trace running, borrowed; NULL when none */
    uint64_t traces;          /* traces saved */
    char *last_path;          /* the last trace's file (malloc), NULL before the first: an
                                 idle VM's state stays small */
    ddm_view *info;           /* "profile": mode, traces, last file; made at the first
                                 profile_show_state, or (declared, 1.6) when asked after it */
    ddm_view *methods, *threads, *summary; /* the last trace's */
    ddm_vm *vm;               /* borrowed: the state goes with the VM */
    ddm_tick_node tick;       /* on pl->ticks while its "profile" view is watched */
    int8_t mode;              /* PROFILE_MODE_*: what the VM said last */
    uint8_t mprq_pending : 1; /* an MPRQ is on its way */
    uint8_t shown : 1;        /* profile_show_state ran: the view has something to show */
    uint8_t stray_logged : 1; /* a chunk nobody asked for was logged (once per VM) */
} profile_vm;

typedef struct profile_args {
    int sampling;
    uint32_t interval_us;
    uint32_t seconds;         /* 0: until Ctrl-C */
    uint32_t buffer;
    int on_device;
    const char *device_path;  /* borrowed from argv: copied by the job */
    char path[PROFILE_PATH_MAX + 1]; /* the local file (absolute) */
} profile_args;

/* profile.c */
/** The VM's state, made on first use from what its data pointer says;
 *  NULL if out of memory or the core refused it. */
profile_vm *profile_vm_state(profile_plugin *pl, ddm_vm *vm);
/** The VM's state if it has one (NULL when it holds only MPRQ's answer). */
profile_vm *profile_vm_find(profile_plugin *pl, ddm_vm *vm);
/** Free @pv if it holds nothing but MPRQ's answer, which goes back into
 *  the VM's data pointer; @pv must not be used after. 1 if freed. */
int profile_vm_settle(profile_plugin *pl, profile_vm *pv);
/** States alive in this process (tests: an idle VM has none). */
size_t profile_vm_states_alive(void);
/** Ask the VM what runs (MPRQ) and show the answer. */
void profile_query(profile_plugin *pl, ddm_vm *vm);
/** Show @pv's mode and last trace in the VM's headline and "profile" view. */
void profile_show_state(profile_plugin *pl, ddm_vm *vm, profile_vm *pv);
/** What an MPRQ reply says: PROFILE_MODE_OFF..SAMPLING, or
 *  PROFILE_MODE_UNKNOWN for anything else (a byte > 2, no byte, no MPRQ). */
int profile_mprq_mode(const ddm_reply *reply);

/** The line a trace that the server's stop cut short gets in its
 *  "*version" section (a key=value pair, which dmtracedump skips). */
#define PROFILE_CUT_SHORT_LINE "ddmon-cut-short=server-stopped\n"

/* profile_job.c */
/** Start a trace of @vm for @cmd; 0, or -1 with the command finished. */
int profile_job_start(profile_plugin *pl, ddm_cmd *cmd, ddm_vm *vm, const profile_args *a);
/** `trace VM --stop [FILE]`: stop what runs in @vm (MPRQ, then MPSE or
 *  SPSE), a trace that comes back saved to @path (absolute) or, @path
 *  NULL, read and dropped; 0, or -1 with the command finished. */
int profile_job_stop(profile_plugin *pl, ddm_cmd *cmd, ddm_vm *vm, const char *path);
int profile_job_stream_begin(profile_plugin *pl, ddm_vm *vm, uint64_t declared);
int profile_job_stream_data(profile_plugin *pl, ddm_vm *vm, const uint8_t *data, size_t len);
void profile_job_stream_end(profile_plugin *pl, ddm_vm *vm, int status, uint64_t received);
/** @vm is going away (its DDM_VM_GONE listener): its trace fails now. */
void profile_job_vm_gone(profile_plugin *pl, ddm_vm *vm);
/** The server stops (ABI 1.8 stopping hook): a trace ddmon started in @vm
 *  and has not stopped gets its stop (MPSE, SPSE or MPRE) now, as at its
 *  end: while the core waits for the answers (DDM_STOPPING_WAIT_MS) the
 *  trace comes back and is saved, marked as cut short; one the VM had not
 *  finished sending when its connection closed is saved up to its last
 *  whole record. */
void profile_job_server_stopping(profile_plugin *pl, ddm_vm *vm);

/* profile_cmd.c */
int profile_cmd_trace(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud);
int profile_cmd_summary(ddm_plugin *self, ddm_cmd *cmd, int argc, const char *const *argv, void *ud);

/* profile_views.c */
/** Fill @v (a table) with the top @top methods by inclusive and by exclusive time. */
void profile_fill_methods(const ddm_host *h, ddm_view *v, const trace_decoder *d, size_t top);
/** Fill @v (a table) with the trace's threads. */
void profile_fill_threads(const ddm_host *h, ddm_view *v, const trace_decoder *d);
/** Fields of @v (a record, between begin and commit) about the whole trace. */
void profile_summary_fields(const ddm_host *h, ddm_view *v, const trace_decoder *d);
/** "version 3, dual clock, 1234 records, 3 threads, 12 methods" */
void profile_summary_line(const trace_decoder *d, char *out, size_t n);

#endif /* DDM_PLUGIN_PROFILE_H */
