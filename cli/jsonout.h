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

/* The version of the shapes in doc/json.md; grows when one changes in a
 * way a script could notice (a member removed, renamed or retyped). */
#define DDM_JSON_SCHEMA 1

/** @name as a snake_case key: ASCII letters lower-cased, a capital after a
 *  small letter or digit starts a word ("heapSize" -> "heap_size"), "%"
 *  is the word "percent", every other run of characters one "_", none at
 *  either end ("debug port" -> "debug_port", "CPU %" -> "cpu_percent");
 *  "_" first when it would start with a digit; "value" when nothing is
 *  left. (transfer full) */
char *ddm_jq_key(const char *name);
/** ddm_jq_key() of each of @names[0..@n), unique: a key already given
 *  gets "_2" ("_3", ...) appended, skipping keys taken. (transfer full,
 *  NULL-terminated) */
char **ddm_jq_keys(const char *const *names, guint n);

/** @view (the server's form) for scripts; @schema: with "schema" (a
 *  document of its own). Anything that is no view object is copied.
 *  (transfer full) */
JsonNode *ddm_jq_view(JsonNode *view, gboolean schema);
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
