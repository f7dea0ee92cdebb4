/* SPDX-License-Identifier: Apache-2.0
 *
 * The recent past of each VM's records, so a page opened now can chart
 * the last minutes (the headline's heap used and size): for every record
 * view of a VM, the numeric fields of each committed version, at most one
 * sample a second, the last DDM_WEB_HISTORY_SAMPLES of them. Generic: no
 * view or field is named here. A VM's views going away take their history.
 *
 * Bounds: DDM_WEB_HISTORY_MAX_PER_VM records per VM (later ones of that
 * VM are not kept, so one busy VM cannot take every place), and
 * DDM_WEB_HISTORY_MAX_VIEWS in all: when they are taken, a new record
 * takes the place of the one looked at least recently
 * (ddm_web_history_json; being created counts as a look), provided nobody
 * looked at it for DDM_WEB_HISTORY_KEEP_S; else the new one is not kept
 * (so histories are not traded back and forth at every sample). Later VMs
 * on a busy host thus get charts once the old ones are unwatched.
 * DDM_WEB_HISTORY_MAX_FIELDS numeric fields per view (later ones are not
 * kept), DDM_WEB_HISTORY_SAMPLES samples per view: at most about
 * 256 x 300 x 17 x 8 bytes (10 MiB) whatever the VMs do.
 */
#ifndef DDM_WEB_HISTORY_H
#define DDM_WEB_HISTORY_H

#include <json-glib/json-glib.h>

#include "core/views/views.h"

#define DDM_WEB_HISTORY_SAMPLES 300
#define DDM_WEB_HISTORY_MIN_INTERVAL_MS 1000
#define DDM_WEB_HISTORY_MAX_FIELDS 16
#define DDM_WEB_HISTORY_MAX_VIEWS 256
#define DDM_WEB_HISTORY_MAX_PER_VM 16
#define DDM_WEB_HISTORY_KEEP_S 300

typedef struct DdmWebHistory DdmWebHistory;

/** Keep the history of @views' records (borrowed; outlives it). (transfer full) */
DdmWebHistory *ddm_web_history_new(DdmViews *views);
void ddm_web_history_free(DdmWebHistory *h);
/** {"schema":1,"vm","name","t":[unix seconds],"fields":{KEY:[number|null]}}
 *  of record @name of VM @vm_key, oldest first; NULL when none is kept.
 *  (transfer full) */
JsonNode *ddm_web_history_json(DdmWebHistory *h, const char *vm_key, const char *name);
/** Tests: read the monotonic clock (µs) from @now_us instead of
 *  g_get_monotonic_time. */
void ddm_web_history_set_clock(DdmWebHistory *h, gint64 (*now_us)(void));

#endif /* DDM_WEB_HISTORY_H */
