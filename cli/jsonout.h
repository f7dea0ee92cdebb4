/* SPDX-License-Identifier: Apache-2.0
 *
 * The JSON ddmon prints for scripts (--json), made from the view JSON the
 * server sends (core/views' ddm_view_to_json, the control protocol's
 * shapes, which the terminal UI and the CLI parse and which stay as they
 * are). Every --json printer goes through here; the shapes are documented
 * in doc/json.md:
 *   - a view: {"schema","name","vm","owner","title","kind","version", then
 *     table: "columns":{KEY:{"name","type","unit"}}, "rows":[{KEY:VALUE}],
 *     record: "fields":{KEY:VALUE}, blob: "media_type","size_bytes"
 *     ["file"|"data_base64"]}; KEY is ddm_jq_key() of the column or field
 *     name, made unique within the view (ddm_jq_keys);
 *   - views of many VMs grouped: {"vms":{VMKEY:{the VM's row of the VM
 *     list, its headline figures, "views":{NAME:VIEW}}},"global":{NAME:VIEW}};
 *   - the VM list: its rows carry each VM's headline figures (the fields of
 *     the VM's "headline" view: heap_used_percent, threads_count, ...).
 * "schema" (DDM_JSON_SCHEMA) is on every document printed, and only there.
 */
#ifndef DDM_CLI_JSONOUT_H
#define DDM_CLI_JSONOUT_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "core/views/jq.h" /* DDM_JSON_SCHEMA, ddm_jq_key(s), ddm_jq_view */

/** The VM list view @vms with, in each row, the headline figures of its VM
 *  from @headlines (server views, any of them the "headline" record of a
 *  VM; an array, a single view or NULL). (transfer full) */
JsonNode *ddm_jq_vms(JsonNode *vms, JsonNode *headlines, gboolean schema);
/** Add to @into the views @views (server views, transfer none) grouped:
 *  "vms":{KEY:{...row of @vms_list..., figures, "views":{NAME:VIEW}}} and
 *  "global":{NAME:VIEW}. @vms_list (nullable) is the VM list, whose rows
 *  (retrying targets too) make the VM objects; a VM with views but no row
 *  gets "key" and nulls for "pid", "app" and "device". */
void ddm_jq_group_views(JsonObject *into, JsonNode *vms_list, GPtrArray *views);
/** `ddmon view NAME --json` without --vm: as ddm_jq_group_views, with the
 *  figures of @headlines (as ddm_jq_vms's) beside each VM, and only the VMs
 *  that have a view in @views (a plain JVM has no heap.summary: no VM
 *  object without the view, so `.vms[].views[NAME]` is never null). */
void ddm_jq_group_views_named(JsonObject *into, JsonNode *vms_list, GPtrArray *views,
                              JsonNode *headlines);
/** `ddmon views`: the server's answer {"views":[META],"vms":[{key,pid,app,
 *  state}]} as {"schema","vms":{KEY:{"pid","app","state","views":{NAME:META}}},
 *  "global":{NAME:META}}. (transfer full) */
JsonNode *ddm_jq_views_list(JsonNode *resp);
/** A watch event {"event","view"} as {"schema","event","vm","name",
 *  "view":VIEW}. (transfer full) */
JsonNode *ddm_jq_event(JsonNode *msg);
/** A plugin command's answer with "schema" first and its "result" view
 *  converted. (transfer full) */
JsonNode *ddm_jq_command_answer(JsonNode *resp);
/** @doc with "schema" first if it is an object without one: a new object,
 *  else @doc with a new reference (@doc itself is left alone: answers from
 *  the server are immutable). (transfer full) */
JsonNode *ddm_jq_stamped(JsonNode *doc);

#endif /* DDM_CLI_JSONOUT_H */
