/* SPDX-License-Identifier: Apache-2.0
 *
 * TEMPORARY: what tests/unit/pluginhost-stubs.c records (see there). Goes
 * away with the stubs once vm.c and monitor.c land.
 */
#ifndef DDM_PLUGINHOST_STUBS_H
#define DDM_PLUGINHOST_STUBS_H

#include <glib.h>
#include <stdint.h>

typedef struct DdmStubRequest {
    guint calls;
    gpointer owner;
    uint32_t type;
    guint cancelled;
} DdmStubRequest;

extern DdmStubRequest ddm_stub_last_request;
extern guint ddm_stub_headline_changes;

#endif /* DDM_PLUGINHOST_STUBS_H */
