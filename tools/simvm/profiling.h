/* SPDX-License-Identifier: Apache-2.0
 *
 * Method tracing and sampling of a simulated VM (profiling.c): the chunks
 * MPRS/MPRE (trace to a device file), MPSS/MPSE and SPSS/SPSE (streamed
 * in an MPSE event), MPRQ (what runs), their FEAT names, the --trace*
 * options and the ground truth of the last trace. doc/protocol.md and
 * doc/trace.md have the wire and file facts.
 */
#ifndef SIMVM_PROFILING_H
#define SIMVM_PROFILING_H

#include <json-glib/json-glib.h>

#include "simvm-private.h"

/** --trace: which profiling a VM offers. */
typedef enum {
    SIM_TRACE_STREAM = 0, /* FEAT: method-trace-profiling(-streaming), method-sample-profiling */
    SIM_TRACE_DEVICE,     /* FEAT: method-trace-profiling only: MPRS/MPRE; MPSS/SPSS get FAIL */
    SIM_TRACE_NONE,       /* none of the three; every start gets FAIL */
} SimTraceMode;

/** --trace-fault. */
typedef enum {
    SIM_TRACE_FAULT_NONE = 0,
    SIM_TRACE_FAULT_TRUNCATE, /* close the connection halfway through the MPSE event */
    SIM_TRACE_FAULT_SILENT,   /* the stop finds nothing running: no event, no reply */
} SimTraceFault;

/** Check and convert the --trace* strings of @cfg. */
gboolean sim_profiling_parse_config(SimConfig *cfg, GError **error);
/** -1 if @feature is not a profiling feature, else whether @vm lists it. */
int sim_profiling_feature_offered(const SimVm *vm, const char *feature);
/** Handle one profiling request; FALSE if @type is none of them. */
gboolean sim_profiling_handle(SimConn *c, uint32_t id, uint32_t type, ddm_reader *body);
/** The VM's "profiling" object for the state file. */
void sim_profiling_add_state(JsonBuilder *b, const SimVm *vm);
void sim_profiling_free(struct SimProfiling *p);

#endif /* SIMVM_PROFILING_H */
