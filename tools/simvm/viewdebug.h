/* SPDX-License-Identifier: Apache-2.0
 *
 * View debugging on a simulated VM (viewdebug.c): the VULW, VURT and VUOP
 * requests of android.ddm.DdmHandleViewDebug answered from view_model.c,
 * and what was sent, for the ground truth (--state-file "views").
 * Ownership: a VM owns its SimViewDebug (created on the first request,
 * freed with the VM by sim_viewdebug_free).
 */
#ifndef SIMVM_VIEWDEBUG_H
#define SIMVM_VIEWDEBUG_H

#include <json-glib/json-glib.h>

#include "simvm-private.h"

/** The FEAT name; --no-view-hierarchy drops it and leaves VU* chunks unhandled. */
#define SIM_VIEW_HIERARCHY_FEATURE "view-hierarchy"

typedef struct SimViewDebug SimViewDebug;

/** A VULW, VURT or VUOP request (@type) with payload @body. */
void sim_handle_viewdebug(SimConn *c, uint32_t id, uint32_t type, ddm_reader *body);
/** The member "views" of a VM's ground truth: null until the VM was asked. */
void sim_viewdebug_add_state(JsonBuilder *b, SimVm *vm);
void sim_viewdebug_free(SimViewDebug *vd);

#endif /* SIMVM_VIEWDEBUG_H */
